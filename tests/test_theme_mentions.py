"""How often, and by whom: a question asking how often something is said, or which speakers say it, is answered
by counting the corpus's mentions of what it asks about."""

from __future__ import annotations

from conftest import theme_index
from test_theme_kinds import WordEmbedder, _corpus

from slmgraph.query.answer import Answer
from slmgraph.query.engines.global_search import _transcript_answer
from slmgraph.query.theme_mentions import asked_terms, asks_mentions, mentions_answer


def test_the_questions_asking_how_often_or_which_speakers():
    assert asks_mentions("How often do guests mention collaboration with industry rivals?") == "often"
    assert asks_mentions("How frequently does the board discuss the budget?") == "often"
    assert asks_mentions("Which guests talk about company culture?") == "which"
    assert asks_mentions("Which members talk about wind turbines?") == "which"
    assert asks_mentions("Who talks about the canal?") == "which"
    assert asks_mentions("What are the main themes?") == "" and asks_mentions("Which city hosts the fair?") == ""


def test_the_asked_terms_are_a_phrase_the_corpus_holds_else_the_rarest_topic_words():
    ix = _corpus()
    # "AI" is in a quarter of the units, "canal" in one: the rarer is asked about
    assert asked_terms("How often do guests mention the canal and AI?", ix) == ["canal"]
    assert asked_terms("How often do guests mention AI?", ix) == ["AI"]
    units = [("u0", "a", 0, "ADA: Sea ice melts. Sea ice returns."), ("u1", "b", 0, "BOB: Sea ice is thin.")]
    ix2 = theme_index(units, mentions=[("u0", "sea ice", "sea ice"), ("u1", "sea ice", "sea ice")])
    assert asked_terms("How often do they mention sea ice?", ix2) == ["sea ice"]
    # who is for or against it: the stance words ask nothing, whatever their rarity
    units = [("u0", "a", 0, "ADA: I support the canal. The canal floods."), ("u1", "b", 0, "BOB: The canal is old."),
             ("u2", "c", 0, "CY: The canal is long."), ("u3", "d", 0, "DI: The canal is wide.")]
    assert asked_terms("Which guests support the canal and which oppose it?", theme_index(units)) == ["canal"]
    assert asked_terms("Which guests are against the canal?", theme_index(units)) == ["canal"]


def test_how_often_counts_the_units_works_and_guests_naming_it():
    text, points, cited = mentions_answer(_corpus(), "How often do guests mention AI?", WordEmbedder())
    head = text.split("\n\n")[0]
    assert head.startswith("“AI” is named in 5 of the 20 text units, in 5 of the 5 documents.")
    # ten guest sentences, two in each interview; the host names it nowhere
    assert "It comes up in most of the documents: 10 sentences name it, by Ada Lovelace (2)" in head
    assert "### talk0 (2 sentences)" in text and "Kevin Scott" not in text
    assert cited and all(f"[Sources: {n}]" in text for n in cited)
    assert {d["document"] for p in points for d in p["documents"]} == {f"talk{i}" for i in range(5)}


def test_which_guests_names_those_who_say_it_and_how_many_never_do():
    text, points, _ = mentions_answer(_corpus(), "Which guests talk about the canal?", WordEmbedder())
    assert text.startswith("1 speaker names “canal”: Ada Lovelace (2 sentences, in “talk0”); the other 4 "
                           "speakers of the corpus never use these words. “canal” is named in 1 of the 20 text "
                           "units, in 1 of the 5 documents (“talk0”).")
    assert "### Ada Lovelace" in text and [p["topic"] for p in points] == ["Ada Lovelace"]


def test_which_guests_speak_of_a_phrase_no_unit_names_says_so_before_counting_its_word():
    text, _, _ = mentions_answer(_corpus(), "Which guests talk about canal tolls?", WordEmbedder())
    assert text.startswith("No passage of the corpus names “canal tolls”; what follows is what it says of “canal” "
                           "alone. 1 speaker names “canal”: Ada Lovelace")
    # a count's opening says which words it counts together already
    often, _, _ = mentions_answer(_corpus(), "How often do guests mention canal tolls?", WordEmbedder())
    assert not often.startswith("No passage")


def test_nothing_named_or_no_such_question_gives_no_answer_this_way():
    ix = _corpus()
    assert mentions_answer(ix, "How often do guests mention glaciers on Mars?", WordEmbedder()) is None
    assert mentions_answer(ix, "What are the main themes?", WordEmbedder()) is None
    assert mentions_answer(ix, "How often do guests mention AI?", None) is None


def test_global_search_answers_how_often_from_the_counts():
    ix = _corpus()
    ans = Answer(question="q", method="global", text="")
    assert _transcript_answer(ix.store, "How often do guests mention the canal?", WordEmbedder(), ans, None)
    assert ans.text.startswith("“canal” is named in 1 of the 20 text units")
    assert ans.details["transcript"] and set(ans.citations["sources"]) == {s for p in ans.points for s in p["sources"]}


def _club():
    """Four episodes: the host in all, a co-host beside the guest in three, a guest of their own in each; a name
    of several words, a year said in a short reply, and a label cut by a unit's edge."""
    eps = [
        ("ep1", "TOM BRENNAN", "I rowed in the Head of the River race twice with Harriet Lowe.\nTOM BRENNAN: The 1987 flood, yes."),
        ("ep2", "AISHA RAHMAN", "Tom still shouts at the novices every Sunday morning on the river."),
        ("ep3", "GREGOR LIND", "The head of the crew broke an oar against the lock gates that winter."),
        ("ep4", "PRIYA NAIR", "We trained for the Head of the River race in the rain all winter long."),
    ]
    units = []
    for i, (doc, guest, said) in enumerate(eps):
        co = "DEV PATEL: Tell us where you grew up, then.\n" if i else ""
        units.append((f"u{i}", doc, 0, f"MARGARET OKAFOR: Welcome to the boathouse.\n{co}{guest}: {said}\n"
                                        f"{guest}: I learned to row when I was twelve years old.\n"))
    units.append(("u9", "ep4", 1, "NAIR: We came fourth in the end, which felt like winning it.\n"))
    return theme_index(units, embedder=WordEmbedder())


def test_a_name_of_several_words_is_asked_whole_and_a_persons_name_by_either_word():
    ix = _club()
    assert asked_terms("Which guests talk about the Head of the River race?", ix) == ["Head of the River"]
    text, _, _ = mentions_answer(ix, "Which guests talk about the Head of the River race?", WordEmbedder())
    # "the head of the crew" is another sense; the co-host and the cut label "NAIR" are no guests
    assert text.startswith("2 speakers name “Head of the River”: Tom Brennan (1 sentence, in “ep1”) and Priya Nair "
                           "(1 sentence, in “ep4”); the other 2 speakers of the corpus never use these words.")
    # a speaker is a person, named by either word; a name no person has is named whole
    text, _, _ = mentions_answer(ix, "How often do guests mention Tom Brennan?", WordEmbedder())
    assert "1 sentence names it, by Aisha Rahman" in text
    text, _, _ = mentions_answer(ix, "How often do guests mention Harriet Lowe?", WordEmbedder())
    assert "1 sentence names it, by Tom Brennan" in text


def test_which_guests_never_say_it_are_named_and_a_short_reply_counts():
    text, _, _ = mentions_answer(_club(), "Which guests never mention the 1987 flood?", WordEmbedder())
    assert text.startswith("3 speakers never name “1987”: Aisha Rahman, Gregor Lind and Priya Nair. 1 speaker names "
                           "“1987”: Tom Brennan (1 sentence, in “ep1”).")


def test_what_every_document_names_is_still_counted():
    ix = _corpus()
    # "Kevin Scott" asks in every interview; "career" is in every document, yet asked about
    assert asked_terms("How often do guests mention their career?", ix) == ["career"]


def test_a_name_is_found_in_any_case_and_by_its_acronym_and_back():
    from slmgraph.query.theme_mentions import _matcher, other_forms

    units = [("u0", "a", 0, "ANA RUIZ: The Clean Air Zone starts in May. I support the CAZ."),
             ("u1", "b", 0, "BEN OKAFOR: The clean air zone will hurt my vans. The CAZ is a mistake."),
             ("u2", "c", 0, "CARA LIND: Nobody asked the harbour about the Clean Air Zone.")]
    ix = theme_index(units)
    assert other_forms("Clean Air Zone", ix) == ["CAZ"]
    assert other_forms("CAZ", ix) == ["Clean Air Zone"]
    m = _matcher("Clean Air Zone", also=["CAZ"])
    assert m("the clean air zone will hurt") and m("I back the CAZ.") and not m("clean air at last")
    # "caz" in lower case is no acronym
    assert not _matcher("CAZ")("a caz of wine")


def test_a_question_on_views_of_a_named_thing_quotes_each_speaker_naming_it_and_not_the_host():
    units = [("u0", "a", 0, "MAYA ROSS: Let's move on to the Clean Air Zone. What do you make of it?\n"
                            "ANA RUIZ: I support the CAZ, it will clear the school run."),
             ("u1", "b", 0, "MAYA ROSS: And the Clean Air Zone?\nBEN OKAFOR: The clean air zone will hurt my vans. "
                            "The CAZ is a mistake."),
             ("u2", "c", 0, "MAYA ROSS: Welcome.\nCARA LIND: Our choir sings on Sundays by the harbour.")]
    ix = theme_index(units)
    for q in ("How do guests perceive the Clean Air Zone?", "What are the guests' views on the CAZ?",
              "What do guests think of the Clean Air Zone?"):
        assert asks_mentions(q) == "views"
        text, points, _ = mentions_answer(ix, q, WordEmbedder())
        assert text.startswith("2 speakers name “"), text
        assert "Ana Ruiz" in text and "Ben Okafor" in text and "Let's move on" not in text
        assert "never use these words" not in text.split("\n\n")[0]  # who never names it is not what a views question asks
    # a view of a common noun is a theme of its own: answered by theme, not by counting
    assert mentions_answer(ix, "How do guests feel about the harbour?", WordEmbedder()) is None
    assert asks_mentions("How do guests describe the role of AI in medicine?") == ""


def test_a_word_is_named_in_either_number():
    from slmgraph.query.theme_mentions import _matcher

    assert _matcher("drones")("a delivery drone hovered") and _matcher("drone")("two drones")
    assert _matcher("policies")("the policy") and not _matcher("new")("the news")


def test_a_subject_no_passage_names_is_found_by_its_shortest_ending():
    from slmgraph.query.theme_mentions import absent_phrase

    units = [("u0", "a", 0, "ADA: The delivery drones fly over the farm at dawn."),
             ("u1", "b", 0, "BOB: The wind was strong and the harbour plan was late.")]
    ix = theme_index(units)
    # "wind" and "farm" are named, "wind farm" nowhere: the answer must say so
    assert absent_phrase("How do guests feel about the new wind farm?", ix) == "wind farm"
    assert absent_phrase("Which guests talk about the significance of company culture?", ix) == "company culture"
    assert absent_phrase("How do guests feel about the delivery drones?", ix) is None
    assert absent_phrase("What are the guests' views on the harbour plan?", ix) is None
    assert absent_phrase("How do guests feel about drones?", ix) is None  # no phrase to miss


def test_a_stance_question_sorts_the_speakers_by_what_they_say_for_and_against_it():
    from slmgraph.query.theme_mentions import stance

    assert stance("I'm all for the CHA.") == (1, 0) and stance("I'm against the housing act as written.") == (0, 1)
    assert stance("Against it as written. For it if they fix section 14.") == (1, 1)
    # hope, worry, a negation or a condition says no stance in so many words
    for said in ("It is a real gain, but the cost is a problem.", "I'm not against the ferries, but I worry.",
                 "I would oppose them.", "I'm neither for nor against it yet.", "I don't support it."):
        assert stance(said) == (0, 0), said
    units = [
        ("u0", "e0", 0, "MAYA ROSS: What do you make of the canal plan?\n"
                        "ADA LOVE: The canal plan gives the boat clubs a home. I support it, without caveats."),
        ("u1", "e1", 0, "MAYA ROSS: And the canal plan?\nBEN ODE: I'm against the canal plan as written."),
        ("u2", "e2", 0, "MAYA ROSS: The canal plan?\nCY DIX: The canal plan is a real gain, but the cost is a problem."),
        ("u3", "e3", 0, "MAYA ROSS: Welcome.\nDI FOX: I keep bees on the hill above the town."),
    ]
    ix = theme_index(units, mentions=[(c, "canal plan", "canal plan") for c in ("u0", "u1", "u2")])
    text, points, _ = mentions_answer(ix, "Which guests support the canal plan and which oppose it?", WordEmbedder())
    head = text.split("\n\n")[0]
    # Ada Love's support is said beside the name, in the same turn
    assert ("Saying so in so many words where they name it, for it: Ada Love; against it: Ben Ode; no stance in so "
            "many words: Cy Dix." in head), head
    heads = [ln for ln in text.splitlines() if ln.startswith("### ")]
    assert heads == ["### Ada Love (for it)", "### Ben Ode (against it)", "### Cy Dix (no stance in so many words)"]
    # the sentence saying her stance is quoted first, though it does not repeat the name
    assert text.split("### Ada Love (for it)\n- ", 1)[1].split("[Sources")[0].endswith("I support it, without caveats. ")
    plain, _, _ = mentions_answer(ix, "Which guests talk about the canal plan?", WordEmbedder())
    assert "in so many words" not in plain and "### Ada Love\n" in plain  # no stance asked: none given


def test_a_long_name_is_also_found_by_its_last_two_words():
    from slmgraph.query.theme_mentions import other_forms

    units = [("u0", "a", 0, "ADA: The Coastal Housing Act passed. The housing act caps homes."),
             ("u1", "b", 0, "BOB: I'm against the housing act."), ("u2", "c", 0, "CY: The CHA is fine. The CHA works.")]
    assert other_forms("Coastal Housing Act", theme_index(units)) == ["CHA", "housing act"]
    assert other_forms("CHA", theme_index(units + [("u3", "d", 0, "DI: The Coastal Housing Act, the Coastal Housing Act.")])) \
        == ["Coastal Housing Act", "housing act"]


def test_an_acronym_in_the_plural_is_asked_about_and_matched():
    units = [("u0", "a", 0, "ADA: The AFs will run every hour. I trust the AF on the night run."),
             ("u1", "b", 0, "BOB: The ferry crews are worried."), ("u2", "c", 0, "CY: Nobody asked the crews.")]
    ix = theme_index(units)
    assert asked_terms("How do guests perceive the AFs?", ix) == ["AFs"]
    text, _, _ = mentions_answer(ix, "How do guests perceive the AFs?", WordEmbedder())
    assert text.startswith("1 speaker names “AFs”: Ada (2 sentences")


def test_a_phrase_in_the_plural_is_found_under_its_concept_key():
    units = [("u0", "a", 0, "ADA: The autonomous ferries are safe."), ("u1", "b", 0, "BOB: An autonomous ferry is slow."),
             ("u2", "c", 0, "CY: The harbour is busy.")]
    ix = theme_index(units, mentions=[("u0", "autonomous ferry", "autonomous ferries"),
                                      ("u1", "autonomous ferry", "autonomous ferry")])
    assert asked_terms("What are the guests' views on the autonomous ferries?", ix) == ["autonomous ferries"]


def test_a_name_is_found_under_another_noun_of_its_kind_and_a_phrase_under_its_name():
    from slmgraph.query.theme_mentions import other_forms

    text = ("ADA: The Coastal Housing Act passed. I like the housing law. The Millbrook Riverside Plan is big.\n"
            "BOB: I support the riverside scheme. The housing crisis is real. The Coastal Resilience Act is new.")
    # "housing law" is the act; "housing crisis" is no name of its kind; "coastal" begins two acts' names
    assert other_forms("Coastal Housing Act", text) == ["housing law"]
    assert other_forms("Millbrook Riverside Plan", text) == ["riverside scheme"]
    assert other_forms("riverside scheme", text) == ["Millbrook Riverside Plan"]
    assert other_forms("housing law", text) == ["Coastal Housing Act"]
    assert other_forms("coastal law", text) == []  # two acts begin with "Coastal": neither is meant for certain


def test_a_stance_on_the_act_counts_where_the_document_names_only_that_act():
    later = " It has ten parts. It passed in May. It is long."
    units = [("u0", "a", 0, "JO: Welcome, Ada. Tell us about the Coastal Housing Act.\n\nADA: I know the Coastal "
                            "Housing Act well." + later + " I am against the act."),
             ("u1", "b", 0, "JO: Welcome, Bob. The Coastal Housing Act and the Coastal Resilience Act.\n\nBOB: The "
                            "Coastal Housing Act is new." + later + " I am for the act."),
             ("u2", "c", 0, "JO: Welcome, Cy.\n\nCY: The Coastal Housing Act is here. I support the housing law.")]
    text, _, _ = mentions_answer(theme_index(units), "Which guests support the Coastal Housing Act and which oppose it?",
                                 WordEmbedder())
    head = text.split("\n\n")[0]
    # Ada's "the act" is the one act her episode names; Bob's episode names two, so his "the act" is neither
    assert "for it: Cy; against it: Ada; no stance in so many words: Bob" in head, head


def test_a_view_the_speaker_reports_of_someone_else_is_not_theirs():
    from slmgraph.query.theme_mentions import reported

    assert reported("My son is in favour of the housing act, as it happens.")
    assert reported("My sister, who teaches at the school, is for the act.")
    assert reported("And my neighbour thinks the act is the best thing in years.")
    assert reported("She says it will fail.")
    assert not reported("My view is that it fails.") and not reported("I think the act is a mistake.")
    assert not reported("The act is a mistake.") and not reported("My guest is Helen Marsh, a farmer.")
    units = [("u0", "a", 0, "JO: Ada, the Coastal Housing Act?\n\nADA: My neighbour thinks the Coastal Housing Act is "
                            "the best thing in years. I am against the Coastal Housing Act."),
             ("u1", "b", 0, "JO: Bob?\n\nBOB: The Coastal Housing Act is long.")]
    text, _, _ = mentions_answer(theme_index(units), "What do guests think of the Coastal Housing Act?", WordEmbedder())
    ada = text.split("### Ada (against it)\n- ", 1)[1]
    assert ada.index("I am against") < ada.index("My neighbour"), text


def test_one_other_speaker_is_counted_in_the_singular():
    units = [("u0", "a", 0, "JO: Ada?\n\nADA: The canal floods."), ("u1", "b", 0, "JO: Bob?\n\nBOB: The weir is old.")]
    text, _, _ = mentions_answer(theme_index(units), "Which guests talk about the canal?", WordEmbedder())
    assert "the other speaker of the corpus never uses these words" in text, text


def test_how_often_a_term_is_said_with_its_partner_counts_the_sentences_naming_both():
    units = [("u0", "a", 0, "ADA: Our collaboration with the lab down the road was fun."),
             ("u1", "b", 0, "BOB: The collaboration with two rival companies saved the project."),
             ("u2", "c", 0, "CY: The harbour is busy."), ("u3", "d", 0, "DI: The weather turned.")] + [
        (f"f{i}", f"e{i}", 0, f"EVE: The companies of street {i} open at nine.") for i in range(16)]
    q = "How often do guests mention collaboration with other companies or industry rivals?"
    text, _, _ = mentions_answer(theme_index(units), q, WordEmbedder())
    head = text.split("\n\n")[0]
    assert head.endswith("Of these, 1 names “collaboration” together with “companies”, “industry” or “rivals”."), head
    # the sentence naming both is quoted first in its document
    assert text.index("two rival companies") < text.index("Documents cited")
    text, _, _ = mentions_answer(theme_index(units[:1] + units[2:]), q, WordEmbedder())
    assert "None names “collaboration” together with “companies”, “industry” or “rivals”" in text, text


def test_a_question_on_views_by_another_name_is_answered_speaker_by_speaker_with_stances():
    units = [("u0", "a", 0, "JO: Ada, the Coastal Housing Act?\n\nADA: I am against the Coastal Housing Act."),
             ("u1", "b", 0, "JO: Bob?\n\nBOB: I support the housing act, and the housing law works."),
             ("u2", "c", 0, "JO: Cy?\n\nCY: The harbour is busy today."), ("u3", "d", 0, "JO: Di?\n\nDI: Rain again.")]
    text, _, _ = mentions_answer(theme_index(units), "How do guests feel about the housing law?", WordEmbedder())
    head = text.split("\n\n")[0]
    assert head.startswith("2 speakers name “housing law” (also “Coastal Housing Act”)"), head
    assert "for it: Bob; against it: Ada." in head
    # no speaker states a stance: a question on views gets no stance line
    calm = [("u0", "a", 0, "JO: Ada?\n\nADA: The Coastal Housing Act is long."),
            ("u1", "b", 0, "JO: Bob?\n\nBOB: The housing act is new."), ("u2", "c", 0, "JO: Cy?\n\nCY: Rain.")]
    text, _, _ = mentions_answer(theme_index(calm), "How do guests feel about the housing act?", WordEmbedder())
    assert "in so many words" not in text and "### Ada\n" in text, text


def test_two_things_asked_about_are_sided_apart():
    units = [("u0", "a", 0, "JO: Ada, the Coastal Housing Act and the Riverside Plan?\n\nADA: I support the Coastal "
                            "Housing Act. But I am against the Riverside Plan."),
             ("u1", "b", 0, "JO: Bob?\n\nBOB: I support the Coastal Housing Act. I support the Riverside Plan too."),
             ("u2", "c", 0, "JO: Cy?\n\nCY: The Riverside Plan is long. The harbour is busy today."),
             ("u3", "d", 0, "JO: Di?\n\nDI: Rain again on the hills.")]
    q = "Which guests support both the Coastal Housing Act and the Riverside Plan?"
    text, _, _ = mentions_answer(theme_index(units), q, WordEmbedder())
    head = text.split("\n\n")[0]
    assert head.startswith("For both, in so many words: Bob; against both: no one. "), head
    assert ("on “Coastal Housing Act”, for it: Ada and Bob; on “Riverside Plan”, for it: Bob; against it: Ada; no "
            "stance in so many words: Cy") in head, head
    assert "### Bob (for “Coastal Housing Act”, for “Riverside Plan”)" in text
    ada = text.split("### Ada (for “Coastal Housing Act”, against “Riverside Plan”)\n", 1)[1].split("\n\n")[0]
    assert "I support the Coastal Housing Act." in ada and "I am against the Riverside Plan." in ada, text


def test_how_many_guests_take_a_side_is_counted_in_people():
    assert asks_mentions("How many guests oppose the Coastal Housing Act?") == "which"
    assert asks_mentions("How many speakers mention AI for healthcare?") == "often"
    units = [("u0", "a", 0, "JO: Ada?\n\nADA: I am against the Coastal Housing Act."),
             ("u1", "b", 0, "JO: Bob?\n\nBOB: I support the Coastal Housing Act."),
             ("u2", "c", 0, "JO: Cy?\n\nCY: I oppose the Coastal Housing Act, frankly."),
             ("u3", "d", 0, "JO: Di?\n\nDI: The Coastal Housing Act is long.")]
    text, _, _ = mentions_answer(theme_index(units), "How many guests oppose the Coastal Housing Act?", WordEmbedder())
    assert text.startswith("2 of the 4 speakers who name it say in so many words that they are against it. "), text


def test_the_act_or_the_tram_asks_about_the_one_name_of_its_kind():
    from slmgraph.query.theme_mentions import named_by_word

    text = "The Coastal Housing Act passed. The Riverside Tram Plan is new. The tram stop is old. Port Elwyn grew."
    assert named_by_word("How many guests oppose the Act?", text) == ("Coastal Housing Act", "")
    assert named_by_word("How do guests perceive the tram?", text) == ("Riverside Tram Plan", "tram")
    assert named_by_word("How do guests perceive the harbour?", text) is None
    # two acts: "the Act" is neither for certain
    assert named_by_word("Who opposes the Act?", text + " The Clean Air Act is old.") is None
    units = [("u0", "a", 0, "JO: Ada, the tram?\n\nADA: I'm a big supporter of the tram. I use the Riverside Tram Plan "
                            "maps."),
             ("u1", "b", 0, "JO: Bob?\n\nBOB: I am an opponent of the Riverside Tram Plan."),
             ("u2", "c", 0, "JO: Cy?\n\nCY: The harbour is busy today."), ("u3", "d", 0, "JO: Di?\n\nDI: Rain again.")]
    text, _, _ = mentions_answer(theme_index(units), "How do guests perceive the tram?", WordEmbedder())
    head = text.split("\n\n")[0]
    assert head.startswith("2 speakers name “Riverside Tram Plan” (also “tram”)"), head
    assert "for it: Ada; against it: Bob." in head, head


def test_for_both_names_those_for_one_who_say_nothing_of_the_other():
    units = [("u0", "a", 0, "JO: Ada, the Coastal Housing Act and the Riverside Plan?\n\nADA: I support the Coastal "
                            "Housing Act. The Riverside Plan is long."),
             ("u1", "b", 0, "JO: Bob?\n\nBOB: I am against the Coastal Housing Act. I support the Riverside Plan."),
             ("u2", "c", 0, "JO: Cy?\n\nCY: The harbour is busy today."), ("u3", "d", 0, "JO: Di?\n\nDI: Rain again.")]
    q = "Which guests support both the Coastal Housing Act and the Riverside Plan?"
    text, _, _ = mentions_answer(theme_index(units), q, WordEmbedder())
    assert text.startswith("For both, in so many words: no one (for one and no stance said on the other under these "
                           "names: Ada); against both: no one. "), text


def test_a_sentence_opening_and_a_pronoun_spell_no_acronym():
    from slmgraph.query.theme_mentions import other_forms

    text = ("And I said so. And I went home. And I knew it. Artificial Intelligence is here. The Artificial "
            "Intelligence lab opened.")
    assert other_forms("AI", text) == ["Artificial Intelligence"]


def test_a_subject_of_words_no_text_unit_holds_is_said_to_be_absent():
    from slmgraph.query.theme_mentions import absent_words

    ix = _corpus()
    assert absent_words("Which guests talk about cryptocurrency or bitcoin?", ix) == ["cryptocurrency", "bitcoin"]
    assert absent_words("Which guests talk about the canal?", ix) == []
    assert absent_words("Which guests talk about the canal or bitcoin?", ix) == []
    # every interview names the museum: an adverb no text unit holds does not make the question's subject absent
    assert absent_words("What do the guests personally think about the museum?", ix) == []
