"""Answer the first ``N`` questions of a CSV with global search and write ``{question: answer text}`` to
``OUT`` and ``{question: CPU s}`` to ``OUT.cpu.json`` (``time.process_time`` of each query, the embedder
loaded before). It uses only the public API, so it runs on older code too (``benchmarks/query_stats.py``
compares its answers and CPU seconds with the current code's).

Usage::

    python benchmarks/global_answer_dump.py INDEX.duckdb QUESTIONS.csv N OUT.json
"""

import csv
import json
import sys
import time

import slmgraph


def main() -> None:
    db, qfile, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    with open(qfile, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    key = next(k for k in ("question_text", "question") if k in rows[0])
    qs = [r[key] for r in rows][:n]
    answers, cpu = {}, {}
    with slmgraph.open(db) as ix:
        ix.query(qs[0], method="basic")  # loads the embedder: not part of a query's cost
        for q in qs:
            t = time.process_time()
            answers[q] = ix.query(q, method="global").text
            cpu[q] = round(time.process_time() - t, 3)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(answers, f, ensure_ascii=False, indent=1)
    with open(out + ".cpu.json", "w", encoding="utf-8") as f:
        json.dump(cpu, f, indent=1)


if __name__ == "__main__":
    main()
