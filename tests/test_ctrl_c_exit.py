"""A Ctrl-C (a real SIGINT to a ``slmgraph index`` process) while a thread is inside torch's native code: the
process exits 130 with the one interrupted line, never aborts at interpreter exit, and the same command resumes."""

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

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
