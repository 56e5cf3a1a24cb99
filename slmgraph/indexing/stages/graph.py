"""Graph merge: entity and relationship mentions into one graph (paper sec. 3.1.3).

The same entity extracted from many text units becomes one node, keyed by its
normalised name (:func:`slmgraph.names.forms.normalize_name`), after entity
resolution (:mod:`slmgraph.indexing.stages.resolve`: titles, name subsets, acronyms, name
embeddings) has mapped the keys that still fragment one entity onto one key;
each merge is written to ``merge_log``. An entity's name is the most frequent
surface form of its key, its type the most frequent known type of everything
merged into it. Repeated relationship instances between the same two entities
become one undirected edge whose weight is the number of text units stating
it (the paper's edge weight; a unit stating it only inside its overlap with
the previous unit, which states it too, repeats that statement and is not
counted, :func:`overlap_repeats`); a relationship whose two ends were resolved to
one entity is dropped. Which text units support each entity and relationship
is kept.

Element summaries (paper sec. 3.1.3, ARCHITECTURE.md stage 4): an entity or
relationship with more than one distinct description gets one summary written
by the model (ledger stage ``summarize``), or -- with ``summaries`` = join, or
auto with a model under 1e9 parameters -- the distinct descriptions joined,
most frequent first, within ``entity_description_max_tokens``. A summary that
shares too few words with its descriptions (an invented one) is replaced by
the join. One description needs no summary and no model call. Descriptions
are taken in the corpus's reading order as it grew (:data:`READING_ORDER`).
"""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Callable

import numpy as np
from tqdm import tqdm

from slmgraph.config.settings import Settings
from slmgraph.errors import UserError
from slmgraph.model.client import DEADLINE_UNIT_S, ModelClient
from slmgraph.indexing.stages.concepts import DESCRIPTION_TOKENS as CONCEPT_DESCRIPTION_TOKENS, concept_graph
from slmgraph.indexing.stages.extract_routes import model_writes, types_reliable
from slmgraph.names.forms import content_words, is_grounded, mentions
from slmgraph.config.prompting import Prompts
from slmgraph.indexing.stages.resolve import RULES, majority_type, resolve_entities
from slmgraph.store.bulk import insert_rows
from slmgraph.store.db import Store
from slmgraph.text.prose import degenerate, sentence_spans, sentences

#: Input budget of one summary prompt's descriptions, tokens (further capped by
#: the window): microsoft/graphrag's description summariser uses
#: ``DEFAULT_MAX_INPUT_TOKENS = 4_000``.
SUMMARY_INPUT_TOKENS = 4000
#: Fewest description tokens a summary prompt must have room for (about two short descriptions);
#: a smaller window is a user error (raise --n-ctx) rather than a summary of nothing.
MIN_SUMMARY_INPUT_TOKENS = 64
#: Share of a summary's content words that must occur in its descriptions
#: (the same bar as report titles and summaries, :func:`slmgraph.indexing.stages.report_data.ground_report`).
SUMMARY_GROUNDED_SHARE = 0.5

#: Order of the mention rows (``m``) whose descriptions are joined: the reading order of the corpus as
#: it grew -- documents in the order they were added to the index (``documents.added_at``; one index run
#: adds its documents at one timestamp), then by path, then the text unit's position -- so that
#: documents added later append their sentences after those already there instead of landing among
#: them by text-unit hash. A joined description then keeps its start when documents are added, and so
#: does the window of it that the embedder reads (docs/decisions.md: embeddings reused by window).
READING_ORDER = ("LEFT JOIN text_units t ON t.chunk_id = m.chunk_id LEFT JOIN documents d ON d.doc_id = t.doc_id "
                 "ORDER BY d.added_at NULLS LAST, d.path NULLS LAST, t.ord NULLS LAST, m.chunk_id")


def _pick(counter: Counter, exclude: tuple = ()) -> str:
    items = [(-n, k) for k, n in counter.items() if k not in exclude] or [(-n, k) for k, n in counter.items()]
    return min(items)[1] if items else ""


def distinct_descriptions(descs: list[str]) -> list[str]:
    """Distinct non-empty descriptions (stripped), most frequent first, then in order of first occurrence."""
    c = Counter(d.strip() for d in descs if d and d.strip())
    return sorted(c, key=lambda d: (-c[d], descs.index(d) if d in descs else 0))


def join_descriptions(descs: list[str], max_tokens: int, count_tokens) -> str:
    """Distinct non-empty descriptions, most frequent first, joined by spaces,
    stopping before ``max_tokens`` tokens (at least the first is kept, cut to fit)."""
    ordered = distinct_descriptions(descs)
    out: list[str] = []
    used = 0
    for d in ordered:
        n = count_tokens(d)
        if used + n > max_tokens:
            if not out:
                out.append(d)  # caller truncates a single overlong description
            break
        out.append(d if d.endswith((".", "!", "?")) else d + ".")
        used += n + 1
    return " ".join(out)


def _clean_summary(text: str, finish_reason: str) -> str:
    """A model summary as one paragraph: whitespace folded, a leading "Summary:" label
    removed, and an unfinished last sentence dropped when the cap cut it."""
    t = " ".join(text.split())
    if t.casefold().startswith("summary:"):
        t = t[len("summary:"):].strip()
    if finish_reason != "stop":
        sents = sentences(t)
        if len(sents) > 1 and not sents[-1].endswith((".", "!", "?")):
            t = " ".join(sents[:-1])
    return t


class Summarizer:
    """Element summaries written by the model, one ``summarize`` call per element.

    The descriptions go into ``prompts/summarize_user.txt`` most frequent
    first, as many as fit :data:`SUMMARY_INPUT_TOKENS` and the window (the
    first one is cut to fit if it alone is too long); the completion is capped
    at ``max_tokens``. Calls go through :meth:`ModelClient.call`, so a re-run
    with the same descriptions is answered from the index's cache.

    Args:
        client: the model client (cache and ledger).
        prompts: the prompt files (``summarize_system``, ``summarize_user``).
        max_tokens: completion cap of one summary, tokens (``entity_description_max_tokens``).

    Attributes:
        written: summaries accepted; ``rejected``: summaries replaced by the join
            (empty, degenerate, or sharing under :data:`SUMMARY_GROUNDED_SHARE`
            of their content words with the descriptions).

    Raises:
        UserError: the window leaves no room for the descriptions (raise ``--n-ctx``).
    """

    def __init__(self, client: ModelClient, prompts: Prompts, max_tokens: int):
        self.client = client
        self.prompts = prompts
        self.max_tokens = max_tokens
        self.system = prompts.text("summarize_system")
        overhead = client.overhead(self.system, prompts.fill("summarize_user", element="", descriptions=""))
        self.budget = min(SUMMARY_INPUT_TOKENS, client.n_ctx - max_tokens - overhead - 16)
        if self.budget < MIN_SUMMARY_INPUT_TOKENS:
            raise UserError(f"the {client.n_ctx}-token window leaves no room for the descriptions of an element "
                            "summary: raise --n-ctx")
        self.written = 0
        self.rejected = 0

    def __call__(self, element: str, names: list[str], descs: list[str]) -> str | None:
        """Summary of ``descs`` (the descriptions of one entity or relationship), or None
        when the model's text is not grounded in them (the caller then joins them).

        Args:
            element: how the element is named in the prompt ("Alex Mercer (person)").
            names: the names of its entity or entities (count as grounded words).
            descs: its descriptions, repeats included (they order the prompt).
        """
        used = self.client.count(element)
        lines: list[str] = []
        for d in distinct_descriptions(descs):
            line = "- " + " ".join(d.split())
            n = self.client.count(line + "\n")
            if used + n > self.budget:
                if not lines:
                    lines.append(self.client.truncate(line, self.budget - used))
                break
            lines.append(line)
            used += n
        data = "\n".join(lines)
        gen = self.client.call("summarize", self.system,
                               self.prompts.fill("summarize_user", element=element, descriptions=data),
                               schema=None, max_tokens=self.max_tokens, deadline_s=DEADLINE_UNIT_S)
        text = _clean_summary(gen.text, gen.finish_reason)
        words = set(content_words(" ".join(names) + "\n" + data))
        if not text or degenerate(text) or not is_grounded(text, words, SUMMARY_GROUNDED_SHARE):
            self.rejected += 1
            return None
        self.written += 1
        return text


@dataclass
class GraphResult:
    """What stage 4 did: ``entities``, ``relationships``, ``isolated`` (entities without
    edges), ``merges`` (entity-resolution rule -> count, every rule present),
    ``self_loops_dropped`` (relationship mentions whose two ends were resolved to one
    entity), ``summaries`` ("model" or "join"), ``summarized`` (elements with more than
    one description), ``summary_calls``, ``summary_cache_hits``, ``summaries_rejected``
    (ungrounded model summaries, joined instead)."""
    entities: int
    relationships: int
    isolated: int
    merges: dict[str, int]
    self_loops_dropped: int
    summaries: str
    summarized: int
    summary_calls: int
    summary_cache_hits: int
    summaries_rejected: int
    concepts: int = 0  #: entities that are noun-phrase concepts (slmgraph.indexing.stages.concepts), among ``entities``

    def summary(self, settings: Settings | None = None) -> list[str]:
        """The progress line ``index`` prints."""
        merged = ", ".join(f"{k} {v}" for k, v in self.merges.items() if v) or "none"
        summ = (f"{self.summarized} element summaries by the model ({self.summary_calls} model calls, "
                f"{self.summary_cache_hits} from cache, {self.summaries_rejected} ungrounded ones joined instead)"
                if self.summaries == "model" else "descriptions joined")
        return [f"graph: {self.entities} entities, {self.relationships} relationships, {self.isolated} isolated; "
                f"entity resolution merges: {merged}; {summ}"]


def overlap_chars(before: str, after: str) -> int:
    """Characters ``after`` (a text unit) shares with the end of ``before`` (the previous unit of its
    document): the largest k with ``before.endswith(after[:k])``; 0 when they do not overlap."""
    probe = after[:32]
    i = before.find(probe) if probe else -1
    while i >= 0:
        if after.startswith(before[i:]):
            return len(before) - i
        i = before.find(probe, i + 1)
    return 0


def overlap_repeats(con, edge_units: dict, forms: dict[str, set[str]]) -> Counter:
    """Per edge, the text units that state it only inside their overlap with the previous text unit of
    their document, when that unit supports the edge too: the same sentence read twice, not a second
    statement (counted once in the edge's weight).

    Args:
        edge_units: edge key ``(a, b)`` -> the chunk ids supporting it.
        forms: entity key -> its names as written (a sentence states the edge when it mentions a name of
            each end, :func:`slmgraph.names.forms.mentions`).

    Returns:
        edge key -> units to discount (0 for most).
    """
    out: Counter = Counter()
    multi = {k: u for k, u in edge_units.items() if len(u) > 1}
    if not multi:
        return out
    info = {cid: (doc, o, text) for cid, doc, o, text in
            con.execute("SELECT chunk_id, doc_id, ord, text FROM text_units").fetchall()}
    at = {(doc, o): cid for cid, (doc, o, _) in info.items()}
    shared: dict[str, int] = {}
    for key, units in multi.items():
        for cid in units:
            doc, o, text = info.get(cid, (None, None, ""))
            prev = at.get((doc, o - 1)) if doc is not None else None
            if prev is None or prev not in units:
                continue
            if cid not in shared:
                shared[cid] = overlap_chars(info[prev][2], text)
            k = shared[cid]
            if not k:
                continue
            stating = [(a, b) for a, b in sentence_spans(text)
                       if all(any(mentions(text[a:b], n) for n in forms.get(end, ())) for end in key)]
            if stating and all(b <= k for _, b in stating):
                out[key] += 1
    return out


def build_graph(store: Store, count_tokens, max_description_tokens: int, *, settings: Settings | None = None,
                embed: Callable[[list[str]], np.ndarray] | None = None, client: ModelClient | None = None,
                prompts: Prompts | None = None, progress: bool = False, summary_limit: int | None = None) -> GraphResult:
    """Rebuild ``entities``, ``relationships``, their provenance and ``merge_log`` from the mention tables.

    Entity resolution (:func:`slmgraph.indexing.stages.resolve.resolve_entities`) maps the
    mentions' keys to entity keys first; element summaries are written by the
    model or joined (module docstring).

    Deterministic: a new index numbers entities in sorted order of their
    normalised names; a rebuilt graph keeps each surviving entity's id and
    numbers new ones after the largest (ids are keyed by the entity's key
    after resolution). Relationship ids follow the sorted endpoint pairs.
    The tables are written in one transaction (model calls happen before it).

    Args:
        count_tokens: ``str -> int`` in the model's tokenizer.
        max_description_tokens: cap of a merged description or summary, tokens.
        settings: ``resolution_threshold`` and ``summaries`` are read from it;
            None = the defaults of :class:`slmgraph.config.settings.Settings`.
        embed: ``list[str] -> array (n, dim)`` of name embeddings for the
            ``embedding`` resolution rule; called only when the threshold is
            set and at least two entities are left after the rule-based merges,
            so a lazy embedder loads torch only then. None skips that rule.
        client, prompts: the model client and prompt files for element
            summaries; without them descriptions are joined.
        progress: show a tqdm bar over the element summaries.
        summary_limit: with the model summarizing, only the ``summary_limit`` elements with the most
            distinct descriptions (ties: entities by id, then relationships by endpoints) get a model call
            (the stage bench's cap), the others a joined description; None = all.

    Returns:
        :class:`GraphResult`.

    Raises:
        ValueError: ``summaries`` is "model" but no client or prompts were given,
            or ``embed`` returned an array of the wrong shape.
        UserError: the window is too small for a summary prompt.
    """
    settings = settings or Settings()
    con = store.con
    count_tokens = functools.lru_cache(maxsize=None)(count_tokens)  # one description recurs across elements
    ment = con.execute("SELECT m.chunk_id, m.name, m.norm, m.type, m.description FROM entity_mentions m "
                       f"{READING_ORDER}, m.norm, m.name, m.type, m.description").fetchall()
    mnames: dict[str, Counter] = defaultdict(Counter)
    mtypes: dict[str, Counter] = defaultdict(Counter)
    munits: dict[str, set] = defaultdict(set)
    for chunk_id, name, norm, etype, desc in ment:
        if norm:
            mnames[norm][name] += 1
            mtypes[norm][etype] += 1
            munits[norm].add(chunk_id)
    res = resolve_entities(mnames, mtypes, {n: len(u) for n, u in munits.items()},
                           threshold=settings.resolution_threshold, embed=embed, rules=settings.resolution_rules,
                           units=munits,
                           types_reliable=types_reliable(settings, getattr(client, "model", None)))
    canon = res.mapping
    names: dict[str, Counter] = {n: mnames[n] for n in canon if canon[n] == n}
    types: dict[str, Counter] = defaultdict(Counter)
    descs: dict[str, list[str]] = defaultdict(list)
    units: dict[str, set] = defaultdict(set)
    for chunk_id, name, norm, etype, desc in ment:
        if not norm:
            continue
        key = canon[norm]
        types[key][etype] += 1
        if desc:
            descs[key].append(desc)
        units[key].add(chunk_id)
    rment = con.execute("SELECT m.chunk_id, m.source_norm, m.target_norm, m.description, m.strength "
                        f"FROM relationship_mentions m {READING_ORDER}, m.source_norm, m.target_norm, "
                        "m.description, m.strength").fetchall()
    edges: dict[tuple[str, str], dict] = {}
    self_loops = 0
    for chunk_id, s, t, desc, strength in rment:
        if s == t or s not in canon or t not in canon:
            continue
        s, t = canon[s], canon[t]
        if s == t:
            self_loops += 1
            continue
        key = (min(s, t), max(s, t))
        e = edges.setdefault(key, {"descs": [], "strength": [], "units": set()})
        if desc:
            e["descs"].append(desc)
        e["strength"].append(strength or 5)
        e["units"].add(chunk_id)
    concept_keys: set[str] = set()
    if settings.concepts:  # noun-phrase concepts join after resolution, so none is merged with a name
        cg = concept_graph(con, canon, READING_ORDER)
        for k, us in cg.units.items():
            names[k], types[k], descs[k], units[k] = cg.names[k], Counter({"concept": len(us)}), \
                list(cg.descriptions[k]), set(us)
        edges.update(cg.edges)  # one end of each is a concept: no name-name edge is replaced
        concept_keys = set(cg.units)
    # Ids 1..n in key order, whatever earlier graphs held: Leiden's vertex order (and so its seeded
    # partition) and every tie broken by id are then those of a from-scratch build of the same input.
    ids = {norm: i for i, norm in enumerate(sorted(names), start=1)}
    degree: Counter = Counter()
    for s, t in edges:
        degree[s] += 1
        degree[t] += 1
    display = {n: _pick(names[n]) for n in names}
    etype = {n: majority_type(types[n], ("unknown",), one_word=" " not in n) for n in names}

    use_model = model_writes(settings.summaries, client.model if client else None, "summaries")
    if use_model and (client is None or prompts is None):
        if settings.summaries == "model":
            raise ValueError("summaries='model' needs a model client and prompts")
        use_model = False
    stats = {"summaries": "model" if use_model else "join", "summarized": 0, "summary_calls": 0,
             "summary_cache_hits": 0, "summaries_rejected": 0}
    summaries: dict[object, str] = {}
    if use_model:
        todo = [(n, display[n] if etype[n] == "unknown" else f"{display[n]} ({etype[n]})", [display[n]], descs[n])
                for n in sorted(names, key=ids.get)
                if n not in concept_keys and len(distinct_descriptions(descs[n])) > 1]
        todo += [(k, f"the relationship between {display[k[0]]} and {display[k[1]]}", [display[k[0]], display[k[1]]],
                  e["descs"]) for k, e in sorted(edges.items())
                 if not (set(k) & concept_keys) and len(distinct_descriptions(e["descs"])) > 1]
        if summary_limit is not None:
            ranked = sorted(range(len(todo)), key=lambda i: -len(distinct_descriptions(todo[i][3])))
            keep = set(ranked[:summary_limit])
            todo = [t for i, t in enumerate(todo) if i in keep]
        if todo:
            summarizer = Summarizer(client, prompts, max_description_tokens)
            calls0, hits0 = client.calls, client.cache_hits
            for key, element, enames, ds in tqdm(todo, desc="summarize", unit="summary",
                                                 disable=not progress, dynamic_ncols=True):
                text = summarizer(element, enames, ds)
                if text:
                    summaries[key] = text
            stats.update(summarized=len(todo), summary_calls=client.calls - calls0,
                         summary_cache_hits=client.cache_hits - hits0, summaries_rejected=summarizer.rejected)

    def description(key, ds: list[str]) -> str:
        cap = min(max_description_tokens, CONCEPT_DESCRIPTION_TOKENS) if key in concept_keys else max_description_tokens
        return summaries.get(key) or join_descriptions(ds, cap, count_tokens)

    ent_rows = []
    for norm, eid in sorted(ids.items(), key=lambda kv: kv[1]):
        ent_rows.append([eid, norm, display[norm], etype[norm], description(norm, descs[norm]),
                         len(units[norm]), degree[norm]])
    forms: dict[str, set[str]] = defaultdict(set)  # entity key -> its names as written
    for _, name, norm, _, _ in ment:
        if norm in canon:
            forms[canon[norm]].add(name)
    repeats = overlap_repeats(con, {k: e["units"] for k, e in edges.items()}, forms)
    rel_rows = []
    prov = []
    for rid, (key, e) in enumerate(sorted(edges.items()), start=1):
        s, t = key
        rel_rows.append([rid, ids[s], ids[t], description(key, e["descs"]), float(len(e["units"]) - repeats[key]),
                         sum(e["strength"]) / len(e["strength"]), degree[s] + degree[t]])
        prov.extend([rid, c] for c in sorted(e["units"]))
    with store.transaction():
        store.clear("graph")
        if ent_rows:
            insert_rows(con, "entities", ("entity_id", "norm", "name", "type", "description", "n_mentions", "degree"),
                        ent_rows)
            if concept_keys:
                insert_rows(con, "concepts", ("entity_id", "n_units"),
                            [(ids[k], len(units[k])) for k in sorted(concept_keys, key=ids.get)])
            insert_rows(con, "entity_text_units", ("entity_id", "chunk_id"),
                        [(ids[n], c) for n in sorted(units, key=ids.get) for c in sorted(units[n])])
        if rel_rows:
            insert_rows(con, "relationships", ("rel_id", "source_id", "target_id", "description", "weight", "strength",
                                             "combined_degree"), rel_rows)
            insert_rows(con, "relationship_text_units", ("rel_id", "chunk_id"), prov)
        if res.log:
            insert_rows(con, "merge_log", ("norm", "into_norm", "rule", "score", "detail"), [tuple(r) for r in res.log])
    return GraphResult(entities=len(ent_rows), relationships=len(rel_rows),
                       isolated=sum(1 for n in ids if degree[n] == 0), merges={r: res.merges[r] for r in RULES},
                       self_loops_dropped=self_loops, concepts=len(concept_keys), **stats)
