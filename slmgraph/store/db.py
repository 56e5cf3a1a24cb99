"""The open index (one concern): :class:`Store`, one DuckDB file opened for writing or read-only.

Opening (creating the file, waiting for another process's lock, migrating an older file), ``meta``,
transactions, the model-call cache and ledger (kept aside by read-only processes and merged later),
checkpoints, compaction and the one-line errors of a full disk. The DDL is in
:mod:`slmgraph.store.schema`, the migration steps in :mod:`slmgraph.store.migrations`, the row types in
:mod:`slmgraph.store.rows`.

Stages read the previous stage's tables and write their own. The graph and
community stages write in one transaction each (DuckDB docs, "Transaction
Management"); extraction and claims commit each text unit, and reports each report a model
wrote, as they are made, so an interrupted run resumes where it stopped. The ``meta``
key ``complete`` is ``0`` from the start of an index run until its last stage
has finished, and queries refuse an incomplete index.
"""

from __future__ import annotations

import fcntl
import glob
import json
import logging
import os
import re
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, NamedTuple

import duckdb

from slmgraph.errors import IndexBusy, StorageError, UserError, echo
from slmgraph.store.failures import is_interrupt, storage_failure
from slmgraph.store.migrations import check_version, migrate
from slmgraph.store.schema import APP_ID, BUILDING, DERIVED_TABLES, OWN_TABLES, UNIT_RECORDS, table_ddl

#: Share of the index file that may be free blocks before an index run compacts it (:meth:`Store.compact`).
#: Rebuilding the graph, communities, reports and embeddings rewrites those tables; DuckDB reuses the
#: blocks the old rows held for later writes but never shrinks the file, so each rebuild can grow it by
#: the size of what it rewrote. Past this share the index is copied into a new file (one read and one
#: write of what it holds).
COMPACT_SHARE = 0.25
#: Free blocks below this many bytes are never worth a copy.
COMPACT_MIN_BYTES = 1 << 20


class Compaction(NamedTuple):
    """What :meth:`Store.compact` found: the file's ``size`` and ``free`` bytes before, and its size
    ``after`` (None when it was not compacted), ``reason`` when a compaction was tried and failed."""
    size: int
    free: int
    after: int | None = None
    reason: str | None = None


class Store:
    """An open slmgraph index (one DuckDB file).

    Concurrency (DuckDB docs, "Concurrency"): one process may open the file for
    writing, or any number of processes read-only, never both. Queries and
    ``stats`` open it read-only, so they run side by side; the ledger and cache
    rows a read-only store makes (``record_call``, ``cache_put``,
    ``record_stage``) are kept aside in a file ``<index>.pending-<id>.jsonl``
    beside the index (locked while its process runs) and merged into the index
    the next time it is opened for writing. A store that finds the file held
    by another process waits up to ``wait`` seconds, then refuses with one line.

    Args:
        path: the ``.duckdb`` file.
        create: create a new index if the file does not exist.
        read_only: open without write access (queries, stats).
        wait: seconds to wait for another process holding the file (0 = refuse at once).
        on_wait: called once with a one-line note when the store starts waiting.

    Raises:
        UserError: the file does not exist (and ``create`` is False), is not a
            DuckDB database, is a DuckDB database that is not a slmgraph index,
            is held by another process for longer than ``wait``, or was written by a newer
            slmgraph (a higher schema version).
        StorageError: creating or upgrading the file failed (disk full).
    """

    def __init__(self, path: str | Path, create: bool = False, read_only: bool = False, wait: float = 0.0,
                 on_wait: Callable[[str], None] | None = None, allow_unmade: bool = False):
        self.path = Path(path)
        self.unmade = False  #: read-only and ``allow_unmade``: the file has no index yet (closed at once)
        self._pending_file = None
        self._pending_lost: str | None = None  #: why rows of a read-only store could not be kept aside
        self._old_cache: bool | None = None
        self._pending_cache: dict[str, tuple[str, str, list[int] | None]] = {}
        if not str(path).strip():
            raise UserError("--db is empty: pass a file path such as index.duckdb")
        if not _exists(self.path):
            if not create:
                if self.path.parent and not self.path.parent.exists():
                    raise UserError(f"folder {self.path.parent} of --db {self.path} does not exist: check the path")
                raise UserError(
                    f"index {self.path} does not exist: run 'slmgraph index INPUT --db {self.path}' first"
                )
            if self.path.parent and not self.path.parent.exists():
                raise UserError(f"folder {self.path.parent} for --db does not exist: create it or pick another path")
            is_new = True
        else:
            if self.path.is_dir():
                raise UserError(f"--db {self.path} is a folder: pass a file path such as index.duckdb")
            is_new = False
        deadline = time.monotonic() + max(0.0, wait)
        err = ""
        while True:
            try:
                self.con = duckdb.connect(str(self.path), read_only=read_only and not is_new)
                break
            except (duckdb.IOException, duckdb.Error) as exc:
                msg = str(exc).splitlines()[0]
                if "lock" not in msg.lower():
                    err = msg
                    break
                pid = re.search(r"PID (\d+)", str(exc))
                pid = f"PID {pid.group(1)}, " if pid else ""
                holds = (f"being written by another process ({pid}such as an 'slmgraph index' run)" if read_only
                         else f"open in another process ({pid}such as an 'slmgraph index', 'query' or 'stats' run)")
                if time.monotonic() >= deadline:
                    what = f"index {self.path} is {holds}"
                    if wait > 0:
                        raise IndexBusy(f"index {self.path} is still {holds} after waiting {wait:g} s: run again "
                                        "when it has finished, or pass a longer --wait", what) from None
                    raise IndexBusy(f"{what}: run again when it has finished, or pass --wait SECONDS to wait for it",
                                    what) from None
                if on_wait is not None:
                    on_wait(f"index {self.path} is {holds}: waiting up to {wait:g} s for it to finish")
                    on_wait = None
                time.sleep(min(0.5, max(0.01, deadline - time.monotonic())))
        if not hasattr(self, "con"):
            msg = err
            if not is_new:
                raise UserError(f"{self.path} is not a DuckDB file: pass the .duckdb file 'slmgraph index' wrote, "
                                "or a new path to create one") \
                    from None
            raise UserError(f"cannot create the index {self.path} ({msg}): pick a writable path for --db") from None
        self.read_only = read_only and not is_new
        self._failed = False
        self._closed = False
        try:
            if is_new or self._unmade():
                if self.read_only:
                    self.con.close()
                    if allow_unmade:
                        self.unmade = True
                        return
                    raise UserError(f"index {self.path} has no slmgraph tables yet (its creation was interrupted): "
                                    f"run 'slmgraph index INPUT --db {self.path}' to create it")
                self._create()
            else:
                self._check_app()
                if not read_only:
                    migrate(self.con, self.transaction)
                    self.merge_pending()
        except duckdb.Error as exc:
            raise self.storage_error(exc) from None

    def _create(self) -> None:
        """Write the schema and the ``meta`` keys that make the file an index, in one transaction: a
        creation interrupted (Ctrl-C) leaves a file without tables, which :meth:`_unmade` recognises."""
        try:
            with self.transaction():
                migrate(self.con)
                self.set_meta("app", APP_ID)
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt) or is_interrupt(exc):
                self.con.close()
            raise

    def _unmade(self) -> bool:
        """True when the file holds no table but empty ones named as ours and no ``meta`` rows: a DuckDB
        file whose creation by slmgraph was interrupted (an older version wrote the schema table by table),
        or an empty one. A file with any other table, or any row, is not ours to initialise."""
        tables = self.con.execute(
            "SELECT table_schema, table_name FROM information_schema.tables WHERE table_catalog = current_database()"
        ).fetchall()
        if any(schema != "main" or name not in OWN_TABLES for schema, name in tables):
            return False
        return all(self.con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] == 0 for _, name in tables)

    # --- rows of read-only processes, kept aside -----------------------
    def _pending_write(self, kind: str, row: list) -> None:
        """Append one row of a read-only store to its side file (created and locked on first use)."""
        if self._pending_file is None:
            name = f"{self.path.name}.pending-{uuid.uuid4().hex[:12]}.jsonl"
            try:
                self._pending_file = open(self.path.with_name(name), "a", encoding="utf-8")
                fcntl.flock(self._pending_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # a read-only folder: the rows are not kept (the answer is unaffected)
                self._pending_file = False
        if self._pending_file:
            try:
                self._pending_file.write(json.dumps([kind, row], default=str) + "\n")
                self._pending_file.flush()
            except OSError as exc:
                self._pending_lost = str(exc)

    def pending_files(self) -> list[Path]:
        """Side files of read-only processes (``<index>.pending-<id>.jsonl``) not yet merged."""
        return sorted(self.path.parent.glob(f"{glob.escape(self.path.name)}.pending-*.jsonl"))

    def merge_pending(self) -> int:
        """Merge the side files of finished read-only processes into ``llm_calls``, ``llm_cache``, ``stage_runs``.

        A file still locked by its process is left for later. Each file is
        merged in one transaction that also records ``merged:<file name>`` in
        ``meta``, so a crash between the commit and the file's removal never
        merges it twice. Returns the number of rows merged.
        """
        n = 0
        for f in self.pending_files():
            try:
                fh = open(f, encoding="utf-8")
            except OSError:
                continue
            with fh:
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    continue  # its query is still running
                key = f"merged:{f.name}"
                if self.get_meta(key) is None:
                    rows = []
                    for line in fh:
                        try:
                            rows.append(json.loads(line))
                        except ValueError:
                            break  # a line cut short by a kill: the rest is lost, nothing else
                    with self.transaction():
                        for kind, row in rows:
                            if kind == "call":
                                self._insert_call(row)
                            elif kind == "cache":
                                self._insert_cache(*row)
                            elif kind == "stage":
                                self._insert_stage(row)
                        self.set_meta(key, str(len(rows)))
                    n += len(rows)
            try:
                f.unlink()
            except OSError:
                pass
        return n

    @staticmethod
    def precheck(path: str | Path, wait: float = 0.0, on_wait: Callable[[str], None] | None = None
                 ) -> tuple[str | None, int]:
        """Check ``--db`` before anything slow (model load) happens, without creating it.

        Returns:
            ``(input_root, n_documents)`` of an existing index, ``(None, 0)`` for a new path.

        Raises:
            UserError: as :class:`Store` would (a folder, a missing parent folder,
                not DuckDB, not a slmgraph index, in use by another process).
        """
        p = Path(path)
        if not str(path).strip():
            raise UserError("--db is empty: pass a file path such as index.duckdb")
        if not _exists(p):
            if p.parent and not p.parent.exists():
                raise UserError(f"folder {p.parent} for --db does not exist: create it or pick another path")
            return None, 0
        st = Store(p, read_only=True, wait=wait, on_wait=on_wait, allow_unmade=True)
        if st.unmade:
            return None, 0
        try:
            root = st.get_meta("input_root")
            return root, st.count("documents") if st.has_table("documents") else 0
        finally:
            st.close()

    def _check_app(self) -> None:
        try:
            row = self.con.execute("SELECT value FROM meta WHERE key = 'app'").fetchone()
        except duckdb.Error:
            row = None
        if not row or row[0] != APP_ID:
            self.con.close()
            raise UserError(
                f"{self.path} is a DuckDB file but not a slmgraph index: pass the file 'slmgraph index' wrote, "
                "or a new path to create one"
            )
        try:
            check_version(self.get_meta("schema_version"), self.path)
        except UserError:
            self.con.close()
            raise

    # --- meta -----------------------------------------------------------
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        """The value stored under ``key`` in ``meta``, or ``default``."""
        row = self.con.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        """Store ``value`` under ``key`` in ``meta`` (replacing any old value); an unchanged value is
        not written again (a no-op re-index writes as little as it can, ARCHITECTURE.md "Incremental runs")."""
        if self.get_meta(key) == value:
            return
        self.con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [key, value])

    # --- transactions ---------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Run a block in one transaction: all of it is committed or none."""
        self.con.execute("BEGIN TRANSACTION")
        try:
            yield self.con
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        else:
            self.con.execute("COMMIT")

    #: Tables an index run rebuilds aside (:meth:`stage_derived`): the derived stages' and the embeddings.
    STAGED = tuple(t for ts in DERIVED_TABLES.values() for t in ts) + ("embeddings",)

    def stage_derived(self, hidden_docs: list[str] | None = None) -> None:
        """From here on this connection reads and writes the derived tables and the embeddings in the schema
        :data:`slmgraph.store.schema.BUILDING`, each a copy of the index's own (``main``) one, so the
        index's tables stay those of the last complete build until :meth:`swap_derived`. The embeddings an
        interrupted run left there are kept (the embed stage reconciles them); the other tables are copied
        again.

        ``hidden_docs``: documents (ids) the build must not read though ``main`` keeps them until the swap
        (an edited document's old version, which the last complete build's tables still cite): this
        connection reads ``documents``, ``text_units`` and their records (:data:`UNIT_RECORDS`) through
        views of ``main``'s without them, so a write to those tables here fails rather than being lost."""
        hidden = sorted(hidden_docs or ())
        with self.transaction() as con:
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {BUILDING}")
            for table in ("documents", "text_units") + UNIT_RECORDS:
                con.execute(f"DROP VIEW IF EXISTS {BUILDING}.{table}")
            kept = self.con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND "
                                    "table_name = 'embeddings'", [BUILDING]).fetchone()[0]
            for table in self.STAGED:
                if table == "embeddings" and kept:
                    continue
                con.execute(f"DROP TABLE IF EXISTS {BUILDING}.{table}")
                con.execute(table_ddl(table, BUILDING))
                con.execute(f"INSERT INTO {BUILDING}.{table} BY NAME SELECT * FROM main.{table}")
            if hidden:
                ids = ", ".join("'" + d.replace("'", "''") + "'" for d in hidden)
                con.execute(f"CREATE VIEW {BUILDING}.documents AS SELECT * FROM main.documents "
                            f"WHERE doc_id NOT IN ({ids})")
                con.execute(f"CREATE VIEW {BUILDING}.text_units AS SELECT * FROM main.text_units "
                            f"WHERE doc_id NOT IN ({ids})")
                for table in UNIT_RECORDS:
                    con.execute(f"CREATE VIEW {BUILDING}.{table} AS SELECT * FROM main.{table} WHERE chunk_id "
                                f"NOT IN (SELECT chunk_id FROM main.text_units WHERE doc_id IN ({ids}))")
        self.con.execute(f"SET search_path = '{BUILDING},main'")

    def swap_derived(self, also: Callable | None = None) -> None:
        """Replace the index's derived tables and embeddings by those :meth:`stage_derived` built, in one
        transaction, and drop the building schema; this connection reads ``main`` again. ``also(con)`` runs
        in the same transaction, after the swap (removing what the new build no longer cites)."""
        self.con.execute("SET search_path = 'main'")
        with self.transaction() as con:
            for table in self.STAGED:
                con.execute(f"DELETE FROM main.{table}")
                con.execute(f"INSERT INTO main.{table} BY NAME SELECT * FROM {BUILDING}.{table}")
            if also is not None:
                also(con)
        self.con.execute(f"DROP SCHEMA IF EXISTS {BUILDING} CASCADE")

    def clear(self, stage: str) -> None:
        """Delete the rows of a derived stage (``graph``, ``communities``, ``reports``)."""
        for table in DERIVED_TABLES[stage]:
            self.con.execute(f"DELETE FROM {table}")

    # --- cache and ledger ----------------------------------------------
    def cache_get(self, key: str) -> tuple[str, str, list[int] | None] | None:
        """``(output, finish_reason, generated token ids or None)`` of a cached model call, or None."""
        if key in self._pending_cache:
            return self._pending_cache[key]
        if self._old_cache is None:  # an index of an older version, opened read-only, may lack the column
            self._old_cache = self.read_only and not self.has_column("llm_cache", "tokens")
        tokens = "NULL" if self._old_cache else "tokens"
        row = self.con.execute(f"SELECT output, finish_reason, {tokens} FROM llm_cache WHERE key = ?", [key]).fetchone()
        return (row[0], row[1], json.loads(row[2]) if row[2] else None) if row else None

    def cache_put(self, key: str, stage: str, output: str, finish_reason: str,
                  tokens: list[int] | None = None) -> None:
        """Remember the output of a model call (and its token ids) under its content key
        (a read-only store keeps it aside, see the class doc)."""
        if self.read_only:
            self._pending_cache[key] = (output, finish_reason, tokens)
            self._pending_write("cache", [key, stage, output, finish_reason, tokens])
            return
        self._insert_cache(key, stage, output, finish_reason, tokens)

    def _insert_cache(self, key, stage, output, finish_reason, tokens) -> None:
        self.con.execute(
            "INSERT OR REPLACE INTO llm_cache (key, stage, output, finish_reason, tokens) VALUES (?, ?, ?, ?, ?)",
            [key, stage, output, finish_reason, json.dumps(tokens) if tokens is not None else None]
        )

    def record_call(self, run_id: str, stage: str, worker: int, model: str, prompt_tokens: int,
                    cached_tokens: int, completion_tokens: int, seconds: float, finish_reason: str,
                    prompt_seconds: float | None = None, key: str | None = None,
                    output: str | None = None) -> None:
        """Append one row to the ``llm_calls`` ledger (tokens; seconds of wall-clock); a read-only
        store keeps it aside (see the class doc).

        ``key`` is the call's content key (the ``llm_cache`` key it is or would
        be cached under) and ``output`` what it produced, so an answer can be
        traced back to its prompts (ARCHITECTURE.md "The cache key and the ledger").
        """
        row = [run_id, stage, worker, model, prompt_tokens, cached_tokens, completion_tokens, seconds,
               finish_reason, prompt_seconds, key, output, time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())]
        if self.read_only:
            self._pending_write("call", row)
            return
        self._insert_call(row)

    def _insert_call(self, row: list) -> None:
        self.con.execute(
            "INSERT INTO llm_calls (run_id, stage, worker, model, prompt_tokens, cached_tokens, "
            "completion_tokens, seconds, finish_reason, prompt_seconds, key, output, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)

    def record_stage(self, run_id: str, stage: str, seconds: float, items: int, note: str = "") -> None:
        """Append one row to ``stage_runs`` (wall-clock of a whole stage); a read-only store keeps it aside."""
        row = [run_id, stage, seconds, items, note, time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())]
        if self.read_only:
            self._pending_write("stage", row)
            return
        self._insert_stage(row)

    def _insert_stage(self, row: list) -> None:
        self.con.execute("INSERT INTO stage_runs (run_id, stage, seconds, items, note, created_at) "
                         "VALUES (?, ?, ?, ?, ?, ?)", row)

    def count(self, table: str) -> int:
        """Number of rows in ``table``."""
        return self.con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]

    def has_table(self, table: str) -> bool:
        """True when the index has ``table`` (one written by an older version,
        opened read-only, may lack newer tables)."""
        return bool(self.con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?",
                                     [table]).fetchone()[0])

    def has_column(self, table: str, column: str) -> bool:
        """True when ``table`` has ``column`` (an older index opened read-only may lack it)."""
        return bool(self.con.execute("SELECT count(*) FROM duckdb_columns() WHERE table_name = ? AND column_name = ?",
                                     [table, column]).fetchone()[0])

    def has_unit_numbers(self) -> bool:
        """True when every text unit has its stored citation number ``unit_no`` (schema version 2); False
        for an index of version 1 opened read-only, which is numbered as that version did
        (:func:`slmgraph.query.answer.unit_numbers`)."""
        return self.has_column("text_units", "unit_no") and not self.con.execute(
            "SELECT count(*) FROM text_units WHERE unit_no IS NULL").fetchone()[0]

    def storage_error(self, exc: BaseException) -> StorageError:
        """The one-line :class:`StorageError` for a failed write or checkpoint ``exc`` of this index.

        A failure of the file system (:func:`slmgraph.store.failures.is_storage_failure`: disk full, I/O
        error) names the file, the free space left on its file system (bytes, from ``shutil.disk_usage``)
        and the remedy; any other database error (a value DuckDB refused) names itself as a fault of
        slmgraph, not of the disk.
        Marks the store as failed so that :meth:`close` does not raise a second error.
        """
        if is_interrupt(exc):  # a Ctrl-C during a statement, not a failed write
            raise KeyboardInterrupt from exc
        self._failed = True
        return storage_failure(self.path, exc)

    def checkpoint(self) -> None:
        """Write the write-ahead log into the ``.duckdb`` file (DuckDB ``CHECKPOINT``).

        Raises:
            StorageError: the file system refused the write (e.g. no space left).
        """
        try:
            self.con.execute("CHECKPOINT")
        except duckdb.Error as exc:
            raise self.storage_error(exc) from None

    def compact(self, share: float = COMPACT_SHARE, min_bytes: int = COMPACT_MIN_BYTES) -> Compaction:
        """Copy the index into a new file without its free blocks, when they are more than ``share`` of
        the file and at least ``min_bytes`` (DuckDB ``COPY FROM DATABASE``; the copy replaces the file
        with ``os.replace``, so a failure at any point leaves the old file as it was).

        Call it last: a store that was compacted is closed (:meth:`close` does nothing more).
        Returns a :class:`Compaction` (sizes in bytes); a failed copy (e.g. no room for it) is
        reported in its ``reason``, not raised.
        """
        self.con.execute("CHECKPOINT")
        block, total, free = self.con.execute(
            "SELECT block_size, total_blocks, free_blocks FROM pragma_database_size() "
            "WHERE database_name = current_database()").fetchone()
        size, free_bytes = int(block) * int(total), int(block) * int(free)
        if not size or free_bytes < min_bytes or free_bytes <= share * size:
            return Compaction(size, free_bytes)
        tmp = self.path.with_name(f"{self.path.name}.compact-{uuid.uuid4().hex[:8]}")
        db = self.con.execute("SELECT current_database()").fetchone()[0]
        try:
            self.con.execute(f"ATTACH '{_sql_str(tmp)}' AS slmgraph_compact")
            try:
                self.con.execute(f'COPY FROM DATABASE "{db}" TO slmgraph_compact')
            finally:
                self.con.execute("DETACH slmgraph_compact")
            os.replace(tmp, self.path)  # this connection still holds the old file, so no other writer gets in
        except (duckdb.Error, OSError) as exc:
            for f in (tmp, tmp.with_name(tmp.name + ".wal")):
                try:
                    f.unlink()
                except OSError:
                    pass
            return Compaction(size, free_bytes, reason=str(exc).strip().splitlines()[0] if str(exc).strip()
                              else type(exc).__name__)
        self.con.close()
        self._closed = True
        return Compaction(size, free_bytes, after=self.path.stat().st_size)

    def close(self) -> None:
        """Checkpoint (when open for writing) and close the DuckDB connection.

        Raises:
            StorageError: the checkpoint failed (disk full); what was committed
                stays in the ``.wal`` file beside the index and is replayed the next
                time it is opened. Not raised again after an earlier StorageError.
        """
        if getattr(self, "_closed", False):  # compacted: closed already
            return
        if self._pending_file:
            try:
                self._pending_file.close()  # releases its lock: the next writer merges it
            except OSError as exc:  # e.g. a full disk: the answer stands, its ledger rows are lost
                self._pending_lost = str(exc)
            if self._pending_lost:
                logging.getLogger("slmgraph").warning(
                    "warning: this query's ledger and cache rows were not saved beside %s (%s); the answer above "
                    "is complete", self.path, self._pending_lost)
                self._pending_lost = None
        err = None
        if not self.read_only and not self._failed:
            try:
                self.con.execute("CHECKPOINT")
            except duckdb.Error as exc:
                err = self.storage_error(exc)
        try:
            self.con.close()
        except duckdb.Error as exc:
            if err is None and not self._failed:
                err = self.storage_error(exc)
        if err is not None:
            raise err


def _exists(path: Path) -> bool:
    """Whether the ``--db`` path exists.

    Raises:
        UserError: the system cannot look the path up (a name too long for the file system, a component that
            is a file, no permission), one line naming its start.
    """
    try:
        return path.exists()
    except OSError as exc:
        raise UserError(f"--db {echo(str(path))} cannot be used ({exc.strerror or exc}): pass another file path") \
            from None


def _sql_str(path: Path) -> str:
    """``path`` inside a single-quoted SQL string literal."""
    return str(path).replace("'", "''")


def new_run_id() -> str:
    """A run id: UTC time to the second plus a counter-free suffix (str)."""
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + f"-{time.perf_counter_ns() % 100000:05d}"


def dumps(obj) -> str:
    """Compact, key-sorted JSON (stable text for hashing and storage)."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
