"""Noun-phrase concepts beside names (slmgraph.indexing.stages.concepts) and community topics and coverage (slmgraph.indexing.stages.topics)."""

from __future__ import annotations

import json
from importlib.resources import files

import numpy as np
import pytest

from slmgraph.indexing.stages.concepts import (
    MAX_UNIT_SHARE, MIN_UNITS, keep, lemmatizer_of, phrases, unit_concepts, unit_range,
)
from slmgraph.config.settings import Settings
from slmgraph.indexing.stages.ner import installed_pipeline, load_pipeline
from slmgraph.text.markdown import mask_markup
from slmgraph.indexing.pipeline import run_index
from slmgraph.store.db import Store
from slmgraph.indexing.stages.topics import class_tfidf, coverage_sentence, title_date

from conftest import FakeEmbedder, FakeModel

needs_spacy = pytest.mark.skipif(installed_pipeline() is None, reason="no spaCy English pipeline installed")


@pytest.fixture(scope="module")
def nlp():
    return load_pipeline(installed_pipeline())


def _phrases(nlp, text):
    masked = mask_markup(text)
    return [k for *_, k in phrases(nlp(masked), masked, lemmatizer_of(nlp))]


@needs_spacy
def test_phrases_are_lemmatised_noun_compounds_without_names_pronouns_or_generic_words(nlp):
    got = _phrases(nlp, "Harlow Council met on Tuesday to discuss the budget shortfall. She said the flood "
                        "defences and the long-term housing crisis were a thing of the past for other residents. "
                        "It was about 40 pounds.")
    assert "budget shortfall" in got
    assert "flood defence" in got  # the head noun lemmatised: "defences" and "defence" are one concept
    assert "long-term housing crisis" in got  # a hyphenated word stays whole
    assert "resident" in got and "other resident" not in got  # a generic adjective is trimmed
    assert not {"thing", "she", "it", "harlow council", "council", "tuesday", "pound"} & set(got)


@needs_spacy
def test_unit_concepts_link_concepts_to_each_other_and_to_names_within_a_sentence(nlp):
    text = "Harlow Council debated the budget shortfall and the library closures.\n\nThe flood defences held."
    masked = mask_markup(text)
    uc = unit_concepts(nlp(masked), masked, ["Harlow Council"], 200, lemmatizer_of(nlp))
    keys = [m["norm"] for m in uc.mentions]
    assert set(keys) == {"budget shortfall", "library closure", "flood defence"}
    pairs = {(r["concept"], r["other"], r["other_kind"]) for r in uc.links}
    assert ("budget shortfall", "library closure", "concept") in pairs
    assert ("budget shortfall", "harlow council", "name") in pairs
    assert not any("flood defence" in p[:2] for p in pairs)  # another sentence: no link
    assert next(m for m in uc.mentions if m["norm"] == "library closure")["name"] == "library closures"


def test_unit_range_and_keep_apply_the_documented_thresholds():
    assert MIN_UNITS == 2
    assert unit_range(10) == (2, 5)  # a small corpus: up to the floor of 5 text units
    assert unit_range(400) == (2, int(MAX_UNIT_SHARE * 400))
    df = {"one unit": 1, "two units": 2, "forty units": 40, "forty-one units": 41, "council": 3}
    assert keep(df, 400, names={"council"}) == {"two units", "forty units"}  # within the budget


def test_class_tfidf_is_bertopics_formula():
    counts = np.array([[2.0, 0.0, 2.0], [0.0, 3.0, 1.0]])
    w = class_tfidf(counts).toarray()
    avg = counts.sum(axis=1).mean()
    f = counts.sum(axis=0)
    want = counts / counts.sum(axis=1, keepdims=True) * np.log1p(avg / f)
    assert np.allclose(w, want)
    assert w[0, 0] > w[0, 2]  # a term of one class outweighs a term both classes use


def test_title_date_and_coverage_sentence():
    assert title_date("Q3 2021 earnings call") == "Q3 2021"
    assert title_date("FY16 results") == "FY16"
    assert title_date("council minutes 2024-03-01") == "2024-03-01"
    assert title_date("March 2019 meeting") == "March 2019"
    assert title_date("interview with Ada") is None
    titles = {"a": "Q1 2016 call", "b": "Q2 2017 call", "c": "Q4 2024 call"}
    assert coverage_sentence(["a", "c"], titles, 41) == \
        "in 2 of 41 documents, from \u201cQ1 2016 call\u201d to \u201cQ4 2024 call\u201d (Q1 2016 to Q4 2024)"
    assert coverage_sentence(["b"], titles, 3) == "in 1 of 3 documents, \u201cQ2 2017 call\u201d"
    assert coverage_sentence(["a", "b", "c"], titles, 3).startswith("in all 3 documents, from")
    assert coverage_sentence([], titles, 3) == ""


_COUNCIL = {
    "2021-03 council minutes.txt": """Harlow Council met to discuss the budget shortfall. The budget shortfall was caused by lower
council tax receipts and higher costs.

Mayor Reyes proposed library closures to close the budget shortfall. Residents opposed the library closures at
the meeting.

The council tax rise was debated at length. The budget shortfall remained the main item.
""",
    "2021-06 council minutes.txt": """The Environment Agency warned Harlow Council about the flood defences. The flood defences along
the river wall were damaged in the winter storms.

Engineers inspected the river wall and the drainage channels. The flood defences need repairs before autumn.

Residents asked who would pay for the flood defences and the drainage channels.
""",
    "2022-01 council minutes.txt": """Harlow Council returned to the budget shortfall. Mayor Reyes said the library closures had
saved money but the council tax rise was still needed.

A brass band played at the opening of the new town hall.

The budget shortfall is expected to shrink next year after the council tax rise.
""",
    "2022-05 council minutes.txt": """The Environment Agency funded new flood defences. The drainage channels were cleared and the
river wall was rebuilt.

The flood defences were tested during the spring storms and held.
""",
}


@pytest.fixture(scope="module")
def council_index(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("council")
    (tmp / "in").mkdir()
    for name, text in _COUNCIL.items():
        (tmp / "in" / name).write_text(text, encoding="utf-8")
    db = tmp / "c.duckdb"
    run_index(tmp / "in", db, Settings(resolution_threshold=None, min_community_size=2, chunk_size=48,
                                       chunk_overlap=0),
              progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    return db


@needs_spacy
def test_concepts_become_graph_nodes_kept_by_the_thresholds_and_never_merged_into_names(council_index):
    st = Store(council_index, read_only=True)
    try:
        con = st.con
        n_units = con.execute("SELECT count(*) FROM text_units").fetchone()[0]
        lo, hi = unit_range(n_units)
        concepts = con.execute("SELECT e.norm, e.name, e.type, c.n_units FROM concepts c JOIN entities e "
                               "USING (entity_id)").fetchall()
        by_norm = {n: (name, t, k) for n, name, t, k in concepts}
        assert {"budget shortfall", "flood defence", "council tax rise", "library closure"} <= set(by_norm)
        assert all(t == "concept" and lo <= k <= hi for _, t, k in by_norm.values())
        assert by_norm["flood defence"][0] == "flood defences"  # shown as written
        # a phrase of one text unit is no node
        assert "brass band" not in {r[0] for r in con.execute("SELECT norm FROM entities").fetchall()}
        # names stay names; no concept was merged into a name or a name into a concept
        names = dict(con.execute("SELECT norm, type FROM entities WHERE entity_id NOT IN "
                                 "(SELECT entity_id FROM concepts)").fetchall())
        assert "harlow council" in names and names["harlow council"] != "concept"
        logged = {n for r in con.execute("SELECT norm, into_norm FROM merge_log").fetchall() for n in r}
        assert not logged & set(by_norm)
        # concepts are linked to names and to each other, with weights (text units)
        ids = dict(con.execute("SELECT norm, entity_id FROM entities").fetchall())
        rels = {(s, t): w for s, t, w in con.execute("SELECT source_id, target_id, weight FROM relationships").fetchall()}
        pair = tuple(sorted((ids["budget shortfall"], ids["harlow council"])))
        assert rels.get(pair, 0) >= 2
        assert any(ids["flood defence"] in k and ids["drainage channel"] in k for k in rels)
        # communities group names and concepts
        kinds = con.execute("SELECT m.community_id, bool_or(m.entity_id IN (SELECT entity_id FROM concepts)), "
                            "bool_or(m.entity_id NOT IN (SELECT entity_id FROM concepts)) FROM community_members m "
                            "JOIN communities c USING (community_id) WHERE c.level = 0 GROUP BY 1").fetchall()
        assert any(has_c and has_n for _, has_c, has_n in kinds)
    finally:
        st.close()


@needs_spacy
def test_reports_carry_distinctive_topics_and_documents_in_corpus_order(council_index):
    st = Store(council_index, read_only=True)
    try:
        con = st.con
        order = [r[0] for r in con.execute("SELECT doc_id FROM documents ORDER BY added_at, path").fetchall()]
        titles = dict(con.execute("SELECT doc_id, title FROM documents").fetchall())
        reports = con.execute("SELECT r.community_id, r.title, r.topic, r.doc_ids, r.summary FROM community_reports r "
                              "JOIN communities c USING (community_id) WHERE c.level = 0").fetchall()
        assert reports and all(topic for _, _, topic, _, _ in reports)
        ids = dict(con.execute("SELECT norm, entity_id FROM entities").fetchall())
        comm = dict(con.execute("SELECT entity_id, community_id FROM community_members m JOIN communities c "
                                "USING (community_id) WHERE c.level = 0").fetchall())
        topic_of = {cid: topic for cid, _, topic, _, _ in reports}
        budget = topic_of[comm[ids["budget shortfall"]]]
        flood = topic_of[comm[ids["flood defence"]]]
        assert budget != flood
        assert {"budget shortfall", "council tax rise", "library closures", "Mayor Reyes"} & set(budget.split(", "))
        assert {"flood defences", "drainage channels", "river wall", "Environment Agency"} & set(flood.split(", "))
        assert not {"flood defences", "drainage channels", "river wall"} & set(budget.split(", "))
        for cid, title, topic, doc_ids, summary in reports:
            docs = json.loads(doc_ids)
            assert docs and docs == sorted(docs, key=order.index)  # corpus order
            assert title.casefold().startswith(topic.split(", ")[0].casefold())  # the title leads with the topic
            assert f"of {len(order)} documents" in summary or f"all {len(order)} documents" in summary
            assert titles[docs[0]] in summary
        flood_docs = json.loads(next(d for cid, _, t, d, _ in reports if t == flood))
        assert [titles[d] for d in flood_docs][-1] == "2022-05 council minutes"
    finally:
        st.close()


@needs_spacy
def test_demo_build_has_concept_nodes_and_every_report_a_topic(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "dulce.txt").write_text(files("slmgraph.samples").joinpath("dulce.txt").read_text("utf-8"),
                                               encoding="utf-8")
    run_index(tmp_path / "in", tmp_path / "d.duckdb", Settings(resolution_threshold=None),
              progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    st = Store(tmp_path / "d.duckdb", read_only=True)
    try:
        n = st.con.execute("SELECT count(*) FROM concepts c JOIN entities e USING (entity_id) "
                           "WHERE e.type = 'concept'").fetchone()[0]
        assert n >= 5
        topics = st.con.execute("SELECT topic, doc_ids FROM community_reports").fetchall()
        assert topics and all(t and t.strip() and json.loads(d) for t, d in topics)
    finally:
        st.close()


@needs_spacy
def test_no_concepts_builds_names_only(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text(_COUNCIL["2021-03 council minutes.txt"], encoding="utf-8")
    run_index(tmp_path / "in", tmp_path / "d.duckdb", Settings(resolution_threshold=None, concepts=False,
                                                               chunk_size=48, chunk_overlap=0),
              progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    st = Store(tmp_path / "d.duckdb", read_only=True)
    try:
        assert st.con.execute("SELECT count(*) FROM concepts").fetchone()[0] == 0
        assert st.con.execute("SELECT count(*) FROM concept_mentions").fetchone()[0] == 0
        assert st.con.execute("SELECT count(*) FROM entities WHERE norm = 'budget shortfall'").fetchone()[0] == 0
    finally:
        st.close()


def test_gold_prediction_scores_names_apart_from_concepts(tmp_path):
    from slmgraph.eval.gold import read_prediction

    store = Store(tmp_path / "x.duckdb", create=True)
    con = store.con
    con.execute("INSERT INTO entities VALUES (1, 'alice smith', 'Alice Smith', 'person', '', 3, 2), "
                "(2, 'paris', 'Paris', 'location', '', 1, 2), (3, 'budget shortfall', 'budget shortfall', "
                "'concept', '', 2, 2), (4, 'symphony', 'Symphony', 'concept', '', 1, 0)")
    con.execute("INSERT INTO concepts VALUES (3, 2)")  # a noun-phrase concept; 4 is a named work typed concept
    con.execute("INSERT INTO relationships VALUES (1, 1, 2, '', 1.0, 5.0, 4), (2, 1, 3, '', 2.0, 5.0, 4), "
                "(3, 2, 3, '', 1.0, 5.0, 4)")
    pred = read_prediction(store)
    store.close()
    assert set(pred.aliases) == {1, 2, 4}
    assert pred.relationships == [(1, 2)]
    assert 3 not in pred.types and pred.types[4] == "concept"


def test_keep_takes_the_most_frequent_concepts_up_to_the_budget():
    from slmgraph.indexing.stages.concepts import concept_budget

    n_units = 100
    budget = concept_budget(n_units)
    df = {f"phrase {i:03d}": 2 + i % 8 for i in range(budget + 30)}
    kept = keep(df, n_units)
    assert len(kept) == budget
    assert min(df[k] for k in kept) >= max(df[k] for k in set(df) - kept)  # the most frequent first


@needs_spacy
def test_a_generic_noun_with_adjectives_is_no_concept(nlp):
    got = _phrases(nlp, "It was a complicated thing and a difficult bit, but the price thing mattered.")
    assert not {"complicated thing", "difficult bit", "thing", "bit"} & set(got)
    assert "price thing" in got  # a noun before it makes a compound


@needs_spacy
def test_the_rule_lemmatizer_reads_its_word_lists_as_sets_with_the_lemmas_of_lists(nlp):
    """The pipeline's rule lemmatizer tests membership in its word lists once per suffix rule of an unseen
    word: they are sets, and the lemmas are those the lists give."""
    lem = lemmatizer_of(nlp)
    table = lem.lookups.get_table("lemma_index")
    assert table and all(isinstance(words, frozenset) for words in table.values())
    doc = nlp("The cities' flood defences, analyses of the data and the crises of the geese, mice and the children's "
              "toys were studied by researchers who were running the best studies of leaves and wolves.")
    words = [t for t in doc if t.pos_ in ("NOUN", "VERB", "ADJ", "ADV")]
    sets = dict(table.items())
    lem.cache.clear()
    with_sets = [lem.rule_lemmatize(t) for t in words]
    try:
        for key, value in sets.items():
            table[key] = sorted(value)
        lem.cache.clear()
        with_lists = [lem.rule_lemmatize(t) for t in words]
    finally:
        for key, value in sets.items():
            table[key] = value
        lem.cache.clear()
    assert with_sets == with_lists
    assert ["city"] in with_sets and ["defence"] in with_sets
