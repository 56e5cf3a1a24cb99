"""Command line: ``slmgraph init | index | estimate | query | stats | export | picture | serve | bench | calibrate | prompt-tune | demo``.

Argument parsing is the standard library's argparse. Every user mistake is
reported as one line ``slmgraph: error: ...`` with exit status 2 (with ``--json``, also as ``{"error": ...}``
on standard output); a failed write
(disk full) with 1; an ``index`` run that finished without reading some files or
folders of its input (kept as they were indexed) with 3; Ctrl-C exits with 130
and says how to resume.

The parser is :mod:`slmgraph.cli.parser`, the flags' checks :mod:`slmgraph.cli.flags`, the subcommands
:mod:`slmgraph.cli.commands`; this module holds the entry point (the ``slmgraph`` console script and
``python -m slmgraph.cli.main``) and its error handling.
"""

from __future__ import annotations

import atexit
import errno
import json
import logging
import os
import sys

from slmgraph.cli.commands import COMMANDS, close_bars, note
from slmgraph.cli.parser import UsageExit, build_parser, typed_dests
from slmgraph.errors import StorageError, UserError, echo
from slmgraph.indexing.executors.batch import WorkerError


class _NoteHandler(logging.Handler):
    """Logging records as notes above the progress bars (not inside a bar's line)."""

    def emit(self, record: logging.LogRecord) -> None:  # noqa: D102 - logging API
        try:
            note(self.format(record))
        except Exception:  # noqa: BLE001 - logging must never raise
            self.handleError(record)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``slmgraph`` command; returns the exit status."""
    handler = _NoteHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    parser = build_parser()
    entry = argv is None
    argv = sys.argv[1:] if entry else list(argv)
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:  # reported by the subcommand's parser, so the hint names its --help
            parser.subcommands[args.command].error(f"unrecognized arguments: {echo(' '.join(extra))}")
    except UsageExit as exc:
        if _json_asked(parser, argv):
            _json_error(exc.message)
        raise
    args.typed = typed_dests(argv)
    if args.command in ("index", "estimate", "query", "demo", "bench", "calibrate", "prompt-tune", "serve"):
        from slmgraph.model.llama_log import install_log_filter

        install_log_filter()  # llama.cpp's notices logged as errors stay off stderr
    as_json = bool(getattr(args, "json", False))
    try:
        return COMMANDS[args.command](args)
    except UserError as exc:
        return _fail(str(exc), 2, as_json)
    except (WorkerError, StorageError) as exc:
        return _fail(str(exc), 1, as_json)
    except BrokenPipeError:  # e.g. 'slmgraph stats --json | head'
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            raise
        # A path argument the file system cannot look up (an input folder, --out): one line, not a traceback.
        return _fail(f"path {echo(str(exc.filename))} is too long for the file system ({exc.strerror}): pass a "
                     "shorter path", 2, as_json)
    except KeyboardInterrupt:
        return _leave(_interrupted(args.command), entry=entry)
    except Exception as exc:
        from slmgraph.store.failures import is_interrupt

        if not is_interrupt(exc):
            raise
        return _leave(_interrupted(args.command), entry=entry)


def _fail(message: str, status: int, as_json: bool) -> int:
    """Report an error as the line ``slmgraph: error: <message>`` on standard error and, for a command run
    with ``--json``, as the object ``{"error": "<message>"}`` on standard output too (the form ``slmgraph
    serve`` answers errors in), so a script reading the output gets JSON; returns ``status``."""
    close_bars()
    print(f"slmgraph: error: {message}", file=sys.stderr)
    if as_json:
        _json_error(message)
    return status


def _json_error(message: str) -> None:
    print(json.dumps({"error": message}, ensure_ascii=False), flush=True)


def _json_asked(parser, argv: list[str]) -> bool:
    """True when ``argv`` names a subcommand that has ``--json`` and passes it (before any ``--``)."""
    argv = argv[:argv.index("--")] if "--" in argv else argv
    command = next((a for a in argv if not a.startswith("-")), None)
    sub = parser.subcommands.get(command)
    return "--json" in argv and sub is not None and "--json" in sub._option_string_actions


def _leave(status: int, entry: bool) -> int:
    """``status``, or, when ``main`` is the process's entry point (``argv`` not given), the process ended
    with it at once: output flushed, ``atexit`` handlers run, interpreter finalization skipped."""
    if not entry:
        return status
    # A worker thread still inside torch's native code (the embed-ahead thread past its grace, an intra-op pool)
    # aborts finalization with "terminate called"; the index is closed and committed by now.
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    atexit._run_exitfuncs()
    os._exit(status)


def _interrupted(command: str) -> int:
    """Print the one line of a Ctrl-C (KeyboardInterrupt, or DuckDB's form of it) and return its exit status."""
    close_bars()
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
