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

#: The columns :func:`store_reports` fills, in the order of :func:`report_row`.
REPORT_COLUMNS = ("community_id", "level", "title", "summary", "findings", "rating", "rating_explanation", "full_text",
                  "n_tokens", "context_tokens", "context_kind", "topic", "doc_ids")
#: Reports a :class:`ReportWriter` holds before it writes them.
WRITE_STEP = 1000


def report_row(client: ModelClient, rep: Report) -> tuple:
    """The ``community_reports`` row of ``rep`` (values of :data:`REPORT_COLUMNS`; ``n_tokens`` counted with
    ``client``)."""
    text = rep.full_text()
    return (rep.community_id, rep.level, rep.title, rep.summary, dumps(rep.findings), rep.rating,
            rep.rating_explanation, text, client.count(text), rep.context_tokens, rep.context_kind, rep.topic,
            dumps(rep.doc_ids or []))


def store_reports(store: Store, client: ModelClient, reps: list[Report]) -> None:
    """Write the rows of ``reps`` (distinct communities; a stored report of one is replaced) in one insert."""
    insert_rows(store.con, "community_reports", REPORT_COLUMNS, [report_row(client, r) for r in reps],
                replace=("community_id",))


def store_report(store: Store, client: ModelClient, rep: Report) -> None:
    """Write the row of one report (:func:`store_reports`)."""
    store_reports(store, client, [rep])


class ReportWriter:
    """Writes a stage's reports in the order they are made, many per statement.

    A report that comes with ledger rows or cache entries (a model call made by a worker) is committed at
    once with them and with the reports held before it, so a killed run keeps every model output it paid
    for; the others (written from the data, or by this process's client, which committed its own calls)
    are held, up to :data:`WRITE_STEP`, since the stage rewrites all reports on every run anyway.
    """

    def __init__(self, store: Store, client: ModelClient):
        self.store, self.client = store, client
        self.held: list[Report] = []

    def add(self, rep: Report, calls=(), puts=()) -> None:
        """Write ``rep`` (with ``calls``: ``record_call`` rows, ``puts``: ``cache_put`` rows) or hold it."""
        self.held.append(rep)
        if calls or puts or len(self.held) >= WRITE_STEP:
            self.flush(calls=calls, puts=puts)

    def flush(self, more: list[Report] = (), calls=(), puts=()) -> None:
        """Commit the held reports and ``more`` (with ``calls`` and ``puts``) in one transaction."""
        reps, self.held = self.held + list(more), []
        if not reps and not calls and not puts:
            return
        with self.store.transaction():
            store_reports(self.store, self.client, reps)
            for row in calls:
                self.store.record_call(*row)
            for put in puts:
                self.store.cache_put(*put)


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
