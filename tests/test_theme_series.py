"""Documents that are parts of works (named and counted as works), coverage that counts what a theme
quotes, and figure questions answered by the sentences stating the figures."""

from __future__ import annotations

import duckdb
import pytest
from conftest import FakeEmbedder, theme_index

from slmgraph.query.documents import corpus_documents, coverage, coverage_text, part_of, series_parts
from slmgraph.query.theme_model import (Statement, Theme, ThemeIndex, has_figure, names_asked, question_words,
                                        topic_words)
from slmgraph.query.theme_render import overview, reach_text


@pytest.mark.parametrize("name, want", [
    ("EP-03_ Behind_the_Tech_Kevin Scott_Podcast_with_Andrew Ng-part15",
     ("EP-03_ Behind_the_Tech_Kevin Scott_Podcast_with_Andrew Ng", "part", 15)),
    ("field_notes_part_3", ("field_notes", "part", 3)),
    ("Moby Dick ch 4", ("Moby Dick", "chapter", 4)),
    ("Moby Dick chapter 12", ("Moby Dick", "chapter", 12)),
    ("budget notes (2)", ("budget notes", "part", 2)),
    ("manual-section2", ("manual", "section", 2)),
    ("search4", None),
    ("01_annual_report_2019", None),
    ("minutes_2024_06", None),
])
def test_a_trailing_part_number_is_read_in_several_naming_styles(name, want):
    assert part_of(name) == want


def test_series_are_found_only_when_most_documents_are_parts():
    got = series_parts({"a1": "Talk_with_Ada-part1", "a2": "Talk_with_Ada-part2", "b1": "Talk_with_Bo-part1",
                        "b2": "Talk_with_Bo-part10", "x": "preface"})
    assert got["a2"] == ("Talk with Ada", "part", 2) and got["b2"] == ("Talk with Bo", "part", 10) and "x" not in got
    # a corpus of separate documents (one stray "(2)") keeps its documents
    assert series_parts({"a": "minutes 2024-01", "b": "minutes 2024-02", "c": "letter (2)", "d": "report"}) == {}
    assert series_parts({"a": "essay part 1", "b": "report", "c": "letter", "d": "memo"}) == {}


def _store(paths):
    con = duckdb.connect()
    con.execute("CREATE TABLE documents (doc_id VARCHAR, path VARCHAR, title VARCHAR)")
    con.execute("CREATE TABLE text_units (chunk_id VARCHAR, doc_id VARCHAR, ord INT, text VARCHAR)")
    for i, p in enumerate(paths):
        title = p[:-4].rsplit("-part", 1)[0]
        con.execute("INSERT INTO documents VALUES (?, ?, ?)", [f"d{i}", p, title])
        con.execute("INSERT INTO text_units VALUES (?, ?, 0, ?)", [f"u{i}", f"d{i}", "Some words of this part."])

    class S:
        pass
    s = S()
    s.con = con
    return s


def test_parts_of_works_are_named_by_work_and_part_and_counted_as_works():
    paths = [f"EP-03_ Behind_the_Tech_with Andrew Ng-part{i}.txt" for i in (1, 2, 15)] + \
            [f"EP-13_ Behind_the_Tech_with_Sam-Altman-part{i}.txt" for i in (1, 2)] + ["Ep-52_Bill_Gates-part1.txt",
                                                                                      "Ep-52_Bill_Gates-part2.txt"]
    docs = corpus_documents(_store(paths))
    names = [d.name for d in docs]
    assert "EP-03 Behind the Tech with Andrew Ng, part 15" in names
    assert "EP-13 Behind the Tech with Sam-Altman, part 2" in names
    assert {d.work for d in docs} == {"EP-03 Behind the Tech with Andrew Ng", "EP-13 Behind the Tech with Sam-Altman",
                                      "Ep-52 Bill Gates"}
    by_name = {d.name: d.doc_id for d in docs}
    cov = coverage([by_name["EP-03 Behind the Tech with Andrew Ng, part 1"],
                    by_name["EP-03 Behind the Tech with Andrew Ng, part 15"],
                    by_name["Ep-52 Bill Gates, part 2"]], docs)
    assert cov["works"] == 2 and cov["works_of"] == 3 and cov["documents"] == 3 and cov["of"] == 7
    assert reach_text(cov) == "2 of 3 works (67 %; 3 of 7 parts)"
    assert reach_text(cov, False, False) == "2 of 3 works, 3 of 7 parts"
    assert coverage_text(cov).startswith("in 2 of 3 works (3 of 7 parts), ")


def test_a_corpus_with_no_series_keeps_its_document_names_and_counts():
    paths = ["01_annual_report_2019.txt", "02_board_minutes_2019-09.txt", "letter (2).txt", "notes.txt"]
    docs = corpus_documents(_store(paths))
    assert sorted(d.name for d in docs) == sorted(p[:-4] for p in paths) and not any(d.work for d in docs)
    cov = coverage([docs[0].doc_id], docs)
    assert "works" not in cov and reach_text(cov) == "1 of 4 documents"


def test_a_themes_coverage_counts_every_document_it_quotes():
    from slmgraph.query.themes import cover_quoted

    paths = [f"doc{i}.txt" for i in range(6)]
    ix = ThemeIndex(_store(paths))
    ids = [d.doc_id for d in ix.docs]
    t = Theme(1, "science fiction stories", coverage(ids[:1], ix.docs), ids[:1], [])
    t.statements = [Statement(f"Sentence {i} of the theme here.", i, ids[i], 1, 1) for i in (1, 2, 3)]
    cover_quoted([t], ix)
    assert t.coverage["documents"] == 4 and set(t.doc_ids) == set(ids[:4])
    assert "(in 4 of 6 documents)" in overview([t], ix)


def test_a_count_is_a_figure_and_a_word_every_document_holds_names_no_topic():
    assert has_figure("The cooperative carried 148,000 passengers.") == 2
    assert has_figure("The barrier took 7 months.") == 1

    class U:
        def __init__(self, doc_id, text):
            self.doc_id, self.text = doc_id, text
    units = [U("a", "The cooperative carried passengers."), U("b", "The cooperative met."), U("c", "The cooperative.")]
    assert topic_words("How many passengers did the cooperative carry each year?", units) == {"passenger", "carry"}


def test_a_number_word_is_no_topic_word_of_a_question_but_a_year_is():
    # As in route.corpus_wide_phrase: "three", "twelve", "first" count or order, they name no topic.
    assert question_words("What were the main themes over the last three years?") == {"main", "them"}
    assert question_words("What did the twelve newsletters say about the first ferry?") == {"newsletter", "ferry"}
    assert "2019" in question_words("What did the newsletters say about 2019?")
    asked = question_words("How did the harbour change over three decades?")
    assert not names_asked("Three of them met twice.", asked)
    assert names_asked("The harbour was dredged.", asked)


FIG_UNITS = {
    "u1": ("a", "How many passengers did the ferry carry, the harbour master asked again."),
    "u2": ("b", "The ferry passengers in 2020 were 61,000 on the short crossing to the island."),
    "u3": ("c", "The robot arm picked up the red block on the first try."),
}


def _fig_ix(units, members, topics):
    """A ThemeIndex over ``units`` (chunk -> (doc, text)) with communities ``members`` (cid -> [chunk])."""
    emb = FakeEmbedder()
    ix = theme_index([(c, d, 0, text) for c, (d, text) in units.items()], embedder=emb,
                     entities=[(cid, f"Office {cid}") for cid in members], members=[(cid, cid) for cid in members],
                     entity_units=[(cid, c) for cid, chunks in members.items() for c in chunks],
                     reports=[(cid, topics[cid]) for cid in members])
    pool = [{"community_id": cid, "entities": [f"Office {cid}"], "summary": ""} for cid in members]
    return ix, pool, emb


def test_a_figures_question_quotes_the_sentence_stating_the_figure_even_when_phrased_far_from_it():
    from slmgraph.query.themes import build_themes

    ix, pool, emb = _fig_ix(FIG_UNITS, {10: ["u1", "u2"], 20: ["u3"]}, {10: "ferry, passengers", 20: "robot, block"})
    q = "How many passengers did the ferry carry?"
    themes = build_themes(ix, pool, {10: 60.0, 20: 40.0}, emb.encode([q])[0], emb, question=q, pool=pool,
                          figures=True)
    quoted = [st.text for t in themes for st in t.statements]
    assert "The ferry passengers in 2020 were 61,000 on the short crossing to the island." in quoted
    assert not any("robot" in x for x in quoted)


TIMELINE_UNITS = {
    "u1": ("2019-report", "The ferry carried 148,000 passengers in 2018, the annual report said."),
    "u2": ("2021-minutes", "Ferry passengers fell to 61,000 in 2020 during the lockdown."),
    "u3": ("2025-report", "The ferry carried 176,000 passengers in 2024, a record year."),
    "u4": ("2022-notes", "The robot arm picked up the red block on the first try."),
}


def test_a_change_over_time_question_gets_one_timeline_of_its_figures_in_date_order():
    from slmgraph.query.themes import build_themes

    ix, pool, emb = _fig_ix(TIMELINE_UNITS, {10: ["u1", "u3"], 20: ["u2"], 30: ["u4"]},
                            {10: "ferry, report", 20: "lockdown, minutes", 30: "robot, block"})
    q = "How have ferry passenger numbers changed over the years?"
    themes = build_themes(ix, pool, {10: 60.0, 20: 50.0, 30: 40.0}, emb.encode([q])[0], emb, question=q, pool=pool,
                          figures=True, temporal=True)
    # the series is not split by the communities its sentences fall in
    assert len(themes) == 1
    years = [next(y for y in ("2018", "2020", "2024") if y in st.text) for st in themes[0].statements]
    assert years == ["2018", "2020", "2024"]


def test_an_overview_of_parts_counts_works_and_tells_apart_themes_every_work_discusses():
    paths = [f"Talk_with_Ada-part{i}.txt" for i in (1, 2, 3)] + [f"Talk_with_Bo-part{i}.txt" for i in (1, 2)]
    ix = ThemeIndex(_store(paths))
    ids = [d.doc_id for d in ix.docs]
    wide = Theme(1, "robots", coverage(ids, ix.docs), ids, [])
    narrow = Theme(2, "privacy", coverage(ids[:2], ix.docs), ids[:2], [])
    text = overview([wide, narrow], ix, wide=True)
    assert text.startswith("These 2 works (5 parts) have \u201cTalk\u201d in the titles or headings of both. "
                           "Across the 2 works (5 parts), ")
    assert "robots (in all 2 works)" in text and "privacy (in 1 work, 2 parts)" in text


def test_a_work_keeps_the_bracket_its_stem_closes():
    # a browser's copy marker "(1)" is part of the work's name, not cut to "(1"
    assert part_of("EP-40_Behind_the_Tech_Transcript (1)-part16") == ("EP-40_Behind_the_Tech_Transcript (1)", "part", 16)
    assert part_of("notes [draft]_part2") == ("notes [draft]", "part", 2)
    assert part_of("budget notes (2)") == ("budget notes", "part", 2)


def test_how_far_into_its_work_a_unit_is():
    units = [("a1", "Talk_with_Ada-part1", 0, "ADA: One."), ("a2", "Talk_with_Ada-part2", 0, "ADA: Two."),
             ("a3", "Talk_with_Ada-part2", 1, "ADA: Three."), ("b1", "Talk_with_Bo-part1", 0, "BO: One."),
             ("b2", "Talk_with_Bo-part2", 0, "BO: Two."), ("n", "notes", 0, "Plain."), ("n2", "notes", 1, "More.")]
    ix = theme_index(units)
    # part 1 of 2 is the work's first half; part 2's two units its third and fourth quarters
    assert ix.point_in_work("Talk_with_Ada-part1", 1) == 0.25
    assert ix.point_in_work("Talk_with_Ada-part2", 1) == 0.625 and ix.point_in_work("Talk_with_Ada-part2", 2) == 0.875
    # a document that is no part is its own work
    assert ix.point_in_work("notes", 2) == 0.75 and ix.point_in_work("nowhere", 1) == 0.5


def test_a_sentence_ahead_of_a_units_first_label_is_said_by_the_speaker_the_unit_before_leaves_off():
    units = [("a1", "talk", 0, "KEVIN SCOTT: What do you build?\nDANIELA RUS: I build soft robots for the sea."),
             ("a2", "talk", 1, "They learn to swim by doing it.\nKEVIN SCOTT: How long does that take?"),
             ("b1", "other", 0, "They opened the meeting late.\nADA: Noted.")]
    ix = theme_index(units)
    by = {u.chunk_id: u for u in ix.all_units()}
    second, other = by["a2"], by["b1"]
    assert ix.speaker(second, "They learn to swim by doing it.") == "Daniela Rus"
    assert ix.speaker(second, "How long does that take?") == "Kevin Scott"
    # the first unit of a work has no unit before it
    assert ix.speaker(other, "They opened the meeting late.") == ""


def test_a_speaker_label_may_hold_accented_capitals():
    from slmgraph.query.theme_model import speaker_of
    from slmgraph.query.theme_works import _LABEL

    text = "JUNE HALLORAN: Welcome back.\nTOMÁS FERREIRA: I grew up in Porto.\nŁUKASZ NOWAK: So did I."
    assert speaker_of(text, "I grew up in Porto.") == "Tomás Ferreira"
    assert _LABEL.findall(text) == ["JUNE HALLORAN", "TOMÁS FERREIRA", "ŁUKASZ NOWAK"]
