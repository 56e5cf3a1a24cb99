"""The text units' vectors encoded ahead on a thread, while LLM-free extraction runs on the other cores
(:class:`EmbedAhead`), and the embedder that takes them instead of encoding them again (:class:`MemoEncoder`).
"""

from __future__ import annotations

import numpy as np

from slmgraph.indexing.stages.embed import further_windows, window_keys
from slmgraph.store.db import Store


class EmbedAhead:
    """The text units' vectors (first and further windows) computed on a thread while another stage
    runs on the other cores, for :func:`run_embeddings` to take instead of encoding them again.

    The index's LLM-free extraction (spaCy) runs on one core; the text units are known from ingest on, and
    they and their further windows are most of the word pieces the embed stage encodes. The thread encodes
    the texts longest first, one batch at a time, into a memo keyed by the exact text; :meth:`stop` ends it
    after the current batch. Nothing is written to the store from the thread (the embed stage stays the one
    writer and commits as before), and a text the memo lacks is encoded by the embed stage as usual.

    Args:
        texts: text unit texts to encode (their further windows are added, :func:`further_windows`).
        get_embedder: ``() -> embedder``, called on the thread (loading the model there too).
        threads: torch intra-op threads while the thread runs (restored after).
    """

    def __init__(self, texts: list[str], get_embedder, threads: int = 1):
        import threading

        self.texts, self.get_embedder, self.threads = texts, get_embedder, threads
        self.memo: dict[str, np.ndarray] = {}
        self.error: BaseException | None = None
        self.seconds = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="slmgraph-embed-ahead", daemon=True)

    def start(self) -> "EmbedAhead":
        self._thread.start()
        return self

    def _run(self) -> None:
        import sys
        import time

        t0 = time.perf_counter()
        torch = None
        prev = None
        try:
            emb = self.get_embedder()
            torch = sys.modules.get("torch")
            if torch is not None:
                prev = torch.get_num_threads()
                torch.set_num_threads(self.threads)
            texts = list(dict.fromkeys(self.texts + [w for ws in further_windows(emb, self.texts) for w in ws]))
            _, lengths = window_keys(emb, texts)
            order = sorted(range(len(texts)), key=lambda i: (-lengths[i], i))
            step = max(1, int(getattr(emb, "batch_size", 32)))
            for s in range(0, len(order), step):
                if self._stop.is_set():
                    break
                idx = order[s:s + step]
                for i, v in zip(idx, emb.encode([texts[i] for i in idx])):
                    self.memo[texts[i]] = np.asarray(v, dtype=np.float32)
        except Exception as exc:  # noqa: BLE001 -- the embed stage encodes what is missing and reports its own errors
            self.error = exc
        finally:
            if torch is not None and prev is not None:
                torch.set_num_threads(prev)
            self.seconds = time.perf_counter() - t0

    def join(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds (None: no limit) for every text to be encoded; True when the thread ended."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def stop(self, timeout: float | None = None) -> int:
        """End the thread after its current batch and wait for it, up to ``timeout`` seconds (None: no limit;
        the thread is a daemon, so one still running dies with the process); returns the texts encoded."""
        self._stop.set()
        self._thread.join(timeout)
        return len(self.memo)

    def wrap(self, embedder) -> "MemoEncoder":
        """``embedder`` whose ``encode`` takes the vectors computed here for the texts it has."""
        return MemoEncoder(embedder, self.memo)


class MemoEncoder:
    """An embedder whose ``encode`` returns the vector of ``memo`` for a text there and encodes the others
    with the wrapped embedder (all other attributes are the wrapped embedder's)."""

    def __init__(self, inner, memo: dict[str, np.ndarray]):
        self.inner, self.memo = inner, memo
        self.hits = 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def encode(self, texts: list[str], progress: bool = False) -> np.ndarray:
        miss = [t for t in dict.fromkeys(texts) if t not in self.memo]
        got = dict(zip(miss, self.inner.encode(miss))) if miss else {}
        self.hits += len(texts) - sum(1 for t in texts if t in got)
        if not texts:
            return np.zeros((0, self.inner.dim), dtype=np.float32)
        return np.stack([got[t] if t in got else self.memo[t] for t in texts]).astype(np.float32, copy=False)


def embed_ahead_texts(store: Store) -> list[str]:
    """Texts of the text units that have no stored vector yet (what an :class:`EmbedAhead` is worth starting for)."""
    return [t for (t,) in store.con.execute(
        "SELECT t.text FROM text_units t WHERE NOT EXISTS (SELECT 1 FROM embeddings e "
        "WHERE e.kind = 'text_unit' AND e.item_id = t.chunk_id) ORDER BY t.chunk_id").fetchall()]
