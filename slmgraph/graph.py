"""Graph merge: entity and relationship mentions into one graph (paper sec. 3.1.3).

The same entity extracted from many text units becomes one node, keyed by its
normalised name (:func:`slmgraph.names.normalize_name`); its name is the most
frequent surface form, its type the most frequent known type, and its
description the distinct descriptions joined (most frequent first) within a
token limit. Repeated relationship instances between the same two entities
become one undirected edge whose weight is the number of instances (the
paper's edge weight). Which text units support each entity and relationship
is kept.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from .store import Store


def _pick(counter: Counter, exclude: tuple = ()) -> str:
    items = [(-n, k) for k, n in counter.items() if k not in exclude] or [(-n, k) for k, n in counter.items()]
    return min(items)[1] if items else ""


def join_descriptions(descs: list[str], max_tokens: int, count_tokens) -> str:
    """Distinct non-empty descriptions, most frequent first, joined by spaces,
    stopping before ``max_tokens`` tokens (at least the first is kept, cut to fit)."""
    c = Counter(d.strip() for d in descs if d and d.strip())
    ordered = sorted(c, key=lambda d: (-c[d], descs.index(d) if d in descs else 0))
    out: list[str] = []
    used = 0
    for d in ordered:
        n = count_tokens(d)
        if used + n > max_tokens:
            if not out:
                out.append(d)  # caller truncates a single overlong description
            break
        out.append(d if d.endswith((".", "!", "?")) else d + ".")
        used += n + 1
    return " ".join(out)


def build_graph(store: Store, count_tokens, max_description_tokens: int) -> dict:
    """Rebuild ``entities``, ``relationships`` and their provenance from the mention tables.

    Deterministic: a new index numbers entities in sorted order of their
    normalised names; a rebuilt graph keeps each surviving entity's id and
    numbers new ones after the largest. Relationship ids follow the sorted
    endpoint pairs. Runs in one transaction.

    Args:
        count_tokens: ``str -> int`` in the model's tokenizer.
        max_description_tokens: cap of a merged description.

    Returns:
        dict: ``entities``, ``relationships``, ``isolated`` (entities without edges).
    """
    con = store.con
    ment = con.execute("SELECT chunk_id, name, norm, type, description FROM entity_mentions "
                       "ORDER BY chunk_id, norm").fetchall()
    names: dict[str, Counter] = defaultdict(Counter)
    types: dict[str, Counter] = defaultdict(Counter)
    descs: dict[str, list[str]] = defaultdict(list)
    units: dict[str, set] = defaultdict(set)
    for chunk_id, name, norm, etype, desc in ment:
        if not norm:
            continue
        names[norm][name] += 1
        types[norm][etype] += 1
        if desc:
            descs[norm].append(desc)
        units[norm].add(chunk_id)
    rment = con.execute("SELECT chunk_id, source_norm, target_norm, description, strength "
                        "FROM relationship_mentions ORDER BY chunk_id, source_norm, target_norm").fetchall()
    edges: dict[tuple[str, str], dict] = {}
    for chunk_id, s, t, desc, strength in rment:
        if s == t or s not in names or t not in names:
            continue
        key = (min(s, t), max(s, t))
        e = edges.setdefault(key, {"descs": [], "strength": [], "units": set()})
        if desc:
            e["descs"].append(desc)
        e["strength"].append(strength or 5)
        e["units"].add(chunk_id)
    # Stable ids: an entity keeps the id it had in the previous graph; new ones
    # get the next free ids in sorted order. Leiden's vertex order (and so its
    # seeded result) then changes only where the graph changed.
    old = dict(con.execute("SELECT norm, entity_id FROM entities").fetchall())
    ids = {n: old[n] for n in names if n in old}
    nxt = max(old.values(), default=0) + 1
    for norm in sorted(n for n in names if n not in ids):
        ids[norm] = nxt
        nxt += 1
    degree: Counter = Counter()
    for s, t in edges:
        degree[s] += 1
        degree[t] += 1
    ent_rows = []
    for norm, eid in sorted(ids.items(), key=lambda kv: kv[1]):
        desc = join_descriptions(descs[norm], max_description_tokens, count_tokens)
        ent_rows.append([eid, norm, _pick(names[norm]), _pick(types[norm], ("unknown",)), desc,
                         len(units[norm]), degree[norm]])
    rel_rows = []
    prov = []
    for rid, (key, e) in enumerate(sorted(edges.items()), start=1):
        s, t = key
        desc = join_descriptions(e["descs"], max_description_tokens, count_tokens)
        rel_rows.append([rid, ids[s], ids[t], desc, float(len(e["units"])),
                         sum(e["strength"]) / len(e["strength"]), degree[s] + degree[t]])
        prov.extend([rid, c] for c in sorted(e["units"]))
    with store.transaction():
        store.clear("graph")
        if ent_rows:
            con.executemany("INSERT INTO entities VALUES (?, ?, ?, ?, ?, ?, ?)", ent_rows)
            con.executemany("INSERT INTO entity_text_units VALUES (?, ?)",
                            [[ids[n], c] for n in sorted(units, key=ids.get) for c in sorted(units[n])])
        if rel_rows:
            con.executemany("INSERT INTO relationships VALUES (?, ?, ?, ?, ?, ?, ?)", rel_rows)
            con.executemany("INSERT INTO relationship_text_units VALUES (?, ?)", prov)
    return {"entities": len(ent_rows), "relationships": len(rel_rows),
            "isolated": sum(1 for n in ids if degree[n] == 0)}
