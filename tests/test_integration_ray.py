"""Integration: the demo story indexed by the real GGUF with ``--executor ray`` on a
local Ray instance: the same index as the local executor, and a Ray actor killed
mid-extraction then the same command: no text unit extracted twice.

Each index run takes a few minutes on 2 cores; CI runs these (the ``test`` extra
installs Ray in about 25 s). Skipped without Ray.
"""

import os
import re
import signal
import subprocess
import sys
import time

import pytest
from conftest import actor_pids

from slmgraph.samples import DULCE
from slmgraph.tools.stats import content_snapshot
from slmgraph.store.db import Store

pytest.importorskip("ray")
pytestmark = [pytest.mark.integration, pytest.mark.ray]

#: The same model processes for both executors: two 1-thread workers / actors. ``--descriptions
#: model`` and ``--reports model`` make the 135M model extract JSON records, write descriptions
#: and write the community reports, as models of 1B parameters and more do (by default it
#: extracts and reports with no model call: nothing would run on Ray).
PLAN = ["--workers", "2", "--threads", "1", "--descriptions", "model", "--reports", "model"]


def _cmd(db, *extra):
    return [sys.executable, "-m", "slmgraph.cli.main", "index", str(DULCE), "--db", str(db), *PLAN, *extra]


def _snapshot(db):
    """``(content, extraction calls repeated, extraction calls)`` of an index (slmgraph.tools.stats.content_snapshot)."""
    snap = content_snapshot(db)
    content = {k: snap[k] for k in ("entities", "relationships", "communities", "reports")}
    return content, snap["extract_repeats"], snap["extract_calls"]


@pytest.fixture(scope="module")
def local_index(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("local")
    env = dict(os.environ, TMPDIR=str(tmp))
    res = subprocess.run(_cmd(tmp / "local.duckdb"), capture_output=True, text=True, env=env, timeout=1500)
    assert res.returncode == 0, res.stderr[-2000:]
    return _snapshot(tmp / "local.duckdb")


def test_demo_on_a_local_ray_instance_gives_the_same_index_as_the_local_executor(tmp_path, local_index):
    res = subprocess.run(_cmd(tmp_path / "ray.duckdb", "--executor", "ray"), capture_output=True, text=True,
                         timeout=1500)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "2 Ray actors" in res.stderr
    snap, dup, calls = _snapshot(tmp_path / "ray.duckdb")
    assert snap == local_index[0]
    assert all(snap[k] for k in ("entities", "communities", "reports"))
    assert dup == 0 and calls == local_index[2]


def test_killed_ray_actor_mid_extraction_then_the_same_command_extracts_nothing_twice(tmp_path, local_index):
    db = tmp_path / "ray.duckdb"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(_cmd(db, "--executor", "ray"), stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            env=env, text=True)
    seen, killed, total = "", [], 0
    deadline = time.time() + 1200
    while time.time() < deadline:
        chunk = proc.stderr.read(64)
        if not chunk:
            break
        seen += chunk
        bars = re.findall(r"extract:.*?\| *(\d+)/(\d+) ", seen)  # tqdm: done/total text units committed
        if not killed and bars and int(bars[-1][0]) >= 3:
            total = int(bars[-1][1])
            pids = actor_pids(proc.pid)
            assert pids, seen[-500:]
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])
    proc.wait(timeout=120)
    assert killed and proc.returncode == 1, seen[-1500:]
    assert "run the same command again" in seen
    st = Store(db, read_only=True)
    done = st.count("extractions")
    st.close()
    assert 3 <= done < total

    res = subprocess.run(_cmd(db, "--executor", "ray"), capture_output=True, text=True, timeout=1500)
    assert res.returncode == 0, res.stderr[-2000:]
    assert f"{total - done} text units extracted, {done} reused" in res.stderr
    snap, dup, calls = _snapshot(db)
    assert dup == 0  # no text unit was extracted twice
    assert calls == local_index[2]  # killed + resumed made as many extraction calls as one clean run
    assert snap == local_index[0]


def test_default_llm_free_build_on_a_local_ray_instance_gives_the_same_index_as_one_process(tmp_path):
    """The default route (no model call) with the real GGUF's tokenizer: spaCy extraction on two Ray actors
    builds what the extraction in the ``index`` process builds (the demo is below the local pool's size)."""
    def build(db, *extra):
        res = subprocess.run([sys.executable, "-m", "slmgraph.cli.main", "index", str(DULCE), "--db", str(db),
                              *extra], capture_output=True, text=True, timeout=1500)
        assert res.returncode == 0, res.stderr[-2000:]
        return res.stderr

    local = build(tmp_path / "local.duckdb")
    assert "worker processes" not in local
    remote = build(tmp_path / "ray.duckdb", "--executor", "ray")
    assert "extract: 2 Ray actors (spaCy)" in remote, remote[-2000:]
    snap, _, calls = _snapshot(tmp_path / "ray.duckdb")
    assert calls == 0 and snap["entities"] and snap["communities"]
    assert snap == _snapshot(tmp_path / "local.duckdb")[0]
