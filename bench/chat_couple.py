"""A third chat for ``bench/chat_probe.py --chat couple``: a couple texting during the day.

Two partners (Tess and Marco, who live together in Halifax, Nova Scotia, with their
dog Biscuit) over thirteen sessions, February-August 2025: Marco's car breaks down
(the garage bill grows), Tess is made project lead on a library (council vote),
Marco's spin-class habit and a cracked tooth, buying a sofa (its delivery slips),
a visit from Marco's sister Lucia, their friend Jess's wedding in Kelowna (the
flights move a day earlier), and an anniversary weekend whose booking changes.
Short replies, emojis, typos, a few long paragraphs, answers that only make sense
as the reply to the message before, relative times.

Written by an outside tester (a helper) who had not seen how recalld ranks, as a
held-out check: nothing in recalld was tuned on it. Since 2026-12-05 the reranker's turn
models are fitted on it too (``chat_probe.FITTED_CHATS``): its figures with the shipped
reranker are in sample. 248 messages; 44 questions have evidence labels, 10 ask about
something never said. The data structure is chat_probe's (messages are ``(speaker,
text)`` or ``(speaker, text, label)``).
"""

from __future__ import annotations

SPEAKERS = ("Tess", "Marco")

# (start "YYYY-MM-DD HH:MM", messages); message = (speaker, text) or (speaker, text, label)
SESSIONS: list[tuple[str, list[tuple[str, ...]]]] = [
    # ---- session 1: Tuesday 11 February 2025
    (
        "2025-02-11 08:47",
        [
            ("Marco", "babe"),
            ("Marco", "car just died on the bedford hwy", "car_die"),
            ("Tess", "WHAT"),
            ("Tess", "are you ok??"),
            ("Marco", "ya im fine, got onto the shoulder near the rockingham exit"),
            ("Marco", "battery light came on then everything went dark and it just lost power"),
            ("Tess", "omg. did u call CAA"),
            ("Marco", "yep 40 min they said"),
            ("Marco", "getting them to tow it to kenny's on windmill rd", "garage"),
            ("Tess", "ok good. want me to come get you, I can leave at 9:15"),
            ("Marco", "nah ill uber from the garage"),
            ("Tess", "text me when ur there ❤️"),
            ("Marco", "at kenny's. he thinks alternator but he'll call", "alternator_guess"),
            ("Tess", "jess's save the date came in the mail!!"),
            ("Tess", "august 16th, at a winery in kelowna 🍷", "wedding_date"),
            ("Marco", "kelowna like BC??"),
            ("Tess", "yes!! her and sam go there every summer"),
            ("Tess", "and she asked me to be a bridesmaid 😭", "bridesmaid"),
            ("Marco", "ok thats amazing"),
            ("Tess", "can u grab dog food on the way home, last scoop"),
            ("Marco", "with what car 😂"),
            ("Tess", "lol fine I'll go"),
        ],
    ),
    # ---- session 2: Friday 14 February 2025
    (
        "2025-02-14 11:52",
        [
            ("Marco", "kenny called"),
            ("Tess", "and"),
            ("Marco", "alternator like he thought. quoted 640 parts + labour", "quote1"),
            ("Marco", "but when he had it apart the serpentine belt was cracked too", "belt"),
            ("Marco", "so 785 all in", "bill_final"),
            ("Tess", "did he ask u before doing it??"),
            ("Marco", "yeah he called, i said go ahead"),
            ("Tess", "ok fair. I thought it'd be like 2k honestly"),
            ("Marco", "its ready at 4 so ill grab it after work"),
            ("Tess", "and then dinner!!"),
            ("Marco", "7:30 at the bicycle thief 🌹", "vday"),
            ("Tess", "😍"),
            ("Tess", "wear the blue shirt"),
            ("Marco", "which one"),
            ("Tess", "the one I bought you"),
            ("Marco", "ah. that one"),
            ("Tess", "reminder biscuit's vet tmrw at 10 for his shots", "vet1"),
            ("Marco", "i'll take him, u have pilates"),
        ],
    ),
    # ---- session 3: Monday 3 March 2025
    (
        "2025-03-03 15:10",
        [
            ("Tess", "CALL ME WHEN U CAN"),
            ("Tess", "nothing bad!!"),
            ("Marco", "in a meeting til 3:30 whats up"),
            (
                "Tess",
                "So in the monday meeting Gail stood up and said the Bedford library is going "
                "ahead and that I'm going to be project lead on it. In front of everyone!! I had "
                "no idea she was going to do that, I went completely red. Derek's face lol",
                "promo",
            ),
            ("Marco", "WHAT"),
            ("Marco", "TESS"),
            ("Marco", "the new library on the old rail yard site?"),
            ("Tess", "yes!! 3 storeys, biggest job the firm has ever won", "library"),
            ("Marco", "thats huge babe im so proud"),
            ("Marco", "does it come with money 👀"),
            ("Tess", "it does actually. 12% raise from april", "raise"),
            ("Marco", "ok we're going out tonight"),
            (
                "Tess",
                "can we just get sushi and stay in, I'm exhausted from screaming in the stairwell",
            ),
            ("Marco", "sushi it is"),
            ("Marco", "oh and i did my first 6am spin class this morning"),
            ("Marco", "the goodlife on quinpool", "spin1"),
            ("Marco", "mon wed fri. im committed", "spin_days"),
            ("Tess", "how was it"),
            ("Marco", "almost threw up"),
            ("Tess", "😂😂"),
        ],
    ),
    # ---- session 4: Wednesday 19 March 2025
    (
        "2025-03-19 11:20",
        [
            ("Tess", "jess sent the wedding website"),
            ("Tess", "room block is at the hotel eldorado but its $389 a night 😬", "eldorado"),
            ("Marco", "for kelowna??"),
            ("Tess", "it's right on the lake"),
            ("Marco", "airbnb?"),
            ("Tess", "there's a cute one in the north end w a hot tub"),
            ("Tess", "4 nights $980", "airbnb_price"),
            ("Marco", "book it"),
            ("Tess", "and flights. halifax to kelowna thru calgary"),
            ("Tess", "out thurs aug 14, back mon aug 18", "flights1"),
            ("Tess", "westjet, $1340 for both of us", "flights_price"),
            ("Marco", "go for it"),
            ("Tess", "booked both ✈️"),
            ("Marco", "bad news from my end"),
            ("Marco", "cracked a tooth on an almond", "tooth"),
            ("Tess", "noooo"),
            ("Tess", "which one"),
            ("Marco", "back left bottom. hurts w anything cold"),
            ("Tess", "call dr okafor", "okafor"),
            ("Marco", "already did. tuesday 2:15", "dentist1"),
        ],
    ),
    # ---- session 5: Tuesday 25 March 2025
    (
        "2025-03-25 16:40",
        [
            ("Tess", "how was dentist"),
            ("Marco", "needs a crown. crack is too deep for a filling", "crown"),
            ("Tess", "ugh how much"),
            ("Marco", "1200, insurance covers half", "crown_cost"),
            ("Tess", "ok so 600, could be worse"),
            ("Marco", "temp one on now, real one goes in april 8th", "crown_date"),
            ("Marco", "face still numb. drooled coffee on my shirt"),
            ("Tess", "🥲"),
            ("Tess", "also the couch"),
            ("Tess", "another spring went. I sat down and it basically stabbed me", "couch_broke"),
            ("Marco", "we've had that thing since robie st"),
            ("Tess", "it's time. can we look this weekend"),
            ("Marco", "ya"),
            ("Tess", "there's a green velvet one at EQ3 I'm obsessed with", "green"),
            ("Marco", "velvet + biscuit = disaster"),
            ("Marco", "can u get dinner stuff, i cant really chew"),
            ("Tess", "soup?"),
            ("Marco", "soup 🙏"),
        ],
    ),
    # ---- session 6: Saturday 12 April 2025
    (
        "2025-04-12 13:05",
        [
            ("Tess", "ok priya and I are at structube"),
            ("Tess", "<Media omitted>"),
            ("Tess", "<Media omitted>"),
            ("Tess", "grey or the charcoal"),
            ("Marco", "the grey one", "grey"),
            ("Marco", "charcoal will show every dog hair"),
            ("Tess", "grey is the harlow sectional, $1899", "harlow"),
            ("Tess", "I'm lying on it rn it's sooo comfy"),
            ("Marco", "r u allowed to do that"),
            ("Tess", "the guy said yes"),
            ("Tess", "kind of"),
            ("Marco", "what about ur velvet one"),
            ("Tess", "priya sat on it and said it was like sitting on a cat"),
            ("Marco", "lol ok get the grey"),
            ("Tess", "ordered!! delivery june 10 😭 2 months", "deliv1"),
            ("Marco", "we'll sit on the floor like students"),
            ("Tess", "what do we do w the old one"),
            ("Marco", "dev downstairs wants it for his basement", "dev"),
            ("Marco", "also lucia called. she wants to come visit end of may", "lucia1"),
            ("Tess", "yayyy when"),
            ("Marco", "thurs 22 to tues 27", "lucia_dates"),
        ],
    ),
    # ---- session 7: Thursday 8 May 2025
    (
        "2025-05-08 09:15",
        [
            ("Marco", "lucia booked"),
            ("Marco", "porter from toronto, lands thurs the 22nd 9:40pm", "lucia_flight"),
            ("Tess", "I've got book club that night so ur on airport duty", "bookclub"),
            ("Tess", "is she still vegan"),
            ("Marco", "vegetarian now. eats eggs and cheese", "veg"),
            ("Tess", "ok easier. I'll do the halloumi thing"),
            ("Marco", "thinking we take her to peggy's cove on the saturday", "peggys"),
            ("Tess", "yes + lunch at the sou'wester"),
            ("Marco", "also fyi i quit spin", "quit_spin"),
            ("Tess", "lol that lasted 2 months"),
            ("Marco", "it was the 6am. not a 6am person"),
            ("Marco", "gonna run w biscuit after work instead", "run"),
            ("Tess", "biscuit will be so fit"),
            ("Marco", "he's already fit he's a border collie", "collie_a"),
            ("Tess", "mix 🙄", "collie_b"),
            ("Tess", "oh and my council presentation for the library is june 3", "council_date"),
            ("Tess", "gail wants me to present the whole thing"),
            ("Marco", "u'll crush it"),
        ],
    ),
    # ---- session 8: Friday 23 May 2025
    (
        "2025-05-23 17:30",
        [
            ("Tess", "how's lucia today"),
            ("Marco", "alive lol. napping"),
            ("Marco", "flight was delayed, she didnt land til 12:15", "delay"),
            ("Tess", "I heard u come in at like 1:30"),
            ("Tess", "what do u guys want for dinner, leaving the office at 6"),
            ("Marco", "she wants donair"),
            ("Tess", "the vegetarian wants donair??"),
            ("Marco", "the veggie one from king of donair"),
            ("Marco", "also biscuit ate one of her socks", "sock"),
            ("Tess", "BISCUIT"),
            ("Tess", "is he ok??"),
            (
                "Marco",
                "Yeah he's acting totally normal. I called the vet and they said it'll "
                "probably pass on its own, just watch him and bring him in if he throws up or "
                "stops eating. Lucia thinks it's hilarious, it was her favourite pair apparently",
                "sock_vet",
            ),
            ("Tess", "can u grab oat milk, bread and limes"),
            ("Marco", "limes?"),
            ("Tess", "margaritas 🍹"),
            ("Tess", "still peggy's tmrw?"),
            ("Marco", "yep leaving at 10, supposed to be sunny"),
        ],
    ),
    # ---- session 9: Tuesday 3 June 2025
    (
        "2025-06-03 10:05",
        [
            ("Tess", "presentation is at 2"),
            ("Tess", "I've changed the slides like 4 times this morning"),
            ("Marco", "stop touching them. theyre good"),
            ("Tess", "did u see the structube email"),
            ("Marco", "no"),
            ("Tess", "sofa delayed. new delivery date june 24", "deliv2"),
            ("Tess", "'supply chain issues'"),
            ("Marco", "ugh 3 more weeks on the floor"),
            ("Marco", "good luck at 2 babe ❤️"),
            ("Tess", "DONE"),
            (
                "Tess",
                "they asked a million questions about parking but I think it went well",
                "went_well",
            ),
            ("Tess", "council votes on it july 10", "vote_date"),
            ("Marco", "celebrate tonight?"),
            ("Tess", "pizza and couch"),
            ("Tess", "oh wait"),
            ("Tess", "pizza and floor"),
            ("Marco", "😂"),
        ],
    ),
    # ---- session 10: Tuesday 24 June 2025
    (
        "2025-06-24 14:20",
        [
            ("Tess", "SOFA IS HERE", "sofa_here"),
            ("Tess", "<Media omitted>"),
            ("Marco", "beautiful. how does it feel"),
            ("Tess", "even better than the store"),
            ("Tess", "biscuit already claimed the chaise"),
            ("Tess", "they had to take the front door off the hinges to get it in lol", "door"),
            ("Marco", "did they put it back"),
            ("Tess", "it squeaks now"),
            ("Marco", "i'll wd40 it"),
            ("Marco", "ok random thought"),
            ("Marco", "5 years on the 27th of sept", "anniv"),
            ("Marco", "what if we do a weekend in lunenburg"),
            ("Tess", "omg yes"),
            ("Tess", "the place w the harbour view we walked past last summer?"),
            ("Marco", "mariner's rest inn yeah", "inn"),
            ("Marco", "they have fri sept 26 to sun 28", "inn_dates1"),
            ("Tess", "book it!!"),
            ("Marco", "booked. $520 for the 2 nights", "inn_price"),
            ("Tess", "❤️❤️ best husband"),
            ("Marco", "boyfriend"),
            ("Tess", "best boyfriend then"),
        ],
    ),
    # ---- session 11: Monday 14 July 2025
    (
        "2025-07-14 12:10",
        [
            ("Tess", "westjet emailed"),
            ("Tess", "thursday flight got cancelled so they moved us"),
            ("Tess", "we now leave wed aug 13 at 6am 😩", "flights2"),
            ("Marco", "a day early?"),
            ("Marco", "so we need another night at the airbnb"),
            ("Tess", "already asked the host, she said yes. +$260", "airbnb2"),
            ("Marco", "nice. coming back still the 18th?"),
            ("Tess", "yes", "return"),
            ("Marco", "what about biscuit"),
            ("Tess", "harriet's taking him for the whole trip", "harriet"),
            ("Marco", "walker harriet?"),
            ("Tess", "yes she boards at her place too, $45 a night", "harriet_price"),
            (
                "Tess",
                "also gift. priya and tom want to go in on the kitchenaid mixer from the "
                "registry w us",
                "gift",
            ),
            ("Marco", "how much"),
            ("Tess", "$150 each couple", "gift_price"),
            ("Tess", "oh and the vote was thursday"),
            ("Marco", "AND??"),
            ("Tess", "APPROVED 7-2 🎉", "approved"),
            ("Marco", "LETS GOOO"),
            ("Tess", "construction starts next spring", "construction"),
        ],
    ),
    # ---- session 12: Friday 15 August 2025 (in Kelowna)
    (
        "2025-08-15 10:40",
        [
            ("Tess", "hair and makeup is running SO late"),
            ("Tess", "haven't even started the bridesmaids"),
            ("Marco", "hows jess"),
            ("Tess", "weirdly calm. her mom is not"),
            ("Marco", "sam and the guys are doing a winery tour, im tagging along", "tour"),
            ("Tess", "don't get drunk before the rehearsal dinner"),
            ("Marco", "its a TOUR. its educational"),
            ("Tess", "marco"),
            ("Marco", "ok ok"),
            ("Tess", "dinner's at 6 at quails' gate", "rehearsal"),
            ("Marco", "back at the airbnb by 4"),
            ("Tess", "did u bring the grey suit or the navy"),
            ("Marco", "navy", "suit"),
            ("Tess", "good the grey one has the stain"),
            ("Marco", "harriet sent a pic"),
            ("Marco", "<Media omitted>"),
            ("Tess", "he looks so happy 😭 traitor"),
        ],
    ),
    # ---- session 13: Tuesday 26 August 2025
    (
        "2025-08-26 18:05",
        [
            ("Marco", "bad news about lunenburg"),
            ("Marco", "the inn called. they double booked our room", "double"),
            (
                "Marco",
                "they offered either our same dates in a smaller room or oct 3-5 in the "
                "harbour view room",
            ),
            ("Tess", "I'm in toronto for the library conference oct 3", "conf_oct"),
            ("Tess", "wait no it's the 2nd to the 4th", "conference"),
            ("Tess", "so either way cant do oct 3"),
            ("Marco", "smaller room on our dates then"),
            ("Tess", "does it still have the view"),
            ("Marco", "garden side. but they knocked it down to $400", "inn_change"),
            ("Tess", "fine take it. view isn't everything"),
            ("Tess", "still thinking about jess's speech"),
            ("Marco", "the canoe part 😂"),
            ("Tess", "I cried so much"),
            ("Marco", "dinner?"),
            ("Tess", "anything that's not wedding food"),
            ("Marco", "tacos"),
            ("Tess", "yes. do we have tortillas"),
            ("Marco", "nope ill grab some"),
            ("Tess", "+ cilantro"),
        ],
    ),
]

DEFAULT_ASKED_AT = "2025-09-05 10:00"

# (question, evidence labels (every one needed for all@10), asked_at or None, kind)
QUESTIONS: list[tuple[str, list[str], str | None, str]] = [
    # car
    ("What was wrong with Marco's car?", ["quote1"], None, "single"),
    ("which garage did marco's car get towed to", ["garage"], None, "single"),
    ("How much did the car repair cost in the end?", ["bill_final"], None, "single"),
    (
        "why was the garage bill more than kenny's quote",
        ["quote1", "belt"],
        None,
        "multi",
    ),
    ("when did marco's car break down", ["car_die"], None, "temporal"),
    # Tess's work
    ("What did Tess get promoted to?", ["promo"], None, "single"),
    ("how big a raise did tess get", ["raise"], None, "single"),
    (
        "What is Tess's library project and did it get approved?",
        ["library", "approved"],
        None,
        "multi",
    ),
    ("When was Tess's presentation to council?", ["council_date"], None, "temporal"),
    ("when does construction on the library start", ["construction"], None, "temporal"),
    # Marco: gym and teeth
    ("Where did Marco go to spin class?", ["spin1"], None, "single"),
    (
        "how long did marco keep up the spin classes",
        ["spin1", "quit_spin"],
        None,
        "multi",
    ),
    ("What does Marco do for exercise now?", ["run"], None, "single"),
    ("how did marco crack his tooth", ["tooth"], None, "single"),
    ("who's marco's dentist", ["okafor"], None, "single"),
    ("How much did Marco pay for his crown?", ["crown_cost"], None, "single"),
    ("when is marco getting his crown put in", ["crown_date"], "2025-03-30 09:00", "temporal"),
    # sofa
    ("Why did they need a new sofa?", ["couch_broke"], None, "single"),
    ("which sofa did they buy and how much was it", ["harlow"], None, "single"),
    ("What other sofa did Tess want?", ["green"], None, "single"),
    ("who took the old couch", ["dev"], None, "single"),
    ("when is the sofa coming", ["deliv1"], "2025-05-01 09:00", "temporal"),
    ("When did the new sofa finally arrive?", ["sofa_here"], None, "temporal"),
    ("what happened to the front door when the sofa came", ["door"], None, "single"),
    # Lucia
    ("When did Lucia's flight actually land?", ["lucia_flight", "delay"], None, "multi"),
    (
        "what dates was lucia staying with us and how was she getting here",
        ["lucia_dates", "lucia_flight"],
        None,
        "multi",
    ),
    ("why couldn't tess pick lucia up from the airport", ["bookclub"], None, "single"),
    ("Is Lucia vegan?", ["veg"], None, "single"),
    ("where did they take lucia on the saturday", ["peggys"], None, "single"),
    # Biscuit
    ("what breed is biscuit", ["collie_a", "collie_b"], None, "multi"),
    ("what did biscuit eat", ["sock"], None, "single"),
    ("What did the vet say about the sock?", ["sock_vet"], None, "single"),
    ("when was biscuit at the vet for his shots", ["vet1"], None, "temporal"),
    # wedding
    ("When and where is Jess's wedding?", ["wedding_date"], None, "single"),
    ("when do we fly to kelowna", ["flights1"], "2025-04-01 09:00", "temporal"),
    (
        "How much did the flights and Airbnb for the wedding cost altogether?",
        ["flights_price", "airbnb_price", "airbnb2"],
        None,
        "multi",
    ),
    ("who looked after biscuit during the wedding trip", ["harriet"], None, "single"),
    (
        "how much did harriet charge for boarding biscuit for the whole trip",
        ["harriet_price", "flights2", "return"],
        None,
        "multi",
    ),
    (
        "what did tess and marco give jess and sam and how much did they put in",
        ["gift", "gift_price"],
        None,
        "multi",
    ),
    ("what did marco do yesterday", ["tour"], "2025-08-16 09:00", "temporal"),
    ("Where was the rehearsal dinner?", ["rehearsal"], None, "single"),
    # anniversary
    ("When is Tess and Marco's anniversary?", ["anniv"], None, "temporal"),
    (
        "what happened with the lunenburg booking",
        ["inn_dates1", "double", "inn_change"],
        None,
        "multi",
    ),
    (
        "when is tess's conference in toronto",
        ["conf_oct", "conference"],
        None,
        "temporal",
    ),
    # never mentioned: ideally no hit at the default min_score
    ("What kind of car does Marco drive?", [], None, "none-near"),
    ("how old is biscuit", [], None, "none-near"),
    ("What does Lucia do for work?", [], None, "none-near"),
    ("how much did jess's wedding dress cost", [], None, "none-near"),
    ("What's Gail's last name?", [], None, "none-near"),
    ("where does marco work", [], None, "none-near"),
    ("who was sam's best man", [], None, "none-near"),
    ("Does Tess have any brothers or sisters?", [], None, "none"),
    ("what hockey team does marco support", [], None, "none"),
    ("Has Tess ever been to Japan?", [], None, "none"),
]

# Messages that also answer a question on their own (count for hit@k, not needed for all@10).
ACCEPTABLE: dict[str, list[str]] = {
    "What was wrong with Marco's car?": ["alternator_guess"],
    "which sofa did they buy and how much was it": ["grey"],
    "When did the new sofa finally arrive?": ["deliv2"],
    "When was Tess's presentation to council?": ["went_well"],
    "When is Tess and Marco's anniversary?": ["inn_dates1"],
    "what did marco do yesterday": ["rehearsal"],
}
