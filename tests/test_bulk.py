"""Column-wise inserts (slmgraph.store.bulk) and the write paths built on them: extraction records of new and
redone text units, reports held and written together, token counts shared by an ingest's documents."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

from slmgraph.indexing.stages.concepts import UnitConcepts
from slmgraph.indexing.stages.extract import clear_unrecorded, store_extraction
from slmgraph.indexing.stages.extract_methods import Extraction
from slmgraph.indexing.stages.ingest import ingest
from slmgraph.indexing.stages.ingest_chunk import TokenCounts, make_text_units
from slmgraph.indexing.stages.ingest_read import Document
from slmgraph.indexing.stages.report_data import Report
from slmgraph.indexing.stages.report_store import WRITE_STEP, ReportWriter
from slmgraph.store.bulk import delete_keys, insert_columns, insert_rows
from slmgraph.store.db import Store


@pytest.fixture
def con():
    c = duckdb.connect()
    c.execute("CREATE TABLE t (a VARCHAR, b INTEGER, c DOUBLE, d VARCHAR)")
    c.execute("CREATE TABLE v (kind VARCHAR, item_id VARCHAR, vector FLOAT[], note VARCHAR, PRIMARY KEY (kind, item_id))")
    yield c
    c.close()


class NoStatements:
    """A connection that fails on any statement."""

    def execute(self, *a, **k):
        raise AssertionError("a statement was executed")

    register = unregister = execute


def test_empty_rows_execute_nothing():
    assert insert_rows(NoStatements(), "t", ("a", "b"), []) == 0
    assert insert_columns(NoStatements(), "t", {"a": [], "b": np.zeros((0, 3), np.float32)}) == 0
    delete_keys(NoStatements(), "t", ("a",), [])


def test_rows_keep_their_order_nulls_unicode_and_numbers(con):
    rows = [("Zoë", 1, 2, None), (None, None, 2.5, "naïve — “quoted” 'x'"), ("東京", np.int64(7), np.float32(0.5), None),
            ("", True, None, None)]
    assert insert_rows(con, "t", ("a", "b", "c", "d"), rows) == 4
    got = con.execute("SELECT a, b, c, d FROM t ORDER BY rowid").fetchall()
    assert got == [("Zoë", 1, 2.0, None), (None, None, 2.5, "naïve — “quoted” 'x'"), ("東京", 7, 0.5, None),
                   ("", 1, None, None)]


def test_a_column_of_nulls_only_and_columns_left_out(con):
    insert_columns(con, "t", {"a": ["x", "y"], "d": [None, None]})
    assert con.execute("SELECT a, b, c, d FROM t ORDER BY rowid").fetchall() == [("x", None, None, None),
                                                                              ("y", None, None, None)]


def test_bad_shapes_are_refused(con):
    with pytest.raises(ValueError, match="different lengths"):
        insert_columns(con, "t", {"a": ["x"], "b": [1, 2]})
    with pytest.raises(ValueError, match="values"):
        insert_rows(con, "t", ("a", "b"), [("x", 1), ("y",)])
    with pytest.raises(ValueError, match="no columns"):
        insert_columns(con, "t", {})
    assert con.execute("SELECT count(*) FROM t").fetchone()[0] == 0


def test_vectors_are_stored_exactly_and_in_order(con):
    rng = np.random.default_rng(0)
    vec = rng.standard_normal((5, 384)).astype(np.float32)
    ids = [f"i{k}" for k in (3, 1, 4, 0, 2)]
    insert_columns(con, "v", {"kind": ["entity"] * 5, "item_id": ids, "vector": vec,
                              "note": ["a", None, "ü", None, "e"]})
    got = con.execute("SELECT item_id, vector, note FROM v ORDER BY rowid").fetchall()
    assert [g[0] for g in got] == ids and [g[2] for g in got] == ["a", None, "ü", None, "e"]
    for (_, stored, _), want in zip(got, vec):
        assert np.array_equal(np.asarray(stored, dtype=np.float32), want)
    assert con.execute("SELECT typeof(vector) FROM v LIMIT 1").fetchone()[0] == "FLOAT[]"


def test_replace_overwrites_a_taken_key_in_the_order_given_and_float64_vectors_are_cast(con):
    insert_columns(con, "v", {"kind": ["entity"] * 3, "item_id": ["a", "b", "c"],
                              "vector": np.ones((3, 3), np.float32), "note": ["old"] * 3})
    with pytest.raises(duckdb.ConstraintException):
        insert_columns(con, "v", {"kind": ["entity"], "item_id": ["a"], "vector": np.zeros((1, 3)), "note": ["x"]})
    insert_columns(con, "v", {"kind": ["report", "entity", "entity"], "item_id": ["a", "c", "a"],
                              "vector": np.array([[1, 2, 3], [0.1, 0.2, 0.3], [4, 5, 6]], dtype=np.float64),
                              "note": ["new"] * 3}, replace=("kind", "item_id"))
    got = con.execute("SELECT kind, item_id, vector, note FROM v ORDER BY rowid").fetchall()
    assert [(k, i, n) for k, i, _, n in got] == [("entity", "b", "old"), ("report", "a", "new"),
                                                 ("entity", "c", "new"), ("entity", "a", "new")]
    assert np.array_equal(np.asarray(got[2][2], np.float32), np.array([0.1, 0.2, 0.3], np.float32))
    insert_rows(con, "v", ("kind", "item_id", "note"), [("entity", "b", "newer")], replace=("kind", "item_id"))
    assert con.execute("SELECT note, vector FROM v WHERE item_id = 'b'").fetchall() == [("newer", None)]


def test_a_rolled_back_insert_leaves_nothing_and_no_relation_behind(con):
    con.execute("BEGIN TRANSACTION")
    insert_columns(con, "v", {"kind": ["e"], "item_id": ["a"], "vector": np.ones((1, 2), np.float32)})
    with pytest.raises(duckdb.Error):
        insert_columns(con, "v", {"kind": ["e"], "item_id": ["a"], "vector": np.ones((1, 2), np.float32)})
    con.execute("ROLLBACK")
    assert con.execute("SELECT count(*) FROM v").fetchone()[0] == 0
    assert not con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name LIKE '%bulk%'").fetchone()[0]


def test_delete_keys_deletes_exactly_the_pairs_given(con):
    insert_rows(con, "v", ("kind", "item_id"), [("a", "1"), ("a", "2"), ("b", "1"), ("b", "2")])
    delete_keys(con, "v", ("kind", "item_id"), [("a", "1"), ("b", "2"), ("c", "9")])
    assert sorted(con.execute("SELECT kind, item_id FROM v").fetchall()) == [("a", "2"), ("b", "1")]


def _extraction(n: int) -> Extraction:
    ents = [{"name": f"Name {i}", "type": "person", "description": f"desc {i}"} for i in range(n)]
    rels = [{"source": f"Name {i}", "target": f"Name {i + 1}", "description": "met", "strength": 2}
            for i in range(n - 1)]
    uc = UnitConcepts(mentions=[{"norm": "budget", "name": "budgets", "description": "The budget."}],
                      links=[{"concept": "budget", "other": "name 0", "other_kind": "name", "description": "d",
                              "sentences": 1}])
    return Extraction(entities=ents, relationships=rels, n_candidates=n, concepts=uc)


def _unit_rows(store, chunk_id):
    return {t: sorted(store.con.execute(f"SELECT * FROM {t} WHERE chunk_id = ?", [chunk_id]).fetchall())
            for t in ("extractions", "entity_mentions", "relationship_mentions", "concept_mentions", "concept_links")}


def test_a_redone_unit_replaces_its_rows_and_a_new_one_adds_them(tmp_path):
    store = Store(tmp_path / "x.duckdb", create=True)
    with store.transaction() as con:
        store_extraction(con, "u1", "k1", _extraction(3))
        store_extraction(con, "u2", "k2", _extraction(2))
    with store.transaction() as con:
        store_extraction(con, "u1", "k1b", _extraction(2))
    u1, u2 = _unit_rows(store, "u1"), _unit_rows(store, "u2")
    assert [r[:2] for r in u1["extractions"]] == [("u1", "k1b")]
    assert [r[1:] for r in u1["entity_mentions"]] == [r[1:] for r in u2["entity_mentions"]]
    assert len(u1["entity_mentions"]) == 2 and len(u1["relationship_mentions"]) == 1
    assert len(u1["concept_mentions"]) == 1 and len(u1["concept_links"]) == 1
    assert u1["entity_mentions"][0] == ("u1", "Name 0", "name 0", "person", "desc 0")
    store.close()


def test_a_caller_that_knows_the_unit_has_a_record_replaces_it_without_the_lookup(tmp_path):
    store = Store(tmp_path / "x.duckdb", create=True)
    with store.transaction() as con:
        store_extraction(con, "u1", "k1", _extraction(3), redo=False)
    with store.transaction() as con:
        store_extraction(con, "u1", "k1b", _extraction(2), redo=True)
    u1 = _unit_rows(store, "u1")
    assert [r[:2] for r in u1["extractions"]] == [("u1", "k1b")]
    assert len(u1["entity_mentions"]) == 2 and len(u1["relationship_mentions"]) == 1
    assert len(u1["concept_mentions"]) == 1 and len(u1["concept_links"]) == 1
    store.close()


def test_rows_of_a_unit_without_an_extraction_record_are_cleared_before_a_run(tmp_path):
    store = Store(tmp_path / "x.duckdb", create=True)
    with store.transaction() as con:
        store_extraction(con, "kept", "k", _extraction(2))
        store_extraction(con, "lost", "k", _extraction(2))
    store.con.execute("DELETE FROM extractions WHERE chunk_id = 'lost'")
    before = _unit_rows(store, "kept")
    assert clear_unrecorded(store, ["kept", "lost", "never"]) == 1
    assert all(not rows for rows in _unit_rows(store, "lost").values())
    assert _unit_rows(store, "kept") == before
    with store.transaction() as con:
        store_extraction(con, "lost", "k", _extraction(2))
    assert _unit_rows(store, "lost")["entity_mentions"] == [("lost",) + r[1:] for r in before["entity_mentions"]]
    assert clear_unrecorded(store, []) == 0
    store.close()


class CountingStore(Store):
    transactions = 0

    def transaction(self):
        type(self).transactions += 1
        return super().transaction()


class Client:
    def count(self, text):
        return len(text.split())


def _report(cid: int) -> Report:
    return Report(cid, 0, f"Title {cid}", "summary", [{"summary": "s", "explanation": "e"}], 5.0, "why", 10,
                  "elements", "topic", ["d1"])


def test_reports_are_held_and_written_together_in_their_order(tmp_path):
    store = CountingStore(tmp_path / "x.duckdb", create=True)
    CountingStore.transactions = 0
    w = ReportWriter(store, Client())
    for cid in (5, 3, 4):
        w.add(_report(cid))
    assert store.count("community_reports") == 0 and CountingStore.transactions == 0
    # a report that comes with a model call's ledger row and cache entry is committed at once, after those held
    w.add(_report(9), calls=[("run", "report", 1, "m", 10, 0, 5, 0.1, "stop")], puts=[("key", "report", "{}", "stop")])
    assert CountingStore.transactions == 1 and store.count("llm_calls") == 1 and store.count("llm_cache") == 1
    w.flush([_report(1)])
    assert CountingStore.transactions == 2
    assert [r[0] for r in store.con.execute("SELECT community_id FROM community_reports ORDER BY rowid").fetchall()] \
        == [5, 3, 4, 9, 1]
    row = store.con.execute("SELECT title, findings, full_text, n_tokens, doc_ids FROM community_reports "
                            "WHERE community_id = 3").fetchone()
    assert row[0] == "Title 3" and row[1] == '[{"explanation":"e","summary":"s"}]' and row[4] == '["d1"]'
    assert row[3] == len(row[2].split())
    w.flush()
    assert CountingStore.transactions == 2  # nothing held: no transaction
    for cid in range(100, 100 + WRITE_STEP):
        w.add(_report(cid))
    assert store.count("community_reports") == 5 + WRITE_STEP  # a full step is written without a flush
    store.close()


def test_token_counts_are_shared_by_the_documents_of_an_ingest(tmp_path):
    calls = []

    def tokenize(text):
        calls.append(text)
        return text.split()

    text = "Alice met Bob in Paris. " * 40
    docs = [Document(f"{i:016d}", f"d{i}.txt", text + f"Day {i}.") for i in range(3)]
    store = Store(tmp_path / "x.duckdb", create=True)
    ingest(store, docs, tokenize, None, 60, 10)
    pieces = [c for c in calls if c not in {d.text for d in docs}]
    assert sorted(pieces) == sorted(set(pieces))  # no piece tokenized twice across the documents
    assert store.count("text_units") > 3
    store.close()
    counts = TokenCounts(tokenize, limit=2)
    units_shared, _ = make_text_units(docs[0], tokenize, None, 60, 10, counts=counts)
    units_own, _ = make_text_units(docs[0], tokenize, None, 60, 10)
    assert len(counts.known) == 2 and [u.text for u in units_shared] == [u.text for u in units_own]


def test_an_ingest_commits_the_documents_cut_within_a_second_together(tmp_path):
    docs = [Document(f"{i:016d}", f"d{i}.txt", f"Alice met Bob in Paris on day {i}. " * 30) for i in range(5)]
    store = CountingStore(tmp_path / "x.duckdb", create=True)
    CountingStore.transactions = 0
    ingest(store, docs, str.split, None, 60, 10)
    assert CountingStore.transactions == 2  # the documents with their units, then meta next_unit_no
    assert store.count("documents") == 5 and store.count("text_units") > 5
    assert store.con.execute("SELECT count(DISTINCT added_at), count(added_at) FROM documents").fetchone() == (1, 5)
    assert [p for p, in store.con.execute("SELECT path FROM documents ORDER BY rowid").fetchall()] == \
        [d.path for d in docs]
    store.close()


def test_numbers_stay_unique_when_an_ingest_stops_before_its_last_transaction(tmp_path, monkeypatch):
    import slmgraph.indexing.stages.ingest as ingest_mod

    monkeypatch.setattr(ingest_mod, "COMMIT_SECONDS", 0.0)  # each document committed as it is cut
    def tokenize(text):
        return text.split()

    a = Document("a" * 16, "a.txt", "Alice met Bob in Paris. " * 30)
    b = Document("b" * 16, "b.txt", "Carol met Dan in Rome. " * 30)
    store = Store(tmp_path / "x.duckdb", create=True)

    def stop_on_b(text):
        if "Carol" in text:
            raise KeyboardInterrupt
        return tokenize(text)

    with pytest.raises(KeyboardInterrupt):
        ingest(store, [a, b], stop_on_b, None, 60, 10)
    given = [n for n, in store.con.execute("SELECT unit_no FROM text_units").fetchall()]
    assert given and store.count("documents") == 1
    ingest(store, [b], tokenize, None, 60, 10)  # a.txt is gone: its units are removed, their numbers kept
    now = [n for n, in store.con.execute("SELECT unit_no FROM text_units").fetchall()]
    assert min(now) > max(given) and int(store.get_meta("next_unit_no")) == max(now) + 1
    store.close()
