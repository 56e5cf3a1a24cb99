"""Stored vectors read back and ranked by cosine for the query engines: one kind's vectors
(:func:`load_vectors`), the nearest items (:func:`nearest`), and the text units scored by their best
window (:func:`unit_matrix`, :func:`best_per_unit`, :func:`nearest_units`). Vectors are L2-normalised
(:mod:`slmgraph.indexing.stages.embed`), so a dot product is the cosine.
"""

from __future__ import annotations

import numpy as np

from slmgraph.indexing.stages.embed import WINDOW_KIND
from slmgraph.store.db import Store


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


def unit_matrix(store: Store) -> tuple[list[str], np.ndarray, list[str]]:
    """Every vector of the text units, their further windows included: ``(row item ids, matrix of shape
    (n, dim), owner chunk id of each row)``; rows of kind ``text_unit`` first, in :func:`load_vectors` order."""
    ids, mat = load_vectors(store, "text_unit")
    wids, wmat = load_vectors(store, WINDOW_KIND)
    if wids:
        ids, mat = ids + wids, np.vstack([mat, wmat])
    owners = [i.split("#", 1)[0] for i in ids]
    # An interrupted update removed a document's text units before the embed stage removed their vectors.
    units = {c for (c,) in store.con.execute("SELECT chunk_id FROM text_units").fetchall()}
    keep = [r for r, o in enumerate(owners) if o in units]
    if len(keep) < len(owners):
        ids, mat, owners = [ids[r] for r in keep], mat[keep], [owners[r] for r in keep]
    return ids, mat, owners


def best_per_unit(query_vec: np.ndarray, owners: list[str], mat: np.ndarray) -> dict[str, tuple[float, int]]:
    """``chunk_id -> (best cosine over its windows, row of that window)`` (vectors are normalised)."""
    if not owners:
        return {}
    sims = mat @ query_vec.astype(np.float32)
    best: dict[str, tuple[float, int]] = {}
    for row, (owner, c) in enumerate(zip(owners, sims.tolist())):
        if owner not in best or c > best[owner][0]:
            best[owner] = (c, row)
    return best


def nearest_units(query_vec: np.ndarray, owners: list[str], mat: np.ndarray, k: int) -> list[tuple[str, float]]:
    """Top-``k`` ``(chunk_id, cosine)`` text units by their best window's cosine, best first (ties in row order)."""
    best = best_per_unit(query_vec, owners, mat)
    order = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[1][1]))[:k]
    return [(cid, c) for cid, (c, _) in order]
