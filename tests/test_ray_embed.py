"""The embed stage on Ray actors (``--executor ray``): the same vectors as the local run, one writer, and a
killed actor costs only its steps in flight (slmgraph.indexing.executors.rayembed)."""

import dataclasses
import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import people_corpus, FakeEmbedder, FakeModel, descendants

from slmgraph.config.settings import Settings
from slmgraph.indexing.executors.batch import WorkerError
from slmgraph.indexing.pipeline import run_index
from slmgraph.store.db import Store

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.ray

TESTS = str(Path(__file__).resolve().parent)


@pytest.fixture(autouse=True)
def _ray_workers_import_tests(monkeypatch):
    # Ray's worker processes inherit the driver's environment at ray.init.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([TESTS] + [p for p in [os.environ.get("PYTHONPATH")] if p]))


class PidEmbedder(FakeEmbedder):
    """The conftest fake, 0.2 s per call, appending the process id and texts of each call to ``$EMBED_LOG``."""

    def encode(self, texts, progress=False):
        time.sleep(0.2)
        log = os.environ.get("EMBED_LOG")
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(f"{os.getpid()}\t{len(texts)}\n")
        return super().encode(texts)




def _vectors(db):
    st = Store(db, read_only=True)
    rows = {(k, i): np.array(v, dtype=np.float32) for k, i, v in
            st.con.execute("SELECT kind, item_id, vector FROM embeddings").fetchall()}
    st.close()
    return rows


def _embed_actor_pids():
    return [p for p, n in descendants(os.getpid()).items() if "EmbedActor" in n]


def test_ray_embeds_on_actors_and_stores_the_local_runs_vectors(tmp_path, monkeypatch):
    import slmgraph.indexing.stages.embed as embed

    monkeypatch.setattr(embed, "COMMIT_STEP", 4)
    log = tmp_path / "calls.log"
    monkeypatch.setenv("EMBED_LOG", str(log))
    corpus = people_corpus(tmp_path / "c", n_docs=10)
    # No name vectors in the graph stage: every vector the driver could encode is the embed stage's.
    local = Settings(extractor="nlp", reports="none", min_community_size=2, workers=2, n_threads=2,
                     resolution_threshold=None)
    kw = dict(progress=False, model=FakeModel(), embedder_factory=PidEmbedder)
    run_index(corpus, tmp_path / "local.duckdb", local, say=lambda m: None, **kw)
    log.unlink()
    notes = []
    out = run_index(corpus, tmp_path / "ray.duckdb", dataclasses.replace(local, executor="ray"), say=notes.append,
                    **kw)
    assert any(n.startswith("embed: 2 Ray actors") for n in notes), notes
    assert not ray.is_initialized()
    pids = {line.split("\t")[0] for line in log.read_text().splitlines()}
    assert str(os.getpid()) not in pids and len(pids) >= 1  # every vector came from an actor
    a, b = _vectors(tmp_path / "local.duckdb"), _vectors(tmp_path / "ray.duckdb")
    assert a.keys() == b.keys() and out["embed"]["embedded"] > 4
    assert all(np.allclose(a[k], b[k], atol=1e-6) for k in a)


def test_a_killed_embed_actor_loses_only_its_steps_in_flight_and_the_same_command_finishes(tmp_path, monkeypatch):
    import slmgraph.indexing.stages.embed as embed

    monkeypatch.setattr(embed, "COMMIT_STEP", 2)
    corpus = people_corpus(tmp_path / "c", n_docs=10)
    db = tmp_path / "ray.duckdb"
    settings = Settings(extractor="nlp", reports="none", min_community_size=2, workers=2, n_threads=2, executor="ray")
    kw = dict(progress=False, model=FakeModel(), embedder_factory=PidEmbedder, say=lambda m: None)
    real = embed.embed_items

    def kill_after_two_steps(embedder, texts, lengths, on_step=None, pool=None):
        seen = []

        def step(idx, vecs):
            on_step(idx, vecs)
            seen.append(idx)
            if len(seen) == 2:
                pids = _embed_actor_pids()
                assert pids
                os.kill(pids[0], signal.SIGKILL)

        return real(embedder, texts, lengths, on_step=step, pool=pool)

    monkeypatch.setattr(embed, "embed_items", kill_after_two_steps)
    with pytest.raises(WorkerError, match="run the same command again"):
        run_index(corpus, db, settings, **kw)
    assert not ray.is_initialized()
    committed = len(_vectors(db))
    assert committed >= 4
    monkeypatch.setattr(embed, "embed_items", real)
    out = run_index(corpus, db, settings, **kw)["embed"]
    total = len(_vectors(db))
    # Every vector committed before the kill is kept; only the rest is encoded, once.
    assert out["kept"] == committed and out["embedded"] + out["reused"] == total - committed
    run_index(corpus, tmp_path / "local.duckdb", dataclasses.replace(settings, executor="local"), **kw)
    a, b = _vectors(tmp_path / "local.duckdb"), _vectors(db)
    assert a.keys() == b.keys() and all(np.allclose(a[k], b[k], atol=1e-6) for k in a)
