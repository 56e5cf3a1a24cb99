"""The model-writing routes, forced on, with the real bundled GGUF end to end on a tiny corpus: a SIGKILL
during extraction and another during the community reports, each followed by a resume, repeat no model
call and give the index an uninterrupted run gives."""

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from slmgraph.samples import DULCE
from slmgraph.tools.stats import content_snapshot
from slmgraph.store.db import Store

pytestmark = pytest.mark.integration

#: Every model stage on (JSON extraction with descriptions and gleaning, element summaries, reports, claims).
FORCED = ["--descriptions", "model", "--summaries", "model", "--reports", "model", "--claims", "--workers", "1"]


def _cmd(src, db):
    return [sys.executable, "-m", "slmgraph.cli.main", "index", str(src), "--db", str(db), *FORCED]


def _run_until(cmd, env, pattern):
    """Start ``cmd``, SIGKILL it once its stderr matches ``pattern``; returns what it printed."""
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env, text=True)
    seen, matched = "", False
    deadline = time.time() + 1800
    while time.time() < deadline and not matched:
        chunk = proc.stderr.read(32)
        if not chunk:
            break
        seen += chunk
        matched = re.search(pattern, seen) is not None
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert matched, f"never printed {pattern!r}: {seen[-800:]}"
    return seen


def _calls(db):
    """``{stage: real model calls}`` and the cache keys called more than once, over every run of ``db``."""
    st = Store(db, read_only=True)
    try:
        per = dict(st.con.execute("SELECT stage, count(*) FROM llm_calls GROUP BY stage").fetchall())
        twice = st.con.execute("SELECT key, stage, count(*) FROM llm_calls WHERE key IS NOT NULL GROUP BY key, stage "
                               "HAVING count(*) > 1").fetchall()
    finally:
        st.close()
    return per, twice


def test_sigkill_during_extraction_and_reports_then_resume_repeats_no_model_call(tmp_path):
    src = tmp_path / "story.txt"
    src.write_text(DULCE.read_text(encoding="utf-8")[:4500], encoding="utf-8")  # a few text units
    env = dict(os.environ, PYTHONUNBUFFERED="1", TMPDIR=str(tmp_path))
    killed = tmp_path / "killed.duckdb"
    _run_until(_cmd(src, killed), env, r"extract:[^\n\r]*\| 1/\d+")
    st = Store(killed, read_only=True)
    units = st.count("text_units")
    assert 1 <= st.count("extractions") < units and not st.count("community_reports")
    st.close()
    _run_until(_cmd(src, killed), env, r"reports:[^\n\r]*\| [1-9]\d*/\d+")
    st = Store(killed, read_only=True)
    assert st.count("extractions") == units and st.get_meta("complete") == "0"
    st.close()
    done = subprocess.run(_cmd(src, killed), capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]

    fresh = tmp_path / "fresh.duckdb"
    clean = subprocess.run(_cmd(src, fresh), capture_output=True, text=True, env=env, timeout=900)
    assert clean.returncode == 0, clean.stderr[-2000:]
    snap_k, snap_f = content_snapshot(killed), content_snapshot(fresh)
    for k in ("extractions", "entities", "reports"):
        assert snap_k[k] == snap_f[k], k
    per_k, twice = _calls(killed)
    per_f, _ = _calls(fresh)
    assert not twice, twice  # no call was made twice across the three runs
    assert per_f.get("extract") and per_f.get("report") and per_f.get("summarize") and per_f.get("claims"), per_f
    assert per_k == per_f  # the killed runs and the resume made exactly the calls of one clean run


def test_a_candidate_name_with_a_quote_does_not_break_the_json_extraction_grammar(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text('Wilfried "Willi" Schneider won gold in Turin. Duff Gibson trained with Wilfried "Willi" Schneider '
                   "in Calgary.\n", encoding="utf-8")
    env = dict(os.environ, TMPDIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-m", "slmgraph.cli.main", "index", str(src), "--db", str(tmp_path / "q.duckdb"),
                           "--descriptions", "model", "--reports", "data", "--quiet"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    st = Store(tmp_path / "q.duckdb", read_only=True)
    try:
        calls = st.con.execute("SELECT count(*) FROM llm_calls WHERE stage = 'extract'").fetchone()[0]
    finally:
        st.close()
    assert calls == 1
