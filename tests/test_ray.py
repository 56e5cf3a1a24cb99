"""The Ray executor (``--executor ray``): same index as the local executor, resumable
after a killed actor, no connection beyond the loopback.

Needs the optional extra (``pip install 'slmgraph[ray]'``; the ``test`` extra
includes it because it installs in about 25 s); skipped without it. These
tests use the scripted fake model (its factory is imported by the Ray workers
from this folder); tests/test_integration_ray.py runs the real GGUF.
"""

import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import people_corpus, FakeEmbedder, FakeModel, actor_pids, descendants, fake_model_factory

from slmgraph.indexing.executors.batch import WorkerError
from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.tools.stats import CONTENT_KEYS, content_snapshot
from slmgraph.store.db import Store

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.ray

TESTS = str(Path(__file__).resolve().parent)


@pytest.fixture(autouse=True)
def _ray_workers_import_tests(monkeypatch):
    # Ray's worker processes inherit the driver's environment at ray.init.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([TESTS] + [p for p in [os.environ.get("PYTHONPATH")] if p]))


class SlowFakeModel(FakeModel):
    """The fake model, 0.4 s per extraction call: a run lasts long enough to kill an actor."""

    def complete(self, *a, **k):
        time.sleep(0.4)
        return super().complete(*a, **k)


def slow_model_factory(threads):
    return SlowFakeModel()


def _snapshot(db):
    """``(content, extraction calls repeated, worker ids)`` of an index (slmgraph.tools.stats.content_snapshot)."""
    snap = content_snapshot(db)
    return {k: snap[k] for k in CONTENT_KEYS}, snap["extract_repeats"], snap["workers"]




def test_ray_executor_gives_the_same_index_as_the_local_executor(tmp_path):
    corpus = people_corpus(tmp_path / "c", n_docs=12)
    kw = dict(progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, model_factory=fake_model_factory)
    local = Settings(extract_mode="json", reports="model", min_community_size=2, workers=2)
    run_index(corpus, tmp_path / "local.duckdb", local, say=lambda m: None, **kw)
    notes = []
    out = run_index(corpus, tmp_path / "ray.duckdb", dataclasses.replace(local, executor="ray"), say=notes.append,
                    **kw)
    assert any(n.startswith("extract: 2 Ray actors") for n in notes), notes
    assert out["extract"]["extracted"] == 12 and out["reports"]["model_calls"] > 0
    local, dup_l, w_local = _snapshot(tmp_path / "local.duckdb")
    remote, dup_r, w_ray = _snapshot(tmp_path / "ray.duckdb")
    assert remote == local and dup_l == dup_r == 0
    assert w_ray - {0} and w_ray <= {0, 1, 2}  # the model calls were made by the actors
    assert not ray.is_initialized()  # the local instance this run started is stopped


def test_killed_ray_actor_loses_only_its_units_in_flight_and_the_same_command_finishes(tmp_path, monkeypatch):
    import slmgraph.indexing.stages.extract as extract

    corpus = people_corpus(tmp_path / "c", n_docs=12)
    db = tmp_path / "ray.duckdb"
    settings = Settings(extract_mode="json", reports="model", min_community_size=2, workers=2, executor="ray")
    kw = dict(progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None,
              model_factory=slow_model_factory)
    real = extract.store_extraction
    committed = []

    def store_and_kill(con, chunk_id, key, ex, redo=None):
        real(con, chunk_id, key, ex, redo)
        committed.append(chunk_id)
        if len(committed) == 3:
            pids = actor_pids(os.getpid())
            assert pids
            os.kill(pids[0], signal.SIGKILL)

    monkeypatch.setattr(extract, "store_extraction", store_and_kill)
    with pytest.raises(WorkerError, match="run the same command again"):
        run_index(corpus, db, settings, **kw)
    assert not ray.is_initialized()
    st = Store(db, read_only=True)
    done = st.count("extractions")
    st.close()
    assert 3 <= done < 12
    monkeypatch.setattr(extract, "store_extraction", real)
    out = run_index(corpus, db, settings, **kw)
    assert out["extract"]["reused"] == done and out["extract"]["extracted"] == 12 - done
    resumed, dup, _ = _snapshot(db)
    assert dup == 0  # no text unit was extracted twice
    run_index(corpus, tmp_path / "local.duckdb", dataclasses.replace(settings, executor="local"), **kw)
    assert resumed == _snapshot(tmp_path / "local.duckdb")[0]


@pytest.mark.skipif(not shutil.which("strace"), reason="needs strace to trace the connect calls")
def test_ray_run_connects_to_nothing_but_the_loopback(tmp_path):
    corpus = people_corpus(tmp_path / "c", 4)
    script = tmp_path / "run.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {TESTS!r})\n"
        "from conftest import FakeEmbedder, FakeModel, actor_pids, fake_model_factory\n"
        "from slmgraph.config.settings import Settings\n"
        "from slmgraph.indexing.pipeline import run_index\n"
        f"out = run_index({str(corpus)!r}, {str(tmp_path / 'x.duckdb')!r}, Settings(extract_mode='json', "
        "min_community_size=2, workers=2, executor='ray'), progress=False, model=FakeModel(), embedder_factory=FakeEmbedder, "
        "model_factory=fake_model_factory, say=lambda m: None)\n"
        "assert out['extract']['extracted'] == 4\n")
    trace = tmp_path / "trace"
    env = dict(os.environ)
    env.pop("RAY_USAGE_STATS_ENABLED", None)  # slmgraph must switch it off itself
    res = subprocess.run(["strace", "-f", "-qq", "-e", "trace=connect,sendto,sendmsg", "-o", str(trace),
                          sys.executable, str(script)], capture_output=True, text=True, timeout=600, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    text = trace.read_text()
    assert "connect(" in text  # the trace saw Ray's own (loopback) connections
    import re

    inet = re.findall(r'inet_addr\("([0-9.]+)"\)', text) + re.findall(r'inet_pton\(AF_INET6, "([0-9a-f:.]+)"', text)
    outside = sorted({a for a in inet if not (a.startswith("127.") or a in ("0.0.0.0", "::1", "::", "::ffff:127.0.0.1"))})
    assert outside == [], outside


def _listening(pids) -> list[tuple[str, int]]:
    """``(address, port)`` of the TCP sockets listening in processes ``pids`` (/proc/net/tcp{,6}, kernel docs
    "proc_net_tcp": hex address and port, state 0A = LISTEN; a socket's inode is linked from /proc/PID/fd)."""
    import ipaddress

    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
        except OSError:
            pass
    out = []
    for table, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        for line in Path(table).read_text().splitlines()[1:]:
            f = line.split()
            if f[3] != "0A" or f[9] not in inodes:
                continue
            hexaddr, port = f[1].split(":")
            raw = bytes.fromhex(hexaddr)
            # The kernel prints each 32-bit word in host (little-endian) order.
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            addr = ipaddress.IPv6Address(raw) if v6 else ipaddress.IPv4Address(raw)
            addr = getattr(addr, "ipv4_mapped", None) or addr
            out.append((str(addr), int(port, 16)))
    return out


def test_a_local_ray_run_serves_no_dashboard_and_listens_only_on_the_loopback(tmp_path, monkeypatch):
    """Ray 2.60 starts its API server (ray/dashboard/dashboard.py) and a per-node dashboard agent whatever
    ``include_dashboard`` says (ray/_private/node.py ``start_head_processes``); with it False the server
    loads only its usage-stats module and no web front end. Checked while the run's actors work: no
    dashboard front end, nothing on the dashboard port, every listening socket of the run on 127.0.0.1."""
    import slmgraph.indexing.stages.extract as extract

    corpus = people_corpus(tmp_path / "c", 4)
    settings = Settings(extract_mode="json", min_community_size=2, workers=2, executor="ray")
    real = extract.store_extraction
    seen: dict = {}

    def store_and_look(con, chunk_id, key, ex, redo=None):
        real(con, chunk_id, key, ex, redo)
        if not seen:
            procs = descendants(os.getpid())
            seen["procs"] = procs
            seen["listening"] = _listening(procs)

    monkeypatch.setattr(extract, "store_extraction", store_and_look)
    run_index(corpus, tmp_path / "x.duckdb", settings, progress=False, model=FakeModel(), embedder_factory=FakeEmbedder,
              model_factory=fake_model_factory, say=lambda m: None)
    procs = seen["procs"]
    assert any("ModelActor" in c for c in procs.values())  # looked while the Ray processes ran
    for cmd in procs.values():
        if "dashboard/dashboard.py" in cmd:
            assert "--disable-frontend" in cmd and "--modules-to-load=UsageStatsHead" in cmd, cmd
    assert seen["listening"]  # Ray's own servers (GCS, raylet, object manager) were found
    assert all(addr.startswith("127.") for addr, _ in seen["listening"]), seen["listening"]
    assert 8265 not in {port for _, port in seen["listening"]}  # Ray's dashboard port


def _extraction_rows(db):
    from test_extract_pool import extraction_rows

    return extraction_rows(db)


def test_llm_free_extraction_on_ray_actors_gives_the_same_records_as_the_local_executor(tmp_path):
    corpus = people_corpus(tmp_path / "c", n_docs=12)
    kw = dict(progress=False, embedder_factory=FakeEmbedder)
    local = Settings(min_community_size=2)  # the default route: no model call
    run_index(corpus, tmp_path / "local.duckdb", local, model=FakeModel(), say=lambda m: None, **kw)
    notes = []
    out = run_index(corpus, tmp_path / "ray.duckdb", dataclasses.replace(local, executor="ray"), model=FakeModel(),
                    say=notes.append, **kw)
    assert any(n.startswith("extract: 2 Ray actors (spaCy)") for n in notes), notes
    assert out["extract"]["extracted"] == 12 and out["extract"]["workers"] == 2
    assert _extraction_rows(tmp_path / "ray.duckdb") == _extraction_rows(tmp_path / "local.duckdb")
    assert _snapshot(tmp_path / "ray.duckdb")[0] == _snapshot(tmp_path / "local.duckdb")[0]
    assert not ray.is_initialized()


def test_killed_ray_actor_in_llm_free_extraction_then_the_same_command_extracts_each_unit_once(tmp_path,
                                                                                                monkeypatch):
    import slmgraph.indexing.stages.extract as extract

    corpus = people_corpus(tmp_path / "c", n_docs=12)
    db = tmp_path / "ray.duckdb"
    settings = Settings(min_community_size=2, executor="ray")
    kw = dict(progress=False, embedder_factory=FakeEmbedder, say=lambda m: None)
    real = extract.store_extraction
    committed = []
    kill = [True]

    def store_and_kill(con, chunk_id, key, ex, redo=None):
        real(con, chunk_id, key, ex, redo)
        committed.append(chunk_id)
        if kill[0] and len(committed) == 3:
            pids = actor_pids(os.getpid())
            assert pids
            os.kill(pids[0], signal.SIGKILL)

    monkeypatch.setattr(extract, "store_extraction", store_and_kill)
    with pytest.raises(WorkerError, match="run the same command again"):
        run_index(corpus, db, settings, model=FakeModel(), **kw)
    assert not ray.is_initialized()
    first = list(committed)
    assert 3 <= len(first) < 12
    kill[0] = False
    committed.clear()
    out = run_index(corpus, db, settings, model=FakeModel(), **kw)
    assert out["extract"]["reused"] == len(first) and out["extract"]["extracted"] == 12 - len(first)
    assert sorted(first + committed) == sorted(set(first + committed)) and len(first + committed) == 12
    run_index(corpus, tmp_path / "local.duckdb", dataclasses.replace(settings, executor="local"),
              model=FakeModel(), **kw)
    assert _extraction_rows(db) == _extraction_rows(tmp_path / "local.duckdb")
