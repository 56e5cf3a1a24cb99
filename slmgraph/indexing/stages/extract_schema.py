"""The records a model writes for one text unit: the JSON schemas it writes them under (names constrained
to the unit's candidates, :func:`extraction_schema`, or free, :func:`free_extraction_schema`), the
validation of what it wrote (:func:`validate`) and the grounding of names in the text (:func:`ground`).
"""

from __future__ import annotations

from slmgraph.config.settings import Settings
from slmgraph.names.forms import name_occurs, normalize_name

#: Longest entity name the model may write in free-names mode (JSON-schema
#: ``maxLength``, characters). Candidate names have at most
#: ``names.MAX_NAME_WORDS`` (6) words; 60 characters hold six long words.
FREE_NAME_MAX_CHARS = 60

def extraction_schema(candidates: list[str], settings: Settings, with_descriptions: bool,
                      related: list[str] | None = None) -> dict:
    """JSON schema of one text unit's output.

    ``entities`` is an object with one required key per candidate, in order
    (value: the type, or ``{type, description}`` when the model describes),
    so the model answers for each candidate exactly once (no duplicates, no
    invented names; a 135M model otherwise repeats one name to ``maxItems``).
    Types are an enum of the entity types plus ``other`` (not an entity).
    Relationship endpoints are enums of the candidates; strength an enum 1..10.
    Kept flat: grammar sampling cost grows with the schema (ARCHITECTURE.md "Running the model on a CPU").
    ``related``: the names relationships may use (default: the candidates;
    a gleaning round relates new candidates and entities already found).
    """
    name = {"type": "string", "enum": list(related if related is not None else candidates)}
    desc = {"type": "string", "maxLength": settings.description_max_chars}
    etype = {"type": "string", "enum": list(settings.entity_types) + ["other"]}
    rel = {"source": name, "target": name}
    if with_descriptions:
        ent = {"type": "object", "properties": {"type": etype, "description": desc}, "required": ["type", "description"]}
        rel["description"] = desc
    else:
        ent = etype  # {"Name": "person"}: fewer tokens to generate than an object
    rel["strength"] = {"type": "integer", "enum": list(range(1, 11))}
    return {
        "type": "object",
        "properties": {
            "entities": {"type": "object", "properties": {c: ent for c in candidates}, "required": list(candidates)},
            "relationships": {"type": "array", "maxItems": settings.max_relationships,
                              "items": {"type": "object", "properties": rel, "required": list(rel)}},
        },
        "required": ["entities", "relationships"],
    }


def free_extraction_schema(settings: Settings, with_descriptions: bool) -> dict:
    """JSON schema of one text unit's output when names are free (``constrain_names`` off).

    ``entities`` is an array of at most ``max_candidates`` objects
    ``{name, type[, description]}`` whose name is any string of 1 to
    :data:`FREE_NAME_MAX_CHARS` characters; relationship endpoints are such
    strings too. Types, strength and ``maxItems`` of relationships are as in
    :func:`extraction_schema`, so the two modes differ only in how names are
    constrained. Shape of the output::

        {"entities": [{"name": "Marie Curie", "type": "person"}, ...],
         "relationships": [{"source": "Marie Curie", "target": "Sorbonne", "strength": 7}, ...]}
    """
    name = {"type": "string", "minLength": 1, "maxLength": FREE_NAME_MAX_CHARS}
    desc = {"type": "string", "maxLength": settings.description_max_chars}
    etype = {"type": "string", "enum": list(settings.entity_types) + ["other"]}
    ent = {"name": name, "type": etype}
    rel = {"source": name, "target": name}
    if with_descriptions:
        ent["description"] = desc
        rel["description"] = desc
    rel["strength"] = {"type": "integer", "enum": list(range(1, 11))}
    return {
        "type": "object",
        "properties": {
            "entities": {"type": "array", "maxItems": settings.candidate_budget(True),
                         "items": {"type": "object", "properties": ent, "required": list(ent)}},
            "relationships": {"type": "array", "maxItems": settings.max_relationships,
                              "items": {"type": "object", "properties": rel, "required": list(rel)}},
        },
        "required": ["entities", "relationships"],
    }


def _free_name(value: object) -> str:
    """A free-mode name as written (whitespace folded), or "" when it is not a
    usable name (not a string, over :data:`FREE_NAME_MAX_CHARS`, no letter or digit)."""
    if not isinstance(value, str):
        return ""
    name = " ".join(value.split())
    if len(name) > FREE_NAME_MAX_CHARS or not normalize_name(name):
        return ""
    return name


def validate(data: object, candidates: list[str] | None,
             entity_types: tuple[str, ...]) -> tuple[list[dict], list[dict], int]:
    """Keep the well-formed, non-duplicate records of a model output.

    Rules: an entity needs a name among ``candidates`` (by normalised form) --
    or, when ``candidates`` is None (free names), any name of 1 to
    :data:`FREE_NAME_MAX_CHARS` characters with a letter or digit, kept as
    written -- and is kept once (first wins); a type outside ``entity_types`` (including the
    schema's ``other``) becomes ``unknown`` -- the entity is kept, because
    filtering by a small model's label lowered F1 (ARCHITECTURE.md "Choices by probability"); a
    relationship needs two different endpoints that are listed entities (an
    endpoint that is a candidate -- or, with free names, any valid name -- but
    was not listed is added as an entity, as GraphRAG does: microsoft/graphrag,
    graph_extractor.py, ``_process_results``) and is kept once
    per unordered pair; strength is clamped to 1..10. Whether a name occurs
    in the text is :func:`ground`'s business, not this function's.

    Returns:
        ``(entities, relationships, n_dropped)``.
    """
    cand = {normalize_name(c): c for c in candidates} if candidates is not None else None
    types = set(entity_types)
    ents: dict[str, dict] = {}
    rels: dict[tuple[str, str], dict] = {}
    dropped = 0
    if not isinstance(data, dict):
        return [], [], 0
    raw_ents = data.get("entities") or []
    raw_rels = data.get("relationships") or []
    if isinstance(raw_ents, dict):  # {name: {type, description}} (the schema's form)
        raw_ents = [dict(v, name=k) if isinstance(v, dict) else {"name": k, "type": v} if isinstance(v, str) else v
                    for k, v in raw_ents.items()]
    for e in raw_ents if isinstance(raw_ents, list) else []:
        if not isinstance(e, dict):
            dropped += 1
            continue
        if cand is None:
            name = _free_name(e.get("name"))
            key = normalize_name(name)
        else:
            key = normalize_name(str(e.get("name", "")))
            name = cand.get(key, "")
        if not name or key in ents:
            dropped += 1
            continue
        etype = str(e.get("type", "")).strip().lower()
        ents[key] = {"name": name, "type": etype if etype in types else "unknown",
                     "description": str(e.get("description", "") or "").strip()}
    for r in raw_rels if isinstance(raw_rels, list) else []:
        if not isinstance(r, dict):
            dropped += 1
            continue
        if cand is None:
            src, tgt = _free_name(r.get("source")), _free_name(r.get("target"))
            s, t = normalize_name(src), normalize_name(tgt)
            # an endpoint already listed keeps the listed surface form
            names = {s: ents[s]["name"] if s in ents else src, t: ents[t]["name"] if t in ents else tgt}
            ok = bool(src and tgt)
        else:
            s, t = normalize_name(str(r.get("source", ""))), normalize_name(str(r.get("target", "")))
            names = cand
            ok = s in cand and t in cand
        if s == t or not ok:
            dropped += 1
            continue
        pair = (min(s, t), max(s, t))
        if pair in rels:
            dropped += 1
            continue
        for k in (s, t):
            if k not in ents:
                ents[k] = {"name": names[k], "type": "unknown", "description": ""}
        try:
            strength = int(r.get("strength", 5))
        except (TypeError, ValueError):
            strength = 5
        rels[pair] = {"source": ents[s]["name"], "target": ents[t]["name"],
                      "description": str(r.get("description", "")).strip(), "strength": max(1, min(10, strength))}
    return list(ents.values()), list(rels.values()), dropped


def ground(text: str, ents: list[dict], rels: list[dict]) -> tuple[list[dict], list[dict], int]:
    """Grounding: keep the entities whose names occur in ``text`` under the
    tolerant match (:func:`slmgraph.names.forms.name_occurs`: case, punctuation,
    plurals and a leading article ignored; whole words only), and the
    relationships whose two endpoints are kept.

    Args:
        text: the text unit the records were extracted from.
        ents: ``[{name, type, description}, ...]``.
        rels: ``[{source, target, description, strength}, ...]`` (endpoints
            are entity names).

    Returns:
        ``(entities, relationships, n_ungrounded)``: the kept records (new
        lists, same dicts) and the number of entities dropped.
    """
    kept = [e for e in ents if name_occurs(e["name"], text)]
    keys = {normalize_name(e["name"]) for e in kept}
    rels = [r for r in rels if normalize_name(r["source"]) in keys and normalize_name(r["target"]) in keys]
    return kept, rels, len(ents) - len(kept)
