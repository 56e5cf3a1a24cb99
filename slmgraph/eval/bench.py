"""``slmgraph bench``: small GGUF models compared on the same corpus, in tokens and wall-clock.

For each model (like llama.cpp's ``llama-bench``, but on slmgraph's own workload):

1. **Raw speed** as llama.cpp runs it here: prompt evaluation and generation tokens/s
   (:func:`raw_rates`: a 600-token slice of the sample after a cached fixed prefix, then 96
   generated tokens, three times; no grammar). ``benchmarks/index_throughput.py`` measures
   the same with its worker processes through :func:`raw_rates`.
2. **The index run** of the corpus (default: the bundled sample ``dulce.txt``) into a fresh
   index, with default settings: per stage, from the ``llm_calls`` ledger (:func:`ledger`),
   model calls, evaluated prompt tokens, completion tokens, model seconds, and the ratio of
   the model seconds to the raw bound (evaluated / prompt tok/s + completion / generation
   tok/s): how far slmgraph's calls (grammar, short prompts, KV reuse) are from raw llama.cpp.
3. **Answers on a fixed question set** (:func:`answer_quality`): every on-topic question (the
   bundled sample's ``dulce_questions.txt``; for ``--corpus`` a ``--questions FILE`` or a
   ``questions.txt``/``questions.csv`` beside the corpus) and every off-topic one
   (``offtopic_questions.txt``, or ``--offtopic FILE``) answered by default global search at level 0
   on the index of step 2: the share answered (an answer citing a report, not the no-answer text),
   and the helpfulness-scoring ROC AUC of each question's best report score, on-topic against
   off-topic (the measure of ``benchmarks/global_answers.py``), for the signal global search uses
   with this model (the embedding for every size today, :func:`slmgraph.query.scoring.default_signal`)
   and for the model's calibrated P(yes) on the same reports, so models compare on the one
   signal that is theirs.
4. **Extraction quality** (with ``--gold FILE``, Re-DocRED JSON, :mod:`slmgraph.eval.gold`): the first
   ``--gold-docs`` documents indexed one by one with the model and default settings, scored with
   the scorer of ``benchmarks/extraction_gold.py``: strict and lenient entity F1, relationship-pair
   F1, type accuracy.

Writes one table (stdout), ``bench.json`` and ``bench.png`` (matplotlib, when installed)
into ``--out`` (created with its parents; ``bench.json`` and ``bench.png`` there are overwritten:
:mod:`slmgraph.outputs`).
Timings are wall-clock on a shared machine: the JSON records the load average.

``bench`` sits in the interface layer (slmgraph/ARCHITECTURE.md, "Layers"): like the CLI it runs
the index pipeline and then global search.

One concern, over 500 lines: the ``bench`` command's measurements and their tables and chart.
"""

from __future__ import annotations

import csv
import json
import os
import platform
import random
import tempfile
import time
from pathlib import Path
from typing import Callable

import numpy as np

from slmgraph.config.settings import Settings, physical_cores
from slmgraph.errors import UserError
from slmgraph.outputs import output_folder
from slmgraph.samples import DULCE, DULCE_QUESTIONS, OFFTOPIC_QUESTIONS

#: Stage order of the table (ledger stage names; ``help`` and ``synthesis`` are the question set's
#: query-time calls: P(yes) scoring and the extractive answer's opening sentence).
STAGE_ORDER = ("extract", "glean", "claims", "summarize", "report", "help", "synthesis", "map", "reduce")
#: Gold documents scored per model (``--gold-docs``): the first 10, which keeps the default run bounded
#: (docs/decisions.md: gold documents per model).
GOLD_DOCS = 10
#: Reports of level 0 whose P(yes) the model gives for every question (a seeded sample, the same for
#: every question, when there are more): bounds the model signal's cost on a large corpus
#: (benchmarks/global_answers.py's ``--model-sample`` default).
MODEL_SIGNAL_REPORTS = 30
#: Report tokens the model reads for P(yes) (benchmarks/global_answers.py's ``--max-item-tokens``).
MODEL_SIGNAL_TOKENS = 160
#: Question files looked for beside a ``--corpus`` (in the folder that holds it) without ``--questions``.
QUESTION_FILES = ("questions.txt", "questions.csv")


def read_questions(path: str | Path, flag: str = "--questions") -> list[str]:
    """The questions of a file: a ``.csv`` with a ``question_text`` or ``question`` column (else its last
    column; graphrag's sample layout), or text with one question a line (``#`` comments, blank lines skipped).

    Raises:
        UserError: the file is missing, unreadable or holds no question (the message names the file).
    """
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{flag} {path} is not a file: pass a text file with one question a line (or a CSV "
                        "with a question column)")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{flag} {path} cannot be read ({exc}): pass a UTF-8 text file, one question a line") \
            from None
    if path.suffix.lower() == ".csv":
        rows = list(csv.DictReader(text.splitlines()))
        key = next((k for k in ("question_text", "question") if rows and k in rows[0]),
                   list(rows[0])[-1] if rows and rows[0] else None)
        qs = [(r.get(key) or "").strip() for r in rows] if key else []
    else:
        qs = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    qs = [q for q in qs if q]
    if not qs:
        raise UserError(f"{flag} {path} holds no question: write one question a line")
    return qs


def question_file(corpus: Path | None, questions: str | Path | None) -> Path:
    """The on-topic question file of a bench run: ``questions`` when given; the bundled sample's
    ``dulce_questions.txt`` for the bundled corpus; else the first of :data:`QUESTION_FILES` in the
    folder holding ``corpus``.

    Raises:
        UserError: a ``--corpus`` with neither ``--questions`` nor a question file beside it.
    """
    if questions is not None:
        return Path(questions)
    if corpus is None or Path(corpus).resolve() == DULCE.resolve():
        return DULCE_QUESTIONS
    beside = Path(corpus).resolve().parent
    for name in QUESTION_FILES:
        if (beside / name).is_file():
            return beside / name
    raise UserError(f"no question set for --corpus {corpus}: pass --questions FILE (one question a line) or put "
                    f"{' or '.join(QUESTION_FILES)} in {beside}")


def roc_auc_or_none(on: list[float], off: list[float]) -> float | None:
    """:func:`slmgraph.query.scoring.roc_auc` rounded to 3 decimals; None when a side has no question."""
    from slmgraph.query.scoring import roc_auc

    return round(roc_auc(on, off), 3) if on and off else None


def answer_quality(store, model, settings: Settings, on_topic: list[str], off_topic: list[str], embedder,
                   run_id: str) -> dict:
    """Answer every question with default global search at level 0 and measure the helpfulness scoring.

    Per question: answered (the answer cites at least one report; else it is the no-answer text), the
    best report score of the signal global search used (``details["best_score"]``), and the best
    calibrated P(yes) score (:func:`slmgraph.query.scoring.score_items`, signal ``model``) over at most
    :data:`MODEL_SIGNAL_REPORTS` reports of level 0 (seeded sample), each cut to
    :data:`MODEL_SIGNAL_TOKENS` tokens. Model calls are ledgered under ``run_id``.

    Returns:
        ``{signal, reports, model_signal_reports, on_topic: {questions, answered}, off_topic: {questions,
        answered}, auc_signal_in_use, auc_model_p_yes, seconds, questions: [{question, on_topic, answered,
        best, best_p_yes}]}`` (AUC None when a side is empty).
    """
    from slmgraph.model.client import ModelClient
    from slmgraph.config.prompting import Prompts
    from slmgraph.indexing.stages.report_store import load_reports
    from slmgraph.query.engines.global_search import global_search, report_block
    from slmgraph.query.scoring import score_items

    t0 = time.perf_counter()
    client = ModelClient(model, store, run_id)
    prompts = Prompts(settings.prompts_dir)
    reports = load_reports(store, 0)
    pick = list(range(len(reports)))
    if len(pick) > MODEL_SIGNAL_REPORTS:
        pick = sorted(random.Random(settings.seed).sample(pick, MODEL_SIGNAL_REPORTS))
    ids = [reports[i]["community_id"] for i in pick]
    texts = [report_block(reports[i]) for i in pick]
    rows, signal = [], None
    for q, on in [(q, True) for q in on_topic] + [(q, False) for q in off_topic]:
        ans = global_search(store, client, prompts, settings, q, level=0, progress=False, embedder=embedder)
        signal = ans.details.get("signal", signal)
        sc = score_items(q, ids, texts, signal="model", client=client, prompts=prompts,
                         max_item_tokens=MODEL_SIGNAL_TOKENS) if ids else []
        rows.append({"question": q, "on_topic": on, "answered": bool(ans.citations.get("reports")),
                     "best": float(ans.details.get("best_score", 0.0)),
                     "best_p_yes": round(max((s.score for s in sc), default=0.0), 1)})

    def side(on: bool) -> dict:
        r = [x for x in rows if x["on_topic"] is on]
        return {"questions": len(r), "answered": sum(x["answered"] for x in r)}

    on_r = [x for x in rows if x["on_topic"]]
    off_r = [x for x in rows if not x["on_topic"]]
    return {"signal": signal, "reports": len(reports), "model_signal_reports": len(ids),
            "on_topic": side(True), "off_topic": side(False),
            "auc_signal_in_use": roc_auc_or_none([x["best"] for x in on_r], [x["best"] for x in off_r]),
            "auc_model_p_yes": roc_auc_or_none([x["best_p_yes"] for x in on_r], [x["best_p_yes"] for x in off_r]),
            "seconds": round(time.perf_counter() - t0, 1), "questions": rows}


def gold_quality(model, path: str | None, docs: list, settings: Settings, embedder) -> dict:
    """Extraction quality of ``model`` with default settings on gold documents (:func:`slmgraph.eval.gold.run_config`).

    Returns:
        ``{documents, entities_strict_f1, entities_lenient_f1, pairs_f1, type_accuracy, model_calls,
        seconds, detail}``: F1 and accuracy as 0..1 (3 decimals; type accuracy None when nothing
        matched), ``detail`` the full :func:`~slmgraph.eval.gold.run_config` result.
    """
    import dataclasses

    from slmgraph.eval.gold import run_config

    s = dataclasses.replace(settings, model_path=path, workers=1)  # documents are scored one by one
    r = run_config("bench", s, docs, model, embedder_factory=lambda: embedder, say=lambda m: None)
    return {"documents": r["documents"], "entities_strict_f1": r["entities"]["f1"],
            "entities_lenient_f1": r["entities_lenient"]["f1"], "pairs_f1": r["pairs"]["f1"],
            "type_accuracy": r["types"]["accuracy"], "model_calls": r["cost"]["model_calls"],
            "seconds": r["cost"]["wall_seconds"], "detail": r}


def raw_rates(model, repeats: int = 3) -> tuple[float, float]:
    """Raw (prompt tokens/s, generation tokens/s) of a loaded llama.cpp model on the bundled sample.

    Prompt: 600 tokens of ``dulce.txt`` evaluated after a cached system prefix; generation: up to
    96 greedy tokens with no grammar; summed over ``repeats`` runs (Source: the measurement of
    ``benchmarks/index_throughput.py``, moved here so both use it).
    """
    from slmgraph.samples import DULCE

    toks = model.tokenize(DULCE.read_text(encoding="utf-8"))[:600]
    fixed, _ = model.prompt_tokens(model.render("You are a helpful assistant.", "x"))
    model.complete(fixed, toks[:8], schema=None, max_tokens=1)  # warm up, cache the fixed part
    p_tok = p_sec = g_tok = g_sec = 0.0
    for i in range(repeats):
        g = model.complete(fixed, toks[i * 10:] + model.tokenize("\n\nContinue the story:\n"), schema=None,
                           max_tokens=96)
        p_tok += g.prompt_tokens - g.cached_tokens
        p_sec += g.prompt_seconds
        g_tok += g.completion_tokens
        g_sec += g.seconds - g.prompt_seconds
    return p_tok / p_sec if p_sec else 0.0, g_tok / g_sec if g_sec else 0.0


def raw_seconds(model, fixed: list[int], rest: list[int], n_gen: int) -> tuple[float, float]:
    """llama.cpp's own cost of one call of a given shape on a loaded
    :class:`slmgraph.model.backend.LlamaModel`, for the bound of a stage's wall-clock.

    ``rest`` is evaluated as one batch after ``fixed`` (taken from the KV
    cache, as :meth:`~slmgraph.model.backend.LlamaModel.complete` does), then ``n_gen`` tokens are generated
    one at a time by arg-max with no grammar, no loop guard and
    end-of-generation tokens skipped, so exactly ``n_gen`` are produced at
    the positions a real call of this shape reaches (attention cost grows
    with the position, so a speed measured at a short context understates
    the cost of a long call).

    Returns:
        ``(prompt seconds, generation seconds)``, wall-clock.

    Raises:
        ValueError: ``rest`` is empty or the call would exceed the window.
    """
    if not rest or len(fixed) + len(rest) + n_gen > model.n_ctx:
        raise ValueError(f"raw call of {len(fixed)} + {len(rest)} + {n_gen} tokens does not fit "
                         f"n_ctx {model.n_ctx} (or has no prompt)")
    model.reserve_threads()
    llm, lc = model.llm, model.adapter
    model.ensure_fixed(list(fixed))
    t0 = time.perf_counter()
    llm.n_tokens = len(fixed)
    llm.eval(list(rest))
    t1 = time.perf_counter()
    for _ in range(n_gen):
        logits = lc.logits()
        tok = int(np.argmax(logits))
        if lc.is_eog(tok):
            masked = logits.copy()
            masked[tok] = -np.inf
            tok = int(np.argmax(masked))
        llm.eval([tok])
    return t1 - t0, time.perf_counter() - t1


def raw_rates_at(model, cached: int, prompt: int, completion: int, repeats: int = 2) -> tuple[float, float]:
    """Raw (prompt tokens/s, generation tokens/s) of a loaded llama.cpp model at one call shape.

    The shape of a stage's mean model call: ``cached`` tokens of fixed prefix
    taken from the KV cache, ``prompt`` tokens evaluated after it, ``completion``
    tokens generated (:func:`raw_seconds`: arg-max,
    no grammar, no loop guard). Text: the bundled sample's tokens, repeated as
    needed; each repeat starts ``prompt`` at another offset. Used for the bound
    of a stage (benchmarks/index_throughput.py), where :func:`raw_rates`, taken at
    a 600-token context, understates long calls.

    Raises:
        ValueError: the shape does not fit the model's window (``prompt`` >= 1 needed).
    """
    from slmgraph.samples import DULCE

    base = model.tokenize(DULCE.read_text(encoding="utf-8"))
    need = cached + prompt * repeats + 16
    toks = (base * (need // max(1, len(base)) + 1))[:need]
    fixed = toks[:cached]
    p_sec = g_sec = 0.0
    for i in range(repeats):
        start = cached + i * prompt
        ps, gs = raw_seconds(model, fixed, toks[start:start + max(1, prompt)], completion)
        p_sec += ps
        g_sec += gs
    return (max(1, prompt) * repeats / p_sec if p_sec else 0.0,
            completion * repeats / g_sec if g_sec and completion else 0.0)


def ledger(db: str | Path, run_id: str) -> dict:
    """Per-stage model figures of one run from the ``llm_calls`` ledger.

    Returns:
        ``{stage: {calls, prompt_tokens, reused_tokens, evaluated_tokens, completion_tokens,
        model_seconds, workers}}`` in call order (tokens in the model's tokens, seconds wall-clock).
    """
    from slmgraph.store.db import Store

    st = Store(db, read_only=True)
    try:
        rows = st.con.execute(
            "SELECT stage, count(*), sum(prompt_tokens), sum(cached_tokens), sum(completion_tokens), sum(seconds), "
            "count(DISTINCT worker) FROM llm_calls WHERE run_id = ? GROUP BY stage ORDER BY min(call_id)",
            [run_id]).fetchall()
    finally:
        st.close()
    return {r[0]: {"calls": r[1], "prompt_tokens": int(r[2] or 0), "reused_tokens": int(r[3] or 0),
                   "evaluated_tokens": int((r[2] or 0) - (r[3] or 0)), "completion_tokens": int(r[4] or 0),
                   "model_seconds": round(r[5] or 0, 2), "workers": r[6]} for r in rows}


def bench_model(path: str | None, corpus: str | Path, settings: Settings, say: Callable[[str], None],
                load: Callable | None = None, *, questions: tuple[list[str], list[str]] | None = None,
                gold_docs: list | None = None, embedder=None) -> dict:
    """Measure one model: raw rates, an index run of ``corpus`` with per-stage ledger figures, the answers
    to the question set on that index, and (with gold documents) extraction quality.

    Args:
        path: GGUF file (None = the bundled model).
        load: ``(path, settings) -> model`` (tests pass the fake); None = :func:`slmgraph.model.backend.load_model`.
        questions: ``(on_topic, off_topic)`` for :func:`answer_quality`; None skips it.
        gold_docs: :class:`slmgraph.eval.gold.GoldDoc` list for :func:`gold_quality`; None skips it.
        embedder: the all-MiniLM embedder shared by every model (None: the index loads the bundled one).

    Returns:
        ``{model, n_params, raw: {prompt_tok_s, gen_tok_s}, stages: {stage: {...ledger, raw_bound_seconds,
        ratio_to_raw}}, stage_wall_seconds, index_seconds, entities, relationships, reports, answers, gold}``
        (``answers``/``gold`` None when skipped; the question set's model calls are stages too).
    """
    import dataclasses

    from slmgraph.indexing.pipeline import run_index
    from slmgraph.store.db import Store, new_run_id

    settings = dataclasses.replace(settings, model_path=path)  # extraction workers load the same GGUF
    if load is None:
        from slmgraph.model.backend import load_model

        def load(p, s):
            return load_model(p, s.n_ctx, s.n_threads, s.seed, s.threads_explicit)

    model = load(path, settings)
    say(f"bench: {model.name}: raw prompt and generation speed ...")
    p_rate, g_rate = raw_rates(model)
    answers = None
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        say(f"bench: {model.name}: indexing {corpus} ...")
        t0 = time.perf_counter()
        out = run_index(corpus, db, settings, progress=False, model=model, say=lambda m: None,
                        model_factory=None, embedder_factory=None if embedder is None else (lambda: embedder))
        wall = time.perf_counter() - t0
        led = ledger(db, out["run_id"])
        query_run = new_run_id()
        st = Store(db)
        try:
            counts = {t: st.count(t) for t in ("entities", "relationships", "community_reports")}
            if questions is not None and counts["community_reports"]:
                say(f"bench: {model.name}: answering {len(questions[0])} + {len(questions[1])} questions ...")
                answers = answer_quality(st, model, settings, questions[0], questions[1], embedder, query_run)
        finally:
            st.close()
        for k, v in ledger(db, query_run).items():
            led[k] = v
    for row in led.values():
        bound = (row["evaluated_tokens"] / p_rate if p_rate else 0) + \
                (row["completion_tokens"] / g_rate if g_rate else 0)
        row["raw_bound_seconds"] = round(bound, 2)
        row["ratio_to_raw"] = round(row["model_seconds"] / bound, 2) if bound else None
    stages = {k: led[k] for k in sorted(led, key=lambda s: (STAGE_ORDER.index(s) if s in STAGE_ORDER else 99, s))}
    gold = None
    if gold_docs:
        say(f"bench: {model.name}: extraction on {len(gold_docs)} gold documents ...")
        gold = gold_quality(model, path, gold_docs, settings, embedder)
    return {"model": model.name, "n_params": int(getattr(model, "n_params", 0) or 0),
            "threads": getattr(model, "n_threads", None),
            "raw": {"prompt_tok_s": round(p_rate, 1), "gen_tok_s": round(g_rate, 1)},
            "stages": stages,
            "stage_wall_seconds": {k: v["seconds"] for k, v in out.items() if isinstance(v, dict) and "seconds" in v},
            "index_seconds": round(wall, 1), "entities": counts["entities"],
            "relationships": counts["relationships"], "reports": counts["community_reports"],
            "answers": answers, "gold": gold}


def run_bench(models: list[str | None], corpus: str | Path | None, out: str | Path, settings: Settings,
              say: Callable[[str], None] = print, load: Callable | None = None, *,
              gold: str | Path | None = None, gold_docs: int = GOLD_DOCS, questions: str | Path | None = None,
              offtopic: str | Path | None = None, embedder_factory: Callable | None = None) -> dict:
    """``slmgraph bench``: every model through the same corpus; writes ``bench.json`` and ``bench.png``.

    Args:
        models: GGUF paths (None = the bundled model), measured one after another.
        corpus: folder or file (None = the bundled sample).
        gold: Re-DocRED JSON file (:func:`slmgraph.eval.gold.load_gold`); None = no extraction scores.
        gold_docs: its first documents scored per model.
        questions / offtopic: on-topic and off-topic question files (:func:`question_file`,
            :func:`read_questions`; default off-topic: the bundled ``offtopic_questions.txt``).
        embedder_factory: ``() -> embedder`` (tests pass a fake); None = the bundled all-MiniLM-L6-v2.

    Returns:
        ``{date, machine, load_average_before/after, corpus, questions, offtopic, gold, gold_docs,
        seconds, models: [bench_model(...)], files: [...]}``.

    Raises:
        UserError: a model file is missing; the corpus is unreadable; ``out`` is a file or cannot be
            created; a question or gold file is missing, empty or malformed (the message names it);
            ``gold_docs`` < 1. All are checked before any model loads.
    """
    from slmgraph.eval.gold import load_gold
    from slmgraph.indexing.stages.ingest_read import read_documents

    t_start = time.perf_counter()
    qfile = question_file(Path(corpus) if corpus else None, questions)
    on_topic = read_questions(qfile, "--questions")
    ofile = Path(offtopic) if offtopic is not None else OFFTOPIC_QUESTIONS
    off_topic = read_questions(ofile, "--offtopic")
    corpus = Path(corpus) if corpus else DULCE
    read_documents(corpus)  # a bad corpus fails before any model loads
    for m in models:
        if m is not None and not Path(m).is_file():
            raise UserError(f"--models: {m} is not a file: pass GGUF files separated by commas")
    if gold_docs < 1:
        raise UserError(f"--gold-docs {gold_docs} must be at least 1")
    docs = load_gold(Path(gold), gold_docs) if gold is not None else None
    outdir = output_folder(out)  # created with its parents; bench.json/png overwritten (slmgraph.outputs)
    if embedder_factory is None:
        from slmgraph.indexing.stages.embed import Embedder

        def embedder_factory():
            return Embedder(batch_size=settings.embed_batch_size, threads=settings.n_threads,
                            precision=settings.embed_precision)

    embedder = embedder_factory()
    result = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "corpus": str(corpus),
              "questions": str(qfile), "offtopic": str(ofile), "gold": None if gold is None else str(gold),
              "gold_docs": None if docs is None else len(docs),
              "machine": f"{platform.machine()}, {physical_cores()} physical cores",
              "load_average_before": [round(x, 2) for x in os.getloadavg()], "models": []}
    for m in models:
        result["models"].append(bench_model(m, corpus, settings, say, load, questions=(on_topic, off_topic),
                                            gold_docs=docs, embedder=embedder))
    result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    result["seconds"] = round(time.perf_counter() - t_start, 1)
    files = [outdir / "bench.json"]
    (outdir / "bench.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    png = chart(result, outdir / "bench.png")
    if png:
        files.append(png)
    result["files"] = [str(f) for f in files]
    return result


def _table(head: list[str], rows: list[list], left: int) -> list[str]:
    cells = [head] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    return ["  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
            for r in cells]


def _num(x, fmt: str = ".3f") -> str:
    return "-" if x is None else format(x, fmt)


def quality_rows(result: dict) -> tuple[list[str], list[list]]:
    """Header and one row per model of the quality table: extraction F1/type accuracy (``-`` without
    ``--gold``), questions answered on each side, and both AUCs."""
    head = ["model", "gold docs", "entity F1 strict", "lenient", "pair F1", "type acc", "on-topic answered",
            "off-topic answered", "AUC (signal in use)", "AUC P(yes)"]
    rows = []
    for m in result["models"]:
        g, a = m.get("gold") or {}, m.get("answers") or {}
        rows.append([m["model"], g.get("documents", "-"), _num(g.get("entities_strict_f1")),
                     _num(g.get("entities_lenient_f1")), _num(g.get("pairs_f1")), _num(g.get("type_accuracy")),
                     f"{a['on_topic']['answered']}/{a['on_topic']['questions']}" if a else "-",
                     f"{a['off_topic']['answered']}/{a['off_topic']['questions']}" if a else "-",
                     f"{_num(a.get('auc_signal_in_use'), '.2f')} ({a.get('signal')})" if a else "-",
                     _num(a.get("auc_model_p_yes"), ".2f") if a else "-"])
    return head, rows


def render(result: dict) -> str:
    """The bench result as two plain-text tables: speed (one row per model and stage) and quality
    (one row per model: :func:`quality_rows`), then the run conditions."""
    head = ["model", "stage", "calls", "evaluated tok", "completion tok", "model s", "raw bound s", "x raw"]
    rows = []
    for m in result["models"]:
        rows.append([m["model"] + (f" ({m['threads']} thr)" if m.get("threads") else ""), "raw tok/s", "",
                     f"{m['raw']['prompt_tok_s']:.0f}/s", f"{m['raw']['gen_tok_s']:.0f}/s", "", "", ""])
        for stage, r in m["stages"].items():
            rows.append(["", stage, r["calls"], r["evaluated_tokens"], r["completion_tokens"],
                         f"{r['model_seconds']:.1f}", f"{r['raw_bound_seconds']:.1f}",
                         "" if r["ratio_to_raw"] is None else f"{r['ratio_to_raw']:.2f}"])
        rows.append(["", "index (wall)", "", "", "", f"{m['index_seconds']:.1f}", "", ""])
        if m.get("answers"):
            rows.append(["", "questions (wall)", "", "", "", f"{m['answers']['seconds']:.1f}", "", ""])
        if m.get("gold"):
            rows.append(["", "gold (wall)", "", "", "", f"{m['gold']['seconds']:.1f}", "", ""])
    lines = _table(head, rows, 2) + [""] + _table(*quality_rows(result), 1)
    la = result.get("load_average_before")
    q = f"; questions {result['questions']} vs {result['offtopic']}" if result.get("questions") else ""
    gd = f"; gold {result['gold']} (first {result['gold_docs']} documents)" if result.get("gold") else ""
    lines.append(f"\n{result['corpus']}{q}{gd}; {result['machine']}; load average before {la}"
                 f"{'; ' + str(result['seconds']) + ' s in all' if result.get('seconds') is not None else ''} "
                 "(other processes on the cores slow every figure)")
    return "\n".join(lines)


def chart(result: dict, path: Path) -> Path | None:
    """A PNG with three panels: raw tokens/s per model, model seconds per stage per model, and the quality
    figures (AUCs, on-topic answered share, extraction F1 and type accuracy when measured).
    Returns None when matplotlib is not installed (the table and JSON are still written)."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = [m["model"] for m in result["models"]]
    stages = [s for s in STAGE_ORDER if any(s in m["stages"] for m in result["models"])]
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(15, 4), dpi=100)
    qual = [("AUC in use", lambda m: (m.get("answers") or {}).get("auc_signal_in_use")),
            ("AUC P(yes)", lambda m: (m.get("answers") or {}).get("auc_model_p_yes")),
            ("on-topic answered", lambda m: (m["answers"]["on_topic"]["answered"]
                                             / m["answers"]["on_topic"]["questions"])
             if m.get("answers") and m["answers"]["on_topic"]["questions"] else None),
            ("entity F1 strict", lambda m: (m.get("gold") or {}).get("entities_strict_f1")),
            ("type accuracy", lambda m: (m.get("gold") or {}).get("type_accuracy"))]
    qual = [(k, f) for k, f in qual if any(f(m) is not None for m in result["models"])]
    w = 0.8 / max(1, len(models))
    for i, m in enumerate(result["models"]):
        a1.bar([x + i * w for x in range(2)], [m["raw"]["prompt_tok_s"], m["raw"]["gen_tok_s"]], w, label=m["model"])
        a2.bar([x + i * w for x in range(len(stages))],
               [m["stages"].get(s, {}).get("model_seconds", 0) for s in stages], w, label=m["model"])
    a1.set_xticks([x + w * (len(models) - 1) / 2 for x in range(2)], ["prompt", "generation"])
    a1.set_ylabel("tokens/s (raw llama.cpp)")
    a2.set_xticks([x + w * (len(models) - 1) / 2 for x in range(len(stages))], stages)
    a2.set_ylabel("model seconds (index run and questions)")
    for i, m in enumerate(result["models"]):
        a3.bar([x + i * w for x in range(len(qual))], [f(m) or 0 for _, f in qual], w, label=m["model"])
    a3.set_xticks([x + w * (len(models) - 1) / 2 for x in range(len(qual))], [k for k, _ in qual], fontsize=8,
                  rotation=15)
    a3.set_ylim(0, 1)
    a3.set_ylabel("quality (0..1)")
    a1.legend(fontsize=8)
    fig.suptitle(f"slmgraph bench on {Path(result['corpus']).name}")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
