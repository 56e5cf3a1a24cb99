"""One text unit's extraction by each method (paper sec. 3.1.2): LLM-free (:func:`extract_nlp`), the
candidate pass with the model's choices by token probability (:func:`extract_choices`), or JSON records
the model writes, with gleaning (:func:`extract_llm`); :func:`extract_unit` takes the configured route
(:mod:`slmgraph.indexing.stages.extract_routes`). The result is an :class:`Extraction`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from slmgraph.config.prompting import Prompts
from slmgraph.config.settings import Settings
from slmgraph.errors import GrammarError
from slmgraph.indexing.stages.concepts import UnitConcepts, unit_concepts_of
from slmgraph.indexing.stages.extract_routes import json_extraction, model_choices
from slmgraph.indexing.stages.extract_schema import (
    FREE_NAME_MAX_CHARS, extraction_schema, free_extraction_schema, ground, validate,
)
from slmgraph.indexing.stages.extract_text import (
    add_cooccurrence, cooccurrence, says_more, text_descriptions,
)
from slmgraph.indexing.stages.ner import find_candidates
from slmgraph.indexing.stages.steer import apply as steer_apply
from slmgraph.model.client import CHARS_PER_TOKEN, DEADLINE_UNIT_S, ModelClient
from slmgraph.names.forms import cut, mentions, normalize_name, quoted_sentence
from slmgraph.names.kinds import furniture, list_line
from slmgraph.text.shape import junk_passage
from slmgraph.text.prose import parse_json, sentences

@dataclass
class Extraction:
    """Validated records of one text unit."""

    entities: list[dict] = field(default_factory=list)  #: {name, type, description}
    relationships: list[dict] = field(default_factory=list)  #: {source, target, description, strength}
    n_candidates: int = 0
    n_dropped: int = 0
    n_ungrounded: int = 0  #: entities dropped by grounding (name not in the text unit)
    gleanings: int = 0  #: gleaning rounds that added records
    status: str = "ok"  #: ok | repaired | truncated | failed | empty | no_prose
    raw: str = ""
    finish_reason: str = "stop"  #: of the model call (``deadline``: redone on the next run)
    evaluated_tokens: int = 0  #: prompt tokens evaluated by the model for this unit (not reused, not cached)
    completion_tokens: int = 0  #: tokens generated for this unit
    n_left_out: int = 0  #: candidates past the budget (``max_candidates``), not offered (:mod:`slmgraph.indexing.stages.ner`)
    n_choices: int = 0  #: model choices made by token probability (keep / type / relate)
    n_rejected: int = 0  #: candidates the model's keep choice dropped, plus pairs its relate choice dropped
    language: str = "en"  #: :func:`slmgraph.indexing.stages.ner.text_language` of the text unit
    concepts: UnitConcepts | None = None  #: noun-phrase concepts and their links (``settings.concepts``)

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
    (:func:`slmgraph.indexing.stages.ner.mask_markup`), so markup does not become a description. A text unit
    that holds no text (:func:`slmgraph.text.shape.junk_passage`) gives nothing (status ``no_prose``)."""
    if junk_passage(text):
        return Extraction(status="no_prose")
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

    persons = {c.name: c.name for c in cp.candidates if c.type == "person"}

    def first_sentence(*names: str) -> str:
        alone = ""  # the first such sentence as it is: a last resort when no quote of it can say who "she" is
        for k, snt in enumerate(sents):
            if all(mentions(snt, n) for n in names) and says_more(snt, names) and not list_line(snt) \
                    and not furniture(snt):  # "Present: A, B": who was there describes no one; "Dear X," neither
                quote = quoted_sentence(sents, k, persons, max_chars)  # "She ...": with the one naming her
                if quote is not None:
                    return quote
                alone = alone or cut(snt, max_chars)
        return alone

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

def extract_unit(client: ModelClient | None, prompts: Prompts, text: str, settings: Settings, system: str,
                 with_descriptions: bool, nlp, edges: tuple[bool, bool]) -> Extraction:
    """One text unit's extraction by the configured route: ``nlp`` (:func:`extract_nlp`), JSON
    records (:func:`extract_llm`, see :func:`json_extraction`) or the candidate pass with the model's
    choices (:func:`extract_choices`, :func:`model_choices`). A text unit that holds no prose (a dumped table,
    a log: :func:`slmgraph.text.shape.junk_passage`) gives nothing and costs no model call (status
    ``no_prose``): its runs of names and codes would crowd the graph."""
    if junk_passage(text):
        return Extraction(status="no_prose")
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
