"""Command line: ``slmgraph init | index | estimate | query | stats | export | picture | serve | bench | calibrate | prompt-tune | demo``.

Argument parsing is the standard library's argparse. Every user mistake is
reported as one line ``slmgraph: error: ...`` with exit status 2; a failed write
(disk full) with 1; an ``index`` run that finished without reading some files or
folders of its input (kept as they were indexed) with 3; Ctrl-C exits with 130
and says how to resume.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import re
import os
import sys
from typing import Callable
from pathlib import Path

from slmgraph import __version__
from slmgraph.config.settings import Settings, physical_cores
from slmgraph.indexing.executors.batch import WorkerError
from slmgraph.errors import StorageError, UserError

DEMO_QUESTION = "What are the main themes of this story?"


def _common(p: argparse.ArgumentParser, db_required: bool = True) -> None:
    if db_required:
        p.add_argument("--db", required=True, help="the index: one DuckDB file (created by 'index')")
    p.add_argument("--model", help="a GGUF model file (default: the bundled SmolLM2-135M-Instruct Q4_1)")
    p.add_argument("--threads", type=int, default=None,
                   help=f"llama.cpp threads per process: the main one and each extraction worker "
                        f"(default: the thread plan over the {physical_cores()} physical cores)")
    p.add_argument("--seed", type=int, default=42, help="sampler and shuffle seed (default 42)")
    p.add_argument("--prompts", help="folder of prompt files overriding the bundled prompts/ (see prompts/README.md)")
    p.add_argument("--quiet", action="store_true", help="no progress bars or stage notes")


def _wait_option(p: argparse.ArgumentParser, holder: str) -> None:
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                   help=f"while {holder} holds the index, wait up to SECONDS for it (default 0: refuse at once)")


def _index_options(p: argparse.ArgumentParser) -> None:
    """Options shared by ``index`` and ``estimate`` (what the index will contain and how it is built)."""
    p.add_argument("--chunk-size", type=int, default=600, help="text unit size in model tokens (default 600)")
    p.add_argument("--chunk-overlap", type=int, default=100, help="overlap of text units in tokens (default 100)")
    p.add_argument("--extractor", choices=("llm", "nlp"), default="llm",
                   help="llm: the model types and relates candidate names (default); nlp: no model calls")
    p.add_argument("--ner-model", default="auto",
                   help="spaCy NER pipeline of the candidate pass: auto (the installed English small pipeline), "
                        "none (capitalised runs only), or a pipeline's package name or path")
    p.add_argument("--max-candidates", type=int, default=None,
                   help="candidate names per text unit (default 20 when the model reads them, 60 on the LLM-free "
                        "route); more are ranked, left out, counted and warned of")
    p.add_argument("--choices", default="auto",
                   help="model decisions by token probability during extraction: auto (those that beat the "
                        "LLM-free choice on the gold benchmark), none, or a comma list of keep,type,relate")
    p.add_argument("--descriptions", choices=("auto", "model", "text"), default="auto",
                   help="who writes descriptions: the model, the text's sentences, or auto (model if >= 1B params)")
    p.add_argument("--entity-types", default=None,
                   help="comma-separated entity types (default: person,organization,location,event,concept)")
    p.add_argument("--no-cooccurrence", action="store_true",
                   help="do not add same-sentence co-occurrence relationships to the model's")
    p.add_argument("--no-concepts", action="store_true",
                   help="names only: no noun-phrase concept nodes (budget shortfall, council tax) in the graph")
    p.add_argument("--gleanings", type=int, default=1,
                   help="gleaning rounds: ask the model whether entities were missed, and extract again (default 1)")
    p.add_argument("--free-names", action="store_true",
                   help="let the model write entity names freely instead of choosing among the candidate spans")
    p.add_argument("--no-grounding", action="store_true",
                   help="keep entities whose names do not occur in their text unit")
    p.add_argument("--resolution", default="0.9",
                   help="entity resolution: a name-embedding similarity (default 0.9) at which entities of compatible "
                        "types merge, on top of the title/first-last-name/acronym rules; 'rules' for the rules only; "
                        "'off' to merge on the normalised name only")
    p.add_argument("--summaries", choices=("auto", "model", "join"), default="auto",
                   help="who summarises several descriptions of one entity: the model, a join, or auto (model if >= 1B)")
    p.add_argument("--reports", choices=("auto", "model", "data"), default="auto",
                   help="who writes community reports: the model, the data (no model call: top entities as title, "
                        "top relationships as findings), or auto (model if >= 1B params, else data)")
    p.add_argument("--no-reports", action="store_true",
                   help="skip the community report stage (recorded as skipped): no report is written, so global and "
                        "drift search cannot run; --method lazy answers global questions without reports")
    p.add_argument("--report-budget", type=float, default=Settings.report_budget, metavar="RATIO",
                   help="model-written reports: prompt tokens they may evaluate per corpus token for the whole build "
                        f"(default {Settings.report_budget}; descriptions in report contexts are cut to fit; "
                        "0 = no budget)")
    p.add_argument("--claims", action="store_true", help="also extract claims (covariates): one more call per text unit")
    p.add_argument("--n-ctx", type=int, default=8192, help="model context window in tokens (default 8192)")
    p.add_argument("--workers", type=int, default=None,
                   help="extraction worker processes (default: the thread plan, workers x threads <= physical cores)")
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="where extraction and report writing run: local worker processes (default) or Ray actors "
                        "(pip install 'slmgraph[ray]')")
    p.add_argument("--ray-address", default=None,
                   help="with --executor ray: the Ray cluster to join (e.g. HEAD:6379 or auto; "
                        "default: start a local Ray instance)")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``slmgraph: error: ...`` and exit status 2 (no usage dump)."""

    def error(self, message: str):  # noqa: D102 - argparse API
        sub = self.prog.split(" ", 1)[1] + " " if " " in self.prog else ""
        self.exit(2, f"slmgraph: error: {message} (see 'slmgraph {sub}--help')\n")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of all subcommands."""
    ap = _Parser(prog="slmgraph", description="Offline GraphRAG for small language models on a CPU.")
    ap.add_argument("--version", action="version", version=f"slmgraph {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)
    ap.subcommands = sub.choices  # name -> subparser, for errors found after parsing

    p = sub.add_parser("index", help="index a folder of .txt/.md documents (incremental, resumable)")
    p.add_argument("input", help="folder of .txt/.md files (read recursively) or one file")
    _common(p)
    _index_options(p)
    p.add_argument("--replace", action="store_true", help="re-index an existing index from a different input folder")
    _wait_option(p, "another process (an index run, a query or stats)")

    p = sub.add_parser("estimate", help="predict an index run's tokens and wall-clock from a short calibration run")
    p.add_argument("input", help="folder of .txt/.md files (read recursively) or one file")
    _common(p, db_required=False)
    _index_options(p)
    p.add_argument("--sample", type=int, default=8, help="text units extracted for real to calibrate (default 8)")
    p.add_argument("--json", action="store_true", help="print the estimate as JSON")

    p = sub.add_parser("query", help="ask a question of an index")
    p.add_argument("question", nargs="?", default=None,
                   help="the question in quotes, or - to read it from standard input")
    p.add_argument("--question-file", metavar="FILE", help="read the question from FILE (UTF-8 text)")
    _common(p)
    _wait_option(p, "an index run")
    p.add_argument("--method", choices=("global", "local", "basic", "ts", "drift", "lazy", "auto"), default="global",
                   help="global: map-reduce over community reports (default); local: entity neighbourhood; "
                        "basic: vector RAG over text units; ts: map-reduce over all text units (baseline); "
                        "drift: the best community reports as a primer, then local-search follow-ups, reduced; "
                        "lazy: budgeted relevance tests of text units grouped by community, no reports needed; "
                        "auto: global (lazy on an index without reports) or local by the question's wording")
    p.add_argument("--budget", type=int, default=None,
                   help="lazy search: relevance tests at most (default 100)")
    p.add_argument("--followups", type=int, default=None,
                   help="drift search: follow-up questions per round, each a local search (default 3)")
    p.add_argument("--depth", type=int, default=None, help="drift search: follow-up rounds (default 2)")
    p.add_argument("--drift-tokens", type=int, default=None,
                   help="drift search: no follow-up starts once tokens read plus model tokens reach this "
                        "(default 20000)")
    p.add_argument("--level", type=int, default=None,
                   help="community level for global search (default 0, the root level)")
    p.add_argument("--dynamic", action="store_true",
                   help="global search: rate reports from the root level down and use the relevant ones")
    p.add_argument("--json", action="store_true", help="print the answer, citations, context and cost as JSON")
    p.add_argument("--answers", choices=("auto", "extractive", "model"), default="auto",
                   help="who writes the answer: points copied from the data with citations and at most one grounded "
                        "model sentence (extractive), the model, or auto (extractive under 1B params)")
    p.add_argument("--opening", choices=("auto", "model", "off"), default="auto",
                   help="extractive answers: let the model write one opening sentence, kept only when grounded "
                        "(model), never (off), or auto (off under 1B params: the 135M model's did not help)")
    p.add_argument("--helpfulness", choices=("auto", "embedding", "model", "combined"), default="auto",
                   help="helpfulness score of reports/text units: question embedding cosine, the model's calibrated "
                        "P(yes), their mean, or auto (the embedding: measured best; the selection floor is on its scale)")
    p.add_argument("--n-ctx", type=int, default=None, help="model context window in tokens (default 8192)")
    p.add_argument("--local-tokens", type=int, default=None,
                   help="local search context budget in tokens (default 3000 with the 8192-token window, "
                        "scaled to --n-ctx)")
    p.add_argument("--local-shares", default="0.1,0.2,0.2,0.5",
                   help="local search budget shares: reports,entities,relationships,text units (default 0.1,0.2,0.2,0.5)")

    p = sub.add_parser("stats", help="counts per table and level; tokens and seconds per stage")
    p.add_argument("--db", required=True, help="the index (one DuckDB file)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    _wait_option(p, "an index run")

    p = sub.add_parser("demo", help="index the bundled sample story, ask a global question, print stats")
    p.add_argument("--db", default="slmgraph-demo.duckdb",
                   help="where to write the demo index (default slmgraph-demo.duckdb; an index of other input is refused)")
    _common(p, db_required=False)
    p.add_argument("--question", default=DEMO_QUESTION, help=f"the global question (default {DEMO_QUESTION!r})")
    _ecosystem_parsers(sub)
    return ap


def _ecosystem_parsers(sub) -> None:
    """Subcommands and options that fit slmgraph to the tools around it: the settings file
    (``init``, ``--config``), ``export``, ``picture``, ``bench`` and ``prompt-tune``."""
    from slmgraph.config.file import FILE_NAME

    p = sub.add_parser("serve", help="a local web app: ask with streamed answers, follow citations to their "
                                     "passages, browse entities, communities and documents (loopback only)")
    _common(p)
    p.add_argument("--port", type=int, default=8765, help="TCP port on 127.0.0.1 (default 8765; 0 = any free port)")
    p.add_argument("--host", default="127.0.0.1",
                   help="loopback address to bind: 127.0.0.1 (default), ::1 or localhost; any other is refused")
    for name in ("index", "estimate", "query", "serve"):
        sub.choices[name].add_argument(
            "--config", default=None,
            help=f"settings file (default: ./{FILE_NAME} when present); flags you type override it")
    p = sub.add_parser("init", help=f"write a commented {FILE_NAME} with every setting at its default")
    p.add_argument("dir", nargs="?", default=".",
                   help="folder to write it in (default: the working directory; created with its parents)")
    p.add_argument("--prompts", action="store_true",
                   help="also copy the bundled prompts to DIR/prompts and point the settings file at them")
    p.add_argument("--force", action="store_true", help="overwrite an existing settings file (and prompts)")
    p = sub.add_parser("export", help="write the index as GraphML (Gephi, networkx) or graphrag-shaped Parquet/CSV")
    p.add_argument("--db", required=True, help="the index (one DuckDB file)")
    p.add_argument("--format", choices=("graphml", "parquet", "csv"), default="parquet",
                   help="graphml: graph.graphml; parquet/csv: graphrag's output tables (default parquet)")
    p.add_argument("--out", required=True,
                   help="folder to write into (created with its parents; files of the same names are overwritten)")
    p = sub.add_parser("picture", help="the community hierarchy as one offline HTML page (sunburst) and a PNG")
    p.add_argument("--db", required=True, help="the index (one DuckDB file)")
    p.add_argument("--out", default="index.html",
                   help="the HTML file to write (default index.html; its folder is created, an existing file "
                        "overwritten)")
    p.add_argument("--png", default=None, help="the PNG to write (default: --out with .png; same rule)")
    p = sub.add_parser("bench", help="measure GGUF models doing every model stage on a fixed workload against the "
                                     "LLM-free route (quality, tokens, seconds, ratio to llama.cpp); writes "
                                     "bench.md/json/png and each model's capability record. With --corpus: tokens "
                                     "and seconds per index stage of that corpus with default settings")
    p.add_argument("--models", default=None,
                   help="comma-separated GGUF files (default: the bundled model); 'bundled' names the bundled one")
    _stage_bench_options(p)
    p.add_argument("--corpus", default=None,
                   help="instead of the stage bench: index this folder or file with default settings and report "
                        "tokens and seconds per stage, global answers and helpfulness AUC")
    p.add_argument("--questions", default=None,
                   help="on-topic questions of --corpus, one a line (or a CSV with a question column); default: "
                        "the bundled sample's set, or questions.txt / questions.csv beside --corpus")
    p.add_argument("--offtopic", default=None,
                   help="off-topic questions, one a line (default: the bundled offtopic_questions.txt)")
    p.add_argument("--gold", default=None,
                   help="gold file in Re-DocRED's JSON format (DocRED's: a list of documents with title, sents, "
                        "vertexSet, labels; e.g. Re-DocRED's dev_revised.json): adds extraction F1 and type "
                        "accuracy per model")
    p.add_argument("--gold-docs", type=int, default=None,
                   help="documents of --gold (or of the shipped Re-DocRED slice) scored per model, from the first "
                        "(default: 4 for the stage bench, 10 with --corpus)")
    p.add_argument("--out", default="slmgraph-bench",
                   help="folder for bench.json and bench.png (default slmgraph-bench; created with its parents, "
                        "the two files overwritten)")
    p.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: the thread plan)")
    p.add_argument("--workers", type=int, default=None, help="extraction worker processes (default: the thread plan)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p = sub.add_parser("calibrate", help="measure one GGUF on the stage bench and write its capability record, "
                                         "which decides every auto setting for it")
    p.add_argument("model", help="the GGUF file ('bundled' for the bundled model)")
    _stage_bench_options(p)
    p.add_argument("--gold", default=None, help="Re-DocRED JSON file replacing the shipped slice")
    p.add_argument("--gold-docs", type=int, default=None, help="gold documents scored, from the first (default 4)")
    p.add_argument("--out", default="slmgraph-calibrate",
                   help="folder for bench.md/json/png (default slmgraph-calibrate; created, the files overwritten)")
    p.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: the thread plan)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p = sub.add_parser("prompt-tune", help="write a prompts folder whose few-shot example comes from your corpus")
    p.add_argument("input", help="folder of .txt/.md files (read recursively) or one file")
    p.add_argument("--out", required=True,
                   help="folder for the prompt files (created with its parents; prompt files already there need "
                        "--force); use it with --prompts DIR")
    p.add_argument("--model", help="a GGUF model file that types the names (default: the bundled model)")
    p.add_argument("--entity-types", default=None,
                   help="comma-separated entity types (default: person,organization,location,event,concept)")
    p.add_argument("--force", action="store_true", help="overwrite prompt files already in --out")


def _settings(args) -> Settings:
    s = Settings(seed=args.seed)
    if getattr(args, "model", None) is not None:
        if not args.model.strip():
            raise UserError("--model is empty: pass a .gguf file, or leave the option out for the bundled model")
        s.model_path = args.model
    if getattr(args, "threads", None) is not None:
        if args.threads < 1:
            raise UserError(f"--threads {args.threads} must be at least 1")
        if args.threads > physical_cores():
            print(f"slmgraph: warning: --threads {args.threads} exceeds the {physical_cores()} physical cores; "
                  "llama.cpp's spinning threads will slow down", file=sys.stderr)
        # --threads is per llama.cpp process: the main one and each extraction worker.
        s.n_threads = args.threads
        s.threads_explicit = True
    if getattr(args, "prompts", None) is not None:
        if not args.prompts.strip():
            raise UserError("--prompts is empty: pass a folder of prompt files, or leave the option out")
        s.prompts_dir = args.prompts
    if getattr(args, "workers", None) is not None:
        if args.workers < 1:
            raise UserError(f"--workers {args.workers} must be at least 1")
        if args.workers > 4 * physical_cores() and getattr(args, "executor", "local") != "ray":
            raise UserError(f"--workers {args.workers} is far more than the {physical_cores()} cores: each worker "
                            f"loads the model; use at most {physical_cores()}")
        s.workers = args.workers
    if getattr(args, "n_ctx", None) is not None:
        if args.n_ctx < 2048:
            raise UserError(f"--n-ctx {args.n_ctx} is too small: use at least 2048 tokens (8192 for the default model)")
        s.n_ctx = args.n_ctx
    if getattr(args, "wait", None) is not None and not (math.isfinite(args.wait) and args.wait >= 0):
        raise UserError(f"--wait {args.wait} must be a number of seconds >= 0")
    if getattr(args, "local_shares", None):
        try:
            shares = tuple(float(x) for x in args.local_shares.split(","))
        except ValueError:
            shares = ()
        if len(shares) != 4 or not all(math.isfinite(x) and x >= 0 for x in shares) or not sum(shares):
            raise UserError(f"--local-shares {args.local_shares!r} must be four non-negative numbers, "
                            "e.g. 0.1,0.2,0.2,0.5")
        s.local_shares = shares
        s.scale_to_window()
        if args.local_tokens is not None:  # only a given value is refused; the default scales to the window
            if args.local_tokens < 200:
                raise UserError(f"--local-tokens {args.local_tokens} is too small: use at least 200")
            if args.local_tokens > s.n_ctx - 500:
                raise UserError(f"--local-tokens {args.local_tokens} does not fit the {s.n_ctx}-token window with "
                                f"the question and answer: use at most {s.n_ctx - 500}")
            s.local_context_tokens = args.local_tokens
    if args.command in ("index", "estimate"):
        if args.ray_address is not None and args.executor != "ray":
            raise UserError(f"--ray-address {args.ray_address} needs --executor ray")
        if args.executor == "ray":
            from slmgraph.indexing.executors.raypool import import_ray

            import_ray(local=args.ray_address is None)  # one line naming the extra when Ray is missing, before the model loads
        s.executor, s.ray_address = args.executor, args.ray_address
        s.chunk_size, s.chunk_overlap = args.chunk_size, args.chunk_overlap
        if s.chunk_size < 50 or s.chunk_size > s.n_ctx // 3:
            raise UserError(f"--chunk-size {s.chunk_size} must be between 50 and a third of the window "
                            f"({s.n_ctx // 3} tokens with --n-ctx {s.n_ctx})")
        if not 0 <= s.chunk_overlap < s.chunk_size:
            raise UserError(f"--chunk-overlap {s.chunk_overlap} must be >= 0 and smaller than --chunk-size")
        s.extractor = args.extractor
        s.ner_model = args.ner_model.strip() or "auto"
        if args.max_candidates is not None and args.max_candidates < 1:
            raise UserError(f"--max-candidates {args.max_candidates} must be at least 1")
        s.max_candidates = args.max_candidates
        try:
            s.choices = args.choices
        except UserError:
            raise UserError(f"--choices {args.choices!r}: use auto, none, or a comma list of keep, type, relate") \
                from None
        if s.ner_model.lower() not in ("auto", "none"):
            from slmgraph.indexing.stages.ner import load_pipeline

            load_pipeline(s.ner_model)  # a bad name fails before the model loads
        s.descriptions = args.descriptions
        s.cooccurrence = not args.no_cooccurrence
        s.concepts = not args.no_concepts
        if args.gleanings < 0:
            raise UserError(f"--gleanings {args.gleanings} must be 0 (off) or more")
        s.max_gleanings = args.gleanings
        s.constrain_names = not args.free_names
        s.grounding = not args.no_grounding
        res = args.resolution.strip().lower()
        if res in ("off", "none", "no"):
            s.resolution_threshold, s.resolution_rules = None, False
        elif res == "rules":
            s.resolution_threshold = None
        else:
            try:
                s.resolution_threshold = float(args.resolution)
            except ValueError:
                s.resolution_threshold = -1.0
            if not 0.0 < s.resolution_threshold <= 1.0:
                raise UserError(f"--resolution {args.resolution!r} must be a similarity in (0, 1], e.g. 0.9, "
                                "or 'rules' or 'off'")
        s.summaries = args.summaries
        s.reports = args.reports
        if args.no_reports:
            if args.reports != "auto":
                raise UserError(f"--no-reports and --reports {args.reports} contradict each other: pass one of them")
            s.reports = "none"
        if not 0 <= args.report_budget < float("inf"):
            raise UserError(f"--report-budget {args.report_budget} must be 0 (no budget) or more, e.g. 0.3")
        s.report_budget = args.report_budget
        s.claims = args.claims
        if args.entity_types is not None:
            types = tuple(dict.fromkeys(t.strip().lower() for t in args.entity_types.split(",") if t.strip()))
            bad = [t for t in types if not re.fullmatch(r"[\w][\w \-/&]*", t)]
            if bad:
                raise UserError(f"--entity-types: {bad[0]!r} is not a plain type name: use letters, digits, spaces "
                                "or hyphens, e.g. person,organization,location")
            if not types:
                raise UserError("--entity-types is empty: pass e.g. person,organization,location")
            s.entity_types = types
    if args.command == "query":
        s.answers, s.helpfulness, s.opening = args.answers, args.helpfulness, args.opening
        for opt, attr, low in (("budget", "lazy_budget", 1), ("followups", "drift_followups", 0),
                               ("depth", "drift_depth", 1), ("drift_tokens", "drift_tokens", 1)):
            v = getattr(args, opt, None)
            if v is None:
                continue
            if v < low:
                raise UserError(f"--{opt.replace('_', '-')} {v} must be at least {low}")
            setattr(s, attr, v)
    return s


def _note(msg: str) -> None:
    """Print a one-line note on stderr above any progress bar (tqdm.write clears and redraws the bars)."""
    from tqdm import tqdm

    tqdm.write(msg, file=sys.stderr)
    sys.stderr.flush()


def _close_bars() -> None:
    """Close every open progress bar, so that an error line that follows starts a line of its own and no
    stale bar is drawn after it (a stage that fails leaves its bar open)."""
    from tqdm import tqdm

    for bar in list(getattr(tqdm, "_instances", ())):
        try:
            bar.close()
        except Exception:  # noqa: BLE001 - a bar that cannot redraw must not hide the error
            pass


def _typed_dests(argv: list[str]) -> set[str]:
    """argparse dests of the options the user typed in ``argv`` (parsed again with no defaults)."""
    ap = build_parser()
    sub = next(a for a in ap._actions if a.dest == "command")
    for p in sub.choices.values():
        for a in p._actions:
            if a.option_strings:
                a.default = argparse.SUPPRESS
    return set(vars(ap.parse_args(argv))) - {"command"}


def _configured_settings(args) -> Settings:
    """:func:`_settings` merged with the settings file (``--config`` or ``./slmgraph.toml``):
    typed flags win over the file, the file over the defaults. Sets ``args.sources``
    (``{field: "flag --x" | "file PATH" | "default"}``)."""
    from slmgraph.config.file import find, load, resolve, typed_from_flags

    s = _settings(args)
    path = find(getattr(args, "config", None))
    values = load(path) if path else {}
    s, args.sources = resolve(s, values, path, typed_from_flags(getattr(args, "typed", set())))
    if path and not getattr(args, "quiet", False) and not getattr(args, "json", False):
        print(f"slmgraph: settings from {path} (flags you typed override it)", file=sys.stderr)
    return s


def cmd_init(args) -> int:
    """``slmgraph init``: write a commented settings file (and optionally the prompts); returns 0."""
    from slmgraph.config.file import write_default

    path = write_default(args.dir, force=args.force, with_prompts=args.prompts)
    print(f"wrote {path}" + (f" and {path.parent / 'prompts'}/" if args.prompts else "")
          + ": edit it; 'slmgraph index' reads it from that folder, or pass --config")
    return 0


def _write_files(db: str, write: Callable) -> int:
    """Open the index ``db`` read-only, call ``write(store) -> [files]``, print each file; returns 0."""
    from slmgraph.store.db import Store

    store = Store(db, read_only=True)
    try:
        files = write(store)
    finally:
        store.close()
    for f in files:
        print(f)
    return 0


def cmd_export(args) -> int:
    """``slmgraph export``: write the index as GraphML or graphrag-shaped tables; returns 0."""
    from slmgraph.tools.export import export

    return _write_files(args.db, lambda store: export(store, args.out, args.format))


def _stage_bench_options(p) -> None:
    p.add_argument("--on-topic", type=int, default=None,
                   help="questions of the story answered, from the first (default 5)")
    p.add_argument("--off-topic", type=int, default=None,
                   help="off-topic questions answered, from the first (default 5)")
    p.add_argument("--p-yes", action="store_true",
                   help="also measure the model's P(yes) helpfulness signal against the embedding (slow)")
    p.add_argument("--claims", action="store_true",
                   help="also measure the claims stage (slow; no auto setting depends on it)")
    p.add_argument("--story-summaries", type=int, default=None,
                   help="element summaries the model writes on the story: those with the most descriptions "
                        "(default 8)")
    p.add_argument("--story-reports", type=int, default=None,
                   help="community reports the model writes on the story: the largest communities (default 4)")
    p.add_argument("--records", default=None,
                   help="folder of the capability records (default: $SLMGRAPH_RECORDS, else "
                        "~/.local/share/slmgraph/records)")


def _stage_bench(args, models: list, s: Settings, source: str) -> int:
    """Run :func:`slmgraph.eval.calibrate.run` for the bench and calibrate commands; prints the table."""
    from slmgraph.eval.calibrate import (
        GOLD_DOCS, OFF_TOPIC, ON_TOPIC, STORY_REPORTS, STORY_SUMMARIES, render, run, workload,
    )

    if args.records:
        os.environ["SLMGRAPH_RECORDS"] = str(Path(args.records).expanduser())
    wl = workload(GOLD_DOCS if args.gold_docs is None else args.gold_docs,
                  ON_TOPIC if args.on_topic is None else args.on_topic,
                  OFF_TOPIC if args.off_topic is None else args.off_topic, args.gold,
                  STORY_SUMMARIES if args.story_summaries is None else args.story_summaries,
                  STORY_REPORTS if args.story_reports is None else args.story_reports)
    res = run(models, args.out, s, say=_say(args.json), wl=wl, p_yes=args.p_yes, claims=args.claims,
              source=source)
    print(json.dumps(res, indent=2) if args.json else render(res) + "\nwrote " + ", ".join(res["files"])
          + "\ncapability records: " + ", ".join(res["records"]))
    return 0


def cmd_calibrate(args) -> int:
    """``slmgraph calibrate MODEL``: the stage bench of one model; writes its capability record."""
    s = Settings()
    if args.threads is not None:
        if args.threads < 1:
            raise UserError(f"--threads {args.threads} must be at least 1")
        s.n_threads, s.threads_explicit = args.threads, True
    return _stage_bench(args, [None if args.model.strip().lower() == "bundled" else args.model], s, "calibrate")


def cmd_bench(args) -> int:
    """``slmgraph bench``: the stage bench of every model (or, with --corpus, every model through that
    corpus); prints one table; returns 0."""
    from slmgraph.eval.bench import GOLD_DOCS, render, run_bench

    models = [None] if args.models is None else [
        None if m.strip().lower() == "bundled" else m.strip() for m in args.models.split(",") if m.strip()]
    if not models:
        raise UserError("--models is empty: pass GGUF files separated by commas, e.g. a.gguf,b.gguf")
    s = Settings()
    if args.threads is not None:
        if args.threads < 1:
            raise UserError(f"--threads {args.threads} must be at least 1")
        s.n_threads, s.threads_explicit = args.threads, True
    if args.corpus is None and args.questions is None and args.offtopic is None:
        return _stage_bench(args, models, s, "bench")
    for flag, v in (("--on-topic", args.on_topic), ("--off-topic", args.off_topic), ("--p-yes", args.p_yes or None),
                    ("--story-summaries", args.story_summaries), ("--story-reports", args.story_reports)):
        if v is not None:  # no silent no-op: the corpus bench answers every question of its files
            raise UserError(f"{flag} belongs to the stage bench, which --corpus, --questions and --offtopic replace "
                            "by the corpus bench: drop one or the other")
    if args.workers is not None:
        if args.workers < 1:
            raise UserError(f"--workers {args.workers} must be at least 1")
        s.workers = args.workers
    res = run_bench(models, args.corpus, args.out, s, say=_say(args.json), gold=args.gold,
                    gold_docs=GOLD_DOCS if args.gold_docs is None else args.gold_docs, questions=args.questions,
                    offtopic=args.offtopic)
    print(json.dumps(res, indent=2) if args.json else render(res) + "\nwrote " + ", ".join(res["files"]))
    return 0


def cmd_prompt_tune(args) -> int:
    """``slmgraph prompt-tune``: a prompts folder with a few-shot example from the corpus; returns 0."""
    from slmgraph.indexing.stages.ingest import read_documents
    from slmgraph.model.backend import load_model
    from slmgraph.model.client import ModelClient
    from slmgraph.tools.prompt_tune import prompt_tune
    from slmgraph.store.db import new_run_id

    s = Settings()
    if args.model is not None:
        if not args.model.strip():
            raise UserError("--model is empty: pass a .gguf file, or leave the option out for the bundled model")
        s.model_path = args.model
    if args.entity_types is not None:
        types = tuple(dict.fromkeys(t.strip().lower() for t in args.entity_types.split(",") if t.strip()))
        bad = [t for t in types if not re.fullmatch(r"[\w][\w \-/&]*", t)]
        if bad or not types:
            raise UserError(f"--entity-types {args.entity_types!r}: pass plain type names, e.g. "
                            "person,organization,location")
        s.entity_types = types
    read_documents(args.input)  # a bad input fails before the model loads
    model = load_model(s.model_path, s.n_ctx, s.n_threads, s.seed, s.threads_explicit)
    res = prompt_tune(args.input, args.out, ModelClient(model, None, new_run_id()), s, force=args.force)
    print(f"example passage: {res['passage']}")
    print("names: " + "; ".join(f"{e['name']} ({e['type']})" for e in res["entities"]))
    print(f"wrote {len(res['files'])} prompt files to {res['out']}: review the example in extract_system.txt and "
          f"extract_example_*.txt, then pass --prompts {res['out']} to 'slmgraph index'")
    return 0


def cmd_picture(args) -> int:
    """``slmgraph picture``: write the community hierarchy as HTML and PNG; returns 0."""
    from slmgraph.tools.picture import picture

    return _write_files(args.db, lambda store: picture(store, args.out, args.png))


def _say(quiet: bool):
    return (lambda msg: None) if quiet else _note


class _NoteHandler(logging.Handler):
    """Logging records as notes above the progress bars (not inside a bar's line)."""

    def emit(self, record: logging.LogRecord) -> None:  # noqa: D102 - logging API
        try:
            _note(self.format(record))
        except Exception:  # noqa: BLE001 - logging must never raise
            self.handleError(record)


#: Exit status of an ``index`` run that finished but could not read some files or folders of its input
#: (what the index held for them is kept): the index is usable and partial.
PARTIAL = 3


def cmd_index(args) -> int:
    """``slmgraph index``: run the pipeline on ``args.input`` into ``args.db``; returns 0, or :data:`PARTIAL`
    when files or folders of the input could not be read."""
    import shlex

    from slmgraph.indexing.pipeline import run_index

    s = _configured_settings(args)
    out = run_index(args.input, args.db, s, replace=args.replace, progress=not args.quiet, say=_say(args.quiet),
                    wait=args.wait, sources=getattr(args, "sources", None))
    basic = "" if out.get("graph", {}).get("entities", 1) else " --method basic"
    print(f"indexed into {args.db}: ask with  slmgraph query --db {shlex.quote(str(args.db))}{basic} "
          "\"your question\"")
    unread = out.get("unreadable") or []
    if unread:
        n = len(unread)
        print(f"slmgraph: warning: the index is partial: {n} file{'s' if n > 1 else ''} or folder{'s' if n > 1 else ''} "
              f"of the input could not be read: {'; '.join(unread[:3])}{'; ...' if n > 3 else ''}; what the index "
              f"held for {'them' if n > 1 else 'it'} is kept: make {'them' if n > 1 else 'it'} readable (or remove "
              f"{'them' if n > 1 else 'it'}) and run the same command again", file=sys.stderr)
        return PARTIAL
    return 0


def read_question(args) -> str:
    """The question of ``slmgraph query``: the argument, standard input for ``-``, or ``--question-file``.

    Raises:
        UserError: none or both given, an unreadable file, or an empty question.
    """
    qfile = getattr(args, "question_file", None)
    if qfile is not None and args.question is not None:
        raise UserError("pass the question either as an argument or with --question-file, not both")
    if qfile is not None:
        try:
            question = Path(qfile).expanduser().read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            why = getattr(exc, "strerror", None) or "not UTF-8 text"
            raise UserError(f"--question-file {qfile}: cannot read it ({why})") from None
    elif args.question == "-":
        question = sys.stdin.read()
    elif args.question is None:
        raise UserError("no question: pass it in quotes, '-' to read it from standard input, or --question-file FILE")
    else:
        question = args.question
    if not question.strip():
        raise UserError("the question is empty: pass a question in quotes")
    return question.strip()


def run_query(args, s: Settings) -> dict:
    """Answer ``args.question`` through :class:`slmgraph.api.Index` (the one query path, read-only); prints
    the answer."""
    from slmgraph.api import Index

    question = read_question(args)
    args.question = question
    quiet_out = args.quiet or args.json
    with Index(args.db, s, getattr(args, "sources", None) or {}, wait=getattr(args, "wait", 0.0) or 0.0,
               on_wait=None if args.quiet else _say(False)) as idx:
        stream = not args.json and sys.stdout.isatty()
        on_text = (lambda t: print(t, end="", flush=True)) if stream else None

        def on_route(method: str, reason: str) -> None:
            if not args.json:
                print(f"auto: {method} search, because {reason}", file=sys.stderr)

        # A bar's redraws are for a terminal: on a pipe or in a log they land among the answer's lines.
        progress = not quiet_out and sys.stderr.isatty()
        ans = idx.query(question, method=args.method, level=args.level, dynamic=getattr(args, "dynamic", False),
                        progress=progress, on_text=on_text, on_route=on_route,
                        on_note=None if quiet_out else (lambda n: print(f"slmgraph: {n}", file=sys.stderr)))
        if args.json:
            print(json.dumps(ans.to_dict(), indent=2, ensure_ascii=False))
        elif stream:
            # The streamed text is the model's own; its citations were checked afterwards.
            print()
            tail = ans.text.rsplit("\n\nSources:", 1)
            if len(tail) == 2:
                print("\nSources:" + tail[1])
            elif any(ans.citations.values()):
                print("\nChecked citations: " + "; ".join(f"{k} {', '.join(map(str, v))}"
                                                          for k, v in ans.citations.items() if v))
            removed = ans.details.get("removed_citations")  # {kind: [ids]} in every engine
            if removed and any(removed.values()):
                print("(citations of ids not in the index were removed: " + "; ".join(
                    f"{k} {', '.join(map(str, v))}" for k, v in removed.items() if v) + ")")
            _print_cost(ans)
        else:
            print(ans.text)
            _print_cost(ans)
        return ans.to_dict()


def _print_cost(ans) -> None:
    lvl = f", level {ans.level}" if ans.level is not None else ""
    print(f"\n[{ans.method} search{lvl}: {ans.model_calls} model calls, {ans.prompt_tokens} prompt + "
          f"{ans.completion_tokens} completion tokens, {ans.seconds:.1f} s]", file=sys.stderr)


def cmd_estimate(args) -> int:
    """``slmgraph estimate``: predict the tokens and wall-clock of indexing ``args.input``; returns 0."""
    import time as _time

    from slmgraph.tools.estimate import estimate, render
    from slmgraph.model.backend import load_model

    s = _configured_settings(args)
    if args.sample < 1:
        raise UserError(f"--sample {args.sample} must be at least 1")
    say = _say(args.quiet or args.json)
    from slmgraph.indexing.stages.ingest import read_documents
    from slmgraph.config.prompting import Prompts

    read_documents(args.input)  # a bad input folder fails before the model loads
    Prompts(s.prompts_dir)
    t0 = _time.perf_counter()
    # The model is needed even with --extractor nlp: it chunks the text and writes the reports.
    model = load_model(s.model_path, s.n_ctx, s.n_threads, s.seed, s.threads_explicit)
    load = _time.perf_counter() - t0
    est = estimate(args.input, s, model, sample=args.sample, progress=not (args.quiet or args.json), say=say)
    est["stages"] = {"load model": {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                                    "seconds": round(load, 1)}, **est["stages"]}
    est["total_seconds"] = round(est["total_seconds"] + load, 1)
    est["model"] = model.name
    print(json.dumps(est, indent=2) if args.json else render(est))
    return 0


def cmd_query(args) -> int:
    """``slmgraph query``: answer ``args.question`` with ``args.method``; returns 0."""
    run_query(args, _configured_settings(args))
    return 0


def cmd_stats(args) -> int:
    """``slmgraph stats``: print the index's figures (tables, levels, ledger); returns 0."""
    from slmgraph.tools.stats import collect, render
    from slmgraph.store.db import Store

    wait = getattr(args, "wait", 0.0) or 0.0
    if not (math.isfinite(wait) and wait >= 0):
        raise UserError(f"--wait {wait} must be a number of seconds >= 0")
    store = Store(args.db, read_only=True, wait=wait, on_wait=_say(False))
    try:
        figs = collect(store)
    finally:
        store.close()
    print(json.dumps(figs, indent=2) if args.json else render(figs, args.db))
    return 0


def cmd_demo(args) -> int:
    """``slmgraph demo``: index the bundled sample, ask ``args.question`` globally, print stats; returns 0."""
    from slmgraph.indexing.pipeline import run_index
    from slmgraph.samples import SAMPLE_DIR

    from slmgraph.store.db import Store

    s = _settings(args)
    say = _say(args.quiet)
    old_root, n_docs = Store.precheck(args.db)
    sample = str((SAMPLE_DIR / "dulce.txt").resolve())
    if old_root and old_root != sample and n_docs:
        raise UserError(f"{args.db} is an index of {old_root}; the demo would replace it: pass another --db")
    say(f"demo: indexing the bundled sample {SAMPLE_DIR / 'dulce.txt'} into {args.db}")
    run_index(SAMPLE_DIR / "dulce.txt", args.db, s, replace=True, progress=not args.quiet, say=say)
    print(f"\nQ: {args.question}\n")
    qargs = argparse.Namespace(question=args.question, db=args.db, method="global", level=0, json=False,
                               quiet=args.quiet, dynamic=False, question_file=None, wait=0.0)
    run_query(qargs, s)
    print()
    Store(args.db).close()  # merges the query's ledger rows (kept aside by the read-only query) for stats
    return cmd_stats(argparse.Namespace(db=args.db, json=False, wait=0.0))


def cmd_serve(args) -> int:
    """``slmgraph serve``: run the local web app on the loopback until interrupted; returns 0."""
    from slmgraph.web.serve import bind, import_web, serve

    import_web()  # one line naming the extra, before the model loads
    bind(args.host, args.port).close()  # a refused host or a taken port fails before the model loads
    serve(args.db, _configured_settings(args), host=args.host, port=args.port,
          say=lambda m: print(m, flush=True))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``slmgraph`` command; returns the exit status."""
    handler = _NoteHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args, extra = parser.parse_known_args(argv)
    if extra:  # reported by the subcommand's parser, so the hint names its --help
        parser.subcommands[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    args.typed = _typed_dests(argv)
    handlers = {"index": cmd_index, "estimate": cmd_estimate, "query": cmd_query, "stats": cmd_stats,
                "demo": cmd_demo, "init": cmd_init, "export": cmd_export,
                "picture": cmd_picture, "bench": cmd_bench, "calibrate": cmd_calibrate,
                "prompt-tune": cmd_prompt_tune, "serve": cmd_serve}
    if args.command in ("index", "estimate", "query", "demo", "bench", "calibrate", "prompt-tune", "serve"):
        from slmgraph.model.backend import install_log_filter

        install_log_filter()  # llama.cpp's notices logged as errors stay off stderr
    try:
        return handlers[args.command](args)
    except UserError as exc:
        _close_bars()
        print(f"slmgraph: error: {exc}", file=sys.stderr)
        return 2
    except (WorkerError, StorageError) as exc:
        _close_bars()
        print(f"slmgraph: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. 'slmgraph stats --json | head'
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except KeyboardInterrupt:
        return _interrupted(args.command)
    except Exception as exc:
        from slmgraph.store.failures import is_interrupt

        if not is_interrupt(exc):
            raise
        return _interrupted(args.command)


def _interrupted(command: str) -> int:
    """Print the one line of a Ctrl-C (KeyboardInterrupt, or DuckDB's form of it) and return its exit status."""
    _close_bars()
    if command == "serve":
        print("\nslmgraph serve: stopped.", file=sys.stderr)
        return 0
    if command in ("index", "demo"):
        print("\nslmgraph: interrupted. Finished work is saved in the index; run the same command again to "
              "resume.", file=sys.stderr)
    else:
        print("\nslmgraph: interrupted.", file=sys.stderr)
    return 130


if __name__ == "__main__":
    sys.exit(main())
