"""Read-only look-ups over an open index for people and pages: entities, their neighbourhood and
mentions, community reports by level, documents and their text units, and the passage behind a
citation with its supporting sentences located.

Every function takes an open :class:`slmgraph.store.db.Store` (read-only is enough) and returns plain
JSON-serialisable dicts and lists; :class:`slmgraph.api.Index` exposes them and ``slmgraph serve``
serves them as JSON. Text units are named by their citation number (``text_units.unit_no``,
:func:`slmgraph.query.answer.unit_numbers`), as answers cite them.
"""

from __future__ import annotations

import json
import numbers
import re

from slmgraph.errors import UserError, echo_repr
from slmgraph.text.prose import sentence_spans, sentences, word_set
from slmgraph.query.answer import check_citations, unit_numbers
from slmgraph.query.named import entities_named

#: Word-set Jaccard similarity at which a passage's sentence counts as the one a point copied.
SUPPORT_SHARE = 0.6


class _AnyId:
    """Stands for "every id" in :func:`slmgraph.query.answer.check_citations`, so it parses citations without checking them."""

    def __contains__(self, i) -> bool:
        return isinstance(i, int) and i >= 0


def cited(text: str) -> dict[str, list[int]]:
    """The ids a text cites, by kind (``reports``, ``entities``, ``relationships``, ``sources``), parsed with
    the answer engines' own citation grammar (:func:`slmgraph.query.answer.check_citations`); kinds without ids left out."""
    kinds = ("reports", "entities", "relationships", "sources")
    _, kept, _ = check_citations(text, {k: _AnyId() for k in kinds})
    return {k: v for k, v in kept.items() if v}


_CITE = re.compile(r"\s*\[[^\[\]]*\b(?:Reports?|Entit(?:y|ies)|Relationships?|Sources?|Data)\b[^\[\]]*\]", re.I)
_HEAD = re.compile(r"^\*\*(.+?)\*\*:\s*")


def answer_points(ans) -> list[dict]:
    """The points of an answer: ``[{head, text, citations: {kind: [ids]}}]``.

    Uses ``ans.points`` when the engine gives structured points (a list of dicts or objects with
    ``text`` and ``sources``/``ids``); otherwise splits ``ans.text`` into its bullet lines and
    paragraphs (the trailing ``Sources:`` line left out), each with the citations it carries.
    """
    structured = getattr(ans, "points", None)
    if structured:
        out = []
        for p in structured:
            get = p.get if isinstance(p, dict) else (lambda k, _p=p: getattr(_p, k, None))
            cites = get("sources") or get("citations") or {}
            if isinstance(cites, list):
                cites = {"reports" if ans.method == "global" else "sources": cites}
            out.append({"head": get("head") or "", "text": get("text") or "", "citations": dict(cites)})
        return out
    body = ans.text.rsplit("\n\nSources:", 1)[0]
    points = []
    for block in re.split(r"\n\s*\n|\n(?=\s*(?:[-*]|\d+\.)\s)", body):
        line = re.sub(r"^\s*(?:[-*]|\d+\.)\s+", "", block.strip())
        if not line or line.startswith("Sources:"):
            continue
        m = _HEAD.match(line)
        head, rest = (m.group(1), line[m.end():]) if m else ("", line)
        points.append({"head": head, "text": _CITE.sub("", rest).strip(), "citations": cited(rest)})
    return points


MAX_LIMIT = 10_000
MAX_ID = 2**63 - 1  # DuckDB's BIGINT, the type of every id column


def whole_number(name: str, value, lo: int, hi: int) -> int:
    """``value`` (an int or an int-like string) as an int in ``lo..hi``.

    Raises:
        UserError: one line naming ``name``, the value and the allowed range.
    """
    n = None
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        n = int(value)
    elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
        n = int(value)
    if n is None or not lo <= n <= hi:
        raise UserError(f"{name} must be a whole number from {lo} to {hi}, got {echo_repr(value)}")
    return n


def _limit(value) -> int:
    return whole_number("limit", value, 0, MAX_LIMIT)


def _id(name: str, value) -> int:
    return whole_number(name, value, 0, MAX_ID)


def _ids(name: str, values) -> list[int]:
    """``values`` (a list of ids, or one id) as ints.

    Raises:
        UserError: a value that is not a whole id (named), or ``values`` neither a list nor an id.
    """
    if isinstance(values, (str, numbers.Integral)):
        values = [values]
    try:
        items = list(values)
    except TypeError:
        raise UserError(f"{name} ids must be a list of whole numbers, got {echo_repr(values)}") from None
    return [_id(name, v) for v in items]


def _text(name: str, value) -> str:
    if not isinstance(value, str):
        raise UserError(f"{name} must be text, got {echo_repr(value)}")
    return value


def _unit_maps(store) -> tuple[dict, dict]:
    """``(chunk_id -> unit number, unit number -> chunk_id)``."""
    nums = unit_numbers(store)
    return nums, {n: c for c, n in nums.items()}


def _doc_columns(store) -> str:
    return "title" if store.has_column("documents", "title") else "NULL AS title"


def support_spans(text: str, support: str) -> list[list[int]]:
    """``[[start, end], ...]``: the sentences of ``text`` (:func:`slmgraph.text.prose.sentence_spans`) that match a
    sentence of ``support`` (word-set Jaccard similarity at least :data:`SUPPORT_SHARE`); else the closest one
    if its similarity is at least half that; else none."""
    wanted = [w for w in (word_set(x) for x in sentences(support) or [support]) if w]
    if not wanted:
        return []
    best, best_sim, out = None, 0.0, []
    for a, b in sentence_spans(text):
        words = word_set(text[a:b])
        if not words:
            continue
        sim = max(len(words & w) / len(words | w) for w in wanted)
        if sim >= SUPPORT_SHARE:
            out.append([a, b])
        if sim > best_sim:
            best, best_sim = [a, b], sim
    return out or ([best] if best and best_sim >= SUPPORT_SHARE / 2 else [])


def name_spans(text: str, name: str) -> list[list[int]]:
    """``[[start, end], ...]``: where ``name`` occurs in ``text`` (case-insensitive, on word boundaries)."""
    if not name.strip():
        return []
    pat = re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, name.split())) + r"(?!\w)", re.I)
    return [[m.start(), m.end()] for m in pat.finditer(text)]


def _unit_dict(row, number: int, of: int) -> dict:
    chunk_id, doc_id, ord_, n_tokens, text, title, path = row
    return {"unit": number, "chunk_id": chunk_id, "text": text, "n_tokens": n_tokens, "position": ord_ + 1, "of": of,
            "document": {"doc_id": doc_id, "title": title or path, "path": path}}


def text_unit(store, number: int, support: str | None = None) -> dict:
    """Text unit ``number`` (its citation number) with its document.

    Returns:
        ``{unit, chunk_id, text, n_tokens, position (1-based in its document), of (units in the document),
        document: {doc_id, title, path}, highlight: [[start, end], ...]}``; ``highlight`` holds the sentences
        supporting ``support`` (:func:`support_spans`), else is empty.

    Raises:
        UserError: no text unit has that number.
    """
    number = _id("text unit", number)
    _, by_no = _unit_maps(store)
    chunk = by_no.get(number)
    if chunk is None:
        raise UserError(_missing_unit(store, number, by_no))
    row = store.con.execute(
        "SELECT t.chunk_id, t.doc_id, t.ord, t.n_tokens, t.text, d.title, d.path, "
        "(SELECT count(*) FROM text_units u WHERE u.doc_id = t.doc_id) "
        f"FROM text_units t JOIN (SELECT doc_id, path, {_doc_columns(store)} FROM documents) d USING (doc_id) "
        "WHERE t.chunk_id = ?", [chunk]).fetchone()
    out = _unit_dict(row[:7], int(number), row[7])
    out["highlight"] = support_spans(row[4], support) if support else []
    return out


def _missing_unit(store, number: int, by_no: dict) -> str:
    """The one line saying text unit ``number`` is not in the index: removed by an update when the number was
    given (each is given once, below meta ``next_unit_no``), and the numbers the index holds."""
    if not by_no:
        return f"text unit {number} is not in this index: it holds no text units"
    lo, hi = min(by_no), max(by_no)
    held = f"the index holds text units {lo}..{hi}"
    if len(by_no) < hi - lo + 1:
        held += ", with gaps where updates removed some"
    given = max(int(store.get_meta("next_unit_no") or 0), hi + 1) if store.has_unit_numbers() else 0
    if 1 <= number < given:
        return (f"text unit {number} is not in this index: an update removed it (its document was edited or "
                f"deleted); {held}")
    return f"text unit {number} is not in this index: {held}"


def unit_documents(store, numbers) -> dict[int, dict]:
    """``{unit number: {doc_id, title, path, position, of}}`` for the given text-unit numbers (unknown ones left
    out); one number (an int or an int-like string) is taken as a list of one.

    Raises:
        UserError: a value that is not a whole number (named), or ``numbers`` not a list of them.
    """
    wanted = _ids("text unit", numbers)
    nums, by_no = _unit_maps(store)
    chunks = [by_no[n] for n in wanted if n in by_no]
    if not chunks:
        return {}
    rows = store.con.execute(
        f"SELECT t.chunk_id, t.doc_id, t.ord, d.title, d.path, "
        "(SELECT count(*) FROM text_units u WHERE u.doc_id = t.doc_id) "
        f"FROM text_units t JOIN (SELECT doc_id, path, {_doc_columns(store)} FROM documents) d USING (doc_id) "
        f"WHERE t.chunk_id IN ({', '.join('?' * len(chunks))})", chunks).fetchall()
    return {nums[c]: {"doc_id": d, "title": t or p, "path": p, "position": o + 1, "of": n}
            for c, d, o, t, p, n in rows}


def entities(store, query: str = "", limit: int = 50) -> list[dict]:
    """Entities whose name contains ``query`` (case-insensitive; all when empty), best connected first.

    Returns:
        ``[{id, name, type, degree, mentions, description}]``, at most ``limit``.

    Raises:
        UserError: ``query`` is not text, ``limit`` is not a whole number from 0 to :data:`MAX_LIMIT`.
    """
    limit = _limit(limit)
    query = _text("the entity query", query)
    cols = "SELECT entity_id, name, type, degree, n_mentions, description FROM entities "
    rows = store.con.execute(
        cols + "WHERE name ILIKE ? ESCAPE '\\' ORDER BY (lower(name) = lower(?)) DESC, degree DESC, name LIMIT ?",
        [f"%{_like(query.strip())}%", query.strip(), int(limit)]).fetchall()
    named = entities_named(store, query) if query.strip() else []
    if named:
        # A name written otherwise than stored ("Peggy Doyle" of `Margaret "Peggy" Doyle`) is found by
        # the shared name lookup; an exact name stays first.
        by_id = {r[0]: r for r in store.con.execute(
            cols + f"WHERE entity_id IN ({', '.join('?' * len(named))})", named).fetchall()}
        exact = [r for r in rows[:1] if r[1].lower() == query.strip().lower()]
        rows = exact + [by_id[i] for i in named if not exact or i != exact[0][0]] + \
            [r for r in rows if r[0] not in by_id and r not in exact]
    return [{"id": r[0], "name": r[1], "type": r[2], "degree": r[3], "mentions": r[4], "description": r[5]}
            for r in rows[:int(limit)]]


def _like(s: str) -> str:
    return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _entity_id(store, key) -> int:
    if isinstance(key, bool) or (isinstance(key, numbers.Integral) and not 0 <= key <= MAX_ID):
        _id("entity id", key)
    if isinstance(key, numbers.Integral) or (isinstance(key, str) and key.strip().isdigit()
                                             and int(key) <= MAX_ID):
        row = store.con.execute("SELECT entity_id FROM entities WHERE entity_id = ?", [int(key)]).fetchone()
    else:
        row = store.con.execute("SELECT entity_id FROM entities WHERE lower(name) = lower(?) OR norm = lower(?) "
                                "ORDER BY degree DESC LIMIT 1", [str(key).strip(), str(key).strip()]).fetchone()
    if row is None:
        named = entities_named(store, str(key)) if not isinstance(key, int) else []
        row = named[:1] or None
    if row is None:
        raise UserError(f"entity {echo_repr(key)} is not in this index: search for it by part of its name")
    return row[0]


def neighbours(store, key, limit: int = 30) -> dict:
    """The neighbourhood of an entity (id or name): it, its ``limit`` strongest neighbours and the
    relationships among them.

    Returns:
        ``{nodes: [{id, name, type, degree, center}], edges: [{id, source, target, description, weight}]}``;
        neighbours ranked by relationship weight, then the paper's edge rank (``combined_degree``).

    Raises:
        UserError: no such entity; ``limit`` is not a whole number from 0 to :data:`MAX_LIMIT`.
    """
    limit = _limit(limit)
    eid = _entity_id(store, key)
    near = store.con.execute(
        "SELECT CASE WHEN source_id = ? THEN target_id ELSE source_id END FROM relationships "
        "WHERE source_id = ? OR target_id = ? ORDER BY weight DESC, combined_degree DESC LIMIT ?",
        [eid, eid, eid, limit]).fetchall()
    ids = [eid] + [r[0] for r in near]
    marks = ", ".join("?" * len(ids))
    nodes = [{"id": r[0], "name": r[1], "type": r[2], "degree": r[3], "center": r[0] == eid}
             for r in store.con.execute(f"SELECT entity_id, name, type, degree FROM entities WHERE entity_id IN "
                                        f"({marks}) ORDER BY entity_id = ? DESC, degree DESC", ids + [eid]).fetchall()]
    edges = [{"id": r[0], "source": r[1], "target": r[2], "description": r[3], "weight": r[4]}
             for r in store.con.execute(f"SELECT rel_id, source_id, target_id, description, weight FROM relationships "
                                        f"WHERE source_id IN ({marks}) AND target_id IN ({marks}) "
                                        f"ORDER BY weight DESC", ids + ids).fetchall()]
    return {"nodes": nodes, "edges": edges}


def entity(store, key, mentions: int = 20) -> dict:
    """One entity (id or name): ``{id, name, type, description, degree, mentions (count), passages:
    [text unit dicts with ``highlight`` on the name, at most ``mentions``], communities: [{community_id, level,
    title}], neighbourhood: :func:`neighbours`}``.

    Raises:
        UserError: no such entity.
    """
    eid = _entity_id(store, key)
    eid_, name, type_, desc, degree, n_mentions = store.con.execute(
        "SELECT entity_id, name, type, description, degree, n_mentions FROM entities WHERE entity_id = ?",
        [eid]).fetchone()
    nums, _ = _unit_maps(store)
    rows = store.con.execute(
        "SELECT t.chunk_id, t.doc_id, t.ord, t.n_tokens, t.text, d.title, d.path, "
        "(SELECT count(*) FROM text_units u WHERE u.doc_id = t.doc_id) "
        f"FROM entity_text_units e JOIN text_units t USING (chunk_id) "
        f"JOIN (SELECT doc_id, path, {_doc_columns(store)} FROM documents) d USING (doc_id) "
        "WHERE e.entity_id = ? ORDER BY d.path, t.ord", [eid]).fetchall()
    passages = []
    for r in rows[:mentions]:
        p = _unit_dict(r[:7], nums.get(r[0]), r[7])
        p["highlight"] = name_spans(r[4], name)
        passages.append(p)
    comms = [{"community_id": r[0], "level": r[1], "title": r[2]} for r in store.con.execute(
        "SELECT c.community_id, c.level, r.title FROM community_members m JOIN communities c USING (community_id) "
        "LEFT JOIN community_reports r USING (community_id) WHERE m.entity_id = ? ORDER BY c.level",
        [eid]).fetchall()]
    return {"id": eid_, "name": name, "type": type_, "description": desc, "degree": degree, "mentions": n_mentions,
            "passages": passages, "passages_total": len(rows), "communities": comms,
            "neighbourhood": neighbours(store, eid)}


def levels(store) -> list[int]:
    """The community levels of the index, root (0) first."""
    return [r[0] for r in store.con.execute("SELECT DISTINCT level FROM communities ORDER BY 1").fetchall()]


def _topic_column(store) -> str:
    # One place for the optional report topic: shown when the index has the column.
    return "r.topic" if store.has_column("community_reports", "topic") else "NULL"


def reports(store, level: int | None = None, community_id: int | None = None) -> list[dict]:
    """Community reports of one level (or one community), largest community first.

    Returns:
        ``[{community_id, level, parent_id, size, title, topic, summary, findings: [{summary, explanation}],
        rating, coverage: {entities, text_units, documents}}]``; ``topic`` is None on an index without it;
        ``documents`` counts :func:`slmgraph.query.documents.community_documents`.
    """
    where, params = ("c.community_id = ?", [community_id]) if community_id is not None else ("c.level = ?", [level or 0])
    rows = store.con.execute(
        f"SELECT c.community_id, c.level, c.parent_id, c.size, r.title, {_topic_column(store)}, r.summary, r.findings, "
        "r.rating, (SELECT count(DISTINCT e.chunk_id) FROM community_members m JOIN entity_text_units e "
        "USING (entity_id) WHERE m.community_id = c.community_id) "
        f"FROM communities c LEFT JOIN community_reports r USING (community_id) WHERE {where} "
        "ORDER BY c.size DESC, c.community_id", params).fetchall()
    from slmgraph.query.documents import community_documents

    # one count of a community's documents: the one its report and a global answer state
    docs = community_documents(store, [r[0] for r in rows])
    out = []
    for r in rows:
        try:
            findings = json.loads(r[7]) if r[7] else []
        except ValueError:
            findings = [{"summary": r[7], "explanation": ""}]
        out.append({"community_id": r[0], "level": r[1], "parent_id": r[2], "size": r[3], "title": r[4],
                    "topic": r[5], "summary": r[6], "findings": findings if isinstance(findings, list) else [],
                    "rating": r[8], "coverage": {"entities": r[3], "text_units": r[9], "documents": len(docs.get(r[0], []))}})
    return out


def report(store, community_id: int) -> dict:
    """One community's report (as in :func:`reports`) with its member entities ``[{id, name, type}]``.

    Raises:
        UserError: no such community.
    """
    community_id = _id("community id", community_id)
    found = reports(store, community_id=community_id)
    if not found:
        raise UserError(f"community {community_id} is not in this index")
    out = found[0]
    out["entities"] = [{"id": r[0], "name": r[1], "type": r[2]} for r in store.con.execute(
        "SELECT e.entity_id, e.name, e.type FROM community_members m JOIN entities e USING (entity_id) "
        "WHERE m.community_id = ? ORDER BY e.degree DESC LIMIT 60", [int(community_id)]).fetchall()]
    return out


def report_titles(store, ids) -> dict[int, str]:
    """``{community id: report title}`` for the given community ids (ids without a report left out)."""
    ids = _ids("community", ids)
    if not ids:
        return {}
    return dict(store.con.execute(f"SELECT community_id, title FROM community_reports WHERE community_id IN "
                                  f"({', '.join('?' * len(ids))})", ids).fetchall())


def documents(store) -> list[dict]:
    """``[{doc_id, title, path, n_tokens, units}]`` in path order."""
    return [{"doc_id": r[0], "title": r[1] or r[2], "path": r[2], "n_tokens": r[3], "units": r[4]}
            for r in store.con.execute(
                f"SELECT d.doc_id, d.title, d.path, d.n_tokens, count(t.chunk_id) FROM "
                f"(SELECT doc_id, path, n_tokens, {_doc_columns(store)} FROM documents) d "
                "LEFT JOIN text_units t USING (doc_id) GROUP BY ALL ORDER BY d.path").fetchall()]


def document(store, doc_id: str) -> dict:
    """One document with its text units in order: ``{doc_id, title, path, n_tokens, units: [{unit, position,
    n_tokens, text}]}``.

    Raises:
        UserError: no such document.
    """
    docs = [d for d in documents(store) if d["doc_id"] == doc_id]
    if not docs:
        raise UserError(f"document {echo_repr(doc_id)} is not in this index")
    nums, _ = _unit_maps(store)
    docs[0]["units"] = [{"unit": nums.get(r[0]), "position": r[1] + 1, "n_tokens": r[2], "text": r[3]}
                        for r in store.con.execute("SELECT chunk_id, ord, n_tokens, text FROM text_units "
                                                   "WHERE doc_id = ? ORDER BY ord", [doc_id]).fetchall()]
    return docs[0]


def citation(store, kind: str, cid: int, support: str = "") -> dict:
    """What a citation in an answer points at, with the passage that supports ``support`` (the point's text).

    ``sources`` cite a text unit; ``reports`` a community report, ``relationships`` and ``entities`` a
    graph element: for those the passage is the text unit among the element's own (the community's
    entities', the relationship's, the entity's) that best supports ``support``.

    Returns:
        ``{kind, id, label, report (reports only), passage: a :func:`text_unit` dict or None}``.

    Raises:
        UserError: an unknown kind or id.
    """
    if kind not in ("sources", "reports", "relationships", "entities"):
        raise UserError(f"citation kind {echo_repr(kind)} is not one of sources, reports, relationships, entities")
    cid = _id("id", cid)
    if kind == "sources":
        p = text_unit(store, cid, support or None)
        return {"kind": kind, "id": cid, "label": f"text unit {cid}", "passage": p}
    if kind == "reports":
        rep = report(store, cid)
        chunks_sql = ("SELECT DISTINCT e.chunk_id FROM community_members m JOIN entity_text_units e USING (entity_id) "
                      "WHERE m.community_id = ?")
        label = f"report {cid}: {rep['title'] or ''}".rstrip(": ")
        out = {"kind": kind, "id": cid, "label": label, "report": rep}
    elif kind == "relationships":
        row = store.con.execute("SELECT description FROM relationships WHERE rel_id = ?", [cid]).fetchone()
        if row is None:
            raise UserError(f"relationship {cid} is not in this index")
        chunks_sql = "SELECT chunk_id FROM relationship_text_units WHERE rel_id = ?"
        out = {"kind": kind, "id": cid, "label": f"relationship {cid}: {row[0] or ''}".rstrip(": ")}
    elif kind == "entities":
        ent = store.con.execute("SELECT name FROM entities WHERE entity_id = ?", [cid]).fetchone()
        if ent is None:
            raise UserError(f"entity {cid} is not in this index")
        chunks_sql = "SELECT chunk_id FROM entity_text_units WHERE entity_id = ?"
        out = {"kind": kind, "id": cid, "label": f"entity {ent[0]}", "entity": {"id": cid, "name": ent[0]}}
    else:
        raise UserError(f"citation kind {echo_repr(kind)} is not one of sources, reports, relationships, entities")
    out["passage"] = _best_passage(store, chunks_sql, [cid], support)
    return out


def _best_passage(store, chunks_sql: str, params: list, support: str) -> dict | None:
    """The text unit of ``chunks_sql`` holding the first sentence of ``support`` it can find (units pre-filtered
    in SQL by the sentence's longest words, so only a few are split into sentences), with the supporting
    sentences marked; without a match, the element's first unit and no mark."""
    nums, _ = _unit_maps(store)
    for sent in sentences(support) or [support]:
        want = word_set(sent)
        words = sorted({w for w in re.findall(r"\w+", sent) if len(w) > 3}, key=len, reverse=True)[:4]
        if len(want) < 3 or not words:
            continue
        like = " AND ".join("t.text ILIKE ? ESCAPE '\\'" for _ in words)
        rows = store.con.execute(
            f"SELECT t.chunk_id, t.text FROM text_units t WHERE t.chunk_id IN ({chunks_sql}) AND {like} "
            "ORDER BY t.doc_id, t.ord LIMIT 40", params + [f"%{_like(w)}%" for w in words]).fetchall()

        def best_share(text: str) -> float:
            return max((len(word_set(text[a:b]) & want) / len(want) for a, b in sentence_spans(text)), default=0.0)

        scored = [(best_share(r[1]), r[0]) for r in rows]
        if scored and max(scored)[0] >= SUPPORT_SHARE:
            return text_unit(store, nums[max(scored)[1]], support)
    first = store.con.execute(f"SELECT t.chunk_id FROM text_units t WHERE t.chunk_id IN ({chunks_sql}) "
                              "ORDER BY t.doc_id, t.ord LIMIT 1", params).fetchone()
    return text_unit(store, nums[first[0]]) if first else None
