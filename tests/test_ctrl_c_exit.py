"""A Ctrl-C (a real SIGINT to a ``slmgraph index`` process) while a thread is inside torch's native code: the
process exits 130 with the one interrupted line, never aborts at interpreter exit, and the same command resumes."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from slmgraph.store.db import Store

TESTS = Path(__file__).resolve().parent

#: The child: ``slmgraph index argv[1] --db argv[2]`` through the command's entry point with the fake model;
#: with ``argv[3] == "hold"`` its graph stage starts a thread busy in torch (as the embed-ahead thread is when an
#: interrupt's grace runs out), prints HOLD and waits for the test's SIGINT.
CHILD = textwrap.dedent("""
    import dataclasses, sys, threading, time
    sys.path.insert(0, sys.argv[4])
    import torch
    from conftest import FakeEmbedder, FakeModel
    import slmgraph.indexing.pipeline as p
    from slmgraph.cli.main import main

    def busy():
        a = torch.randn(600, 600)
        while True:
            a = (a @ a).tanh()

    def held(run):
        def go(ctx):
            res = run(ctx)
            threading.Thread(target=busy, daemon=True).start()
            print("HOLD", flush=True)
            time.sleep(120)
            return res
        return go

    if sys.argv[3] == "hold":
        torch.set_num_threads(2)
        p.STAGES[:] = [dataclasses.replace(st, run=held(st.run)) if st.name == "graph" else st for st in p.STAGES]
    real = p.run_index

    def run_index(input_path, db_path, settings, **kw):
        settings.min_community_size = 2
        kw.update(model=FakeModel(), embedder_factory=FakeEmbedder)
        return real(input_path, db_path, settings, **kw)

    p.run_index = run_index
    sys.argv = ["slmgraph", "index", sys.argv[1], "--db", sys.argv[2], "--quiet"]
    sys.exit(main())
""")


def _child(corpus, db, mode):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(__file__).resolve().parent.parent), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-c", CHILD, str(corpus), str(db), mode, str(TESTS)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def test_ctrl_c_with_a_thread_in_torch_exits_130_without_an_abort_and_the_run_resumes(tmp_path, corpus):
    db = tmp_path / "c.duckdb"
    proc = _child(corpus, db, "hold")
    seen = []
    for line in proc.stdout:
        if line.strip() == "HOLD":
            break
        seen.append(line)
    else:
        raise AssertionError("".join(seen)[-1000:] + proc.communicate(timeout=60)[1][-2000:])
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert "terminate called" not in err and "Traceback" not in err, err[-2000:]
    assert [x for x in err.splitlines() if x.strip()] == [
        "slmgraph: interrupted. Finished work is saved in the index; run the same command again to resume."]
    proc = _child(corpus, db, "run")
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    st = Store(db, read_only=True)
    try:
        assert st.get_meta("complete") == "1"
        assert st.con.execute("SELECT count(*) FROM documents").fetchone()[0] == 3
    finally:
        st.close()


#: The child for a Ctrl-C while the extraction's worker processes start: ``slmgraph index argv[1] --db argv[2]
#: --extractor nlp --workers 2`` with the fake model; with ``argv[3] == "start"``, once Python runs in every
#: worker (its SIGINT handler installed, the stage's modules still to import), SIGINT goes to the whole process
#: group, as a terminal's Ctrl-C does. This process takes its own only once each worker has ended or ignores
#: SIGINT (as when the Ctrl-C finds it inside a long native call), so a worker's reaction is seen, not cut
#: short by the pool's exit.
POOL_CHILD = textwrap.dedent("""
    import os, signal, sys, time
    sys.path.insert(0, sys.argv[4])
    from conftest import FakeEmbedder, FakeModel
    import slmgraph.indexing.executors.batch as batch
    import slmgraph.indexing.pipeline as p
    from slmgraph.cli.main import main

    def sigint_bit(pid, field):
        try:
            with open(f"/proc/{pid}/status") as f:
                mask = next(int(x.split()[1], 16) for x in f if x.startswith(field + ":"))
        except (OSError, StopIteration):
            return None
        return bool(mask & (1 << (signal.SIGINT - 1)))

    real_results = batch.WorkerPool.results

    def results(self, tasks):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(sigint_bit(w.pid, "SigCgt") for w in self.procs):
            time.sleep(0.002)
        held = signal.signal(signal.SIGINT, lambda *a: None)
        os.killpg(os.getpgrp(), signal.SIGINT)
        while time.monotonic() < deadline and not all(
                not w.is_alive() or sigint_bit(w.pid, "SigIgn") for w in self.procs):
            time.sleep(0.002)
        signal.signal(signal.SIGINT, held)
        raise KeyboardInterrupt
        yield

    if sys.argv[3] == "start":
        batch.WorkerPool.results = results
    real = p.run_index

    def run_index(input_path, db_path, settings, **kw):
        kw.update(model=FakeModel(), embedder_factory=FakeEmbedder)
        return real(input_path, db_path, settings, **kw)

    p.run_index = run_index
    sys.argv = ["slmgraph", "index", sys.argv[1], "--db", sys.argv[2], "--extractor", "nlp", "--workers", "2",
                "--quiet"]
    sys.exit(main())
""")


def _group_alive(pgid: int) -> list[str]:
    """``pid command`` of the live (not zombie) processes of process group ``pgid``."""
    out = []
    for d in Path("/proc").iterdir():
        try:
            stat = (d / "stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            if fields[0] != "Z" and int(fields[2]) == pgid:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ")[:120]
                out.append(f"{d.name} {cmd!r}")
        except (OSError, ValueError):  # not a process, or one that has just ended
            continue
    return out


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the workers' signal state in /proc")
def test_ctrl_c_while_the_extraction_workers_start_is_one_line_leaves_no_process_and_the_run_resumes(tmp_path):
    from conftest import people_corpus

    docs = people_corpus(tmp_path / "c", n_docs=12)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(__file__).resolve().parent.parent), os.environ.get("PYTHONPATH", "")]))

    def child(db, mode):
        return subprocess.Popen([sys.executable, "-c", POOL_CHILD, str(docs), str(db), mode, str(TESTS)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))

    db = tmp_path / "i.duckdb"
    proc = child(db, "start")
    _, err = proc.communicate(timeout=180)
    # A worker interrupted while importing printed its KeyboardInterrupt traceback beside the run's own line.
    lines = [x for x in err.splitlines() if x.strip()]
    assert lines == ["slmgraph: interrupted. Finished work is saved in the index; run the same command again to "
                     "resume."], err[-3000:]
    assert proc.returncode == 130
    deadline = time.monotonic() + 10
    while _group_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _group_alive(proc.pid)
    for target in (db, tmp_path / "whole.duckdb"):  # the interrupted run resumed, and one never interrupted
        proc = child(target, "run")
        _, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err[-2000:]
    tables = ("documents", "text_units", "entity_mentions", "relationship_mentions", "entities", "relationships")
    rows = []
    for target in (db, tmp_path / "whole.duckdb"):
        st = Store(target, read_only=True)
        try:
            assert st.get_meta("complete") == "1"
            rows.append({t: sorted(map(repr, st.con.execute(
                f"SELECT * EXCLUDE (added_at) FROM {t}" if t == "documents" else f"SELECT * FROM {t}").fetchall()))
                for t in tables})
        finally:
            st.close()
    assert rows[0]["entity_mentions"] and rows[0] == rows[1]
