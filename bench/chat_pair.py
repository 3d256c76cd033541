"""A third chat for ``bench/chat_probe.py``: two old friends texting one to one.

Nadia (Glasgow) and Rob (Brighton), friends since university, over thirteen
sessions, January-August 2025, 273 messages: Rob leaves teaching for an education job
at a marine charity (the interview moves), Nadia's half-marathon training and a
knee injury (one race dropped, two others entered), Rob and Leah's rescue
greyhound, Nadia's pottery class, Rob's weekend visit to Glasgow (moved from May
to June, Loch Lomond swapped for Arran) and Nadia's parents' ruby anniversary
party (the restaurant closes, so it moves to a marquee in the garden). Short
replies, thoughts split over several messages, answers that only make sense as
the reply to the message before, typos, emojis, a few long paragraphs, relative
times and some small talk.

Written by an outside tester (a helper) who had not seen how recalld ranks, as a
held-out check: nothing in recalld was tuned on it. Since 2026-12-05 the reranker's turn
models are fitted on it too (``chat_probe.FITTED_CHATS``): its figures with the shipped
reranker are in sample. 43 questions have evidence labels, 10 ask about something never
said. The data structure is chat_probe's (messages are ``(speaker, text)`` or
``(speaker, text, label)``).
"""

from __future__ import annotations

SPEAKERS = ("Nadia", "Rob")

# (start "YYYY-MM-DD HH:MM", messages); message = (speaker, text) or (speaker, text, label)
SESSIONS: list[tuple[str, list[tuple[str, ...]]]] = [
    # ---- session 1: Sunday 19 January 2025
    (
        "2025-01-19 20:41",
        [
            ("Nadia", "happy new year!! (is it too late to say that)"),
            ("Rob", "its the 19th nad"),
            ("Rob", "but happy new year 🎉"),
            ("Nadia", "how was the rest of the hols"),
            (
                "Rob",
                "quiet. leah was on nights at the hospital over new year so i mostly watched "
                "darts with my dad",
                "leah_nights",
            ),
            ("Nadia", "ok so i did a thing"),
            ("Nadia", "signed up for the edinburgh half marathon 😬", "half_signup"),
            ("Rob", "NADIA"),
            ("Rob", "you hate running"),
            ("Nadia", "i hate running less than i hate getting out of breath on my own stairs"),
            ("Rob", "when is it"),
            ("Nadia", "25th may", "half_date"),
            ("Nadia", "so like 18 weeks of training. theres an app"),
            ("Rob", "theres always an app"),
            ("Rob", "ok my news is less exciting. i think im done with teaching"),
            ("Nadia", "wait what"),
            (
                "Rob",
                "since about october tbh. its not the kids, the kids are fine, its everything "
                "else. ofsted in november nearly broke the whole department and i spend every "
                "sunday marking instead of, you know, living. theres a job going at the seagrass "
                "trust in shoreham, education officer, taking school groups out on the beach "
                "and doing sessions in classrooms. its basically geography but outside and "
                "without the data drops",
                "job_ad",
            ),
            ("Nadia", "rob that sounds perfect for you"),
            ("Nadia", "like actually. you dragged us all to whitby every single year at uni"),
            ("Rob", "closing date is 7th feb", "closing"),
            ("Nadia", "APPLY"),
            ("Rob", "also are we still doing the glasgow visit. i was thinking may bank holiday"),
            ("Nadia", "yes!! 3rd-5th? ill block it out", "visit1"),
            ("Rob", "👍"),
            ("Nadia", "have u started severance s2"),
            ("Rob", "no spoilers im on ep 1"),
            ("Nadia", "🤐"),
        ],
    ),
    # ---- session 2: Thursday 6 February 2025
    (
        "2025-02-06 21:18",
        [
            ("Rob", "applied 😬", "applied"),
            ("Rob", "sent it at 11pm last night obviously"),
            ("Nadia", "course u did"),
            ("Rob", "hows the running"),
            ("Nadia", "did 8 miles on sunday!! longest ive ever run", "eight_miles"),
            ("Rob", "thats amazing"),
            ("Nadia", "also started the pottery class finally"),
            ("Rob", "the one in partick?"),
            ("Nadia", "yes, the kiln room. wednesday nights 7-9", "pottery"),
            ("Nadia", "first week we just wedged clay for 2 hours"),
            ("Rob", "whats wedged"),
            ("Nadia", "like kneading bread but angrier"),
            ("Rob", "😂"),
            (
                "Nadia",
                "theres a retired dentist called hamish who is incredible at it. makes these "
                "perfect bowls",
                "hamish",
            ),
            ("Nadia", "i made a thing that looks like a hoof"),
            ("Nadia", "<Media omitted>"),
            ("Rob", "that is a hoof"),
            (
                "Nadia",
                "work is also fine since u didnt ask. redesigning the bank app login screen "
                "for the 4th time",
                "nadia_work",
            ),
            ("Rob", "sorry sorry. leahs home, speak soon x"),
            ("Nadia", "x"),
        ],
    ),
    # ---- session 3: Sunday 23 February 2025
    (
        "2025-02-23 18:07",
        [
            ("Nadia", "ow"),
            ("Rob", "?"),
            ("Nadia", "did my knee in yesterday", "knee1"),
            (
                "Nadia",
                "trail run in the campsies, went down a muddy bit too fast and it sort of twisted",
                "knee2",
            ),
            ("Rob", "oh no nad"),
            ("Rob", "is it bad"),
            ("Nadia", "swollen. can walk but stairs are 😖"),
            ("Nadia", "and i live on the 3rd floor so thats fun", "third_floor"),
            ("Rob", "have u seen anyone"),
            ("Nadia", "physio on the 4th. earliest they had", "physio_appt"),
            ("Rob", "ok well some good news to cheer u up"),
            ("Rob", "i got an interview!!! 🌊", "interview"),
            ("Nadia", "ROB"),
            ("Nadia", "when"),
            ("Rob", "tuesday 11th march", "interview_date1"),
            (
                "Rob",
                "and i have to do a presentation. 10 mins, a session for a year 5 class",
                "presentation",
            ),
            ("Nadia", "on what"),
            ("Rob", "my choice. thinking rockpools", "rockpools"),
            ("Nadia", "youll smash it"),
            ("Rob", "need cover for the day tho, my head is going to love that"),
            ("Nadia", "tell him ur at the dentist"),
            ("Rob", "her*. and shes actually fine, she knows im looking"),
        ],
    ),
    # ---- session 4: Wednesday 5 March 2025
    (
        "2025-03-05 22:31",
        [
            ("Rob", "how was the physio"),
            ("Nadia", "ok so not torn, which is good"),
            (
                "Nadia",
                "she says its patellar tendinopathy. basically i did too much too fast and the "
                "fall just set it off",
                "diagnosis",
            ),
            ("Nadia", "no running for 4 weeks 😭", "no_run"),
            ("Rob", "oof"),
            ("Rob", "what about edinburgh"),
            ("Nadia", "idk. she said maybe if the rehab goes well but not to count on it"),
            ("Nadia", "ive got exercises. slow squats on a slope board. ines is v strict", "ines"),
            ("Rob", "ines?"),
            ("Nadia", "the physio", "ines2"),
            ("Nadia", "anyway. interview prep??"),
            ("Rob", "slight change, theyve moved it to thursday the 13th", "interview_date2"),
            ("Rob", "one of the panel has covid", "covid"),
            ("Nadia", "better or worse"),
            ("Rob", "better actually, thursday i only have 2 lessons to cover"),
            ("Rob", "presentation is done. im bringing a bucket with a real crab in it", "crab"),
            ("Nadia", "a REAL crab"),
            ("Rob", "its a shore crab. his name is gary", "gary"),
            ("Nadia", "rob"),
            ("Rob", "he goes back to the beach after"),
            ("Nadia", "ok if u dont get this job with gary they dont deserve u"),
        ],
    ),
    # ---- session 5: Thursday 20 March 2025
    (
        "2025-03-20 17:52",
        [
            ("Rob", "NADIA"),
            ("Rob", "I GOT IT"),
            ("Nadia", "AAAAAAA"),
            ("Nadia", "the seagrass job??"),
            ("Rob", "yes!! seagrass trust rang about an hour ago, they want me 😭", "got_job"),
            ("Nadia", "im so happy for u 😭😭"),
            ("Nadia", "gary must have swung it"),
            ("Rob", "honestly i think he did. one of the panel picked him up"),
            ("Rob", "start date is monday 2nd june", "start_date"),
            ("Nadia", "what about school tho. dont u have to do a term notice or whatever"),
            (
                "Rob",
                "normally yeah but i spoke to my head this afternoon and shes letting me go at "
                "may half term. so my last day is the 23rd may",
                "last_day_plan",
            ),
            ("Nadia", "money ok?"),
            ("Rob", "bit less. 31k. but ill get my sundays back", "salary"),
            ("Nadia", "worth it"),
            ("Rob", "also we're looking at rescue dogs now lol"),
            ("Nadia", "since when do u want a dog"),
            (
                "Rob",
                "leahs wanted one forever. and if im not marking every night we can actually "
                "walk one",
            ),
            (
                "Rob",
                "she wants a greyhound. apparently they sleep 18 hours a day",
                "greyhound_want",
            ),
            ("Nadia", "knee update btw: stairs fine now. still no running til april"),
            ("Rob", "sorry!! glad the stairs are ok"),
        ],
    ),
    # ---- session 6: Sunday 13 April 2025
    (
        "2025-04-13 11:24",
        [
            ("Rob", "<Media omitted>"),
            ("Rob", "meet biscuit 🐕", "biscuit"),
            ("Nadia", "OH MY GOD"),
            ("Nadia", "look at his little face"),
            ("Nadia", "when did u get him"),
            ("Rob", "yesterday! from downs greyhound rescue in hove", "biscuit_when"),
            (
                "Rob",
                "hes 4, retired racer. raced as swift kestrel which is hilarious because hes "
                "scared of literally everything",
                "biscuit_age",
            ),
            ("Nadia", "like what"),
            ("Rob", "stairs. the kettle. a leaf", "biscuit_scared"),
            ("Rob", "he wont go up to the bedroom so leah slept on the sofa with him last night"),
            ("Nadia", "ok sad news from me"),
            (
                "Nadia",
                "not doing edinburgh. ines said no. i can run again but only 20 mins at a time",
                "edi_out",
            ),
            ("Rob", "oh nad im sorry"),
            (
                "Nadia",
                "its fine. honestly i cried in the car park after, which is ridiculous because "
                "its a run, nobody is making me do it. but id told everyone at work and my mum "
                "had already booked a hotel in edinburgh to come and watch. ive deferred my "
                "place to next year so its not wasted, and ines says if i do the boring "
                "exercises properly ill be fine by the summer",
            ),
            ("Nadia", "and ive entered the womens 10k here instead, its on 8th june", "tenk"),
            ("Rob", "also um. about may"),
            ("Nadia", "uh oh"),
            (
                "Rob",
                "we cant leave biscuit that soon, the rescue said at least 6 weeks before we "
                "leave him with anyone",
                "six_weeks",
            ),
            ("Rob", "could we move it to june? 20th-22nd?", "visit2"),
            ("Nadia", "yep free. and thats after my 10k so i can actually do stuff", "visit2_ok"),
            ("Nadia", "ok june it is 🗓"),
        ],
    ),
    # ---- session 7: Sunday 4 May 2025 (bank holiday weekend)
    (
        "2025-05-04 20:12",
        [
            ("Nadia", "bank holiday sunday and its raining. classic"),
            ("Rob", "sunny here 😎"),
            ("Nadia", "i hate u"),
            ("Rob", "biscuit update: he ate a sock on tuesday", "sock"),
            ("Nadia", "a whole sock??"),
            ("Rob", "whole sock. leahs sock. vet had to make him sick"),
            ("Nadia", "poor biscuit"),
            ("Rob", "poor me, it was £240", "vet_bill"),
            (
                "Rob",
                "leah was weirdly calm about it. shes a nurse, shes seen worse she says",
                "leah_nurse",
            ),
            ("Nadia", "ran 5k on friday! no pain 🙌", "fivek"),
            ("Rob", "yesss"),
            ("Rob", "hows the pottery"),
            ("Nadia", "fired my first mug. it leans", "mug1"),
            ("Nadia", "like the tower of pisa leans"),
            ("Nadia", "hamish says it has character"),
            ("Nadia", "u doing anything for eurovision"),
            ("Rob", "leahs sister is having people round"),
            ("Nadia", "were doing a sweepstake at work"),
            ("Rob", "who did u get"),
            ("Nadia", "san marino 💀"),
        ],
    ),
    # ---- session 8: Friday 30 May 2025
    (
        "2025-05-30 19:33",
        [
            ("Nadia", "how was the last week!!"),
            ("Rob", "emotional 😭"),
            (
                "Rob",
                "last day was last friday. year 9 made me a card and someone got me a mug that "
                "says worlds okayest teacher",
                "okayest",
            ),
            ("Nadia", "🤣"),
            ("Rob", "start monday"),
            ("Nadia", "nervous?"),
            ("Rob", "a bit. theyve sent me a wetsuit though", "wetsuit"),
            ("Rob", "ok glasgow flights booked"),
            ("Rob", "easyjet from gatwick, friday 20th, lands 8:20pm", "flight"),
            ("Nadia", "ill get u at the airport"),
            ("Rob", "u sure? i can get the bus"),
            ("Nadia", "rob i have a car now remember", "car_now"),
            ("Rob", "oh yeah the fiat", "fiat"),
            (
                "Nadia",
                "so i thought saturday we do loch lomond. walk up conic hill, pub after",
                "lomond",
            ),
            ("Rob", "is conic hill ok with the knee"),
            ("Nadia", "its small. ines approved it"),
            ("Nadia", "and ill make a pavlova on saturday night", "pavlova"),
            ("Rob", "no kiwi on it pls, im allergic remember", "kiwi"),
            ("Nadia", "oh god yes. the thai restaurant incident"),
            ("Rob", "we dont talk about the thai restaurant incident"),
            ("Nadia", "strawberries then"),
            ("Rob", "👍"),
        ],
    ),
    # ---- session 9: Monday 9 June 2025
    (
        "2025-06-09 21:04",
        [
            ("Nadia", "I DID IT"),
            ("Nadia", "<Media omitted>"),
            ("Rob", "THE 10K!!", "tenk_rob"),
            ("Rob", "how did it go"),
            ("Nadia", "54:12!!", "tenk_time"),
            ("Nadia", "and the knee was fine. bit stiff today"),
            ("Rob", "thats so good nad. after all that"),
            ("Nadia", "my mum and imran came up for it", "imran_came"),
            ("Nadia", "how was week 1!!"),
            ("Rob", "good. weird. good"),
            (
                "Rob",
                "my manager is called dele, hes lovely, used to be a marine bioligist in ghana",
                "dele",
            ),
            ("Rob", "spent most of the week on risk assessments and reading about seagrass"),
            (
                "Rob",
                "first actual school group is thursday, a year 4 class from lancing",
                "first_group",
            ),
            ("Nadia", "in the wetsuit?"),
            ("Rob", "in wellies. the wetsuit is for the snorkel trail in august", "snorkel"),
            ("Nadia", "ok this job is so cool"),
            ("Rob", "also biscuit went up the stairs on his own on saturday", "biscuit_stairs"),
            ("Nadia", "BISCUIT"),
            ("Rob", "then he couldnt get back down so i had to carry him. 30kg of wierd dog"),
        ],
    ),
    # ---- session 10: Thursday 19 June 2025 (the night before the visit)
    (
        "2025-06-19 22:12",
        [
            ("Nadia", "ok slight change of plan for saturday"),
            ("Rob", "uh oh"),
            ("Nadia", "forecast for loch lomond is awful, heavy rain all day", "rain"),
            ("Nadia", "but arran looks sunny?? so i thought we go to arran instead", "arran"),
            ("Rob", "arran as in the island"),
            ("Nadia", "yes. ferry from ardrossan at 9:45, ive booked the car on", "ferry"),
            ("Rob", "what do we do there"),
            (
                "Nadia",
                "hire bikes in brodick and cycle along the coast. no goatfell, my knee isnt "
                "ready for that",
                "bikes_plan",
            ),
            ("Rob", "fine by me"),
            ("Rob", "biscuits going to leahs mums, shes spoiling him rotten already", "dogsit"),
            ("Nadia", "sunday brunch at little fig before ur flight? its near mine", "brunch"),
            ("Rob", "what time's my flight back"),
            ("Rob", "oh wait i know, 4:35", "flight_back"),
            ("Nadia", "ok so brunch at 11 then airport"),
            ("Rob", "see u tommorow!!! 🎉"),
        ],
    ),
    # ---- session 11: Monday 23 June 2025
    (
        "2025-06-23 19:42",
        [
            ("Rob", "home finally"),
            ("Rob", "well. home last night at 1am"),
            ("Nadia", "the delay was so bad"),
            ("Rob", "2 and a half hours in glasgow airport eating a meal deal", "delay"),
            ("Nadia", "im sorry 😭"),
            ("Rob", "worth it. best weekend"),
            (
                "Rob",
                "seriously tho thank u for sorting everything. the ferry, the bikes, brunch, "
                "picking me up. i needed that after 3 weeks of the new job, my brain has been "
                "full of seagrass and risk assessments and it was so nice to just cycle along "
                "and talk rubbish with u like we used to. leah says i havent shut up about it",
            ),
            ("Rob", "im so sunburnt tho. forgot suncream in scotland who knew", "sunburn"),
            ("Nadia", "<Media omitted>"),
            ("Rob", "omg the seal"),
            ("Nadia", "that seal at lochranza was SO close", "seal"),
            ("Rob", "biscuit was fine btw. leahs mum wants to keep him", "dog_fine"),
            ("Nadia", "ok so ive signed up for the great scottish run half", "gsr"),
            ("Rob", "whens that"),
            ("Nadia", "5th october", "gsr_date"),
            ("Nadia", "ines says if i build up slowly ill be fine. so no campsies this time"),
            ("Nadia", "also need ur help with something"),
            (
                "Nadia",
                "my parents 40th anniversary is 2nd august. me and imran are doing a surprise "
                "dinner",
                "anniv",
            ),
            ("Rob", "40!! ruby?"),
            (
                "Nadia",
                "ruby yes. weve booked the mughal room in leicester, its where they went on "
                "their first date",
                "venue1",
            ),
            ("Nadia", "what do i get them. ur good at presents"),
            ("Rob", "am i"),
            ("Nadia", "u got me that framed map of our uni street and i still have it", "map"),
            ("Rob", "ok ill think"),
        ],
    ),
    # ---- session 12: Thursday 17 July 2025 (Rob's birthday)
    (
        "2025-07-17 08:16",
        [
            ("Nadia", "HAPPY BIRTHDAY 🎂🎂", "bday"),
            ("Rob", "thank uuu"),
            ("Rob", "34. ancient", "age34"),
            ("Nadia", "did the mug arrive", "mug_q"),
            ("Rob", "yesterday! its so good. is that biscuit on it", "mug_gift"),
            ("Nadia", "its meant to be. hamish helped with the ears", "hamish_ears"),
            ("Rob", "its a bit lopsided"),
            ("Nadia", "it has character"),
            ("Rob", "leahs taking me to the fish place in hove tonight", "bday_dinner"),
            ("Nadia", "ok anniversary drama"),
            ("Rob", "oh no"),
            (
                "Nadia",
                "the mughal room has closed down?? imran went in to confirm numbers and its all "
                "boarded up",
                "venue_closed",
            ),
            (
                "Nadia",
                "so were doing it in their garden instead. imrans hiring a marquee and weve got "
                "a caterer, the chef from the mughal room actually, he does private stuff now",
                "venue2",
            ),
            ("Rob", "ha so same food"),
            (
                "Nadia",
                "and i went with ur idea. a framed print of their wedding photo with all the "
                "grandkids handprints round it",
                "gift",
            ),
            ("Nadia", "took 4 attempts to get my niece to do a handprint that wasnt a smear"),
            (
                "Nadia",
                "also im going down on the friday now, not saturday morning, to help set up",
                "leicester_fri",
            ),
            ("Rob", "ok off to work. teaching 30 year 6s about crabs today 🦀"),
            ("Nadia", "say hi to gary"),
        ],
    ),
    # ---- session 13: Monday 4 August 2025
    (
        "2025-08-04 20:35",
        [
            ("Rob", "how did it go!! been waiting all weekend"),
            ("Nadia", "honestly perfect"),
            (
                "Nadia",
                "they had no idea. mum thought they were just going to my aunties for tea",
                "aunt_decoy",
            ),
            (
                "Nadia",
                "she walked round the side of the house, saw 40 people in a marquee and just sat "
                "down on the grass",
            ),
            ("Rob", "😭😭"),
            ("Nadia", "it poured at like 8pm but the marquee held"),
            ("Nadia", "dad did a speech. he never does speeches", "dad_speech"),
            ("Nadia", "said mum was the only person who laughed at his jokes in 1985"),
            (
                "Nadia",
                "and they loved the handprint thing. mums already hung it in the hall",
                "print_hung",
            ),
            ("Nadia", "also imran got engaged?? he proposed to sana at the end", "engaged"),
            ("Rob", "at ur parents anniversary??"),
            ("Nadia", "mum said it was the best present"),
            ("Rob", "i did my first snorkel trail on saturday", "snorkel_done"),
            ("Rob", "16 kids, 2 pipefish, zero drownings", "pipefish"),
            ("Nadia", "whats a pipefish"),
            ("Rob", "like a straight seahorse"),
            ("Nadia", "knees fine btw. did 10 miles yesterday", "ten_miles"),
            ("Rob", "nad!! ines would be proud"),
            ("Nadia", "she said dont get cocky"),
            ("Rob", "when are u coming down to brighton. biscuit wants to meet u"),
            ("Nadia", "ive got a week off from the 20th oct", "bri_plan"),
            ("Rob", "weekend of the 24th then?", "bri_weekend"),
            ("Nadia", "done ✅", "bri_ok"),
        ],
    ),
]

DEFAULT_ASKED_AT = "2025-08-20 10:00"

# (question, evidence labels (every one needed for all@10), asked_at or None, kind)
QUESTIONS: list[tuple[str, list[str], str | None, str]] = [
    # Rob's job
    ("What's Rob's new job?", ["job_ad", "got_job"], None, "multi"),
    ("When was Rob's interview?", ["interview_date2"], None, "temporal"),
    ("when was rob's interview originally meant to be", ["interview_date1"], None, "temporal"),
    ("why did rob's interview get moved", ["interview_date2", "covid"], None, "multi"),
    ("What was Rob's interview presentation about?", ["rockpools"], None, "single"),
    ("what did rob take to his interview", ["crab"], None, "single"),
    ("What was the crab called?", ["gary"], None, "single"),
    ("how much does rob earn at the seagrass trust", ["salary"], None, "single"),
    ("When did Rob start his new job?", ["start_date"], None, "temporal"),
    ("What did Rob's pupils give him when he left?", ["okayest"], None, "single"),
    ("who is rob's manager", ["dele"], None, "single"),
    ("What does Nadia do for work?", ["nadia_work"], None, "single"),
    # Nadia's running and knee
    (
        "Which races has Nadia signed up for this year?",
        ["half_signup", "tenk", "gsr"],
        None,
        "multi",
    ),
    ("When is the Edinburgh half marathon?", ["half_date"], None, "temporal"),
    ("how did nadia hurt her knee", ["knee2"], None, "single"),
    ("What's wrong with Nadia's knee?", ["diagnosis"], None, "single"),
    ("who is nadia's physio", ["ines", "ines2"], None, "multi"),
    ("Why isn't Nadia running the Edinburgh half?", ["edi_out"], None, "single"),
    ("what was nadia's 10k time", ["tenk_time"], None, "single"),
    ("what race did nadia do on sunday", ["tenk"], "2025-06-10 09:00", "temporal"),
    ("When is the Great Scottish Run?", ["gsr", "gsr_date"], None, "temporal"),
    ("what's the furthest nadia has run", ["ten_miles"], None, "single"),
    # Biscuit
    ("When did Rob and Leah get Biscuit?", ["biscuit_when"], None, "temporal"),
    ("What was Biscuit's racing name?", ["biscuit_age"], None, "single"),
    ("what did biscuit eat last week", ["sock"], "2025-05-06 09:00", "temporal"),
    ("How much was the vet bill for the sock?", ["vet_bill"], None, "single"),
    ("What does Leah do?", ["leah_nurse"], None, "single"),
    ("is biscuit still scared of stairs", ["biscuit_scared", "biscuit_stairs"], None, "multi"),
    # the Glasgow visit
    (
        "When was Rob first going to visit Glasgow and when did he actually go?",
        ["visit1", "visit2"],
        None,
        "multi",
    ),
    ("why did rob move his glasgow trip", ["six_weeks"], None, "single"),
    ("what's rob doing this weekend", ["visit2"], "2025-06-16 09:00", "temporal"),
    ("Why did they go to Arran instead of Loch Lomond?", ["rain", "arran"], None, "multi"),
    ("what car does nadia have", ["car_now", "fiat"], None, "multi"),
    ("what is rob allergic to", ["kiwi"], None, "single"),
    ("Who looked after Biscuit while Rob was in Glasgow?", ["dogsit"], None, "single"),
    ("how long was rob's flight home delayed", ["delay"], None, "single"),
    # pottery, birthday, anniversary
    ("Where does Nadia do pottery?", ["pottery"], None, "single"),
    ("what did nadia make rob for his birthday", ["mug_q", "mug_gift"], None, "multi"),
    ("When is Nadia's parents' anniversary party?", ["anniv"], None, "temporal"),
    (
        "Where was the anniversary dinner going to be and where did it end up?",
        ["venue1", "venue2"],
        None,
        "multi",
    ),
    ("What did Nadia give her parents for their ruby anniversary?", ["gift"], None, "single"),
    ("who got engaged at the party", ["engaged"], None, "single"),
    ("When is Nadia coming to Brighton?", ["bri_plan", "bri_weekend"], None, "temporal"),
    # never mentioned: ideally no hit at the default min_score
    ("What's the name of Rob's head teacher?", [], None, "none-near"),
    ("how much were rob's flights to glasgow", [], None, "none-near"),
    ("What's Nadia's niece called?", [], None, "none-near"),
    ("what did nadia get for her birthday", [], None, "none-near"),
    ("How long has Hamish been doing pottery?", [], None, "none-near"),
    ("what hospital does leah work at", [], None, "none-near"),
    ("Where did Rob and Leah meet?", [], None, "none"),
    ("does nadia have any pets", [], None, "none"),
    ("What football team does Rob support?", [], None, "none"),
    ("has nadia ever been to japan", [], None, "none"),
]

# Messages that also answer a question on their own (count for hit@k, not needed for all@10).
ACCEPTABLE: dict[str, list[str]] = {
    "what race did nadia do on sunday": ["tenk_rob"],
    "what's rob doing this weekend": ["flight"],
    "What did Nadia give her parents for their ruby anniversary?": ["print_hung"],
    "What does Leah do?": ["leah_nights"],
    "Who looked after Biscuit while Rob was in Glasgow?": ["dog_fine"],
}
