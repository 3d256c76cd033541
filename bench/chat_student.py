"""A held-out chat for ``bench/chat_probe.py``: a dad and his daughter at university.

Two people (Gareth in Swansea, and his daughter Megan in her first year of
Biomedical Science in Newcastle) over thirteen sessions, September 2025-March
2026, 248 messages: moving into halls and the flatmates, a blocked bank card, a café job and
a pay rise, the dog's lump, a lost phone, tonsillitis, Mamgu's fall and her 80th
birthday, the Christmas train home (date changed, then delayed), January exams
and results, next year's house, a driving test, and Finn (lab partner, then
boyfriend, whose visit moves). Short replies, emojis, typos, lowercase shorthand
from Megan and odd punctuation from Gareth, answers that only make sense as the
reply to the message before, relative times.

Written by an outside tester (a helper) who had not seen how recalld ranks, as a
held-out check: nothing in recalld has been tuned on it. 41 questions have
evidence labels, 10 ask about something never said. The data structure is
chat_probe's (messages are ``(speaker, text)`` or ``(speaker, text, label)``).
"""

from __future__ import annotations

SPEAKERS = ("Gareth", "Megan")

# (start "YYYY-MM-DD HH:MM", messages); message = (speaker, text) or (speaker, text, label)
SESSIONS: list[tuple[str, list[tuple[str, ...]]]] = [
    # ---- session 1: Sunday 21 September 2025, first night in halls
    (
        "2025-09-21 22:05",
        [
            (
                "Gareth",
                "Home safe. 5 and a half hours, M6 was a car park as usual.. hope first night "
                "in halls is going ok ??",
                "home_safe",
            ),
            ("Gareth", "Bryn has been sat outside your bedroom door since we got in. He knows x"),
            ("Megan", "noooo 😭"),
            ("Megan", "tell him i miss him"),
            ("Gareth", "How's the flat ? Met the others yet"),
            ("Megan", "ya we all went to the pub at the bottom of the road"),
            ("Megan", "6 of us in the flat. 4B, top floor of kingsley house 😩 no lift", "flat"),
            ("Gareth", "Good for the legs!!"),
            ("Megan", "priya is next door, shes from leicester doing law. shes lovely", "priya"),
            ("Megan", "ollie does mech eng and has brought an actual electric guitar", "ollie"),
            (
                "Megan",
                "and wen is from shenzhen, maths. she made us all dumplings tonight 🥟",
                "wen",
            ),
            ("Gareth", "Did you find the duvet ? I put it in the blue ikea bag under the kettle"),
            ("Megan", "found it"),
            ("Megan", "dad u left my winter coat in the boot", "coat"),
            ("Gareth", "Ah. Bring it at Christmas ?? Its not cold yet"),
            ("Megan", "its newcastle dad. its cold already"),
            ("Gareth", "Ok ok I'll post it tomorrow.", "coat_post"),
            ("Megan", "night dad x love u"),
            ("Gareth", "Night love. Proud of you. Dad x"),
        ],
    ),
    # ---- session 2: Friday 3 October 2025, the card
    (
        "2025-10-03 13:12",
        [
            ("Megan", "dad"),
            ("Megan", "my card's not working"),
            ("Megan", "got declined in tesco w a full basket, sooo embarrassing"),
            ("Gareth", "Which card ? The Santander one"),
            ("Megan", "yeh"),
            ("Gareth", "Have you got money on it ? Loan came in didn't it"),
            ("Megan", "yes theres like £1400 on it its not that"),
            (
                "Megan",
                "just rang them. they blocked it for 'suspicious activity' bc i bought my "
                "railcard and some stuff off a german website in the same hour",
                "card_block",
            ),
            ("Megan", "theyve cancelled it and are sending a new one"),
            ("Megan", "TO THE HOME ADDRESS 🙃", "card_home"),
            ("Gareth", "When it comes I'll send it on first class. Can you manage till then ??"),
            ("Megan", "i have £6 cash"),
            ("Gareth", "Right. Can I send some to Priya and she gets it out for you ?"),
            ("Megan", "ya she said thats fine"),
            ("Gareth", "Sent £50. Tell her its from me so she doesn't think its a scam !", "fifty"),
            ("Megan", "thank u thank u 🙏"),
            ("Gareth", "How's the cough ?"),
            ("Megan", "still dying. everyone has freshers flu. ollie sounds like a seal"),
            ("Gareth", "Lemsip and early nights. Not 3am nights"),
            ("Megan", "its 1pm"),
        ],
    ),
    # ---- session 3: Sunday 12 October 2025, job and the dog
    (
        "2025-10-12 18:40",
        [
            ("Gareth", "Card came yesterday. Posting it in the morning", "card_arrived"),
            ("Megan", "yay"),
            ("Megan", "also guess what"),
            ("Megan", "i got a job!!"),
            ("Gareth", "!!!! Where ?"),
            (
                "Megan",
                "kettle & crumb, the cafe on the corner by the library. did a trial shift "
                "yesterday and they said yes",
                "job",
            ),
            ("Megan", "saturdays 8 till 2 and weds afternoons bc i have no lectures", "job_hours"),
            ("Megan", "£10.50 an hour + tips", "job_pay"),
            ("Gareth", "Well done you. Just don't let it get in the way of the studying.."),
            ("Megan", "dad its 10 hours a week"),
            ("Gareth", "Can you do the fancy coffees with the leaf on top"),
            ("Megan", "not yet lol. nearly burnt my hand on the steam wand"),
            (
                "Gareth",
                "Other news. Took Bryn for his jabs Thursday and the vet found a lump on his "
                "side. She's taken a sample",
                "lump",
            ),
            ("Megan", "wait what"),
            ("Megan", "is he ok"),
            ("Gareth", "He's fine in himself, eating like a horse. Results in a week or so"),
            ("Megan", "ok 😢 give him a kiss from me"),
            ("Gareth", "Done. He's not impressed"),
        ],
    ),
    # ---- session 4: Wednesday 22 October 2025, lipoma, essay, "who's Finn"
    (
        "2025-10-22 20:30",
        [
            (
                "Gareth",
                "Good news. Vet rang, Bryn's lump is just a fatty lump. A lipoma she called it. "
                "Nothing to do unless it gets bigger",
                "lipoma",
            ),
            ("Megan", "OMG thank god"),
            ("Gareth", "I know. Had a little cry in the Co-op car park don't tell your mother"),
            ("Megan", "ur secret is safe"),
            ("Megan", "got my first essay back btw"),
            ("Gareth", "And ??"),
            ("Megan", "68!!", "essay_mark"),
            ("Megan", "the cell bio one. about mitochondria", "essay_topic"),
            ("Gareth", "Is that good ? Sorry I don't know how uni marks work"),
            ("Megan", "70 is a first so its rly good for a first essay"),
            ("Gareth", "Brilliant love!! Ring Mamgu and tell her, she'll be made up"),
            ("Megan", "will do tmrw"),
            ("Megan", "off to the quiz at the union w priya and finn"),
            ("Gareth", "Who's Finn ??"),
            ("Megan", "a friend"),
            ("Megan", "hes my lab partner in chem", "finn_lab"),
            ("Gareth", "Ok. A friend."),
            ("Megan", "DAD"),
            ("Gareth", "I said nothing."),
            (
                "Gareth",
                "Osian scored in his match Saturday. He'll want you to know but he won't tell you "
                "himself",
                "osian_goal",
            ),
            ("Megan", "go on osh ⚽"),
        ],
    ),
    # ---- session 5: Sunday 9 November 2025, lost phone, Christmas plan
    (
        "2025-11-09 11:48",
        [
            ("Megan", "dad its megan, on my laptop"),
            ("Megan", "lost my phone last night 😭😭", "phone_lost"),
            ("Gareth", "Oh Megan. Where ??"),
            ("Megan", "think i left it in the taxi back from town. it was ollies birthday", "taxi"),
            ("Gareth", "Have you done the find my phone thing"),
            ("Megan", "yes it says its somewhere in gateshead 🙃", "gateshead"),
            ("Megan", "priya rang the taxi place, they said if a driver hands it in they'll ring"),
            ("Gareth", "Ok. Don't go wandering round Gateshead looking for it on your own"),
            ("Megan", "i wasnt going to"),
            ("Megan", "much"),
            ("Gareth", "Megan."),
            ("Megan", "jk"),
            ("Gareth", "If it doesn't turn up Mum's old Samsung is in the drawer"),
            ("Gareth", "While I've got you. When do you finish for Christmas?"),
            (
                "Megan",
                "term finishes the 12th but we're doing a flat christmas dinner on the 18th",
                "xmas_dinner1",
            ),
            ("Megan", "so come home the 19th?", "home19"),
            ("Gareth", "Friday 19th. OK. I'll look at trains"),
            (
                "Gareth",
                "Mamgu asked if you've got a boyfriend yet. I said you're too busy studying",
            ),
            ("Megan", "lmaooo"),
            ("Megan", "perfect answer"),
        ],
    ),
    # ---- session 6: Saturday 22 November 2025, Mamgu's fall
    (
        "2025-11-22 16:45",
        [
            ("Gareth", "Megs can you ring me when you get a minute. Nothing to panic about"),
            ("Megan", "in the library whats up"),
            (
                "Gareth",
                "Mamgu had a fall Thursday night. She's ok but she's broken her wrist. They've "
                "kept her in at Morriston",
                "fall",
            ),
            (
                "Gareth",
                "She was on the kitchen floor two hours before Mrs Pritchard next door heard her "
                "shouting.. so they're doing tests to see why she went over",
                "pritchard",
            ),
            ("Megan", "poor mamgu 😢"),
            ("Megan", "can i ring her"),
            (
                "Gareth",
                "She hasn't got her phone. Ward 12. Ring me tonight when I'm in with her and I'll "
                "put you on",
                "ward",
            ),
            ("Megan", "ok what time"),
            ("Gareth", "Visiting is 6 till 8"),
            ("Megan", "ill ring at 7"),
            ("Gareth", "Did the phone ever turn up ?? Forgot to ask"),
            (
                "Megan",
                "ya the taxi driver dropped it at the uni security desk on the monday",
                "phone_found",
            ),
            (
                "Megan",
                "screen was smashed tho. got it fixed at a place in the grainger market, £79",
                "phone_fix",
            ),
            ("Megan", "also my throat is killing me. like swallowing glass"),
            ("Gareth", "How long has it been like that ?"),
            ("Megan", "since like tuesday"),
            ("Gareth", "Go to the doctor Megan. Are you registered up there"),
            ("Megan", "ya at the uni health centre"),
            ("Gareth", "Then ring them Monday. Please."),
            ("Megan", "ok ok"),
        ],
    ),
    # ---- session 7: Wednesday 26 November 2025, tonsillitis, Finn, train booked
    (
        "2025-11-26 13:30",
        [
            ("Megan", "went to the doctor"),
            ("Gareth", "And ?"),
            ("Megan", "tonsillitis. shes given me penicillin for 10 days", "tonsillitis"),
            ("Megan", "and i cant drink on it which is fine bc i feel like death"),
            ("Gareth", "Poor love. Is anyone looking after you"),
            ("Megan", "wen made me congee 🥹 and finn brought me ice lollies", "care"),
            ("Gareth", "Finn the friend."),
            ("Megan", "dad"),
            ("Megan", "ok fine"),
            ("Megan", "we're kind of seeing each other", "finn_bf"),
            ("Gareth", "I KNEW IT"),
            ("Gareth", "Is he nice to you ?"),
            ("Megan", "yes hes really nice. hes from belfast", "finn_belfast"),
            ("Gareth", "Right. Well. Good. Don't tell Mamgu yet she'll have the wedding planned"),
            ("Megan", "lol how is she"),
            (
                "Gareth",
                "Much better. Tests were all fine, they think she just tripped on the rug. She's "
                "been home since yesterday, carers coming in twice a day while the wrist heals",
                "mamgu_home",
            ),
            ("Gareth", "I've taken the rug."),
            (
                "Megan",
                "missed the lab this morning so i have to do an extenuating circs form 🙄",
                "lab",
            ),
            (
                "Gareth",
                "And I've booked your train for the 19th. 09:25 from Newcastle, change at "
                "Birmingham, into Swansea 15:52. Tickets are in your email",
                "train1",
            ),
            ("Megan", "thank u 🥹"),
        ],
    ),
    # ---- session 8: Sunday 14 December 2025, plans change
    (
        "2025-12-14 21:10",
        [
            ("Megan", "dad small problem"),
            (
                "Megan",
                "wen's flying home on the 18th now so we've moved the flat christmas dinner to "
                "weds 17th",
                "dinner_moved",
            ),
            ("Megan", "can i come home thursday instead", "thursday"),
            ("Gareth", "Course !! Let me see if I can change the ticket"),
            (
                "Gareth",
                "Done. Thursday 18th, the 11:25, changes at Birmingham again, gets into Swansea "
                "17:40. Cost £9 to change",
                "train2",
            ),
            ("Megan", "yesss"),
            ("Megan", "ill pay u back"),
            ("Gareth", "You won't. I'll pick you up from the station"),
            ("Megan", "can bryn come"),
            ("Gareth", "Bryn always comes"),
            ("Gareth", "Mamgu wants you for Sunday lunch on the 21st, ok?", "sunday_lunch"),
            ("Megan", "obviously"),
            ("Megan", "finn flies back to belfast tuesday so its all working out"),
            ("Gareth", "Is he going to meet us at some point this Finn"),
            ("Megan", "maybe 👀"),
            ("Megan", "in the new year"),
            ("Gareth", "Right."),
        ],
    ),
    # ---- session 9: Thursday 18 December 2025, travel day
    (
        "2025-12-18 12:40",
        [
            ("Megan", "on the train 🚂"),
            ("Megan", "but its stuck outside york. 'signalling problem'", "york"),
            ("Gareth", "Oh no. How long ?"),
            ("Megan", "they said 40 mins"),
            ("Megan", "so im gonna miss birmingham 🙃"),
            ("Gareth", "Your ticket will be fine on the next one, ask the guard"),
            ("Megan", "guard says thats fine"),
            ("Megan", "next one gets to swansea 18:52", "arr_1852"),
            ("Gareth", "OK. I'll be there. Have you eaten"),
            ("Megan", "i have a meal deal"),
            ("Gareth", "Thats not eating. I'll get chips"),
            ("Megan", "🥹"),
            ("Megan", "just left cardiff"),
            ("Gareth", "In the car park by the taxis. Bryn is going mad"),
            ("Megan", "SEE HIM"),
        ],
    ),
    # ---- session 10: Sunday 11 January 2026, exams and the driving test
    (
        "2026-01-11 20:15",
        [
            ("Gareth", "Settled back in ok ? House is very quiet. Bryn's sleeping on your bed"),
            ("Megan", "as he should"),
            ("Megan", "exams start tuesday 😬"),
            ("Gareth", "Which one first"),
            ("Megan", "cell bio. 9:30", "exam_cellbio"),
            ("Megan", "then biochem friday and stats the thursday after", "exam_others"),
            ("Gareth", "You'll be fine. You always panic and then you do well"),
            ("Megan", "thats not comforting dad"),
            ("Megan", "told the cafe i can only do saturdays till exams are over", "sat_only"),
            ("Gareth", "Also. Don't shout. I've booked your driving test"),
            ("Megan", "DAD"),
            (
                "Gareth",
                "Thursday 2nd April, 10:14, Llansamlet. You'll be home for Easter anyway",
                "test_date",
            ),
            ("Gareth", "And 3 lessons with Dai the week before", "dai"),
            ("Megan", "ok fine"),
            (
                "Megan",
                "as long as i dont get the fabian way roundabout again like last summer",
                "roundabout",
            ),
            ("Gareth", "You failed on one roundabout Megan. One."),
            ("Megan", "one serious = fail dad", "serious"),
            ("Gareth", "Student loan come in ?"),
            ("Megan", "not yet?? was meant to be last week", "loan_late"),
            ("Gareth", "Chase it tomorrow"),
        ],
    ),
    # ---- session 11: Tuesday 3 February 2026, results and next year's house
    (
        "2026-02-03 17:05",
        [
            ("Megan", "RESULTS ARE OUT"),
            ("Gareth", "And???"),
            ("Megan", "cell bio 64, biochem 71, stats 58", "results"),
            ("Megan", "so a 2:1 overall 🎉", "avg"),
            ("Gareth", "A 71 !!! Megan that's fantastic"),
            ("Megan", "stats was rough tbh i guessed half the last question"),
            ("Gareth", "58 is still a pass by miles"),
            ("Megan", "also housing for next yr"),
            (
                "Megan",
                "me priya and wen found a house in heaton. 4 bed, the 4th is wen's friend lily "
                "from maths",
                "house",
            ),
            ("Megan", "£98 a week each not incl bills", "rent"),
            ("Gareth", "Not Ollie ?"),
            ("Megan", "hes living w the engineers lol. and the guitar", "ollie_not"),
            ("Gareth", "Thank God"),
            ("Megan", "agency needs a guarantor. can it be u"),
            ("Gareth", "Yes. Send me what they need", "guarantor"),
            ("Megan", "payslip and a copy of ur passport"),
            ("Megan", "ooh and finn wants to come to swansea!! weekend of the 28th?", "finn_visit"),
            ("Gareth", "Of course. He can have Osian's room, Osian can go on the blow up bed"),
            ("Megan", "osian will love that"),
            ("Gareth", "Osian can lump it"),
        ],
    ),
    # ---- session 12: Sunday 22 February 2026, visit moved, promotion
    (
        "2026-02-22 21:00",
        [
            ("Megan", "change of plan for when finn was coming"),
            (
                "Megan",
                "his lab report deadline got moved to 2nd march so we cant do the 28th",
                "finn_cancel",
            ),
            ("Megan", "BUT"),
            ("Megan", "what if we both came down for mamgu's 80th instead", "finn_80th"),
            (
                "Gareth",
                "She'd love that. Its Saturday 14th March, 1 o'clock, the Bay View in Mumbles",
                "party",
            ),
            ("Gareth", "I'll tell them to add two"),
            ("Megan", "hes a bit nervous lol"),
            ("Gareth", "He should be."),
            ("Megan", "DAD"),
            ("Gareth", "Joking. Does he eat everything"),
            ("Megan", "no fish. hes allergic", "fish"),
            ("Gareth", "At a seafront restaurant. Right. I'll ring them"),
            ("Megan", "other news"),
            ("Megan", "my manager made me a shift supervisor!! so im on £11.20 now", "promo"),
            ("Gareth", "Megan Hughes, management !!"),
            ("Megan", "lol i get to hold the keys"),
            ("Gareth", "Did the loan ever come in ?"),
            ("Megan", "ya on the 19th in the end", "loan_paid"),
        ],
    ),
    # ---- session 13: Sunday 15 March 2026, after Mamgu's 80th
    (
        "2026-03-15 19:40",
        [
            ("Gareth", "Back ok ?"),
            ("Megan", "just got in. train was fine"),
            ("Megan", "finn slept from cardiff to birmingham lol"),
            (
                "Gareth",
                "Tell him it was lovely to meet him. Mamgu hasn't stopped talking about him",
                "mamgu_finn",
            ),
            ("Megan", "🥹🥹 he said ur the least scary dad hes ever met"),
            ("Gareth", "I'll have to work on that."),
            ("Megan", "bryn cried when we left i swear"),
            ("Gareth", "He's lying in the hall with one of Finn's socks. We'll post it back"),
            ("Megan", "lmao keep it"),
            ("Megan", "did mamgu like the photo frame"),
            ("Gareth", "She's put it on the mantelpiece next to Grandad. High honour", "frame"),
            ("Megan", "aw"),
            ("Gareth", "Also you left your charger in the kitchen."),
            ("Megan", "keep it till easter ill use priyas"),
            ("Gareth", "18 days till the test !!"),
            ("Megan", "dont remind me"),
            ("Megan", "first lesson w dai is the 30th right", "dai_30"),
            ("Gareth", "Monday 30th, 4pm. He'll pick you up from the house", "dai_time"),
            ("Megan", "love u dad x"),
            ("Gareth", "Love you too. Night x"),
        ],
    ),
]

DEFAULT_ASKED_AT = "2026-03-20 10:00"

# (question, evidence labels (every one needed for all@10), asked_at or None, kind)
QUESTIONS: list[tuple[str, list[str], str | None, str]] = [
    # halls, flatmates, money
    ("Which flat is Megan in at Kingsley House?", ["flat"], None, "single"),
    ("Who are Megan's flatmates in halls?", ["priya", "ollie", "wen"], None, "multi"),
    ("where is priya from", ["priya"], None, "single"),
    ("What does Ollie study?", ["ollie"], None, "single"),
    ("what did gareth leave in the car when he dropped megan off", ["coat"], None, "single"),
    ("When did Gareth drop Megan off at university?", ["home_safe"], None, "temporal"),
    ("Why did Megan's bank card get blocked?", ["card_block"], None, "single"),
    ("how much money did dad send to priya", ["fifty"], None, "single"),
    # job
    ("Where does Megan work?", ["job"], None, "single"),
    ("what did megan do yesterday", ["job"], "2025-10-12 21:00", "temporal"),
    ("How much does Megan earn an hour now?", ["promo"], None, "single"),
    (
        "how much has megan's hourly pay at the cafe gone up since she started",
        ["job_pay", "promo"],
        None,
        "multi",
    ),
    # Bryn, Osian
    ("What did the vet find on Bryn?", ["lump"], None, "single"),
    ("was bryn's lump anything serious", ["lipoma"], None, "single"),
    ("what did osian do at the weekend", ["osian_goal"], "2025-10-23 10:00", "temporal"),
    # studies
    ("What mark did Megan get for her first essay?", ["essay_mark"], None, "single"),
    ("whats megan doing tomorrow", ["exam_cellbio"], "2026-01-12 09:00", "temporal"),
    (
        "What were Megan's January exams and what did she get in each?",
        ["exam_cellbio", "exam_others", "results"],
        None,
        "multi",
    ),
    (
        "Why did Megan have to fill in an extenuating circumstances form?",
        ["lab", "tonsillitis"],
        None,
        "multi",
    ),
    # phone, illness
    ("When did Megan lose her phone?", ["phone_lost"], None, "temporal"),
    (
        "how did megan lose her phone and how did she get it back",
        ["taxi", "phone_found"],
        None,
        "multi",
    ),
    ("Where did Find My show Megan's phone was?", ["gateshead"], None, "single"),
    ("how much did it cost to fix megan's phone screen", ["phone_fix"], None, "single"),
    ("What did the doctor give Megan for her tonsillitis?", ["tonsillitis"], None, "single"),
    # Mamgu
    ("When did Mamgu have her fall?", ["fall"], None, "temporal"),
    ("who found mamgu after she fell", ["pritchard"], None, "single"),
    ("How long was Mamgu in hospital after her fall?", ["fall", "mamgu_home"], None, "multi"),
    ("Where is Mamgu's 80th birthday meal?", ["party"], None, "single"),
    # Christmas
    ("When did Megan come home for Christmas?", ["train2"], None, "temporal"),
    (
        "What were the two trains Megan was booked on to come home for Christmas?",
        ["train1", "train2"],
        None,
        "multi",
    ),
    ("Why was Megan's train home for Christmas late?", ["york"], None, "single"),
    # Finn
    ("who is finn", ["finn_lab", "finn_bf"], None, "multi"),
    ("Where is Finn from?", ["finn_belfast"], None, "single"),
    ("What is Finn allergic to?", ["fish"], None, "single"),
    (
        "Why didn't Finn come to Swansea on the 28th of February, and when did he come instead?",
        ["finn_cancel", "finn_80th", "party"],
        None,
        "multi",
    ),
    # next year, driving, loan
    (
        "who is megan living with next year, is ollie one of them",
        ["house", "ollie_not"],
        None,
        "multi",
    ),
    ("How much is the rent on Megan's house for next year?", ["rent"], None, "single"),
    ("When is Megan's driving test?", ["test_date"], None, "temporal"),
    ("why did megan fail her first driving test", ["roundabout", "serious"], None, "multi"),
    ("whats megan doing next monday", ["dai_30", "dai_time"], "2026-03-25 09:00", "temporal"),
    ("When did Megan's student loan finally come in?", ["loan_paid"], None, "temporal"),
    # never mentioned: ideally no hit at the default min_score
    ("What breed is Bryn?", [], None, "none-near"),
    ("what's the name of megan's manager at the cafe", [], None, "none-near"),
    ("How much is Megan's rent in halls?", [], None, "none-near"),
    ("what is finn's surname", [], None, "none-near"),
    ("What's Mamgu's first name?", [], None, "none-near"),
    ("what does gareth do for a living", [], None, "none-near"),
    ("Which position does Osian play in football?", [], None, "none-near"),
    ("does megan play any instruments", [], None, "none"),
    ("What car does Gareth drive?", [], None, "none"),
    ("what's megan's favourite film", [], None, "none"),
]

# Messages that also answer a question on their own (count for hit@k, not needed for all@10).
ACCEPTABLE: dict[str, list[str]] = {
    "what did gareth leave in the car when he dropped megan off": ["coat_post"],
    "What did the vet find on Bryn?": ["lipoma"],
    "When did Megan come home for Christmas?": ["thursday", "york", "arr_1852"],
    "Where is Mamgu's 80th birthday meal?": ["finn_80th"],
}
