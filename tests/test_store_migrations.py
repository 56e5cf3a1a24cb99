"""Schema migrations (slmgraph.store.migrations): an index of the oldest schema opens and is brought to the
current one by named steps, each recorded once; an index of a newer schema is refused with one line."""

import duckdb
import pytest

from slmgraph.cli.main import main
from slmgraph.errors import UserError
from slmgraph.store.db import Store
from slmgraph.store.migrations import MIGRATIONS, migrate
from slmgraph.store.schema import OWN_TABLES, SCHEMA_VERSION

#: The schema of the first slmgraph index (schema version 1, before any column or table was added).
OLDEST_DDL = """
CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE documents (doc_id VARCHAR PRIMARY KEY, path VARCHAR, n_chars INTEGER, n_tokens INTEGER,
    added_at TIMESTAMP);
CREATE TABLE text_units (chunk_id VARCHAR PRIMARY KEY, doc_id VARCHAR, ord INTEGER, tok_start INTEGER,
    tok_end INTEGER, n_tokens INTEGER, text VARCHAR);
CREATE TABLE extractions (chunk_id VARCHAR PRIMARY KEY, cache_key VARCHAR, status VARCHAR, n_candidates INTEGER,
    n_entities INTEGER, n_relationships INTEGER, n_dropped INTEGER, raw VARCHAR);
CREATE TABLE entity_mentions (chunk_id VARCHAR, name VARCHAR, norm VARCHAR, type VARCHAR, description VARCHAR);
CREATE TABLE relationship_mentions (chunk_id VARCHAR, source_norm VARCHAR, target_norm VARCHAR,
    description VARCHAR, strength INTEGER);
CREATE TABLE entities (entity_id INTEGER PRIMARY KEY, norm VARCHAR UNIQUE, name VARCHAR, type VARCHAR,
    description VARCHAR, n_mentions INTEGER, degree INTEGER);
CREATE TABLE entity_text_units (entity_id INTEGER, chunk_id VARCHAR);
CREATE TABLE relationships (rel_id INTEGER PRIMARY KEY, source_id INTEGER, target_id INTEGER, description VARCHAR,
    weight DOUBLE, strength DOUBLE, combined_degree INTEGER);
CREATE TABLE relationship_text_units (rel_id INTEGER, chunk_id VARCHAR);
CREATE TABLE communities (community_id INTEGER PRIMARY KEY, level INTEGER, parent_id INTEGER, size INTEGER,
    carried_from INTEGER);
CREATE TABLE community_members (community_id INTEGER, entity_id INTEGER);
CREATE TABLE community_reports (community_id INTEGER PRIMARY KEY, level INTEGER, title VARCHAR, summary VARCHAR,
    findings VARCHAR, rating DOUBLE, rating_explanation VARCHAR, full_text VARCHAR, n_tokens INTEGER,
    context_tokens INTEGER, context_kind VARCHAR);
CREATE TABLE embeddings (kind VARCHAR, item_id VARCHAR, model VARCHAR, vector FLOAT[], PRIMARY KEY (kind, item_id));
CREATE TABLE llm_cache (key VARCHAR PRIMARY KEY, stage VARCHAR, output VARCHAR, finish_reason VARCHAR);
CREATE SEQUENCE llm_call_seq;
CREATE TABLE llm_calls (call_id BIGINT DEFAULT nextval('llm_call_seq'), run_id VARCHAR, stage VARCHAR,
    worker INTEGER, model VARCHAR, prompt_tokens INTEGER, cached_tokens INTEGER, completion_tokens INTEGER,
    seconds DOUBLE, finish_reason VARCHAR, created_at TIMESTAMP DEFAULT current_timestamp);
CREATE TABLE stage_runs (run_id VARCHAR, stage VARCHAR, seconds DOUBLE, items INTEGER, note VARCHAR,
    created_at TIMESTAMP DEFAULT current_timestamp);
INSERT INTO meta VALUES ('app', 'slmgraph'), ('schema_version', '1'), ('complete', '1');
INSERT INTO documents VALUES ('d2', 'b.txt', 10, 3, NULL), ('d1', 'a.txt', 10, 3, NULL);
INSERT INTO text_units VALUES ('u3', 'd2', 0, 0, 3, 3, 'Bo met Cy.'), ('u2', 'd1', 1, 3, 6, 3, 'Al left.'),
    ('u1', 'd1', 0, 0, 3, 3, 'Al met Bo.');
INSERT INTO llm_calls (run_id, stage, worker, model, prompt_tokens, cached_tokens, completion_tokens, seconds,
    finish_reason) VALUES ('r1', 'extract', 0, 'm', 10, 0, 5, 0.5, 'stop');
"""


def _oldest(path):
    con = duckdb.connect(str(path))
    con.execute(OLDEST_DDL)
    con.close()
    return path


def _schema(path) -> dict:
    """``{table: [(column, type), ...]}`` of a file, in column order."""
    con = duckdb.connect(str(path), read_only=True)
    out = {}
    for t, c, ty in con.execute("SELECT table_name, column_name, data_type FROM duckdb_columns() "
                                "WHERE database_name = current_database() ORDER BY table_name, column_index"
                                ).fetchall():
        out.setdefault(t, []).append((c, ty))
    con.close()
    return out


def _recorded(store: Store) -> list[str]:
    return [n for n, in store.con.execute("SELECT name FROM migrations ORDER BY applied_at, rowid").fetchall()]


def test_an_index_of_the_oldest_schema_opens_and_is_migrated_step_by_step(tmp_path):
    old = _oldest(tmp_path / "v1.duckdb")
    fresh = tmp_path / "new.duckdb"
    Store(fresh, create=True).close()
    store = Store(old)
    assert store.get_meta("schema_version") == SCHEMA_VERSION
    assert sorted(_recorded(store)) == sorted(m.name for m in MIGRATIONS)
    # version 1 cited text units 1..n in (doc_id, ord) order: the migration stores exactly those numbers
    assert store.con.execute("SELECT chunk_id, unit_no FROM text_units ORDER BY unit_no").fetchall() == [
        ("u1", 1), ("u2", 2), ("u3", 3)]
    assert store.get_meta("next_unit_no") == "4"
    assert store.count("llm_calls") == 1 and store.get_meta("complete") == "1"  # nothing held is lost
    store.close()
    # every table and column of a new index, of the same types (column order may differ: added last)
    assert {t: sorted(c) for t, c in _schema(old).items()} == {t: sorted(c) for t, c in _schema(fresh).items()}
    store = Store(old)  # opened again: no step runs twice
    assert migrate(store.con, store.transaction) == []
    store.close()


def test_an_index_of_the_oldest_schema_is_read_as_it_is(tmp_path):
    old = _oldest(tmp_path / "v1.duckdb")
    store = Store(old, read_only=True)  # a query opens it without migrating (no write access)
    assert not store.has_table("migrations") and not store.has_unit_numbers()
    store.close()


def test_a_new_index_records_every_step_in_order(tmp_path):
    store = Store(tmp_path / "x.duckdb", create=True)
    assert _recorded(store) == [m.name for m in MIGRATIONS]
    assert store.get_meta("schema_version") == SCHEMA_VERSION
    assert "migrations" in OWN_TABLES
    store.close()


def test_an_index_made_before_steps_were_recorded_gets_them_once(tmp_path):
    db = tmp_path / "x.duckdb"
    Store(db, create=True).close()
    con = duckdb.connect(str(db))
    con.execute("DROP TABLE migrations")  # an index of the current schema written before migrations were recorded
    con.close()
    before = _schema(db)
    store = Store(db)
    assert _recorded(store) == [m.name for m in MIGRATIONS]
    store.close()
    after = _schema(db)
    assert after.pop("migrations") and after == before


def test_the_steps_are_named_once_and_reach_the_schema_version():
    names = [m.name for m in MIGRATIONS]
    assert len(set(names)) == len(names) and names[0] == "create_tables"
    assert str(max(m.version for m in MIGRATIONS)) == SCHEMA_VERSION
    assert [m.version for m in MIGRATIONS] == sorted(m.version for m in MIGRATIONS)


def test_a_failed_step_is_rolled_back_and_run_again_next_time(tmp_path, monkeypatch):
    import slmgraph.store.migrations as migrations

    old = _oldest(tmp_path / "v1.duckdb")
    step = next(m for m in MIGRATIONS if m.name == "number_text_units")

    def fail(con):
        step.apply(con)
        raise OSError("disk full")

    monkeypatch.setattr(migrations, "MIGRATIONS", [m if m is not step else step._replace(apply=fail)
                                                   for m in MIGRATIONS])
    with pytest.raises(OSError):
        Store(old)
    con = duckdb.connect(str(old), read_only=True)
    assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "1"
    assert "number_text_units" not in {n for n, in con.execute("SELECT name FROM migrations").fetchall()}
    con.close()
    monkeypatch.undo()
    store = Store(old)
    assert store.get_meta("schema_version") == SCHEMA_VERSION and "number_text_units" in _recorded(store)
    store.close()


@pytest.mark.parametrize("version", ["3", "next"])
def test_an_index_of_a_newer_schema_is_refused_with_one_line(tmp_path, capsys, version):
    db = tmp_path / "x.duckdb"
    Store(db, create=True).close()
    con = duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [version])
    con.close()
    for kw in ({}, {"read_only": True}, {"create": True}):
        with pytest.raises(UserError, match=f"schema version {version}, which this slmgraph .*cannot read"):
            Store(db, **kw)
    assert main(["stats", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("slmgraph: error: index ") and err.count("\n") == 1 and "upgrade slmgraph" in err
    con = duckdb.connect(str(db), read_only=True)  # refused before anything was written
    assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == version
    con.close()
