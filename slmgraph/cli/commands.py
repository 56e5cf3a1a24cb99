"""The subcommands (one concern): ``cmd_<name>(args) -> exit status`` for each verb of the command line,
and what they print (notes above the progress bars, answers, costs)."""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Callable

from slmgraph.cli.flags import configured_settings, settings_from_args
from slmgraph.config.settings import Settings
from slmgraph.errors import UserError, echo_repr


def note(msg: str) -> None:
    """Print a one-line note on stderr above any progress bar (tqdm.write clears and redraws the bars)."""
    from tqdm import tqdm

    tqdm.write(msg, file=sys.stderr)
    sys.stderr.flush()


def close_bars() -> None:
    """Close every open progress bar, so that an error line that follows starts a line of its own and no
    stale bar is drawn after it (a stage that fails leaves its bar open)."""
    from tqdm import tqdm

    for bar in list(getattr(tqdm, "_instances", ())):
        try:
            bar.close()
        except Exception:  # noqa: BLE001 - a bar that cannot redraw must not hide the error
            pass


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
    res = run(models, args.out, s, say=say_unless(args.json), wl=wl, p_yes=args.p_yes, claims=args.claims,
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
    res = run_bench(models, args.corpus, args.out, s, say=say_unless(args.json), gold=args.gold,
                    gold_docs=GOLD_DOCS if args.gold_docs is None else args.gold_docs, questions=args.questions,
                    offtopic=args.offtopic)
    print(json.dumps(res, indent=2) if args.json else render(res) + "\nwrote " + ", ".join(res["files"]))
    return 0


def cmd_prompt_tune(args) -> int:
    """``slmgraph prompt-tune``: a prompts folder with a few-shot example from the corpus; returns 0."""
    from slmgraph.indexing.stages.ingest_read import read_documents
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
            raise UserError(f"--entity-types {echo_repr(args.entity_types)}: pass plain type names, e.g. "
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


def say_unless(quiet: bool) -> Callable[[str], None]:
    """The ``say(msg)`` of a command: :func:`note`, or nothing when ``quiet``."""
    return (lambda msg: None) if quiet else note


#: Exit status of an ``index`` run that finished but could not read some files or folders of its input
#: (what the index held for them is kept): the index is usable and partial.
PARTIAL = 3


def cmd_index(args) -> int:
    """``slmgraph index``: run the pipeline on ``args.input`` into ``args.db``; returns 0, or :data:`PARTIAL`
    when files or folders of the input could not be read."""
    import shlex

    from slmgraph.indexing.pipeline import run_index

    s = configured_settings(args)
    out = run_index(args.input, args.db, s, replace=args.replace, follow_links=args.follow_links,
                    progress=not args.quiet, say=say_unless(args.quiet), warn=note,
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
        UserError: none or both given, an unreadable file, a question that is not UTF-8 text, or an empty
            question.
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
        try:
            question = sys.stdin.read()
        except UnicodeDecodeError:
            raise UserError("the question on standard input is not UTF-8 text: convert it, e.g. with iconv -t utf-8") from None
    elif args.question is None:
        raise UserError("no question: pass it in quotes, '-' to read it from standard input, or --question-file FILE")
    else:
        question = args.question
    try:
        # an argument or a stream decoded with surrogateescape keeps bytes no UTF-8 text holds
        question.encode("utf-8")
    except UnicodeEncodeError:
        raise UserError("the question holds bytes that are not UTF-8 text: write it in UTF-8 "
                        "(e.g. convert it with iconv -t utf-8)") from None
    if not question.strip():
        raise UserError("the question is empty: pass a question in quotes")
    if not re.search(r"\w", question):  # punctuation alone asks nothing
        raise UserError(f"the question {question.strip()!r} has no words: pass a question in quotes")
    return question.strip()


def run_query(args, s: Settings) -> dict:
    """Answer ``args.question`` through :class:`slmgraph.api.Index` (the one query path, read-only); prints
    the answer."""
    from slmgraph.api import Index

    question = read_question(args)
    args.question = question
    quiet_out = args.quiet or args.json
    with Index(args.db, s, getattr(args, "sources", None) or {}, wait=getattr(args, "wait", 0.0) or 0.0,
               on_wait=None if args.quiet else say_unless(False)) as idx:
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

    s = configured_settings(args)
    if args.sample < 1:
        raise UserError(f"--sample {args.sample} must be at least 1")
    say = say_unless(args.quiet or args.json)
    from slmgraph.indexing.stages.ingest_read import read_documents
    from slmgraph.config.prompting import Prompts

    read_documents(args.input)  # a bad input folder fails before the model loads
    Prompts(s.prompts_dir)
    t0 = _time.perf_counter()
    # The model is needed even with --extractor nlp: it chunks the text and writes the reports.
    model = load_model(s.model_path, s.n_ctx, s.n_threads, s.seed, s.threads_explicit)
    load = _time.perf_counter() - t0
    est = estimate(args.input, s, model, sample=args.sample, progress=not (args.quiet or args.json), say=say,
                   follow_links=args.follow_links)
    est["stages"] = {"load model": {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                                    "seconds": round(load, 1)}, **est["stages"]}
    est["total_seconds"] = round(est["total_seconds"] + load, 1)
    est["model"] = model.name
    print(json.dumps(est, indent=2) if args.json else render(est))
    return 0


def cmd_query(args) -> int:
    """``slmgraph query``: answer ``args.question`` with ``args.method``; returns 0."""
    run_query(args, configured_settings(args))
    return 0


def cmd_stats(args) -> int:
    """``slmgraph stats``: print the index's figures (tables, levels, ledger); returns 0."""
    from slmgraph.tools.stats import collect, render
    from slmgraph.store.db import Store

    wait = getattr(args, "wait", 0.0) or 0.0
    if not (math.isfinite(wait) and wait >= 0):
        raise UserError(f"--wait {wait} must be a number of seconds >= 0")
    store = Store(args.db, read_only=True, wait=wait, on_wait=say_unless(False))
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

    s = settings_from_args(args)
    say = say_unless(args.quiet)
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
    serve(args.db, configured_settings(args), host=args.host, port=args.port,
          say=lambda m: print(m, flush=True))
    return 0


#: Subcommand name -> its function.
COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "index": cmd_index, "estimate": cmd_estimate, "query": cmd_query, "stats": cmd_stats, "demo": cmd_demo,
    "init": cmd_init, "export": cmd_export, "picture": cmd_picture, "bench": cmd_bench, "calibrate": cmd_calibrate,
    "prompt-tune": cmd_prompt_tune, "serve": cmd_serve}
