"""Global answers quote no filler: hedged sentences leaning on what came before, stage cues, a work's intro
and outro parts (guest introductions, welcomes), and the lead and theme sentences are built from the data."""

from __future__ import annotations

from slmgraph.query.documents import Doc
from slmgraph.query.theme_model import ThemeIndex, content_weight, leans, spoken


def _ix(docs: list[Doc]) -> ThemeIndex:
    ix = ThemeIndex.__new__(ThemeIndex)
    ix.docs = docs
    ix.doc_by_id = {d.doc_id: d for d in docs}
    return ix


def test_a_hedged_sentence_leaning_on_what_came_before_counts_against_it():
    assert leans("I think -- that's, like, the best part of tech.")
    assert leans("Um, and, and just hearing Bill talk about his passion was great.")
    assert leans("KEVIN SCOTT: It was hard.")
    assert not leans("I think that with the rise of technology comes greater concentration of power.")
    assert not leans("I remember one of my first jobs, I had to put brass rivets into 5,000 circuit boards.")
    assert content_weight("I think -- that's, like, the best part of tech.", []) < 0


def test_a_stage_cue_is_no_ones_words():
    assert spoken("[MUSIC] Welcome back to the lab,  everyone.") == "Welcome back to the lab, everyone."
    assert spoken("We built it [inaudible] in a garage in 1998.") == "We built it in a garage in 1998."
    assert spoken("The list [1] stays.") == "The list [1] stays."


def test_a_works_first_and_last_parts_are_its_edges():
    docs = [Doc(f"p{i}", f"ep-part{i}.txt", "", f"ep, part {i}", i, 1, work="ep", part=i) for i in range(1, 6)]
    docs += [Doc("two1", "t-part1.txt", "", "t, part 1", 6, 1, work="t", part=1),
             Doc("two2", "t-part2.txt", "", "t, part 2", 7, 1, work="t", part=2),
             Doc("solo", "solo.txt", "", "solo", 8, 4)]
    ix = _ix(docs)
    assert ix.at_edge("p1", 1) and ix.at_edge("p5", 1)
    assert not ix.at_edge("p3", 1)
    assert not ix.at_edge("two1", 1)  # a work of two parts has no intro part of its own
    assert ix.at_edge("solo", 1) and ix.at_edge("solo", 4) and not ix.at_edge("solo", 2)


def _docs(n: int) -> list[Doc]:
    return [Doc(f"d{i}", f"d{i}.txt", "", f"minutes {2018 + i}", i, 2, date=str(2018 + i)) for i in range(1, n + 1)]


def test_the_lead_says_how_many_statements_answer_by_whom_from_how_many_documents_and_what_they_share():
    from slmgraph.query.theme_model import Statement, Theme
    from slmgraph.query.theme_render import overview

    ix = _ix(_docs(4))
    a = Theme(1, "flood defence", {"documents": 2, "of": 4}, ["d1", "d2"], [], statements=[
        Statement("The river barrier held back the spring flood.", 1, "d1", 1, 2, speaker="Lena Ortiz"),
        Statement("Sandbags and the river barrier saved the mill.", 2, "d2", 1, 2, speaker="Lena Ortiz")])
    b = Theme(2, "library budget", {"documents": 1, "of": 4}, ["d3"], [], statements=[
        Statement("The library budget lost a fifth of its funds.", 3, "d3", 1, 2, speaker="Tom Hale")])
    text = overview([a, b], ix)
    assert text.startswith("3 statements by Lena Ortiz (2) and Tom Hale, from 3 of the 4 documents, bear on the question; "
                           "they speak most of \u201criver\u201d (2) and \u201cbarrier\u201d (2).")
    # a corpus-wide question's answer is its list of themes, first
    assert overview([a, b], ix, wide=True).startswith("Across the 4 documents")


def test_a_theme_opens_with_who_says_its_statements_and_the_words_they_share_not_its_label():
    from slmgraph.query.theme_model import Statement, Theme
    from slmgraph.query.theme_render import template_opening

    ix = _ix(_docs(4))
    t = Theme(1, "flood defence", {"documents": 2, "of": 4}, ["d1", "d2"], [], statements=[
        Statement("The river barrier held back the spring flood.", 1, "d1", 1, 2, speaker="Lena Ortiz"),
        Statement("Sandbags and the river barrier saved the mill.", 2, "d2", 1, 2, speaker="Lena Ortiz")])
    opening = template_opening(t, ix)
    assert opening.startswith("Lena Ortiz speaks here of \u201criver\u201d and \u201cbarrier\u201d (both statements). "
                              "Flood defence: discussed in 2 of 4 documents")
    one = Theme(2, "budget", {"documents": 1, "of": 4}, ["d3"], [], statements=[
        Statement("The library lost a fifth of its funds.", 3, "d3", 1, 2, speaker="Tom Hale")])
    assert template_opening(one, ix).startswith("Budget: discussed in 1 of 4 documents. Quoted below from "
                                                "\u201cminutes 2021\u201d (speakers: Tom Hale).")


def test_a_question_about_change_over_time_is_told_what_came_first_and_what_later():
    from slmgraph.query.theme_model import Statement, Theme
    from slmgraph.query.theme_render import overview

    ix = _ix(_docs(4))
    t = Theme(1, "budget shortfall", {"documents": 2, "of": 4}, ["d1", "d4"], [], statements=[
        Statement("The shortfall was 4 million pounds after the flood.", 1, "d1", 1, 2),
        Statement("The shortfall fell to 2 million pounds thanks to reserves.", 4, "d4", 1, 2)])
    text = overview([t], ix, temporal=True)
    assert ("The earliest statement, from \u201cminutes 2019\u201d, states 4 million pounds and speaks of \u201cflood\u201d; "
            "the latest, from \u201cminutes 2022\u201d, states 2 million pounds and speaks of \u201cfell\u201d and "
            "\u201creserves\u201d.") in text


def test_a_question_written_with_a_period_is_no_statement():
    from slmgraph.query.theme_model import asks

    assert asks("What's your role model can't have been people in your town.")
    assert asks("KEVIN SCOTT: How do you start this process of trying to imagine the future.")
    assert not asks("What I learned there was that teams matter more than tools.")
    assert not asks("How the council found the money is told in the minutes.")


def test_a_quote_is_a_whole_sentence_never_one_cut_with_an_ellipsis():
    from slmgraph.query.extractive import sentence_points

    long = "The council " + "kept the reserve for the library and the bridge and the flood wall " * 6 + "in the end."
    pts = sentence_points([(1, f"{long} The bridge reopened in May after the repairs.")], max_chars=120)
    assert [p.text for p in pts] == ["The bridge reopened in May after the repairs."]
    assert all("\u2026" not in p.text for p in pts)
    # only when nothing else is left is a long sentence cut
    assert sentence_points([(1, long)], max_chars=120)[0].text.endswith("\u2026")


def test_a_sentence_whose_opening_a_unit_edge_cut_is_a_fragment():
    from slmgraph.query.extractive import sentence_kinds

    assert "fragment" in sentence_kinds(", uh, microprocessor and PC operating system revolution meant a lot.")
    assert "fragment" not in sentence_kinds("The microprocessor revolution meant a lot.")


def test_a_host_steering_the_conversation_frames_it():
    from slmgraph.query.theme_model import framing

    assert framing("I\u2019d love to talk now a little bit about what you do here at Microsoft.")
    assert framing("KEVIN SCOTT: Let's talk about your childhood in Ohio.")
    assert not framing("We talk about privacy a lot at work because customers ask.")


def test_statements_without_a_speaker_label_are_credited_to_no_one():
    from slmgraph.query.theme_model import Statement, Theme
    from slmgraph.query.theme_render import overview, template_opening

    ix = _ix(_docs(4))
    t = Theme(1, "flood defence", {"documents": 3, "of": 4}, ["d1", "d2", "d3"], [], statements=[
        Statement("The river barrier held back the spring flood.", 1, "d1", 1, 2, speaker="Lena Ortiz"),
        Statement("Sandbags and the river barrier saved the mill.", 2, "d2", 1, 2),
        Statement("The river barrier needs new gates by winter.", 3, "d3", 1, 2)])
    lead = overview([t], ix)
    assert lead.startswith("3 statements, 1 of them by Lena Ortiz, from 3 of the 4 documents, bear on the question")
    opening = template_opening(t, ix)
    assert "Lena Ortiz speaks" not in opening
    assert opening.startswith("Its statements speak here of \u201criver\u201d and \u201cbarrier\u201d (all 3 statements).")
    assert "(speakers: Lena Ortiz)" in opening


def test_undated_documents_give_a_first_and_last_statement_not_an_earliest_and_latest():
    from slmgraph.query.theme_model import Statement, Theme
    from slmgraph.query.theme_render import overview

    ix = _ix([Doc(f"d{i}", f"notes-{i}.txt", "", f"notes {chr(96 + i)}", i, 2) for i in range(1, 4)])
    t = Theme(1, "budget shortfall", {"documents": 2, "of": 3}, ["d1", "d3"], [], statements=[
        Statement("The shortfall was 4 million pounds after the flood.", 1, "d1", 1, 2),
        Statement("The shortfall fell to 2 million pounds thanks to reserves.", 3, "d3", 1, 2)])
    text = overview([t], ix, temporal=True)
    assert "earliest" not in text and "latest" not in text
    assert "In the documents' order, the first statement, from \u201cnotes a\u201d" in text


def test_a_themes_date_range_comes_from_the_documents_its_count_counts():
    from slmgraph.query.theme_model import Statement, Theme
    from slmgraph.query.theme_render import template_opening

    ix = _ix([Doc(f"d{i}", f"d{i}.txt", f"minutes {2018 + i}", f"minutes {2018 + i}", i, 2, date=str(2018 + i))
              for i in range(1, 5)])
    quote = [Statement("The library lost a fifth of its funds.", 3, "d2", 1, 2)]
    # counted: the community's documents (d2, d3); the label's documents (d1 to d4) span wider
    t = Theme(1, "budget", {"documents": 2, "of": 4}, ["d1", "d2", "d4"], [], statements=quote,
              community_docs=["d2", "d3"])
    assert template_opening(t, ix).startswith("Budget: discussed in 2 of 4 documents (50 %), dated 2020 to 2021.")
    # one document counted: no range at all, never that of other documents
    one = Theme(2, "budget", {"documents": 1, "of": 4}, ["d1", "d2", "d4"], [], statements=quote,
                community_docs=["d2"])
    assert template_opening(one, ix).startswith("Budget: discussed in 1 of 4 documents. Quoted below")


def test_the_earliest_statement_of_a_timeline_is_the_first_one_listed():
    from slmgraph.query.theme_model import Statement, Theme
    from slmgraph.query.theme_render import overview

    ix = _ix(_docs(4))
    t = Theme(1, "press", {"documents": 3, "of": 4}, ["d1", "d2", "d4"], [], statements=[
        Statement("The borrowed press goes back to its owners after this autumn.", 1, "d1", 1, 2),
        Statement("The meeting agreed to spend up to 1,500 pounds on a press.", 2, "d2", 1, 2),
        Statement("Juice sales brought in 1,120 pounds in the press's first year.", 4, "d4", 1, 2)])
    text = overview([t], ix, temporal=True)
    assert "The earliest statement, from \u201cminutes 2019\u201d" in text
    assert "the latest, from \u201cminutes 2022\u201d, states 1,120 pounds" in text
