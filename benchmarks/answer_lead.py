"""Does a basic or local answer open with the sentence that answers the question?

For each focused question with a gold answer string, ask ``basic`` and ``local`` search (the default
settings: the bundled model makes no call on these routes) and record:

* ``first``: the answer's first line (its first point, or its opening sentence) contains the gold string;
* ``anywhere``: the answer's text (its sources line aside) contains it;
* ``mrr``: the mean reciprocal rank of the first line that contains it (0 when none does).

Matching is case-insensitive with whitespace folded; a gold answer may list alternatives (any one counts).

Question sets:

* ``hotpot``: the HotpotQA sample (``gold/hotpotqa_sample/hotpotqa_sample20.json``): its 20 questions less
  the yes/no comparisons (an answer quotes no "yes"), over an index of its 200 passages (one document per
  passage: title line, then text), built once with ``slmgraph index --extractor nlp --no-reports``;
* ``club``: focused questions written for a fresh user's allotment newsletters (10 short Markdown
  documents; the index given by ``--club``), with the answer string each newsletter states.

With ``--base DIR`` (a checkout of another version, e.g. ``git archive main slmgraph prompts models``
unpacked) the same questions are also answered by that version's code, in a subprocess, and the table
puts the two side by side.

Usage::

    python benchmarks/answer_lead.py --hotpot HOTPOT.duckdb [--club CLUB.duckdb] [--base DIR]
        [--build-hotpot DIR] [--name answer_lead]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)

HOTPOT = benchkit.DATA / "gold" / "hotpotqa_sample" / "hotpotqa_sample20.json"
HOTPOT_PASSAGES = benchkit.DATA / "gold" / "hotpotqa_sample" / "hotpotqa_sample20_passages.json"
METHODS = ("basic", "local")

#: Focused questions on the allotment newsletters, each with the strings (any one) that answer it, as the
#: newsletters state them.
CLUB = [
    ("When was the standpipe repaired?", ["4 March", "2 May", "in May"]),
    ("Who is the treasurer?", ["Tomasz Nowak"]),
    ("How much is the rent for a full plot in 2023?", ["£38"]),
    ("What was stolen from the shed?", ["mower"]),
    ("When is the open day?", ["17 June"]),
    ("How much did the compost bins cost?", ["£420"]),
    ("Who won the heaviest marrow?", ["Sunita Baines"]),
    ("How much did the plant stall raise?", ["£236"]),
    ("When did the pest control officer visit?", ["4 April"]),
    ("Who is the water officer?", ["Priya Raman"]),
    ("How much did the insurance company pay for the mower?", ["£310"]),
    ("Who took plot 7?", ["Sunita Baines"]),
    ("On which street is the church hall?", ["Mill Street"]),
    ("How much did the new shed lock cost?", ["£58"]),
    ("Who was elected secretary at the AGM?", ["Sunita Baines"]),
    ("When is the seed swap?", ["18 February"]),
    ("What will the rent for a full plot be in 2024?", ["£40"]),
    ("How much did the water company quote to replace the pipe?", ["£640"]),
    ("Who fitted the motion-sensor light?", ["Gareth Lloyd"]),
    ("What was the balance at the end of 2022?", ["£1,840"]),
]


def fold(s: str) -> str:
    return " ".join((s or "").split()).casefold()


def answer_lines(text: str) -> list[str]:
    """The lines of an answer's body (its sources line and what follows aside), each without its bullet
    mark; headings ("### ...") are no lines of it."""
    body = (text or "").split("\n\nSources:", 1)[0]
    return [re.sub(r"^\s*[-*]\s+", "", ln).strip() for ln in body.split("\n")
            if ln.strip() and not ln.lstrip().startswith("#")]


def score(text: str, golds: list[str]) -> dict:
    """``first``, ``anywhere`` and ``rank`` (1-based line holding a gold string, 0: none) of an answer."""
    lines = [fold(x) for x in answer_lines(text)]
    gs = [fold(g) for g in golds]
    rank = next((i + 1 for i, ln in enumerate(lines) if any(g in ln for g in gs)), 0)
    return {"first": rank == 1, "anywhere": rank > 0, "rank": rank}


def hotpot_questions() -> list[tuple[str, list[str]]]:
    """The HotpotQA sample's questions whose answer is no yes or no."""
    out = []
    for q in json.loads(HOTPOT.read_text(encoding="utf-8")):
        if fold(q["answer"]) not in ("yes", "no"):
            out.append((" ".join(q["question"].split()), [q["answer"]]))
    return out


def build_hotpot(folder: Path, db: Path) -> None:
    """Write the sample's passages into ``folder`` (one file each) and index them into ``db`` with the CLI."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, p in enumerate(json.loads(HOTPOT_PASSAGES.read_text(encoding="utf-8"))):
        (folder / f"p{i:03d}.txt").write_text(f"{p['title']}\n{p['text'].strip()}\n", encoding="utf-8")
    subprocess.run([sys.executable, "-m", "slmgraph.cli", "index", "--db", str(db), "--extractor", "nlp",
                    "--no-reports", "--quiet", str(folder)], check=True)


def measure(sets: dict[str, tuple[Path, list]]) -> dict:
    """Answer every question of ``sets`` (name -> (index, questions)) by each of :data:`METHODS` with the
    code on ``sys.path``; ``{set: {method: [row]}}`` and the CPU seconds spent."""
    import slmgraph

    out: dict = {}
    cpu0 = time.process_time()
    for name, (db, questions) in sets.items():
        with slmgraph.open(db) as ix:
            for method in METHODS:
                rows = []
                for q, golds in questions:
                    ans = ix.query(q, method=method)
                    lines = answer_lines(ans.text)
                    rows.append({"question": q, "gold": golds, "first_line": lines[0] if lines else "",
                                 **score(ans.text, golds)})
                out.setdefault(name, {})[method] = rows
    return {"sets": out, "cpu_seconds": round(time.process_time() - cpu0, 1)}


def summary(rows: list[dict]) -> dict:
    n = len(rows)
    return {"n": n, "first": sum(r["first"] for r in rows), "anywhere": sum(r["anywhere"] for r in rows),
            "mrr": round(sum(1 / r["rank"] for r in rows if r["rank"]) / max(1, n), 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hotpot", type=Path, required=True, help="index of the HotpotQA sample's passages")
    ap.add_argument("--build-hotpot", type=Path, default=None,
                    help="build --hotpot first from the sample's passages written into this folder")
    ap.add_argument("--club", type=Path, default=None, help="index of the allotment newsletters (optional)")
    ap.add_argument("--base", type=Path, default=None, help="a checkout of the version to compare with")
    ap.add_argument("--json-out", type=Path, default=None, help=argparse.SUPPRESS)  # the subprocess's answer
    ap.add_argument("--name", default="answer_lead")
    args = ap.parse_args()
    if args.build_hotpot and not args.hotpot.exists():
        build_hotpot(args.build_hotpot, args.hotpot)
    sets = {"hotpot": (args.hotpot, hotpot_questions())}
    if args.club:
        sets["club"] = (args.club, CLUB)
    if args.json_out:
        args.json_out.write_text(json.dumps(measure(sets), ensure_ascii=False), encoding="utf-8")
        return
    cond = benchkit.start()
    runs = {}
    if args.base:
        tmp = Path(os.environ.get("TMPDIR", "/tmp")) / f"answer_lead_base_{os.getpid()}.json"
        cmd = [sys.executable, __file__, "--hotpot", str(args.hotpot), "--json-out", str(tmp)]
        cmd += ["--club", str(args.club)] if args.club else []
        env = dict(os.environ, PYTHONPATH=str(args.base.resolve()))
        subprocess.run(cmd, check=True, env=env, cwd=str(args.base))
        runs["before"] = json.loads(tmp.read_text(encoding="utf-8"))
        tmp.unlink()
    runs["after" if args.base else "this"] = measure(sets)
    cond = benchkit.finish(cond)
    md = ["# Does a basic or local answer open with the sentence that answers?", "",
          "`python benchmarks/answer_lead.py` (default settings: no model call on these routes). *first*: the "
          "answer's first line holds the gold answer string (case-insensitive); *anywhere*: some line does; "
          "*MRR*: mean reciprocal rank of the first line holding it.", "",
          "| questions | method | version | n | first | anywhere | MRR |", "|---|---|---|---:|---:|---:|---:|"]
    for name in sets:
        for method in METHODS:
            for label, run in runs.items():
                s = summary(run["sets"][name][method])
                md.append(f"| {name} | {method} | {label} | {s['n']} | {s['first']} ({s['first'] / s['n']:.0%}) | "
                          f"{s['anywhere']} ({s['anywhere'] / s['n']:.0%}) | {s['mrr']:.3f} |")
    md += ["", "CPU seconds of the answers: " + ", ".join(f"{k} {v['cpu_seconds']}" for k, v in runs.items()) + ".",
           "", benchkit.sentence(cond)]
    for line in md:
        print(line)
    benchkit.write_results(args.name, md, {"conditions": cond, "runs": runs})


if __name__ == "__main__":
    main()
