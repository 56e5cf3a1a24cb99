"""slmgraph.indexing.pipeline.run_index: errors that refuse a run come before the input's warnings; a no-op re-index writes only
its stage_runs rows; a change marks the index unfinished."""

from __future__ import annotations

import pytest
from stories import STORY_B, STORY_C, _index, _indexed

from slmgraph.cli import main as cli
from slmgraph.errors import UserError
from slmgraph.store.db import Store


def test_the_replace_error_comes_before_the_inputs_warnings(tmp_path, capsys, monkeypatch):
    first, other, db = tmp_path / "first", tmp_path / "other", tmp_path / "x.duckdb"
    first.mkdir()
    other.mkdir()
    (first / "b.txt").write_text(STORY_B)
    _index(first, db)
    (other / "c.txt").write_text(STORY_C)
    (other / "bin.txt").write_bytes(b"\x00\x01binary")  # skipped with a warning
    import slmgraph.indexing.pipeline as pipeline

    monkeypatch.setattr(pipeline, "load_model", lambda *a, **k: pytest.fail("the model was loaded"))
    code = cli.main(["index", str(other), "--db", str(db)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines() == [err.strip()] and err.startswith("slmgraph: error: index ") and "--replace" in err


def test_a_model_error_comes_before_the_inputs_warnings(tmp_path, capsys, monkeypatch):
    import slmgraph.indexing.pipeline as pipeline

    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "c.txt").write_text(STORY_C)
    (folder / "bin.txt").write_bytes(b"\x00\x01binary")

    def refuse(*a, **k):
        raise UserError("--n-ctx 999999999 exceeds the 8192-token window m.gguf was trained for: pass --n-ctx 8192 "
                        "or less")

    monkeypatch.setattr(pipeline, "load_model", refuse)
    code = cli.main(["index", str(folder), "--db", str(tmp_path / "x.duckdb"), "--n-ctx", "999999999"])
    err = capsys.readouterr().err
    assert code == 2 and err.splitlines() == [err.strip()] and err.startswith("slmgraph: error: --n-ctx"), err
    assert not (tmp_path / "x.duckdb").exists()


class _Recording:
    """A DuckDB connection that records the statements that may write (everything but SELECTs)."""

    def __init__(self, con, log):
        self._con, self._log = con, log

    def execute(self, sql, *a, **k):
        self._note(sql)
        return self._con.execute(sql, *a, **k)

    def executemany(self, sql, *a, **k):
        self._note(sql)
        return self._con.executemany(sql, *a, **k)

    def _note(self, sql):
        words = sql.split()
        if words and words[0].upper() not in ("SELECT", "WITH", "BEGIN", "COMMIT", "ROLLBACK", "CHECKPOINT"):
            self._log.append(" ".join(words[:3]))

    def __getattr__(self, name):
        return getattr(self._con, name)


def test_a_no_op_re_index_writes_only_its_stage_runs_rows(tmp_path, monkeypatch):
    folder, db = _indexed(tmp_path, STORY_B, STORY_C)
    writes: list[str] = []
    init = Store.__init__

    def recording_init(self, *a, **k):
        init(self, *a, **k)  # opening (DDL IF NOT EXISTS, the pending ledger rows) is not the run's doing
        if not self.read_only:
            self.con = _Recording(self.con, writes)

    monkeypatch.setattr(Store, "__init__", recording_init)
    assert _index(folder, db).get("up_to_date") is True
    assert writes and set(writes) == {"INSERT INTO stage_runs"}, writes


def test_a_change_after_a_complete_build_marks_the_index_unfinished_with_it(tmp_path, monkeypatch):
    import slmgraph.indexing.pipeline as pipeline

    folder, db = _indexed(tmp_path, STORY_B)
    (folder / "c.txt").write_text(STORY_C)

    def crash(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "run_extraction", crash)  # killed right after ingest committed c.txt
    with pytest.raises(KeyboardInterrupt):
        _index(folder, db)
    store = Store(db, read_only=True)
    assert store.get_meta("complete") == "0"
    store.close()
