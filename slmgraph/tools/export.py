"""``slmgraph export``: the index as GraphML, or as Parquet/CSV tables shaped like microsoft/graphrag's output.

* ``graphml``: ``graph.graphml`` written by igraph (``Graph.write_graphml``; opens in Gephi,
  networkx, igraph). Nodes are entities with ``name``, ``type``, ``description``, ``degree``,
  ``frequency`` and ``community_level_N`` (the entity's community id at level N, -1 if none) for
  every level; edges are relationships with ``weight``, ``description``, ``strength`` and
  ``combined_degree``.
* ``parquet`` / ``csv``: ``documents``, ``text_units``, ``entities``, ``relationships``,
  ``communities``, ``community_reports`` (and ``covariates`` when the index has claims), each
  written by DuckDB's ``COPY (SELECT ...) TO`` (DuckDB docs, "COPY Statement"). Column names
  follow graphrag's documented output schema (microsoft/graphrag ``docs/index/outputs.md``) where a
  column exists in both; docs/export.md gives the mapping. Ids are strings (graphrag's
  ``id`` is a string), ``human_readable_id`` the integer id slmgraph cites in answers.
"""

from __future__ import annotations

from pathlib import Path

from slmgraph.errors import UserError, echo_repr
from slmgraph.outputs import output_folder
from slmgraph.store.db import Store
from slmgraph.store.rows import EntityRow, RelationshipRow, rows

FORMATS = ("graphml", "parquet", "csv")

#: graphrag table name -> SELECT producing it from slmgraph's tables (DDL in store/schema.py).
TABLES: dict[str, str] = {
    "documents": """
        SELECT d.doc_id AS id,
               (row_number() OVER (ORDER BY d.path)) - 1 AS human_readable_id,
               d.path AS title,
               NULL::VARCHAR AS text,  -- slmgraph keeps text units, not the documents' full text
               list(t.chunk_id ORDER BY t.ord) FILTER (WHERE t.chunk_id IS NOT NULL) AS text_unit_ids,
               strftime(d.added_at, '%Y-%m-%dT%H:%M:%S') AS creation_date,
               NULL::VARCHAR AS metadata,
               d.n_chars, d.n_tokens
        FROM documents d LEFT JOIN text_units t USING (doc_id)
        GROUP BY d.doc_id, d.path, d.added_at, d.n_chars, d.n_tokens
        ORDER BY d.path""",
    "text_units": """
        SELECT t.chunk_id AS id,
               {unit_no} AS human_readable_id,
               t.text, t.n_tokens,
               [t.doc_id] AS document_ids,
               coalesce((SELECT list(CAST(e.entity_id AS VARCHAR) ORDER BY e.entity_id)
                         FROM entity_text_units e WHERE e.chunk_id = t.chunk_id), []) AS entity_ids,
               coalesce((SELECT list(CAST(r.rel_id AS VARCHAR) ORDER BY r.rel_id)
                         FROM relationship_text_units r WHERE r.chunk_id = t.chunk_id), []) AS relationship_ids,
               {covariate_ids} AS covariate_ids,
               t.doc_id, t.ord, t.tok_start, t.tok_end
        FROM text_units t ORDER BY human_readable_id""",
    "entities": """
        SELECT CAST(e.entity_id AS VARCHAR) AS id, e.entity_id AS human_readable_id,
               e.name AS title, e.type, e.description,
               coalesce((SELECT list(u.chunk_id ORDER BY u.chunk_id) FROM entity_text_units u
                         WHERE u.entity_id = e.entity_id), []) AS text_unit_ids,
               (SELECT count(DISTINCT u.chunk_id) FROM entity_text_units u WHERE u.entity_id = e.entity_id)
                   AS frequency,
               e.degree, 0.0 AS x, 0.0 AS y,
               e.n_mentions
        FROM entities e ORDER BY e.entity_id""",
    "relationships": """
        SELECT CAST(r.rel_id AS VARCHAR) AS id, r.rel_id AS human_readable_id,
               s.name AS source, t.name AS target, r.description, r.weight, r.combined_degree,
               coalesce((SELECT list(u.chunk_id ORDER BY u.chunk_id) FROM relationship_text_units u
                         WHERE u.rel_id = r.rel_id), []) AS text_unit_ids,
               r.strength
        FROM relationships r JOIN entities s ON s.entity_id = r.source_id JOIN entities t ON t.entity_id = r.target_id
        ORDER BY r.rel_id""",
    "communities": """
        SELECT CAST(c.community_id AS VARCHAR) AS id, c.community_id AS human_readable_id,
               c.community_id AS community, c.level, coalesce(c.parent_id, -1) AS parent,
               coalesce((SELECT list(k.community_id ORDER BY k.community_id) FROM communities k
                         WHERE k.parent_id = c.community_id), []) AS children,
               coalesce(rep.title, 'Community ' || c.community_id) AS title,
               coalesce((SELECT list(CAST(m.entity_id AS VARCHAR) ORDER BY m.entity_id) FROM community_members m
                         WHERE m.community_id = c.community_id), []) AS entity_ids,
               coalesce((SELECT list(CAST(r.rel_id AS VARCHAR) ORDER BY r.rel_id) FROM relationships r
                         WHERE r.source_id IN (SELECT entity_id FROM community_members WHERE community_id = c.community_id)
                           AND r.target_id IN (SELECT entity_id FROM community_members WHERE community_id = c.community_id)),
                        []) AS relationship_ids,
               coalesce((SELECT list(DISTINCT u.chunk_id ORDER BY u.chunk_id) FROM entity_text_units u
                         JOIN community_members m ON m.entity_id = u.entity_id
                         WHERE m.community_id = c.community_id), []) AS text_unit_ids,
               strftime(current_date, '%Y-%m-%d') AS period,
               c.size
        FROM communities c LEFT JOIN community_reports rep USING (community_id)
        ORDER BY c.level, c.community_id""",
    "community_reports": """
        SELECT CAST(r.community_id AS VARCHAR) AS id, r.community_id AS human_readable_id,
               r.community_id AS community, r.level, coalesce(c.parent_id, -1) AS parent,
               coalesce((SELECT list(k.community_id ORDER BY k.community_id) FROM communities k
                         WHERE k.parent_id = r.community_id), []) AS children,
               r.title, r.summary, r.full_text AS full_content, r.rating AS rank, r.rating_explanation,
               from_json(coalesce(r.findings, '[]'), '[{"summary": "VARCHAR", "explanation": "VARCHAR"}]')
                   AS findings,
               json_object('title', r.title, 'summary', r.summary, 'rating', r.rating,
                           'rating_explanation', r.rating_explanation,
                           'findings', json(coalesce(r.findings, '[]')))::VARCHAR AS full_content_json,
               strftime(current_date, '%Y-%m-%d') AS period,
               c.size, r.n_tokens, r.context_kind
        FROM community_reports r LEFT JOIN communities c USING (community_id)
        ORDER BY r.level, r.community_id""",
}

COVARIATES = """
    SELECT CAST(c.claim_id AS VARCHAR) AS id, c.claim_id AS human_readable_id, 'claim' AS covariate_type,
           c.type, c.description, coalesce(s.name, c.subject_norm) AS subject_id,
           coalesce(o.name, c.object_norm) AS object_id, c.status, c.start_date, c.end_date,
           c.source_quote AS source_text, c.chunk_id AS text_unit_id
    FROM claims c LEFT JOIN entities s ON s.norm = c.subject_norm LEFT JOIN entities o ON o.norm = c.object_norm
    ORDER BY c.claim_id"""


def _check(store: Store, out: str | Path, fmt: str) -> Path:
    if fmt not in FORMATS:
        raise UserError(f"--format {echo_repr(fmt)} is not one of {', '.join(FORMATS)}")
    if store.get_meta("complete") != "1":
        raise UserError(f"index {store.path} is not complete: re-run 'slmgraph index' on its input to finish it")
    return output_folder(out)  # created with its parents; files of the same names are overwritten (slmgraph.outputs)


def export(store: Store, out: str | Path, fmt: str = "parquet") -> list[Path]:
    """Write the index ``store`` into folder ``out`` as ``graphml``, ``parquet`` or ``csv``.

    Returns:
        The files written (``graph.graphml``, or one ``<table>.parquet``/``.csv`` per table).

    Raises:
        UserError: unknown format, incomplete index, ``out`` not a creatable folder (a missing one is
            created with its parents; files of the same names are overwritten: :mod:`slmgraph.outputs`).
    """
    out = _check(store, out, fmt)
    if fmt == "graphml":
        return [write_graphml(store, out / "graph.graphml")]
    written = []
    for name, sql in table_queries(store).items():
        path = out / f"{name}.{fmt}"
        opts = "FORMAT parquet" if fmt == "parquet" else "FORMAT csv, HEADER true"
        if fmt == "csv":
            sql = _json_nested(store, sql)
        target = str(path).replace("'", "''")
        store.con.execute(f"COPY ({sql}) TO '{target}' ({opts})")
        written.append(path)
    return written


def _json_nested(store: Store, sql: str) -> str:
    """``sql`` with each list, struct or map column written as JSON text (``["a", "b"]``), so a CSV reader can
    parse it with any JSON parser; DuckDB's own CSV form of a list (``[a, b]``) quotes none of its strings."""
    cols = store.con.execute(f"DESCRIBE ({sql})").fetchall()
    nested = ("[]", "STRUCT", "MAP")
    if not any(any(m in str(c[1]) for m in nested) for c in cols):
        return sql
    picks = [f'to_json("{c[0]}") AS "{c[0]}"' if any(m in str(c[1]) for m in nested) else f'"{c[0]}"' for c in cols]
    return f"SELECT {', '.join(picks)} FROM ({sql})"


def table_queries(store: Store) -> dict[str, str]:
    """``{graphrag table name: SELECT}`` for ``store`` (``covariates`` only when it has claims)."""
    has_claims = store.has_table("claims") and store.count("claims") > 0
    cov_ids = ("coalesce((SELECT list(CAST(c.claim_id AS VARCHAR) ORDER BY c.claim_id) FROM claims c "
               "WHERE c.chunk_id = t.chunk_id), [])" if store.has_table("claims") else "[]::VARCHAR[]")
    # A text unit's human_readable_id is the number answers cite (slmgraph.query.answer.unit_numbers): the stored
    # unit_no, or for an index of schema version 1 not yet migrated the numbering that version cited.
    unit_no = "t.unit_no" if store.has_unit_numbers() else "row_number() OVER (ORDER BY t.doc_id, t.ord)"
    queries = {name: sql.replace("{covariate_ids}", cov_ids).replace("{unit_no}", unit_no)
               for name, sql in TABLES.items()}
    if has_claims:
        queries["covariates"] = COVARIATES
    return queries


def graph(store: Store):
    """The entity graph as an ``igraph.Graph`` with the attributes :func:`write_graphml` writes.

    Vertices are in ``entity_id`` order; ``community_level_N`` is -1 for an entity with no
    community at level N.
    """
    import igraph as ig

    con = store.con
    ents = rows(con, EntityRow, "SELECT entity_id, name, type, description, degree, n_mentions FROM entities "
                                "ORDER BY entity_id")
    index = {e.entity_id: i for i, e in enumerate(ents)}
    rels = rows(con, RelationshipRow, "SELECT source_id, target_id, weight, description, strength, combined_degree "
                                      "FROM relationships ORDER BY rel_id")
    rels = [r for r in rels if r.source_id in index and r.target_id in index]
    g = ig.Graph(n=len(ents), edges=[(index[r.source_id], index[r.target_id]) for r in rels], directed=False)
    g.vs["entity_id"] = [int(e.entity_id) for e in ents]
    g.vs["name"] = [e.name or "" for e in ents]
    g.vs["type"] = [e.type or "" for e in ents]
    g.vs["description"] = [e.description or "" for e in ents]
    g.vs["degree"] = [int(e.degree or 0) for e in ents]
    g.vs["frequency"] = [int(e.n_mentions or 0) for e in ents]
    levels = [r[0] for r in con.execute("SELECT DISTINCT level FROM communities ORDER BY 1").fetchall()]
    for level in levels:
        member = dict(con.execute("SELECT m.entity_id, m.community_id FROM community_members m JOIN communities c "
                                  "USING (community_id) WHERE c.level = ?", [level]).fetchall())
        g.vs[f"community_level_{level}"] = [int(member.get(e.entity_id, -1)) for e in ents]
    g.es["weight"] = [float(r.weight or 0) for r in rels]
    g.es["description"] = [r.description or "" for r in rels]
    g.es["strength"] = [float(r.strength or 0) for r in rels]
    g.es["combined_degree"] = [int(r.combined_degree or 0) for r in rels]
    return g


def write_graphml(store: Store, path: str | Path) -> Path:
    """Write :func:`graph` to ``path`` with igraph's GraphML writer; returns ``path``."""
    path = Path(path)
    graph(store).write_graphml(str(path))
    return path
