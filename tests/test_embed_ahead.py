"""The text units' vectors computed ahead, on a thread while LLM-free extraction runs (slmgraph.indexing.stages.embed_ahead.EmbedAhead)."""

import re
import threading
import time

import numpy as np
from conftest import FakeEmbedder, FakeModel

from slmgraph.config.settings import Settings
from slmgraph.indexing.stages.embed import further_windows, run_embeddings
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


class WindowEmbedder(CountingEmbedder):
    """A counting fake reading only the first ``room`` words of a text, with further windows
    (:func:`slmgraph.indexing.stages.embed.further_windows`), as all-MiniLM-L6-v2 reads its first 256 word pieces."""

    name = "window-fake"
    room = 6

    def __init__(self):
        super().__init__()
        self.counted = 0

    def piece_counts(self, texts):
        self.counted += len(texts)
        return [len(re.findall(r"\w+", t)) for t in texts]

    def encode(self, texts, progress=False):
        return super().encode([" ".join(re.findall(r"\w+", t)[:self.room]) for t in texts])


def _rows(store):
    return {(k, i): (m, w, tuple(np.round(v, 6))) for k, i, m, w, v in store.con.execute(
        "SELECT kind, item_id, model, window_key, vector FROM embeddings").fetchall()}


def test_the_thread_commits_the_vectors_and_the_embed_stage_encodes_only_the_rest(tmp_path):
    units = [("u1", "alpha beta gamma"), ("u2", "delta epsilon"), ("u3", "zeta eta theta iota")]
    store = _store(tmp_path, units, reports=[(0, "a report on alpha")])
    emb = CountingEmbedder()
    ahead = EmbedAhead(store, embed_ahead_texts(store), lambda: emb).start()
    assert ahead.join(10) and ahead.stop() == 3 and ahead.error is None
    assert {t for t, th in emb.encoded} == {t for _, t in units}
    assert all(th == "slmgraph-embed-ahead" for _, th in emb.encoded)
    # Committed by the thread, before any embed stage runs.
    got = dict(store.con.execute("SELECT item_id, vector FROM embeddings WHERE kind = 'text_unit'").fetchall())
    want = FakeEmbedder().encode([t for _, t in units])
    assert np.allclose(np.array([got[c] for c, _ in units], dtype=np.float32), want)
    emb.encoded.clear()
    res = run_embeddings(store, emb, progress=False, made_ahead=ahead.made)
    # Only the report is encoded by the stage; the text units' vectors are the ones committed ahead.
    assert [t for t, _ in emb.encoded] == ["a report on alpha"] and res.embedded == 4 and res.ahead == 3
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
    ahead = EmbedAhead(store, embed_ahead_texts(store), lambda: emb).start()
    assert started.wait(5)
    threading.Timer(0.05, release.set).start()
    done = ahead.stop()
    assert done == 2  # the batch under way when stop() was called, no more
    assert store.con.execute("SELECT count(*) FROM embeddings").fetchone()[0] == 2
    emb.encoded.clear()
    run_embeddings(store, emb, progress=False, made_ahead=ahead.made)
    assert len(emb.encoded) == 4
    assert store.con.execute("SELECT count(*) FROM embeddings WHERE kind = 'text_unit'").fetchone()[0] == 6


def _long_units(n=5):
    words = "ship harbour grain salt market quay gull mast rain road mill river flour village bridge tower"
    ws = words.split()
    return [(f"u{i}", " ".join(f"{ws[(i + k) % len(ws)].capitalize()} {ws[(i + 2 * k) % len(ws)]} stood still."
                               for k in range(4 + i))) for i in range(n)]


def test_windows_made_ahead_match_the_embed_stage_and_are_not_cut_again(tmp_path):
    units = _long_units()
    (tmp_path / "p").mkdir()
    plain = _store(tmp_path / "p", units, reports=[(0, "a report")])
    run_embeddings(plain, WindowEmbedder(), progress=False)
    store = _store(tmp_path, units, reports=[(0, "a report")])
    emb = WindowEmbedder()
    ahead = EmbedAhead(store, embed_ahead_texts(store), lambda: emb).start()
    assert ahead.join(10) and ahead.error is None and {i for k, i in ahead.made if k == "text_unit"} == {c for c, _ in units}
    emb.encoded.clear()
    emb.counted = 0
    res = run_embeddings(store, emb, progress=False, made_ahead=ahead.made)
    assert [t for t, _ in emb.encoded] == ["a report"]
    assert emb.counted == 0  # no text unit was cut into windows again
    assert res.per_kind["text_unit_window"]["embedded"] > 0 and res.per_kind["text_unit_window"]["kept"] == 0
    assert _rows(store) == _rows(plain)


def test_a_text_unit_row_is_committed_only_with_all_its_windows(tmp_path):
    units = _long_units()
    store = _store(tmp_path, units)
    gate = threading.Semaphore(0)

    class Gated(WindowEmbedder):
        batch_size = 1

        def encode(self, texts, progress=False):
            if threading.current_thread().name == "slmgraph-embed-ahead":
                gate.acquire(timeout=5)
            return super().encode(texts)

    emb = Gated()
    ahead = EmbedAhead(store, embed_ahead_texts(store), lambda: emb).start()
    for _ in range(3):
        gate.release()
    while ahead.vectors < 3 and not ahead.join(0.01):
        pass
    gate.release()  # the batch under way when stop() is called
    ahead.stop(5)
    windows = {}
    for (item,) in store.con.execute("SELECT item_id FROM embeddings WHERE kind = 'text_unit_window'").fetchall():
        windows.setdefault(item.split("#")[0], set()).add(item)
    want = dict(zip([c for c, _ in units], further_windows(emb, [t for _, t in units])))
    for (cid,) in store.con.execute("SELECT item_id FROM embeddings WHERE kind = 'text_unit'").fetchall():
        assert windows.get(cid, set()) == {f"{cid}#{n}" for n in range(1, len(want[cid]) + 1)}
        assert ("text_unit", cid) in ahead.made
    # Resumed by the embed stage (a later run: nothing in memory), the index is whole.
    run_embeddings(store, WindowEmbedder(), progress=False)
    (tmp_path / "p").mkdir()
    plain = _store(tmp_path / "p", units)
    run_embeddings(plain, WindowEmbedder(), progress=False)
    assert _rows(store).keys() == _rows(plain).keys()


def test_the_thread_starts_only_where_llm_free_extraction_leaves_a_core(tmp_path):
    store = _store(tmp_path, [("u1", "alpha beta")])

    class M:
        n_threads = 2

    emb = CountingEmbedder()
    a = start_embed_ahead(store, Settings(extractor="nlp", executor="local"), M(), lambda: emb)
    assert a is not None and a.threads == 1
    a.stop()
    assert start_embed_ahead(store, Settings(extractor="nlp", executor="local"), M(), lambda: emb, busy=2) is None
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


def test_an_abandoned_thread_keeps_its_committed_batches_and_never_uses_the_index_again(tmp_path):
    # A run unwinding (Ctrl-C) abandons the thread while it encodes: abandon() does not wait for the encode,
    # the batch it was encoding is never committed, and its connection is closed before the store's.
    units = [(f"u{i}", f"text number {i} of the store") for i in range(6)]
    store = _store(tmp_path, units)
    first_done, release = threading.Event(), threading.Event()

    class Held(CountingEmbedder):
        def encode(self, texts, progress=False):
            if first_done.is_set():
                assert release.wait(20)  # the test fails below if abandon() waited for this encode
            out = super().encode(texts)
            first_done.set()
            return out

    ahead = EmbedAhead(store, embed_ahead_texts(store), Held).start()
    deadline = time.monotonic() + 20
    while ahead.vectors < 2 and time.monotonic() < deadline:  # the first batch (two texts) is committed
        time.sleep(0.01)
    freed = threading.Timer(15, release.set)
    freed.start()
    try:
        assert ahead.abandon() == 2
        assert not release.is_set()
        assert ahead.abandon() == 2  # again: nothing more
    finally:
        release.set()
        freed.cancel()
    assert ahead.join(20) and ahead.error is None
    assert ahead.vectors == 2 and len(ahead.made) == 2
    assert store.con.execute("SELECT count(*) FROM embeddings").fetchone()[0] == 2
    store.close()


def test_the_thread_goes_on_beside_the_graph_stage_until_every_text_unit_is_committed(tmp_path, corpus, monkeypatch):
    import slmgraph.indexing.pipeline as pipeline

    in_graph = threading.Event()
    seen = {}

    class Late(CountingEmbedder):
        def encode(self, texts, progress=False):
            if threading.current_thread().name == "slmgraph-embed-ahead":
                assert in_graph.wait(20)  # nothing is encoded ahead before extraction has ended
            return super().encode(texts)

    real_graph = pipeline.build_graph

    def graph(store, *a, **k):
        in_graph.set()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and embed_ahead_texts(store):
            time.sleep(0.02)
        seen["left"] = len(embed_ahead_texts(store))
        return real_graph(store, *a, **k)

    monkeypatch.setattr(pipeline, "build_graph", graph)
    emb = Late()
    s = Settings(extractor="nlp", n_threads=2, reports="none")
    out = run_index(corpus, tmp_path / "i.duckdb", s, model=FakeModel(), embedder_factory=lambda: emb, progress=False)
    assert seen["left"] == 0  # every text unit was committed by the thread while the graph stage ran
    assert out["embed"]["ahead"] == out["embed_ahead"]["rows"] > 0
    assert out["embed"]["per_kind"]["text_unit"]["embedded"] == out["embed_ahead"]["rows"]
    units = {t for (t,) in Store(tmp_path / "i.duckdb").con.execute("SELECT text FROM text_units").fetchall()}
    assert not units & {t for t, th in emb.encoded if th != "slmgraph-embed-ahead"}


def test_a_run_interrupted_after_extraction_keeps_the_vectors_made_ahead(tmp_path, corpus, monkeypatch):
    import pytest

    import slmgraph.indexing.pipeline as pipeline

    real_graph = pipeline.build_graph

    def interrupted(store, *a, **k):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and embed_ahead_texts(store):
            time.sleep(0.02)
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "build_graph", interrupted)
    s = Settings(extractor="nlp", n_threads=2, reports="none")
    emb = CountingEmbedder()
    with pytest.raises(KeyboardInterrupt):
        run_index(corpus, tmp_path / "i.duckdb", s, model=FakeModel(), embedder_factory=lambda: emb, progress=False)
    n_units = len(Store(tmp_path / "i.duckdb").con.execute("SELECT chunk_id FROM text_units").fetchall())
    monkeypatch.setattr(pipeline, "build_graph", real_graph)
    emb.encoded.clear()
    out = run_index(corpus, tmp_path / "i.duckdb", s, model=FakeModel(), embedder_factory=lambda: emb, progress=False)
    units = {t for (t,) in Store(tmp_path / "i.duckdb").con.execute("SELECT text FROM text_units").fetchall()}
    assert len(units) == n_units and not units & {t for t, _ in emb.encoded}  # none encoded again
    assert out["embed"]["per_kind"]["text_unit"] == {"embedded": 0, "kept": n_units, "reused": 0}


def test_a_text_unit_encoded_before_its_windows_is_not_encoded_again_by_the_embed_stage(tmp_path):
    units = _long_units()
    store = _store(tmp_path, units)
    first = threading.Event()

    class OneBatch(WindowEmbedder):
        batch_size = 1

        def encode(self, texts, progress=False):
            if threading.current_thread().name == "slmgraph-embed-ahead" and first.is_set():
                time.sleep(0.5)  # slow enough for stop() to end the thread after this batch
            first.set()
            return super().encode(texts)

    emb = OneBatch()
    ahead = EmbedAhead(store, embed_ahead_texts(store), lambda: emb).start()
    assert first.wait(5)
    ahead.stop(5)
    assert list(ahead.pending) == [units[0][1]]  # the longest item: the first unit's own text, still uncommitted
    assert ("text_unit", "u0") not in ahead.made
    emb.encoded.clear()
    run_embeddings(store, ahead.wrap(emb), progress=False, made_ahead=ahead.made)
    assert units[0][1] not in {t for t, _ in emb.encoded}
    assert store.con.execute("SELECT count(*) FROM embeddings WHERE kind = 'text_unit'").fetchone()[0] == len(units)


def test_text_units_the_thread_planned_but_did_not_commit_are_not_cut_into_windows_again(tmp_path):
    units = _long_units()
    (tmp_path / "p").mkdir()
    plain = _store(tmp_path / "p", units)
    run_embeddings(plain, WindowEmbedder(), progress=False)
    store = _store(tmp_path, units)
    first = threading.Event()

    class OneBatch(WindowEmbedder):
        batch_size = 1

        def encode(self, texts, progress=False):
            if threading.current_thread().name == "slmgraph-embed-ahead" and first.is_set():
                time.sleep(0.5)  # slow enough for stop() to end the thread after this batch
            first.set()
            return super().encode(texts)

    emb = OneBatch()
    ahead = EmbedAhead(store, embed_ahead_texts(store), lambda: emb).start()
    assert first.wait(5)
    ahead.stop(5)
    assert not [i for k, i in ahead.made if k == "text_unit"]  # stopped before any text unit was complete
    emb.counted = 0
    run_embeddings(store, ahead.wrap(emb), progress=False, made_ahead=ahead.made)
    assert emb.counted == 0  # the thread's windows were taken, not cut again
    assert _rows(store) == _rows(plain)


def test_the_embedder_loads_once_when_the_thread_and_the_main_thread_both_ask_first(tmp_path, corpus):
    loads: list[str] = []
    second = threading.Event()

    def slow_factory():  # a load still under way on the thread when the main thread's stages ask
        loads.append(threading.current_thread().name)
        if len(loads) > 1:
            second.set()
        elif threading.current_thread().name == "slmgraph-embed-ahead":
            second.wait(5)  # long enough for the main thread to ask too, if nothing holds it back
        return CountingEmbedder()

    s = Settings(extractor="nlp", n_threads=2, reports="none")
    out = run_index(corpus, tmp_path / "i.duckdb", s, model=FakeModel(), embedder_factory=slow_factory,
                    progress=False)
    assert loads[:1] == ["slmgraph-embed-ahead"] and out["embed_ahead"]["texts"] > 0
    assert len(loads) == 1, loads  # one model, shared: the main thread waited for the thread's load
