"""What a failed DuckDB statement means to the user: a Ctrl-C, a failure of the file system (disk full),
or a value the database refused; and the one-line :class:`slmgraph.errors.StorageError` that says which."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb

from slmgraph.errors import StorageError


def is_interrupt(exc: BaseException) -> bool:
    """True when ``exc`` is DuckDB's form of a Ctrl-C: the ``RuntimeError("Query interrupted")`` its Python
    client raises when SIGINT arrives during a statement, or ``duckdb.InterruptException``."""
    return isinstance(exc, duckdb.InterruptException) or (
        type(exc) is RuntimeError and str(exc).startswith("Query interrupted"))


def is_storage_failure(exc: BaseException) -> bool:
    """True when a database error ``exc`` is the file system's (no space, an I/O error, a failed commit
    or checkpoint), False for one about the data (a value DuckDB cannot store, a constraint)."""
    if isinstance(exc, (duckdb.IOException, duckdb.FatalException, duckdb.TransactionException,
                        duckdb.OutOfMemoryException, OSError)):
        return True
    text = str(exc)
    return any(w in text for w in ("No space left", "Could not write", "Failed to commit", "checkpoint",
                                   "I/O error", "IO Error"))


def storage_failure(path: Path, exc: BaseException) -> StorageError:
    """The one-line error of a failed write or checkpoint ``exc`` of the index ``path`` (see
    :meth:`slmgraph.store.db.Store.storage_error`, which also handles a Ctrl-C)."""
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    for prefix in ("FATAL Error: ", "TransactionContext Error: ", "IO Error: ", "Failed to commit: ",
                   "Failed to create checkpoint because of error: "):
        msg = msg.replace(prefix, "")
    if not is_storage_failure(exc):
        return StorageError(
            f"writing index {path} failed ({msg}): a value the database refused, not a disk problem; the "
            "index is marked incomplete and nothing committed is lost; please report this line as a bug")
    try:
        free = shutil.disk_usage(path.resolve().parent).free
        room = f"{_human(free)} free on its file system"
    except OSError:
        room = "free space unknown"
    return StorageError(
        f"writing index {path} failed ({msg}); {room}: the index is marked incomplete and nothing "
        "committed is lost; free some space (or pick another --db) and run the same command again to resume")


def _human(n: int) -> str:
    """``n`` bytes as e.g. ``'160 KB'`` or ``'3.0 MB'`` (powers of 1024)."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}" if n < 10 * scale else f"{n // scale} {unit}"
    return f"{n} bytes"
