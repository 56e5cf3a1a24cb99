"""The parsed flags as :class:`slmgraph.config.settings.Settings` (one concern): each value checked, a
mistake reported as one :class:`slmgraph.errors.UserError` line naming the flag, then merged with the
settings file."""

from __future__ import annotations

import math
import re
import sys

from slmgraph.config.settings import CHOICES, Settings, physical_cores
from slmgraph.errors import UserError, echo_repr


def settings_from_args(args) -> Settings:
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
            raise UserError(f"--local-shares {echo_repr(args.local_shares)} must be four non-negative numbers, "
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
            # name the default when the user never typed the overlap: the remedy is then a flag they have not seen
            given = "chunk_overlap" in getattr(args, "typed", set())
            raise UserError(f"--chunk-overlap {s.chunk_overlap}{'' if given else ' (the default)'} must be >= 0 and "
                            f"smaller than --chunk-size {s.chunk_size}: pass --chunk-overlap "
                            f"{max(0, s.chunk_size // 10)} (a tenth of the chunk) or a larger --chunk-size")
        s.extractor = args.extractor
        s.ner_model = args.ner_model.strip() or "auto"
        if args.max_candidates is not None and args.max_candidates < 1:
            raise UserError(f"--max-candidates {args.max_candidates} must be at least 1")
        s.max_candidates = args.max_candidates
        try:
            s.choices = args.choices
        except UserError:
            raise UserError(f"--choices {echo_repr(args.choices)}: use auto, none, or a comma list of "
                            f"{', '.join(CHOICES)}") from None
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
                raise UserError(f"--resolution {echo_repr(args.resolution)} must be a similarity in (0, 1], e.g. 0.9, "
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
                raise UserError(f"--entity-types: {echo_repr(bad[0])} is not a plain type name: use letters, digits, "
                                "spaces or hyphens, e.g. person,organization,location")
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


def configured_settings(args) -> Settings:
    """:func:`settings_from_args` merged with the settings file (``--config`` or ``./slmgraph.toml``):
    typed flags win over the file, the file over the defaults. Sets ``args.sources``
    (``{field: "flag --x" | "file PATH" | "default"}``)."""
    from slmgraph.config.file import find, load, resolve, typed_from_flags

    s = settings_from_args(args)
    path = find(getattr(args, "config", None))
    values = load(path) if path else {}
    s, args.sources = resolve(s, values, path, typed_from_flags(getattr(args, "typed", set())))
    if path and not getattr(args, "quiet", False) and not getattr(args, "json", False):
        print(f"slmgraph: settings from {path} (flags you typed override it)", file=sys.stderr)
    return s
