"""Blind pairwise judging of two query methods (the GraphRAG paper's evaluation, Edge et al. 2024, sec. 4.1).

Two steps, so that whoever judges sees nothing but the packets:

``packets``
    Answers every question of ``--questions`` with two methods (default ``global`` and ``basic``) on one
    index (``--db``), through the public API (``slmgraph.open(db).query``), so the same script measures any
    checkout: run it with that checkout's Python first on the path to get a "before". For each question it
    draws which method is "Answer A" (seeded) and writes the pair in both orders, one Markdown packet per
    question and order (``q03-1.md``, ``q03-2.md``) holding only the question and the two answers' texts.
    Beside the packets: ``JUDGING.md`` (the criteria and the grade scale) and ``verdict_schema.json`` (a JSON
    Schema of one verdict). The key -- which method is A in each packet, the answers' cost and the code
    and index they came from -- goes to ``--key``, which must lie outside the packets folder.

``versus``
    Before and after: takes two key files written by ``packets`` (say, main's and a branch's, each with
    its own index) and one method, and writes blind packets that pit that method's answer from the first
    key against its answer from the second, question by question, in both orders; the new key names the
    two sides ``--names`` and records both keys' code and index. Score it with ``score`` as any other key.

``score``
    Reads the verdict files (``*.json`` under ``--verdicts``, any depth, one verdict per file or a list of
    verdicts; several judges may judge the same packet) and the key, and prints per pair of methods the win
    rate of each criterion (a win counts 1, a tie 1/2, as the paper's 100/0/50 scores), the agreement of the
    two orders of a question, and per method the mean 1-5 grade and the share of answers graded 4 or more.
    Writes ``benchmarks/results/<--out>.md`` and ``.json``.

``shape``
    Where the answers of key files came from (index, code, commit, run conditions) and their shape (length,
    cited ids, model calls, seconds), with nothing judged; writes ``benchmarks/results/<--out>.md``.

The verdict (one per packet), checked against the schema's rules by :func:`check_verdict`::

    {"packet": "q03-1",
     "criteria": {"comprehensiveness": {"winner": "A", "reason": "..."},
                  "diversity": {...}, "empowerment": {...}, "directness": {...}},
     "grades": {"A": {"grade": 3, "reason": "..."}, "B": {"grade": 2, "reason": "..."}}}

Usage::

    python benchmarks/judge_answers.py packets --db podcast.duckdb \\
        --questions corpora/podcast_sample/global_questions_sample.csv \\
        --packets judge/before/packets --key judge/before/key.json [--methods global basic] [--seed 20]
    python benchmarks/judge_answers.py score --key judge/before/key.json --verdicts judge/before/verdicts \\
        --out judge_podcast_sample_before
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import subprocess
import sys
import time
from pathlib import Path

#: The paper's four criteria (sec. 4.1), in its words, shown to the judges.
CRITERIA = {
    "comprehensiveness": "How much detail does the answer provide to cover all aspects and details of the question?",
    "diversity": "How varied and rich is the answer in providing different perspectives and insights on the question?",
    "empowerment": "How well does the answer help the reader understand and make informed judgements about the topic?",
    "directness": "How specifically and clearly does the answer address the question?",
}
#: The 1-5 grade of one answer.
GRADES = {
    1: "does not answer the question (off-topic, empty, or a refusal of an answerable question)",
    2: "touches the question with a few loosely related facts or quotes",
    3: "relevant facts; the reader must do the synthesis",
    4: "answers with a clear synthesis and support",
    5: "complete and specific",
}
WINNERS = ("A", "B", "tie")

JUDGING = """# Judging the answer packets

Each packet holds one question and two answers, "Answer A" and "Answer B", written by two different systems
from the same collection of documents. You do not know which system wrote which answer, and the order of A
and B was drawn at random. Judge only what is written in the packet.

For each packet write one verdict: a JSON file that follows `verdict_schema.json` (name it after the packet,
e.g. `q03-1.json`).

## The four criteria (pick A, B or tie, and give a one-sentence reason)

{criteria}

## The grade of each answer (1-5, with a one-sentence reason)

{grades}

## Example verdict

```json
{example}
```
"""


def verdict_schema() -> dict:
    """The JSON Schema (draft 2020-12) of one verdict."""
    choice = {"type": "object", "required": ["winner", "reason"], "additionalProperties": False,
              "properties": {"winner": {"enum": list(WINNERS)}, "reason": {"type": "string", "minLength": 1}}}
    grade = {"type": "object", "required": ["grade", "reason"], "additionalProperties": False,
             "properties": {"grade": {"type": "integer", "minimum": 1, "maximum": 5},
                            "reason": {"type": "string", "minLength": 1}}}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "verdict on one answer packet",
        "type": "object",
        "required": ["packet", "criteria", "grades"],
        "properties": {
            "packet": {"type": "string", "description": "the packet's id, e.g. q03-1"},
            "judge": {"type": "string", "description": "optional: who judged"},
            "criteria": {"type": "object", "required": list(CRITERIA), "additionalProperties": False,
                         "properties": {c: dict(choice, description=d) for c, d in CRITERIA.items()}},
            "grades": {"type": "object", "required": ["A", "B"], "additionalProperties": False,
                       "properties": {"A": grade, "B": grade},
                       "description": "; ".join(f"{g} = {d}" for g, d in GRADES.items())},
        },
    }


EXAMPLE = {"packet": "q03-1",
           "criteria": {c: {"winner": "A", "reason": "one sentence"} for c in CRITERIA},
           "grades": {"A": {"grade": 3, "reason": "one sentence"}, "B": {"grade": 2, "reason": "one sentence"}}}


def load_questions(path: Path) -> list[tuple[str, str]]:
    """``[(question id, question)]`` from a CSV with a ``question_text`` column (and ``question_id``) or a
    text file of one question per line (``#`` lines skipped)."""
    if path.suffix.lower() == ".csv":
        with path.open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        if not rows or "question_text" not in rows[0]:
            raise SystemExit(f"judge_answers: error: {path} has no question_text column")
        return [(r.get("question_id") or str(i), r["question_text"].strip()) for i, r in enumerate(rows, 1)]
    lines = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines()]
    return [(str(i), q) for i, q in enumerate((ln for ln in lines if ln and not ln.startswith("#")), 1)]


def code_version() -> dict:
    """Where ``slmgraph`` was imported from and that checkout's git commit (None outside git)."""
    import slmgraph

    root = Path(slmgraph.__file__).resolve().parent.parent
    try:
        rev = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10).stdout.strip() or None
    except OSError:
        rev = None
    return {"slmgraph": str(root), "commit": rev}


def packet_text(pid: str, question: str, a: str, b: str) -> str:
    """One packet: the question and the two answers, nothing else."""
    return (f"# Packet {pid}\n\n**Question:** {question}\n\n## Answer A\n\n{a.strip() or '(empty)'}\n\n"
            f"## Answer B\n\n{b.strip() or '(empty)'}\n")


def write_judging(packets: Path) -> None:
    """The judges' instructions (``JUDGING.md``) and ``verdict_schema.json`` beside the packets."""
    (packets / "verdict_schema.json").write_text(json.dumps(verdict_schema(), indent=2) + "\n", encoding="utf-8")
    (packets / "JUDGING.md").write_text(JUDGING.format(
        criteria="\n".join(f"- **{c}**: {d}" for c, d in CRITERIA.items()),
        grades="\n".join(f"- **{g}**: {d}" for g, d in GRADES.items()),
        example=json.dumps(EXAMPLE, indent=2)), encoding="utf-8")


def cmd_packets(args) -> int:
    import slmgraph

    packets, key_path = Path(args.packets).resolve(), Path(args.key).resolve()
    if key_path.is_relative_to(packets):
        raise SystemExit(f"judge_answers: error: the key {key_path} must not lie inside the packets folder {packets}")
    if len(args.methods) != 2 or args.methods[0] == args.methods[1]:
        raise SystemExit("judge_answers: error: --methods takes two different methods, e.g. global basic")
    questions = load_questions(Path(args.questions))
    if args.limit:
        questions = questions[: args.limit]
    packets.mkdir(parents=True, exist_ok=True)
    key_path.parent.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import benchkit

    cond = benchkit.start()
    rng = random.Random(args.seed)
    key = {"db": str(Path(args.db).resolve()), "questions": str(Path(args.questions).resolve()),
           "methods": list(args.methods), "level": args.level, "seed": args.seed, "code": code_version(),
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "packets": {}, "answers": []}
    with slmgraph.open(args.db) as ix:
        for n, (qid, question) in enumerate(questions, 1):
            texts = {}
            for m in args.methods:
                t0 = time.perf_counter()
                ans = ix.query(question, method=m, level=args.level if m == "global" else None)
                texts[m] = ans.text
                key["answers"].append({"question_no": n, "question_id": qid, "question": question, "method": m,
                                       "text": ans.text, "citations": ans.citations,
                                       "model_calls": ans.model_calls, "seconds": round(time.perf_counter() - t0, 2)})
                print(f"q{n:02d} {m}: {len(ans.text)} chars", file=sys.stderr)
            first = list(args.methods)
            if rng.random() < 0.5:
                first.reverse()
            for order, (ma, mb) in enumerate((first, first[::-1]), 1):
                pid = f"q{n:02d}-{order}"
                (packets / f"{pid}.md").write_text(packet_text(pid, question, texts[ma], texts[mb]), encoding="utf-8")
                key["packets"][pid] = {"question_no": n, "question_id": qid, "A": ma, "B": mb}
    write_judging(packets)
    key["conditions"] = benchkit.finish(cond)
    key_path.write_text(json.dumps(key, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(key['packets'])} packets to {packets} and the key to {key_path}")
    return 0


def cmd_versus(args) -> int:
    packets, key_path = Path(args.packets).resolve(), Path(args.key).resolve()
    if key_path.is_relative_to(packets):
        raise SystemExit(f"judge_answers: error: the key {key_path} must not lie inside the packets folder {packets}")
    names = list(args.names)
    if len(names) != 2 or names[0] == names[1]:
        raise SystemExit("judge_answers: error: --names takes two different names, e.g. main branch")
    keys = []
    for path in args.keys:
        try:
            keys.append(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            raise SystemExit(f"judge_answers: error: cannot read the key {path} ({exc})")
    sides = []
    for path, key in zip(args.keys, keys):
        got = {a["question"]: a for a in key.get("answers", []) if a["method"] == args.method}
        if not got:
            raise SystemExit(f"judge_answers: error: the key {path} holds no {args.method!r} answers")
        sides.append(got)
    questions = [q for q in sides[0] if q in sides[1]]
    if not questions:
        raise SystemExit("judge_answers: error: the two keys share no question: answer the same questions file")
    packets.mkdir(parents=True, exist_ok=True)
    key_path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    out = {"db": " vs ".join(k["db"] for k in keys), "questions": keys[0]["questions"], "methods": names,
           "level": None, "seed": args.seed, "method": args.method,
           "code": {"slmgraph": ", ".join(f"{n} = {k['code']['slmgraph']}" for n, k in zip(names, keys)),
                    "commit": " vs ".join(str((k["code"]["commit"] or "?")[:7]) for k in keys),
                    "keys": [str(Path(p).resolve()) for p in args.keys]},
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "packets": {}, "answers": []}
    identical = 0
    for n, question in enumerate(questions, 1):
        texts = {}
        for name, side in zip(names, sides):
            a = side[question]
            texts[name] = a["text"]
            out["answers"].append(dict(a, question_no=n, method=name))
        identical += texts[names[0]].strip() == texts[names[1]].strip()
        first = list(names)
        if rng.random() < 0.5:
            first.reverse()
        for order, (ma, mb) in enumerate((first, first[::-1]), 1):
            pid = f"q{n:02d}-{order}"
            (packets / f"{pid}.md").write_text(packet_text(pid, question, texts[ma], texts[mb]), encoding="utf-8")
            out["packets"][pid] = {"question_no": n, "question_id": sides[0][question]["question_id"], "A": ma, "B": mb}
    out["identical_answers"] = identical
    write_judging(packets)
    key_path.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(out['packets'])} packets to {packets} and the key to {key_path}; "
          f"{identical} of {len(questions)} questions got the same {args.method} answer from both keys")
    return 0


def check_verdict(v, where: str) -> list[str]:
    """The ways verdict ``v`` breaks :func:`verdict_schema` (empty: valid); ``where`` names it in each line."""
    errs = []
    if not isinstance(v, dict):
        return [f"{where}: a verdict must be a JSON object"]
    if not isinstance(v.get("packet"), str):
        errs.append(f"{where}: 'packet' (the packet id, e.g. q03-1) is missing")
    crit = v.get("criteria")
    if not isinstance(crit, dict):
        errs.append(f"{where}: 'criteria' is missing")
    else:
        for c in CRITERIA:
            w = crit.get(c)
            if not isinstance(w, dict) or w.get("winner") not in WINNERS:
                errs.append(f"{where}: criteria.{c}.winner must be one of A, B, tie")
    grades = v.get("grades")
    if not isinstance(grades, dict):
        errs.append(f"{where}: 'grades' is missing")
    else:
        for side in ("A", "B"):
            g = grades.get(side)
            g = g.get("grade") if isinstance(g, dict) else g
            if not isinstance(g, int) or isinstance(g, bool) or not 1 <= g <= 5:
                errs.append(f"{where}: grades.{side}.grade must be an integer 1-5")
    return errs


def read_verdicts(folder: Path) -> list[dict]:
    """Every verdict in the ``*.json`` files under ``folder`` (a file holds one verdict or a list)."""
    out, errs = [], []
    for path in sorted(folder.rglob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            errs.append(f"{path}: not JSON ({exc})")
            continue
        for i, v in enumerate(data if isinstance(data, list) else [data]):
            where = f"{path}" + (f"[{i}]" if isinstance(data, list) else "")
            e = check_verdict(v, where)
            errs.extend(e)
            if not e:
                out.append(dict(v, _file=str(path)))
    if errs:
        raise SystemExit("judge_answers: error: invalid verdicts (fix them and score again):\n  " + "\n  ".join(errs))
    return out


def grade_of(g) -> int:
    return g["grade"] if isinstance(g, dict) else g


def score(key: dict, verdicts: list[dict]) -> dict:
    """Win rates per criterion and mean grades per method.

    Returns:
        ``{"methods", "verdicts", "unknown_packets", "win_rate": {criterion: {method: share}},
        "ties": {criterion: share}, "order_agreement": {criterion: share}, "grades": {method: {mean, n, ge4}},
        "per_question": [...]}``; shares are 0-1 over the verdicts (a tie counts 1/2 to each method).
    """
    methods = key["methods"]
    known = [v for v in verdicts if v["packet"] in key["packets"]]
    unknown = sorted({v["packet"] for v in verdicts} - set(key["packets"]))
    win = {c: {m: 0.0 for m in methods} for c in CRITERIA}
    ties = {c: 0 for c in CRITERIA}
    grades: dict[str, list[int]] = {m: [] for m in methods}
    by_q: dict[int, dict] = {}
    for v in known:
        k = key["packets"][v["packet"]]
        side = {"A": k["A"], "B": k["B"]}
        q = by_q.setdefault(k["question_no"], {c: [] for c in CRITERIA} | {"grades": {m: [] for m in methods}})
        for c in CRITERIA:
            w = v["criteria"][c]["winner"]
            if w == "tie":
                ties[c] += 1
                for m in methods:
                    win[c][m] += 0.5
                q[c].append("tie")
            else:
                win[c][side[w]] += 1
                q[c].append(side[w])
        for s in ("A", "B"):
            g = grade_of(v["grades"][s])
            grades[side[s]].append(g)
            q["grades"][side[s]].append(g)
    n = len(known)
    # Agreement: both orders of a question judged, and the same method (or tie) chosen in each.
    agree = {c: [len(set(q[c])) == 1 for q in by_q.values() if len(q[c]) >= 2] for c in CRITERIA}
    return {
        "methods": methods, "verdicts": n, "unknown_packets": unknown,
        "win_rate": {c: {m: (win[c][m] / n if n else None) for m in methods} for c in CRITERIA},
        "ties": {c: (ties[c] / n if n else None) for c in CRITERIA},
        "order_agreement": {c: (sum(a) / len(a) if a else None) for c, a in agree.items()},
        "grades": {m: {"mean": (sum(g) / len(g) if g else None), "n": len(g),
                       "ge4": (sum(x >= 4 for x in g) / len(g) if g else None)} for m, g in grades.items()},
        "per_question": [{"question_no": qn, **{c: q[c] for c in CRITERIA}, "grades": q["grades"]}
                         for qn, q in sorted(by_q.items())],
    }


def answer_shape(key: dict) -> dict:
    """Per method, from the key's answers: ``{answers, chars, cited, model_calls, seconds}`` (means)."""
    out: dict = {}
    for a in key.get("answers", []):
        v = out.setdefault(a["method"], {"answers": 0, "chars": 0.0, "cited": 0.0, "model_calls": 0.0,
                                         "seconds": 0.0})
        v["answers"] += 1
        v["chars"] += len(a["text"])
        v["cited"] += sum(len(ids) for ids in (a.get("citations") or {}).values())
        v["model_calls"] += a.get("model_calls") or 0
        v["seconds"] += a.get("seconds") or 0.0
    for v in out.values():
        for k in ("chars", "cited", "model_calls", "seconds"):
            v[k] /= v["answers"]
    return out


def pct(x) -> str:
    return "-" if x is None else f"{100 * x:.0f} %"


def render(key: dict, res: dict, title: str) -> list[str]:
    m1, m2 = res["methods"]
    lines = [f"# {title}", "",
             f"Index `{key['db']}`, questions `{key['questions']}`; answers by the code at `{key['code']['slmgraph']}` "
             f"(commit {key['code']['commit'] or '?'}), written {key['date']}. {res['verdicts']} verdicts by blind "
             f"judges on {len(key['packets'])} packets (each question in both A/B orders; judges saw only the "
             "packets).",
             "", f"## Win rate of {m1} against {m2}", "",
             "A win counts 1, a tie 1/2 (the paper's 100/0/50 scores); order agreement = share of questions whose "
             "two orders got the same winner.", "",
             f"| criterion | {m1} | {m2} | ties | order agreement |", "|---|---|---|---|---|"]
    for c in CRITERIA:
        lines.append(f"| {c} | {pct(res['win_rate'][c][m1])} | {pct(res['win_rate'][c][m2])} | "
                     f"{pct(res['ties'][c])} | {pct(res['order_agreement'][c])} |")
    lines += ["", "## Grades (1-5)", "", "| method | mean | answers graded | graded 4 or 5 |", "|---|---|---|---|"]
    for m, g in res["grades"].items():
        mean = "-" if g["mean"] is None else f"{g['mean']:.2f}"
        lines.append(f"| {m} | {mean} | {g['n']} | {pct(g['ge4'])} |")
    if key.get("answers"):
        lines += [""] + shape_lines(key, "Answer shape (from the key, not judged)")
    if res["unknown_packets"]:
        lines += ["", f"Verdicts on packets not in the key (ignored): {', '.join(res['unknown_packets'])}."]
    return lines


def shape_lines(key: dict, label: str) -> list[str]:
    """Markdown: where a key's answers came from and their shape (:func:`answer_shape`); nothing judged."""
    import benchkit

    lines = [f"## {label}", "", f"Index `{key['db']}`; answers by the code at `{key['code']['slmgraph']}` (commit "
             f"{key['code']['commit'] or '?'}), written {key['date']}; {len(key['packets'])} packets.", ""]
    if key.get("conditions"):
        lines += [benchkit.sentence(key["conditions"]), ""]
    lines += ["| method | answers | mean characters | mean cited ids | mean model calls | mean seconds |",
              "|---|---|---|---|---|---|"]
    lines += [f"| {m} | {v['answers']} | {v['chars']:.0f} | {v['cited']:.1f} | {v['model_calls']:.1f} | "
              f"{v['seconds']:.1f} |" for m, v in answer_shape(key).items()]
    return lines + [""]


def cmd_shape(args) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    lines = [f"# {args.title or 'Answer packets written for blind judging'}", ""]
    data = {}
    for path in args.keys:
        key = json.loads(Path(path).read_text(encoding="utf-8"))
        lines += shape_lines(key, path)
        data[path] = {"db": key["db"], "code": key["code"], "date": key["date"], "conditions": key.get("conditions"),
                      "shape": answer_shape(key)}
    print("\n".join(lines))
    if args.out:
        import benchkit

        benchkit.write_results(args.out, lines, data)
    return 0


def cmd_score(args) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    key = json.loads(Path(args.key).read_text(encoding="utf-8"))
    verdicts = read_verdicts(Path(args.verdicts))
    if not verdicts:
        raise SystemExit(f"judge_answers: error: no verdict files (*.json) under {args.verdicts}")
    res = score(key, verdicts)
    lines = render(key, res, args.title or f"Blind pairwise judging: {args.out}")
    print("\n".join(lines))
    if args.out:
        import benchkit

        md, js = benchkit.write_results(args.out, lines, {"key": {k: v for k, v in key.items() if k != "answers"},
                                                          "result": res})
        print(f"\nwrote {md} and {js}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("packets", help="answer the questions with two methods and write blind packets and the key")
    p.add_argument("--db", required=True, help="the index")
    p.add_argument("--questions", required=True, help="CSV with question_text, or one question per line")
    p.add_argument("--methods", nargs=2, default=["global", "basic"], help="the two methods (default global basic)")
    p.add_argument("--level", type=int, default=None, help="community level of global search (default: its own)")
    p.add_argument("--packets", required=True, help="folder for the packets (given to the judges)")
    p.add_argument("--key", required=True, help="the key file (kept from the judges; outside --packets)")
    p.add_argument("--seed", type=int, default=20, help="seed of the A/B draw (default 20)")
    p.add_argument("--limit", type=int, default=None, help="only the first N questions")
    p = sub.add_parser("versus", help="blind packets pitting one method's answers from two keys (before, after)")
    p.add_argument("keys", nargs=2, help="two key files written by packets (e.g. main's and a branch's)")
    p.add_argument("--names", nargs=2, default=["before", "after"], help="names of the two sides (default before after)")
    p.add_argument("--method", default="global", help="the method whose answers are compared (default global)")
    p.add_argument("--packets", required=True, help="folder for the packets (given to the judges)")
    p.add_argument("--key", required=True, help="the new key file (kept from the judges; outside --packets)")
    p.add_argument("--seed", type=int, default=41, help="seed of the A/B draw (default 41)")
    p = sub.add_parser("score", help="score verdict files against the key")
    p.add_argument("--key", required=True)
    p.add_argument("--verdicts", required=True, help="folder of verdict *.json files")
    p.add_argument("--out", default=None, help="results name: writes benchmarks/results/<out>.md and .json")
    p.add_argument("--title", default=None)
    p = sub.add_parser("shape", help="where the answers of key files came from and their shape (nothing judged)")
    p.add_argument("keys", nargs="+", help="key files")
    p.add_argument("--out", default=None, help="results name: writes benchmarks/results/<out>.md and .json")
    p.add_argument("--title", default=None)
    args = ap.parse_args(argv)
    return {"packets": cmd_packets, "versus": cmd_versus, "score": cmd_score, "shape": cmd_shape}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
