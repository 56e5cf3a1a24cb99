"""Win rates and grades of global against basic search over a whole question set, when only some questions' global
answers changed: the unchanged questions keep the verdicts of an earlier judged run, the changed ones take a later
run's. Prints one line of win rates (the paper's scoring: a win 1, a tie 1/2) and each method's mean grade and share
graded 4 or 5.

Usage::

    python benchmarks/judge_combine.py --old KEY DIR --new KEY DIR --changed 1,4,5 --questions 10

``KEY``: a key written by ``judge_answers.py packets``; ``DIR``: the judges' verdict files for it. Two sets of judges
judged the two runs, so the result is an estimate, not one run.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

CRITERIA = ("comprehensiveness", "diversity", "empowerment", "directness")


def verdicts(key: str, folder: str, questions: set[int]) -> list[tuple[dict, dict]]:
    """``[(packet's key entry, verdict)]`` of the verdicts in ``folder`` whose question number is in ``questions``."""
    packets = json.loads(Path(key).read_text(encoding="utf-8"))["packets"]
    out = []
    for f in sorted(Path(folder).glob("*.json")):
        v = json.loads(f.read_text(encoding="utf-8"))
        m = packets[v["packet"]]
        if m["question_no"] in questions:
            out.append((m, v))
    return out


def combine(rows: list[tuple[dict, dict]], method: str = "global") -> tuple[dict, dict]:
    """``({criterion: win rate of method in %}, {method: (mean grade, % graded 4 or 5)})``."""
    wins = {c: 0.0 for c in CRITERIA}
    grades: dict[str, list[int]] = {}
    for m, v in rows:
        for c in CRITERIA:
            w = v["criteria"][c]["winner"]
            wins[c] += 0.5 if w == "tie" else float(m[w] == method)
        for side in "AB":
            grades.setdefault(m[side], []).append(v["grades"][side]["grade"])
    n = max(1, len(rows))
    return ({c: 100 * w / n for c, w in wins.items()},
            {k: (sum(g) / len(g), 100 * sum(x >= 4 for x in g) / len(g)) for k, g in grades.items()})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", nargs=2, metavar=("KEY", "DIR"), required=True, help="the earlier run")
    ap.add_argument("--new", nargs=2, metavar=("KEY", "DIR"), required=True, help="the later run")
    ap.add_argument("--changed", required=True, help="question numbers whose answers changed, e.g. 1,4,5")
    ap.add_argument("--questions", type=int, required=True, help="how many questions the set has")
    args = ap.parse_args(argv)
    changed = {int(x) for x in args.changed.split(",") if x.strip()}
    rest = set(range(1, args.questions + 1)) - changed
    rows = verdicts(*args.old, rest) + verdicts(*args.new, changed)
    wins, grades = combine(rows)
    print(f"{len(rows)} verdicts: " + ", ".join(f"{c} {w:.0f} %" for c, w in wins.items()))
    for method, (mean, high) in sorted(grades.items()):
        print(f"  {method}: mean grade {mean:.2f}, graded 4 or 5: {high:.0f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
