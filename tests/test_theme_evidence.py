"""Focused global answers read enough evidence and spread over it: statements chosen over the whole evidence
by maximal marginal relevance across documents and speakers, a wider evidence pool when few sentences pass,
questions quoted when the user asks about questions, no thin or mid-clause statements, one-document themes
only on the question."""

from __future__ import annotations

import duckdb
import pytest
from conftest import FakeEmbedder

from slmgraph.query import themes as th
from slmgraph.query.themes import ThemeIndex, build_themes, framing


class _Store:
    def has_unit_numbers(self):
        return False


def _index(units: dict, members: dict) -> ThemeIndex:
    """An index of ``units`` (chunk id -> (document, text)); ``members``: community id -> (entity name, chunk ids)."""
    con = duckdb.connect()
    con.execute("CREATE TABLE documents (doc_id VARCHAR, path VARCHAR, title VARCHAR)")
    con.execute("CREATE TABLE text_units (chunk_id VARCHAR, doc_id VARCHAR, ord INT, text VARCHAR)")
    con.execute("CREATE TABLE entities (entity_id INT, name VARCHAR)")
    con.execute("CREATE TABLE concepts (entity_id INT)")
    con.execute("CREATE TABLE community_members (community_id INT, entity_id INT)")
    con.execute("CREATE TABLE entity_text_units (entity_id INT, chunk_id VARCHAR)")
    con.execute("CREATE TABLE community_reports (community_id INT, topic VARCHAR)")
    con.execute("CREATE TABLE embeddings (kind VARCHAR, item_id VARCHAR, vector FLOAT[])")
    con.execute("CREATE TABLE concept_mentions (chunk_id VARCHAR, norm VARCHAR, name VARCHAR, description VARCHAR)")
    emb = FakeEmbedder()
    for d in sorted({d for d, _ in units.values()}):
        con.execute("INSERT INTO documents VALUES (?, ?, ?)", [d, f"{d}.txt", d])
    for c, (d, text) in units.items():
        con.execute("INSERT INTO text_units VALUES (?, ?, 0, ?)", [c, d, text])
        con.execute("INSERT INTO embeddings VALUES ('text_unit', ?, ?)", [c, emb.encode([text])[0].tolist()])
    for e, (cid, (name, chunks)) in enumerate(members.items(), start=1):
        con.execute("INSERT INTO entities VALUES (?, ?)", [e, name])
        con.execute("INSERT INTO community_members VALUES (?, ?)", [cid, e])
        con.execute("INSERT INTO community_reports VALUES (?, 'misc')", [cid])
        for c in chunks:
            con.execute("INSERT INTO entity_text_units VALUES (?, ?)", [e, c])
    store = _Store()
    store.con = con
    return ThemeIndex(store)


def _answer(ix, members, question, **kw):
    emb = FakeEmbedder()
    pool = [{"community_id": cid, "entities": [name], "summary": ""} for cid, (name, _) in members.items()]
    return build_themes(ix, pool, {cid: 40.0 for cid in members}, emb.encode([question])[0], emb,
                        question=question, pool=pool, **kw)


def _quoted(themes):
    return [s.text for t in themes for s in t.statements]


def test_statements_spread_over_documents_instead_of_repeating_the_nearest_one():
    units = {"u1": ("a", "Privacy laws shape consumer products such as health records and data rules. "
                         "Privacy laws shape consumer products such as location tracking and ad targeting. "
                         "Privacy laws shape consumer products such as design audits and user reviews."),
             "u2": ("b", "Engineers say privacy laws shape consumer products like health records and new devices.")}
    members = {10: ("Privacy Office", ["u1", "u2"])}
    got = _quoted(_answer(_index(units, members), members, "How do privacy laws shape consumer products?"))
    # the second document's statement is quoted although the first holds three nearer ones
    assert "Engineers say privacy laws shape consumer products like health records and new devices." in got


def test_too_little_evidence_widens_the_pool_of_text_units(monkeypatch):
    units = {"u1": ("a", "Privacy laws shape consumer products through strict data protection rules."),
             "u2": ("b", "Privacy laws push engineers to build data protection into consumer products.")}
    members = {10: ("Privacy Office", ["u1", "u2"])}
    ix = _index(units, members)
    monkeypatch.setattr(th, "EVIDENCE_UNITS", 1)
    monkeypatch.setattr(th, "MIN_EVIDENCE", 2, raising=False)
    monkeypatch.setattr(th, "WIDE_EVIDENCE_UNITS", 2, raising=False)
    got = _quoted(_answer(ix, members, "How do privacy laws shape consumer products?"))
    assert len(got) == 2 and {s.split()[2] for s in got} == {"shape", "push"}


def test_a_question_is_quoted_as_a_statement_only_when_the_user_asks_about_questions():
    q = "KEVIN SCOTT: What first got you interested in building robots and machine learning systems?"
    units = {"u1": ("a", q + "\nKEVIN SCOTT: Robots and machine learning systems need careful engineering work.")}
    members = {10: ("Robot Lab", ["u1"])}
    ix = _index(units, members)
    # what is asked about comes first
    assert _quoted(_answer(ix, members, "What questions does the host ask about robots and machine learning?"))[0] == q
    assert q not in _quoted(_answer(ix, members, "What do guests say about robots and machine learning?"))


@pytest.mark.parametrize("bad", ["I think privacy laws do shape the consumer products.",
                                 "But privacy laws shape consumer products in many small ways.",
                                 "Um, and privacy laws shape consumer products in many small ways."])
def test_thin_statements_and_ones_opening_mid_clause_are_never_quoted(bad):
    from slmgraph.query.themes import focused_themes

    # the line is the nearest the question: alone on its subject, with a sentence off it
    units = {"u1": ("a", bad + " The robot arm picked up the red block on its first try.")}
    members = {10: ("Privacy Office", ["u1"])}
    emb = FakeEmbedder()
    pool = [{"community_id": 10, "entities": ["Privacy Office"], "summary": ""}]
    got = _quoted(focused_themes(_index(units, members), pool, {10: 40.0},
                                 emb.encode(["How do privacy laws shape consumer products?"])[0], emb))
    assert got and bad not in got


def test_a_theme_from_one_document_is_kept_only_when_its_statements_are_clearly_on_the_question():
    units = {"u1": ("a", "Privacy laws shape consumer products through strict data rules every year."),
             "u2": ("b", "Privacy laws push engineers to build data protection into consumer products."),
             "u3": ("c", "Robot arms build consumer products under privacy safety laws.")}
    members = {10: ("Privacy Office", ["u1", "u2"]), 20: ("Robot Lab", ["u3"])}
    themes = _answer(_index(units, members), members, "How do privacy laws shape consumer products?")
    # the robot sentence is within the evidence margin but not clearly on the question, and only one document says it
    assert [t.report for t in themes] == [10]


def test_a_host_telling_listeners_what_is_worth_sharing_frames_the_show():
    assert framing("I've learned so much from my conversations that I've had with Bill over these past months "
                   "that I thought it might be a great thing to share.")
    assert not framing("Sharing data between hospitals is a great thing for patients with rare diseases.")


@pytest.mark.parametrize("s,n", [("I think it's sort of hard to tell.", 2),
                                 ("Privacy laws make engineers build data protection into products.", 7)])
def test_content_words_leave_out_stop_words_and_hedges(s, n):
    assert th.content_words(s) == n
