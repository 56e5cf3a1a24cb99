"""The README's model table from a stage bench run's ``bench.json`` (``slmgraph bench``).

Usage: ``python benchmarks/bench_readme_table.py benchmarks/results/bench_stages/bench.json``; prints the
Markdown table (quality per stage, a check mark when the model's quality is at least row 0's, wall seconds)
and one line with the run's wall and CPU seconds and load averages.
"""

from __future__ import annotations

import json
import sys

STAGES = (("extract", "extraction"), ("summarize", "summaries"), ("report", "reports"), ("claims", "claims"),
          ("answer", "answers"), ("help", "P(yes)"))
NAMES = {"SmolLM2-135M-Instruct.Q4_1.gguf": "SmolLM2-135M-Instruct Q4_1",
         "gemma-3-270m-q4_k_m.gguf": "Gemma 3 270M Q4_K_M"}


def table(result: dict) -> str:
    """Markdown table: one row per model (row 0 first), one column per measured stage."""
    cols = [(k, t) for k, t in STAGES if any(k in r["stages"] for r in result["rows"])]
    lines = ["| model | " + " | ".join(t for _, t in cols) + " |", "|---|" + "---|" * len(cols)]
    for i, row in enumerate(result["rows"]):
        cells = []
        for k, _ in cols:
            r = row["stages"].get(k)
            if r is None:
                cells.append("no LLM-free route" if i == 0 else "-")
                continue
            q = "no output" if r.get("quality") is None else f"{r['quality']:.2f}"
            mark = "" if i == 0 else (" ✓" if row.get("beats", {}).get(k) else " ✗")
            cells.append(f"{q}{mark}, {r.get('seconds') or 0:.0f} s")
        name = "LLM-free (row 0)" if i == 0 else NAMES.get(row["model"], row["model"])
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    per_row = ", ".join(f"{NAMES.get(r['model'], r['model'])} {sum((r.get('cpu_seconds') or {}).values()):.0f}"
                        for r in result["rows"])
    lines.append(f"\nRun: {result['date']}, {result['seconds']:.0f} s wall, {result.get('cpu_seconds')} CPU s "
                 f"({per_row}), load average before {result['load_average_before']}, after "
                 f"{result['load_average_after']}.")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(json.load(open(sys.argv[1] if len(sys.argv) > 1 else
                               "benchmarks/results/bench_stages/bench.json", encoding="utf-8"))))
