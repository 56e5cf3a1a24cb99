"""Global answers on the podcast sample: does helpfulness separate, and are questions answered?

For one index (built here with ``--build``, or given with ``--db``) and 20
questions -- the 10 of the podcast sample's ``global_questions_sample.csv``
(on-topic) and the 10 off-topic questions below, which the corpus cannot
answer -- this script

1. scores every report of ``--level`` (default 0, the paper's C0) for every
   question with each helpfulness signal of :mod:`slmgraph.query.scoring`:
   ``embedding`` (all-MiniLM cosine), ``model`` (the index model's
   calibrated P(yes) via ``ModelClient.choose``; off with ``--no-model-signal``)
   and ``combined`` (the model signal on a seeded sample of ``--model-sample``
   reports, the same for every question, with the embedding on that sample
   alongside for a like-for-like comparison); and reports each signal's separation: the ROC AUC of
   each question's best report score, on-topic (positive) against
   off-topic, plus the range of best scores on each side (the selection
   floor is chosen between them);
2. answers every question with ``slmgraph query``'s default global search and
   records: answered or no-answer, cited reports, coverage (the share of
   documents behind the cited reports: documents whose text units support an
   entity of a cited community), seconds, model calls and tokens.

Usage::

    python benchmarks/global_answers.py --db podcast.duckdb
    python benchmarks/global_answers.py --db podcast.duckdb --corpus ../shared/corpora/podcast_sample/input --build
    python benchmarks/global_answers.py --db X --corpus DIR --build --extractor nlp   # no model call in extraction
    python benchmarks/global_answers.py --db podcast.duckdb --methods drift,lazy --out global_answers_drift_lazy

With ``--methods drift,lazy`` (no ``global``) the same 20 questions are
answered by DRIFT and lazy search instead, per question and method.

Writes ``benchmarks/results/global_answers.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from slmgraph.eval.bench import read_questions
from slmgraph.samples import OFFTOPIC_QUESTIONS

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)

SHARED = benchkit.PODCAST_SAMPLE

#: Questions a corpus of technology-podcast transcripts cannot answer: the bundled off-topic set that
#: ``slmgraph bench`` uses too (slmgraph/samples/offtopic_questions.txt).
OFF_TOPIC = read_questions(OFFTOPIC_QUESTIONS)


def load_questions(path: Path) -> list[str]:
    """The ``question_text`` (or ``question``, else last) column of a CSV (:func:`slmgraph.eval.bench.read_questions`)."""
    return read_questions(path, "--questions-file")


def auc_and_ranges(best: dict[str, list[float]], n_on: int) -> dict:
    """Per signal: ROC AUC of best-report scores (first ``n_on`` on-topic) and the score ranges."""
    from slmgraph.query.scoring import roc_auc

    out = {}
    for sig, vals in best.items():
        on, off = vals[:n_on], vals[n_on:]
        if on and off:
            out[sig] = {"auc": round(roc_auc(on, off), 3), "on_topic_best": [round(min(on), 1), round(max(on), 1)],
                        "off_topic_best": [round(min(off), 1), round(max(off), 1)],
                        "gap": round(min(on) - max(off), 1)}
    return out


def open_index(args) -> tuple:
    """``(settings, store, n_documents, model, client, prompts, embedder)`` for ``--db`` (its own model,
    or ``--model``), the same for every method measured."""
    from slmgraph.model.backend import load_model
    from slmgraph.model.client import ModelClient
    from slmgraph.config.settings import Settings
    from slmgraph.indexing.stages.embed import Embedder
    from slmgraph.config.prompting import Prompts
    from slmgraph.store.db import Store

    s = Settings()
    store = Store(args.db)
    n_docs = store.count("documents")
    model = load_model(args.model or store.get_meta("model_path") or None, s.n_ctx, s.n_threads, s.seed)
    client = ModelClient(model, store, "bench-global-answers")
    embedder = Embedder(batch_size=s.embed_batch_size, threads=s.n_threads)
    return s, store, n_docs, model, client, Prompts(), embedder


def answer_with(args, methods: list[str], on_topic: list[str], questions: list[str]) -> int:
    """Answer every question with DRIFT and/or lazy search; per question and method: answered or
    no-answer, citations, coverage (documents behind the cited reports and text units), seconds,
    model calls and tokens. Writes ``benchmarks/results/<--out>.md`` and ``.json``."""
    from slmgraph.config.settings import physical_cores
    from slmgraph.query.answer import unit_numbers
    from slmgraph.query.engines.drift_search import drift_search
    from slmgraph.query.engines.lazy_search import lazy_search

    s, store, n_docs, model, client, prompts, embedder = open_index(args)
    chunk_of = {n: c for c, n in unit_numbers(store).items()}
    rows = []
    for qi, q in enumerate(questions):
        for m in methods:
            t0 = time.perf_counter()
            if m == "drift":
                ans = drift_search(store, client, prompts, s, q, embedder)
                answered = bool(ans.details["primer"])
            elif m == "lazy":
                ans = lazy_search(store, client, prompts, s, q, embedder)
                answered = bool(ans.context)
            else:
                raise SystemExit(f"unknown method {m!r}")
            secs = time.perf_counter() - t0
            reps, units = ans.citations.get("reports", []), ans.citations.get("sources", [])
            q_ = ",".join("?" * len(units))
            covered = benchkit.docs_of_communities(store, reps) | ({r[0] for r in store.con.execute(
                f"SELECT DISTINCT doc_id FROM text_units WHERE chunk_id IN ({q_})",
                [chunk_of[i] for i in units]).fetchall()} if units else set())
            row = {"question": q, "method": m, "on_topic": qi < len(on_topic), "answered": answered,
                   "cited": len(reps) + len(units), "coverage_pct": round(100 * len(covered) / n_docs, 1),
                   "seconds": round(secs, 1), "model_calls": ans.model_calls,
                   "tokens_read": ans.details.get("tokens_read", ans.details.get("context_tokens")),
                   "model_tokens": ans.prompt_tokens + ans.completion_tokens,
                   "tests_used": ans.details.get("tests_used"), "answer": ans.text}
            rows.append(row)
            print(f"[{qi + 1}/{len(questions)}] {m} {'ON ' if row['on_topic'] else 'OFF'} "
                  f"{'answered' if answered else 'no-answer'}; cites {row['cited']}; coverage "
                  f"{row['coverage_pct']} %; {row['seconds']} s -- {q[:60]}", flush=True)
    store.close()
    lines = [f"# DRIFT and lazy answers: {Path(args.db).name} ({n_docs} documents)", "",
             f"Model {model.name}, {physical_cores()} cores; the questions of `global_answers.md` ({len(on_topic)} "
             f"on-topic from {args.questions_file.name}, {len(questions) - len(on_topic)} off-topic). Selection "
             f"floor {s.helpfulness_floor}; DRIFT {s.drift_followups} follow-ups x {s.drift_depth} rounds, "
             f"{s.drift_tokens} tokens; lazy budget {s.lazy_budget} tests.", "",
             "| method | on-topic answered | off-topic no-answer | median s (all questions) | max s "
             "| median coverage % (on-topic) | median tokens read | median model tokens |",
             "|---|---|---|---|---|---|---|---|"]
    summary = {}
    for m in methods:
        mr = [r for r in rows if r["method"] == m]
        on = [r for r in mr if r["on_topic"]]
        summary[m] = {"on_topic_answered": sum(r["answered"] and r["cited"] > 0 for r in on),
                      "off_topic_no_answer": sum(not r["answered"] for r in mr if not r["on_topic"]),
                      "median_seconds": round(statistics.median(r["seconds"] for r in mr), 1),
                      "max_seconds": max(r["seconds"] for r in mr),
                      "median_coverage_on_topic": round(statistics.median(r["coverage_pct"] for r in on), 1),
                      "median_tokens_read": statistics.median(r["tokens_read"] or 0 for r in mr),
                      "median_model_tokens": statistics.median(r["model_tokens"] for r in mr)}
        v = summary[m]
        lines.append(f"| {m} | {v['on_topic_answered']} / {len(on)} | {v['off_topic_no_answer']} / "
                     f"{len(mr) - len(on)} | {v['median_seconds']} | {v['max_seconds']} | "
                     f"{v['median_coverage_on_topic']} | {v['median_tokens_read']} | {v['median_model_tokens']} |")
    lines += ["", "## Per question", "", "| # | method | on-topic | answered | cited | coverage % | seconds | "
              "model calls | tokens read | model tokens | question |", "|" + "---|" * 11]
    for i, r in enumerate(rows, 1):
        lines.append(f"| {i} | {r['method']} | {'yes' if r['on_topic'] else 'no'} | "
                     f"{'yes' if r['answered'] else 'no-answer'} | {r['cited']} | {r['coverage_pct']} | "
                     f"{r['seconds']} | {r['model_calls']} | {r['tokens_read']} | {r['model_tokens']} | "
                     f"{r['question']} |")
    for m in methods:
        first = next(r for r in rows if r["method"] == m)
        lines += ["", f"## First answer ({m})", "", "```", first["answer"], "```"]
    text = "\n".join(lines) + "\n"
    print(text)
    benchkit.write_results(args.out, text, {"summary": summary, "questions": rows})
    return 0


def main() -> int:
    """Parse the arguments, (build,) measure, print and write the results."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True, help="the index (built here with --build)")
    ap.add_argument("--corpus", type=Path, default=SHARED / "input", help="input folder for --build")
    ap.add_argument("--build", action="store_true", help="index --corpus into --db first (slmgraph index)")
    ap.add_argument("--extractor", choices=("llm", "nlp"), default="llm", help="extractor for --build")
    ap.add_argument("--questions-file", type=Path, default=SHARED / "global_questions_sample.csv")
    ap.add_argument("--level", type=int, default=0)
    ap.add_argument("--no-model-signal", action="store_true", help="skip the model's P(yes) signal (slow)")
    ap.add_argument("--max-item-tokens", type=int, default=160,
                    help="report tokens shown to the model for P(yes) (default 160)")
    ap.add_argument("--model-sample", type=int, default=30,
                    help="reports (a seeded sample, the same for every question) scored by the model signal; "
                         "0 = all (default 30: every report x 21 prompts is ~1 h on 2 busy cores)")
    ap.add_argument("--model", default=None, help="GGUF (default: the index's model)")
    ap.add_argument("--out", default="global_answers", help="results file stem in benchmarks/results/")
    ap.add_argument("--per-side", type=int, default=None,
                    help="only the first N on-topic and the first N off-topic questions (default: all 10 + 10)")
    ap.add_argument("--methods", default="global",
                    help="comma list of query methods answering every question: global (with the signal "
                         "separation table), drift, lazy (default global)")
    args = ap.parse_args()

    build_seconds = None
    if args.build:
        cmd = [sys.executable, "-m", "slmgraph.cli.main", "index", str(args.corpus), "--db", args.db, "--quiet",
               "--extractor", args.extractor] + (["--model", args.model] if args.model else [])
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True)
        build_seconds = round(time.perf_counter() - t0, 1)

    from slmgraph.config.settings import physical_cores
    from slmgraph.indexing.stages.reports import load_reports
    from slmgraph.query.engines.global_search import (
        answer_mode, global_search, helpfulness_signal, report_block, stored_vectors,
    )
    from slmgraph.query.scoring import score_items

    on_topic = load_questions(args.questions_file)
    questions = on_topic + OFF_TOPIC
    if args.per_side:
        on_topic = on_topic[: args.per_side]
        questions = on_topic + OFF_TOPIC[: args.per_side]
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if "global" not in methods:
        return answer_with(args, methods, on_topic, questions)
    s, store, n_docs, model, client, prompts, embedder = open_index(args)
    reports = load_reports(store, args.level)
    ids = [r["community_id"] for r in reports]
    texts = [report_block(r) for r in reports]
    vectors = stored_vectors(store, "report", {r["community_id"]: r["full_text"] for r in reports}, embedder)
    import random

    from slmgraph.query.scoring import combine

    sample = list(range(len(ids)))
    if args.model_sample and args.model_sample < len(ids):
        sample = sorted(random.Random(s.seed).sample(sample, args.model_sample))
    signals = ["embedding"] + ([] if args.no_model_signal else
                               ["embedding (sample)", "model (sample)", "combined (sample)"])

    best: dict[str, list[float]] = {sig: [] for sig in signals}
    per_q = []
    signal_seconds = 0.0
    for qi, q in enumerate(questions):
        t0 = time.perf_counter()
        sc = score_items(q, ids, [r["full_text"] for r in reports], signal="embedding", embedder=embedder,
                         vectors=vectors)
        best["embedding"].append(max(x.score for x in sc) if sc else 0.0)
        if not args.no_model_signal:
            sub = score_items(q, [ids[i] for i in sample], [texts[i] for i in sample], signal="combined",
                              embedder=embedder, vectors=vectors, client=client, prompts=prompts,
                              max_item_tokens=args.max_item_tokens)
            for sig in ("embedding", "model", "combined"):
                vals = [combine(sig, x.cosine, x.p_yes, x.p_yes_na) for x in sub]
                best[f"{sig} (sample)"].append(max(vals) if vals else 0.0)
        signal_seconds += time.perf_counter() - t0
        t0 = time.perf_counter()
        ans = global_search(store, client, prompts, s, q, level=args.level, progress=False, embedder=embedder)
        secs = time.perf_counter() - t0
        cited = ans.citations.get("reports", [])
        covered = benchkit.docs_of_communities(store, cited)
        row = {"question": q, "on_topic": qi < len(on_topic), "answered": bool(ans.details.get("selected")),
               "cited_reports": len(cited), "selected_reports": len(ans.details.get("selected", [])),
               "coverage_pct": round(100 * len(covered) / n_docs, 1) if n_docs else 0.0,
               "seconds": round(secs, 1), "model_calls": ans.model_calls, "prompt_tokens": ans.prompt_tokens,
               "completion_tokens": ans.completion_tokens,
               "best": {sig: round(best[sig][-1], 1) for sig in signals},
               "synthesis_kept": ans.details.get("synthesis") is not None, "answer": ans.text}
        per_q.append(row)
        print(f"[{qi + 1}/{len(questions)}] {'ON ' if row['on_topic'] else 'OFF'} "
              f"{'answered' if row['answered'] else 'no-answer'}; cites {row['cited_reports']}; "
              f"coverage {row['coverage_pct']} %; {row['seconds']} s; best {row['best']} -- {q[:60]}", flush=True)
    sep = auc_and_ranges(best, len(on_topic))
    n_params = getattr(model, "n_params", None)
    summary = {
        "index": str(args.db), "level": args.level, "reports": len(reports), "documents": n_docs,
        "model": model.name, "n_params": n_params, "signal_in_use": helpfulness_signal(s, n_params),
        "answer_mode": answer_mode(s, n_params), "floor": s.helpfulness_floor, "relative": s.helpfulness_relative,
        "separation": sep,
        "on_topic_answered": sum(r["answered"] and r["cited_reports"] > 0 for r in per_q if r["on_topic"]),
        "off_topic_no_answer": sum(not r["answered"] for r in per_q if not r["on_topic"]),
        "first_question_coverage_pct": per_q[0]["coverage_pct"],
        "median_seconds": round(statistics.median(r["seconds"] for r in per_q), 1),
        "max_seconds": max(r["seconds"] for r in per_q),
        "signal_scoring_seconds_total": round(signal_seconds, 1), "build_seconds": build_seconds,
        "model_sample": None if args.no_model_signal else len(sample), "max_item_tokens": args.max_item_tokens,
        "cores": physical_cores(), "machine": platform.machine(),
    }
    store.close()

    lines = [f"# Global answers: {Path(args.db).name}, level {args.level} ({len(reports)} reports, {n_docs} documents)",
             "", f"Model {model.name} ({n_params} parameters), {physical_cores()} cores; signal in use "
             f"`{summary['signal_in_use']}`, answers `{summary['answer_mode']}`, selection floor "
             f"{summary['floor']} and {summary['relative']} x best.", "",
             "## Separation (best report score per question, on-topic vs off-topic)", "",
             "`embedding`: over every report of the level. The `(sample)` rows score the same seeded sample of "
             f"{summary['model_sample']} reports for every question with each signal (the model's P(yes) sees the "
             f"first {args.max_item_tokens} tokens of a report; calibrated against the content-free question "
             "\"N/A\").", "",
             "| signal | ROC AUC | on-topic best (min..max) | off-topic best (min..max) | gap |", "|---|---|---|---|---|"]
    for sig, v in sep.items():
        lines.append(f"| {sig} | {v['auc']} | {v['on_topic_best'][0]}..{v['on_topic_best'][1]} | "
                     f"{v['off_topic_best'][0]}..{v['off_topic_best'][1]} | {v['gap']} |")
    lines += ["", "## Per question", "",
              "| # | on-topic | answered | cited | coverage % | seconds | model calls | prompt tok | completion tok "
              "| best (" + ", ".join(signals) + ") | question |", "|" + "---|" * 11]
    for i, r in enumerate(per_q, 1):
        lines.append(f"| {i} | {'yes' if r['on_topic'] else 'no'} | {'yes' if r['answered'] else 'no-answer'} | "
                     f"{r['cited_reports']} | {r['coverage_pct']} | {r['seconds']} | {r['model_calls']} | "
                     f"{r['prompt_tokens']} | {r['completion_tokens']} | "
                     f"{', '.join(str(r['best'][s_]) for s_ in signals)} | {r['question']} |")
    lines += ["", "## Totals", "",
              f"- on-topic questions answered with citations: {summary['on_topic_answered']} / {len(on_topic)}",
              f"- off-topic questions given the no-answer response: {summary['off_topic_no_answer']} / {len(OFF_TOPIC)}",
              f"- coverage of the first question: {summary['first_question_coverage_pct']} %",
              f"- seconds per query: median {summary['median_seconds']}, max {summary['max_seconds']}",
              f"- scoring every report with every signal (benchmark only): {summary['signal_scoring_seconds_total']} s",
              "", "## First answer", "", "```", per_q[0]["answer"], "```", ""]
    text = "\n".join(lines)
    print(text)
    benchkit.write_results(args.out, text, {"summary": summary, "questions": per_q})
    return 0


if __name__ == "__main__":
    sys.exit(main())
