"""Theme labels: the phrases a theme's statements or units share, ranked by class-based TF-IDF
(Grootendorst 2022, BERTopic) and chosen by maximal marginal relevance against the theme (KeyBERT's MMR;
Carbonell & Goldstein 1998).
"""


from __future__ import annotations

import re


from slmgraph.indexing.stages.topics import glued, junk
from slmgraph.query.extractive import _SPEAKER, _embed
from slmgraph.query.theme_model import LABEL_DIVERSITY, LABEL_FLOOR, LABEL_TERMS, Theme, ThemeIndex, _WORD, _unit_norm
from slmgraph.query.theme_render import _join


def keyphrase_label(phrases: list[str], anchor, embedder, n: int = LABEL_TERMS,
                    diversity: float = LABEL_DIVERSITY, floor: float = 0.0) -> list[str]:
    """Up to ``n`` of ``phrases`` that say what a theme is: KeyBERT's maximal marginal relevance
    (Grootendorst 2020, ``keybert._mmr.mmr``; Carbonell & Goldstein 1998): the phrase nearest ``anchor``
    (a unit vector of the theme's text) first, then each next one maximising
    ``(1 - diversity) * cos(phrase, anchor) - diversity * max cos(phrase, chosen)``; a phrase whose words a
    chosen one holds ("council" after "council tax") is skipped, and so is one whose cosine with ``anchor``
    is under ``floor`` times the first phrase's. [] for no phrases."""
    phrases = list(dict.fromkeys(p for p in phrases if p and p.strip()))
    if not phrases or anchor is None or embedder is None:
        return []
    v = _embed(phrases, embedder)
    sim = v @ _unit_norm(anchor)
    chosen: list[int] = []
    words: list[set] = []
    while len(chosen) < n:
        best, val = None, None
        for i in range(len(phrases)):
            w = set(re.findall(r"\w+", phrases[i].casefold()))
            if i in chosen or any(w <= u or u <= w for u in words) or (
                    chosen and float(sim[i]) < floor * float(sim[chosen[0]])):
                continue
            red = max((float(v[i] @ v[j]) for j in chosen), default=0.0)
            x = (1 - diversity) * float(sim[i]) - diversity * red
            if val is None or x > val:
                best, val = i, x
        if best is None:
            break
        chosen.append(best)
        words.append(set(re.findall(r"\w+", phrases[best].casefold())))
    return [phrases[i] for i in chosen]


#: Words that make a phrase say how a speaker felt, not what was discussed ("amazing set", "brand new things").
_EVALUATIVE = frozenset("amazing incredible awesome crazy cool fantastic wonderful brilliant super brand terrible "
                        "fun nice neat weird cute lovely beautiful nasty horrible tremendous gigantic".split())


def label_worthy(phrase: str) -> bool:
    """False for a phrase that names no topic: junk (:func:`slmgraph.indexing.stages.topics.junk`), a glued word, a
    generic head noun ("approach things") or a generic or evaluative adjective ("amazing set", "other
    projects"; :data:`slmgraph.indexing.stages.concepts.GENERIC_NOUNS`, ``GENERIC_ADJECTIVES``)."""
    from slmgraph.indexing.stages.concepts import GENERIC_ADJECTIVES, GENERIC_NOUNS

    words = _WORD.findall(phrase.casefold())
    return bool(words) and not (junk(phrase, True) or glued(phrase, True) or words[-1] in GENERIC_NOUNS
                                or any(w in GENERIC_ADJECTIVES or w in _EVALUATIVE for w in words))


def theme_phrases(ix: ThemeIndex, chunks: list[str], stated: list[str] | None = None, limit: int = 20,
                  taken: set[str] | frozenset = frozenset()) -> list[str]:
    """Candidate phrases of a theme's label: the noun phrases of its text units ``chunks``
    (:meth:`ThemeIndex.unit_phrases`), of several words where there are at least two such, ranked by
    class-based TF-IDF (:func:`slmgraph.indexing.stages.topics.class_tfidf`'s weight with the theme as the
    class: the units of ``chunks`` holding the phrase, times ``log(1 + units / units holding it)``), at most
    ``limit``, as written most often. With ``stated`` (its statements), only phrases the statements name;
    phrases that are not :func:`label_worthy`, or whose key is in ``taken`` (an earlier theme's label), never."""
    import math

    per = ix.unit_phrases(list(dict.fromkeys(chunks)))
    tf: dict[str, int] = {}
    surface: dict[str, dict[str, int]] = {}
    folded = [_SPEAKER.sub("", x).casefold() for x in stated] if stated is not None else None
    for c, rows in per.items():
        for k, n in dict(rows).items():
            if _phrase_key(n) in taken or not label_worthy(n):
                continue
            if folded is not None and not any(re.search(r"(?<!\w)" + re.escape(n.casefold()) + r"(?!\w)", f)
                                              for f in folded):
                continue
            tf[k] = tf.get(k, 0) + 1
            surface.setdefault(k, {})[n] = surface.get(k, {}).get(n, 0) + 1
    if not tf:
        return []
    df, total = ix.phrase_units, max(ix.n_units, 1)
    multi = [k for k in tf if len(k.split()) > 1]
    keys = multi if len(multi) >= 2 else list(tf)
    ranked = sorted(keys, key=lambda k: (-tf[k] * math.log1p(total / max(df.get(k, 1), 1)), k))[:limit]
    return [max(surface[k].items(), key=lambda kv: (kv[1], kv[0]))[0] for k in ranked]


def _phrase_key(surface: str) -> str:
    """A phrase's words case-folded, a final "s" dropped ("Computer scientists" and "computer scientist" match)."""
    return " ".join(w[:-1] if w.endswith("s") and len(w) > 3 else w for w in _WORD.findall(surface.casefold()))


def relabel(t: Theme, ix: ThemeIndex, embedder, chunks: list[str], anchor, stated: list[str] | None = None,
            taken: set[str] | None = None, min_terms: int = 2) -> list[str]:
    """Give ``t`` a label that reads as its topic: of its candidate phrases (:func:`theme_phrases` of its
    text units ``chunks``, with ``stated`` only those its statements name), the :data:`LABEL_TERMS` that
    :func:`keyphrase_label` picks against ``anchor`` (a vector of the theme's text: its statements' or units'
    centroid), joined as "A and B"; ``taken``: the phrase keys earlier themes' labels hold, skipped, and
    added to. The label stays as it is when fewer than ``min_terms`` phrases are found. Returns the
    phrases of the new label ([] when it stays)."""
    if anchor is None or embedder is None:
        return []
    taken = taken if taken is not None else set()
    phrases = theme_phrases(ix, chunks, stated, taken=frozenset(taken))
    # a theme labelled by its statements may take one phrase: a second only as near them as the first
    picked = keyphrase_label([p for p in phrases if _phrase_key(p) not in taken], anchor, embedder,
                             floor=LABEL_FLOOR if min_terms < 2 else 0.0)
    if len(picked) < max(1, min_terms):
        return []
    t.topic = _join(picked)
    t.concepts = picked  # the stored label's terms said what the new label replaces
    taken.update(_phrase_key(p) for p in picked)
    return picked
