"""Crash safety: SIGKILL during extraction, then the same command resumes to
the same index as an uninterrupted run, extracting no text unit twice.

Runs the real bundled GGUF in subprocesses on the bundled sample (a few minutes).
"""

import os
import signal
import subprocess
import sys
import time

import pytest

from slmgraph.samples import DULCE
from slmgraph.tools.stats import content_snapshot
from slmgraph.store.db import Store

pytestmark = pytest.mark.integration


def _cmd(db):
    # --descriptions model: the model writes each text unit's records (the route whose calls take time and
    # can be killed half-way); the default route under 1B makes no model call during extraction.
    return [sys.executable, "-m", "slmgraph.cli.main", "index", str(DULCE), "--db", str(db), "--descriptions", "model"]


def _snapshot(db):
    """``(content, extraction calls)`` of an index (slmgraph.tools.stats.content_snapshot)."""
    snap = content_snapshot(db)
    return {k: snap[k] for k in ("extractions", "entities", "reports")}, snap["extract_calls"]


def test_sigkill_mid_extraction_then_resume_matches_uninterrupted_run(tmp_path):
    # A private temp folder: the llama.cpp thread registry of this test's
    # subprocesses is then not shared with the pytest process's own model.
    env = dict(os.environ, PYTHONUNBUFFERED="1", TMPDIR=str(tmp_path))
    killed = tmp_path / "killed.duckdb"
    proc = subprocess.Popen(_cmd(killed), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env, text=True)
    seen = ""
    deadline = time.time() + 600
    while time.time() < deadline:
        chunk = proc.stderr.read(64)
        if not chunk:
            break
        seen += chunk
        if "| 3/10" in seen:  # tqdm: 3 of 10 text units committed
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, seen[-500:]

    st = Store(killed, read_only=True)
    done_before = st.count("extractions")
    st.close()
    assert 3 <= done_before < 10

    resumed = subprocess.run(_cmd(killed), capture_output=True, text=True, env=env, timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"{10 - done_before} text units extracted, {done_before} reused" in resumed.stderr

    fresh = tmp_path / "fresh.duckdb"
    clean = subprocess.run(_cmd(fresh), capture_output=True, text=True, env=env, timeout=900)
    assert clean.returncode == 0, clean.stderr[-2000:]

    snap_killed, calls_killed = _snapshot(killed)
    snap_fresh, calls_fresh = _snapshot(fresh)
    assert snap_killed == snap_fresh
    # no text unit was extracted twice: the killed and the resumed run together made 10
    # extraction calls (a call that finished before the kill but whose rows were not yet
    # written is answered from the index's cache on resume, without a model call)
    assert calls_fresh == 10
    assert calls_killed == 10
