"""Row types: one named tuple per table the stages read back, and :func:`rows`, which reads a SELECT into them.

Fields are named and ordered as the columns of :data:`slmgraph.store.schema.DDL`; a row read with
:func:`rows` from a SELECT of some columns has None in the others.
"""

from __future__ import annotations

from typing import NamedTuple, TypeVar


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
        source: a :class:`slmgraph.store.db.Store` or a DuckDB connection.
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
