"""What may be an answer's point: no heading or list opener, one statement of one document, figures with their
units in a timeline's lead, and no concept from a text unit that is no prose."""

from __future__ import annotations

from types import SimpleNamespace

import duckdb

from conftest import FakeEmbedder

from slmgraph.query.extractive import prose_sentences, sentence_points

_MINUTES = """Board of Trustees minutes, 15 March 2021

1. Budget. Treasurer Daniel Whitlock reported that the city has cut the library grant by 12 percent.

2. Digital inclusion. Helen Castellanos presented figures on public computer sessions.

3. Budget 2022-23. The city froze the grant.

4. Central Library roof. The roof of the Central Library leaked again in February.

5. Work stopped. The builders left the site in March.
"""

_PLAN = """# Digital Inclusion Plan

The plan has three parts:

- **Laptop and hotspot lending.** 150 laptops and 100 wifi hotspots, lent for three weeks at a time.
- **Digital skills sessions.** Weekly one-to-one help with email and online forms.
"""


def test_headings_run_in_headings_and_list_openers_are_no_prose_sentences():
    got = prose_sentences(_MINUTES) + prose_sentences(_PLAN)
    for heading in ("Budget.", "Digital inclusion.", "Budget 2022-23.",
                    "Central Library roof.", "The plan has three parts:",
                    "Laptop and hotspot lending.", "Digital skills sessions."):
        assert heading not in got
    # the statements after them stay, and a short sentence with a past tense is a statement, not a heading
    assert "Treasurer Daniel Whitlock reported that the city has cut the library grant by 12 percent." in got
    assert "150 laptops and 100 wifi hotspots, lent for three weeks at a time." in got
    assert "Work stopped." in got
    # a document's title line is no point of a quoted passage
    title = "City of Kestrel Bay Finance Committee, public hearing on the library budget, 9 March 2023"
    emb = FakeEmbedder()
    pts = sentence_points([(7, f"{title}\n\nCouncillor Peter Brandt said the city faces a deficit.")],
                          emb.encode(["library budget hearing"])[0], emb)
    assert [p.text for p in pts] == ["Councillor Peter Brandt said the city faces a deficit."]


def test_two_documents_near_identical_sentences_about_different_names_are_two_points():
    a = "Report of 4 April 2024: Trustee Aisha Rahman met José Pérez of Seaview Bakery, which gave 500 dollars."
    b = "Report of 4 April 2024: Trustee Aisha Rahman met José Pérez of Harbour Bakery, which gave 500 dollars."
    emb = FakeEmbedder()
    pts = sentence_points([(1, a), (2, b)], emb.encode(["Which bakery gave money?"])[0], emb)
    assert sorted(p.ids for p in pts) == [[1], [2]]
    from slmgraph.query.extractive import same_statement

    assert not same_statement(a, b)
    assert same_statement(a, "  " + a)  # the overlap of two text units repeats a sentence: one statement


def _ix(docs):
    ds = [SimpleNamespace(doc_id=d, pos=i + 1, name=name, date=date, work=None) for i, (d, name, date) in
          enumerate(docs)]
    return SimpleNamespace(docs=ds, doc_by_id={d.doc_id: d for d in ds}, store=None)


def test_a_timeline_lead_quotes_figures_with_their_units_and_never_glues_a_year_range():
    from slmgraph.query.theme_lead import stated_figures, timeline_lead
    from slmgraph.query.theme_model import Statement, Theme

    first = ("Treasurer Daniel Whitlock reported that the City of Kestrel Bay has cut the library grant for "
             "2021-22 by 12 percent, from 4.1 million dollars to 3.6 million dollars.")
    assert stated_figures(first) == ["12 percent", "4.1 million dollars", "3.6 million dollars"]
    assert stated_figures("A second leak on 3 March damaged 1,200 volumes at 8.40 pm.") == ["1,200 volumes"]
    ix = _ix([("d1", "01_minutes", "15 March 2021"), ("d2", "05_newsletter", "July 2022"),
              ("d3", "09_minutes", "22 January 2024")])
    sts = [Statement(first, 1, "d1", 0, 1),
           Statement("Families without home internet were hit hardest by the shorter hours.", 2, "d1", 1, 2),
           Statement("The Friends have raised 110,000 dollars through the appeal.", 9, "d3", 0, 1),
           Statement("The board thanked the volunteers for their work on the appeal.", 10, "d3", 1, 2)]
    lead = timeline_lead([Theme(1, "library grant", {}, ["d1", "d3"], [], statements=sts)], ix)
    assert "states 12 percent, 4.1 million dollars and 3.6 million dollars" in lead
    assert "110,000 dollars" in lead and "2021, 22" not in lead
    # the latest statement quoted is the latest one that states a figure, not the thanks after it
    assert "volunteers" not in lead


def test_a_text_unit_that_is_no_prose_gives_no_concept_node():
    from slmgraph.indexing.stages.concepts import concept_graph
    from slmgraph.indexing.stages.graph import READING_ORDER

    con = duckdb.connect()
    con.execute("CREATE TABLE documents (doc_id VARCHAR, path VARCHAR, added_at INT)")
    con.execute("CREATE TABLE text_units (chunk_id VARCHAR, doc_id VARCHAR, ord INT, no_prose BOOLEAN)")
    con.execute("CREATE TABLE concept_mentions (chunk_id VARCHAR, norm VARCHAR, name VARCHAR, description VARCHAR)")
    con.execute("CREATE TABLE concept_links (chunk_id VARCHAR, concept_norm VARCHAR, other_norm VARCHAR, "
                "other_kind VARCHAR, description VARCHAR, sentences INT)")
    units = [("p1", "prose", False), ("p2", "prose", False), ("p3", "prose", False),
             ("j1", "junk", True), ("j2", "junk", True), ("j3", "junk", True)]
    con.execute("INSERT INTO documents VALUES ('prose', 'a.txt', 1), ('junk', 'b.txt', 2)")
    for i, (cid, doc, junk) in enumerate(units):
        con.execute("INSERT INTO text_units VALUES (?, ?, ?, ?)", [cid, doc, i, junk])
    for cid in ("p1", "p2"):
        con.execute("INSERT INTO concept_mentions VALUES (?, 'budget shortfall', 'budget shortfall', 'x')", [cid])
    for cid in ("j1", "j2", "j3"):
        con.execute("INSERT INTO concept_mentions VALUES (?, 'checksum value', 'checksum value', 'y')", [cid])
        con.execute("INSERT INTO concept_mentions VALUES (?, 'header field', 'header field', 'y')", [cid])
        con.execute("INSERT INTO concept_links VALUES (?, 'checksum value', 'header field', 'concept', 'y', 1)", [cid])
    got = concept_graph(con, {}, READING_ORDER)
    assert set(got.units) == {"budget shortfall"}
    assert not got.edges


def test_a_ts_answer_about_someone_reads_the_units_naming_them_across_documents():
    from slmgraph.query.engines.global_search import naming_spread
    from slmgraph.query.scoring import Scored

    ranked = [Scored(11, 25.8, 0.5), Scored(7, 3.9, 0.1), Scored(1, 2.0, 0.1), Scored(6, 1.0, 0.1),
              Scored(8, 0.5, 0.0), Scored(2, 9.0, 0.2)]
    doc_of = {11: "profile", 7: "hearing", 1: "minutes21", 6: "minutes23", 8: "minutes23", 2: "letter"}
    # unit 11, the only one over the floor, is about another person; units 7, 1, 6 and 8 name the chair
    got = naming_spread([ranked[0]], ranked, {7, 1, 6, 8, 11}, doc_of, k=4)
    assert [sc.id for sc in got] == [11, 7, 1, 6]  # a unit that names no one asked about (2) is not added
    got = naming_spread([ranked[0]], ranked, {7, 6, 8}, doc_of, k=4)
    assert [sc.id for sc in got] == [11, 7, 6, 8]  # 8 comes last: its document is already read
