"""The text units' vectors computed ahead, on a thread while LLM-free extraction runs (slmgraph.indexing.stages.embed_ahead.EmbedAhead)."""

import threading

import numpy as np
from conftest import FakeEmbedder, FakeModel

from slmgraph.config.settings import Settings
from slmgraph.indexing.stages.embed import run_embeddings
from slmgraph.indexing.stages.embed_ahead import EmbedAhead, embed_ahead_texts
from slmgraph.indexing.pipeline import run_index, start_embed_ahead
from slmgraph.store.db import Store


class CountingEmbedder(FakeEmbedder):
    """The conftest fake, recording every text it encodes and on which thread."""

    name = "counting-fake"
    batch_size = 2

    def __init__(self):
        self.encoded: list[tuple[str, str]] = []

    def encode(self, texts, progress=False):
        self.encoded.extend((t, threading.current_thread().name) for t in texts)
        return super().encode(texts)


def _store(tmp_path, units, reports=()):
    store = Store(tmp_path / "a.duckdb", create=True)
    with store.transaction():
        for cid, text in units:
            store.con.execute("INSERT INTO text_units (chunk_id, doc_id, ord, tok_start, tok_end, n_tokens, text) "
                              "VALUES (?, 'd', 0, 0, 1, 1, ?)", [cid, text])
        for rid, text in reports:
            store.con.execute("INSERT INTO community_reports (community_id, level, title, full_text) "
                              "VALUES (?, 0, 't', ?)", [rid, text])
    return store


def test_the_embed_stage_takes_the_vectors_computed_ahead_and_encodes_only_the_rest(tmp_path):
    units = [("u1", "alpha beta gamma"), ("u2", "delta epsilon"), ("u3", "zeta eta theta iota")]
    store = _store(tmp_path, units, reports=[(0, "a report on alpha")])
    emb = CountingEmbedder()
    ahead = EmbedAhead(embed_ahead_texts(store), lambda: emb).start()
    assert ahead.join(10) and ahead.stop() == 3 and ahead.error is None
    assert {t for t, th in emb.encoded} == {t for _, t in units}
    assert all(th == "slmgraph-embed-ahead" for _, th in emb.encoded)
    emb.encoded.clear()
    res = run_embeddings(store, ahead.wrap(emb), progress=False)
    # Only the report is encoded by the stage; the text units' vectors are the ones computed ahead.
    assert [t for t, _ in emb.encoded] == ["a report on alpha"] and res.embedded == 4
    got = dict(store.con.execute("SELECT item_id, vector FROM embeddings WHERE kind = 'text_unit'").fetchall())
    want = FakeEmbedder().encode([t for _, t in units])
    assert np.allclose(np.array([got[c] for c, _ in units], dtype=np.float32), want)
    # Text units that have a vector are not worth a thread the next time.
    assert embed_ahead_texts(store) == []


def test_a_stopped_thread_leaves_the_rest_to_the_embed_stage(tmp_path):
    units = [(f"u{i}", f"word{i} " * (i + 1)) for i in range(6)]
    store = _store(tmp_path, units)
    started, release = threading.Event(), threading.Event()

    class Slow(CountingEmbedder):
        def encode(self, texts, progress=False):
            if threading.current_thread().name == "slmgraph-embed-ahead":
                started.set()
                release.wait(5)
            return super().encode(texts)

    emb = Slow()
    ahead = EmbedAhead(embed_ahead_texts(store), lambda: emb).start()
    assert started.wait(5)
    threading.Timer(0.05, release.set).start()
    done = ahead.stop()
    assert done == 2  # the batch under way when stop() was called, no more
    emb.encoded.clear()
    run_embeddings(store, ahead.wrap(emb), progress=False)
    assert len(emb.encoded) == 4
    assert store.con.execute("SELECT count(*) FROM embeddings WHERE kind = 'text_unit'").fetchone()[0] == 6


def test_the_thread_starts_only_where_llm_free_extraction_leaves_a_core(tmp_path):
    store = _store(tmp_path, [("u1", "alpha beta")])

    class M:
        n_threads = 2

    emb = CountingEmbedder()
    a = start_embed_ahead(store, Settings(extractor="nlp", executor="local"), M(), lambda: emb)
    assert a is not None and a.threads == 1
    a.stop()
    M.n_threads = 1
    assert start_embed_ahead(store, Settings(extractor="nlp"), M(), lambda: emb) is None
    M.n_threads = 2
    assert start_embed_ahead(store, Settings(extractor="nlp", executor="ray"), M(), lambda: emb) is None


def test_an_index_run_embeds_text_units_ahead_and_stores_the_same_vectors(tmp_path, corpus):
    s = Settings(extractor="nlp", n_threads=2, reports="none")
    emb = CountingEmbedder()
    out = run_index(corpus, tmp_path / "i.duckdb", s, model=FakeModel(), embedder_factory=lambda: emb,
                    progress=False)
    assert out["embed_ahead"]["texts"] > 0
    store = Store(tmp_path / "i.duckdb")
    rows = store.con.execute("SELECT t.text, e.vector FROM text_units t JOIN embeddings e "
                             "ON e.kind = 'text_unit' AND e.item_id = t.chunk_id").fetchall()
    assert rows and np.allclose(np.array([v for _, v in rows], dtype=np.float32),
                                FakeEmbedder().encode([t for t, _ in rows]))
    ahead_texts = {t for t, th in emb.encoded if th == "slmgraph-embed-ahead"}
    assert {t for t, _ in rows} <= ahead_texts
    assert not any(t in ahead_texts for t, th in emb.encoded if th != "slmgraph-embed-ahead")


def test_an_interrupted_extraction_does_not_wait_for_a_stuck_embed_ahead_thread(tmp_path, corpus, monkeypatch):
    import pytest

    import slmgraph.indexing.pipeline as pipeline

    stuck = threading.Event()

    class Stuck(CountingEmbedder):
        def encode(self, texts, progress=False):
            if threading.current_thread().name == "slmgraph-embed-ahead":
                stuck.wait(60)  # as a thread blocked on an import lock the interrupted main thread held
            return super().encode(texts)

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "run_extraction", interrupted)
    monkeypatch.setattr(pipeline, "EMBED_AHEAD_GRACE_S", 0.2)
    s = Settings(extractor="nlp", n_threads=2, reports="none")
    waited = threading.Timer(20, stuck.set)  # frees the thread if the run waits on it: the test then fails
    waited.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_index(corpus, tmp_path / "i.duckdb", s, model=FakeModel(), embedder_factory=Stuck, progress=False)
        assert not stuck.is_set()  # the run gave up on the thread instead of waiting for it
    finally:
        stuck.set()
        waited.cancel()
