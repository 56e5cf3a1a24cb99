"""The DuckDB index: every table's DDL in one place, and table access.

One file holds the whole index: documents, text units, extraction records,
entities, relationships and their provenance, optional claims (covariates),
communities, community reports, embeddings, the LLM-output cache, and the
ledger of every model call.

Stages read the previous stage's tables and write their own. The graph and
community stages write in one transaction each (DuckDB docs, "Transaction
Management"); extraction and claims commit each text unit, and reports each report, as
they are made, so an interrupted run resumes where it stopped. The ``meta``
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
import shutil
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, NamedTuple, TypeVar

import duckdb

from slmgraph.errors import IndexBusy, StorageError, UserError

APP_ID = "slmgraph"
#: Meta ``schema_version`` of a current index. "2": ``text_units.unit_no``, the index-wide citation number,
#: stored at ingestion (an index of version "1" is migrated when opened for writing, see
#: :meth:`Store._migrate`; opened read-only, :func:`unit_numbers` numbers it as version 1 did).
SCHEMA_VERSION = "2"

DDL = """
CREATE TABLE IF NOT EXISTS meta (
    key VARCHAR PRIMARY KEY,
    value VARCHAR
);
CREATE TABLE IF NOT EXISTS documents (
    doc_id VARCHAR PRIMARY KEY,     -- sha256 of the file's bytes, first 16 hex
    path VARCHAR,                   -- path relative to the indexed folder
    n_chars INTEGER,
    n_tokens INTEGER,
    added_at TIMESTAMP
);
CREATE TABLE IF NOT EXISTS text_units (
    chunk_id VARCHAR PRIMARY KEY,   -- sha256(doc_id, token span, text), first 16 hex
    doc_id VARCHAR,
    ord INTEGER,                    -- position of the chunk in its document
    tok_start INTEGER,
    tok_end INTEGER,
    n_tokens INTEGER,
    text VARCHAR
);
CREATE TABLE IF NOT EXISTS extractions (
    chunk_id VARCHAR PRIMARY KEY,
    cache_key VARCHAR,              -- sha256(text, model, prompt, settings)
    status VARCHAR,                 -- ok | repaired | failed
    n_candidates INTEGER,
    n_entities INTEGER,
    n_relationships INTEGER,
    n_dropped INTEGER,              -- records dropped by validation (dupes, self-loops, ungrounded)
    raw VARCHAR                     -- the model's output as generated
);
ALTER TABLE documents ADD COLUMN IF NOT EXISTS title VARCHAR;      -- a leading file-name line, else the file's stem
ALTER TABLE documents ADD COLUMN IF NOT EXISTS chunking VARCHAR;   -- what its text units were cut with
                                                                   -- (slmgraph.indexing.stages.ingest.chunking_key)
ALTER TABLE text_units ADD COLUMN IF NOT EXISTS char_start INTEGER; -- text = document text[char_start:char_end]
ALTER TABLE text_units ADD COLUMN IF NOT EXISTS char_end INTEGER;
ALTER TABLE text_units ADD COLUMN IF NOT EXISTS unit_no INTEGER;   -- index-wide citation number 1.., given once at
                                                                   -- ingestion, never reused (meta next_unit_no)
ALTER TABLE extractions ADD COLUMN IF NOT EXISTS n_ungrounded INTEGER;  -- entities dropped by grounding
ALTER TABLE extractions ADD COLUMN IF NOT EXISTS gleanings INTEGER;     -- gleaning rounds that added records
ALTER TABLE extractions ADD COLUMN IF NOT EXISTS evaluated_tokens INTEGER;   -- prompt tokens the model evaluated
ALTER TABLE extractions ADD COLUMN IF NOT EXISTS completion_tokens INTEGER;  -- tokens the model generated
ALTER TABLE extractions ADD COLUMN IF NOT EXISTS n_left_out INTEGER;   -- candidates past --max-candidates, not offered
ALTER TABLE extractions ADD COLUMN IF NOT EXISTS n_choices INTEGER;    -- model choices by token probability
ALTER TABLE extractions ADD COLUMN IF NOT EXISTS n_rejected INTEGER;   -- candidates/pairs the model's choices dropped
CREATE TABLE IF NOT EXISTS merge_log (
    norm VARCHAR,                   -- merged-away normalised name
    into_norm VARCHAR,              -- the entity it was merged into
    rule VARCHAR,                   -- e.g. name-subset | acronym | embedding
    score DOUBLE,                   -- similarity for the embedding rule, else NULL
    detail VARCHAR                  -- human-readable reason
);
CREATE TABLE IF NOT EXISTS claims (
    claim_id INTEGER,
    chunk_id VARCHAR,               -- the text unit whose source_quote it is
    subject_norm VARCHAR,           -- mention key (= entity_mentions.norm); see claims.load_claims
    object_norm VARCHAR,            -- NULL when the claim has no object entity
    type VARCHAR,
    status VARCHAR,                 -- TRUE | FALSE | SUSPECTED
    start_date VARCHAR,
    end_date VARCHAR,
    description VARCHAR,
    source_quote VARCHAR
);
CREATE TABLE IF NOT EXISTS claim_extractions (
    chunk_id VARCHAR PRIMARY KEY,   -- one marker per text unit once claims ran on it
    cache_key VARCHAR,              -- sha256(text, model, prompts, claim settings, entity names); NULL = redo
    status VARCHAR,                 -- ok | repaired | truncated | failed | no_entities
    n_claims INTEGER,
    n_dropped INTEGER,              -- claims dropped by validation (ungrounded quote, self-claim, duplicate)
    n_ungrounded INTEGER,           -- of which: source quote not in the text unit
    raw VARCHAR                     -- the model's output as generated
);
CREATE TABLE IF NOT EXISTS entity_mentions (
    chunk_id VARCHAR,
    name VARCHAR,
    norm VARCHAR,                   -- normalised name: the merge key
    type VARCHAR,
    description VARCHAR
);
CREATE TABLE IF NOT EXISTS relationship_mentions (
    chunk_id VARCHAR,
    source_norm VARCHAR,
    target_norm VARCHAR,
    description VARCHAR,
    strength INTEGER                -- 1..10
);
CREATE TABLE IF NOT EXISTS concept_mentions (
    chunk_id VARCHAR,
    norm VARCHAR,                   -- lower-case noun phrase, head lemmatised: the concept's key (slmgraph.indexing.stages.concepts)
    name VARCHAR,                   -- the phrase as written in the text unit (lower case)
    description VARCHAR             -- the first sentence of the text unit that holds it
);
CREATE TABLE IF NOT EXISTS concept_links (
    chunk_id VARCHAR,
    concept_norm VARCHAR,           -- concept_mentions.norm
    other_norm VARCHAR,             -- another concept's key, or a name's mention key (entity_mentions.norm)
    other_kind VARCHAR,             -- concept | name
    description VARCHAR,            -- the first sentence of the text unit naming both
    sentences INTEGER               -- sentences of the text unit naming both
);
CREATE TABLE IF NOT EXISTS entities (
    entity_id INTEGER PRIMARY KEY,
    norm VARCHAR UNIQUE,
    name VARCHAR,
    type VARCHAR,
    description VARCHAR,
    n_mentions INTEGER,
    degree INTEGER
);
CREATE TABLE IF NOT EXISTS entity_text_units (
    entity_id INTEGER,
    chunk_id VARCHAR
);
CREATE TABLE IF NOT EXISTS relationships (
    rel_id INTEGER PRIMARY KEY,
    source_id INTEGER,              -- source_id < target_id: the graph is undirected
    target_id INTEGER,
    description VARCHAR,
    weight DOUBLE,                  -- number of instances across text units
    strength DOUBLE,                -- mean model-assigned strength, 1..10
    combined_degree INTEGER         -- deg(source) + deg(target), the paper's edge rank
);
CREATE TABLE IF NOT EXISTS relationship_text_units (
    rel_id INTEGER,
    chunk_id VARCHAR
);
CREATE TABLE IF NOT EXISTS concepts (
    entity_id INTEGER PRIMARY KEY,  -- an entities row (type concept) that is a noun phrase, not a name
    n_units INTEGER                 -- text units holding it
);
CREATE TABLE IF NOT EXISTS communities (
    community_id INTEGER PRIMARY KEY,
    level INTEGER,                  -- 0 = root level (coarsest Leiden partition)
    parent_id INTEGER,              -- NULL at level 0
    size INTEGER,                   -- number of member entities
    carried_from INTEGER            -- set when an unsplittable community is carried down
);
CREATE TABLE IF NOT EXISTS community_members (
    community_id INTEGER,
    entity_id INTEGER
);
CREATE TABLE IF NOT EXISTS community_reports (
    community_id INTEGER PRIMARY KEY,
    level INTEGER,
    title VARCHAR,
    summary VARCHAR,
    findings VARCHAR,               -- JSON list of {summary, explanation}
    rating DOUBLE,                  -- impact 0..10
    rating_explanation VARCHAR,
    full_text VARCHAR,              -- the report as packed into query contexts
    n_tokens INTEGER,               -- tokens of full_text in the index model's tokenizer
    context_tokens INTEGER,         -- tokens of the context the report was written from
    context_kind VARCHAR            -- elements | sub-reports | carried
);
ALTER TABLE community_reports ADD COLUMN IF NOT EXISTS topic VARCHAR;        -- distinctive terms of the community, e.g. "budget shortfall, library, council tax"
ALTER TABLE community_reports ADD COLUMN IF NOT EXISTS doc_ids VARCHAR;      -- JSON list of the documents behind the community, in corpus order
CREATE TABLE IF NOT EXISTS embeddings (
    kind VARCHAR,                   -- entity | text_unit | report
    item_id VARCHAR,
    model VARCHAR,                  -- embedder name : sha256 of the full embedded text (16 hex)
    vector FLOAT[],
    PRIMARY KEY (kind, item_id)
);
-- embedder name : sha256 of the word-piece ids the embedder reads (its max_seq_length window);
-- the content key by which a vector is reused (slmgraph.indexing.stages.embed.run_embeddings). NULL in older indexes.
ALTER TABLE embeddings ADD COLUMN IF NOT EXISTS window_key VARCHAR;
CREATE TABLE IF NOT EXISTS llm_cache (
    key VARCHAR PRIMARY KEY,        -- sha256(model fingerprint, prompt tokens, grammar, limits)
    stage VARCHAR,
    output VARCHAR,
    finish_reason VARCHAR
);
CREATE SEQUENCE IF NOT EXISTS llm_call_seq;
CREATE TABLE IF NOT EXISTS llm_calls (
    call_id BIGINT DEFAULT nextval('llm_call_seq'),
    run_id VARCHAR,
    stage VARCHAR,                  -- extract | claims | report | map | reduce | local | basic ...
    worker INTEGER,
    model VARCHAR,
    prompt_tokens INTEGER,          -- all prompt tokens of the call
    cached_tokens INTEGER,          -- of which reused from the KV cache (not evaluated)
    completion_tokens INTEGER,
    seconds DOUBLE,                 -- wall-clock of the call
    finish_reason VARCHAR,          -- stop | length | deadline | repetition
    created_at TIMESTAMP DEFAULT current_timestamp
);
ALTER TABLE llm_cache ADD COLUMN IF NOT EXISTS tokens VARCHAR;  -- generated token ids (JSON), for follow-ups
ALTER TABLE llm_calls ADD COLUMN IF NOT EXISTS prompt_seconds DOUBLE;  -- of seconds, prompt evaluation
ALTER TABLE llm_calls ADD COLUMN IF NOT EXISTS key VARCHAR;      -- the call's cache key (llm_cache.key), also for uncached calls
ALTER TABLE llm_calls ADD COLUMN IF NOT EXISTS output VARCHAR;   -- generated text, or JSON {"options", "logprobs"} of a choice
CREATE TABLE IF NOT EXISTS stage_runs (
    run_id VARCHAR,
    stage VARCHAR,                  -- ingest | extract | claims | graph | communities | reports | embed | query
    seconds DOUBLE,
    items INTEGER,
    note VARCHAR,
    created_at TIMESTAMP DEFAULT current_timestamp
);
"""
#: The tables :data:`DDL` creates: a file holding only these, all empty, is an interrupted creation.
OWN_TABLES = frozenset(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", DDL))

# --- Row types: one per table the stages read back, fields named and ordered as the columns above.
# A row read with :func:`rows` from a SELECT of some columns has None in the others.


class TextUnitRow(NamedTuple):
    """A ``text_units`` row (stage 1, ``ingest``): ``n_tokens`` in the index model's tokens,
    ``char_start``/``char_end`` character offsets into the document's text."""
    chunk_id: str = None
    doc_id: str = None
    ord: int = None
    tok_start: int = None
    tok_end: int = None
    n_tokens: int = None
    text: str = None
    char_start: int = None
    char_end: int = None
    unit_no: int = None


class EntityRow(NamedTuple):
    """An ``entities`` row (stage 4, ``graph``): ``norm`` is the merge key, ``degree`` the number
    of relationships, ``n_mentions`` the text units' mentions merged into it."""
    entity_id: int = None
    norm: str = None
    name: str = None
    type: str = None
    description: str = None
    n_mentions: int = None
    degree: int = None


class RelationshipRow(NamedTuple):
    """A ``relationships`` row (stage 4): undirected, ``source_id < target_id``; ``weight`` =
    instances, ``strength`` = mean 1..10, ``combined_degree`` = deg(source) + deg(target)
    (the paper's edge rank, sec. 3.1.5)."""
    rel_id: int = None
    source_id: int = None
    target_id: int = None
    description: str = None
    weight: float = None
    strength: float = None
    combined_degree: int = None


class CommunityRow(NamedTuple):
    """A ``communities`` row (stage 5): ``level`` 0 = coarsest, ``parent_id`` None at level 0,
    ``size`` in member entities, ``carried_from`` set when an unsplittable community is carried down."""
    community_id: int = None
    level: int = None
    parent_id: int = None
    size: int = None
    carried_from: int = None


class ReportRow(NamedTuple):
    """A ``community_reports`` row (stage 6): ``findings`` is JSON text (list of {summary,
    explanation}), ``rating`` 0..10, ``n_tokens``/``context_tokens`` in the index model's tokens,
    ``topic`` the community's distinctive terms (comma-separated) and ``doc_ids`` the JSON list of its
    documents in corpus order (:mod:`slmgraph.indexing.stages.topics`)."""
    community_id: int = None
    level: int = None
    title: str = None
    summary: str = None
    findings: str = None
    rating: float = None
    rating_explanation: str = None
    full_text: str = None
    n_tokens: int = None
    context_tokens: int = None
    context_kind: str = None
    topic: str = None
    doc_ids: str = None


Row = TypeVar("Row", TextUnitRow, EntityRow, RelationshipRow, CommunityRow, ReportRow)


def rows(source, row_type: type[Row], sql: str, params: list | tuple = ()) -> list[Row]:
    """The result of ``sql`` as ``row_type`` rows, columns matched to fields by name.

    Args:
        source: a :class:`Store` or a DuckDB connection.
        row_type: one of the row types above (e.g. :class:`EntityRow`).
        sql: a SELECT whose column names (or ``AS`` aliases) are fields of ``row_type``;
            the fields it does not select are None.
        params: its ``?`` parameters.

    Raises:
        ValueError: a selected column is not a field of ``row_type`` (a programming error).
    """
    con = getattr(source, "con", source)
    cur = con.execute(sql, list(params))
    cols = [d[0] for d in cur.description]
    unknown = [c for c in cols if c not in row_type._fields]
    if unknown:
        raise ValueError(f"{row_type.__name__} has no field {', '.join(unknown)}")
    where = [cols.index(f) if f in cols else None for f in row_type._fields]
    make = row_type._make
    return [make([r[i] if i is not None else None for i in where]) for r in cur.fetchall()]


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


#: Tables cleared and rebuilt by each derived stage, in pipeline order.
DERIVED_TABLES = {
    "graph": ("entities", "entity_text_units", "relationships", "relationship_text_units", "merge_log", "concepts"),
    "communities": ("communities", "community_members"),
    "reports": ("community_reports",),
}


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
            or is held by another process for longer than ``wait``.
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
        if not self.path.exists():
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
                who = f"another process (PID {pid.group(1)})" if pid else "another process"
                holds = (f"being written by {who}, e.g. 'slmgraph index'" if read_only else
                         f"open in {who} ('slmgraph index', 'query' or 'stats')")
                if time.monotonic() >= deadline:
                    more = f"it was still held after --wait {wait:g} s" if wait > 0 else \
                        "pass --wait SECONDS to wait for it"
                    raise IndexBusy(f"index {self.path} is {holds}: {more}, or run again when it has finished") \
                        from None
                if on_wait is not None:
                    on_wait(f"index {self.path} is {holds}: waiting up to {wait:g} s for it")
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
                    self.con.execute(DDL)  # IF NOT EXISTS: adds tables of newer versions
                    self._migrate()
                    self.merge_pending()
        except duckdb.Error as exc:
            raise self.storage_error(exc) from None

    def _create(self) -> None:
        """Write the schema and the ``meta`` keys that make the file an index, in one transaction: a
        creation interrupted (Ctrl-C) leaves a file without tables, which :meth:`_unmade` recognises."""
        try:
            with self.transaction():
                self.con.execute(DDL)
                self.set_meta("app", APP_ID)
                self.set_meta("schema_version", SCHEMA_VERSION)
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
        if not p.exists():
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

    def _migrate(self) -> None:
        """Bring an index written by an older version to :data:`SCHEMA_VERSION` (in one transaction).

        Version 1 numbered text units for citation on the fly, 1..n in ``(doc_id, ord)`` order;
        version 2 stores the number (``text_units.unit_no``). The migration stores exactly the
        numbers version 1 gave, so citations in answers given before the upgrade still point at the
        same text units; text units added later get new numbers after them.
        """
        if self.get_meta("schema_version") == SCHEMA_VERSION:
            return
        with self.transaction():
            if self.con.execute("SELECT count(*) FROM text_units WHERE unit_no IS NULL").fetchone()[0]:
                self.con.execute("""
                    UPDATE text_units SET unit_no = n.no
                    FROM (SELECT chunk_id, row_number() OVER (ORDER BY doc_id, ord) AS no FROM text_units) n
                    WHERE text_units.chunk_id = n.chunk_id""")
            top = self.con.execute("SELECT coalesce(max(unit_no), 0) FROM text_units").fetchone()[0]
            self.set_meta("next_unit_no", str(max(int(top) + 1, int(self.get_meta("next_unit_no", "1")))))
            self.set_meta("schema_version", SCHEMA_VERSION)

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

        A failure of the file system (:func:`is_storage_failure`: disk full, I/O error) names the file,
        the free space left on its file system (bytes, from ``shutil.disk_usage``) and the remedy; any
        other database error (a value DuckDB refused) names itself as a fault of slmgraph, not of the disk.
        Marks the store as failed so that :meth:`close` does not raise a second error.
        """
        if is_interrupt(exc):  # a Ctrl-C during a statement, not a failed write
            raise KeyboardInterrupt from exc
        self._failed = True
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        for prefix in ("FATAL Error: ", "TransactionContext Error: ", "IO Error: ", "Failed to commit: ",
                       "Failed to create checkpoint because of error: "):
            msg = msg.replace(prefix, "")
        if not is_storage_failure(exc):
            return StorageError(
                f"writing index {self.path} failed ({msg}): a value the database refused, not a disk problem; the "
                "index is marked incomplete and nothing committed is lost; please report this line as a bug")
        try:
            free = shutil.disk_usage(self.path.resolve().parent).free
            room = f"{_human(free)} free on its file system"
        except OSError:
            room = "free space unknown"
        return StorageError(
            f"writing index {self.path} failed ({msg}); {room}: the index is marked incomplete and nothing "
            "committed is lost; free some space (or pick another --db) and run the same command again to resume")

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


def _sql_str(path: Path) -> str:
    """``path`` inside a single-quoted SQL string literal."""
    return str(path).replace("'", "''")


def _human(n: int) -> str:
    """``n`` bytes as e.g. ``'160 KB'`` or ``'3.0 MB'`` (powers of 1024)."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}" if n < 10 * scale else f"{n // scale} {unit}"
    return f"{n} bytes"


def new_run_id() -> str:
    """A run id: UTC time to the second plus a counter-free suffix (str)."""
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + f"-{time.perf_counter_ns() % 100000:05d}"


def dumps(obj) -> str:
    """Compact, key-sorted JSON (stable text for hashing and storage)."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
