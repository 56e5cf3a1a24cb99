"""Community reports in the index file: writing a report's row (:func:`store_report`), reading a
level's reports and their central members for the query engines (:func:`load_reports`,
:func:`member_names`), and which communities a model would write (:func:`largest_communities`).
"""

from __future__ import annotations

import json

from slmgraph.indexing.stages.report_data import Report
from slmgraph.model.client import ModelClient
from slmgraph.store.bulk import insert_rows
from slmgraph.store.db import Store, dumps
from slmgraph.store.rows import ReportRow, rows

def largest_communities(store: Store, limit: int | None) -> list[int]:
    """Ids of the communities a model would write a report for (not carried; two or more members, or one
    with a relationship to itself), the ``limit`` largest by member count (ties: lower id first), in that
    order; ``limit`` None = all of them."""
    con = store.con
    members: dict[int, int] = dict(con.execute(
        "SELECT community_id, count(*) FROM community_members GROUP BY 1").fetchall())
    looped = {cid for (cid,) in con.execute("""
        SELECT DISTINCT m.community_id FROM community_members m JOIN relationships r
        ON r.source_id = m.entity_id AND r.target_id = m.entity_id""").fetchall()}
    ids = [cid for (cid,) in con.execute(
        "SELECT community_id FROM communities WHERE carried_from IS NULL ORDER BY community_id").fetchall()
        if members.get(cid, 0) > 1 or cid in looped]
    ids.sort(key=lambda c: -members[c])
    return ids if limit is None else ids[:limit]

#: The columns of ``community_reports`` a report writes, in the order of :func:`report_row`.
REPORT_COLUMNS = ("community_id", "level", "title", "summary", "findings", "rating", "rating_explanation", "full_text",
                  "n_tokens", "context_tokens", "context_kind", "topic", "doc_ids")


def report_row(client: ModelClient, rep: Report) -> list:
    """The ``community_reports`` row of ``rep`` (:data:`REPORT_COLUMNS`)."""
    text = rep.full_text()
    return [rep.community_id, rep.level, rep.title, rep.summary, dumps(rep.findings), rep.rating,
            rep.rating_explanation, text, client.count(text), rep.context_tokens, rep.context_kind,
            rep.topic, dumps(rep.doc_ids or [])]


def store_report(store: Store, client: ModelClient, rep: Report) -> None:
    store_reports(store, client, [rep])


def store_reports(store: Store, client: ModelClient, reps: list[Report]) -> None:
    """Write ``reps`` (replacing a report of the same community) in one statement."""
    insert_rows(store.con, "community_reports", [report_row(client, r) for r in reps], REPORT_COLUMNS,
                verb="INSERT OR REPLACE")

def load_reports(store: Store, level: int) -> list[dict]:
    """Reports of one level as dicts (community_id, title, summary, findings, rating, full_text, n_tokens)."""
    got = rows(store, ReportRow, "SELECT community_id, title, summary, findings, rating, full_text, n_tokens "
                                 "FROM community_reports WHERE level = ? ORDER BY community_id", [level])
    return [{"community_id": r.community_id, "title": r.title, "summary": r.summary,
             "findings": json.loads(r.findings or "[]"), "rating": r.rating, "full_text": r.full_text,
             "n_tokens": r.n_tokens} for r in got]


def member_names(store: Store, community_ids: list[int], n: int = 10) -> dict[int, list[str]]:
    """``community_id -> up to n member names``, most connected first (entity degree, then id): the
    community's central entities, which an extractive answer prefers its quoted sentences to name
    (slmgraph.query.extractive.report_points)."""
    if not community_ids:
        return {}
    q = ",".join("?" * len(community_ids))
    rows = store.con.execute(f"""
        SELECT m.community_id, e.name FROM community_members m JOIN entities e USING (entity_id)
        WHERE m.community_id IN ({q}) ORDER BY m.community_id, e.degree DESC, e.entity_id""",
                             list(community_ids)).fetchall()
    out: dict[int, list[str]] = {}
    for cid, name in rows:
        if len(out.setdefault(cid, [])) < n:
            out[cid].append(name)
    return out
