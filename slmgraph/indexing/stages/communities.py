"""Hierarchical Leiden communities (paper sec. 3.1.4; Traag, Waltman & van Eck 2019).

Level 0 (the root level, the paper's C0) is the partition Leiden finds on the
whole entity graph. Each community is then partitioned again on its own
induced subgraph; when that yields two or more communities they form the next
level, and when it cannot be split (too small, or Leiden keeps it whole, or
``max_levels`` is reached) the community is *carried down* unchanged, so every
level covers every entity and levels nest (ARCHITECTURE.md stage 5).

Leiden runs through ``leidenalg.find_partition`` with
``RBConfigurationVertexPartition`` (modularity with resolution gamma), edge
weights, and a fixed seed, so the same graph gives the same hierarchy.
"""

from __future__ import annotations

from dataclasses import dataclass

import igraph as ig
import leidenalg

from slmgraph.store.bulk import insert_rows
from slmgraph.store.db import Store


@dataclass
class Community:
    """One community: id, level, parent id (None at level 0), member entity ids (sorted), carried_from."""

    community_id: int
    level: int
    parent_id: int | None
    members: list[int]
    carried_from: int | None = None


def leiden(n: int, edges: list[tuple[int, int]], weights: list[float], resolution: float, seed: int) -> list[list[int]]:
    """One Leiden partition of a graph with vertices ``0..n-1``.

    Returns:
        communities as sorted lists of vertex indices, ordered by their
        smallest vertex (deterministic for a fixed seed).
    """
    if n == 0:
        return []
    g = ig.Graph(n=n, edges=edges)
    part = leidenalg.find_partition(g, leidenalg.RBConfigurationVertexPartition,
                                    weights=weights if edges else None,
                                    resolution_parameter=resolution, seed=seed, n_iterations=-1)
    groups: dict[int, list[int]] = {}
    for v, c in enumerate(part.membership):
        groups.setdefault(c, []).append(v)
    return sorted((sorted(m) for m in groups.values()), key=lambda m: m[0])


def hierarchical_leiden(entity_ids: list[int], edges: list[tuple[int, int, float]], resolution: float = 1.0,
                        seed: int = 42, max_levels: int = 4, min_size: int = 4) -> list[Community]:
    """Nested communities of an entity graph.

    Args:
        entity_ids: all entity ids (isolated ones included: each becomes its
            own community at level 0).
        edges: ``(source_id, target_id, weight)``.
        resolution: modularity resolution gamma (higher: smaller communities).
        seed: Leiden seed.
        max_levels: number of levels at most (levels 0..max_levels-1).
        min_size: communities smaller than this are not split again.

    Returns:
        communities of all levels; ids are assigned level by level in a
        deterministic order starting at 0. Every entity is in exactly one
        community per level; a community's members are the union of its
        children's.
    """
    ids = sorted(entity_ids)
    adj: dict[int, list[tuple[int, float]]] = {i: [] for i in ids}
    for s, t, w in edges:
        if s in adj and t in adj and s != t:
            adj[s].append((t, w))
            adj[t].append((s, w))

    def split(members: list[int]) -> list[list[int]]:
        index = {e: i for i, e in enumerate(members)}
        sub_edges, sub_w = [], []
        for e in members:
            for t, w in adj[e]:
                if t in index and e < t:
                    sub_edges.append((index[e], index[t]))
                    sub_w.append(w)
        parts = leiden(len(members), sub_edges, sub_w, resolution, seed)
        return [[members[i] for i in p] for p in parts]

    out: list[Community] = []
    next_id = 0
    level_nodes: list[Community] = []
    for m in split(ids):
        level_nodes.append(Community(next_id, 0, None, m))
        next_id += 1
    out.extend(level_nodes)
    level = 0
    while level + 1 < max_levels:
        children: list[Community] = []
        any_split = False
        for c in level_nodes:
            parts = split(c.members) if len(c.members) >= min_size else [c.members]
            if len(parts) > 1:
                any_split = True
                for p in parts:
                    children.append(Community(next_id, level + 1, c.community_id, p))
                    next_id += 1
            else:
                children.append(Community(next_id, level + 1, c.community_id, c.members,
                                          carried_from=c.carried_from if c.carried_from is not None
                                          else c.community_id))
                next_id += 1
        if not any_split:
            next_id -= len(children)
            break
        out.extend(children)
        level_nodes = children
        level += 1
    return out


@dataclass
class CommunitiesResult:
    """What stage 5 did: ``levels`` found and ``per_level`` (level -> number of communities)."""
    levels: int
    per_level: dict[int, int]

    def summary(self, settings=None) -> list[str]:
        """The progress line ``index`` prints."""
        per = ", ".join(f"level {k}: {v}" for k, v in sorted(self.per_level.items()))
        return [f"communities: {self.levels} level{'s' if self.levels != 1 else ''} ({per})" if self.levels else
                "communities: none (no entities)"]


def run_communities(store: Store, settings) -> CommunitiesResult:
    """Compute communities of the current graph and store them (one transaction)."""
    con = store.con
    ents = [r[0] for r in con.execute("SELECT entity_id FROM entities ORDER BY entity_id").fetchall()]
    edges = con.execute("SELECT source_id, target_id, weight FROM relationships ORDER BY rel_id").fetchall()
    comms = hierarchical_leiden(ents, edges, settings.leiden_resolution, settings.seed, settings.max_levels,
                                settings.min_community_size)
    with store.transaction():
        store.clear("communities")
        insert_rows(con, "communities",
                    [[c.community_id, c.level, c.parent_id, len(c.members), c.carried_from] for c in comms])
        insert_rows(con, "community_members", [[c.community_id, e] for c in comms for e in c.members])
    per_level: dict[int, int] = {}
    for c in comms:
        per_level[c.level] = per_level.get(c.level, 0) + 1
    return CommunitiesResult(levels=len(per_level), per_level=per_level)
