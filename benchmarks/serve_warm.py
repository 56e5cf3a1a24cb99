"""Wall-clock of questions asked through ``slmgraph serve`` once it has loaded the model, embedder and spaCy.

Starts ``slmgraph serve --db INDEX --port 0`` (a new process, as a user would), waits for its URL, then
asks each global question twice through ``POST /api/query`` (first ask, then the repeat) and once through
the streaming ``GET /api/ask`` (time to the first event and to the answer), timing each request at the
client. Start-up is the time from launch until the server printed its URL.

Usage::

    python benchmarks/serve_warm.py --db podcast.duckdb [--questions N] [--method global] [--level 0]

Questions: the podcast sample's global questions (``global_questions_sample.csv``). Writes
``benchmarks/results/serve_warm.md`` and ``.json`` (``--name`` to change).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)

ROOT = Path(__file__).resolve().parent.parent


def post(url: str, body: dict) -> tuple[float, dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    t = time.perf_counter()
    with urllib.request.urlopen(req, timeout=600) as r:
        out = json.loads(r.read())
    return time.perf_counter() - t, out


def stream(url: str) -> tuple[float, float]:
    """``(seconds to the first event, seconds to the answer event)`` of one streamed question."""
    t = time.perf_counter()
    first = None
    with urllib.request.urlopen(url, timeout=600) as r:
        for line in r:
            if line.startswith(b"event: ") and first is None:
                first = time.perf_counter() - t
            if line.startswith(b"event: answer") or line.startswith(b"event: failure"):
                r.read()
                break
    return first or 0.0, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--questions", type=int, default=10, help="how many of the global questions (default all 10)")
    ap.add_argument("--questions-file", default=str(benchkit.PODCAST_SAMPLE / "global_questions_sample.csv"))
    ap.add_argument("--method", default="global")
    ap.add_argument("--level", type=int, default=0)
    ap.add_argument("--name", default="serve_warm")
    ap.add_argument("--note", default="", help="a line saying what was measured (the code, the index)")
    args = ap.parse_args()
    with open(args.questions_file, newline="", encoding="utf-8") as fh:
        questions = [r["question_text"] for r in csv.DictReader(fh)][: args.questions]
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    cond = benchkit.start()
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "slmgraph.cli.main", "serve", "--db", args.db, "--port", "0"],
                            stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        if "http://" not in line:
            raise SystemExit(f"serve_warm: the server did not start: {line.strip()}")
        startup = time.perf_counter() - t0
        base = line.split("http://", 1)[1].split("/", 1)[0]
        url = f"http://{base}"
        rows = []
        for q in questions:
            body = {"q": q, "method": args.method, "level": args.level}
            first, a = post(url + "/api/query", body)
            again, b = post(url + "/api/query", body)
            qs = urllib.parse.urlencode({"q": q, "method": args.method, "level": args.level})
            ev, done = stream(f"{url}/api/ask?{qs}")
            rows.append({"question": q, "first_s": round(first, 3), "repeat_s": round(again, 3),
                         "stream_first_event_s": round(ev, 3), "stream_answer_s": round(done, 3),
                         "engine_s": round(b["seconds"], 3), "model_calls": a["model_calls"] + b["model_calls"],
                         "points": len(b["points"]), "same_answer": a["text"] == b["text"]})
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    cond = benchkit.finish(cond)
    med = {k: round(statistics.median(r[k] for r in rows), 3) for k in ("first_s", "repeat_s", "stream_answer_s")}
    data = {"conditions": cond, "db": args.db, "method": args.method, "level": args.level, "note": args.note,
            "startup_s": round(startup, 2), "median": med, "max_repeat_s": max(r["repeat_s"] for r in rows),
            "rows": rows}
    lines = [f"# Questions through `slmgraph serve` ({args.method} search, level {args.level})", "",
             benchkit.sentence(cond), "", args.note, "",
             f"Index `{args.db}`. Server start-up (model, embedder, spaCy loaded once, probe questions embedded): "
             f"{startup:.1f} s.", "",
             "| question | first ask s | repeated s | streamed, answer s | model calls | points | same answer |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['question'][:70]} | {r['first_s']:.2f} | {r['repeat_s']:.2f} | "
                     f"{r['stream_answer_s']:.2f} | {r['model_calls']} | {r['points']} | {r['same_answer']} |")
    lines += ["", f"Median wall-clock at the client: first ask {med['first_s']:.2f} s, repeated "
              f"**{med['repeat_s']:.2f} s** (at most {data['max_repeat_s']:.2f} s), streamed "
              f"{med['stream_answer_s']:.2f} s."]
    md, _ = benchkit.write_results(args.name, lines, data)
    print(md.read_text())


if __name__ == "__main__":
    main()
