"""User-facing errors.

Anything a user can cause (a missing file, a wrong ``--db``, an empty folder)
raises :class:`UserError`; the CLI prints its message as one line and exits
with status 2, never a traceback.
"""


class UserError(Exception):
    """A mistake in the user's input, with a one-line message naming the thing
    and the remedy (e.g. ``"model file /x.gguf not found: pass --model PATH"``)."""


class ModelOutputError(Exception):
    """The model produced output that could not be used even after repair."""


class StorageError(Exception):
    """A write to the index failed (disk full, I/O error): the message is one line
    naming the file, the free space and the remedy. What was committed before is
    kept (in the ``.duckdb`` file and its ``.wal``); the same command resumes."""


class GrammarError(ValueError):
    """llama.cpp could not build a grammar for a JSON schema (the message says why). The caller records
    the text unit it was for as failed, with this reason, and goes on."""


class IndexBusy(UserError):
    """The index is held by another process (an ``index`` run writing it, or a reader while
    this process would write): the message is the one line :class:`UserError` gives, ``what`` the part of
    it that names the file and its holder, without the command line's remedy (for other front ends)."""

    def __init__(self, message: str, what: str = ""):
        super().__init__(message)
        self.what = what or message


#: Characters of a value the user gave (a name, a question, an option's value) that an error or answer line
#: quotes; a longer value is cut there and ends in "…", so a 10,000-character name keeps the line readable.
ECHO_CHARS = 80


def echo(value, limit: int = ECHO_CHARS) -> str:
    """``value`` as a one-line message quotes it: a str as it is, anything else as its ``repr``, cut to its
    first ``limit`` characters followed by "…" when longer (str)."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def echo_repr(value, limit: int = ECHO_CHARS) -> str:
    """``repr(value)`` as a one-line message quotes it (the ``!r`` of an f-string): a str longer than ``limit``
    characters is cut to them and ends in "…" inside its quotes (``'Zorbl…'``); any other value's repr is cut
    as :func:`echo` cuts it (str)."""
    if isinstance(value, str):
        return repr(value) if len(value) <= limit else repr(value[:limit] + "…")
    return echo(value, limit)
