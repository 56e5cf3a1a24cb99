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
