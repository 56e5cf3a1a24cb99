"""CPU seconds of each index stage of a default ``slmgraph index`` build, for builds timed on a shared machine.

Wall-clock seconds on a machine other processes share measure the other processes as much as the build;
CPU seconds (this process's threads and its worker processes, ``resource.getrusage`` of ``RUSAGE_SELF``
plus ``RUSAGE_CHILDREN``) measure the work the build does. The build runs in this process through the CLI
(``slmgraph index CORPUS --db DB`` and any further flags), with the ``slmgraph`` first on ``PYTHONPATH``, so
the same script measures two source trees::

    PYTHONPATH=/path/to/tree python benchmarks/stage_cpu.py CORPUS --db /tmp/a.duckdb --out /tmp/a.json
    python benchmarks/stage_cpu.py --compare before=/tmp/a.json after=/tmp/b.json --name speed_s9

A stage's CPU seconds count what ran while it ran: a thread it leaves running (the embed-ahead thread
beside the graph stage) is counted in the stage it ran beside; worker processes are counted once they
are joined (the extract stage's, at its end).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchkit  # noqa: E402


def _cpu() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def measure(corpus: str, db: str, flags: list[str]) -> dict:
    """Build ``corpus`` into ``db`` through the CLI; ``{"stages": {name: {"wall_s", "cpu_s"}}, "total": ...}``."""
    import slmgraph
    import slmgraph.indexing.pipeline as pipeline
    from slmgraph.cli.main import main

    stages: dict[str, dict] = {}
    real = pipeline.run_stage

    def timed(ctx, st, run_id, routes):
        w, c = time.perf_counter(), _cpu()
        try:
            return real(ctx, st, run_id, routes)
        finally:
            stages[st.name] = {"wall_s": round(time.perf_counter() - w, 2), "cpu_s": round(_cpu() - c, 2)}

    pipeline.run_stage = timed
    load0 = benchkit.loadavg()
    w, c = time.perf_counter(), _cpu()
    code = main(["index", corpus, "--db", db, *flags])
    return {"source": str(Path(slmgraph.__file__).resolve().parent.parent), "corpus": corpus, "flags": flags,
            "exit": code, "stages": stages, "total": {"wall_s": round(time.perf_counter() - w, 2),
                                                      "cpu_s": round(_cpu() - c, 2)},
            "loadavg_start": load0, "loadavg_end": benchkit.loadavg()}


def compare(runs: dict[str, dict], name: str, note: str = "") -> None:
    labels = list(runs)
    names = list(dict.fromkeys(n for r in runs.values() for n in r["stages"]))
    lines = [f"# CPU seconds per index stage: {', '.join(labels)}", "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {benchkit.machine()}. "
             "CPU seconds = this process and its joined worker processes (getrusage); wall seconds are under "
             "contention and are no speed claim.", ""]
    for label, r in runs.items():
        lines.append(f"- {label}: `{r['source']}`, corpus `{r['corpus']}`, load average {r['loadavg_start']} at the "
                     f"start, {r['loadavg_end']} at the end (under contention)")
    lines += ["", "| stage | " + " | ".join(f"{lb} CPU s | {lb} wall s" for lb in labels) + " |",
              "|---|" + "---|---|" * len(labels)]
    for n in names + ["total"]:
        cells = []
        for r in runs.values():
            f = r["total"] if n == "total" else r["stages"].get(n, {})
            cells += [str(f.get("cpu_s", "")), str(f.get("wall_s", ""))]
        lines.append(f"| {n} | " + " | ".join(cells) + " |")
    if note:
        lines += ["", note]
    benchkit.write_results(name, lines, {"runs": runs, "note": note})
    print("\n".join(lines))


def cli() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?")
    ap.add_argument("--db")
    ap.add_argument("--out", help="JSON file for this build's figures")
    ap.add_argument("--compare", nargs="+", metavar="LABEL=JSON", help="combine measured builds into RESULTS/NAME")
    ap.add_argument("--name", default="stage_cpu")
    ap.add_argument("--note", default="", help="a paragraph added under the table")
    args, flags = ap.parse_known_args()
    if args.compare:
        compare({lb: json.loads(Path(p).read_text()) for lb, p in (x.split("=", 1) for x in args.compare)},
                args.name, args.note)
        return
    if not (args.corpus and args.db and args.out):
        ap.error("give CORPUS --db DB --out JSON, or --compare LABEL=JSON ...")
    res = measure(args.corpus, args.db, flags)
    Path(args.out).write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    cli()
