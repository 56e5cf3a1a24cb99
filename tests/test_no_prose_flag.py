"""The per-unit no-prose flag (``text_units.no_prose``): judged once at ingestion, stored in the index, read
by basic and lazy search instead of judging every unit's text on each query; an index made before the
column gets it filled once by a schema step, from the stored text, losing nothing."""

import random

import duckdb
import pytest
from conftest import FakeEmbedder, FakeModel

import slmgraph.text.shape as shape
from slmgraph.config.prompting import Prompts
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.model.client import ModelClient
from slmgraph.query.engines.basic_search import basic_search, no_prose_units
from slmgraph.query.engines.lazy_search import lazy_search
from slmgraph.store.db import Store
from slmgraph.store.schema import OWN_TABLES


def _dump(n_rows: int) -> str:
    """A log dumped onto one line: dates, codes and figures, no sentence."""
    rnd = random.Random(5)
    return " | ".join(f"20{rnd.randint(19, 25)}-{rnd.randint(1, 12):02d} MV_{rnd.choice('ABC')} {rnd.randint(10, 400)} "
                      f"{''.join(rnd.choice('ABCDEFGHJKLMNPQRSTUVWXYZ0123456789') for _ in range(12))} fuel "
                      f"{rnd.uniform(100, 900):.1f}" for _ in range(n_rows))


@pytest.fixture
def dumped(tmp_path, corpus):
    (corpus / "zz_log_dump.txt").write_text(_dump(1500), encoding="utf-8")
    db = tmp_path / "idx.duckdb"
    s = Settings(min_community_size=2, extractor="nlp", reports="none")
    run_index(corpus, db, s, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None)
    return db, s


def _judged(store) -> dict[str, bool]:
    return {c: shape.no_prose_passage(t) for c, t in store.con.execute("SELECT chunk_id, text FROM text_units").fetchall()}


def _counts(db) -> dict[str, int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        have = {t for t, in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
                                        ).fetchall()}
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in sorted(have & set(OWN_TABLES))}
    finally:
        con.close()


def test_ingest_stores_the_flag_of_every_text_unit(dumped):
    db, _ = dumped
    store = Store(db, read_only=True)
    try:
        flags = dict(store.con.execute("SELECT chunk_id, no_prose FROM text_units").fetchall())
        judged = _judged(store)
        assert flags == judged  # every unit judged, none left NULL
        assert any(flags.values()) and not all(flags.values())
    finally:
        store.close()


def test_the_searches_read_the_flag_and_judge_no_text(dumped, monkeypatch):
    db, s = dumped
    store = Store(db)
    try:
        dump = {c for c, j in _judged(store).items() if j}
        calls = []
        judge = shape.no_prose_passage

        def counting(text):
            calls.append(1)
            return judge(text)

        monkeypatch.setattr(shape, "no_prose_passage", counting)
        question = "Which fuel did the rockets of Acme Corporation use?"
        ans = basic_search(store, ModelClient(FakeModel(), store, "q"), Prompts(), s, question, FakeEmbedder())
        assert ans.context and not {c["id"] for c in ans.context} & dump
        assert ans.details["no_prose_units"] == len(dump)
        ans = lazy_search(store, ModelClient(FakeModel(), store, "q"), Prompts(), s, question, FakeEmbedder())
        assert ans.details["no_prose_units"] == len(dump)
        assert calls == []
    finally:
        store.close()


def _unmigrated(db) -> None:
    """Make ``db`` an index written before the flag: no ``no_prose`` column, its step not recorded."""
    con = duckdb.connect(str(db))
    try:
        con.execute("ALTER TABLE text_units DROP COLUMN no_prose")
        con.execute("DELETE FROM migrations WHERE name = 'add_text_unit_no_prose'")
    finally:
        con.close()


def test_an_index_made_before_the_flag_gets_it_filled_once_and_loses_nothing(dumped):
    db, _ = dumped
    _unmigrated(db)
    before = _counts(db)
    con = duckdb.connect(str(db), read_only=True)
    units_before = con.execute("SELECT * FROM text_units ORDER BY chunk_id").fetchall()
    extractions_before = con.execute("SELECT * FROM extractions ORDER BY chunk_id").fetchall()
    con.close()

    store = Store(db, read_only=True)  # a query opens it as it is: the flag is judged from the text
    try:
        assert not store.has_column("text_units", "no_prose")
        dump = {c for c, j in _judged(store).items() if j}
        assert dump and no_prose_units(store) == dump
    finally:
        store.close()

    store = Store(db)  # opened for writing: the step fills the flag from the stored text
    try:
        flags = dict(store.con.execute("SELECT chunk_id, no_prose FROM text_units").fetchall())
        assert flags == _judged(store)
        assert "add_text_unit_no_prose" in {n for n, in store.con.execute("SELECT name FROM migrations").fetchall()}
        assert store.get_meta("complete") == "1"
        units_after = store.con.execute("SELECT * EXCLUDE (no_prose) FROM text_units ORDER BY chunk_id").fetchall()
        assert units_after == units_before
        assert store.con.execute("SELECT * FROM extractions ORDER BY chunk_id").fetchall() == extractions_before
    finally:
        store.close()
    assert _counts(db) == {**before, "migrations": before["migrations"] + 1}


def test_a_unit_an_older_slmgraph_added_is_judged_when_read(dumped):
    db, _ = dumped
    con = duckdb.connect(str(db))
    con.execute("UPDATE text_units SET no_prose = NULL WHERE text LIKE '%MV_%'")  # written without the flag
    con.close()
    store = Store(db, read_only=True)
    try:
        assert no_prose_units(store) == {c for c, j in _judged(store).items() if j}
    finally:
        store.close()
