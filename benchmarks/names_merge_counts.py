"""Entity-resolution merge counts per rule of an index's stored mentions, under the slmgraph on PYTHONPATH.

Reads ``entity_mentions`` read-only and runs :func:`slmgraph.indexing.stages.resolve.resolve_entities` as the
graph stage does (text units as evidence, the index's type reliability), with the embedding rule off, so two
versions of the code compare on the same mentions without rebuilding the index.

Usage::

    PYTHONPATH=/path/to/slmgraph python benchmarks/names_merge_counts.py INDEX.duckdb [RULE ...]

Prints one line of counts per rule and the number of entities left; with RULE names, each merge of those rules.
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict

import duckdb

from slmgraph.config.settings import Settings
from slmgraph.indexing.stages.extract_routes import types_reliable
from slmgraph.indexing.stages.resolve import resolve_entities


def main(db: str, rules: list[str]) -> None:
    con = duckdb.connect(db, read_only=True)
    meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    settings = Settings(extractor=json.loads(meta["settings"])["extractor"])
    reliable = types_reliable(settings, int(meta.get("model_params") or 0) or None)
    names, types, units = defaultdict(Counter), defaultdict(Counter), defaultdict(set)
    for chunk_id, name, norm, etype in con.execute(
            "SELECT chunk_id, name, norm, type FROM entity_mentions").fetchall():
        if norm:
            names[norm][name] += 1
            types[norm][etype] += 1
            units[norm].add(chunk_id)
    res = resolve_entities(names, types, {n: len(u) for n, u in units.items()}, threshold=None, units=units,
                           types_reliable=reliable)
    counts = {k: v for k, v in res.merges.items() if k != "embedding"}
    print(db, counts, "entities", len(set(res.mapping.values())))
    for row in res.log:
        if row.rule in rules:
            print("  ", row.rule, repr(row.norm), "->", repr(row.into_norm))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
