"""Stage 1, ingest (paper sec. 3.1.1): ``documents`` and ``text_units`` brought in line with the input
(:func:`ingest`), reading the files with :mod:`slmgraph.indexing.stages.ingest_read` and cutting them
with :mod:`slmgraph.indexing.stages.ingest_chunk`.

Ingest is incremental: a document whose bytes did not change keeps its text
units (not cut again under the same :func:`chunking_key`); removed documents are
removed with everything that only they supported. Documents are cut one at a time, in
memory of a few bytes per word (:func:`make_text_units`), and committed together with the
others cut within about a second (:data:`COMMIT_SECONDS`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Callable

from tqdm import tqdm

from slmgraph.indexing.stages.ingest_chunk import TAIL_SHARE, TokenCounts, make_text_units
from slmgraph.indexing.stages.ingest_read import Document, Unreadable
from slmgraph.store.bulk import delete_keys, insert_rows
from slmgraph.store.db import Store
from slmgraph.store.schema import UNIT_RECORDS
from slmgraph.text.shape import no_prose_passage

log = logging.getLogger("slmgraph")

#: Seconds of cutting whose documents are committed together (committing each document alone cost more
#: than cutting it): an interrupted ingest commits the documents it finished; a killed one keeps those cut
#: before the last such span.
COMMIT_SECONDS = 1.0
#: Most text units held for one commit (their text is in memory until then).
COMMIT_UNITS = 2048

#: Version of the cutting rules (:mod:`slmgraph.indexing.stages.ingest_chunk`), part of :func:`chunking_key`:
#: raise it when a change cuts documents differently.
CHUNKER_VERSION = 1


@dataclass
class IngestResult:
    """What stage 1 did: ``documents`` read, of which ``new_documents`` at a path the index did not hold
    and ``edited_documents`` at one whose bytes changed; ``removed_documents`` whose file is gone;
    ``text_units`` in the index after it, of which ``added_units`` new; ``removed_units`` gone (with
    removed documents, or replaced in edited ones); ``tokens`` of the documents and ``unit_tokens`` over
    the units (overlaps counted again), in the index model's tokens."""
    documents: int
    text_units: int
    added_units: int
    removed_units: int
    removed_documents: int
    tokens: int
    unit_tokens: int
    new_documents: int = 0
    edited_documents: int = 0
    #: Paths of indexed documents kept because their file or folder could not be read (``keep``).
    kept: list[str] = field(default_factory=list)
    #: Old versions of edited documents (ids) whose text units stay until the new version's are extracted
    #: (:func:`retire_replaced`), so a query after an interrupted update still finds their text; also in
    #: meta :data:`RETIRING`.
    retiring: list[str] = field(default_factory=list)

    def summary(self, settings=None) -> list[str]:
        """The progress line ``index`` prints."""
        kept = f", {len(self.kept)} document{'s' if len(self.kept) > 1 else ''} kept unread" if self.kept else ""
        # An edited file is said as such: its new text units and its old ones gone are the units' figures.
        changes = ", ".join(f"{n} {what}" for n, what in (
            (self.new_documents, "new"), (self.edited_documents, "edited"), (self.removed_documents, "removed")) if n)
        return [f"ingest: {self.documents} documents{f' ({changes})' if changes else ''}, {self.tokens} tokens, "
                f"{self.text_units} text units ({self.added_units} new, {self.removed_units} removed{kept})"]




def carry_extractions(con) -> int:
    """Give each text unit without an extraction the records of a removed one (temp table ``_gone``) with the
    same text: an edited document's unchanged parts get new chunk ids (the document's id is its bytes' hash)
    but the same extraction, which the extract stage keeps when its key (text, settings, document edges)
    still matches and redoes otherwise. Returns the text units given records."""
    donors = {}
    for chunk_id, text in con.execute("SELECT t.chunk_id, t.text FROM text_units t JOIN _gone g USING (chunk_id) "
                                      "JOIN extractions e USING (chunk_id) ORDER BY t.doc_id, t.ord").fetchall():
        donors.setdefault(text, chunk_id)
    moves = []
    for chunk_id, text in con.execute(
            "SELECT chunk_id, text FROM text_units WHERE chunk_id NOT IN (SELECT chunk_id FROM _gone) "
            "AND chunk_id NOT IN (SELECT chunk_id FROM extractions) ORDER BY doc_id, ord").fetchall():
        if text in donors:
            moves.append([chunk_id, donors.pop(text)])
    for table in UNIT_RECORDS if moves else ():
        con.executemany(f"UPDATE {table} SET chunk_id = ? WHERE chunk_id = ?", moves)
    if moves:
        # Their vectors are copied too (kinds of slmgraph.indexing.stages.embed: the unit's and its further
        # windows'), so a query between an interrupted update and its re-run still finds an edited
        # document's unchanged text; the embed stage keeps them (same text) and drops the old ids'.
        con.execute("CREATE OR REPLACE TEMP TABLE _moved(new_id VARCHAR, old_id VARCHAR)")
        insert_rows(con, "_moved", ("new_id", "old_id"), moves)
        renamed = "m.new_id || substr(e.item_id, length(m.old_id) + 1)"
        con.execute(f"INSERT INTO embeddings (kind, item_id, model, vector, window_key) "
                    f"SELECT e.kind, {renamed}, e.model, e.vector, e.window_key FROM embeddings e "
                    "JOIN _moved m ON e.item_id = m.old_id OR starts_with(e.item_id, m.old_id || '#') "
                    "WHERE e.kind IN ('text_unit', 'text_unit_window') AND NOT EXISTS (SELECT 1 FROM embeddings x "
                    f"WHERE x.kind = e.kind AND x.item_id = {renamed})")
        con.execute("DROP TABLE _moved")
    return len(moves)


#: Meta key: the ids (JSON list) of the old versions of edited documents that :func:`ingest` kept.
RETIRING = "retiring_documents"


def retiring(store: Store) -> set[str]:
    """The old versions of edited documents :func:`ingest` kept (meta :data:`RETIRING`): the extract stage
    leaves their text units as they are."""
    return set(json.loads(store.get_meta(RETIRING) or "[]"))


def retire_replaced(store: Store, con=None) -> int:
    """Remove the old versions of edited documents that :func:`ingest` kept (:func:`retiring`): their
    documents rows, text units and the units' extraction records, in one transaction (``con``'s,
    an open one, else its own). An update calls it in the transaction that swaps its new build in
    (:meth:`slmgraph.store.db.Store.swap_derived`), since the last complete build's tables cite those units
    until then; a build with none to keep calls it once every text unit is extracted. Their vectors go in
    the embed stage, which reads neither. Returns the text units removed."""
    doc_ids = sorted(retiring(store))
    if not doc_ids:
        return 0
    if con is None:
        with store.transaction() as own:
            return _retire(store, own, doc_ids)
    return _retire(store, con, doc_ids)


def _retire(store: Store, con, doc_ids: list[str]) -> int:
    q = ",".join("?" * len(doc_ids))
    units = [r[0] for r in con.execute(f"SELECT chunk_id FROM main.text_units WHERE doc_id IN ({q})",
                                       doc_ids).fetchall()]
    if units:
        con.execute("CREATE OR REPLACE TEMP TABLE _gone(chunk_id VARCHAR)")
        insert_rows(con, "_gone", ("chunk_id",), [(c,) for c in units])
        for table in ("text_units",) + UNIT_RECORDS:
            con.execute(f"DELETE FROM main.{table} WHERE chunk_id IN (SELECT chunk_id FROM _gone)")
        con.execute("DROP TABLE _gone")
    con.execute(f"DELETE FROM main.documents WHERE doc_id IN ({q})", doc_ids)
    store.set_meta(RETIRING, "")
    return len(units)


def kept_paths(paths, keep) -> list[str]:
    """The ``paths`` (document paths) that are one of ``keep``'s :class:`Unreadable` paths or under one."""
    tops = [u.path.rstrip("/") for u in keep]
    return [p for p in paths if any(t in (".", "") or p == t or p.startswith(t + "/") for t in tops)]


def next_unit_no(store: Store) -> int:
    """The citation number the next new text unit gets: past every number ever given in this index
    (meta ``next_unit_no``, kept when text units are removed, so a number never names another unit)."""
    top = store.con.execute("SELECT coalesce(max(unit_no), 0) FROM text_units").fetchone()[0]
    return max(int(top) + 1, int(store.get_meta("next_unit_no") or 1))


class _Batch:
    """The rows of the documents cut since the last commit, written in one transaction (:meth:`flush`)
    once :data:`COMMIT_SECONDS` have passed since the first of them or :data:`COMMIT_UNITS` text units
    are held."""

    def __init__(self, store: Store):
        self.store = store
        self.documents: list[tuple] = []  # new documents: doc_id, path, n_chars, n_tokens, title, chunking, added_at or None
        self.changed: list[list] = []  # documents indexed before: path, title, n_chars, n_tokens, chunking, doc_id
        self.units: list[tuple] = []  # new text units: the columns of ``text_units``
        self.since: float | None = None

    def flush_if_due(self) -> None:
        if self.since is None:
            self.since = time.monotonic()
        if time.monotonic() - self.since >= COMMIT_SECONDS or len(self.units) >= COMMIT_UNITS:
            self.flush()

    def flush(self) -> None:
        """Commit what is held (nothing to commit: no transaction)."""
        self.since = None
        if not (self.documents or self.changed or self.units):
            return
        with self.store.transaction() as con:
            if self.documents:
                # The time of the transaction, as current_timestamp gives it to each row.
                now = con.execute("SELECT current_timestamp::TIMESTAMP").fetchone()[0]
                insert_rows(con, "documents", ("doc_id", "path", "n_chars", "n_tokens", "title", "chunking", "added_at"),
                            [r[:6] + (now if r[6] is None else r[6],) for r in self.documents])
            for row in self.changed:
                con.execute("UPDATE documents SET path = ?, title = ?, n_chars = ?, n_tokens = ?, chunking = ? "
                            "WHERE doc_id = ?", row)
            insert_rows(con, "text_units", ("chunk_id", "doc_id", "ord", "tok_start", "tok_end", "n_tokens", "text",
                                            "char_start", "char_end", "unit_no", "no_prose"), self.units)
        self.documents, self.changed, self.units = [], [], []


def chunking_key(model_fingerprint: str, size: int, overlap: int) -> str:
    """What a document's text units depend on besides its bytes: the tokenizer's model, the unit size and
    overlap, :data:`TAIL_SHARE` and the cutting rules (:data:`CHUNKER_VERSION`); stored per document,
    ``documents.chunking``."""
    return hashlib.sha256(repr((CHUNKER_VERSION, model_fingerprint, size, overlap, TAIL_SHARE)).encode()
                          ).hexdigest()[:16]


def ingest(store: Store, docs: list[Document], tokenize, detokenize, size: int, overlap: int,
           keep: list[Unreadable] = (), chunking: str | None = None, progress: bool = False,
           on_added: Callable[[int], None] | None = None) -> IngestResult:
    """Bring ``documents`` and ``text_units`` in line with ``docs``, one document at a time.

    Unchanged text units are kept (so their extractions are kept); a document
    whose bytes and ``chunking`` key (:func:`chunking_key`) are those it was indexed
    with keeps its text units without being cut again. An indexed document
    whose file or folder is in ``keep`` (it exists but could not be read, :class:`Unreadable`)
    is kept as it is, with its text units; text units
    of removed or changed documents are deleted with their extraction records,
    mentions and claims. New text units get the next index-wide citation numbers
    (``unit_no``) in the order of ``docs`` (sorted paths) and position: a number is
    given once, when its text unit is first ingested, so adding a file never renumbers
    the text units already cited in answers (:func:`next_unit_no`).

    New and changed documents are committed with their text units in transactions of about
    :data:`COMMIT_SECONDS` of cutting each (an interrupted ingest commits the documents it finished
    before it stops; a killed one keeps those cut before the last such span), then the removals and meta ``next_unit_no`` in one (a number given before it is
    written is still the stored units' largest; the index run's store marks the index unfinished in
    the first, :class:`slmgraph.indexing.pipeline.RunStore`); when nothing changes, nothing is
    written. Memory: the text units of one such transaction, at most :data:`COMMIT_UNITS` after
    the document that reaches them (:func:`make_text_units`). ``progress`` shows a bar over the characters to cut
    (after two seconds). ``on_added``: called with the number of new text units so far after each document that
    adds some (the index run starts the extraction workers from it while ingest goes on).

    Returns:
        an :class:`IngestResult`.
    """
    con = store.con
    # Old versions an interrupted run kept (RETIRING): that run counted them edited and their units removed.
    counted = retiring(store)
    old = {r[0]: tuple(r[1:]) for r in con.execute(
        "SELECT doc_id, path, title, n_chars, n_tokens, chunking, added_at FROM documents").fetchall()}
    # An edited file keeps its place in the corpus's reading order (graph.READING_ORDER): its first version's.
    first_added = {r[0]: r[5] for doc_id, r in old.items() if doc_id not in {d.doc_id for d in docs}}
    old_units: dict[str, list[tuple[str, int]]] = {}
    for doc_id, chunk_id, n in con.execute("SELECT doc_id, chunk_id, n_tokens FROM text_units").fetchall():
        old_units.setdefault(doc_id, []).append((chunk_id, n))
    wanted_docs = {d.doc_id for d in docs}
    kept: list[str] = []
    kept_ids: set[str] = set()
    if keep:  # documents of files that exist but could not be read: not removed
        unread = {doc_id: row[0] for doc_id, row in old.items() if doc_id not in wanted_docs}
        kept = kept_paths(sorted(unread.values()), keep)
        kept_ids = {doc_id for doc_id, path in unread.items() if path in set(kept)}

    def reusable(d: Document) -> bool:
        o = old.get(d.doc_id)
        return bool(chunking) and o is not None and o[4] == chunking and o[2] == len(d.text) \
            and d.doc_id in old_units

    todo_chars = sum(len(d.text) for d in docs if not reusable(d))
    bar = tqdm(total=todo_chars, desc="ingest", unit="char", unit_scale=True, dynamic_ncols=True,
               disable=not progress or not todo_chars, delay=2.0)
    wanted_units: set[str] = set()
    tokens = unit_tokens = n_units = added = 0
    next_no = None  # the next citation number, read once (next_unit_no) when the first new unit comes
    counts = TokenCounts(tokenize)
    batch = _Batch(store)
    try:
        for d in docs:
            if reusable(d):
                ids = old_units[d.doc_id]
                n_doc = old[d.doc_id][3]
                wanted_units.update(c for c, _ in ids)
                tokens += n_doc
                unit_tokens += sum(n for _, n in ids)
                n_units += len(ids)
                if old[d.doc_id][:2] != (d.path, d.title):  # same bytes, moved or re-titled
                    with store.transaction():
                        con.execute("UPDATE documents SET path = ?, title = ? WHERE doc_id = ?",
                                    [d.path, d.title, d.doc_id])
                continue
            units, n_doc = make_text_units(d, tokenize, detokenize, size, overlap, on_chars=bar.update,
                                          counts=counts)
            have = {c for c, _ in old_units.get(d.doc_id, ())}
            new = [u for u in units if u.chunk_id not in have]
            wanted_units.update(u.chunk_id for u in units)
            tokens += n_doc
            unit_tokens += sum(u.n_tokens for u in units)
            n_units += len(units)
            row = (d.path, d.title, len(d.text), n_doc)
            o = old.get(d.doc_id)
            if o is not None and not new and o[:4] == row:
                if chunking and o[4] != chunking:  # the key alone (an index of an older version): no content
                    con.execute("UPDATE documents SET chunking = ? WHERE doc_id = ?", [chunking, d.doc_id])
                continue
            if o is None:
                batch.documents.append((d.doc_id, d.path, len(d.text), n_doc, d.title, chunking,
                                        first_added.get(d.path)))
            else:  # same bytes, moved, re-titled or cut again
                batch.changed.append([d.path, d.title, len(d.text), n_doc, chunking, d.doc_id])
            if new:
                if next_no is None:
                    next_no = next_unit_no(store)
                batch.units.extend((u.chunk_id, u.doc_id, u.ord, u.tok_start, u.tok_end, u.n_tokens, u.text,
                                    u.char_start, u.char_end, next_no + i, no_prose_passage(u.text))
                                   for i, u in enumerate(new))
                next_no += len(new)
            batch.flush_if_due()
            added += len(new)
            if on_added is not None and new:
                on_added(added)
        batch.flush()
    except BaseException:
        try:  # an interrupted ingest (Ctrl-C, a failure) still keeps the documents it finished
            batch.flush()
        except Exception:
            pass  # the first error is the one to report
        raise
    finally:
        bar.close()
    gone_docs = sorted(set(old) - wanted_docs - kept_ids)
    gone_units = sorted(c for doc_id, ids in old_units.items() if doc_id not in kept_ids
                        for c, _ in ids if c not in wanted_units)
    # An edited file's old version (another document at a path still in the input): its units whose text
    # no new unit takes over stay, with their records, until the new version's are extracted.
    wanted_paths = {d.path for d in docs}
    replaced = {doc_id for doc_id in gone_docs if old[doc_id][0] in wanted_paths}
    keep_docs: set[str] = set()
    if gone_units or gone_docs or next_no is not None:
        with store.transaction():
            if gone_units or next_no is not None:  # past every number given, before any unit holding one goes
                store.set_meta("next_unit_no", str(next_unit_no(store)))
            if gone_units:
                con.execute("CREATE OR REPLACE TEMP TABLE _gone(chunk_id VARCHAR)")
                insert_rows(con, "_gone", ("chunk_id",), [(c,) for c in gone_units])
                carry_extractions(con)
                if replaced:
                    q = ",".join("?" * len(replaced))
                    stay = [r for r in con.execute(
                        f"SELECT t.chunk_id, t.doc_id FROM text_units t JOIN _gone g USING (chunk_id) "
                        f"WHERE t.doc_id IN ({q}) AND t.chunk_id IN (SELECT chunk_id FROM extractions)",
                        sorted(replaced)).fetchall()]
                    keep_docs = {doc_id for _, doc_id in stay}
                    delete_keys(con, "_gone", ("chunk_id",), [(c,) for c, _ in stay])
                for table in ("text_units",) + UNIT_RECORDS:
                    con.execute(f"DELETE FROM {table} WHERE chunk_id IN (SELECT chunk_id FROM _gone)")
                con.execute("DROP TABLE _gone")
                # Their embeddings stay until the embed stage, which copies a vector to a new text unit
                # with the same text (an edited document's unchanged parts) and deletes the rest.
            if set(gone_docs) - keep_docs:
                delete_keys(con, "documents", ("doc_id",), [(d,) for d in gone_docs if d not in keep_docs])
            store.set_meta(RETIRING, json.dumps(sorted(keep_docs)) if keep_docs else "")
    edited_paths = {old[doc_id][0] for doc_id in replaced}
    gone_of = {c for doc_id in counted for c, _ in old_units.get(doc_id, ())}
    return IngestResult(documents=len(docs), text_units=n_units, added_units=added,
                        removed_units=len(set(gone_units) - gone_of),
                        removed_documents=len(set(gone_docs) - replaced - counted),
                        tokens=tokens, unit_tokens=unit_tokens, kept=kept, retiring=sorted(keep_docs),
                        new_documents=sum(d.doc_id not in old and d.path not in edited_paths for d in docs),
                        edited_documents=len(replaced - counted))
