"""``slmgraph stats``: what an index holds and what it cost.

Counts per table and per community level; model calls, tokens (prompt,
of which reused from the KV cache, completion) and seconds per stage from the
``llm_calls`` ledger; the grounding drop rate of the extraction records; and
wall-clock per stage of the latest index run from ``stage_runs``. Claims
(covariates) are shown only when the index holds some.
"""

from __future__ import annotations

import json

from slmgraph.store.db import Store

TABLES = ("documents", "text_units", "extractions", "entity_mentions", "relationship_mentions", "entities",
          "relationships", "communities", "community_reports", "embeddings", "llm_cache", "llm_calls")


#: Shown with the claims of an index built by a model under 1B parameters (README "Claims").
CLAIMS_NOTE = ("note: these claims were made by a model under 1B parameters: each quote is a sentence of its text "
               "unit, but the subject, type and status are often wrong (README, 'Claims'); use a larger --model "
               "for claims")


def collect(store: Store) -> dict:
    """All figures as a dict: ``tables``, ``levels``, ``ledger``, ``last_run``, ``extraction``, ``grounding``
    (see :func:`grounding`), ``gleaning`` (text units gleaning added records to, rounds, calls), ``candidates`` (offered,
    ``left_out`` over the budget, text units over it, model choices and what they dropped), ``resolution``
    (entity-resolution merges per rule), ``workers`` (extraction calls and seconds per worker in the last index
    run), ``meta``, ``claims`` (per claim-extraction status: text units, claims, dropped;
    empty without claims), ``claims_note`` (:data:`CLAIMS_NOTE` when claims were made by a model under
    1B parameters, else None)."""
    con = store.con
    out: dict = {"tables": {t: store.count(t) for t in TABLES}}
    out["tables"]["documents"], out["tables"]["text_units"] = finished_counts(store)
    n_claims = store.count("claims") if store.has_table("claims") else 0
    if n_claims:
        out["tables"]["claims"] = n_claims
    out["claims"] = []
    if n_claims and store.has_table("claim_extractions"):
        out["claims"] = [{"status": r[0], "text_units": r[1], "claims": int(r[2] or 0), "dropped": int(r[3] or 0)}
                         for r in con.execute("SELECT status, count(*), sum(n_claims), sum(n_dropped) FROM "
                                              "claim_extractions GROUP BY status ORDER BY status").fetchall()]
    out["meta"] = {k: store.get_meta(k) for k in ("model_name", "input_root", "complete", "reports")}
    params = store.get_meta("model_params")
    out["claims_note"] = CLAIMS_NOTE if n_claims and params and params.isdigit() and int(params) < 10**9 else None
    out["settings"] = settings_sources(store)
    raw_routes = store.get_meta("routes")
    out["routes"] = json.loads(raw_routes) if raw_routes else {}
    out["levels"] = [
        {"level": r[0], "communities": r[1], "reports": r[2], "mean_size": round(r[3] or 0, 2), "max_size": r[4]}
        for r in con.execute("""
            SELECT c.level, count(*), count(r.community_id), avg(c.size), max(c.size)
            FROM communities c LEFT JOIN community_reports r USING (community_id)
            GROUP BY c.level ORDER BY c.level""").fetchall()]
    out["ledger"] = [
        {"stage": r[0], "calls": r[1], "prompt_tokens": int(r[2] or 0), "cached_tokens": int(r[3] or 0),
         "completion_tokens": int(r[4] or 0), "seconds": round(r[5] or 0, 2),
         "truncated_calls": int(r[6] or 0)}
        for r in con.execute("""
            SELECT stage, count(*), sum(prompt_tokens), sum(cached_tokens), sum(completion_tokens), sum(seconds),
                   sum(CASE WHEN finish_reason <> 'stop' THEN 1 ELSE 0 END)
            FROM llm_calls GROUP BY stage
            ORDER BY CASE stage WHEN 'extract' THEN 0 WHEN 'claims' THEN 1 WHEN 'report' THEN 2 WHEN 'map' THEN 3
                                WHEN 'reduce' THEN 4 ELSE 5 END, stage""").fetchall()]
    last = con.execute("SELECT run_id FROM stage_runs WHERE stage = 'ingest' ORDER BY created_at DESC LIMIT 1").fetchone()
    out["last_run"] = []
    if last:
        out["last_run"] = [{"stage": r[0], "seconds": round(r[1], 2), "items": r[2]} for r in con.execute(
            "SELECT stage, seconds, items FROM stage_runs WHERE run_id = ? ORDER BY created_at", [last[0]]).fetchall()]
    out["extraction"] = [{"status": r[0], "text_units": r[1], "dropped_records": int(r[2] or 0)}
                         for r in con.execute("SELECT status, count(*), sum(n_dropped) FROM extractions "
                                              "GROUP BY status ORDER BY status").fetchall()]
    out["grounding"] = grounding(store)
    out["gleaning"] = {}
    if store.has_column("extractions", "gleanings"):
        units, rounds = con.execute("SELECT count(*) FILTER (WHERE gleanings > 0), coalesce(sum(gleanings), 0) "
                                    "FROM extractions").fetchone()
        calls = con.execute("SELECT count(*) FROM llm_calls WHERE stage = 'glean'").fetchone()[0]
        out["gleaning"] = {"text_units_added_to": int(units), "rounds": int(rounds), "glean_calls": int(calls)}
    out["candidates"] = {}
    if store.has_column("extractions", "n_left_out"):
        units, offered, left, choices, rejected = con.execute(
            "SELECT count(*) FILTER (WHERE n_left_out > 0), coalesce(sum(n_candidates), 0), "
            "coalesce(sum(n_left_out), 0), coalesce(sum(n_choices), 0), coalesce(sum(n_rejected), 0) "
            "FROM extractions").fetchone()
        out["candidates"] = {"offered": int(offered), "left_out": int(left), "text_units_over_budget": int(units),
                             "model_choices": int(choices), "rejected_by_choices": int(rejected)}
    out["resolution"] = {}
    if store.has_table("merge_log"):
        out["resolution"] = dict(con.execute("SELECT rule, count(*) FROM merge_log GROUP BY rule ORDER BY rule")
                                 .fetchall())
    out["workers"] = []
    if last:
        out["workers"] = [{"worker": r[0], "calls": r[1], "seconds": round(r[2] or 0, 1)} for r in con.execute(
            "SELECT worker, count(*), sum(seconds) FROM llm_calls WHERE run_id = ? AND stage IN ('extract', 'glean') "
            "GROUP BY worker ORDER BY worker", [last[0]]).fetchall()]
    return out


def finished_counts(store: Store) -> tuple[int, int]:
    """``(documents, text units)`` as the index holds them once its update, if one is unfinished, has finished.

    An update keeps an edited file's old version (its ``documents`` row and the text units the last complete
    build cites) beside the new one until its new build is swapped in
    (:func:`slmgraph.indexing.stages.ingest.retire_replaced`), so the raw tables count that file twice. Both
    versions have the file's path; the one kept is the newest, whose text units carry the highest numbers
    (numbers are given in ingestion order, :func:`slmgraph.indexing.stages.ingest.next_unit_no`). On a complete
    index the counts are the tables' rows. An index of schema version 1 opened read-only (no ``unit_no``) is
    counted by its rows.
    """
    if not store.has_column("text_units", "unit_no"):
        return store.count("documents"), store.count("text_units")
    n_docs, n_units = store.con.execute("""
        WITH versions AS (
            SELECT d.doc_id, coalesce(d.path, d.doc_id) AS path, max(t.unit_no) AS newest, count(t.chunk_id) AS units
            FROM documents d LEFT JOIN text_units t USING (doc_id) GROUP BY d.doc_id, d.path),
        kept AS (SELECT * FROM versions
                 QUALIFY row_number() OVER (PARTITION BY path ORDER BY newest DESC NULLS LAST, doc_id) = 1)
        SELECT count(*), coalesce(sum(units), 0) FROM kept""").fetchone()
    return int(n_docs), int(n_units)


def settings_sources(store: Store) -> dict:
    """The last index run's settings with where each came from: ``{key: {"value", "source"}}`` in the
    order of ``slmgraph.config.file.SPEC`` (source ``flag --x``, ``file PATH``, ``argument`` or
    ``default``); {} for an index written before sources were recorded."""
    import json

    from slmgraph.config.file import SPEC

    raw = store.get_meta("settings_sources")
    if not raw:
        return {}
    rec = json.loads(raw)
    return {k.name: rec[k.name] for k in SPEC if k.name in rec}


def grounding(store: Store) -> dict:
    """Grounding drop figures of an index's current extraction records.

    Returns:
        dict: ``entities_before`` (entities extracted before grounding =
        kept + ungrounded), ``ungrounded`` (dropped because their names do not
        occur in their text unit), ``rate`` (ungrounded / entities_before,
        0..1; None when nothing was extracted). Records written before the
        ``n_ungrounded`` column existed (or an older index opened read-only)
        count as 0 dropped; an older index opened read-only gives ``unknown``.
    """
    if not store.has_column("extractions", "n_ungrounded"):
        return {"entities_before": None, "ungrounded": None, "rate": None, "unknown": True}
    dropped_col = "n_ungrounded"
    kept, dropped = store.con.execute(
        f"SELECT coalesce(sum(n_entities), 0), coalesce(sum({dropped_col}), 0) FROM extractions").fetchone()
    before = int(kept) + int(dropped)
    return {"entities_before": before, "ungrounded": int(dropped),
            "rate": round(int(dropped) / before, 4) if before else None}


def _table(headers: list[str], rows: list[list], text_columns: int = 1) -> str:
    """Rows as aligned plain text: the first ``text_columns`` columns left-aligned (words), the rest right (figures)."""
    cells = [headers] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) if i < text_columns else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
             for r in cells]
    return "\n".join(lines)


def render(figs: dict, db: str) -> str:
    """The figures of :func:`collect` as plain-text tables."""
    m = figs["meta"]
    out = [f"index {db}: model {m.get('model_name') or '?'}, input {m.get('input_root') or '?'}"
           + ("" if m.get("complete") == "1" else "  (INCOMPLETE: re-run 'slmgraph index' to finish)"), ""]
    out.append(_table(["table", "rows"], [[t, n] for t, n in figs["tables"].items()]))
    if figs["levels"]:
        out += ["", _table(["level", "communities", "reports", "mean size", "max size"],
                           [[r["level"], r["communities"], r["reports"], r["mean_size"], r["max_size"]]
                            for r in figs["levels"]])]
    if m.get("reports") == "skipped":
        out += ["", "community reports: skipped (indexed with --no-reports): answer global questions with "
                    "--method lazy"]
    if figs["extraction"]:
        out += ["", _table(["extraction status", "text units", "dropped records"],
                           [[r["status"], r["text_units"], r["dropped_records"]] for r in figs["extraction"]])]
    g = figs.get("grounding") or {}
    if g.get("unknown"):
        out += ["", "grounding: not recorded (this index predates grounding counts; re-index to get them)"]
    elif g.get("entities_before"):
        out += ["", f"grounding: {g['ungrounded']} of {g['entities_before']} extracted entities dropped "
                    f"({100 * g['rate']:.1f} %): names not found in their text unit"]
    ca = figs.get("candidates") or {}
    if ca:
        line = (f"candidates: {ca['offered']} within the budget; {ca['left_out']} left out (over --max-candidates) "
                f"in {ca['text_units_over_budget']} text units")
        if ca["model_choices"]:
            line += f"; {ca['model_choices']} model choices dropped {ca['rejected_by_choices']} candidates or pairs"
        out += ["", line]
    gl = figs.get("gleaning") or {}
    if gl.get("glean_calls"):
        out += ["", f"gleaning: {gl['glean_calls']} model calls; records added to {gl['text_units_added_to']} "
                    f"text units in {gl['rounds']} rounds"]
    if figs.get("resolution"):
        out += ["", "entity resolution merges: " + ", ".join(f"{k} {v}" for k, v in figs["resolution"].items())
                + " (table merge_log)"]
    if len(figs.get("workers") or []) > 1:
        out += ["", "extraction per worker (last index run):",
                _table(["worker", "calls", "seconds"], [[r["worker"], r["calls"], r["seconds"]]
                                                       for r in figs["workers"]])]
    if figs.get("claims"):
        out += ["", _table(["claims status", "text units", "claims", "dropped claims"],
                           [[r["status"], r["text_units"], r["claims"], r["dropped"]] for r in figs["claims"]])]
        if figs.get("claims_note"):
            out.append(figs["claims_note"])
    if figs["ledger"]:
        rows = []
        for r in figs["ledger"]:
            gen_rate = r["completion_tokens"] / r["seconds"] if r["seconds"] else 0
            rows.append([r["stage"], r["calls"], r["prompt_tokens"], r["cached_tokens"],
                         r["prompt_tokens"] - r["cached_tokens"], r["completion_tokens"], f"{r['seconds']:.1f}",
                         f"{gen_rate:.0f}", r["truncated_calls"]])
        out += ["", "model calls per stage (all runs, from the ledger):",
                _table(["stage", "calls", "prompt tok", "reused tok", "evaluated tok", "completion tok", "seconds",
                        "compl tok/s", "not 'stop'"], rows)]
    if figs.get("routes"):
        out += ["", "who did each stage in the last index run (slmgraph.model.policy; queries decide answers, opening "
                    "and helpfulness again):",
                _table(["setting", "route", "why"], [[k, v["route"], v["reason"]] for k, v in figs["routes"].items()],
                       text_columns=3)]
    if figs.get("settings"):
        from collections import Counter

        from slmgraph.config.settings import Settings
        from slmgraph.config.file import report

        defaults = report(Settings(), {})
        changed = {k: v for k, v in figs["settings"].items()
                   if k not in defaults or v["value"] != defaults[k]["value"] or not v["source"].startswith(("default", "file"))}
        rest = Counter(v["source"] for k, v in figs["settings"].items() if k not in changed)
        out += ["", "settings of the last index run that differ from the defaults or were given as flags or arguments (all with --json):",
                _table(["setting", "value", "from"], [[k, v["value"], v["source"]] for k, v in changed.items()],
                       text_columns=3)
                if changed else "  (none)",
                "the others are at their defaults, set by: " + ", ".join(f"{src} ({n})" for src, n in rest.items())]
    if figs["last_run"]:
        out += ["", "wall-clock of the last index run:",
                _table(["stage", "seconds", "items"], [[r["stage"], f"{r['seconds']:.1f}", r["items"]]
                                                       for r in figs["last_run"]])]
    return "\n".join(out)


def content_snapshot(db) -> dict:
    """What an index holds, by names rather than ids, to compare two indexes of the same input
    (determinism, resume after a kill, local vs Ray executor; ARCHITECTURE.md "Resumable").

    Args:
        db: the ``.duckdb`` file (opened read-only and closed again).

    Returns:
        dict of sorted row lists: ``extractions`` (chunk id, cache key, status, raw output),
        ``entities`` (norm, type, description), ``relationships`` (source norm, target norm,
        description, weight), ``communities`` (level, member norms), ``reports`` (level,
        full text, context kind); and the extraction ledger: ``extract_calls`` (calls made),
        ``extract_repeats`` (cache keys called more than once: work done twice) and
        ``workers`` (the set of worker ids that made model calls).

    Raises:
        UserError: as :class:`slmgraph.store.db.Store` (missing file, not an index, held by a writer).
    """
    st = Store(db, read_only=True)
    try:
        q = st.con.execute
        return {
            "extractions": q("SELECT chunk_id, cache_key, status, raw FROM extractions ORDER BY 1").fetchall(),
            "entities": q("SELECT norm, type, description FROM entities ORDER BY 1").fetchall(),
            "relationships": q("SELECT s.norm, t.norm, r.description, r.weight FROM relationships r "
                               "JOIN entities s ON s.entity_id = r.source_id JOIN entities t "
                               "ON t.entity_id = r.target_id ORDER BY 1, 2").fetchall(),
            "communities": q("SELECT c.level, list(e.norm ORDER BY e.norm) FROM communities c JOIN "
                             "community_members m USING (community_id) JOIN entities e USING (entity_id) "
                             "GROUP BY c.community_id, c.level ORDER BY 1, 2").fetchall(),
            "reports": q("SELECT level, full_text, context_kind FROM community_reports ORDER BY 1, 2").fetchall(),
            "extract_calls": q("SELECT count(*) FROM llm_calls WHERE stage = 'extract'").fetchone()[0],
            "extract_repeats": q("SELECT count(*) FROM (SELECT key FROM llm_calls WHERE stage = 'extract' "
                                 "GROUP BY key HAVING count(*) > 1)").fetchone()[0],
            "workers": {w for (w,) in q("SELECT DISTINCT worker FROM llm_calls").fetchall()},
        }
    finally:
        st.close()


#: The keys of :func:`content_snapshot` that hold the index's content (not its ledger).
CONTENT_KEYS = ("extractions", "entities", "relationships", "communities", "reports")
