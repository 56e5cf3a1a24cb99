"""Creating a new index survives a Ctrl-C at any moment: a half-made file is created again, never refused,
and a user's own DuckDB file is still never taken for ours."""

import duckdb
import pytest

from slmgraph.cli.main import main
from slmgraph.errors import UserError
from slmgraph.store.db import Store
from slmgraph.store.failures import is_interrupt
from slmgraph.store.schema import APP_ID


def _interrupt_at_app(monkeypatch, exc):
    """Make the first write of the ``app`` meta key raise ``exc`` (a Ctrl-C mid-creation)."""
    real = Store.set_meta
    fired = []

    def set_meta(self, key, value):
        if key == "app" and not fired:
            fired.append(key)
            raise exc
        return real(self, key, value)

    monkeypatch.setattr(Store, "set_meta", set_meta)
    return fired


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), RuntimeError("Query interrupted")])
def test_a_creation_interrupted_is_created_again(tmp_path, monkeypatch, exc):
    db = tmp_path / "c7.duckdb"
    fired = _interrupt_at_app(monkeypatch, exc)
    with pytest.raises(type(exc)):
        Store(db, create=True)
    assert fired and db.exists()
    assert Store.precheck(db) == (None, 0)
    st = Store(db, create=True)
    assert st.get_meta("app") == APP_ID and st.has_table("documents")
    st.close()


def test_a_file_an_older_creation_left_half_made(tmp_path):
    db = tmp_path / "old.duckdb"
    con = duckdb.connect(str(db))  # the schema written table by table, interrupted before meta's rows
    con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    con.execute("CREATE TABLE documents (doc_id VARCHAR PRIMARY KEY, path VARCHAR)")
    con.close()
    assert Store.precheck(db) == (None, 0)
    with pytest.raises(UserError, match="creation was interrupted"):
        Store(db, read_only=True)
    st = Store(db)
    assert st.get_meta("app") == APP_ID and st.has_table("llm_calls")
    st.close()


@pytest.mark.parametrize("sql", [
    "CREATE TABLE documents (doc_id VARCHAR); INSERT INTO documents VALUES ('mine')",  # our name, user's row
    "CREATE TABLE meta (key VARCHAR, value VARCHAR); CREATE TABLE notes (x INT)",  # a table not ours
    "CREATE SCHEMA s; CREATE TABLE s.documents (x INT)",  # our name in another schema
])
def test_a_users_duckdb_file_is_still_refused(tmp_path, sql):
    db = tmp_path / "mine.duckdb"
    con = duckdb.connect(str(db))
    con.execute(sql)
    con.close()
    for kw in ({}, {"create": True}, {"read_only": True}):
        with pytest.raises(UserError, match="not a slmgraph index"):
            Store(db, **kw)
    con = duckdb.connect(str(db), read_only=True)
    assert not con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'llm_calls'"
                           ).fetchone()[0]
    con.close()


def test_duckdb_interrupt_is_a_ctrl_c():
    assert is_interrupt(RuntimeError("Query interrupted"))
    assert is_interrupt(duckdb.InterruptException("INTERRUPT Error: Interrupted!"))
    assert not is_interrupt(RuntimeError("something else"))
    assert not is_interrupt(duckdb.IOException("No space left on device"))


def test_storage_error_of_an_interrupt_raises_keyboard_interrupt(tmp_path):
    st = Store(tmp_path / "x.duckdb", create=True)
    with pytest.raises(KeyboardInterrupt):
        raise st.storage_error(duckdb.InterruptException("INTERRUPT Error: Interrupted!"))
    st.close()


def test_cli_ctrl_c_during_creation_then_the_same_command_resumes(tmp_path, corpus, monkeypatch, capsys,
                                                                  fake_cli):
    db = tmp_path / "c7.duckdb"
    fired = _interrupt_at_app(monkeypatch, RuntimeError("Query interrupted"))
    argv = ["index", str(corpus), "--db", str(db), "--quiet"]
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert fired and "Traceback" not in err
    assert [line for line in err.splitlines() if line.strip()] == [
        "slmgraph: interrupted. Finished work is saved in the index; run the same command again to resume."]
    assert main(argv) == 0, capsys.readouterr().err
    st = Store(db, read_only=True)
    assert st.get_meta("complete") == "1" and st.count("documents") == 3
    st.close()
