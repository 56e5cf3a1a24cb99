"""Extraction of entities and relationships from text units (paper sec. 3.1.2).

Two extractors:

* ``llm`` (default): the candidate pass (:mod:`slmgraph.names.forms`) proposes the
  names that occur in the text unit; the model chooses among them, types and
  describes them and relates them, under a JSON schema whose name fields are
  ``enum``s of those candidates. A small model therefore cannot invent a name
  or emit unparseable output; the content is still validated (duplicates,
  self-loops and relationships to unlisted entities are dropped and counted).
  With ``constrain_names`` off (``--free-names``) the names are free strings
  of bounded length and count instead -- the way GraphRAG extracts with a
  large model -- so that what the candidate constraint buys can be measured.
* ``nlp``: no model. Every candidate is an entity (type ``unknown``, described
  by its first sentence); two candidates in one sentence are related. The
  baseline every model setting must beat, and a mode for very slow machines.

Grounding (``settings.grounding``, on by default) then drops every entity
whose name does not occur in its text unit under the tolerant match
(:func:`slmgraph.names.forms.name_occurs`), with the relationships to it, and counts
the dropped entities (``Extraction.n_ungrounded``). Candidate names are spans
of the text, so it drops ~nothing in the default mode; with free names it
removes invented names and names copied from the few-shot example.

Each text unit's result is committed as soon as it is made, keyed by a
content hash of (text, model, prompts, settings): an interrupted run resumes
where it stopped and re-indexing unchanged text costs no model call.
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass, field
from typing import Callable

from tqdm import tqdm

from slmgraph.config.settings import CHOICES, Settings
from slmgraph.model.client import CHARS_PER_TOKEN, DEADLINE_UNIT_S, Model, ModelClient
from slmgraph.errors import GrammarError
from slmgraph.names.kinds import list_spans, names_only
from slmgraph.names.forms import content_words, cut, is_grounded, mentions, name_occurs, normalize_name
from slmgraph.indexing.stages.ner import LANGUAGE_NAMES, LANGUAGE_NOTES, find_candidates, pipeline_for
from slmgraph.indexing.stages.steer import apply as steer_apply, fingerprint as steer_fingerprint
from slmgraph.indexing.stages.concepts import CONCEPTS_VERSION, UnitConcepts, store_unit, unit_concepts_of
from slmgraph.model.policy import model_does
from slmgraph.config.prompting import Prompts
from slmgraph.store.db import Store, dumps
from slmgraph.text.prose import parse_json, sentence_spans, sentences

log = logging.getLogger("slmgraph")

#: Part of every extraction key: bump it when a change to this module, to
#: :mod:`slmgraph.names.forms` or to the sampler (``llm.SAMPLER_VERSION``) changes
#: what an extraction yields, so indexes re-extract.
EXTRACTOR_VERSION = "9"

#: The decisions ``--choices auto`` turns on for a model under 1e9 parameters: those that beat their
#: LLM-free alternative (spaCy's type, keeping every candidate, plain co-occurrence); none did
#: (docs/decisions.md: no model choices under 1B).
SMALL_MODEL_CHOICES: frozenset[str] = frozenset()

#: Longest entity name the model may write in free-names mode (JSON-schema
#: ``maxLength``, characters). Candidate names have at most
#: ``names.MAX_NAME_WORDS`` (6) words; 60 characters hold six long words.
FREE_NAME_MAX_CHARS = 60

#: Prompt files of each naming mode: system, user, few-shot output with
#: model-written descriptions, few-shot output without them.
PROMPT_FILES = {
    True: ("extract_system", "extract_user", "extract_example_model", "extract_example_text"),
    False: ("extract_free_system", "extract_free_user", "extract_example_free_model", "extract_example_free_text"),
}


@dataclass
class Extraction:
    """Validated records of one text unit."""

    entities: list[dict] = field(default_factory=list)  #: {name, type, description}
    relationships: list[dict] = field(default_factory=list)  #: {source, target, description, strength}
    n_candidates: int = 0
    n_dropped: int = 0
    n_ungrounded: int = 0  #: entities dropped by grounding (name not in the text unit)
    gleanings: int = 0  #: gleaning rounds that added records
    status: str = "ok"  #: ok | repaired | truncated | failed | empty
    raw: str = ""
    finish_reason: str = "stop"  #: of the model call (``deadline``: redone on the next run)
    evaluated_tokens: int = 0  #: prompt tokens evaluated by the model for this unit (not reused, not cached)
    completion_tokens: int = 0  #: tokens generated for this unit
    n_left_out: int = 0  #: candidates past the budget (``max_candidates``), not offered (:mod:`slmgraph.indexing.stages.ner`)
    n_choices: int = 0  #: model choices made by token probability (keep / type / relate)
    n_rejected: int = 0  #: candidates the model's keep choice dropped, plus pairs its relate choice dropped
    language: str = "en"  #: :func:`slmgraph.indexing.stages.ner.text_language` of the text unit
    concepts: UnitConcepts | None = None  #: noun-phrase concepts and their links (``settings.concepts``)


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


def says_more(sentence: str, names) -> bool:
    """True when ``sentence`` has a content word beyond ``names`` (a heading such as "Acme Robotics." or
    "Chapter 3." describes nothing, so it is never taken as a description)."""
    own = {w for n in names for w in content_words(n)}
    return any(w not in own for w in content_words(sentence))


def cooccurrence(text: str, names: list[str], max_chars: int) -> tuple[dict[str, str], dict[tuple[str, str], list[str]]]:
    """Sentence-level co-occurrence of ``names`` in ``text``; list lines (attendance, signature, distribution
    and "cc" lines, comma lists of names: :func:`slmgraph.names.kinds.list_spans`, :func:`slmgraph.names.kinds.names_only`)
    give no pair.

    Returns:
        ``(first_sentence, pairs)``: normalised name -> first sentence that
        mentions it; sorted normalised pair -> the sentences mentioning both.
    """
    keys = {normalize_name(n): n for n in names}
    first_sentence: dict[str, str] = {}
    pairs: dict[tuple[str, str], list[str]] = {}
    listed = list_spans(text)
    for a0, b0 in sentence_spans(text):
        sent = text[a0:b0]
        found = [k for k in keys if mentions(sent, keys[k])]
        for k in found:
            if says_more(sent, [keys[k]]):
                first_sentence.setdefault(k, cut(sent, max_chars))
        if len(found) > 1 and (any(a0 < b and a < b0 for a, b in listed) or names_only(sent, list(keys.values()))):
            continue  # "Present: ...", "cc: ...", a signature, a comma list of names: no relationship stated
        for i, a in enumerate(found):
            for b in found[i + 1:]:
                pairs.setdefault((min(a, b), max(a, b)), []).append(cut(sent, max_chars))
    return first_sentence, pairs


def unit_candidates(text: str, settings: Settings, nlp, edges: tuple[bool, bool] = (True, True),
                    budget: int | None = None):
    """The candidate pass over one text unit (:func:`slmgraph.indexing.stages.ner.find_candidates`) under ``settings``
    (entity types, ``budget`` or else :meth:`Settings.candidate_budget` with a model reading them,
    ``caps_union``), then the names and types of the user's prompts folder (:func:`slmgraph.indexing.stages.steer.apply`);
    ``edges`` = (unit begins its document, unit ends its document)."""
    budget = settings.candidate_budget(True) if budget is None else budget
    cp = find_candidates(text, tuple(settings.entity_types), budget,
                         nlp, at_doc_start=edges[0], at_doc_end=edges[1], caps=settings.caps_union)
    return steer_apply(cp, settings.prompts_dir, tuple(settings.entity_types), budget)


def extract_nlp(text: str, settings: Settings, nlp=None, edges: tuple[bool, bool] = (True, True)) -> Extraction:
    """LLM-free extraction: the candidate pass's names as entities (their NER type, ``unknown`` for
    capitalised runs; described by their first sentence), same-sentence co-occurrence as relationships
    (strength = number of such sentences, at most 10). Sentences are read in the masked text
    (:func:`slmgraph.indexing.stages.ner.mask_markup`), so markup does not become a description."""
    return extract_choices(None, None, text, settings, nlp, edges, frozenset())


def extract_choices(client: ModelClient | None, prompts: Prompts | None, text: str, settings: Settings, nlp,
                    edges: tuple[bool, bool], choices: frozenset[str]) -> Extraction:
    """Extraction by the candidate pass, with the model deciding by token probability where ``choices`` say.

    ``choices`` (subset of :data:`CHOICES`): ``keep`` -- for each candidate, "is this name an entity
    here?" (options ``yes``/``no``, the candidate's first sentence shown); ``type`` -- its type among
    the configured entity types (replaces the NER type); ``relate`` -- for each pair of kept names in one
    sentence, "does the sentence relate them?" (``yes``/``no``; a ``no`` drops the co-occurrence
    relationship). Each is a :meth:`ModelClient.choose` call whose instructions and example are the
    fixed prefix (``prompts/choose_*_system.txt``, evaluated once per process), so a call pays for the
    sentence and the name; nothing is generated. Empty ``choices``: no model call (the ``nlp`` extractor).
    Descriptions are the first sentence that mentions an entity (pair).
    """
    model_reads = bool(choices)  # a choice call per candidate (keep, type) or per pair of them (relate)
    cp = unit_candidates(text, settings, nlp, edges, budget=settings.candidate_budget(model_reads))
    masked = cp.masked
    sents = sentences(masked)
    max_chars = settings.description_max_chars
    n_choices = rejected = 0
    evaluated = 0

    def first_sentence(*names: str) -> str:
        for snt in sents:
            if all(mentions(snt, n) for n in names) and says_more(snt, names):
                return cut(snt, max_chars)
        return ""

    def choose(kind: str, user: str, options: list[str]):
        nonlocal n_choices, evaluated
        system = prompts.fill(f"choose_{kind}_system", entity_types=", ".join(settings.entity_types)) \
            if kind == "type" else prompts.text(f"choose_{kind}_system")
        ch = client.choose(f"choose_{kind}", system, user, options)
        n_choices += 1
        if not ch.from_cache:
            evaluated += ch.prompt_tokens - ch.cached_tokens
        return ch

    ents: list[dict] = []
    for c in cp.candidates:
        desc = first_sentence(c.name)
        etype = c.type
        if "keep" in choices:
            ch = choose("keep", prompts.fill("choose_keep_user", sentence=desc or c.name, candidate=c.name), ["yes", "no"])
            if ch.options[ch.best] == "no":
                rejected += 1
                continue
        if "type" in choices:
            ch = choose("type", prompts.fill("choose_type_user", sentence=desc or c.name, candidate=c.name),
                        list(settings.entity_types))
            etype = ch.options[ch.best]
        ents.append({"name": c.name, "type": etype, "description": desc})
    names = [e["name"] for e in ents]
    _, pairs = cooccurrence(masked, names, max_chars)
    keys = {normalize_name(n): n for n in names}
    rels = []
    for (a, b), snts in sorted(pairs.items()):
        if "relate" in choices:
            ch = choose("relate", prompts.fill("choose_relate_user", sentence=snts[0], source=keys[a], target=keys[b]),
                        ["yes", "no"])
            if ch.options[ch.best] == "no":
                rejected += 1
                continue
        rels.append({"source": keys[a], "target": keys[b], "description": snts[0], "strength": min(10, len(snts))})
    ungrounded = 0
    if settings.grounding:  # candidates are spans of the masked text: drops nothing unless the pass changes
        ents, rels, ungrounded = ground(masked, ents, rels)
    return Extraction(ents, rels, n_candidates=len(cp.candidates), n_ungrounded=ungrounded,
                      status="ok" if ents else "empty", n_left_out=len(cp.left_out), n_choices=n_choices,
                      n_rejected=rejected, language=cp.language, evaluated_tokens=evaluated,
                      raw="" if not choices else f"choices: {n_choices}, rejected: {rejected}",
                      concepts=unit_concepts_of(cp, nlp, ents, settings))


def add_cooccurrence(text: str, ents: list[dict], rels: list[dict], max_chars: int) -> int:
    """Add a relationship for each pair of extracted entities named in one
    sentence that the model did not relate (strength = number of such
    sentences, at most 10; description = the first such sentence).

    A 135M model relates few pairs and most are self-loops (ARCHITECTURE.md "Extraction quality"); the
    text's co-occurrence keeps the graph connected. Returns how many were added.
    """
    have = {(min(normalize_name(r["source"]), normalize_name(r["target"])),
             max(normalize_name(r["source"]), normalize_name(r["target"]))) for r in rels}
    names = {normalize_name(e["name"]): e["name"] for e in ents}
    _, pairs = cooccurrence(text, list(names.values()), max_chars)
    added = 0
    for (a, b), sents in sorted(pairs.items()):
        if (a, b) in have:
            continue
        rels.append({"source": names[a], "target": names[b], "description": sents[0],
                     "strength": min(10, len(sents))})
        added += 1
    return added


def model_writes(mode: str, n_params, setting: str = "descriptions") -> bool:
    """Whether the model writes a text for ``setting`` (``descriptions``, ``summaries`` or ``reports``) set
    to ``mode``: "model" yes; "auto" as :func:`slmgraph.model.policy.route` decides for ``n_params`` (a loaded
    model, whose capability record decides, or a bare parameter count: the size rule); any other mode
    ("text", "join", "data") no."""
    return model_does(setting, mode, n_params)


def use_model_descriptions(settings: Settings, n_params) -> bool:
    """Whether the model writes descriptions (``descriptions`` = model, or auto and :mod:`slmgraph.model.policy`
    says so for ``n_params``: a loaded model or its parameter count)."""
    return model_writes(settings.descriptions, n_params, "descriptions")


#: Share of a description sentence's content words (the record's own names left out) that must occur in
#: the text unit for the sentence to be kept: a sentence copied from the prompt's few-shot example
#: ("Took over a chair at the Sorbonne in 1906.") shares few, a faithful one most.
SENTENCE_GROUNDING = 0.5


def grounded_sentences(description: str, words: set[str], names: list[str]) -> str:
    """The sentences of a model-written ``description`` that are grounded in the text unit, joined: each
    keeps at least :data:`SENTENCE_GROUNDING` of its content words other than ``names``' (the record's own
    names, which the description may repeat) among ``words`` (the text unit's content words); a sentence
    with no such word says nothing and is dropped too. Empty when no sentence is grounded."""
    own = {w for n in names for w in content_words(n)}
    kept = []
    for snt in sentences(description or ""):
        told = [w for w in content_words(snt) if w not in own]
        if told and sum(w in words for w in told) >= SENTENCE_GROUNDING * len(told):
            kept.append(snt)
    return " ".join(kept)


def text_descriptions(text: str, ents: list[dict], rels: list[dict], max_chars: int) -> int:
    """Ground descriptions in the text unit, in place.

    Each sentence of a description that is not grounded in the text unit (:func:`grounded_sentences`: an
    invented sentence, or one copied from the few-shot example) is dropped, as invented names are. An
    entity whose description is then empty, or shares less than a third of its
    content words with the text, gets the
    first sentence of the text that mentions it; a relationship likewise gets
    the first sentence mentioning both ends, else the two first-mention
    sentences. Returns the number of descriptions replaced.
    """
    sents = sentences(text)
    words = set(content_words(text))
    replaced = 0
    for e in ents:
        if e.get("description"):
            e["description"] = grounded_sentences(e["description"], words, [e["name"]])
    for r in rels:
        if r.get("description"):
            r["description"] = grounded_sentences(r["description"], words, [r["source"], r["target"]])

    def grounded(d: str) -> bool:
        return is_grounded(d, words)

    def first(*names: str) -> str:
        for snt in sents:
            if all(mentions(snt, n) for n in names):
                return cut(snt, max_chars)
        return ""

    for e in ents:
        if not grounded(e.get("description", "")):
            e["description"] = first(e["name"])
            replaced += 1
    for r in rels:
        if not grounded(r.get("description", "")):
            both = first(r["source"], r["target"])
            if not both:
                a, b = first(r["source"]), first(r["target"])
                both = cut(a + (" " + b if b and b != a else ""), max_chars)
            r["description"] = both
            replaced += 1
    return replaced


def extract_token_cap(name_tokens: list[int], settings: Settings, with_descriptions: bool) -> int:
    """Completion cap of one extraction call (tokens): room for every required
    candidate record and ``max_relationships`` relationships, at most
    ``extract_max_tokens``.

    Args:
        name_tokens: tokens of each candidate name in the model's tokenizer
            (free names: :func:`free_name_tokens`, one entry per record the
            schema admits).

    Per record: the name plus ~12 tokens of JSON and type; a relationship:
    two names plus ~22; a description ~1 token per 3.5 characters (English
    BPE); then 25 % headroom for spacing the grammar allows (measured on
    SmolLM2-135M: a 12-name record took ~210 tokens). Runaway output is
    stopped earlier by the loop guard.
    """
    desc = int(settings.description_max_chars / CHARS_PER_TOKEN) if with_descriptions else 0
    avg = sum(name_tokens) / len(name_tokens) if name_tokens else 4
    need = 40 + sum(n + 12 + desc for n in name_tokens) + settings.max_relationships * (2 * avg + 22 + desc)
    return int(min(settings.extract_max_tokens, 1.25 * need))


def _spent(gen) -> tuple[int, int]:
    """(evaluated prompt tokens, completion tokens) a generation cost (0, 0 from the cache)."""
    if gen is None or gen.from_cache:
        return 0, 0
    return gen.prompt_tokens - gen.cached_tokens, gen.completion_tokens


def _pair(r: dict) -> tuple[str, str]:
    a, b = normalize_name(r["source"]), normalize_name(r["target"])
    return (min(a, b), max(a, b))


def free_name_tokens(settings: Settings) -> list[int]:
    """Token estimate per entity record of the free-names schema, for
    :func:`extract_token_cap`: ``max_candidates`` names of the longest
    admitted length (:data:`FREE_NAME_MAX_CHARS` at ~3.5 characters per
    token), so the cap has room for the largest output the schema admits."""
    return [-(-FREE_NAME_MAX_CHARS * 2 // 7)] * settings.candidate_budget(True)


def extract_llm(client: ModelClient, prompts: Prompts, text: str, settings: Settings, system: str,
                with_descriptions: bool, nlp=None, edges: tuple[bool, bool] = (True, True)) -> Extraction:
    """Model extraction of one text unit, with grounding and gleaning.

    With ``constrain_names`` (default) the names are an ``enum`` of the text
    unit's candidates; no candidates: no model call, status ``empty``.
    Without it the model writes names freely (:func:`free_extraction_schema`,
    prompt files ``extract_free_*``) and is called for every text unit. The
    call is capped (:func:`extract_token_cap`) and stopped on a loop or after
    120 s; output cut short is repaired with json-repair (status
    ``truncated``). Records are validated (:func:`validate`), then grounded
    when ``settings.grounding`` (:func:`ground`), then given text
    descriptions and co-occurrence relationships.

    Gleaning (paper sec. 3.1.2; ARCHITECTURE.md stage 3), up to
    ``settings.max_gleanings`` rounds, each continuing the same exchange from
    the model's KV state: a forced Y/N choice "did your answer miss an entity
    or relationship?" (with candidates: asked only when there are further
    candidate names beyond the first ``max_candidates``, and told them;
    free names: always), and on Y a request for what
    was missed, under a schema that types the further candidates and relates
    any of the names (free names: the same free schema). Further candidates
    the model types ``other`` are kept as ``unknown`` entities, as in the
    first round. Gleaning stops at N, after a round that adds no typed entity
    and no relationship, when the previous answer did not
    end normally (cut or repaired), or when the exchange would not fit the window.
    """
    limit = settings.candidate_budget(True)
    free = not settings.constrain_names
    cp = unit_candidates(text, settings, nlp, edges, budget=limit * (1 + max(0, settings.max_gleanings)))
    ner_type = {normalize_name(c.name): c.type for c in cp.candidates}
    all_cands = [c.name for c in cp.candidates]
    cands = all_cands[:limit]
    if free:
        user = prompts.fill("extract_free_user", text=text)
        schema = free_extraction_schema(settings, with_descriptions)
        cap = extract_token_cap(free_name_tokens(settings), settings, with_descriptions)
    else:
        if not cands:
            return Extraction(status="empty", concepts=unit_concepts_of(cp, nlp, [], settings))
        user = prompts.fill("extract_user", candidates="; ".join(cands), text=text)
        schema = extraction_schema(cands, settings, with_descriptions)
        cap = extract_token_cap([client.count(c) for c in cands], settings, with_descriptions)
    gen = client.call("extract", system, user, schema=schema, max_tokens=cap, deadline_s=DEADLINE_UNIT_S)
    evaluated, completion = _spent(gen)
    data, status = parse_json(gen.text)
    if status == "repaired" and gen.finish_reason in ("length", "repetition", "deadline"):
        status = "truncated"
    ents, rels, dropped = validate(data, None if free else cands, settings.entity_types)
    finish = gen.finish_reason
    raws = [gen.text]
    rounds = 0
    more = [] if free else all_cands[limit:]
    prev = gen
    for _ in range(max(0, settings.max_gleanings)):
        if prev.finish_reason != "stop" or status != "ok":
            break  # only a complete answer is continued
        offer = more[:limit]
        if not free and not offer:
            # Every candidate was typed: a round could only add relationships, which
            # same-sentence co-occurrence already gives, at a cost out of proportion
            # (docs/decisions.md: no gleaning check when every candidate is typed).
            break
        if free:
            note = "Write only names that occur in the text."
        elif offer:
            note = f"Further candidate names: {'; '.join(offer)}."
        else:
            note = "There are no further candidate names."
        ans = client.follow_up("glean", prev, prompts.fill("glean_check", more=note), choices=["Y", "N"])
        if ans is None:
            break
        e, c = _spent(ans)
        evaluated, completion = evaluated + e, completion + c
        if ans.text != "Y":
            break
        if free:
            names = None
            schema2 = free_extraction_schema(settings, with_descriptions)
            cap2 = cap
        else:
            offered = {normalize_name(o) for o in offer}
            names = offer + [x["name"] for x in ents if normalize_name(x["name"]) not in offered]
            if len(names) < 2:
                break  # nothing to type and nothing to relate
            schema2 = extraction_schema(offer, settings, with_descriptions, related=names)
            cap2 = extract_token_cap([client.count(o) for o in offer] or [4], settings, with_descriptions)
        g2 = client.follow_up("glean", ans, prompts.fill("glean_user", more=note), schema=schema2, max_tokens=cap2,
                              deadline_s=DEADLINE_UNIT_S)
        if g2 is None:
            break
        e, c = _spent(g2)
        evaluated, completion = evaluated + e, completion + c
        raws.append(g2.text)
        if g2.finish_reason == "deadline":
            finish = "deadline"
        data2, status2 = parse_json(g2.text)
        if status2 == "repaired" and g2.finish_reason in ("length", "repetition", "deadline"):
            status2 = "truncated"
        e2, r2, d2 = validate(data2, names, settings.entity_types)
        dropped += d2
        have_e = {normalize_name(x["name"]) for x in ents}
        have_r = {_pair(r) for r in rels}
        new_e = [x for x in e2 if normalize_name(x["name"]) not in have_e]
        new_r = [r for r in r2 if _pair(r) not in have_r][: max(0, settings.max_relationships)]
        ents += new_e
        rels += new_r
        more = more[len(offer):]
        prev = g2
        status = status2 if status2 != "ok" else status
        if not new_r and not any(x["type"] != "unknown" for x in new_e):
            break  # a round that adds no typed entity and no relationship ends gleaning
        rounds += 1
    for x in ents:  # the model left it untyped: the candidate pass's (NER) type
        if x["type"] == "unknown":
            x["type"] = ner_type.get(normalize_name(x["name"]), "unknown")
    ungrounded = 0
    if settings.grounding:
        ents, rels, ungrounded = ground(text if free else cp.masked, ents, rels)
    text_descriptions(text, ents, rels, settings.description_max_chars)
    if settings.cooccurrence:
        add_cooccurrence(text, ents, rels, settings.description_max_chars)
    return Extraction(ents, rels, n_candidates=len(cands) + len(all_cands[limit:]) - len(more), n_dropped=dropped,
                      n_ungrounded=ungrounded, status=status, raw="\n".join(raws), finish_reason=finish,
                      gleanings=rounds, evaluated_tokens=evaluated, completion_tokens=completion,
                      n_left_out=len(cp.left_out) + len(more), language=cp.language,
                      concepts=unit_concepts_of(cp, nlp, ents, settings))


def model_choices(settings: Settings, n_params: int | None) -> frozenset[str]:
    """The model decisions of the choice extraction for ``settings.choices``: ``auto`` ->
    :data:`SMALL_MODEL_CHOICES` (measured with the 135M model; no larger model was measured, so the
    same set applies to any size), ``none`` -> none, else the comma list given (checked by the CLI)."""
    v = settings.choices  # canonical: slmgraph.config.settings.parse_choices
    if v == "auto":
        return SMALL_MODEL_CHOICES
    if v == "none":
        return frozenset()
    return frozenset(v.split(","))


def json_extraction(settings: Settings, n_params: int | None) -> bool:
    """Whether the llm extractor generates JSON records (:func:`extract_llm`) rather than extracting by
    the candidate pass and choices (:func:`extract_choices`): ``extract_mode`` json, or auto when the
    model writes descriptions (>= 1e9 parameters, or ``--descriptions model``) or names (``--free-names``).
    A < 1B model's JSON added nothing measurable over the LLM-free pass and generated more tokens than
    it read (docs/decisions.md: no model choices under 1B)."""
    if settings.extract_mode == "json":
        return True
    if settings.extract_mode == "choices":
        return False
    return not settings.constrain_names or use_model_descriptions(settings, n_params)


def extract_unit(client: ModelClient | None, prompts: Prompts, text: str, settings: Settings, system: str,
                 with_descriptions: bool, nlp, edges: tuple[bool, bool]) -> Extraction:
    """One text unit's extraction by the configured route: ``nlp`` (:func:`extract_nlp`), JSON
    records (:func:`extract_llm`, see :func:`json_extraction`) or the candidate pass with the model's
    choices (:func:`extract_choices`, :func:`model_choices`)."""
    if settings.extractor == "nlp" or client is None:
        return extract_nlp(text, settings, nlp, edges)
    n_params = client.model  # the policy reads the model's capability record
    if json_extraction(settings, n_params):
        try:
            return extract_llm(client, prompts, text, settings, system, with_descriptions, nlp, edges)
        except GrammarError as exc:  # this unit's schema cannot be served: its LLM-free records, marked failed
            ex = extract_nlp(text, settings, nlp, edges)
            ex.status, ex.raw = "failed", f"grammar: {exc}"
            return ex
    return extract_choices(client, prompts, text, settings, nlp, edges, model_choices(settings, n_params))


#: Type accuracy at or above which a type source may block resolution merges (share of matched gold
#: entities typed right; a source below it is wrong on more than one entity in five).
RELIABLE_TYPE_ACCURACY = 0.8

#: Type accuracy of each type source (share of matched gold entities typed right on the 100 Re-DocRED dev
#: documents): ``ner`` the NER pipeline's, ``model`` the model's chosen or JSON types, whose 0.0 keeps them
#: from blocking merges (docs/decisions.md: type accuracy of each source).
TYPE_ACCURACY = {"ner": 0.77, "model": 0.0}


def types_reliable(settings: Settings, n_params: int | None) -> bool:
    """Whether entity types may block resolution merges: when their source's measured accuracy
    (:data:`TYPE_ACCURACY`: the NER pipeline's, or the model's when it chooses or writes types) reaches
    :data:`RELIABLE_TYPE_ACCURACY`. Neither does today, so types block only what
    :mod:`slmgraph.indexing.stages.resolve` blocks whatever their source (a place with another kind, a name subset of another
    type); other merges go by the names' shapes."""
    source = "ner"
    if settings.extractor != "nlp" and (json_extraction(settings, n_params)
                                        or "type" in model_choices(settings, n_params)):
        source = "model"
    return TYPE_ACCURACY[source] >= RELIABLE_TYPE_ACCURACY


def uses_model(settings: Settings, n_params: int | None) -> bool:
    """Whether extraction with ``settings`` calls the model at all (False: the LLM-free route)."""
    if settings.extractor == "nlp":
        return False
    return json_extraction(settings, n_params) or bool(model_choices(settings, n_params))


def extraction_key(text: str, model_fp: str, prompt_fp: str, settings: Settings,
                   edges: tuple[bool, bool] = (True, True)) -> str:
    """Content key of a text unit's extraction: sha256(text, model, prompts, the settings whose field metadata
    puts them in the ``extraction`` key -- and in ``extraction_model`` when a model makes the calls --, document
    edges), 32 hex. ``model_fp`` is "" when extraction makes no model call (:func:`uses_model`)."""
    s = settings
    llm = s.extractor == "llm" and bool(model_fp)
    keyed = s.key_values("extraction") | (s.key_values("extraction_model") if llm else {})
    parts = [EXTRACTOR_VERSION, text, model_fp if llm else "", prompt_fp if llm else "", sorted(keyed.items()),
             list(edges), CONCEPTS_VERSION if s.concepts else ""]
    steered = steer_fingerprint(s.prompts_dir, tuple(s.entity_types))
    if steered:  # keys of builds the prompts folder does not steer stay as they were
        parts.append(["steer", steered])
    return hashlib.sha256(dumps(parts).encode()).hexdigest()[:32]


def extraction_prompt_files(settings: Settings) -> list[str]:
    """Names of the prompt files an extraction with ``settings`` reads (for its cache key)."""
    names = list(PROMPT_FILES[settings.constrain_names])
    if settings.max_gleanings > 0:
        names += ["glean_check", "glean_user"]
    return names + [f"choose_{k}_{part}" for k in CHOICES for part in ("system", "user")]


def extraction_system(prompts: Prompts, settings: Settings, model) -> tuple[str, bool]:
    """``(system prompt, with_descriptions)`` of the extraction calls for ``model``.

    The system prompt (instructions + few-shot example, for candidate or free
    names) is the fixed prefix every extraction call shares, so it is
    evaluated once per process.
    """
    system_name, _, example_model, example_text = PROMPT_FILES[settings.constrain_names]
    with_desc = use_model_descriptions(settings, model)
    example = prompts.text(example_model if with_desc else example_text).strip()
    system = prompts.fill(system_name, entity_types=", ".join(settings.entity_types), example=example)
    return system, with_desc


def store_extraction(con, chunk_id: str, key: str, ex: Extraction) -> None:
    """Replace a text unit's extraction records (call inside a transaction).

    A call cut by the wall-clock deadline depends on machine load: its records
    are kept for now, but its key is left empty so the next run redoes it.
    """
    con.execute("DELETE FROM entity_mentions WHERE chunk_id = ?", [chunk_id])
    con.execute("DELETE FROM relationship_mentions WHERE chunk_id = ?", [chunk_id])
    stored_key = None if ex.finish_reason == "deadline" else key
    con.execute("INSERT OR REPLACE INTO extractions (chunk_id, cache_key, status, n_candidates, n_entities, "
                "n_relationships, n_dropped, raw, n_ungrounded, gleanings, evaluated_tokens, completion_tokens, "
                "n_left_out, n_choices, n_rejected) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [chunk_id, stored_key, ex.status, ex.n_candidates, len(ex.entities), len(ex.relationships),
                 ex.n_dropped, ex.raw, ex.n_ungrounded, ex.gleanings, ex.evaluated_tokens, ex.completion_tokens,
                 ex.n_left_out, ex.n_choices, ex.n_rejected])
    if ex.entities:
        con.executemany("INSERT INTO entity_mentions VALUES (?, ?, ?, ?, ?)",
                        [[chunk_id, e["name"], normalize_name(e["name"]), e["type"], e["description"]]
                         for e in ex.entities])
    if ex.relationships:
        con.executemany("INSERT INTO relationship_mentions VALUES (?, ?, ?, ?, ?)",
                        [[chunk_id, normalize_name(r["source"]), normalize_name(r["target"]),
                          r["description"], r["strength"]] for r in ex.relationships])
    store_unit(con, chunk_id, ex.concepts)


def worker_job(client: ModelClient, prompts: Prompts, settings: Settings,
               model: Model) -> Callable[[tuple[str, tuple[bool, bool]]], Extraction]:
    """What an extraction worker process does per text unit (:class:`slmgraph.indexing.executors.batch.WorkerSpec` ``make_job``).

    Builds the extraction system prompt once for the worker's model, loads the NER pipeline once in the
    process (:func:`slmgraph.indexing.stages.ner.pipeline_for`; the parent already warned if there is none) and returns
    ``(text, (begins document, ends document)) -> Extraction`` (:func:`extract_unit`).
    """
    system, with_desc = extraction_system(prompts, settings, model)
    nlp, _ = pipeline_for(settings.ner_model)
    return lambda task: extract_unit(client, prompts, task[0], settings, system, with_desc, nlp, tuple(task[1]))


@dataclass
class ExtractResult:
    """What stages 2-3 did: ``extracted`` (text units processed now), ``reused`` (already done),
    ``entities``, ``relationships``, ``dropped`` (records dropped by validation), ``ungrounded``
    (entities dropped by grounding), ``status`` (status -> units), ``left_out`` (candidates past
    ``--max-candidates``) in ``units_over_budget`` units, ``choices`` / ``rejected`` (model
    choices by token probability and what they dropped), ``languages`` (language -> units),
    ``descriptions`` (``model`` or ``text``), ``ner_model``, and the thread plan (``workers``,
    ``threads``, ``startup_seconds``: spawning workers and loading their models), and ``budget``
    (candidate names per text unit in this run, :meth:`Settings.candidate_budget`). All counts are
    of the units processed now."""
    descriptions: str
    extracted: int
    reused: int
    entities: int
    relationships: int
    dropped: int
    ungrounded: int
    status: dict[str, int]
    workers: int
    threads: int
    startup_seconds: float
    left_out: int
    units_over_budget: int
    choices: int
    rejected: int
    languages: dict[str, int]
    ner_model: str | None
    budget: int

    def summary(self, settings: Settings) -> list[str]:
        """The progress line ``index`` prints (``settings``: the run's, for what validation and grounding did)."""
        status = ", ".join(f"{k} {v}" for k, v in sorted(self.status.items())) or "nothing new"
        grounding = (f"{self.ungrounded} entities dropped by grounding (names not in their text unit)"
                     if settings.grounding else "grounding off")
        invalid = "names not among the candidates" if settings.constrain_names else "empty or overlong names"
        return [f"extract: {self.extracted} text units extracted, {self.reused} reused; the new ones gave "
                f"{self.entities} entities, {self.relationships} relationships; {self.dropped} records dropped by "
                f"validation (duplicates, self-loops, {invalid}); {grounding}; status: {status}"]


def run_extraction(store: Store, client: ModelClient | None, prompts: Prompts, settings: Settings,
                   progress: bool = True, model_factory=None, say=None, only: set[str] | None = None
                   ) -> ExtractResult:
    """Extract every text unit that has no up-to-date extraction record.

    With the llm extractor and more than one worker in the thread plan
    (:func:`slmgraph.indexing.executors.batch.plan_threads`), text units are extracted by spawned
    worker processes and written here, the single writer; otherwise in this
    process. Either way each text unit's records (and its ledger rows and
    cache entries) are committed in one transaction as soon as they arrive,
    so a killed run loses at most the units in flight, and the result does not
    depend on the number of workers (each call reuses only the fixed prefix).

    Args:
        client: model client of this process (None for the nlp extractor).
        model_factory: ``threads -> Model`` for worker processes (tests); None
            = load ``client.model.path`` in each worker.
        say: ``str -> None`` for the thread-plan note and warnings.
        only: extract just these text units (``chunk_id``s; the estimate's calibration sample).

    Returns:
        :class:`ExtractResult`.

    Raises:
        UserError: a prompt does not fit the window.
        WorkerError: a worker process crashed (re-run to resume).
    """
    from slmgraph.indexing.executors.batch import WorkerSpec, stage_plan
    from slmgraph.indexing.executors.raypool import open_pool
    from slmgraph.model.threads import update_claim

    prompt_fp = prompts.digest(*extraction_prompt_files(settings))
    model = client.model if client is not None else None
    n_params = model  # the policy reads the model's capability record
    calls_model = model is not None and uses_model(settings, n_params)
    model_fp = model.fingerprint if calls_model else ""
    system, with_desc = extraction_system(prompts, settings, model)
    nlp, warning = pipeline_for(settings.ner_model)
    if warning and say:
        say(f"warning: {warning}")
    rows = store.con.execute(
        "SELECT t.chunk_id, t.text, e.cache_key, t.ord = min(t.ord) OVER (PARTITION BY t.doc_id), "
        "t.ord = max(t.ord) OVER (PARTITION BY t.doc_id) "
        "FROM text_units t LEFT JOIN extractions e USING (chunk_id) ORDER BY t.doc_id, t.ord").fetchall()
    todo = []
    reused = 0
    for chunk_id, text, have, first, last in rows:
        if only is not None and chunk_id not in only:
            continue
        edges = (bool(first), bool(last))
        key = extraction_key(text, model_fp, prompt_fp, settings, edges)
        if have == key:
            reused += 1
        else:
            todo.append((chunk_id, text, key, edges))
    stats = {"descriptions": "model" if with_desc else "text", "extracted": 0, "reused": reused, "entities": 0,
             "relationships": 0, "dropped": 0, "ungrounded": 0, "status": {}, "workers": 1, "threads": 0,
             "startup_seconds": 0.0, "left_out": 0, "units_over_budget": 0, "choices": 0, "rejected": 0,
             "languages": {}, "ner_model": getattr(nlp, "meta", {}).get("name") if nlp is not None else None,
             "budget": settings.candidate_budget(calls_model)}
    parallel = calls_model and todo and (model_factory is not None or getattr(model, "path", None) is not None)
    plan = None
    if parallel:
        plan = stage_plan(model, settings, len(todo), say)
        parallel = plan.workers > 1 or settings.executor == "ray"
        stats["workers"], stats["threads"] = plan.workers, plan.threads
    bar = tqdm(total=len(todo), desc="extract", unit="unit", disable=not progress or not todo, dynamic_ncols=True)
    tokens = 0
    t_start = time.perf_counter()

    def commit(chunk_id, key, ex, calls=(), puts=()):
        nonlocal tokens
        with store.transaction() as con:
            store_extraction(con, chunk_id, key, ex)
            for row in calls:
                store.record_call(*row)
            for put in puts:
                store.cache_put(*put)
        stats["extracted"] += 1
        stats["entities"] += len(ex.entities)
        stats["relationships"] += len(ex.relationships)
        stats["dropped"] += ex.n_dropped
        stats["ungrounded"] += ex.n_ungrounded
        stats["status"][ex.status] = stats["status"].get(ex.status, 0) + 1
        stats["left_out"] += ex.n_left_out
        stats["units_over_budget"] += ex.n_left_out > 0
        stats["choices"] += ex.n_choices
        stats["rejected"] += ex.n_rejected
        stats["languages"][ex.language] = stats["languages"].get(ex.language, 0) + 1
        tokens += ex.evaluated_tokens + ex.completion_tokens
        bar.update(1)
        bar.set_postfix_str(f"{tokens / max(time.perf_counter() - t_start, 1e-9):.0f} tok/s, "
                            f"{stats['entities']} entities", refresh=False)

    try:
        if parallel:
            # Token ids stay JSON text until a worker hits the entry (memory of a large cache).
            cache = {k: (o, f, t) for k, o, f, t in store.con.execute(
                "SELECT key, output, finish_reason, tokens FROM llm_cache WHERE stage IN ('extract', 'glean')"
            ).fetchall()}

            def spec_for(worker: int) -> WorkerSpec:
                return WorkerSpec(str(model.path) if getattr(model, "path", None) is not None else None, model.n_ctx, settings.seed,
                                  plan.threads, settings, client.run_id, worker_job, cache, model_factory)

            if say:
                where = "Ray actors" if settings.executor == "ray" else "worker processes"
                say(f"extract: {plan.workers} {where} x {plan.threads} llama.cpp thread(s) "
                    f"on {plan.cores} core{'s' if plan.cores != 1 else ''}")
            update_claim(max(plan.total_threads, model.n_threads or 1))
            try:
                with open_pool(spec_for, plan, settings, "extract") as pool:
                    for chunk_id, key, ex, calls, puts, _worker in pool.results([(c, (t, e), k) for c, t, k, e in todo]):
                        commit(chunk_id, key, ex, calls, puts)
            finally:
                update_claim(model.n_threads or settings.n_threads)
            stats["startup_seconds"] = round(pool.startup_seconds, 2)
        else:
            for chunk_id, text, key, edges in todo:
                ex = extract_unit(client if calls_model else None, prompts, text, settings, system, with_desc, nlp,
                                  edges)
                commit(chunk_id, key, ex)
    finally:
        bar.close()
    if say:
        for w in extraction_warnings(stats, settings, nlp):
            say(f"warning: {w}")
    return ExtractResult(**stats)


def extraction_warnings(stats: dict, settings: Settings, nlp) -> list[str]:
    """The run's warnings about candidates (each said once per run): text units with more candidates
    than the budget, and languages whose names the candidate pass cannot (fully) find
    (:data:`slmgraph.indexing.stages.ner.LANGUAGE_NOTES`; not said when the pipeline reads that language)."""
    out = []
    if stats.get("left_out"):
        budget = stats.get("budget", settings.max_candidates)
        out.append(f"{stats['units_over_budget']} text unit(s) had more candidate names than --max-candidates "
                   f"{budget}: {stats['left_out']} were left out (the least mentioned; see "
                   "'slmgraph stats'); raise --max-candidates to keep them")
    lang = getattr(nlp, "lang", None) if nlp is not None else None
    for code, n in sorted(stats.get("languages", {}).items()):
        if code in LANGUAGE_NOTES and code != lang:
            out.append(f"{n} text unit(s) in {LANGUAGE_NAMES.get(code, code)}: {LANGUAGE_NOTES[code]}")
    return out
