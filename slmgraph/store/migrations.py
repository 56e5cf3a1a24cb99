"""Schema migrations as named steps: each a small function, applied in order and recorded in the file.

Opening an index for writing applies every step of :data:`MIGRATIONS` the file's ``migrations`` table
does not list, each in its own transaction with its row there (a new file gets them all in the
transaction that creates it). The first step creates every table of :data:`slmgraph.store.schema.DDL`
that is missing; the later ones bring the tables of an older file to the same shape, so each is
idempotent (an index written before steps were recorded runs them all once). A step that changes what
an older slmgraph could read carries a higher ``version``, which becomes the file's meta
``schema_version``; a file of a version above :data:`slmgraph.store.schema.SCHEMA_VERSION` is refused
(:func:`check_version`).

Adding a column or table: write it into the DDL and add a step here that adds it to older files.
"""

from __future__ import annotations

import functools
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Callable, ContextManager, NamedTuple

import duckdb

from slmgraph.errors import UserError
from slmgraph.store.bulk import insert_rows
from slmgraph.store.corpus_stats import write_corpus_stats
from slmgraph.store.schema import DDL, SCHEMA_VERSION, table_ddl
from slmgraph.text.shape import no_prose_passage


class Migration(NamedTuple):
    """One step: its ``name`` (recorded in the ``migrations`` table), the schema ``version`` a file has
    once it is applied, and ``apply(con)``, which runs inside the caller's transaction."""
    name: str
    version: int
    apply: Callable[[duckdb.DuckDBPyConnection], None]


#: Every step, in the order they are applied.
MIGRATIONS: list[Migration] = []


def migration(version: int = 1):
    """Register the decorated ``fn(con)`` as the next step of :data:`MIGRATIONS`, named by the function."""
    def register(fn: Callable[[duckdb.DuckDBPyConnection], None]):
        MIGRATIONS.append(Migration(fn.__name__, version, fn))
        return fn
    return register


@functools.lru_cache(maxsize=1)
def _column_types() -> dict[tuple[str, str], str]:
    """``{(table, column): SQL type}`` of :data:`DDL`, read from an in-memory database made with it."""
    con = duckdb.connect(":memory:")
    try:
        con.execute(DDL)
        return {(t, c): ty for t, c, ty in con.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE database_name = 'memory'"
        ).fetchall()}
    finally:
        con.close()


def _add_columns(con: duckdb.DuckDBPyConnection, table: str, *columns: str) -> None:
    """Add ``columns`` to ``table`` with their types in :data:`DDL`, where the file lacks them."""
    types = _column_types()
    for column in columns:
        con.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {column} {types[table, column]}")


def _set_meta(con: duckdb.DuckDBPyConnection, key: str, value: str) -> None:
    row = con.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
    if not row or row[0] != value:
        con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [key, value])


@migration()
def create_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Every table of the schema the file lacks (all of them in a new file), in its current shape."""
    con.execute(DDL)


@migration()
def add_document_title_and_chunking(con: duckdb.DuckDBPyConnection) -> None:
    _add_columns(con, "documents", "title", "chunking")


@migration()
def add_text_unit_offsets(con: duckdb.DuckDBPyConnection) -> None:
    _add_columns(con, "text_units", "char_start", "char_end")


@migration()
def add_extraction_counts(con: duckdb.DuckDBPyConnection) -> None:
    _add_columns(con, "extractions", "n_ungrounded", "gleanings", "evaluated_tokens", "completion_tokens",
                 "n_left_out", "n_choices", "n_rejected")


@migration()
def add_report_topic_and_documents(con: duckdb.DuckDBPyConnection) -> None:
    _add_columns(con, "community_reports", "topic", "doc_ids")


@migration()
def add_embedding_window_key(con: duckdb.DuckDBPyConnection) -> None:
    _add_columns(con, "embeddings", "window_key")


@migration()
def add_call_tokens_and_outputs(con: duckdb.DuckDBPyConnection) -> None:
    _add_columns(con, "llm_cache", "tokens")
    _add_columns(con, "llm_calls", "prompt_seconds", "key", "output")


@migration(version=2)
def number_text_units(con: duckdb.DuckDBPyConnection) -> None:
    """Store each text unit's citation number (``text_units.unit_no``).

    Version 1 numbered text units on the fly, 1..n in ``(doc_id, ord)`` order; this stores exactly
    those numbers, so citations in answers given before the upgrade still point at the same text
    units, and text units added later get numbers after them (meta ``next_unit_no``).
    """
    _add_columns(con, "text_units", "unit_no")
    if con.execute("SELECT count(*) FROM text_units WHERE unit_no IS NULL").fetchone()[0]:
        con.execute("""
            UPDATE text_units SET unit_no = n.no
            FROM (SELECT chunk_id, row_number() OVER (ORDER BY doc_id, ord) AS no FROM text_units) n
            WHERE text_units.chunk_id = n.chunk_id""")
    top = int(con.execute("SELECT coalesce(max(unit_no), 0) FROM text_units").fetchone()[0])
    if top:
        row = con.execute("SELECT value FROM meta WHERE key = 'next_unit_no'").fetchone()
        _set_meta(con, "next_unit_no", str(max(top + 1, int(row[0]) if row else 1)))


@migration(version=2)
def add_text_unit_no_prose(con: duckdb.DuckDBPyConnection) -> None:
    """Store whether each text unit holds prose (``text_units.no_prose``), judged once from its stored text
    (:func:`slmgraph.text.shape.no_prose_passage`), so a search reads the flag rather than judging every unit."""
    _add_columns(con, "text_units", "no_prose")
    fill_no_prose(con)


@migration(version=2)  # no change an older slmgraph cannot read; versions stay in order
def add_corpus_terms(con: duckdb.DuckDBPyConnection) -> None:
    """Count the corpus's word and phrase statistics once (:mod:`slmgraph.store.corpus_stats`) into
    ``corpus_terms``, from the stored text units and noun phrases, so a query reads them."""
    con.execute(table_ddl("corpus_terms", "main"))
    write_corpus_stats(con)


def fill_no_prose(con: duckdb.DuckDBPyConnection) -> int:
    """Judge every text unit whose ``no_prose`` is NULL and store the flag; returns how many were judged."""
    rows = [(cid, no_prose_passage(text)) for cid, text in con.execute(
        "SELECT chunk_id, text FROM text_units WHERE no_prose IS NULL").fetchall()]
    if rows:
        con.execute("CREATE OR REPLACE TEMP TABLE _no_prose(chunk_id VARCHAR, no_prose BOOLEAN)")
        insert_rows(con, "_no_prose", ("chunk_id", "no_prose"), rows)
        con.execute("UPDATE text_units SET no_prose = f.no_prose FROM _no_prose f "
                    "WHERE text_units.chunk_id = f.chunk_id")
        con.execute("DROP TABLE _no_prose")
    return len(rows)


def check_version(found: str | None, path: Path) -> None:
    """Refuse an index whose meta ``schema_version`` (``found``; None: version 1) is newer than this code's.

    Raises:
        UserError: one line naming the file, both versions and the remedy.
    """
    try:
        newer = int(found or "1") > int(SCHEMA_VERSION)
    except ValueError:
        newer = True
    if newer:
        raise UserError(f"index {path} has schema version {found}, which this slmgraph (schema version "
                        f"{SCHEMA_VERSION}) cannot read: upgrade slmgraph, or index into a new --db")


def applied(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Names of the steps recorded in the file (none in a file made before steps were recorded)."""
    if not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'migrations' "
                       "AND database_name = current_database()").fetchone()[0]:
        return set()
    return {name for name, in con.execute("SELECT name FROM migrations").fetchall()}


def migrate(con: duckdb.DuckDBPyConnection,
            transaction: Callable[[], ContextManager] | None = None) -> list[str]:
    """Apply the steps of :data:`MIGRATIONS` the file has not recorded, in order, and record each.

    Args:
        con: a connection to the index, open for writing.
        transaction: a context manager factory; each step runs in one transaction of its own.
            None: the caller holds one transaction for all of them (a new file's creation).

    Returns:
        The names of the steps applied (empty for a current file).
    """
    done = applied(con)
    todo = [m for m in MIGRATIONS if m.name not in done]
    for step in todo:  # a file without the migrations table has none recorded: create_tables comes first
        with transaction() if transaction is not None else nullcontext():
            step.apply(con)
            con.execute("INSERT INTO migrations VALUES (?, ?)",
                        [step.name, time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())])
            row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if step.version > int(row[0] if row else "1"):
                _set_meta(con, "schema_version", str(step.version))
    return [m.name for m in todo]
