"""The text units' vectors (first and further windows) encoded on a thread and committed as they are made,
while the stages that leave a core idle run (:class:`EmbedAhead`): LLM-free extraction on one core, then the
single-threaded graph, communities and reports stages.
"""

from __future__ import annotations

import threading

import numpy as np

from slmgraph.indexing.stages.embed import WINDOW_KIND, embed_tag, encode_threads, further_windows, window_keys
from slmgraph.store.db import Store

#: Held around every use of the shared embedder while a thread may encode (its fast tokenizer is not thread-safe).
ENCODE_LOCK = threading.Lock()

#: Batches per group of text units encoded together (:meth:`EmbedAhead._groups`).
GROUP_BATCHES = 4

_INSERT = ("INSERT OR REPLACE INTO embeddings (kind, item_id, model, vector, window_key) VALUES (?, ?, ?, ?, ?)")


def locked_encode(embedder, texts: list[str]) -> np.ndarray:
    """``embedder.encode(texts)`` under :data:`ENCODE_LOCK` (the graph stage's name vectors beside the thread)."""
    with ENCODE_LOCK:
        return embedder.encode(texts)


class EmbedAhead:
    """The text units' vectors (first and further windows) computed on a thread and written to the index as
    they are made, so the embed stage keeps them instead of encoding them again.

    The thread works through the text units' windows longest first, one batch at a time, and commits each
    batch through its own connection (the main thread never writes the ``embeddings`` table while it runs). A
    text unit's own row is committed only once every further window of it is, so a text unit with a vector
    always has all its windows: :attr:`made` lists the rows, for
    :func:`slmgraph.indexing.stages.embed.run_embeddings` to keep their windows without cutting them again.
    A window some stored row already has is left to the embed stage, which copies it. :meth:`stop` ends the
    thread after the current batch; :meth:`abandon` (a run unwinding: Ctrl-C, a failure) ends its use of the
    index at once, dropping the batch it is encoding; an interrupted run keeps every committed batch.

    Args:
        store: the open index the thread commits to.
        units: ``(chunk_id, text)`` of the text units to encode (:func:`embed_ahead_texts`).
        get_embedder: ``() -> embedder``, called on the thread (loading the model there too).
        threads: torch intra-op threads of the thread's forward passes (:func:`encode_threads`).

    Attributes:
        made: ``(kind, item_id)`` of the rows the thread committed (a text unit's only with all its windows').
        pending: text -> vector of the text units encoded but not committed (some window still to do), for
            the embed stage in the same run (:meth:`wrap`); lost with an interrupted run.
        window_memo: text -> its further windows (:func:`slmgraph.indexing.stages.embed.further_windows`) of every
            text unit the thread planned, committed or not, so the embed stage does not cut them again (:meth:`wrap`).
        vectors: distinct windows the thread encoded; ``word_pieces``: the word pieces of the rows it committed.
        seconds: wall seconds the thread ran; ``error``: the exception that ended it early, or None.
    """

    def __init__(self, store: Store, units: list[tuple[str, str]], get_embedder, threads: int = 1):
        self.units, self.get_embedder, self.threads, self.store = units, get_embedder, threads, store
        self.made: set[tuple[str, str]] = set()
        self.pending: dict[str, np.ndarray] = {}
        self.window_memo: dict[str, list[str]] = {}
        self.vectors = 0
        self.word_pieces = 0
        self.error: BaseException | None = None
        self.seconds = 0.0
        self._stop = threading.Event()
        # Held around each use of the thread's connection; once released (abandon, or the thread's end), unused.
        self._db = threading.Lock()
        self._released = False
        self._thread = threading.Thread(target=self._run, name="slmgraph-embed-ahead", daemon=True)
        self._con = None

    def start(self) -> "EmbedAhead":
        self._con = self.store.con.cursor()  # its own connection: a DuckDB connection serves one thread at a time
        self._thread.start()
        return self

    def _plan(self, emb) -> tuple[list[tuple[str, str, str]], list[str], list[int], set[str]]:
        """Items ``(kind, item_id, text)`` (text units, then their further windows), their window keys and
        word pieces, and the keys a stored row already has."""
        texts = [t for _, t in self.units]
        items = [("text_unit", cid, t) for cid, t in self.units]
        windows = further_windows(emb, texts)
        for (cid, _), wins in zip(self.units, windows):
            items.extend((WINDOW_KIND, f"{cid}#{n}", w) for n, w in enumerate(wins, start=1))
        self.window_memo = dict(zip(texts, windows))  # one assignment: the embed stage sees all of them or none
        keys, lengths = window_keys(emb, [t for _, _, t in items])
        with self._db:
            if self._released:
                raise _Abandoned
            known = {k for (k,) in self._con.execute("SELECT DISTINCT window_key FROM embeddings "
                                                     "WHERE window_key IS NOT NULL").fetchall()}
        return items, keys, lengths, known

    def _run(self) -> None:
        import time

        t0 = time.perf_counter()
        try:
            emb = self.get_embedder()
            with ENCODE_LOCK:
                items, keys, lengths, known = self._plan(emb)
            # Windows still to commit per text unit; the unit's own row waits for them.
            left: dict[str, int] = {}
            for kind, item, _ in items:
                if kind == WINDOW_KIND:
                    cid = item.split("#", 1)[0]
                    left[cid] = left.get(cid, 0) + 1
            step = max(1, int(getattr(emb, "batch_size", 32)))
            items_text = {item: text for kind, item, text in items if kind == "text_unit"}
            seen: set[str] = set(known)
            waiting: list[list] = []
            for group in self._groups(items, GROUP_BATCHES * step):
                todo: dict[str, list[int]] = {}
                for j in group:
                    if keys[j] not in seen or keys[j] in todo:
                        todo.setdefault(keys[j], []).append(j)
                seen.update(todo)
                # Longest first inside the group, so each batch pads to about its own length.
                uniq = sorted(todo, key=lambda k: (-lengths[todo[k][0]], todo[k][0]))
                for s in range(0, len(uniq), step):
                    if self._stop.is_set():
                        return
                    batch = uniq[s:s + step]
                    with ENCODE_LOCK, encode_threads(self.threads):
                        vecs = emb.encode([items[todo[k][0]][2] for k in batch])
                    rows = []
                    for key, v in zip(batch, vecs):
                        v32 = np.asarray(v, dtype=np.float32)
                        v = v32.tolist()
                        for j in todo[key]:
                            kind, item, text = items[j]
                            row = [kind, item, embed_tag(emb, text), v, key, lengths[j]]
                            if kind == "text_unit":
                                waiting.append(row)
                                self.pending[text] = v32
                            else:
                                rows.append(row)
                                left[item.split("#", 1)[0]] -= 1
                    ready = [r for r in waiting if not left.get(r[1])]
                    waiting = [r for r in waiting if left.get(r[1])]
                    if not self._commit([r[:5] for r in rows + ready]):
                        return
                    for r in ready:
                        self.pending.pop(items_text[r[1]], None)
                    self.vectors += len(batch)
                    self.word_pieces += sum(r[5] for r in rows + ready)
                    self.made.update((r[0], r[1]) for r in rows + ready)
        except _Abandoned:
            pass
        except Exception as exc:  # noqa: BLE001 -- the embed stage encodes what is missing and reports its own errors
            self.error = exc
        finally:
            self.seconds = time.perf_counter() - t0
            self._release()

    @staticmethod
    def _groups(items: list[tuple[str, str, str]], size: int):
        """Indices of ``items`` in groups of whole text units (a unit with its windows) of at least ``size``
        items, in the units' order, so a stopped thread leaves at most one group's text units uncommitted."""
        unit_of = [item.split("#", 1)[0] for _, item, _ in items]
        members: dict[str, list[int]] = {}
        for j, cid in enumerate(unit_of):
            members.setdefault(cid, []).append(j)
        group: list[int] = []
        for js in members.values():
            group.extend(js)
            if len(group) >= size:
                yield group
                group = []
        if group:
            yield group

    def _commit(self, rows: list[list]) -> bool:
        """Commit ``rows`` in one transaction; False (nothing written) once the thread is abandoned."""
        with self._db:
            if self._released:
                return False
            if not rows:
                return True
            con = self._con
            con.execute("BEGIN TRANSACTION")
            try:
                con.executemany(_INSERT, rows)
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
            return True

    def _release(self) -> None:
        """Close the thread's connection, once, after any commit under way."""
        with self._db:
            if self._released:
                return
            self._released = True
            try:
                self._con.close()
            except Exception:  # noqa: BLE001 -- the connection of a closed store is gone already
                pass

    def join(self, timeout: float | None = None) -> bool:
        """Wait up to ``timeout`` seconds (None: no limit) for every text to be encoded; True when the thread ended."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def stop(self, timeout: float | None = None) -> int:
        """End the thread after its current batch and wait for it, up to ``timeout`` seconds (None: no limit;
        the thread is a daemon, so one still running dies with the process); returns the vectors committed."""
        self._stop.set()
        self._thread.join(timeout)
        return self.vectors

    def abandon(self) -> int:
        """End the thread's use of the index now, for a run that is unwinding (Ctrl-C, a failure), which must not
        wait for an encode: waits only for a commit under way (one batch's rows), then closes the thread's
        connection. The batch being encoded is dropped, never committed; the thread, a daemon, ends after it (or
        with the process). Returns the vectors committed; calling it again does nothing more."""
        self._stop.set()
        if self._con is not None:
            self._release()
        return self.vectors

    def wrap(self, embedder) -> "MemoEncoder":
        """``embedder`` whose ``encode`` takes the vectors of :attr:`pending` for the texts it has, with
        :attr:`window_memo` for the embed stage's windows."""
        return MemoEncoder(embedder, self.pending, self.window_memo)


class _Abandoned(Exception):
    """Raised on the thread when it would read the index after :meth:`EmbedAhead.abandon`."""


class MemoEncoder:
    """An embedder whose ``encode`` returns the vector of ``memo`` for a text there and encodes the others
    with the wrapped embedder (all other attributes are the wrapped embedder's); ``window_memo``: text -> its
    further windows already cut with the wrapped embedder (:func:`slmgraph.indexing.stages.embed.further_windows`)."""

    def __init__(self, inner, memo: dict[str, np.ndarray], window_memo: dict[str, list[str]] | None = None):
        self.inner, self.memo = inner, memo
        self.window_memo = window_memo or {}

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def encode(self, texts: list[str], progress: bool = False) -> np.ndarray:
        miss = [t for t in dict.fromkeys(texts) if t not in self.memo]
        got = dict(zip(miss, self.inner.encode(miss))) if miss else {}
        if not texts:
            return np.zeros((0, self.inner.dim), dtype=np.float32)
        return np.stack([got[t] if t in got else self.memo[t] for t in texts]).astype(np.float32, copy=False)


def embed_ahead_texts(store: Store) -> list[tuple[str, str]]:
    """``(chunk_id, text)`` of the text units that have no stored vector yet (what an :class:`EmbedAhead` is
    worth starting for), in chunk id order."""
    return store.con.execute(
        "SELECT t.chunk_id, t.text FROM text_units t WHERE NOT EXISTS (SELECT 1 FROM embeddings e "
        "WHERE e.kind = 'text_unit' AND e.item_id = t.chunk_id) ORDER BY t.chunk_id").fetchall()
