"""Rough edges a new user met in the CLI: llama.cpp's lines before our --n-ctx error, text-unit citation
numbers that shifted when a file was added, the thread-sharing warning on queries that call no model, a
too-long question told to raise --n-ctx past the model's maximum, the --replace error after the input's
warnings, a no-op re-index that still wrote to the file, and unused names (pyflakes)."""

from __future__ import annotations

import hashlib
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FakeEmbedder, FakeModel

import slmgraph.backend as backend
import slmgraph.threads as threads
from slmgraph import cli
from slmgraph.batch import stage_plan
from slmgraph.config import Settings
from slmgraph.errors import UserError
from slmgraph.pipeline import run_index
from slmgraph.search import unit_numbers
from slmgraph.store import SCHEMA_VERSION, Store

ROOT = Path(__file__).resolve().parent.parent

STORY_B = ("Alice Smith founded Acme Corporation in Paris. Acme Corporation builds robots for Bob Jones.\n\n"
           "Bob Jones lives in Lyon. He met Alice Smith at the Paris Robot Fair.\n")
STORY_C = ("Carol White directs the Lyon Museum. The Lyon Museum shows robots built by Acme Corporation.\n\n"
           "Carol White invited Bob Jones to the museum.\n")


def _index(folder: Path, db: Path, **kw) -> dict:
    settings = Settings(min_community_size=2, chunk_size=60, chunk_overlap=10)
    return run_index(folder, db, settings, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder,
                     say=lambda m: None, **kw)


def _indexed(tmp_path, *stories):
    """``(folder, db)``: ``stories`` written as b.txt, c.txt, ... in a new folder and indexed."""
    folder, db = tmp_path / "in", tmp_path / "x.duckdb"
    folder.mkdir()
    for name, story in zip("bcdefgh", stories):
        (folder / f"{name}.txt").write_text(story)
    _index(folder, db)
    return folder, db


def _numbers(db: Path) -> dict:
    store = Store(db, read_only=True)
    try:
        return unit_numbers(store)
    finally:
        store.close()


def _doc_id(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _early_text(before: list[str]) -> str:
    """A story whose document id sorts before every id in ``before`` (the old numbering's order)."""
    for i in range(10_000):
        text = f"Dora Green ({i}) sells Acme Corporation robots in Paris.\n\nDora Green met Alice Smith.\n"
        if all(_doc_id(text) < d for d in before):
            return text
    raise AssertionError("no early document id found")


# --- 1. llama.cpp's lines around a model load ----------------------------------------------------------------


def _gguf(tmp_path: Path) -> Path:
    p = tmp_path / "m.gguf"
    p.write_bytes(b"GGUF" + b"\0" * 64)
    return p


def test_an_n_ctx_over_the_trained_window_is_one_line_without_llama_cpp_lines(tmp_path, monkeypatch, capfd):
    backend.install_log_filter()
    if backend._log_callback is None:
        pytest.skip("llama-cpp-python is not installed")

    def failing_load(llama_cpp, **kw):  # what llama.cpp does with a window it cannot allocate
        backend._log_callback(3, b"llama_init_from_model: failed to initialize the context\n", None)
        backend._log_callback(3, b"llama_kv_cache: failed to allocate buffer for kv cache\n", None)
        raise ValueError("Failed to create llama_context")

    monkeypatch.setattr(backend._LlamaAdapter, "load", classmethod(lambda cls, llama_cpp, **kw:
                                                                    failing_load(llama_cpp, **kw)))
    monkeypatch.setattr(backend, "_trained_window", lambda llama_cpp, path: 4096)
    with pytest.raises(UserError, match=r"--n-ctx 8192 exceeds the 4096-token window m.gguf was trained for"):
        backend.LlamaModel(_gguf(tmp_path), n_ctx=8192)
    assert capfd.readouterr().err == ""


def test_a_window_past_the_default_is_refused_before_llama_cpp_allocates_it(tmp_path, monkeypatch, capfd):
    """llama.cpp allocates the whole KV cache at load: --n-ctx 999999999 got the process killed (out of
    memory) before it could fail. Past the default window the trained one is read first."""
    backend.install_log_filter()
    if backend._log_callback is None:
        pytest.skip("llama-cpp-python is not installed")
    monkeypatch.setattr(backend._LlamaAdapter, "load", classmethod(lambda cls, llama_cpp, **kw: pytest.fail("loaded")))
    monkeypatch.setattr(backend, "_trained_window", lambda llama_cpp, path: 8192)
    with pytest.raises(UserError, match=r"--n-ctx 999999999 exceeds the 8192-token window m.gguf was trained for"):
        backend.LlamaModel(_gguf(tmp_path), n_ctx=999_999_999)
    assert capfd.readouterr().err == ""


def test_a_load_that_fails_for_another_reason_names_llama_cpps_line_in_ours(tmp_path, monkeypatch, capfd):
    backend.install_log_filter()
    if backend._log_callback is None:
        pytest.skip("llama-cpp-python is not installed")

    def failing_load(cls, llama_cpp, **kw):
        backend._log_callback(3, b"llama_model_load: error loading model: tensor 'x' data is not within bounds\n",
                              None)
        raise ValueError("Failed to load model from file")

    monkeypatch.setattr(backend._LlamaAdapter, "load", classmethod(failing_load))
    monkeypatch.setattr(backend, "_trained_window", lambda llama_cpp, path: None)
    with pytest.raises(UserError) as exc:
        backend.LlamaModel(_gguf(tmp_path), n_ctx=4096)
    assert "tensor 'x' data is not within bounds" in str(exc.value) and "complete GGUF" in str(exc.value)
    assert capfd.readouterr().err == ""


def test_held_log_lines_are_printed_when_not_held(capfd):
    backend.install_log_filter()
    if backend._log_callback is None:
        pytest.skip("llama-cpp-python is not installed")
    with backend.held_log() as held:
        backend._log_callback(3, b"held error\n", None)
        backend._log_callback(2, b"a warning, never shown\n", None)
    backend._log_callback(3, b"shown error\n", None)
    assert held == ["held error\n"]
    assert capfd.readouterr().err == "shown error\n"


@pytest.mark.integration
def test_the_cli_says_one_line_for_an_n_ctx_the_model_cannot_have(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text(STORY_B)
    exe = Path(sys.executable).with_name("slmgraph")
    r = subprocess.run([str(exe), "index", str(tmp_path / "in"), "--db", str(tmp_path / "x.duckdb"),
                        "--n-ctx", "999999999", "--quiet"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2
    assert r.stderr.splitlines() == [r.stderr.strip()] and r.stderr.startswith("slmgraph: error: --n-ctx 999999999 "
                                                                                "exceeds the 8192-token window"), r.stderr


@pytest.mark.integration
def test_a_normal_load_prints_nothing_from_llama_cpp():
    code = ("from slmgraph.backend import LlamaModel, default_model_path\n"
            "m = LlamaModel(default_model_path(), n_ctx=2048, n_threads=1)\n"
            "m.complete(*m.prompt_tokens(m.render('Say hi.', 'Hi')), schema=None, max_tokens=4)\n")
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300).stderr
    assert err == "", err


# --- 2. stable text-unit numbers ---------------------------------------------------------------------------


def test_adding_a_file_that_sorts_first_keeps_every_citation_number(tmp_path):
    folder, db = _indexed(tmp_path, STORY_B, STORY_C)
    before = _numbers(db)
    assert sorted(before.values()) == list(range(1, len(before) + 1))
    early = _early_text([_doc_id(STORY_B), _doc_id(STORY_C)])
    (folder / "a.txt").write_text(early)  # sorts first by path and by document id
    _index(folder, db)
    after = _numbers(db)
    assert {c: after[c] for c in before} == before  # old answers' citations still point at the same units
    new = sorted(after[c] for c in after if c not in before)
    assert new and new[0] == len(before) + 1 and len(set(after.values())) == len(after)


def test_a_removed_units_number_is_never_given_again(tmp_path):
    folder, db = _indexed(tmp_path, STORY_B, STORY_C)
    first = _numbers(db)
    (folder / "c.txt").unlink()  # c.txt's units hold the highest numbers
    _index(folder, db)
    (folder / "d.txt").write_text(STORY_C.replace("Carol White", "Erin Black"))
    _index(folder, db)
    now = _numbers(db)
    new = [n for c, n in now.items() if c not in first]
    assert new and min(new) > max(first.values())


def test_the_same_corpus_gives_the_same_numbers_in_path_order(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "b.txt").write_text(STORY_B)
    (folder / "c.txt").write_text(STORY_C)
    _index(folder, tmp_path / "1.duckdb")
    _index(folder, tmp_path / "2.duckdb")
    one, two = _numbers(tmp_path / "1.duckdb"), _numbers(tmp_path / "2.duckdb")
    assert one == two
    store = Store(tmp_path / "1.duckdb", read_only=True)
    order = [c for c, in store.con.execute("SELECT t.chunk_id FROM text_units t JOIN documents d USING (doc_id) "
                                           "ORDER BY d.path, t.ord").fetchall()]
    store.close()
    assert [one[c] for c in order] == list(range(1, len(order) + 1))


def _as_version_1(db: Path) -> None:
    """Make ``db`` look like an index written by schema version 1 (no stored numbers)."""
    import duckdb

    con = duckdb.connect(str(db))
    con.execute("ALTER TABLE text_units DROP COLUMN unit_no")
    con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    con.execute("DELETE FROM meta WHERE key = 'next_unit_no'")
    con.close()


def test_an_index_of_the_previous_version_keeps_the_numbers_it_cited(tmp_path):
    folder, db = _indexed(tmp_path, STORY_B, STORY_C)
    _as_version_1(db)
    store = Store(db, read_only=True)  # a query on the old index, before any re-index
    old = unit_numbers(store)
    v1 = [c for c, in store.con.execute("SELECT chunk_id FROM text_units ORDER BY doc_id, ord").fetchall()]
    store.close()
    assert old == {c: i for i, c in enumerate(v1, start=1)}  # version 1's numbering
    store = Store(db)  # opened for writing: migrated
    assert store.get_meta("schema_version") == SCHEMA_VERSION and unit_numbers(store) == old
    store.close()
    (folder / "a.txt").write_text(_early_text([_doc_id(STORY_B), _doc_id(STORY_C)]))
    _index(folder, db)
    after = _numbers(db)
    assert {c: after[c] for c in old} == old and min(n for c, n in after.items() if c not in old) > len(old)


def test_text_unit_search_cites_the_stored_numbers(tmp_path):
    from slmgraph.client import ModelClient
    from slmgraph.prompting import Prompts
    from slmgraph.search.global_search import text_unit_search

    folder, db = _indexed(tmp_path, STORY_B)
    (folder / "a.txt").write_text(_early_text([_doc_id(STORY_B)]))
    _index(folder, db)
    store = Store(db, read_only=True)
    ans = text_unit_search(store, ModelClient(FakeModel(), store, "q"), Prompts(), Settings(),
                           "Who founded Acme Corporation?", progress=False, embedder=FakeEmbedder())
    numbers = unit_numbers(store)
    store.close()
    assert ans.context and all(c["source"] == numbers[c["id"]] for c in ans.context)


def test_export_gives_text_units_the_number_answers_cite(tmp_path):
    import duckdb

    from slmgraph.export import export

    folder, db = _indexed(tmp_path, STORY_B)
    (folder / "a.txt").write_text(_early_text([_doc_id(STORY_B)]))
    _index(folder, db)
    store = Store(db, read_only=True)
    export(store, tmp_path / "out", "csv")
    numbers = unit_numbers(store)
    store.close()
    got = dict(duckdb.sql(f"SELECT id, human_readable_id FROM '{tmp_path / 'out' / 'text_units.csv'}'").fetchall())
    assert got == numbers


# --- 3. the thread-sharing warning only when the model runs ---------------------------------------------------


def test_load_model_claims_threads_only_when_a_model_call_is_about_to_run(tmp_path, monkeypatch, caplog):
    made = {}

    class Loaded:
        def __init__(self, path, **kw):
            made.update(kw)

    monkeypatch.setattr(backend, "LlamaModel", Loaded)
    monkeypatch.setattr(threads, "claimed_elsewhere", lambda registry=None: 8)
    monkeypatch.setattr(threads, "REGISTRY", tmp_path / "reg")
    with caplog.at_level(logging.WARNING, logger="slmgraph"):
        backend.load_model(str(_gguf(tmp_path)), 4096, 2, 42)
        assert "other slmgraph processes" not in caplog.text  # loading alone says nothing
        granted = made["claim"](2)  # the first model call
    assert granted == 1 and "already run in other slmgraph processes" in caplog.text


class _Adapter:
    def __init__(self):
        self.threads = []

    def set_threads(self, n):
        self.threads.append(n)


def test_reserve_threads_claims_once_and_lowers_the_threads():
    model = backend.LlamaModel.__new__(backend.LlamaModel)
    asked = []
    model.n_threads, model._lc = 2, _Adapter()
    model._claim = lambda n: asked.append(n) or 1
    assert model.reserve_threads() == 1 and model.reserve_threads() == 1
    assert asked == [2] and model._lc.threads == [1] and model.n_threads == 1


def test_a_model_stage_reserves_its_threads_before_planning_workers():
    class Counting(FakeModel):
        reserved = 0

        def reserve_threads(self):
            self.reserved += 1
            return 2

    m = Counting()
    plan = stage_plan(m, Settings(), 10)
    assert m.reserved == 1 and plan.cores == 2


# --- 4. a too-long question --------------------------------------------------------------------------------


def test_a_too_long_question_suggests_a_window_the_model_allows():
    msg = cli.question_too_long(300, 2048, 8192)
    assert "pass --n-ctx 3072" in msg and "at most 256" in msg
    msg = cli.question_too_long(1500, 8192, 8192)  # the default model's window is already its largest
    assert "--n-ctx" not in msg.split(":", 1)[1] and "shorten it to at most 1024 tokens" in msg
    msg = cli.question_too_long(1500, 4096, 8192)
    assert "shorten it to at most 1024 tokens with --n-ctx 8192" in msg and "or to 512" in msg
    assert "pass --n-ctx 12288" in cli.question_too_long(1500, 8192, 0)  # trained window unknown


def test_a_prompt_that_cannot_fit_does_not_suggest_a_larger_window_than_the_models(tmp_path):
    from slmgraph.client import ModelClient

    client = ModelClient(FakeModel(n_ctx=64, n_ctx_train=64), None, "t")
    with pytest.raises(UserError) as exc:
        client.call("s", "system " * 40, "user " * 40, schema=None, max_tokens=10)
    assert "raise --n-ctx" not in str(exc.value) and "lower --chunk-size" in str(exc.value)
    client = ModelClient(FakeModel(n_ctx=64, n_ctx_train=8192), None, "t")
    with pytest.raises(UserError, match=r"raise --n-ctx \(up to 8192"):
        client.call("s", "system " * 40, "user " * 40, schema=None, max_tokens=10)


# --- 5. argument errors before any work or output -------------------------------------------------------------


def test_the_replace_error_comes_before_the_inputs_warnings(tmp_path, capsys, monkeypatch):
    first, other, db = tmp_path / "first", tmp_path / "other", tmp_path / "x.duckdb"
    first.mkdir()
    other.mkdir()
    (first / "b.txt").write_text(STORY_B)
    _index(first, db)
    (other / "c.txt").write_text(STORY_C)
    (other / "bin.txt").write_bytes(b"\x00\x01binary")  # skipped with a warning
    import slmgraph.pipeline as pipeline

    monkeypatch.setattr(pipeline, "load_model", lambda *a, **k: pytest.fail("the model was loaded"))
    code = cli.main(["index", str(other), "--db", str(db)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.splitlines() == [err.strip()] and err.startswith("slmgraph: error: index ") and "--replace" in err


def test_a_model_error_comes_before_the_inputs_warnings(tmp_path, capsys, monkeypatch):
    import slmgraph.pipeline as pipeline

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


# --- 6. a no-op re-index writes only its run rows -------------------------------------------------------------


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
    import slmgraph.pipeline as pipeline

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


# --- 7. unused names ---------------------------------------------------------------------------------------


def test_pyflakes_finds_nothing():
    r = subprocess.run([sys.executable, "-m", "pyflakes", "slmgraph", "benchmarks", "tests"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and not r.stdout.strip(), r.stdout + r.stderr
