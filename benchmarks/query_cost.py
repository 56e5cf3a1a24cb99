"""Query cost per community level, against the paper's TS and SS baselines.

For an index, prints the shape of the GraphRAG paper's table 1 (Edge et al.
2024, sec. 4): for each level C0..Cn, TS (map-reduce over all text units),
SS (basic vector RAG), DRIFT (slmgraph.query.engines.drift_search) and budgeted lazy
search (slmgraph.query.engines.lazy_search, ``lazy-<budget>``; needs no reports):

* context units (reports, or text units) and their tokens, and the share of
  TS's tokens (the paper: C0 needed ~2-3 % of TS on its corpora);
* with ``--run``: model calls and wall-clock per query on this machine, and
  *coverage*: the share of documents behind the answer: documents supporting
  an entity of a cited report (global), of a cited text unit (TS), or of the
  top-k passages (SS). Since issue 9 global and TS answers cite the items
  that pass the helpfulness selection (slmgraph.query.scoring); before, a
  report counted when the model's map step gave one of its points a
  non-zero score -- figures from before and after are not comparable.

Usage::

    python benchmarks/query_cost.py --db podcast.duckdb                 # static figures only
    python benchmarks/query_cost.py --db podcast.duckdb --run --questions 2

Questions come from ``--questions-file`` (default: the 10 podcast global
questions in ../shared). Writes ``benchmarks/results/query_cost.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import time
from pathlib import Path

from slmgraph.config.settings import Settings, physical_cores
from slmgraph.store.db import Store

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)

DEFAULT_QUESTIONS = benchkit.PODCAST_SAMPLE / "global_questions_sample.csv"


def load_questions(path: Path, n: int) -> list[str]:
    """First ``n`` questions of a CSV with a ``question_text`` or ``question`` column (else its last column)."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    key = next((k for k in ("question_text", "question") if k in rows[0]), list(rows[0])[-1])
    return [r[key] for r in rows[:n]]


def docs_of_chunks(store: Store, chunk_ids: list[str]) -> set[str]:
    """Documents of the given text units."""
    if not chunk_ids:
        return set()
    q = ",".join("?" * len(chunk_ids))
    return {r[0] for r in store.con.execute(f"SELECT DISTINCT doc_id FROM text_units WHERE chunk_id IN ({q})",
                                            chunk_ids).fetchall()}


def main() -> None:
    """Parse the arguments, measure, print the table and write the results files."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--run", action="store_true", help="run the queries (model calls, wall-clock, coverage)")
    ap.add_argument("--questions", type=int, default=2, help="how many questions to run (default 2)")
    ap.add_argument("--questions-file", type=Path, default=DEFAULT_QUESTIONS)
    ap.add_argument("--methods", default="levels,ts,ss,drift,lazy", help="comma list of: levels, ts, ss, drift, lazy")
    ap.add_argument("--budget", type=int, default=None, help="lazy search's relevance-test budget (default 100)")
    ap.add_argument("--model", default=None)
    args = ap.parse_args()

    store = Store(args.db)
    con = store.con
    n_docs = store.count("documents")
    ts_tokens = con.execute("SELECT sum(n_tokens) FROM text_units").fetchone()[0] or 0
    n_units = store.count("text_units")
    levels = con.execute("SELECT level, count(*), sum(n_tokens) FROM community_reports GROUP BY level "
                         "ORDER BY level").fetchall()
    methods = set(args.methods.split(","))
    rows: list[dict] = []
    if "levels" in methods:
        rows += [{"method": f"C{lv}", "level": lv, "units": n, "context_tokens": int(t or 0),
                  "share_of_ts": round(100 * (t or 0) / ts_tokens, 2) if ts_tokens else None} for lv, n, t in levels]
    if "ts" in methods:
        rows.append({"method": "TS", "units": n_units, "context_tokens": int(ts_tokens), "share_of_ts": 100.0})
    s = Settings()
    if "ss" in methods:
        rows.append({"method": "SS", "units": s.basic_top_k, "context_tokens": None, "share_of_ts": None})
    if args.budget is not None:
        s.lazy_budget = args.budget
    if "drift" in methods:
        rows.append({"method": "DRIFT", "units": None, "context_tokens": None, "share_of_ts": None})
    if "lazy" in methods:
        rows.append({"method": f"lazy-{s.lazy_budget}", "units": None, "context_tokens": None, "share_of_ts": None})

    if args.run:
        from slmgraph.indexing.stages.embed import Embedder
        from slmgraph.model.backend import load_model
        from slmgraph.model.client import ModelClient
        from slmgraph.config.prompting import Prompts
        from slmgraph.query.engines.basic_search import basic_search
        from slmgraph.query.answer import unit_numbers
        from slmgraph.query.engines.drift_search import drift_search
        from slmgraph.query.engines.global_search import global_search, text_unit_search
        from slmgraph.query.engines.lazy_search import lazy_search

        questions = load_questions(args.questions_file, args.questions)
        model = load_model(args.model or store.get_meta("model_path") or None, s.n_ctx, s.n_threads, s.seed)
        client = ModelClient(model, store, "bench-query-cost")
        prompts = Prompts()
        embedder = Embedder(threads=s.n_threads)
        chunk_of = {n: c for c, n in unit_numbers(store).items()}
        for row in rows:
            calls, secs, cov, ctx, units, tested, spent = [], [], [], [], [], [], []
            for q in questions:
                t0 = time.perf_counter()
                if row["method"].startswith("C"):
                    ans = global_search(store, client, prompts, s, q, level=row["level"], progress=False,
                                        embedder=embedder)
                    covered = benchkit.docs_of_communities(store, ans.citations.get("reports", []))
                elif row["method"] == "TS":
                    ans = text_unit_search(store, client, prompts, s, q, progress=False, embedder=embedder)
                    by_src = {c["source"]: c["id"] for c in ans.context}
                    covered = docs_of_chunks(store, [by_src[i] for i in ans.citations.get("sources", [])])
                elif row["method"] == "DRIFT":
                    ans = drift_search(store, client, prompts, s, q, embedder)
                    covered = benchkit.docs_of_communities(store, ans.citations.get("reports", [])) | docs_of_chunks(
                        store, [chunk_of[i] for i in ans.citations.get("sources", [])])
                    ctx.append(ans.details["tokens_read"])
                    units.append(len(ans.details["primer"]) + len(ans.details["follow_ups"]))
                elif row["method"].startswith("lazy"):
                    ans = lazy_search(store, client, prompts, s, q, embedder)
                    covered = docs_of_chunks(store, [chunk_of[i] for i in ans.citations.get("sources", [])])
                    ctx.append(ans.details["context_tokens"])
                    units.append(ans.details["tests_used"])
                    tested.append(ans.details["tested_tokens"])
                else:
                    ans = basic_search(store, client, prompts, s, q, embedder)
                    covered = docs_of_chunks(store, [c["id"] for c in ans.context])
                    ctx.append(ans.details["context_tokens"])
                spent.append(ans.prompt_tokens + ans.completion_tokens)
                secs.append(time.perf_counter() - t0)
                calls.append(ans.model_calls)
                cov.append(100 * len(covered) / n_docs if n_docs else 0)
                print(f"{row['method']}: {q[:60]}... {ans.model_calls} calls, {secs[-1]:.1f} s, "
                      f"coverage {cov[-1]:.1f} %", flush=True)
            row.update({"model_calls": statistics.mean(calls), "seconds_per_query": round(statistics.mean(secs), 1),
                        "coverage_pct": round(statistics.mean(cov), 1)})
            row["model_tokens"] = int(statistics.mean(spent))
            if ctx:
                row["context_tokens"] = int(statistics.mean(ctx))
                row["share_of_ts"] = round(100 * row["context_tokens"] / ts_tokens, 2) if ts_tokens else None
            if units:
                row["units"] = round(statistics.mean(units), 1)
            if tested:
                row["tested_tokens"] = int(statistics.mean(tested))
    store.close()

    head = ["method", "units", "context_tokens", "share_of_ts"] + (
        ["model_calls", "model_tokens", "seconds_per_query", "coverage_pct", "tested_tokens"] if args.run else [])
    lines = [f"# Query cost: {args.db} ({n_docs} documents, {n_units} text units, {ts_tokens} tokens), "
             f"{physical_cores()} cores", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        lines.append("| " + " | ".join("" if r.get(h) is None else str(r.get(h)) for h in head) + " |")
    if args.run:
        lines += ["", f"{args.questions} question(s) from {args.questions_file.name}; share_of_ts = context tokens "
                      "as a percentage of TS's; coverage = share of documents behind the cited items (SS: the top-k).",
                  "DRIFT: units = primer reports + follow-ups (local searches); context_tokens = tokens read "
                  "(the primer's reports and every follow-up's local context). lazy-N: units = relevance tests "
                  "used (budget N); context_tokens = tokens read at query time (text given to the model by the "
                  "tests -- none with the default embedding test, which reads the vector stored at index time -- "
                  "plus the relevant text units the answer is built from); tested_tokens = the tokens of the "
                  "text units the tests judged. model_tokens = model prompt + completion tokens per query."]
    print("\n".join(lines))
    benchkit.write_results("query_cost", lines, rows)


if __name__ == "__main__":
    main()
