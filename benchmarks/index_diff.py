"""Whether two index files hold the same index: every table's rows compared as sorted lists (row order
aside), leaving out what differs between any two runs (times, run ids, the ledger of stage timings).

Usage::

    python benchmarks/index_diff.py A.duckdb B.duckdb [--name NAME]

Prints one line per table (rows in each, same or not, and for a table that differs, how many rows only
one of them holds); with ``--name`` also writes ``benchmarks/results/<name>.md`` and ``.json``.
Exit status 1 when a table differs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

#: Columns left out per table (set by the clock of the run that wrote them).
VOLATILE = {"documents": ("added_at",), "migrations": ("applied_at",), "llm_calls": ("created_at", "run_id", "seconds",
                                                                                       "prompt_seconds", "call_id")}
#: Tables left out: wall-clock figures of each run.
SKIPPED = {"stage_runs"}
#: ``meta`` keys left out: the run's own (its id, where its settings came from) or the input's absolute path.
META_SKIPPED = {"settings_sources", "input_root"}


def table_rows(con, table: str) -> list:
    cols = [c for c, in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = ? "
                                    "AND database_name = current_database() ORDER BY column_index", [table]).fetchall()
            if c not in VOLATILE.get(table, ())]
    rows = con.execute(f"SELECT {', '.join(cols)} FROM {table}").fetchall()
    if table == "meta":
        rows = [r for r in rows if r[0] not in META_SKIPPED]
    return sorted(rows, key=repr)


def close_rows(ra: list, rb: list, tol: float) -> float | None:
    """The largest difference between the list values of rows that agree in every other column (rows paired by
    those columns), or None when the rows cannot be paired so or differ by more than ``tol``."""
    def split(r):
        return tuple(v for v in r if not isinstance(v, list)), [v for v in r if isinstance(v, list)]
    da = dict(split(r) for r in ra)
    db = dict(split(r) for r in rb)
    if len(da) != len(ra) or set(da) != set(db):
        return None
    worst = 0.0
    for k, lists in da.items():
        for x, y in zip(lists, db[k]):
            if len(x) != len(y):
                return None
            worst = max([worst] + [abs(p - q) for p, q in zip(x, y)])
    return worst if worst <= tol else None


def compare(a: Path, b: Path, tol: float = 0.0) -> list[dict]:
    import duckdb

    ca, cb = duckdb.connect(str(a), read_only=True), duckdb.connect(str(b), read_only=True)
    names = lambda c: {t for t, in c.execute("SELECT table_name FROM duckdb_tables() "  # noqa: E731
                                              "WHERE database_name = current_database()").fetchall()}
    out = []
    for t in sorted((names(ca) | names(cb)) - SKIPPED):
        ra = table_rows(ca, t) if t in names(ca) else None
        rb = table_rows(cb, t) if t in names(cb) else None
        if ra is None or rb is None:
            out.append({"table": t, "rows_a": None if ra is None else len(ra), "rows_b": None if rb is None
                        else len(rb), "same": False})
            continue
        sa, sb = set(map(repr, ra)), set(map(repr, rb))
        row = {"table": t, "rows_a": len(ra), "rows_b": len(rb), "same": ra == rb, "only_a": len(sa - sb),
               "only_b": len(sb - sa)}
        if ra != rb and tol > 0:
            row["max_vector_difference"] = close_rows(ra, rb, tol)
            row["same"] = row["max_vector_difference"] is not None
        out.append(row)
    ca.close()
    cb.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--name", help="write benchmarks/results/NAME.md and .json")
    ap.add_argument("--vector-tolerance", type=float, default=0.0,
                    help="rows equal but for list values (vectors) within this absolute difference count as the "
                         "same (the embedder's float noise between runs)")
    args = ap.parse_args()
    res = compare(args.a, args.b, args.vector_tolerance)
    lines = [f"| table | rows in {args.a.name} | rows in {args.b.name} | same |", "|---|---:|---:|---|"]
    for r in res:
        diff = "yes" if r["same"] and r.get("max_vector_difference") is None else \
            f"yes, vectors within {r['max_vector_difference']:.1e}" if r["same"] else \
            f"**no** ({r.get('only_a', '?')} rows only in the first, {r.get('only_b', '?')} only in the second)"
        lines.append(f"| {r['table']} | {r['rows_a']} | {r['rows_b']} | {diff} |")
    print("\n".join(lines))
    if args.name:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import benchkit

        md = [f"# Index content: {args.a.name} and {args.b.name}", "",
              f"`python benchmarks/index_diff.py {args.a} {args.b}`: every table's rows compared as sorted "
              f"lists, without {', '.join(f'{t}.{c}' for t, cs in VOLATILE.items() for c in cs)}, the tables "
              f"{', '.join(sorted(SKIPPED))} and the meta keys {', '.join(sorted(META_SKIPPED))} (set by each "
              "run's clock or paths)" + (f"; vectors equal within {args.vector_tolerance:g} count as the same"
                                         if args.vector_tolerance else "") + ".", ""] + lines
        benchkit.write_results(args.name, md, {"a": str(args.a), "b": str(args.b), "tables": res})
    sys.exit(0 if all(r["same"] for r in res) else 1)


if __name__ == "__main__":
    main()
