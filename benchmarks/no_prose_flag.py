"""Query CPU seconds with the stored no-prose flag (``text_units.no_prose``) against judging every text unit.

Copies ``--db`` twice into ``--work``: ``before`` stays as it is and is opened read-only, so the searches judge
every unit's text on each query (:func:`slmgraph.text.shape.no_prose_passage`, what an index without the
column gets); ``after`` is opened for writing once, which runs the schema step that stores the flag (its CPU
seconds are reported), and the searches read it. For each copy, each method and each of the first
``--questions`` podcast global questions: CPU seconds of the whole query and of the no-prose look-up alone
(``time.process_time``: this process, all its threads). Both copies must give the same answers.

Usage::

    python benchmarks/no_prose_flag.py --db /work/judge/s8/base_pl.duckdb --work /tmp/np --questions 3

Writes ``benchmarks/results/no_prose_flag.md`` and ``.json`` (``--name`` to change).
"""

from __future__ import annotations

import argparse
import csv
import shutil
import statistics
import time
from pathlib import Path

import slmgraph
from slmgraph.query.engines.basic_search import no_prose_units
from slmgraph.store.db import Store

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)


def questions(n: int) -> list[str]:
    with open(benchkit.PODCAST_SAMPLE / "global_questions_sample.csv", encoding="utf-8") as f:
        return [r["question_text"] for r in csv.DictReader(f)][:n]


def cpu(fn):
    t = time.process_time()
    out = fn()
    return out, time.process_time() - t


def run(db: Path, methods: list[str], qs: list[str], repeats: int) -> dict:
    out = {"lookup_cpu_s": [], "queries": []}
    with slmgraph.open(db) as ix:
        ix.query(qs[0], method="basic")  # loads the embedder and the model: not part of a query's cost
        for _ in range(repeats):
            units, s = cpu(lambda: no_prose_units(ix.store))
            out["lookup_cpu_s"].append(round(s, 4))
        out["no_prose_units"] = len(units)
        for method in methods:
            for q in qs:
                runs = []
                for _ in range(repeats):
                    ans, s = cpu(lambda: ix.query(q, method=method))
                    runs.append(round(s, 3))
                out["queries"].append({"method": method, "question": q, "cpu_s": runs,
                                       "answer": ans.text, "no_prose_units": ans.details.get("no_prose_units")})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, type=Path)
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--questions", type=int, default=3)
    ap.add_argument("--methods", default="basic,lazy")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--name", default="no_prose_flag")
    a = ap.parse_args()
    cond = benchkit.start()
    a.work.mkdir(parents=True, exist_ok=True)
    before, after = a.work / "before.duckdb", a.work / "after.duckdb"
    for p in (before, after):
        shutil.copy(a.db, p)
    store, migrate_s = cpu(lambda: Store(after))
    n_units = store.count("text_units")
    store.close()
    methods, qs = a.methods.split(","), questions(a.questions)
    res = {"before": run(before, methods, qs, a.repeats), "after": run(after, methods, qs, a.repeats)}
    cond = benchkit.finish(cond)
    same = all(x["answer"] == y["answer"] for x, y in zip(res["before"]["queries"], res["after"]["queries"]))
    lines = [f"# No-prose flag: query CPU seconds on {a.db.name} ({n_units:,} text units)", "",
             benchkit.sentence(cond), "",
             f"Schema step filling the flag of an existing index (once): {migrate_s:.2f} CPU s.", "",
             f"No-prose look-up alone (median of {a.repeats}): judged from the text "
             f"{statistics.median(res['before']['lookup_cpu_s']):.3f} CPU s, read from the column "
             f"{statistics.median(res['after']['lookup_cpu_s']):.4f} CPU s "
             f"({res['after']['no_prose_units']} no-prose units in both: "
             f"{res['before']['no_prose_units'] == res['after']['no_prose_units']}).", "",
             "| method | question | before CPU s (median) | after CPU s (median) |", "|---|---|---:|---:|"]
    for x, y in zip(res["before"]["queries"], res["after"]["queries"]):
        lines.append(f"| {x['method']} | {x['question'][:60]} | {statistics.median(x['cpu_s']):.3f} | "
                     f"{statistics.median(y['cpu_s']):.3f} |")
    lines += ["", f"Same answer text before and after on every query: {same}."]
    md, _ = benchkit.write_results(a.name, lines, {"conditions": cond, "db": str(a.db), "text_units": n_units,
                                                   "migrate_cpu_s": round(migrate_s, 3), "same_answers": same, **res})
    print("\n".join(lines))
    print(f"wrote {md}")


if __name__ == "__main__":
    main()
