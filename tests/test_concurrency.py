"""Issue 13 items 11 and 12: queries run side by side with each other and with readers, their ledger and
cache rows kept aside and merged when the index is next opened for writing; while an index run holds the
file, readers refuse at once or wait up to --wait; defaults scale to the window; the question can come from
standard input or a file; an overlong question is refused with one line."""

import io
import re
import subprocess
import sys
import textwrap

import pytest
from conftest import FakeEmbedder, FakeModel

import slmgraph.indexing.stages.embed
import slmgraph.model.backend
from slmgraph.api import max_question_tokens
from slmgraph.cli.main import main
from slmgraph.config.settings import Settings
from slmgraph.errors import UserError
from slmgraph.indexing.pipeline import run_index
from slmgraph.store.db import Store


@pytest.fixture
def index(tmp_path, corpus):
    db = tmp_path / "idx.duckdb"
    run_index(corpus, db, Settings(min_community_size=2), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)
    return db


def _holder(db, read_only: bool):
    """A process that opens ``db`` (read-only: and writes one ledger and one cache row), prints 'ready',
    and holds the file until its standard input closes."""
    code = textwrap.dedent(f"""
        import sys
        from slmgraph.store.db import Store
        st = Store({str(db)!r}, read_only={read_only})
        if {read_only}:
            st.record_call("other", "basic", 0, "m", 10, 0, 5, 0.1, "stop")
            st.cache_put("key-from-other", "basic", "an answer", "stop", [1, 2])
        print("ready", flush=True)
        sys.stdin.read()
        st.close()
    """)
    p = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    return p


def _release(p):
    p.stdin.close()
    assert p.wait(timeout=60) == 0


def test_readers_run_side_by_side_and_their_rows_are_merged_by_the_next_writer(index):
    calls_before = Store(index, read_only=True)
    n0 = calls_before.count("llm_calls")
    calls_before.close()
    other = _holder(index, read_only=True)
    try:
        mine = Store(index, read_only=True)  # a second reader while the first holds the file
        mine.record_call("mine", "local", 0, "m", 20, 0, 7, 0.2, "stop")
        mine.cache_put("key-from-me", "local", "my answer", "stop")
        assert mine.cache_get("key-from-me") == ("my answer", "stop", None)  # its own rows, before any merge
        assert mine.count("llm_calls") == n0  # nothing written into the index by a reader
        mine.close()
        with pytest.raises(UserError, match="open in another process .*--wait SECONDS"):
            Store(index)  # a writer is refused while a reader holds the file
        assert len(Store.pending_files(Store(index, read_only=True))) == 2
    finally:
        _release(other)
    st = Store(index)  # opened for writing: both readers' rows are merged
    assert st.count("llm_calls") == n0 + 2
    assert {r[0] for r in st.con.execute("SELECT run_id FROM llm_calls").fetchall()} >= {"mine", "other"}
    assert st.cache_get("key-from-other") == ("an answer", "stop", [1, 2])
    assert st.pending_files() == []
    st.close()


def test_a_pending_file_is_merged_once_even_if_its_removal_was_lost(index):
    r = Store(index, read_only=True)
    r.record_call("once", "basic", 0, "m", 1, 0, 1, 0.1, "stop")
    f = r.pending_files()[0]
    r.close()
    text = f.read_text()
    f.write_text(text + '["call", ["cut short by a ki')  # a line cut short by a kill is skipped
    w = Store(index)
    assert w.con.execute("SELECT count(*) FROM llm_calls WHERE run_id = 'once'").fetchone()[0] == 1
    w.close()
    f.write_text(text)  # as if the process died after the commit but before removing the file
    w = Store(index)
    assert w.con.execute("SELECT count(*) FROM llm_calls WHERE run_id = 'once'").fetchone()[0] == 1
    w.close()


def test_during_an_index_run_readers_refuse_at_once_or_wait(index):
    writer = _holder(index, read_only=False)
    try:
        with pytest.raises(UserError) as exc:
            Store(index, read_only=True)
        assert "being written by another process (PID" in str(exc.value) and "--wait SECONDS" in str(exc.value)
        with pytest.raises(UserError, match=r"still being written by .* after waiting 0.3 s"):
            Store(index, read_only=True, wait=0.3)
        notes = []
        import threading
        threading.Timer(1.0, lambda: _release(writer)).start()
        st = Store(index, read_only=True, wait=30, on_wait=notes.append)  # waits for the writer to finish
        assert st.get_meta("complete") == "1"
        st.close()
        assert len(notes) == 1 and "waiting up to 30 s" in notes[0]
    finally:
        if writer.poll() is None:
            _release(writer)


def test_a_busy_index_is_one_sentence_naming_the_file_its_holder_and_what_to_do(index):
    writer = _holder(index, read_only=False)
    try:
        said = []
        with pytest.raises(UserError) as waited:
            Store(index, read_only=True, wait=0.3, on_wait=said.append)
        with pytest.raises(UserError) as at_once:
            Store(index, read_only=True)
    finally:
        _release(writer)
    holder = rf"another process \(PID {writer.pid}, such as an 'slmgraph index' run\)"
    assert re.fullmatch(rf"index {re.escape(str(index))} is being written by {holder}: waiting up to 0.3 s for it "
                        "to finish", said[0])
    assert re.fullmatch(rf"index {re.escape(str(index))} is still being written by {holder} after waiting 0.3 s: "
                        "run again when it has finished, or pass a longer --wait", str(waited.value))
    assert re.fullmatch(rf"index {re.escape(str(index))} is being written by {holder}: run again when it has "
                        "finished, or pass --wait SECONDS to wait for it", str(at_once.value))
    reader = _holder(index, read_only=True)
    try:
        with pytest.raises(UserError) as writing:
            Store(index, wait=0.3)
    finally:
        _release(reader)
    assert re.fullmatch(rf"index {re.escape(str(index))} is still open in another process \(PID {reader.pid}, such "
                        r"as an 'slmgraph index', 'query' or 'stats' run\) after waiting 0.3 s: run again when it "
                        "has finished, or pass a longer --wait", str(writing.value))


@pytest.fixture
def fake_query(monkeypatch):
    """``slmgraph query`` with the fake model (built for the given --n-ctx, trained for 8,192 tokens as the
    bundled model) and embedder."""
    made = []

    def load_model(path, n_ctx, *a, **kw):
        made.append(FakeModel(n_ctx=n_ctx, n_ctx_train=8192))
        return made[-1]

    monkeypatch.setattr(slmgraph.model.backend, "load_model", load_model)
    monkeypatch.setattr(slmgraph.indexing.stages.embed, "Embedder", lambda **kw: FakeEmbedder())
    monkeypatch.setattr("slmgraph.query.question_embed.question_embedder", lambda *a, **k: FakeEmbedder())
    return made


def _q(capsys, *argv, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(["query", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_query_runs_while_another_reader_holds_the_index(index, capsys, fake_query):
    other = _holder(index, read_only=True)
    try:
        code, out, err = _q(capsys, "--db", str(index), "--model", __file__, "--method", "basic",
                            "Where is Acme Corporation?")
        assert code == 0, err
        assert "Sources" in out
    finally:
        _release(other)


def test_n_ctx_2048_works_with_the_default_budgets_and_only_given_values_are_refused(index, capsys, fake_query):
    code, _, err = _q(capsys, "--db", str(index), "--model", __file__, "--n-ctx", "2048", "--method", "local",
                      "Who is Alice Smith?")
    assert code == 0, err
    code, _, err = _q(capsys, "--db", str(index), "--model", __file__, "--n-ctx", "2048", "--local-tokens", "3000",
                      "--method", "local", "Who is Alice Smith?")
    assert code == 2 and "--local-tokens 3000 does not fit the 2048-token window" in err
    s = Settings(n_ctx=2048)
    s.scale_to_window()
    assert s.local_context_tokens == 750


def test_the_question_from_standard_input_or_a_file(index, tmp_path, capsys, fake_query, monkeypatch):
    long_q = "Which organisation did Alice Smith found? " + "Please be precise. " * 30
    code, out, err = _q(capsys, "--db", str(index), "--model", __file__, "--method", "basic", "-",
                        stdin=long_q, monkeypatch=monkeypatch)
    assert code == 0, err
    f = tmp_path / "q.txt"
    f.write_text(long_q)
    code, out, err = _q(capsys, "--db", str(index), "--model", __file__, "--method", "basic", "--question-file", str(f))
    assert code == 0, err
    code, _, err = _q(capsys, "--db", str(index), "--question-file", str(tmp_path / "nope.txt"))
    assert code == 2 and "--question-file" in err and "nope.txt" in err
    code, _, err = _q(capsys, "--db", str(index), "--question-file", str(f), "also an argument")
    assert code == 2 and "not both" in err
    code, _, err = _q(capsys, "--db", str(index))
    assert code == 2 and "standard input" in err


def test_an_overlong_question_is_refused_with_one_line(index, capsys, fake_query):
    question = " ".join(f"word{i}" for i in range(5800))  # issue 13: 5,800 words gave an empty answer after 290 s
    code, _, err = _q(capsys, "--db", str(index), "--model", __file__, question)
    assert code == 2
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and "the question is 5800 tokens long; at most 1024" in lines[0]
    assert "--n-ctx" not in lines[0] and "shorten it to at most 1024 tokens" in lines[0]  # 8,192 is the model's most
    assert max_question_tokens(2048) == 256
    assert not [m for m in fake_query if m.calls]  # refused before any model call


@pytest.mark.parametrize("command", ["stats", "query"])
def test_a_negative_wait_is_refused(index, capsys, command):
    argv = [command, "--db", str(index), "--wait", "-1"] + (["q"] if command == "query" else [])
    assert main(argv) == 2
    assert "--wait -1.0 must be a number of seconds >= 0" in capsys.readouterr().err


def test_a_query_whose_side_file_cannot_be_written_warns_instead_of_a_traceback(tmp_path, caplog):
    """A full disk under a read-only query: the rows kept aside are lost with one warning, no OSError."""
    import logging

    from slmgraph.store.db import Store

    db = tmp_path / "x.duckdb"
    Store(db, create=True).close()
    st = Store(db, read_only=True)

    class FullDisk:
        def write(self, s):
            raise OSError(28, "No space left on device")

        def flush(self):
            pass

        def close(self):
            raise OSError(28, "No space left on device")

    st._pending_file = FullDisk()
    st._pending_write("call", [1, 2])
    with caplog.at_level(logging.WARNING, logger="slmgraph"):
        st.close()
    assert any("were not saved" in r.getMessage() and "No space left" in r.getMessage() for r in caplog.records)
