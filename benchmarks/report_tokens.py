"""Prompt tokens of model-written community reports, before and after, on one built index.

Takes an index built with the model writing (``slmgraph index CORPUS --descriptions model --reports
model``, or ``benchmarks/index_throughput.py ... --descriptions model --reports model``), copies it,
and writes the community reports again with this checkout's report stage (its extraction, graph and
communities are kept, so both report runs read the same graph), once per ``--report-budget`` given.
Prints and writes, per stage, the prompt tokens evaluated per corpus token (the ledger's prompt
tokens minus those reused from the KV cache) of the index's own run and of each new report run,
with the whole build's figure (the index's extraction + the report run), the report contexts by
level and kind, and the budget's plan. Timings are printed but are only comparable on a quiet
machine; the token counts do not depend on the load.

    python benchmarks/report_tokens.py INDEX.duckdb [--report-budget 0.3 0] [--workers 2]
        [--name model_writing_tokens] [--note TEXT]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from slmgraph.model.backend import load_model
from slmgraph.model.client import ModelClient
from slmgraph.config.settings import Settings
from slmgraph.config.prompting import Prompts
from slmgraph.indexing.stages.reports import run_reports
from slmgraph.store.db import Store, new_run_id

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)

#: Ledger stages of extraction (JSON records, gleaning) and of reports.
EXTRACT = ("extract", "glean")
REPORT = ("report",)


def ledger_figures(store: Store, stages: tuple[str, ...], run_id: str | None = None) -> dict:
    """Calls, prompt/evaluated/reused/completion tokens and model-seconds of ``stages`` in one run
    (``run_id``; None = the latest run that has such calls)."""
    q = ",".join("?" * len(stages))
    if run_id is None:
        row = store.con.execute(f"SELECT run_id FROM llm_calls WHERE stage IN ({q}) ORDER BY call_id DESC LIMIT 1",
                                list(stages)).fetchone()
        run_id = row[0] if row else None
    r = store.con.execute(f"""SELECT count(*), sum(prompt_tokens), sum(cached_tokens),
        sum(prompt_tokens - cached_tokens), sum(completion_tokens), sum(seconds), count(DISTINCT worker)
        FROM llm_calls WHERE stage IN ({q}) AND run_id = ?""", [*stages, run_id]).fetchone()
    return {"run_id": run_id, "calls": r[0], "prompt_tokens": int(r[1] or 0), "reused_tokens": int(r[2] or 0),
            "evaluated_tokens": int(r[3] or 0), "completion_tokens": int(r[4] or 0),
            "model_seconds": round(r[5] or 0, 1), "workers": r[6]}


def contexts(store: Store) -> list[list]:
    """``[level, context_kind, reports, context tokens]`` of the index's community reports."""
    return [list(r) for r in store.con.execute(
        "SELECT level, context_kind, count(*), sum(context_tokens) FROM community_reports GROUP BY 1, 2 "
        "ORDER BY 1, 2").fetchall()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("index", type=Path, help="a model-written index (read only: a copy is written)")
    ap.add_argument("--report-budget", type=float, nargs="+", default=[Settings.report_budget],
                    help="budgets to run (prompt tokens per corpus token; 0 = none)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--name", default="report_tokens")
    ap.add_argument("--note", default="")
    args = ap.parse_args()
    cond = benchkit.start()
    src = Store(args.index, read_only=True)
    corpus = int(src.con.execute("SELECT sum(n_tokens) FROM documents").fetchone()[0])
    files = src.count("documents")
    before = {"extract": ledger_figures(src, EXTRACT), "reports": ledger_figures(src, REPORT),
              "contexts": contexts(src)}
    src.close()
    runs = []
    for budget in args.report_budget:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "copy.duckdb"
            shutil.copy(args.index, db)
            store = Store(db)
            s = Settings(descriptions="model", reports="model", workers=args.workers, n_threads=args.threads,
                         threads_explicit=True, report_budget=budget)
            model = load_model(None, s.n_ctx, args.threads, s.seed, threads_explicit=True)
            client = ModelClient(model, store, new_run_id())
            print(f"reports with --report-budget {budget:g} ...", flush=True)
            t0 = time.perf_counter()
            res = run_reports(store, client, Prompts(), s, progress=False, say=print)
            wall = time.perf_counter() - t0
            runs.append({"report_budget": budget, "wall_seconds": round(wall, 1),
                         "result": {k: getattr(res, k) for k in (
                             "reports", "model_calls", "cache_hits", "workers", "budget_tokens", "planned_tokens",
                             "description_tokens", "budget_scale", "ungrounded_fields_replaced")},
                         "reports": ledger_figures(store, REPORT, client.run_id), "contexts": contexts(store)})
            store.close()
            del model
    cond = benchkit.finish(cond)
    result = {**cond, "index": str(args.index), "files": files, "corpus_tokens": corpus, "note": args.note,
              "before": before, "runs": runs}
    lines = render(result)
    print("\n".join(lines))
    benchkit.write_results(args.name, lines, result)


def render(r: dict) -> list[str]:
    """The results as markdown lines."""
    c = r["corpus_tokens"]
    ex, rep0 = r["before"]["extract"], r["before"]["reports"]

    def per(n: int) -> str:
        return f"{n / max(1, c):.2f}"

    lines = [f"# Prompt tokens of model-written reports: {r['index']}", "",
             benchkit.sentence(r), "", *([r["note"], ""] if r.get("note") else []),
             f"{r['files']} documents, {c:,} corpus tokens. The index's own run evaluated the extraction and the "
             "reports as built then; each row below writes the reports again from the same graph and communities "
             "with this checkout's report stage (per-build budget, parents reading their children's reports, "
             "each sentence shown once). Evaluated = prompt tokens minus the tokens reused from the KV cache "
             "(the fixed prefix, evaluated once per worker).", "",
             "| run | calls | evaluated prompt tok | per corpus tok | reused | completion tok | model s | "
             "whole build per corpus tok (extraction + reports) |", "|---|---|---|---|---|---|---|---|"]

    def row(name: str, f: dict, whole: str = "") -> str:
        reuse = f["reused_tokens"] / max(1, f["prompt_tokens"])
        return (f"| {name} | {f['calls']} | {f['evaluated_tokens']:,} | {per(f['evaluated_tokens'])} | {reuse:.0%} | "
                f"{f['completion_tokens']:,} | {f['model_seconds']} | {whole} |")

    lines.append(row("extraction (index run)", ex))
    lines.append(row("reports (index run)", rep0, per(ex["evaluated_tokens"] + rep0["evaluated_tokens"])))
    for run in r["runs"]:
        f = run["reports"]
        lines.append(row(f"reports, --report-budget {run['report_budget']:g}", f,
                         per(ex["evaluated_tokens"] + f["evaluated_tokens"])))
    lines += ["", "| run | budget tok | planned tok | description cap tok | context scale | ungrounded fields "
                  "replaced | wall s |", "|---|---|---|---|---|---|---|"]
    for run in r["runs"]:
        x = run["result"]
        lines.append(f"| --report-budget {run['report_budget']:g} | {x['budget_tokens']:,} | {x['planned_tokens']:,} | "
                     f"{x['description_tokens'] if x['description_tokens'] is not None else 'whole'} | "
                     f"{x['budget_scale']:g} | {x['ungrounded_fields_replaced']} | {run['wall_seconds']} |")
    lines += ["", "Report contexts (level, kind: reports, context tokens):", ""]
    fmt = lambda cs: "; ".join(f"{lv} {kind}: {n}, {tok:,}" for lv, kind, n, tok in cs)  # noqa: E731
    lines.append(f"- index run: {fmt(r['before']['contexts'])}")
    for run in r["runs"]:
        lines.append(f"- --report-budget {run['report_budget']:g}: {fmt(run['contexts'])}")
    return lines


if __name__ == "__main__":
    main()
