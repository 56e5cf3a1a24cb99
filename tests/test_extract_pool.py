"""The LLM-free extraction in worker processes: the same records as in one process, committed by the one
writer, resumable after a killed worker without extracting a unit twice, and no embed-ahead thread beside
workers that take every core."""

import dataclasses
import os
import signal

import pytest
from conftest import people_corpus, FakeEmbedder, FakeModel

from slmgraph.config.settings import Settings
from slmgraph.indexing.executors.batch import WorkerError
from slmgraph.indexing.pipeline import run_index
from slmgraph.store.db import Store

#: The tables an extraction writes, compared order-independently (the columns that do not depend on the run).
TABLES = {
    "extractions": "chunk_id, cache_key, status, n_candidates, n_entities, n_relationships, n_dropped, raw, "
                   "n_ungrounded, n_left_out",
    "entity_mentions": "*",
    "relationship_mentions": "*",
    "concept_mentions": "*",
    "concept_links": "*",
}


def extraction_rows(db) -> dict:
    st = Store(db, read_only=True)
    try:
        return {t: sorted(map(repr, st.con.execute(f"SELECT {cols} FROM {t}").fetchall())) for t, cols in TABLES.items()}
    finally:
        st.close()




def test_worker_processes_write_the_records_of_the_one_process_extraction(tmp_path):
    # several units per task: their texts parsed together
    docs = people_corpus(tmp_path / "c", n_docs=40, report_on="the water quality of Geneva")
    kw = dict(progress=False, embedder_factory=FakeEmbedder)
    one = Settings()
    notes = []
    out = run_index(docs, tmp_path / "one.duckdb", one, model=FakeModel(), say=notes.append, **kw)
    # Forty units stay in this process (the workers' start would cost more), with the thread beside them.
    assert out["extract"]["workers"] == 1 and not any("worker processes" in n for n in notes), notes
    assert "embed_ahead" in out
    notes = []
    out = run_index(docs, tmp_path / "two.duckdb", dataclasses.replace(one, workers=2), model=FakeModel(),
                    say=notes.append, **kw)
    assert any(n.startswith("extract: 2 worker processes (spaCy)") for n in notes), notes
    assert out["extract"]["extracted"] == 40 and out["extract"]["workers"] == 2
    # The workers take every core: the thread starts only after extraction, beside the graph stage.
    assert "embed_ahead" in out
    one_rows, two_rows = extraction_rows(tmp_path / "one.duckdb"), extraction_rows(tmp_path / "two.duckdb")
    assert two_rows["entity_mentions"] and two_rows["concept_mentions"]
    assert two_rows == one_rows


def test_a_killed_worker_loses_only_its_units_in_flight_and_the_rerun_extracts_each_unit_once(tmp_path, monkeypatch):
    import slmgraph.indexing.stages.extract as extract

    docs = people_corpus(tmp_path / "c", n_docs=40, report_on="the water quality of Geneva")
    db = tmp_path / "x.duckdb"
    settings = Settings(workers=2)
    kw = dict(progress=False, embedder_factory=FakeEmbedder, say=lambda m: None)
    real = extract.store_extraction
    committed = []

    def store_and_kill(con, chunk_id, key, ex, redo=None):
        real(con, chunk_id, key, ex, redo)
        committed.append(chunk_id)
        if len(committed) == 1:  # every worker, before they finish the units queued for them
            import multiprocessing

            for p in multiprocessing.active_children():
                os.kill(p.pid, signal.SIGKILL)

    monkeypatch.setattr(extract, "store_extraction", store_and_kill)
    with pytest.raises(WorkerError, match="run the same command again"):
        run_index(docs, db, settings, model=FakeModel(), **kw)
    st = Store(db, read_only=True)
    done = st.count("extractions")
    st.close()
    assert 1 <= done < 40
    committed_first = list(committed)
    monkeypatch.setattr(extract, "store_extraction", store_and_kill)
    committed.clear()
    committed.append("x")  # no kill on the rerun
    out = run_index(docs, db, settings, model=FakeModel(), **kw)
    rerun = committed[1:]
    assert out["extract"]["reused"] == done and out["extract"]["extracted"] == 40 - done
    assert not set(rerun) & set(committed_first) and len(set(rerun)) == len(rerun)
    run_index(docs, tmp_path / "one.duckdb", dataclasses.replace(settings, workers=1), model=FakeModel(), **kw)
    assert extraction_rows(db) == extraction_rows(tmp_path / "one.duckdb")


def test_the_workers_start_while_ingest_cuts_and_give_the_records_of_the_one_process_extraction(tmp_path, monkeypatch):
    import slmgraph.indexing.pipeline as pipeline

    docs = people_corpus(tmp_path / "c", n_docs=60, report_on="the water quality of Geneva")
    kw = dict(progress=False, embedder_factory=FakeEmbedder, say=lambda m: None)
    events = []
    real_ingest, real_start = pipeline.ingest, pipeline.start_nlp_pool

    def ingest(*a, **k):
        events.append("ingest starts")
        try:
            return real_ingest(*a, **k)
        finally:
            events.append("ingest ends")

    def start(*a, **k):
        pool = real_start(*a, **k)
        events.append(("workers started", pool is not None))
        return pool

    monkeypatch.setattr(pipeline, "ingest", ingest)
    monkeypatch.setattr(pipeline, "start_nlp_pool", start)
    out = pipeline.run_index(docs, tmp_path / "two.duckdb", Settings(workers=2), model=FakeModel(), **kw)
    # Started once, as soon as ingest had cut enough new units for them, and used by the extract stage.
    assert events == ["ingest starts", ("workers started", True), "ingest ends"]
    assert out["extract"]["workers"] == 2 and out["extract"]["extracted"] == 60
    events.clear()
    pipeline.run_index(docs, tmp_path / "one.duckdb", Settings(workers=1), model=FakeModel(), **kw)
    assert events == ["ingest starts", ("workers started", False), "ingest ends"]  # no plan with workers
    assert extraction_rows(tmp_path / "two.duckdb") == extraction_rows(tmp_path / "one.duckdb")


def test_workers_started_during_ingest_stop_when_the_run_fails_before_they_extract(tmp_path, monkeypatch):
    import slmgraph.indexing.pipeline as pipeline

    docs = people_corpus(tmp_path / "c", n_docs=60)
    pools = []
    real_start = pipeline.start_nlp_pool

    def start(*a, **k):
        pools.append(real_start(*a, **k))
        return pools[-1]

    def fail(*a, **k):
        raise RuntimeError("the extraction could not begin")

    monkeypatch.setattr(pipeline, "start_nlp_pool", start)
    monkeypatch.setattr(pipeline, "run_extraction", fail)
    with pytest.raises(RuntimeError, match="could not begin"):
        pipeline.run_index(docs, tmp_path / "x.duckdb", Settings(workers=2), model=FakeModel(), progress=False,
                           embedder_factory=FakeEmbedder, say=lambda m: None)
    assert len(pools) == 1 and pools[0] is not None
    for p in pools[0].procs:
        p.join(timeout=10)
    assert not any(p.is_alive() for p in pools[0].procs)


def atexit_marking_job(client, prompts, settings, model):
    """A worker job (``make_job``) whose process would write a file named by its pid into the folder
    ``$SLMGRAPH_TEST_MARKS`` at interpreter exit; each payload comes back doubled."""
    import atexit

    def mark():
        with open(os.path.join(os.environ["SLMGRAPH_TEST_MARKS"], str(os.getpid())), "w") as f:
            f.write("shut down")

    atexit.register(mark)
    return lambda payload: payload * 2


def test_workers_hand_over_every_result_and_leave_without_the_interpreters_shutdown(tmp_path, monkeypatch):
    from slmgraph.indexing.executors.batch import WorkerPool, WorkerSpec, plan_threads

    monkeypatch.setenv("SLMGRAPH_TEST_MARKS", str(tmp_path))  # the spawned workers inherit it
    with WorkerPool(lambda i: WorkerSpec(None, 0, 1, 1, Settings(), "", atexit_marking_job),
                    plan_threads(2, 40, workers=2)) as pool:
        got = sorted(out for _id, _key, out, *_ in pool.results([(i, i, None) for i in range(40)]))
    assert got == [2 * i for i in range(40)]
    assert all(p.exitcode == 0 for p in pool.procs)
    assert not os.listdir(tmp_path)  # no atexit handler ran: no interpreter shutdown to wait for


def test_the_llm_free_tasks_end_in_single_text_units():
    from slmgraph.indexing.stages.extract import NLP_BATCH, nlp_task_sizes

    for n, workers in ((665, 2), (48, 2), (100, 4), (5, 2), (1, 1)):
        sizes = nlp_task_sizes(n, workers)
        assert sum(sizes) == n and max(sizes) <= NLP_BATCH and min(sizes) >= 1
        assert sizes == sorted(sizes, reverse=True)
        assert sizes[-workers:] == [1] * min(workers, len(sizes))
    assert nlp_task_sizes(665, 2)[0] == NLP_BATCH
