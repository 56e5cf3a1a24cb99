"""How the concept thresholds cut an index's noun phrases: text units per phrase (document frequency).

Reads an index built with concepts (``concept_mentions``) and prints, for the phrases of its text
units: how many occur in one text unit only (dropped: fewer than ``slmgraph.indexing.stages.concepts.MIN_UNITS``),
how many a maximum share of the text units would drop (5, 10, 25, 50 %), the phrases above the
default share, and how many the budget (``concept_budget``) keeps.

Usage::

    python benchmarks/concept_thresholds.py INDEX.duckdb [--name concept_thresholds]

Writes ``benchmarks/results/<name>.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import duckdb

from slmgraph.indexing.stages.concepts import MAX_UNIT_SHARE, MIN_UNITS, concept_budget, unit_range

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db", type=Path)
    ap.add_argument("--name", default="concept_thresholds")
    args = ap.parse_args(argv)
    con = duckdb.connect(str(args.db), read_only=True)
    n_units = con.execute("SELECT count(*) FROM text_units").fetchone()[0]
    df = dict(con.execute("SELECT norm, count(DISTINCT chunk_id) FROM concept_mentions GROUP BY 1").fetchall())
    con.close()
    lo, hi = unit_range(n_units)
    ranked = sorted(df, key=lambda k: (-df[k], k))
    shares = {s: sum(1 for n in df.values() if n > max(MIN_UNITS, s * n_units)) for s in (0.05, 0.1, 0.25, 0.5)}
    band = [k for k in ranked if lo <= df[k] <= hi]
    data = {"index": str(args.db), "text_units": n_units, "phrases": len(df),
            "in_one_unit": sum(1 for n in df.values() if n < MIN_UNITS),
            "above_share": {str(k): v for k, v in shares.items()}, "range": [lo, hi], "in_range": len(band),
            "budget": concept_budget(n_units), "kept": min(len(band), concept_budget(n_units)),
            "above_default_share": [(k, df[k]) for k in ranked if df[k] > hi],
            "kept_first": [(k, df[k]) for k in band[:30]], "kept_last": [(k, df[k]) for k in band[:concept_budget(
                n_units)][-15:]]}
    md = [f"# Concept thresholds on {args.db.name}", "",
          f"Command: `python benchmarks/concept_thresholds.py {args.db}`.", "",
          f"{n_units} text units, {len(df)} distinct noun phrases (concept keys).", "",
          f"- in one text unit only (dropped, fewer than {MIN_UNITS}): {data['in_one_unit']}",
          "- in more than a share of the text units: "
          + ", ".join(f"{int(s * 100)} %: {v}" for s, v in shares.items()),
          f"- default range {lo}..{hi} text units (at most {int(MAX_UNIT_SHARE * 100)} %): {len(band)} phrases; "
          f"the budget keeps {data['kept']} (budget {data['budget']})", "",
          "Phrases above the default share (text units): "
          + ", ".join(f"{k} ({n})" for k, n in data["above_default_share"]), "",
          "Kept, most frequent first: " + ", ".join(f"{k} ({n})" for k, n in data["kept_first"]), "",
          "Last kept within the budget: " + ", ".join(f"{k} ({n})" for k, n in data["kept_last"])]
    benchkit.write_results(args.name, md, data)
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
