"""The topics of a corpus of many works, for a corpus-wide answer (no model): the noun phrases that recur across
its works, grouped by meaning.

A community of the entity graph holds the names mentioned together, which in a corpus of many works (the
episodes of a podcast) is mostly one work's guest and what they name: its communities' themes reach one work
each ("mixed reality, in 1 of 24 works"), while what the corpus discusses across works is the concepts many
of them share. So, for a corpus of at least :data:`TOPIC_MIN_WORKS` works:

* **phrases**: the concept pass's noun phrases and their head compounds (``concept_mentions``) that are
  :func:`slmgraph.query.theme_labels.label_worthy`, no entity's name, topical (residual IDF of their modifiers
  at least :data:`MIN_TOPICALITY`, :func:`slmgraph.query.theme_labels.topicality`) and found in at least
  :data:`MIN_WORK_SHARE` of the works (and two) but under :data:`MAX_WORK_SHARE` (a phrase of every work
  tells no topic from another); a phrase mostly written in lower case is a concept though an entity bears its name
  ("machine learning" typed an organisation), and an acronym the corpus writes beside its phrase counts as the
  phrase ("AI" as "artificial intelligence", :func:`_acronym_units`), a speaker often saying only the acronym;
* **topics**: average-linkage agglomerative clustering of the phrases' embeddings over cosine distance
  (``scipy.cluster.hierarchy``), cut at :data:`CLUSTER_DISTANCE`, as topic models group words (BERTopic's
  c-TF-IDF topics, Grootendorst 2022, group documents; here the phrases are the items). A topic needs two
  phrases, one of them a noun compound: a group of lone abstract nouns ("challenge", "goal", "task") is a
  register of speech, not a subject; a phrase the corpus abbreviates is a term of its own, and makes a topic with
  its compounds alone ("artificial intelligence", "human intelligence");
* **weight and label**: a topic weighs the works its phrases reach, summed over its phrases (how much of the
  corpus discusses it); its phrases are ranked by the works they reach times their cosine with the topic's
  centroid (KeyBERT's ranking against a document, Grootendorst 2020), and its label is its first two.
"""


from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from slmgraph.query.documents import coverage
from slmgraph.query.extractive import _embed
from slmgraph.query.theme_labels import _names, head_compounds, label_worthy, phrase_pattern, residual_idf, topicality
from slmgraph.query.theme_model import KEY_CONCEPTS, Theme, ThemeIndex, word_stem
from slmgraph.store.corpus_stats import phrase_key

#: Uses in capitals an acronym needs before it counts as its phrase (as the question's focus, theme_facets).
ACRONYM_USES = 3
#: Works a corpus needs before its corpus-wide themes are topics across works rather than communities.
TOPIC_MIN_WORKS = 5
#: A topic's phrase is found in at least this share of the works (and two), and in under MAX_WORK_SHARE.
MIN_WORK_SHARE = 0.1
MAX_WORK_SHARE = 0.9
#: The least residual IDF of a phrase's modifiers (:func:`slmgraph.query.theme_labels.topicality`).
MIN_TOPICALITY = 0.4
#: Cosine distance at which the average-linkage tree is cut into topics (phrases nearer than this join).
CLUSTER_DISTANCE = 0.5
#: Phrases a topic's label joins.
LABEL_PHRASES = 2
#: A topic's statements name one of its first this many phrases (a sentence of its units naming none is off it).
STATEMENT_PHRASES = 8
#: Phrases a corpus's topic pass clusters at most (the most widely found first): a bound on the embedding.
MAX_PHRASES = 400


@dataclass
class Topic:
    """One topic: its phrases as written (ranked, see the module doc), the works and documents they are
    found in, and the text units holding them."""

    phrases: list
    works: set
    doc_ids: set
    chunks: set
    weight: float
    acronyms: list = field(default_factory=list)


def _acronyms(ix: ThemeIndex, keys: list[str]) -> dict[str, str]:
    """``{phrase key: acronym}`` of :func:`_acronym_units`."""
    return {k: acro for k, (acro, _) in _acronym_units(ix, keys).items()}


def _acronym_units(ix: ThemeIndex, keys: list[str]) -> dict[str, tuple[str, list]]:
    """``{phrase key: (acronym, the text units writing it)}``: the phrases of two or three words whose initials the
    corpus writes in capitals as a word at least :data:`ACRONYM_USES` times: of the phrases with those initials,
    the one written in the most text units holding the acronym ("CS for computer science and AI for artificial
    intelligence"), unless another is written in as many; none for an acronym no such unit writes beside one of
    them."""
    from collections import Counter

    cands: dict[str, list[str]] = {}
    for k in keys:
        words = k.split()
        if 2 <= len(words) <= 3:
            cands.setdefault("".join(w[0] for w in words).upper(), []).append(k)
    # one pass over the corpus: the capitalised words of each unit
    held: dict[str, list] = {}
    uses: Counter = Counter()
    for u in ix.all_units():
        found = _CAPS.findall(u.text)
        uses.update(found)
        for a in set(found) & cands.keys():
            held.setdefault(a, []).append(u)
    out = {}
    for acro, ks in cands.items():
        if uses[acro] < ACRONYM_USES:
            continue
        units = held[acro]
        beside = sorted(((sum(1 for u in units if phrase_pattern(k).search(u.text)), k) for k in ks), reverse=True)
        # the phrase written beside it most often, and more often than any other of its initials
        if beside[0][0] and (len(beside) == 1 or beside[0][0] > beside[1][0]):
            out[beside[0][1]] = (acro, units)
    return out


_CAPS = re.compile(r"(?<![^\W_])[A-Z]{2,3}(?![^\W_])")


def _distinct(keys: list[str]) -> bool:
    """Two of ``keys`` share no word stem: a topic holds two concepts, not one phrase and its compounds
    ("systems", "biological systems") or its forms ("engineer", "engineering")."""
    stems = [{word_stem(w) for w in k.split()} for k in keys]
    return any(not a & b for i, a in enumerate(stems) for b in stems[i + 1:])


def _work(d) -> str:
    return d.work if d.work is not None else d.doc_id


def corpus_topics(ix: ThemeIndex, embedder) -> list[Topic]:
    """The corpus's topics across works (see the module doc), heaviest first; [] for a corpus of under
    :data:`TOPIC_MIN_WORKS` works, without noun phrases or without an embedder."""
    import duckdb
    from scipy.cluster.hierarchy import fcluster, linkage

    works = {d.doc_id: _work(d) for d in ix.docs}
    n = len(set(works.values()))
    if n < TOPIC_MIN_WORKS or embedder is None:
        return []
    try:
        rows = ix.store.con.execute("""SELECT m.chunk_id, m.norm, m.name, u.doc_id FROM concept_mentions m
                                       JOIN text_units u USING (chunk_id)""").fetchall()
    except duckdb.Error:
        return []
    found: dict[str, set] = {}
    docs: dict[str, set] = {}
    chunks: dict[str, set] = {}
    surface: dict[str, dict[str, int]] = {}
    for c, norm, name, d in rows:
        if d not in works:
            continue
        # the phrase and its head compounds ("deep neural networks" -> "neural networks")
        for k, shown in head_compounds(phrase_key(str(norm)), str(name or norm)):
            found.setdefault(k, set()).add(works[d])
            docs.setdefault(k, set()).add(d)
            chunks.setdefault(k, set()).add(c)
            surface.setdefault(k, {})[shown] = surface.get(k, {}).get(shown, 0) + 1
    ridf, names = residual_idf(ix), {x.casefold() for x in _names(ix)}
    acronyms = {}
    for k, (acro, units) in _acronym_units(ix, [k for k in found if " " in k]).items():
        acronyms[k] = acro
        for u in units:  # an acronym the corpus defines is its phrase written short ("AI")
            if u.doc_id in works:
                found[k].add(works[u.doc_id])
                docs[k].add(u.doc_id)
                chunks[k].add(u.chunk_id)
    shown = {k: max(v.items(), key=lambda kv: (kv[1], kv[0]))[0] for k, v in surface.items()}
    least = max(2, MIN_WORK_SHARE * n)
    # a phrase the corpus mostly writes in lower case is a concept, whatever an entity of that name was typed
    keys = [k for k, ws in found.items() if least <= len(ws) < MAX_WORK_SHARE * n
            and (k not in names or shown[k].islower()) and topicality(k, ridf) >= MIN_TOPICALITY]
    keys = [k for k in keys if label_worthy(shown[k])]
    keys = sorted(keys, key=lambda k: (-len(found[k]), k))[:MAX_PHRASES]
    if len(keys) < 2:
        return []
    v = _embed([shown[k] for k in keys], embedder)
    groups = fcluster(linkage(v, method="average", metric="cosine"), t=CLUSTER_DISTANCE, criterion="distance")
    members: dict[int, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(int(g), []).append(i)
    out = []
    for ids in members.values():
        ks = [keys[i] for i in ids]
        # a phrase the corpus abbreviates is a term of its own, with or without a second concept beside it
        if not any(" " in k for k in ks) or not (_distinct(ks) or any(k in acronyms for k in ks)):
            continue
        centre = v[ids].mean(axis=0)
        centre = centre / (np.linalg.norm(centre) or 1.0)
        # a head found in no work its compound is not in says less than the compound ("learning" of
        # "machine learning"): it names the topic after it
        covered = {i for i in ids if any(keys[j].endswith(" " + keys[i]) and found[keys[j]] >= found[keys[i]]
                                         for j in ids)}
        ranked = sorted(ids, key=lambda i: (i in covered, -len(found[keys[i]]) * float(v[i] @ centre), keys[i]))
        out.append(Topic([shown[keys[i]] for i in ranked], set().union(*(found[k] for k in ks)),
                         set().union(*(docs[k] for k in ks)), set().union(*(chunks[k] for k in ks)),
                         float(sum(len(found[k]) for k in ks)), [acronyms[k] for k in ks if k in acronyms]))
    out.sort(key=lambda t: (-t.weight, -len(t.works), t.phrases[0]))
    return out


def topic_label(phrases: list[str]) -> str:
    """The label of a topic: its first :data:`LABEL_PHRASES` phrases that hold no word (stem) of one before them
    ("computer science and software"; "engineering" after "engineer" is skipped), a lone word given as the
    topic's first compound ending in it ("science fiction" for "fiction": the word alone is ambiguous)."""
    picked: list[str] = []
    words: set[str] = set()
    for p in phrases:
        if " " not in p.strip():
            stem = word_stem(phrase_key(p))
            p = next((q for q in phrases if " " in q.strip() and word_stem(phrase_key(q).split()[-1]) == stem
                      and not {word_stem(x) for x in phrase_key(q).split()[:-1]} & words), p)
        w = {word_stem(x) for x in phrase_key(p).split()}
        if w & words:
            continue
        picked.append(p)
        words |= w
        if len(picked) >= LABEL_PHRASES:
            break
    return " and ".join(picked)


def topic_themes(ix: ThemeIndex, reports: list[dict], scores: dict, embedder,
                 limit: int) -> list[tuple[Theme, list, list[str]]]:
    """``[(theme, its text units, the phrases its statements name one of)]``, no statement yet: up to ``limit`` of the corpus's topics
    (:func:`corpus_topics`), heaviest first, each labelled by :func:`topic_label`, its further phrases as its
    concepts, counted in the documents its phrases are found in, and filed under the community of the level
    (``reports``) owning most of its units. [] when the corpus has no topics across works."""
    from collections import Counter

    topics = corpus_topics(ix, embedder)
    if not topics:
        return []
    ids = [r["community_id"] for r in reports]
    every = ix.all_units()
    out = []
    for tp in topics[:limit]:
        us = [u for u in every if u.chunk_id in tp.chunks]
        owners = Counter(ix.unit_owners([u.chunk_id for u in us], ids, scores).values())
        if not us or not owners:
            continue
        label = topic_label(tp.phrases)
        rest = [p for p in tp.phrases if p not in label.split(" and ")][:KEY_CONCEPTS]
        d = sorted(tp.doc_ids, key=lambda x: ix.doc_by_id[x].pos)
        out.append((Theme(owners.most_common(1)[0][0], label, coverage(d, ix.docs), d, [], concepts=rest,
                          community_docs=d), us, tp.phrases[:STATEMENT_PHRASES] + tp.acronyms))
    return out
