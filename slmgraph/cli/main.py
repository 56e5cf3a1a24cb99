"""Command line: ``slmgraph init | index | estimate | query | stats | export | picture | serve | bench | calibrate | prompt-tune | demo``.

Argument parsing is the standard library's argparse. Every user mistake is
reported as one line ``slmgraph: error: ...`` with exit status 2; a failed write
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
import logging
import os
import sys

from slmgraph.cli.commands import COMMANDS, close_bars, note
from slmgraph.cli.parser import build_parser, typed_dests
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
    args, extra = parser.parse_known_args(argv)
    if extra:  # reported by the subcommand's parser, so the hint names its --help
        parser.subcommands[args.command].error(f"unrecognized arguments: {echo(' '.join(extra))}")
    args.typed = typed_dests(argv)
    if args.command in ("index", "estimate", "query", "demo", "bench", "calibrate", "prompt-tune", "serve"):
        from slmgraph.model.llama_log import install_log_filter

        install_log_filter()  # llama.cpp's notices logged as errors stay off stderr
    try:
        return COMMANDS[args.command](args)
    except UserError as exc:
        close_bars()
        print(f"slmgraph: error: {exc}", file=sys.stderr)
        return 2
    except (WorkerError, StorageError) as exc:
        close_bars()
        print(f"slmgraph: error: {exc}", file=sys.stderr)
        return 1
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
        close_bars()
        print(f"slmgraph: error: path {echo(str(exc.filename))} is too long for the file system "
              f"({exc.strerror}): pass a shorter path", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return _leave(_interrupted(args.command), entry=entry)
    except Exception as exc:
        from slmgraph.store.failures import is_interrupt

        if not is_interrupt(exc):
            raise
        return _leave(_interrupted(args.command), entry=entry)


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
