"""Query CPU seconds with the corpus statistics stored in the index (``corpus_terms``) against counting them
from every text unit on each query.

For each ``--db`` (``PATH:QUESTIONS_CSV:N``: an index, a CSV of questions, how many of them) the index is
copied twice into ``--work``: ``before`` stays as it is (built without the table) and is opened read-only,
so a global answer counts the statistics from the text units and noun phrases on each query (what main did);
``after`` is opened for writing once, which runs the schema step that counts and stores them (its CPU
seconds are the index-time cost: the index stage runs the same count), and global answers read them. Per
question: CPU seconds of the whole global query (``time.process_time``: this process, all its threads;
median of ``--repeats``), and of the three look-ups alone on a fresh theme index (residual IDF, corpus word
share, phrase-suffix units). Both must give the same answer text. With ``--main-answers`` (the JSON
``{question: answer text}`` that ``benchmarks/global_answer_dump.py`` writes when run on main's code, and
beside it ``<file>.cpu.json``, ``{question: CPU s}``) main's own run is the before of each query, and the copy
without the table is read for the look-ups alone.

Usage::

    git archive main | tar -x -C /tmp/main_code    # then, from /tmp/main_code, for each index:
    PYTHONPATH=. python benchmarks/global_answer_dump.py COPY_OF_INDEX QUESTIONS.csv N /tmp/qs/main_ps.json
    python benchmarks/query_stats.py --work /tmp/qs --main-answers /tmp/qs/main_ps.json ... \\
        --db /work/judge/s9/base_ps.duckdb:../shared/corpora/podcast_sample/global_questions_sample.csv:10 \\
        --db /work/judge/s9/base_pl.duckdb:benchmarks/questions/podcast_large_global.csv:3

Writes ``benchmarks/results/query_stats_s9.md`` and ``.json`` (``--name`` to change).
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import statistics
import time
from pathlib import Path

import slmgraph
from slmgraph.query.theme_labels import _suffix_units, residual_idf
from slmgraph.query.theme_lead import corpus_word_share
from slmgraph.query.theme_model import ThemeIndex
from slmgraph.store.db import Store

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)


def questions(path: Path, n: int) -> list[str]:
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    key = next(k for k in ("question_text", "question") if k in rows[0])
    return [r[key] for r in rows][:n]


def cpu(fn):
    t = time.process_time()
    out = fn()
    return out, time.process_time() - t


def lookups(store) -> tuple[int, int, int]:
    ix = ThemeIndex(store)
    return len(residual_idf(ix)), len(corpus_word_share(ix)), len(_suffix_units(ix))


def run(db: Path, qs: list[str], repeats: int) -> dict:
    out = {"lookup_cpu_s": [], "queries": []}
    with slmgraph.open(db) as ix:
        if qs:
            ix.query(qs[0], method="basic")  # loads the embedder: not part of a query's cost
        for _ in range(repeats):
            sizes, s = cpu(lambda: lookups(ix.store))
            out["lookup_cpu_s"].append(round(s, 4))
        out["terms"] = dict(zip(("words", "stems", "suffixes"), sizes))
        # a per-query scan of every text unit this change leaves (the boilerplate sentences), for scale
        out["boilerplate_cpu_s"] = round(cpu(lambda: ThemeIndex(ix.store).boilerplate)[1], 4)
        for q in qs:
            runs = []
            for _ in range(repeats):
                ans, s = cpu(lambda: ix.query(q, method="global"))
                runs.append(round(s, 3))
            out["queries"].append({"question": q, "cpu_s": runs, "answer": ans.text})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, action="append", help="PATH:QUESTIONS_CSV:N")
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--main-answers", type=Path, action="append", default=[],
                    help="JSON {question: answer text} of main's code, one per --db (in order)")
    ap.add_argument("--name", default="query_stats_s9")
    a = ap.parse_args()
    cond = benchkit.start()
    a.work.mkdir(parents=True, exist_ok=True)
    lines = ["# Corpus statistics stored at index time: global query CPU seconds", "", "", ""]
    data: dict = {"indexes": []}
    for i, spec in enumerate(a.db):
        path, qfile, n = spec.rsplit(":", 2)
        db = Path(path)
        before, after = a.work / f"{db.stem}_before.duckdb", a.work / f"{db.stem}_after.duckdb"
        for p in (before, after):
            shutil.copy(db, p)
        store, migrate_s = cpu(lambda: Store(after))
        n_units = store.count("text_units")
        n_rows = store.count("corpus_terms")
        store.close()
        qs = questions(Path(qfile), int(n))
        main_ans = json.loads(a.main_answers[i].read_text(encoding="utf-8")) if i < len(a.main_answers) else None
        # with main's answers, main's own run is the before of each query; the copy without the table is then
        # read for the look-ups alone
        res = {"before": run(before, [] if main_ans else qs, a.repeats), "after": run(after, qs, a.repeats)}
        if main_ans:
            main_cpu = json.loads(Path(str(a.main_answers[i]) + ".cpu.json").read_text(encoding="utf-8"))
            res["before"]["queries"] = [{"question": q, "cpu_s": [main_cpu[q]], "answer": main_ans[q], "code": "main"}
                                        for q in qs]
        same = [x["answer"] == y["answer"] for x, y in zip(res["before"]["queries"], res["after"]["queries"])]
        b = [statistics.median(x["cpu_s"]) for x in res["before"]["queries"]]
        f = [statistics.median(y["cpu_s"]) for y in res["after"]["queries"]]
        lines += [f"## {db.name} ({n_units:,} text units, {len(qs)} global questions of {Path(qfile).name})", "",
                  f"Counting and storing the statistics (the schema step on this index; the index stage runs the "
                  f"same count): {migrate_s:.2f} CPU s, {n_rows:,} rows.", "",
                  f"The three look-ups alone (residual IDF, corpus word share, phrase-suffix units; median of "
                  f"{a.repeats}): counted from the text {statistics.median(res['before']['lookup_cpu_s']):.3f} CPU s, "
                  f"read from the table {statistics.median(res['after']['lookup_cpu_s']):.3f} CPU s. For scale, "
                  f"the boilerplate-sentence scan each query still makes of every text unit: "
                  f"{res['after']['boilerplate_cpu_s']:.3f} CPU s.", "",
                  "Before: " + ("main's code (one run of each query)" if main_ans else
                                "this code on the copy without the table (statistics counted per query)")
                  + f"; after: this code reading the table (median of {a.repeats}).", "",
                  "| question | before CPU s | after CPU s | same answer |", "|---|---:|---:|---|"]
        for j, q in enumerate(qs):
            lines.append(f"| {q[:70]} | {b[j]:.3f} | {f[j]:.3f} | {same[j]} |")
        lines += ["", f"Sum: before {sum(b):.2f} CPU s, after {sum(f):.2f} CPU s "
                      f"({sum(b) - sum(f):+.2f} over {len(qs)} queries, {(sum(b) - sum(f)) / len(qs):+.3f} per query). "
                      f"Same answer text before and after on every query: {all(same)}.", ""]
        data["indexes"].append({"db": str(db), "text_units": n_units, "rows": n_rows,
                                "stats_cpu_s": round(migrate_s, 3), "same_answers": same,
                                "before_is_main": bool(main_ans), **res})
    cond = benchkit.finish(cond)
    lines[2] = benchkit.sentence(cond)
    data["conditions"] = cond
    md, _ = benchkit.write_results(a.name, lines, data)
    print("\n".join(lines))
    print(f"wrote {md}")


if __name__ == "__main__":
    main()
