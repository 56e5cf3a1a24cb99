"""The batch engine: thread plan, worker processes, one writer (issue 4)."""

import pytest
from conftest import FakeEmbedder, FakeModel, fake_model_factory

from slmgraph.indexing.executors.batch import BufferedLedger, plan_threads
from slmgraph.config.settings import Settings
from slmgraph.errors import UserError
from slmgraph.indexing.pipeline import run_index
from slmgraph.store.db import Store


def test_default_plan_never_oversubscribes():
    for cores in (1, 2, 4, 8):
        for units in (1, 3, 100):
            p = plan_threads(cores, units)
            assert p.workers * p.threads <= cores and p.warning is None
            assert p.workers <= max(1, units)
    assert plan_threads(2, 1).workers == 1 and plan_threads(2, 1).threads == 2  # one unit: one process, all cores


def test_overrides_fill_the_other_dimension_and_warn_on_oversubscription():
    assert (plan_threads(8, 100, workers=2).threads, plan_threads(8, 100, threads=4).workers) == (4, 2)
    p = plan_threads(2, 100, workers=2, threads=2)
    assert (p.workers, p.threads) == (2, 2) and "4 llama.cpp threads on 2 cores" in p.warning
    with pytest.raises(UserError, match="--workers 0"):
        plan_threads(2, 10, workers=0)


def test_buffered_ledger_answers_from_snapshot_and_buffers_writes():
    led = BufferedLedger({"k1": ("out", "stop", [1, 2])})
    assert led.cache_get("k1") == ("out", "stop", [1, 2]) and led.cache_get("k2") is None
    led.cache_put("k2", "extract", "o2", "stop", [3])
    led.record_call("run", "extract", 1, "m", 10, 5, 3, 0.1, "stop", 0.05)
    assert led.cache_get("k2") == ("o2", "stop", [3])
    calls, puts = led.drain()
    assert len(calls) == 1 and puts == [("k2", "extract", "o2", "stop", [3])]
    assert led.drain() == ([], [])


def _snapshot(db):
    st = Store(db, read_only=True)
    q = st.con.execute
    snap = (q("SELECT chunk_id, cache_key, status, raw FROM extractions ORDER BY 1").fetchall(),
            q("SELECT norm, type, description FROM entities ORDER BY 1").fetchall(),
            q("SELECT level, full_text FROM community_reports ORDER BY 1, 2").fetchall())
    workers = q("SELECT worker, count(*) FROM llm_calls WHERE stage = 'extract' GROUP BY 1 ORDER BY 1").fetchall()
    cache = q("SELECT count(*) FROM llm_cache WHERE stage = 'extract'").fetchone()[0]
    st.close()
    return snap, workers, cache


def test_two_worker_processes_give_the_same_index_as_one(tmp_path, corpus):
    one, two = tmp_path / "one.duckdb", tmp_path / "two.duckdb"
    run_index(corpus, one, Settings(extract_mode="json", min_community_size=2, workers=1), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)
    notes = []
    out = run_index(corpus, two, Settings(extract_mode="json", min_community_size=2, workers=2), progress=False, model=FakeModel(),
                    embedder_factory=FakeEmbedder, say=notes.append, model_factory=fake_model_factory)
    assert out["extract"]["workers"] == 2
    assert any("2 worker processes" in n for n in notes)
    s1, w1, c1 = _snapshot(one)
    s2, w2, c2 = _snapshot(two)
    assert s1 == s2
    assert [w for w, _ in w1] == [0]  # in-process
    assert {w for w, _ in w2} <= {1, 2} and sum(n for _, n in w2) == sum(n for _, n in w1)  # per-worker ledger
    assert c1 == c2 > 0  # the workers' cache entries reached the index
    # re-running with workers answers everything from the index: no extraction call
    out = run_index(corpus, two, Settings(extract_mode="json", min_community_size=2, workers=2), progress=False, model=FakeModel(),
                    embedder_factory=FakeEmbedder, say=lambda m: None, model_factory=fake_model_factory)
    assert out["extract"]["extracted"] == 0


def test_worker_user_error_surfaces_as_one_line_error(tmp_path, corpus):
    with pytest.raises(UserError, match="does not fit"):
        run_index(corpus, tmp_path / "x.duckdb", Settings(extract_mode="json", min_community_size=2, workers=2), progress=False,
                  model=FakeModel(), embedder_factory=FakeEmbedder, say=lambda m: None,
                  model_factory=tiny_window_factory)


def tiny_window_factory(threads):
    return FakeModel(n_ctx=40)


def _clustered_corpus(root):
    """Four groups of four people, each group linked to the next by one sentence:
    with a small report budget the root communities need their children's reports."""
    import itertools

    root.mkdir(parents=True)
    first = ["Alice", "Bruno", "Clara", "Dmitri", "Elena", "Farid", "Greta", "Hiro", "Ines", "Jonas", "Kira", "Lars",
             "Mona", "Nils", "Olga", "Pavel"]
    last = ["Smith", "Weber", "Rossi", "Tanaka"]
    for g, ln in enumerate(last):
        names = [f"{f} {ln}" for f in first[g * 4:(g + 1) * 4]]
        lines = [f"{a} worked with {b} at {ln} Labs in {ln}ville." for a, b in itertools.combinations(names, 2)]
        lines.append(f"{names[0]} once met {first[((g + 1) % 4) * 4]} {last[(g + 1) % 4]} in Geneva.")
        (root / f"g{g}.txt").write_text("\n".join(lines) + "\n")
    return root


def test_reports_in_worker_processes_equal_the_serial_reports(tmp_path):
    corpus = _clustered_corpus(tmp_path / "c")
    settings = dict(extract_mode="json", reports="model", min_community_size=2, report_context_tokens=300)
    one, two = tmp_path / "one.duckdb", tmp_path / "two.duckdb"
    out1 = run_index(corpus, one, Settings(workers=1, **settings), progress=False, model=FakeModel(),
                     embedder_factory=FakeEmbedder, say=lambda m: None)
    notes = []
    out2 = run_index(corpus, two, Settings(workers=2, **settings), progress=False, model=FakeModel(),
                     embedder_factory=FakeEmbedder, say=notes.append, model_factory=fake_model_factory)
    assert out1["reports"]["workers"] == 1 and out2["reports"]["workers"] == 2
    assert any(n.startswith("reports: 2 worker processes") for n in notes)
    assert out1["reports"]["model_calls"] == out2["reports"]["model_calls"] > 0

    def reports(db):
        st = Store(db, read_only=True)
        rows = st.con.execute("SELECT community_id, level, title, summary, findings, rating, full_text, "
                              "context_tokens, context_kind FROM community_reports ORDER BY 1").fetchall()
        workers = {w for (w,) in st.con.execute("SELECT worker FROM llm_calls WHERE stage = 'report'").fetchall()}
        n_cache = st.con.execute("SELECT count(*) FROM llm_cache WHERE stage = 'report'").fetchone()[0]
        st.close()
        return rows, workers, n_cache

    r1, w1, c1 = reports(one)
    r2, w2, c2 = reports(two)
    assert r1 == r2
    assert any(r[8] == "sub-reports" for r in r1)  # parents substituted their children's reports
    assert w1 == {0} and w2 <= {1, 2} and w2
    assert c1 == c2 > 0  # the workers' cache entries and ledger rows reached the index
    # the same command again after an interruption (index marked unfinished, so the reports stage runs):
    # every report from the index cache, no model call
    st = Store(two)
    st.set_meta("complete", "0")
    st.close()
    out3 = run_index(corpus, two, Settings(workers=2, **settings), progress=False, model=FakeModel(),
                     embedder_factory=FakeEmbedder, say=lambda m: None, model_factory=fake_model_factory)
    assert out3["reports"]["model_calls"] == 0 and out3["reports"]["cache_hits"] == out2["reports"]["model_calls"]
    assert reports(two)[0] == r1


def test_ray_executor_without_ray_is_one_line_naming_the_extra(tmp_path, corpus, monkeypatch, capsys):
    import sys

    from slmgraph.cli.main import main

    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed: import raises ImportError
    db = tmp_path / "x.duckdb"
    assert main(["index", str(corpus), "--db", str(db), "--executor", "ray"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["slmgraph: error: --executor ray needs Ray, which is not installed: pip install 'slmgraph[ray]'"]
    assert not db.exists()  # refused before anything was opened
    assert main(["index", str(corpus), "--db", str(db), "--ray-address", "auto"]) == 2
    assert "--ray-address auto needs --executor ray" in capsys.readouterr().err
