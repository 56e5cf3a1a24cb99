"""Extraction quality against a gold file: Re-DocRED loading, the scorer, and indexing one gold document.

Shared by ``slmgraph bench --gold`` and ``benchmarks/extraction_gold.py`` (both import it; the
benchmark adds its configurations and results files).

Gold format: Re-DocRED (Tan et al. 2022, "Revisiting DocRED", github.com/tonytan48/Re-DocRED,
MIT), the JSON of DocRED: a list of documents, each ``{title, sents, vertexSet, labels}``:
``sents`` (tokenised sentences, detokenised here by :func:`detokenize`), ``vertexSet`` (gold
entities, each a list of mentions with ``name`` and ``type`` in PER, ORG, LOC, MISC, TIME, NUM) and
``labels`` (relation triples ``h``, ``t``, ``r`` between vertexSet indices).

Each document is indexed on its own, in a temporary DuckDB file, through the registered stages of
``slmgraph index`` (:data:`GOLD_STAGES` of :data:`slmgraph.indexing.pipeline.STAGES`: ingest, extract, graph),
so chunking, candidates, extraction, grounding, gleaning and entity resolution are exactly the index's; entities never merge across documents. No communities,
reports or embeddings of text are made.

Scoring (slmgraph/ARCHITECTURE.md, "Extraction quality of the bundled 135M model"):

* Names match under the tolerant key (:func:`slmgraph.names.forms.tolerant_key`: casefold, NFKC,
  punctuation dropped, plurals and a leading article ignored).
* **Entities, one-to-one (strict).** A predicted entity -- after resolution; its aliases are the
  surface names of every mention merged into it (``entity_mentions`` + ``merge_log``) -- matches a
  gold entity when an alias equals one of the gold entity's mention names. Each gold entity is
  matched at most once (maximum bipartite matching), so a second predicted entity for the same gold
  entity (a fragment) is a false positive: entity resolution shows in precision. Gold TIME and NUM
  entities are excluded ("excl. dates/numbers"): a prediction matching only such entities counts
  neither way. Micro P/R/F1 over the documents.
* **Entities, lenient (many-to-one).** ARCHITECTURE.md's baseline rule: a predicted entity is right
  when it matches any (non-excluded) gold entity, and a gold entity is found when any prediction
  matches it.
* **Relationship pairs.** Gold pairs are the unordered pairs {h, t} of ``labels`` (relation type
  ignored), without pairs involving an excluded entity. A predicted relationship is a true positive
  when its two entities are matched (one-to-one) to two distinct gold entities forming a gold pair;
  each gold pair counts once; a relationship with an endpoint matching only excluded entities counts
  neither way. Micro P/R/F1.
* **Type accuracy.** Of the strictly matched entities, the share whose type is right under
  :data:`GOLD_TYPES` (untyped counts wrong).
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from slmgraph.config.settings import Settings
from slmgraph.errors import UserError
from slmgraph.indexing.pipeline import IndexContext, stages
from slmgraph.indexing.stages.concepts import concept_ids
from slmgraph.indexing.stages.ingest_read import Document
from slmgraph.names.forms import tolerant_key
from slmgraph.config.prompting import Prompts
from slmgraph.store.db import Store

#: Gold Re-DocRED type -> the entity types that count as right (slmgraph.indexing.stages.ner.NER_TYPES maps spaCy's labels
#: onto the same configured types: MISC covers events, works, nationalities, laws, products).
GOLD_TYPES = {"PER": {"person"}, "ORG": {"organization"}, "LOC": {"location"}, "MISC": {"event", "concept"}}

#: Gold entity types left out of the scores ("excl. dates/numbers", slmgraph/ARCHITECTURE.md "Extraction quality of the bundled 135M model").
EXCLUDED_TYPES = frozenset({"TIME", "NUM"})


# --- gold -----------------------------------------------------------------------

_NO_SPACE_BEFORE = frozenset({",", ".", ";", ":", "!", "?", ")", "]", "}", "%", "'", "...", "..", "\u201d", "\u2019",
                              "'s", "'re", "'ve", "'ll", "'d", "'m", "n't"})
_NO_SPACE_AFTER = frozenset({"(", "[", "{", "$", "#", "\u00a3", "\u20ac", "\u201c", "\u2018"})
_JOINERS = frozenset({"-", "\u2013", "/"})


def detokenize(tokens: list[str]) -> str:
    """Text of Re-DocRED's word tokens, spaced as prose.

    No space before ``, . ; : ! ? ) ] } %``, a closing quote or a clitic
    (``'s``, ``n't``, a lone ``'``); none after ``( [ { $ #`` or an opening
    quote; straight double quotes alternate opening/closing; a hyphen,
    en dash or slash between two alphanumeric tokens joins them ("two - year"
    -> "two-year"); whitespace-only tokens (non-breaking spaces) are skipped.
    """
    toks = [t for t in tokens if t.strip()]
    out: list[str] = []
    attach_next = True
    quote_open = False
    for i, tok in enumerate(toks):
        space = not attach_next
        attach_next = False
        if tok in _NO_SPACE_BEFORE or tok.lower() in _NO_SPACE_BEFORE:
            space = False
        if tok in _NO_SPACE_AFTER:
            attach_next = True
        if tok == '"':
            if quote_open:
                space = False
            else:
                attach_next = True
            quote_open = not quote_open
        if (tok in _JOINERS and out and out[-1][-1:].isalnum() and i + 1 < len(toks)
                and toks[i + 1][:1].isalnum()):
            space = False
            attach_next = True
        out.append((" " if space and out else "") + tok)
    return "".join(out)


@dataclass
class GoldEntity:
    """One gold entity (a Re-DocRED ``vertexSet`` cluster)."""

    names: list[str]  #: its mention names, as tokenised in the gold file
    keys: frozenset[str]  #: tolerant keys of the names
    type: str  #: type of its first mention (PER, ORG, LOC, MISC, TIME, NUM)

    @property
    def excluded(self) -> bool:
        """A date or number (left out of the scores)."""
        return self.type in EXCLUDED_TYPES


@dataclass
class GoldDoc:
    """One gold document: detokenised text, gold entities, gold unordered pairs of entity indices."""

    index: int
    title: str
    text: str
    entities: list[GoldEntity]
    pairs: set[frozenset[int]]


def load_gold(path: Path, n_docs: int) -> list[GoldDoc]:
    """The first ``n_docs`` documents of a Re-DocRED JSON file (a list of ``{title, sents, vertexSet, labels}``).

    Raises:
        UserError: the file is missing or is not Re-DocRED JSON.
    """
    if not path.is_file():
        raise UserError(f"gold file {path} not found: pass --gold a Re-DocRED JSON file (e.g. dev_revised.json, "
                        "a list of documents with title, sents, vertexSet and labels)")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        docs = []
        for i, d in enumerate(raw[:n_docs]):
            ents = [GoldEntity([m["name"] for m in v], frozenset(k for k in (tolerant_key(m["name"]) for m in v) if k),
                               v[0]["type"]) for v in d["vertexSet"]]
            pairs = {frozenset((lab["h"], lab["t"])) for lab in d["labels"] if lab["h"] != lab["t"]}
            docs.append(GoldDoc(i, d["title"], detokenize([t for s in d["sents"] for t in s]), ents, pairs))
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise UserError(f"gold file {path} is not Re-DocRED JSON ({type(exc).__name__}: {exc}): pass --gold a file "
                        "with title, sents, vertexSet and labels per document") from None
    if not docs:
        raise UserError(f"gold file {path} holds no documents: pass --gold a Re-DocRED JSON file with documents")
    return docs


# --- predictions -----------------------------------------------------------------


@dataclass
class Prediction:
    """A document's graph: entity id -> aliases (surface names), and relationships as entity-id pairs."""

    aliases: dict[int, set[str]]
    relationships: list[tuple[int, int]]
    types: dict[int, str] = field(default_factory=dict)  #: entity id -> its type


def read_prediction(store: Store) -> Prediction:
    """The resolved entities of an index with all their surface names, and its relationships.

    An entity's aliases are its name and the names of every mention whose
    normalised name is the entity's or was merged into it (``merge_log``,
    followed through chains of merges). Noun-phrase concepts (:mod:`slmgraph.indexing.stages.concepts`) are not
    named entities: they and their links are left out, so the named-entity scores do not depend on them.
    """
    con = store.con
    concepts = concept_ids(store)
    ids = {n: i for n, i in con.execute("SELECT norm, entity_id FROM entities").fetchall() if i not in concepts}
    aliases: dict[int, set[str]] = {eid: set() for eid in ids.values()}
    for norm, name in con.execute("SELECT norm, name FROM entities").fetchall():
        if norm in ids:
            aliases[ids[norm]].add(name)
    into = dict(con.execute("SELECT norm, into_norm FROM merge_log").fetchall())

    def final(norm: str) -> str:
        seen = set()
        while norm not in ids and norm in into and norm not in seen:
            seen.add(norm)
            norm = into[norm]
        return norm

    for norm, name in con.execute("SELECT norm, name FROM entity_mentions").fetchall():
        f = final(norm)
        if f in ids:
            aliases[ids[f]].add(name)
    rels = [(s, t) for s, t in con.execute("SELECT source_id, target_id FROM relationships ORDER BY rel_id").fetchall()
            if s not in concepts and t not in concepts]
    types = {i: t for i, t in con.execute("SELECT entity_id, type FROM entities").fetchall() if i not in concepts}
    return Prediction(aliases, rels, types)


# --- scoring ------------------------------------------------------------------------


@dataclass
class Counts:
    """True positives, false positives, false negatives; :meth:`prf` gives precision, recall, F1."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, other: "Counts") -> None:
        """Add another document's counts (micro averaging)."""
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn

    def prf(self) -> dict:
        """``{tp, fp, fn, p, r, f1}``; P, R, F1 rounded to 3 decimals (0 when undefined)."""
        p = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        r = self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "p": round(p, 3), "r": round(r, 3), "f1": round(f, 3)}


@dataclass
class DocScore:
    """Scores of one document: strict (one-to-one) and lenient entities, relationship pairs."""

    entities: Counts = field(default_factory=Counts)
    lenient: Counts = field(default_factory=Counts)
    pairs: Counts = field(default_factory=Counts)
    neutral: int = 0  #: predicted entities matching only dates/numbers
    typed_right: int = 0  #: matched (strict) entities whose type is right under :data:`GOLD_TYPES`
    typed: int = 0  #: matched entities with a type (not unknown/other)
    matched: int = 0  #: matched entities


def _max_matching(options: dict[int, list[int]]) -> dict[int, int]:
    """Maximum bipartite matching (Kuhn's augmenting paths): predicted id -> gold index.

    ``options`` maps each predicted entity to the gold entities it may match;
    predicted entities are tried in ascending id order, so ties go to the
    lower id (deterministic).
    """
    owner: dict[int, int] = {}

    def augment(p: int, seen: set[int]) -> bool:
        for g in options[p]:
            if g in seen:
                continue
            seen.add(g)
            if g not in owner or augment(owner[g], seen):
                owner[g] = p
                return True
        return False

    for p in sorted(options):
        augment(p, set())
    return {p: g for g, p in owner.items()}


def score_document(pred: Prediction, gold: GoldDoc) -> tuple[DocScore, dict[int, int]]:
    """Score one document's prediction against its gold entities and pairs (rules in the module docstring).

    Returns:
        ``(score, matching)``: the counts, and the one-to-one matching
        predicted entity id -> gold entity index.
    """
    by_key: dict[str, list[int]] = {}
    for gi, g in enumerate(gold.entities):
        for k in g.keys:
            by_key.setdefault(k, []).append(gi)
    options: dict[int, list[int]] = {}
    neutral: set[int] = set()
    for pid, names in pred.aliases.items():
        hits = sorted({gi for n in names for gi in by_key.get(tolerant_key(n), ())})
        kept = [gi for gi in hits if not gold.entities[gi].excluded]
        if hits and not kept:
            neutral.add(pid)
        else:
            options[pid] = kept
    matching = _max_matching(options)
    scored_gold = [gi for gi, g in enumerate(gold.entities) if not g.excluded]
    s = DocScore(neutral=len(neutral))
    s.entities = Counts(len(matching), len(options) - len(matching), len(scored_gold) - len(matching))
    found = {gi for opts in options.values() for gi in opts}
    right = sum(1 for opts in options.values() if opts)
    s.lenient = Counts(right, len(options) - right, len(scored_gold) - len(found))
    gold_pairs = {p for p in gold.pairs if not any(gold.entities[i].excluded for i in p)}
    hit_pairs: set[frozenset[int]] = set()
    for a, b in pred.relationships:
        if a in neutral or b in neutral:
            continue
        ga, gb = matching.get(a), matching.get(b)
        pair = frozenset((ga, gb)) if ga is not None and gb is not None and ga != gb else None
        if pair in gold_pairs and pair not in hit_pairs:
            hit_pairs.add(pair)
            s.pairs.tp += 1
        else:
            s.pairs.fp += 1
    s.pairs.fn = len(gold_pairs) - len(hit_pairs)
    for p, gi in matching.items():
        s.matched += 1
        t = pred.types.get(p, "unknown")
        if t not in ("unknown", "other", "", None):
            s.typed += 1
            s.typed_right += t in GOLD_TYPES.get(gold.entities[gi].type, set())
    return s, matching


# --- running one configuration ----------------------------------------------------------


class WordTokenizer:
    """Tokenizer of the ``nlp`` config, which loads no model: one token per word with its trailing
    spaces (round-trips text exactly). Every gold document (at most 436 words) is one text unit of
    600 such tokens; with a model's tokenizer a document of more than 600 tokens would be two."""

    name = "words"

    def __init__(self):
        self._vocab: dict[str, int] = {}
        self._inv: list[str] = []

    def tokenize(self, text: str) -> list[int]:
        """Token ids of ``text``."""
        out = []
        for piece in re.findall(r"\S+\s*|\s+", text):
            if piece not in self._vocab:
                self._vocab[piece] = len(self._inv)
                self._inv.append(piece)
            out.append(self._vocab[piece])
        return out

    def detokenize(self, tokens: list[int]) -> str:
        """Text of token ids."""
        return "".join(self._inv[t] for t in tokens)


#: The index stages a gold document goes through (:func:`slmgraph.indexing.pipeline.stages`).
GOLD_STAGES = ("ingest", "extract", "graph")


def index_document(doc: GoldDoc, settings: Settings, model, prompts: Prompts, embedder, db_path: Path,
                   run_id: str) -> tuple[Prediction, dict]:
    """Index one gold document into a new DuckDB file and read its graph back.

    Args:
        model: a loaded model (LlamaModel or test fake), or a
            :class:`WordTokenizer` for the ``nlp`` config.

    Returns:
        ``(prediction, figures)``: figures hold ``text_units``, the
        ``extractions`` sums (``status`` counts, ``dropped``, ``entities``,
        ``ungrounded``, ``gleanings``) and the ``llm_calls`` ledger sums.
    """
    from slmgraph.model.client import ModelClient

    store = Store(db_path, create=True)
    try:
        d = Document(hashlib.sha256(doc.text.encode()).hexdigest()[:16], f"redocred-dev-{doc.index:03d}.txt", doc.text)
        client = None if settings.extractor == "nlp" else ModelClient(model, store, run_id)
        ctx = IndexContext(store=store, settings=settings, model=model, prompts=prompts, client=client, docs=[d],
                           embed=embedder.encode if embedder is not None else None)
        results = {st.name: st.run(ctx) for st in stages(*GOLD_STAGES)}
        ing = results["ingest"]
        pred = read_prediction(store)
        con = store.con
        status = dict(con.execute("SELECT status, count(*) FROM extractions GROUP BY status").fetchall())
        ex = con.execute("SELECT coalesce(sum(n_dropped), 0), coalesce(sum(n_entities), 0), "
                         "coalesce(sum(n_ungrounded), 0), coalesce(sum(gleanings), 0) FROM extractions").fetchone()
        led = con.execute("SELECT count(*), coalesce(sum(prompt_tokens), 0), coalesce(sum(cached_tokens), 0), "
                          "coalesce(sum(completion_tokens), 0), coalesce(sum(seconds), 0) FROM llm_calls").fetchone()
        per_stage = {r[0]: r[1] for r in con.execute("SELECT stage, count(*) FROM llm_calls GROUP BY stage").fetchall()}
    finally:
        store.close()
        for p in (db_path, db_path.with_name(db_path.name + ".wal")):
            p.unlink(missing_ok=True)
    figs = {"text_units": ing.text_units, "status": status, "dropped": int(ex[0]), "entities": int(ex[1]),
            "ungrounded": int(ex[2]), "gleanings": int(ex[3]), "model_calls": int(led[0]),
            "prompt_tokens": int(led[1]), "reused_tokens": int(led[2]), "completion_tokens": int(led[3]),
            "model_seconds": float(led[4]), "calls_per_stage": per_stage}
    return pred, figs


def run_config(name: str, settings: Settings, docs: list[GoldDoc], model, *, embedder_factory=None,
               say=print) -> dict:
    """Index and score every document with one configuration.

    Args:
        model: a loaded model, or a :class:`WordTokenizer` for the ``nlp`` config.
        embedder_factory: ``() -> embedder``, called once, only when
            ``settings.resolution_threshold`` is not None (default: the bundled
            all-MiniLM-L6-v2, :class:`slmgraph.indexing.stages.embed.Embedder`).
        say: progress lines.

    Returns:
        The configuration's result: scores (``entities``, ``entities_lenient``,
        ``pairs`` as :meth:`Counts.prf` dicts), gold sizes, ``cost`` and
        ``extraction`` figures.
    """
    embedder = None
    if settings.resolution_threshold is not None:
        if embedder_factory is None:
            from slmgraph.indexing.stages.embed import Embedder

            embedder = Embedder(batch_size=settings.embed_batch_size, threads=settings.n_threads,
                                precision=settings.embed_precision)
        else:
            embedder = embedder_factory()
    prompts = Prompts(settings.prompts_dir)
    ent, lenient, pairs = Counts(), Counts(), Counts()
    tot = {"text_units": 0, "dropped": 0, "entities": 0, "ungrounded": 0, "gleanings": 0, "model_calls": 0,
           "prompt_tokens": 0, "reused_tokens": 0, "completion_tokens": 0, "model_seconds": 0.0}
    status: dict[str, int] = {}
    per_stage: dict[str, int] = {}
    neutral = 0
    typing = [0, 0, 0]  # right, typed, matched
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="slmgraph-gold-") as tmp:
        for i, doc in enumerate(docs):
            pred, figs = index_document(doc, settings, model, prompts, embedder, Path(tmp) / f"doc{i:03d}.duckdb",
                                        f"gold-{name}")
            sc, _ = score_document(pred, doc)
            ent.add(sc.entities)
            lenient.add(sc.lenient)
            pairs.add(sc.pairs)
            neutral += sc.neutral
            typing[0] += sc.typed_right
            typing[1] += sc.typed
            typing[2] += sc.matched
            for k in tot:
                tot[k] += figs[k]
            for k, v in figs["status"].items():
                status[k] = status.get(k, 0) + v
            for k, v in figs["calls_per_stage"].items():
                per_stage[k] = per_stage.get(k, 0) + v
            if settings.extractor != "nlp" or (i + 1) % 20 == 0 or i + 1 == len(docs):
                e = ent.prf()
                say(f"[{name}] {i + 1}/{len(docs)} {doc.title[:40]}: {len(pred.aliases)} entities; so far entity "
                    f"P {e['p']:.3f} R {e['r']:.3f} F1 {e['f1']:.3f}, {time.perf_counter() - t0:.0f} s")
    wall = time.perf_counter() - t0
    before = tot["entities"] + tot["ungrounded"]
    units = tot["text_units"]
    bad = status.get("failed", 0) + status.get("truncated", 0)
    return {
        "documents": len(docs),
        "gold_entities": sum(1 for d in docs for g in d.entities if not g.excluded),
        "gold_entities_excluded": sum(1 for d in docs for g in d.entities if g.excluded),
        "gold_pairs": sum(1 for d in docs for p in d.pairs if not any(d.entities[i].excluded for i in p)),
        "entities": ent.prf(), "entities_lenient": lenient.prf(), "pairs": pairs.prf(),
        "predictions_matching_only_dates_numbers": neutral,
        "types": {"right": typing[0], "typed": typing[1], "matched": typing[2],
                  "accuracy": round(typing[0] / typing[2], 3) if typing[2] else None,
                  "accuracy_of_typed": round(typing[0] / typing[1], 3) if typing[1] else None},
        "cost": {"text_units": units, "model_calls": tot["model_calls"], "calls_per_stage": per_stage,
                 "prompt_tokens": tot["prompt_tokens"],
                 "prompt_tokens_evaluated": tot["prompt_tokens"] - tot["reused_tokens"],
                 "prompt_tokens_reused": tot["reused_tokens"], "completion_tokens": tot["completion_tokens"],
                 "model_seconds": round(tot["model_seconds"], 1), "wall_seconds": round(wall, 1)},
        "extraction": {"status": status, "validation_dropped": tot["dropped"],
                       "entities_before_grounding": before, "ungrounded": tot["ungrounded"],
                       "grounding_drop_rate": round(tot["ungrounded"] / before, 4) if before else None,
                       "unparsed_or_truncated_share": round(bad / units, 4) if units else None,
                       "gleaning_rounds_that_added": tot["gleanings"]},
    }
