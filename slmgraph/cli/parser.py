"""The command line's grammar (one concern): the argparse parser of every subcommand and its options.

A mode option's choices and default are those of its :class:`slmgraph.config.settings.Settings` field
(the field's :class:`~slmgraph.config.settings.Mode` enum), so a new mode value is offered without a
second list here; ``--method`` offers :class:`~slmgraph.config.settings.Method`.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from enum import Enum

from slmgraph import __version__
from slmgraph.config.settings import CHOICES, Method, Reports, Settings, physical_cores
from slmgraph.errors import ECHO_CHARS, echo_repr

DEMO_QUESTION = "What are the main themes of this story?"


def _values(kind: type[Enum], *without: Enum) -> tuple[str, ...]:
    """The values of the enum ``kind`` but ``without``, in declaration order (argparse ``choices``)."""
    return tuple(m.value for m in kind if m not in without)


def _mode(field: str, *without: Enum) -> dict:
    """``choices`` and ``default`` of the option of the mode setting ``field`` (its enum's values but
    ``without``, and the field's default)."""
    f = next(f for f in dataclasses.fields(Settings) if f.name == field)
    return {"choices": _values(f.metadata["mode"], *without), "default": f.default.value}


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


def _follow_links_option(p) -> None:
    p.add_argument("--follow-links", action="store_true",
                   help="read files and folders that symbolic links in the input lead to outside it (default: "
                        "each such link is named in a warning and not read)")


def _wait_option(p: argparse.ArgumentParser, holder: str) -> None:
    p.add_argument("--wait", type=float, default=0.0, metavar="SECONDS",
                   help=f"while {holder} holds the index, wait up to SECONDS for it (default 0: refuse at once)")


def _index_options(p: argparse.ArgumentParser) -> None:
    """Options shared by ``index`` and ``estimate`` (what the index will contain and how it is built)."""
    p.add_argument("--chunk-size", type=int, default=600, help="text unit size in model tokens (default 600)")
    p.add_argument("--chunk-overlap", type=int, default=100, help="overlap of text units in tokens (default 100)")
    p.add_argument("--extractor", **_mode("extractor"),
                   help="llm: the model types and relates candidate names (default); nlp: no model calls")
    p.add_argument("--ner-model", default="auto",
                   help="spaCy NER pipeline of the candidate pass: auto (the installed English small pipeline), "
                        "none (capitalised runs only), or a pipeline's package name or path")
    p.add_argument("--max-candidates", type=int, default=None,
                   help="candidate names per text unit (default 20 when the model reads them, 60 on the LLM-free "
                        "route); more are ranked, left out, counted and warned of")
    p.add_argument("--choices", default="auto",
                   help="model decisions by token probability during extraction: auto (those that beat the "
                        f"LLM-free choice on the gold benchmark), none, or a comma list of {','.join(CHOICES)}")
    p.add_argument("--descriptions", **_mode("descriptions"),
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
    p.add_argument("--summaries", **_mode("summaries"),
                   help="who summarises several descriptions of one entity: the model, a join, or auto (model if >= 1B)")
    p.add_argument("--reports", **_mode("reports", Reports.NONE),
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
    p.add_argument("--executor", **_mode("executor"),
                   help="where extraction, report writing and embedding run: local worker processes (default) or Ray actors "
                        "(pip install 'slmgraph[ray]')")
    p.add_argument("--ray-address", default=None,
                   help="with --executor ray: the Ray cluster to join (e.g. HEAD:6379 or auto; "
                        "default: start a local Ray instance)")


#: A quoted value in an argparse message longer than :data:`slmgraph.errors.ECHO_CHARS`.
_LONG_QUOTE = re.compile(r"'([^'\n]{%d,})'" % (ECHO_CHARS + 1))


class UsageExit(SystemExit):
    """Exit status 2 of a command line the parser refused; ``message`` is its error, already printed as the
    line ``slmgraph: error: ...`` on standard error."""

    def __init__(self, message: str):
        super().__init__(2)
        self.message = message


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``slmgraph: error: ...`` and exit status 2 (no usage dump), raised as
    :class:`UsageExit`."""

    def error(self, message: str):  # noqa: D102 - argparse API
        sub = self.prog.split(" ", 1)[1] + " " if " " in self.prog else ""
        # argparse quotes the value it refused in full ("invalid choice: 'ZZZ…'"): a long one is cut.
        message = _LONG_QUOTE.sub(lambda m: echo_repr(m.group(1)), message) + f" (see 'slmgraph {sub}--help')"
        self._print_message(f"slmgraph: error: {message}\n", sys.stderr)
        raise UsageExit(message)


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
    _follow_links_option(p)
    _wait_option(p, "another process (an index run, a query or stats)")

    p = sub.add_parser("estimate", help="predict an index run's tokens and wall-clock from a short calibration run")
    p.add_argument("input", help="folder of .txt/.md files (read recursively) or one file")
    _common(p, db_required=False)
    _index_options(p)
    _follow_links_option(p)
    p.add_argument("--sample", type=int, default=8, help="text units extracted for real to calibrate (default 8)")
    p.add_argument("--json", action="store_true", help="print the estimate as JSON")

    p = sub.add_parser("query", help="ask a question of an index")
    p.add_argument("question", nargs="?", default=None,
                   help="the question in quotes, or - to read it from standard input")
    p.add_argument("--question-file", metavar="FILE", help="read the question from FILE (UTF-8 text)")
    _common(p)
    _wait_option(p, "an index run")
    p.add_argument("--method", choices=_values(Method), default=Method.GLOBAL.value,
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
    p.add_argument("--answers", **_mode("answers"),
                   help="who writes the answer: points copied from the data with citations and at most one grounded "
                        "model sentence (extractive), the model, or auto (extractive under 1B params)")
    p.add_argument("--opening", **_mode("opening"),
                   help="extractive answers: let the model write one opening sentence, kept only when grounded "
                        "(model), never (off), or auto (off under 1B params: the 135M model's did not help)")
    p.add_argument("--helpfulness", **_mode("helpfulness"),
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


def typed_dests(argv: list[str]) -> set[str]:
    """argparse dests of the options the user typed in ``argv`` (parsed again with no defaults)."""
    ap = build_parser()
    sub = next(a for a in ap._actions if a.dest == "command")
    for p in sub.choices.values():
        for a in p._actions:
            if a.option_strings:
                a.default = argparse.SUPPRESS
    return set(vars(ap.parse_args(argv))) - {"command"}
