"""Focused global answers: themes found from the question's evidence, statements on the question only,
no framing lines, labels that read as topics (phrases by class-based TF-IDF and MMR)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import FakeEmbedder, theme_index

from slmgraph.query.theme_model import ThemeIndex, framing
from slmgraph.query.themes import build_themes
from slmgraph.query.theme_labels import keyphrase_label, theme_phrases

QUESTION = "How do privacy laws shape products?"
UNITS = {
    "u1": ("a", "Privacy laws slow down how fast consumer products reach users and their data. "
                "The cafeteria serves a warm lunch at noon every single day."),
    "u2": ("b", "Strict privacy laws make engineers build data protection into products. "
                "Today I'm joined by my colleague Christina Warren."),
    "u3": ("c", "The robot arm picked up the red block on the first try. "
                "The weather was very pleasant that whole afternoon."),
}
PHRASES = {"u1": [("privacy law", "privacy laws"), ("consumer product", "consumer products"), ("cafeteria", "cafeteria"),
                  ("warm lunch", "warm lunch")],
           "u2": [("privacy law", "privacy laws"), ("data protection", "data protection"),
                  ("colleague", "colleague")],
           "u3": [("robot arm", "robot arm"), ("red block", "red block")]}


@pytest.fixture
def ix():
    emb = FakeEmbedder()
    ix = theme_index([(c, d, 0, text) for c, (d, text) in UNITS.items()], embedder=emb,
                     entities=[(1, "Privacy Office"), (2, "Robot Lab")], members=[(10, 1), (20, 2)],
                     entity_units=[(1, "u1"), (1, "u2"), (2, "u3")],
                     reports=[(10, "team, office, work"), (20, "robot, block, lab")],
                     mentions=[(c, k, n) for c in UNITS for k, n in PHRASES[c]])
    yield ix
    ix.store.con.close()


POOL = [{"community_id": 10, "entities": ["Privacy Office"], "summary": ""},
        {"community_id": 20, "entities": ["Robot Lab"], "summary": ""}]


def _focused(ix, probes=None):
    emb = FakeEmbedder()
    return build_themes(ix, POOL, {10: 40.0, 20: 60.0}, emb.encode([QUESTION])[0], emb, question=QUESTION,
                        pool=POOL, probes=probes)


def test_a_focused_question_gets_only_themes_whose_statements_answer_it(ix):
    themes = _focused(ix)
    # the robot community scored higher, but none of its sentences is on the question: it is no theme
    assert [t.report for t in themes] == [10]
    quoted = [s.text for s in themes[0].statements]
    assert sorted(quoted) == sorted(["Privacy laws slow down how fast consumer products reach users and their data.",
                                     "Strict privacy laws make engineers build data protection into products."])


def test_a_statement_no_nearer_the_question_than_an_off_topic_probe_is_left_out(ix):
    from slmgraph.query.themes import focused_themes

    emb = FakeEmbedder()

    def focused(probes):
        return focused_themes(ix, POOL, {10: 40.0, 20: 60.0}, emb.encode([QUESTION])[0], emb, probes=probes)

    # a probe as near every sentence as the question itself: nothing is on the question
    assert focused([QUESTION]) == []
    assert focused(["How long should I boil pasta?"])
    # a probe as near one statement as the question: that one goes, the other stays
    one = "Strict privacy laws make engineers build data protection into products."
    got = [s.text for t in focused([one]) for s in t.statements]
    assert got and one not in got
    # then build_themes answers from the reports' themes, as the question passed the helpfulness floor
    assert _focused(ix, probes=[QUESTION])


def test_framing_lines_of_a_show_are_never_statements(ix):
    for s in ["Today I'm joined by my colleague Christina Warren.",
              "We have a great episode for you today with a really special guest, Bill Gates.",
              "KEVIN SCOTT: Thank you so much, Andrew, for coming in today.",
              "Welcome to Behind the Tech.",
              "But for today\u2019s show, we\u2019re focusing on the year in review.",
              "Today I\u2019m joined by my colleague Christina Warren.",
              "KEVIN SCOTT: Our guest today is one of my favorite science fiction writers, Charlie Stross.",
              "You can follow Behind the Tech on your favorite podcast platform.",
              "I think the technology behind it is so fascinating, which is why I\u2019m really, really excited "
              "about your conversation with today\u2019s guest, Chris Urmson.",
              "KEVIN SCOTT: I'm very pleased to introduce today's guest, Surya Ganguli.",
              "Today's guest is Andrew Ng.",
              "Today, our guest is Sam Altman.",
              "CHRISTINA WARREN: And today our guest is neuroscientist, Tom Daniel.",
              "KEVIN SCOTT: Our guests today are Jacob Collier and Ben Bloomberg.",
              # a header's fields
              "Guest: Joe Fletcher (bus driver and union representative, Ellery Coaches).",
              "Broadcast: 16 April 2026, Port Ellery Community Radio",
              "Guests: Councillor Marcus Bell (cabinet member for regeneration) and Fatima Yusuf (student)."]:
        assert framing(s), s
    # a speaker labelled in capitals as the guest speaks
    assert not framing("GUEST: I grew up in Porto and sold sardines at dawn.")
    for s in ["Strict privacy laws make engineers build data protection into products.",
              "The council agreed a tax rise of three percent after a long debate.",
              "Today, our customers expect privacy by default.",
              "The guest house on the campus hosts visiting researchers every summer.",
              "Our guesses today are far better than the models of ten years ago."]:
        assert not framing(s), s
    assert all("Christina Warren" not in s.text for t in _focused(ix) for s in t.statements)


def test_a_focused_theme_is_labelled_by_the_phrases_its_statements_share(ix):
    themes = _focused(ix)
    label = themes[0].topic
    # the phrase of several words its statements name that recurs, not the stored keyword bag, not a phrase of
    # an unquoted line, and no second phrase said in one unit only
    assert label == "privacy laws"
    assert "team" not in label and "cafeteria" not in label and "warm lunch" not in label


def test_theme_phrases_rank_by_class_tfidf_and_keep_only_stated_ones(ix):
    # "privacy laws" is in both units of the theme: first; a one-word phrase waits while two multi-word ones exist
    assert theme_phrases(ix, ["u1", "u2"])[0] == "privacy laws"
    assert "cafeteria" not in theme_phrases(ix, ["u1", "u2"])
    stated = theme_phrases(ix, ["u1", "u2"], stated=["Privacy laws slow down how fast consumer products reach users."])
    # "consumer products" is said in one unit only: no topic of the theme while a stated phrase recurs
    assert stated == ["privacy laws"]


def test_keyphrase_label_takes_the_phrase_nearest_the_theme_then_a_different_one():
    emb = FakeEmbedder()
    anchor = emb.encode(["flood defence along the river level gauges"])[0]
    got = keyphrase_label(["council tax", "flood defence", "flood defence wall", "river level"], anchor, emb)
    assert got[0] in ("flood defence", "river level") and len(got) == 2
    # never a phrase whose words a chosen one holds
    assert not ({"flood defence", "flood defence wall"} <= set(got))
    assert keyphrase_label([], anchor, emb) == [] and keyphrase_label(["a b"], None, emb) == []
    assert isinstance(np.asarray(anchor), np.ndarray)


def test_a_phrase_of_feelings_or_generic_words_is_no_label():
    from slmgraph.query.theme_labels import label_worthy

    assert label_worthy("privacy laws") and label_worthy("self-driving car program")
    for p in ["amazing set", "immense innovation", "greater concentration", "approach things", "other projects", "brand new things", "thatI'd", "the"]:
        assert not label_worthy(p), p


def test_a_later_theme_never_repeats_an_earlier_themes_label_phrase(ix):
    assert "privacy laws" not in theme_phrases(ix, ["u1", "u2"], taken=frozenset({"privacy law"}))


def test_a_statement_names_its_speaker_from_the_transcript_turn_it_is_in():
    from slmgraph.query.theme_model import speaker_of

    text = ("tail of an earlier turn here.\nKEVIN SCOTT: So what was it like? It was hard.\n"
            "SAM ALTMAN: Well, at YC the best thing I did was write advice. We did it.\nChristina Warren: Yes, we did.")
    assert speaker_of(text, "tail of an earlier turn here.") == ""
    assert speaker_of(text, "It was hard.") == "Kevin Scott"
    assert speaker_of(text, "SAM ALTMAN: Well, at YC the best thing I did was write advice.") == "Sam Altman"
    assert speaker_of(text, "We did it.") == "Sam Altman"
    assert speaker_of(text, "Yes, we did.") == "Christina Warren"
    assert speaker_of(text, "A sentence the unit does not hold.") == ""
    cut = "LIE STROSS: I wrote it in 2001.\nKEVIN SCOTT: Why then?\nCHARLIE STROSS: The money ran out."
    assert speaker_of(cut, "I wrote it in 2001.") == "Charlie Stross"


def test_a_focused_theme_reaches_the_documents_its_label_phrases_are_in(ix):
    t = _focused(ix)[0]
    # the community's members are mentioned in a and b; its label's phrases are in a and b too, never c
    assert t.doc_ids == ["a", "b"] and t.coverage["documents"] == 2


def test_the_overview_of_a_transcript_answer_says_who_speaks_on_which_theme(ix):
    from slmgraph.query.theme_model import Statement, Theme
    from slmgraph.query.theme_render import overview

    a = Theme(10, "privacy laws and data protection", {"documents": 2, "of": 3}, ["a", "b"], [],
              statements=[Statement("Privacy laws slow products down.", 1, "a", 1, 1, speaker="Sam Altman")])
    b = Theme(20, "robot arms", {"documents": 1, "of": 3}, ["c"], [],
              statements=[Statement("The arm picked the block.", 3, "c", 1, 1, speaker="Daniela Rus"),
                          Statement("It was the first try.", 3, "c", 1, 1, speaker="Kevin Scott")])
    text = overview([a, b], ix)
    assert "Speakers quoted: Sam Altman on privacy laws and data protection; Daniela Rus and Kevin Scott on robot arms." \
        in text
    a.statements[0].speaker = ""
    assert "Speakers quoted: Daniela Rus and Kevin Scott on robot arms." in overview([a, b], ix)


def test_a_sentence_cut_off_at_its_opening_is_no_statement(ix):
    from slmgraph.query.theme_model import _statement_ok

    assert not _statement_ok(":, uh, microprocessor and PC operating system revolution meant a lot to the world.", ix)
    assert _statement_ok("The microprocessor and PC operating system revolution meant a lot to the world.", ix)
    assert _statement_ok("5,000 circuit boards went through that manual rivet press every single week.", ix)


def test_a_focused_theme_names_only_the_names_and_concepts_its_statements_hold(ix):
    t = _focused(ix)[0]
    assert "Privacy Office" not in t.names  # a member of the community, named by none of its statements
    assert all(c.casefold() in (t.topic + " ".join(s.text for s in t.statements)).casefold() for c in t.concepts)


def test_a_question_about_change_over_time_keeps_no_statement_an_off_topic_probe_is_as_near(ix):
    emb = FakeEmbedder()
    q = "How have privacy laws shaping products evolved over the years?"

    def over_time(probes):
        return build_themes(ix, POOL, {10: 40.0, 20: 60.0}, emb.encode([q])[0], emb, temporal=True, question=q,
                            pool=POOL, probes=probes)

    one = "Strict privacy laws make engineers build data protection into products."
    assert one in [s.text for t in over_time(["How long should I boil pasta?"]) for s in t.statements]
    kept = [s.text for t in over_time([one]) for s in t.statements]
    assert kept and one not in kept
    # no statement passes: the probes do not apply (the question passed the helpfulness floor)
    assert over_time([q])


def test_a_focused_label_takes_a_second_phrase_only_when_it_is_as_near_as_the_first():
    emb = FakeEmbedder()
    anchor = emb.encode(["privacy laws and data protection rules"])[0]
    assert keyphrase_label(["privacy laws", "warm lunch"], anchor, emb) == ["privacy laws", "warm lunch"]
    assert keyphrase_label(["privacy laws", "warm lunch"], anchor, emb, floor=0.75) == ["privacy laws"]


def test_a_heading_a_bullet_or_a_one_off_label_is_no_speaker():
    from slmgraph.query.theme_model import speaker_of

    text = ("# Kestrel Bay Public Libraries: Annual Report 2023-24\n\nThree years ago the library faced a cut.\n\n"
            "## Figures\n\n- Visits: 655,000 (2021: 518,000).\n- Summer Reading Challenge: 3,900 children.\n"
            "- Staff: 84 paid staff and 150 active volunteers.\n\nWork on the roof began in May 2024.\n"
            "Kestrel Bay Libraries: Annual Report\nThe branches stayed open all year.\n"
            "Grace Mbeki: Volunteers support but do not replace paid staff.\nThe union agreed.")
    assert speaker_of(text, "Three years ago the library faced a cut.") == ""
    assert speaker_of(text, "Work on the roof began in May 2024.") == ""
    assert speaker_of(text, "The branches stayed open all year.") == ""
    assert speaker_of(text, "The union agreed.") == ""  # a label opening one line in a unit of no turns
    turns = "Grace Mbeki: Volunteers support paid staff.\nHelen Castellanos: Yes.\nGrace Mbeki: We agreed it."
    assert speaker_of(turns, "We agreed it.") == "Grace Mbeki"
    assert speaker_of(turns, "Yes.") == "Helen Castellanos"


def test_a_list_label_is_no_speaker():
    from slmgraph.query.theme_model import speaker_of

    text = ("Present: Oona MacRae, Agnes Munro and Callum Ferris.\nApologies: Priya Shah.\n"
            "Chair: The board agreed the fares for residents would stay at the 2021 level.\n"
            "Oona MacRae: The fuel bill fell by a third after the hybrid ferry arrived.\n"
            "Oona MacRae: The harbour café reopened in May.")
    assert speaker_of(text, "Oona MacRae, Agnes Munro and Callum Ferris.") == ""
    assert speaker_of(text, "Priya Shah.") == ""
    assert speaker_of(text, "The board agreed the fares for residents would stay at the 2021 level.") == ""
    assert speaker_of(text, "The fuel bill fell by a third after the hybrid ferry arrived.") == "Oona MacRae"



def test_a_focused_themes_count_is_of_the_documents_its_label_is_found_in_not_its_communitys(ix):
    # the community also mentions its member in a document that never names the label's phrase
    con = ix.store.con
    con.execute("INSERT INTO documents VALUES ('d', 'd.txt', 'd')")
    text = "The Privacy Office moved to the third floor last spring."
    con.execute("INSERT INTO text_units VALUES ('u4', 'd', 0, ?)", [text])
    con.execute("INSERT INTO embeddings VALUES ('text_unit', 'u4', ?)", [FakeEmbedder().encode([text])[0].tolist()])
    con.execute("INSERT INTO entity_text_units VALUES (1, 'u4')")
    themes = _focused(ThemeIndex(ix.store))
    assert themes[0].topic == "privacy laws"
    # "privacy laws" is in documents a and b: the count a reader can check, not the community's a, b and d
    assert themes[0].coverage["documents"] == 2 and themes[0].coverage["of"] == 4
