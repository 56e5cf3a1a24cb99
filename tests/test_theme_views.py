"""How speakers view something: a question asking how guests perceive or view a subject is answered from their
own sentences naming it, set apart by stance; a corpus without speaker labels keeps the answer by theme."""

from __future__ import annotations

from conftest import theme_index
from test_theme_kinds import WordEmbedder, _corpus

from slmgraph.query.answer import Answer
from slmgraph.query.engines.global_search import _transcript_answer
from slmgraph.query.theme_views import asks_views, stance_of, views_answer


def test_the_questions_asking_for_views():
    assert asks_views("How do guests generally perceive the impact of privacy laws on technology development?")
    assert asks_views("What are the guests' views on remote work?")
    assert asks_views("What do the speakers think about nuclear power?")
    assert not asks_views("What are the main themes across these episodes?")
    assert not asks_views("Which guests talk about company culture?")
    assert not asks_views("What is the view from the lighthouse?")


def test_a_sentence_s_stance_is_its_strongest_cue():
    assert stance_of("I worry that AI will flood the journals with careless papers.") == "concerns and objections"
    assert stance_of("I am hopeful that AI will help chemists find safer dyes.") == "support, hopes and benefits"
    assert stance_of("AI maps the fault lines of the valley.") == "other views"
    # plain support or opposition takes a side
    assert stance_of("I support it without hesitation.") == "support, hopes and benefits"
    assert stance_of("Honestly the charge is a mistake and I voted against it.") == "concerns and objections"


def test_the_guests_sentences_naming_it_are_set_apart_by_stance():
    text, points, cited = views_answer(_corpus(), "How do guests perceive AI?", WordEmbedder())
    head = text.split("\n\n")[0]
    # two sentences from each of five guests; the host never names it, and would be left out
    assert head.startswith("10 of the speakers' sentences name “AI”, in all 5 documents, by ")
    assert "By their cue words, 5 voice concerns and objections and 5 voice support, hopes and benefits." in head
    assert [p["topic"] for p in points] == ["concerns and objections", "support, hopes and benefits"]
    concerns = text.split("### Concerns and objections")[1].split("### Support")[0]
    assert "I worry that AI will flood the chemistry journals" in concerns and "hopeful" not in concerns
    assert "Kevin Scott" not in text and "KEVIN" not in text
    assert cited and all(f"[Sources: {n}]" in text for n in cited)


def test_no_such_question_too_few_sentences_or_no_speakers_give_no_answer_this_way():
    ix = _corpus()
    assert views_answer(ix, "What are the main themes?", WordEmbedder()) is None
    assert views_answer(ix, "How do guests perceive the canal?", WordEmbedder()) is None
    assert views_answer(ix, "How do guests perceive AI?", None) is None
    plain = [(f"u{i}", f"d{i}", 0, f"Report {i}: AI helps the clerks. AI worries the union.") for i in range(4)]
    assert views_answer(theme_index(plain, embedder=WordEmbedder()), "How do members view AI?", WordEmbedder()) is None


def test_global_search_answers_a_views_question_this_way():
    ix = _corpus()
    ans = Answer(question="q", method="global", text="")
    assert _transcript_answer(ix.store, "What are the guests' views on AI?", WordEmbedder(), ans, None)
    assert ans.text.startswith("10 of the speakers' sentences name “AI”")
    assert ans.details["transcript"] and ans.citations["sources"]


def _privacy(together: int):
    """Six interviews: in each, a guest names privacy laws together (the first ``together``), privacy alone, or
    the laws of physics."""
    units = []
    both = ["I think privacy laws slow the release of new phones by a year.",
            "Strict privacy laws made our camera team rewrite the whole upload service.",
            "Honestly the European privacy laws were the best thing to happen to map apps.",
            "Game studios fear privacy laws more than they fear their rivals.",
            "Watchmakers barely noticed the privacy laws at first.",
            "Car dealers lobbied against the privacy laws for a decade."]
    alone = ["Privacy matters most to the people who build phones.",
             "Our cameras blur faces because privacy is a promise to the street.",
             "Map users trade their privacy for a faster route home.",
             "Players rarely think about privacy while the game is loading.",
             "A watch on your wrist knows more than your doctor, so privacy is personal.",
             "Drivers never read the privacy page of the car's screen."]
    physics = ["The film about phones broke the laws of physics in every scene.",
               "That camera chase ignored the laws of gravity entirely.",
               "Our map of the cave obeyed no laws of geometry at all.",
               "The racing game bends the laws of motion for fun.",
               "Watch springs follow the laws of elasticity closely.",
               "Brakes on wet roads teach you the laws of friction quickly."]
    for i, g in enumerate(["ANA RUIZ", "BEN OKAFOR", "CARA LIND", "DEV PATEL", "EVA NOOR", "FINN ROSS"]):
        said = both[i] if i < together else alone[i]
        units.append((f"u{i}", f"talk{i}", 0, f"KIM HOST: Welcome to the show.\n{g}: {said}\n{g}: {physics[i]}\n"))
        units += [(f"u{i}{k}", f"talk{i}", k, f"{g}: The harbour has {k + 2} boats.\n") for k in range(1, 4)]
        # "laws" is the commoner word: the laws of a science, in another part
        units.append((f"w{i}", f"talk{i}", 4, f"{g}: In school I learnt {i + 3} laws of chemistry by heart.\n"))
    # six more talks, of the harbour only
    units += [(f"v{i}", f"more{i}", 0, f"GIL MOSS: The harbour has {i + 2} boats and a market on Friday.\n")
              for i in range(6)]
    return theme_index(units, embedder=WordEmbedder())


def test_words_written_in_a_row_are_one_subject_and_a_common_word_is_never_one_alone():
    text, _, _ = views_answer(_privacy(4), "How do guests perceive the impact of privacy laws on devices?", WordEmbedder())
    assert text.startswith("4 of the speakers' sentences name “privacy” and “laws”, in 4 of the 12 documents")
    assert "laws of physics" not in text and "matters most" not in text
    # too few name both: the rarer word alone is the subject, never the commoner "laws" (of physics)
    text, _, _ = views_answer(_privacy(1), "How do guests perceive the impact of privacy laws on devices?", WordEmbedder())
    assert text.startswith("6 of the speakers' sentences name “privacy”, in 6 of the 12 documents")
    assert "laws of physics" not in text


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


def test_a_subject_the_corpus_never_names_is_said_so_with_the_nearest_word():
    text, points, cited = views_answer(_corpus(), "How do guests feel about the new wind farm?", WordEmbedder())
    assert text.startswith("No text of the corpus names “wind” or “farm”, so no speaker's view of it can be given.")
    assert points == [] and cited == []
    text, _, _ = views_answer(_corpus(), "How do guests feel about the musuem?", WordEmbedder())
    assert "Did you mean: “musuem” -> “museum”?" in text
