"""Theme labels: one topic a reader recognises, or two strong related ones. Candidates are a theme's noun
phrases and their head compounds that recur in its text units, weighed by class-based TF-IDF (Grootendorst
2022, BERTopic) times the residual IDF of their modifiers (Church & Gale 1995), and the heaviest of those that
describe the theme (cosine with it, as KeyBERT ranks phrases; :func:`pick_label`) is its label.
:func:`keyphrase_label` is KeyBERT's MMR (Carbonell & Goldstein 1998) over given phrases.
"""


from __future__ import annotations

import re

import numpy as np

from slmgraph.indexing.stages.topics import glued, junk
from slmgraph.query.extractive import _SPEAKER, _embed
from slmgraph.query.theme_model import LABEL_DIVERSITY, LABEL_FLOOR, LABEL_TERMS, Theme, ThemeIndex, _WORD, _unit_norm
from slmgraph.query.theme_render import _join
from slmgraph.store.corpus_stats import count_terms, read_terms
from slmgraph.store.corpus_stats import phrase_key as _phrase_key


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
                        "fun nice neat weird cute lovely beautiful nasty horrible tremendous gigantic immense enormous massive "
                        "vast greater".split())


def label_worthy(phrase: str) -> bool:
    """False for a phrase that names no topic: junk (:func:`slmgraph.indexing.stages.topics.junk`), a glued word, a
    generic head noun ("approach things") or a generic or evaluative adjective ("amazing set", "other
    projects"; :data:`slmgraph.indexing.stages.concepts.GENERIC_NOUNS`, ``GENERIC_ADJECTIVES``)."""
    from slmgraph.indexing.stages.concepts import GENERIC_ADJECTIVES, GENERIC_NOUNS

    words = _WORD.findall(phrase.casefold())
    return bool(words) and not (junk(phrase, True) or glued(phrase, True) or words[-1] in GENERIC_NOUNS
                                or any(w in GENERIC_ADJECTIVES or w in _EVALUATIVE for w in words))


#: A label phrase recurs in at least this many of a theme's text units (when it has that many).
MIN_LABEL_UNITS = 2
#: A label's second phrase is as strong as this share of the first's weight (:func:`theme_phrases`).
SECOND_SHARE = 0.5
#: The topicality a phrase of a theme's statements is given when its words are too rare for residual IDF.
STATED_TOPICALITY = 0.1
#: A label's two phrases are related: their cosine (the embedder's unit vectors) is at least this.
RELATED = 0.45
#: A phrase this near (cosine) an earlier theme's label phrase names the same topic.
SAME_TOPIC = 0.8
#: Candidates of a label: the phrases weighing at least this share of the best one's.
CANDIDATE_SHARE = 0.3
#: Two themes' labels with a phrase pair this near (cosine, all-MiniLM-L6-v2) say the same theme: it lies
#: between the overlapping label pairs of real answers (0.59 and up: "mixed reality"/"virtual worlds",
#: "machine learning"/"artificial intelligence") and the distinct ones (0.56 and under: "tech world"/"computer
#: scientist", "virtual reality"/"video games"); the figures are in docs/decisions.md.
SAME_THEME = 0.58


def residual_idf(ix: ThemeIndex) -> dict[str, float]:
    """``word -> residual IDF`` over the index's text units (Church & Gale 1995, "Inverse document frequency
    (IDF): a measure of deviations from Poisson"): ``log2(N / df) + log2(1 - exp(-cf / N))``, the observed IDF
    less the IDF a Poisson spread of the word's ``cf`` occurrences over the ``N`` units would give.
    A topic word clusters in the units that discuss it (high); a descriptive word ("massive", "modern",
    "efforts") is spread like chance (near 0). Words are case-folded, a final "s" dropped (:func:`_phrase_key`);
    cached on ``ix``."""
    import math

    got = getattr(ix, "_ridf", None)
    if got is not None:
        return got
    words = read_terms(ix.store.con, "word")
    if words is None:  # no statistics matching the text units: count them from the text
        words = count_terms(ix.store.con.execute("SELECT chunk_id, doc_id, text FROM text_units").fetchall(), [],
                            kinds=("word",))["word"]
    n = ix.n_units
    df = {w: u for w, (u, _) in words.items()}
    cf = {w: c for w, (_, c) in words.items()}
    out = {w: math.log2(n / df[w]) + math.log2(-math.expm1(-cf[w] / n)) for w in df} if n else {}
    ix._ridf = out
    return out


def topicality(key: str, ridf: dict[str, float]) -> float:
    """How much a phrase (its key) names a topic: the least residual IDF (:func:`residual_idf`; 0 for a word
    the units do not hold) of its modifiers -- every word but the head, the last -- or of its one word. A
    description is told by its modifier ("massive efforts", "modern tech world"), while a topic's head may be a
    common noun ("privacy practices"); a phrase so made weak backs off to its head compound ("tech world")."""
    words = key.split()
    return max(0.0, min((ridf.get(w, 0.0) for w in (words[:-1] or words)), default=0.0))


def _suffix_units(ix: ThemeIndex) -> dict[str, int]:
    """``phrase key -> text units holding it or a phrase ending in it`` ("tech hero" counts "admired tech
    hero"), over the whole index; cached on ``ix``."""
    got = getattr(ix, "_suffix_df", None)
    if got is not None:
        return got
    import duckdb

    suffix = read_terms(ix.store.con, "suffix")
    if suffix is None:  # no statistics matching the noun phrases: count them from the phrases
        try:
            rows = ix.store.con.execute("SELECT DISTINCT chunk_id, norm FROM concept_mentions").fetchall()
        except duckdb.Error:
            rows = []
        suffix = count_terms([], rows, kinds=())["suffix"]
    ix._suffix_df = {k: u for k, (u, _) in suffix.items()}
    return ix._suffix_df


def weighted_phrases(ix: ThemeIndex, chunks: list[str], stated: list[str] | None = None,
                     taken: set[str] | frozenset = frozenset()) -> list[tuple[str, float, set]]:
    """``[(phrase as written most often, weight, the units of chunks holding it)]``, heaviest first: the
    topics of a theme's text units ``chunks``.

    Candidates are the noun phrases of the units (:meth:`ThemeIndex.unit_phrases`) and their trailing
    sub-phrases -- a phrase backs off to its head compound and its head ("admired tech hero" -> "tech hero" ->
    "hero"). A candidate is kept when it is :func:`label_worthy`, recurs in at least :data:`MIN_LABEL_UNITS`
    of the theme's units (all of them when it has fewer), and its key is not in ``taken`` (nor are its words
    a taken key's, or theirs its own); with ``stated``
    (the theme's statements), only those the statements name, and when none of several words recurs, those
    of several words that occur once (weighed with :data:`STATED_TOPICALITY` where residual IDF is 0). Its weight is class-based TF-IDF with the theme
    as the class (Grootendorst 2022, BERTopic: the theme's units holding it times ``log(1 + N / n)``, ``n``
    the index's units holding it, of ``N``) times its :func:`topicality` (residual IDF, Church & Gale 1995),
    or alone when no candidate has any topicality (a corpus too small to tell); a candidate of weight 0 is
    dropped. Several-word phrases only, where any has weight."""
    import math

    chunks = list(dict.fromkeys(chunks))
    per = prose_phrases(ix, chunks)
    have: dict[str, set] = {}
    surface: dict[str, dict[str, int]] = {}
    folded = [_SPEAKER.sub("", x).casefold() for x in stated] if stated is not None else None
    for c, rows in per.items():
        for k, n in set(rows):
            for sk, sn in head_compounds(_phrase_key(k), n):
                if _overlaps(sk, taken) or _overlaps(_phrase_key(sn), taken) or not label_worthy(sn):
                    continue
                if folded is not None and not any(re.search(r"(?<!\w)" + re.escape(sn.casefold()) + r"(?!\w)", f)
                                                  for f in folded):
                    continue
                have.setdefault(sk, set()).add(c)
                surface.setdefault(sk, {})[sn] = surface.get(sk, {}).get(sn, 0) + 1
    need = min(MIN_LABEL_UNITS, max(len(per), 1))
    df, total, ridf = _suffix_units(ix), max(ix.n_units, 1), residual_idf(ix)
    out, once = [], []
    # a corpus too small for any of the theme's words to stand out from chance: class-based TF-IDF alone
    flat = not any(topicality(k, ridf) > 0 for k in have)
    for k, us in have.items():
        idf = len(us) * math.log1p(total / max(df.get(k, 1), 1))
        w = idf * (1.0 if flat else topicality(k, ridf))
        shown = max(surface[k].items(), key=lambda kv: (kv[1], kv[0]))[0]
        if w > 0:
            (out if len(us) >= need else once).append((shown, w, us))
        elif stated is not None and len(k.split()) > 1:  # a word too rare to tell its spread from chance
            once.append((shown, idf * STATED_TOPICALITY, us))
    # a noun compound names a thing; a lone word only where no compound recurs, or, for statements, none
    # of the compounds they name does (a phrase a statement says is on its topic by construction)
    multi = [x for x in out if len(x[0].split()) > 1]
    out = multi or ([x for x in once if len(x[0].split()) > 1] if stated is not None else []) or out
    return sorted(out, key=lambda x: (-x[1], x[0]))


def head_compounds(key: str, name: str) -> list[tuple[str, str]]:
    """``[(key, as written)]`` of a noun phrase (its key, :func:`_phrase_key`, and its surface ``name``) and of its
    trailing sub-phrases, longest first ("admired tech hero" -> "tech hero" -> "hero"); a sub-phrase of a name
    whose words do not match its key's one by one has no surface and is left out."""
    kw, nw = key.split(), name.split()
    out = []
    for i in range(len(kw)):
        shown = " ".join(nw[i - len(kw):]) if len(nw) == len(kw) else (name if i == 0 else "")
        if shown:
            out.append((" ".join(kw[i:]), shown))
    return out


def _overlaps(key: str, taken) -> bool:
    """``key`` is a taken key or its words hold or are held by one's ("hall" after "concert hall")."""
    w = set(key.split())
    return key in taken or any(w <= set(x.split()) or set(x.split()) <= w for x in taken)


def theme_phrases(ix: ThemeIndex, chunks: list[str], stated: list[str] | None = None, limit: int = 20,
                  taken: set[str] | frozenset = frozenset()) -> list[str]:
    """Candidate phrases of a theme's label, heaviest first, at most ``limit``: those of
    :func:`weighted_phrases` weighing at least :data:`CANDIDATE_SHARE` of the heaviest."""
    return _candidates(weighted_phrases(ix, chunks, stated, taken), limit)


def _candidates(weighed: list[tuple[str, float, set]], limit: int = 20) -> list[str]:
    return [p for p, w, _ in weighed if w >= CANDIDATE_SHARE * weighed[0][1]][:limit] if weighed else []


def pick_label(weighed: list[tuple[str, float, set]], anchor, embedder) -> list[str]:
    """The phrases of a label from :func:`weighted_phrases`' ``weighed`` (heaviest first): of the candidates
    (:func:`theme_phrases`) whose cosine with ``anchor`` (a unit vector of the theme's text) is at least
    :data:`LABEL_FLOOR` of the nearest one's -- those that describe the theme, as KeyBERT ranks phrases
    against a document (Grootendorst 2020) -- the heaviest; then a second one only when it is strong and
    related: among those candidates, the heaviest that weighs at least :data:`SECOND_SHARE` of the first,
    shares a text unit with it, has a cosine with it of at least :data:`RELATED` and under :data:`SAME_TOPIC`
    (the same topic said twice) and shares no word with it. [] for no candidate."""
    cands = _candidates(weighed)
    if not cands or anchor is None or embedder is None:
        return []
    v = _embed(cands, embedder)
    sim = v @ _unit_norm(anchor)
    top = float(sim.max())
    # a relative floor means nothing when even the nearest phrase points away from the theme
    near = [i for i in range(len(cands)) if float(sim[i]) >= LABEL_FLOOR * top] if top > 0 else []
    if not near:
        return []
    info = {p: (w, us) for p, w, us in weighed}
    first = near[0]  # candidates are heaviest first
    a = cands[first]
    wa = set(_phrase_key(a).split())
    for i in near[1:]:
        b = cands[i]
        wb = set(_phrase_key(b).split())
        if wb & wa:
            continue
        if info[b][0] >= SECOND_SHARE * info[a][0] and info[a][1] & info[b][1] and \
                RELATED <= float(v[first] @ v[i]) < SAME_TOPIC:
            return [a, b]
    return [a]


def _nominal(ix: ThemeIndex) -> set[str]:
    """The words the index's noun phrases end in (their heads, keys as :func:`_phrase_key`): a modifier among
    them is a noun, so its phrase is a noun compound ("signal distortion", "briefing room"); cached on ``ix``."""
    got = getattr(ix, "_heads", None)
    if got is not None:
        return got
    import duckdb

    try:
        rows = ix.store.con.execute("SELECT DISTINCT norm FROM concept_mentions").fetchall()
    except duckdb.Error:
        rows = []
    ix._heads = {w[-1] for (k,) in rows if (w := _phrase_key(str(k)).split())}
    return ix._heads


def _names(ix: ThemeIndex) -> set[str]:
    """Case-folded names of the index's entities that are no concept (people, places, organisations)."""
    got = getattr(ix, "_entity_names", None)
    if got is None:
        got = {str(n).casefold() for (n,) in ix.store.con.execute("SELECT name FROM entities").fetchall()}
        ix._entity_names = got = got - ix.concept_names
    return got


def keyphrase_backoff(ix: ThemeIndex, chunks: list[str], anchor, embedder,
                      taken: set[str] | frozenset = frozenset()) -> list[tuple[str, float, set]]:
    """``[(phrase, weight, the units of chunks holding it)]``, heaviest first: a theme's several-word noun
    phrases weighed without recurrence, for a theme whose phrases do not recur (a short story, a corpus of a
    few units). KeyBERT's ranking (Grootendorst 2020: the cosine of each candidate phrase with the embedding
    of its text): the cosine with ``anchor`` (a vector of the theme's text) times ``(1 + c) / 2``, ``c`` the
    share of the phrase's modifiers the index uses as the head of a noun phrase (:func:`_nominal`): a noun
    compound names a thing ("signal distortion", "transmission log"), while an adjective's phrase more often
    describes one ("brief nod"), the nominal-compound preference of term extraction (Justeson & Katz 1995,
    "Technical terminology"), and only noun compounds where the theme has any. Candidates are the :func:`label_worthy` phrases of the units (as
    :meth:`ThemeIndex.unit_phrases`) that are no entity's name and overlap no ``taken`` key; [] without an
    embedder, an anchor or a candidate; weights are in ``[0, 1]``; a candidate of weight 0 or less is dropped."""
    if anchor is None or embedder is None:
        return []
    heads, names = _nominal(ix), _names(ix)
    have: dict[str, set] = {}
    for c, rows in prose_phrases(ix, list(dict.fromkeys(chunks))).items():
        for k, n in rows:
            key = _phrase_key(n)
            if len(key.split()) < 2 or n.casefold() in names or not label_worthy(n) or _overlaps(key, taken):
                continue
            have.setdefault(n, set()).add(c)
    if not have:
        return []
    phrases = sorted(have)
    sim = _embed(phrases, embedder) @ _unit_norm(anchor)
    out, compounds = [], []
    for p, cos in zip(phrases, sim):
        mods = _phrase_key(p).split()[:-1]
        c = sum(m in heads for m in mods) / len(mods)
        w = float(cos) * (1 + c) / 2
        if w > 0:
            (compounds if c > 0 else out).append((p, w, have[p]))
    return sorted(compounds or out, key=lambda x: (-x[1], x[0]))


def relabel(t: Theme, ix: ThemeIndex, embedder, chunks: list[str], anchor, stated: list[str] | None = None,
            taken: set[str] | None = None, min_terms: int = 1, core: list[str] | None = None) -> list[str]:
    """Give ``t`` a label that reads as one topic: :func:`pick_label` of its candidate phrases
    (:func:`weighted_phrases` of its text units ``chunks``; with ``stated``, only those its statements name,
    counted over ``chunks`` and the units of its community ``t.report``) against ``anchor`` (a vector of the
    theme's text: its statements' or units' centroid), "A" or "A and B". ``taken``: the phrase keys earlier
    themes' labels hold: skipped, and so is a phrase whose cosine with one is at least :data:`SAME_TOPIC`
    ("computer science" after "computer scientist"); added to. The label stays as it is when fewer than
    ``min_terms`` phrases are found. Without ``stated``, a theme whose recurring phrases are single words
    backs off to :func:`keyphrase_backoff` over ``core`` (the units the theme's community owns, against
    their centroid; else ``chunks`` against ``anchor``), so a lone generic word ("thoughts", "board") gives
    way to a specific phrase where the theme has one. Returns the phrases of the new label ([] when it stays)."""
    if anchor is None or embedder is None:
        return []
    taken = taken if taken is not None else set()
    if stated is not None:  # a phrase its statements name recurs where the community is discussed
        chunks = list(chunks) + [u.chunk_id for u in ix.units([t.report]).get(t.report, [])]
    weighed = weighted_phrases(ix, chunks, stated, taken=frozenset(taken))
    if taken and weighed:
        tv = _embed(sorted(taken), embedder)
        pv = _embed([p for p, _, _ in weighed], embedder)
        weighed = [x for x, m in zip(weighed, (pv @ tv.T).max(axis=1)) if float(m) < SAME_TOPIC]
    backed = _backoff(ix, embedder, core, chunks, anchor, taken) if (
        stated is None and weighed and not any(len(p.split()) > 1 for p, _, _ in weighed)) else None
    if backed:
        # a phrase said once is weak evidence: one phrase, not a pair
        picked = pick_label(backed[0], backed[1], embedder)[:1]
    else:
        picked = pick_label(weighed, anchor, embedder)
    if len(picked) < max(1, min_terms):
        return []
    t.topic = _join(picked)
    t.concepts = picked  # the stored label's terms said what the new label replaces
    taken.update(_phrase_key(p) for p in picked)
    return picked


def _backoff(ix: ThemeIndex, embedder, core, chunks, anchor, taken) -> tuple[list, object] | None:
    """``(weighed, anchor)``: :func:`keyphrase_backoff` over the theme's own units ``core`` against their
    centroid or, when they give none, over ``chunks`` against ``anchor``, phrases near a taken label
    (:data:`SAME_TOPIC`) dropped; None when no phrase is left."""
    got: list = []
    if core:
        vs = ix.unit_vectors(list(core))
        if vs:
            own = np.mean([_unit_norm(v) for v in vs.values()], axis=0)
            got = keyphrase_backoff(ix, list(core), own, embedder, frozenset(taken))
            if taken and got:
                got = _apart(got, taken, embedder)
            if got:
                return got, own
    got = keyphrase_backoff(ix, chunks, anchor, embedder, frozenset(taken))
    if taken and got:
        got = _apart(got, taken, embedder)
    return (got, anchor) if got else None


def _apart(weighed: list, taken, embedder) -> list:
    """``weighed`` without the phrases whose cosine with a taken label phrase is at least :data:`SAME_TOPIC`."""
    tv = _embed(sorted(taken), embedder)
    pv = _embed([p for p, _, _ in weighed], embedder)
    return [x for x, m in zip(weighed, (pv @ tv.T).max(axis=1)) if float(m) < SAME_TOPIC]


def label_phrases(topic: str) -> list[str]:
    """The phrases of a label as written: "A and B" or "A, B and C" -> ``["A", "B", "C"]``."""
    return [p.strip() for p in re.split(r",|\band\b", topic) if p.strip()]


def same_theme(phrases: list[str], earlier: list[list[str]], embedder, near: float = SAME_THEME) -> bool:
    """True when a label of ``phrases`` says what one of the ``earlier`` labels (each a list of phrases) says:
    some pair of their phrases has a cosine (the embedder's unit vectors) of at least ``near``
    (:data:`SAME_THEME`), or is the same phrase key. False without an embedder, phrases or earlier labels."""
    if not phrases or not earlier:
        return False
    keys = {_phrase_key(p) for p in phrases}
    if any(keys & {_phrase_key(q) for q in e} for e in earlier):
        return True
    if embedder is None:
        return False
    flat = [q for e in earlier for q in e]
    return float((_embed(phrases, embedder) @ _embed(flat, embedder).T).max()) >= near


#: A word runs through the corpus as a topic (:func:`running_words`) when it modifies at least this many
#: distinct noun compounds ("water main", "water bill", "water supply"): a topic is talked of in several
#: respects, while the furniture of a genre ("meeting", "members", "Present") heads a fixed phrase or two.
RUNNING_COMPOUNDS = 3
#: Running topics a corpus-wide answer adds at most.
MAX_RUNNING = 2


def phrase_pattern(phrase: str) -> re.Pattern:
    """A case-blind pattern finding ``phrase`` in text as whole words, each word with or without a plural's
    "s"/"es" ("water bill" finds "Water bills"); its words as :func:`_phrase_key` writes them."""
    words = _phrase_key(phrase).split() or [re.escape(phrase.casefold())]
    return re.compile(r"(?<!\w)" + r"[\s-]+".join(re.escape(w) + r"(?:e?s)?" for w in words) + r"(?!\w)",
                      re.IGNORECASE)


def label_documents(ix: ThemeIndex, phrases: list[str]) -> list[str]:
    """The documents whose text units hold any of ``phrases`` (a theme's label phrases, :func:`phrase_pattern`)
    outside their section titles, list lines and boilerplate (:func:`_bodies`: a title names a document and a list says who was
    there, neither discusses anything: "Committee meeting, May 2019"), in corpus order: the documents a label's "in N of M documents" may claim; [] for no phrase."""
    pats = [phrase_pattern(p) for p in phrases if p and p.strip()]
    if not pats:
        return []
    docs = {d for d, _, body in _bodies(ix).values() if d in ix.doc_by_id and any(p.search(body) for p in pats)}
    return sorted(docs, key=lambda d: ix.doc_by_id[d].pos)


def label_units(ix: ThemeIndex, phrases: list[str]) -> list[str]:
    """The text units (chunk ids) holding any of ``phrases`` outside their section titles, list lines and legal
    matter (:func:`_bodies`), as :func:`label_documents` counts their documents; [] for no phrase."""
    pats = [phrase_pattern(p) for p in phrases if p and p.strip()]
    if not pats:
        return []
    return sorted(c for c, (d, _, body) in _bodies(ix).items() if d in ix.doc_by_id and any(p.search(body) for p in pats))


def _bodies(ix: ThemeIndex) -> dict[str, tuple[str, str, str]]:
    """``chunk_id -> (doc_id, text, text without its section titles, list lines and legal matter)`` of every text
    unit (a title is a line :func:`slmgraph.query.extractive.corpus_heading` tells, its Markdown marks aside; a list
    line is who was there, :func:`slmgraph.names.kinds.list_line`: "Present: A, B, 52 plot holders"; legal matter
    is what :attr:`ThemeIndex.story` drops); cached on ``ix``."""
    got = getattr(ix, "_unit_bodies", None)
    if got is None:
        from slmgraph.names.kinds import list_line
        from slmgraph.query.extractive import corpus_heading

        keys, story, boiler = ix.headings, ix.story, ix.boilerplate

        def said(line: str) -> str:
            # a show's intro said in every episode ("the people who made our modern tech world possible")
            # discusses nothing: a phrase found only there is no theme
            parts = _SENTENCE_SPLIT.split(line)
            return line if len(parts) == 1 and line not in boiler else " ".join(x for x in parts if x not in boiler)

        # the body is read from the text its themes may read: an edition's legal matter is no body
        got = ix._unit_bodies = {c: (d, text or "", "\n".join(
            said(line) for line in (story.get(c, text) or "").splitlines()
            if not corpus_heading(line.lstrip("#").strip(), keys) and not list_line(line)))
            for c, d, text in ix.store.con.execute("SELECT chunk_id, doc_id, text FROM text_units").fetchall()}
    return got


#: Where a line of a text unit is split into sentences, as :class:`slmgraph.query.theme_model.Boilerplate` splits it.
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+")


def prose_phrases(ix: ThemeIndex, chunks: list[str]) -> dict[str, list[tuple[str, str]]]:
    """:meth:`ThemeIndex.unit_phrases` of ``chunks`` less the phrases a unit holds only in its section titles
    and list lines (:func:`_bodies`: "committee meeting" of "# Committee meeting, May 2019" in every minutes): a
    title names the document and a list says who was there, the furniture of its genre, not what it discusses
    (a phrase the text does not hold as written is kept)."""
    bodies, pats = _bodies(ix), {}
    out: dict[str, list[tuple[str, str]]] = {}
    for c, rows in ix.unit_phrases(chunks).items():
        _, text, body = bodies.get(c, ("", "", ""))
        kept = []
        for k, n in rows:
            p = pats.get(n) or pats.setdefault(n, phrase_pattern(n))
            if text == body or p.search(body) or not p.search(text):
                kept.append((k, n))
        if kept:
            out[c] = kept
    return out


#: Entity types whose names may be a subject running through a corpus (a policy, a plan, a product, an event);
#: people, places and organisations are who speaks and where, and a corpus's furniture (its broadcaster).
RUNNING_NAME_TYPES = frozenset({"concept", "event", "law", "product", "work_of_art", "technology"})
#: A named subject runs through the corpus when statements name it in at least this share of its documents: a name
#: is said one way (its acronym and lower-case forms aside), where a word is said in many.
RUNNING_NAME_SHARE = 0.5


#: Words a defined term may hold between the words its acronym takes its initials from.
_TERM_GLUE = frozenset({"and", "of", "for", "the", "in", "on", "to"})


def defined_acronyms(ix: ThemeIndex) -> dict[str, str]:
    """``{acronym: the phrase it stands for}``: the acronyms of two to five capitals the corpus writes in brackets
    right after a lower-case phrase whose initials spell them, small words aside ("carbon capture and storage
    (CCS)"): terms, whatever type the entity pass gave them (spaCy reads "CCS" as a place)."""
    out: dict[str, str] = {}
    for m in re.finditer(r"((?:[a-z][a-z'-]*\s+){1,8})\(([A-Z]{2,5})\)", ix.all_text()):
        words, acro = m.group(1).split(), m.group(2)
        for k in range(len(words)):
            tail = words[k:]
            heads = [w for w in tail if w not in _TERM_GLUE]
            if tail[0] not in _TERM_GLUE and "".join(w[0] for w in heads).upper() == acro:
                out.setdefault(acro, " ".join(tail))
                break
    return out


def running_names(ix: ThemeIndex) -> list[tuple[str, list[str], list[str]]]:
    """The named subjects that run through the whole corpus, which the communities' labels, weighted by
    distinctiveness, cannot show ("Clean Air Zone", discussed in 9 of a radio series' 10 episodes):
    ``[(name, [], the documents whose statements name it)]``, in the most documents first, at most
    :data:`MAX_RUNNING`. A name is one when its entity's type is of :data:`RUNNING_NAME_TYPES`, it is written
    with a capital (a concept in lower case is a word, :func:`running_words`' matter), no document's heading holds
    it (the series' own name), and sentences that may be statements
    (:func:`slmgraph.query.theme_model._statement_ok`) name it, in any case, in at least
    :data:`RUNNING_NAME_SHARE` of the documents. [] in a corpus of fewer than three
    documents."""
    import duckdb

    from slmgraph.query.extractive import prose_sentences
    from slmgraph.query.theme_model import _statement_ok, spoken

    n = len(ix.docs)
    if n < 3:
        return []
    defined = defined_acronyms(ix)
    try:
        rows = ix.store.con.execute("""
            SELECT e.name, count(DISTINCT t.doc_id) FROM entities e JOIN entity_text_units u USING (entity_id)
            JOIN text_units t USING (chunk_id) WHERE lower(e.type) IN (SELECT unnest(?)) OR e.name IN (SELECT unnest(?))
            GROUP BY e.name HAVING count(DISTINCT t.doc_id) >= ?""",
            [sorted(RUNNING_NAME_TYPES), sorted(defined) or [""], RUNNING_NAME_SHARE * n]).fetchall()
    except duckdb.Error:
        return []
    heads = [h.casefold() for h in ix.headings]
    out = []
    for name, _ in rows:
        name = str(name)
        # a name in capitals is a speaker's label or an organisation's, unless the corpus defines it as a term
        if (not name[:1].isupper() or (name.isupper() and name not in defined)
                or any(name.casefold() in h for h in heads)):
            continue
        pat = phrase_pattern(name)
        docs = {u.doc_id for u in ix.all_units() if pat.search(u.text) and any(
            pat.search(x) and _statement_ok(x, ix) for x in map(spoken, prose_sentences(u.text)))}
        if len(docs) >= RUNNING_NAME_SHARE * n:
            out.append((name, [], sorted(docs, key=lambda d: ix.doc_by_id[d].pos)))
    out.sort(key=lambda x: (-len(x[2]), x[0]))
    return out[:MAX_RUNNING]


def running_words(ix: ThemeIndex) -> list[tuple[str, list[str], list[str]]]:
    """The topics that run through the whole corpus, which document-frequency weights (residual IDF, class-based
    TF-IDF) cannot see: ``[(word as written, its compounds most mentioned first, the documents whose statements
    name it)]``, in the most documents first, at most :data:`MAX_RUNNING`.

    A word is one when it is in at least :data:`slmgraph.query.theme_model.UBIQUITOUS_SHARE` of the documents
    (:func:`slmgraph.query.theme_lead.corpus_word_share`), is :func:`label_worthy` and no entity's name, modifies
    at least :data:`RUNNING_COMPOUNDS` distinct noun compounds of the concept pass (``concept_mentions``) -- it is
    discussed in several respects -- and sentences that may be statements (:func:`slmgraph.query.theme_model._statement_ok`:
    no heading, list label, boilerplate or framing line) name it in that share of the documents too, so a word
    of the corpus's furniture, found in its headings and attendance lines, is none. [] in a corpus of fewer than
    three documents or without noun phrases."""
    import duckdb

    from slmgraph.query.extractive import prose_sentences
    from slmgraph.query.theme_lead import corpus_word_share
    from slmgraph.query.theme_model import UBIQUITOUS_SHARE, _statement_ok, spoken
    from slmgraph.store.corpus_stats import word_stem

    n = len(ix.docs)
    if n < 3:
        return []
    try:
        rows = ix.store.con.execute("SELECT m.norm, m.name FROM concept_mentions m").fetchall()
    except duckdb.Error:
        return []
    compounds: dict[str, dict[str, int]] = {}
    surface: dict[str, dict[str, int]] = {}
    for norm, name in rows:
        kw, nw = _phrase_key(str(norm)).split(), str(name or norm).split()
        for i in range(len(kw) - 1):
            shown = " ".join(nw[i - len(kw):]) if len(nw) == len(kw) else " ".join(kw[i:])
            compounds.setdefault(kw[i], {}).setdefault(" ".join(kw[i:]), {})
            got = compounds[kw[i]][" ".join(kw[i:])]
            got[shown] = got.get(shown, 0) + 1
            if len(nw) == len(kw):
                surface.setdefault(kw[i], {})[nw[i].casefold()] = surface.get(kw[i], {}).get(nw[i].casefold(), 0) + 1
    share, names = corpus_word_share(ix), _names(ix)
    cands = []
    for w, comps in compounds.items():
        shown = max(surface.get(w, {w: 1}).items(), key=lambda kv: (kv[1], kv[0]))[0]
        if len(comps) < RUNNING_COMPOUNDS or shown in names or not label_worthy(shown) or \
                share.get(word_stem(shown), 0.0) < UBIQUITOUS_SHARE:
            continue
        # a compound as written most often, the most mentioned compounds first
        ranked = sorted(((sum(v.values()), max(v.items(), key=lambda kv: (kv[1], kv[0]))[0]) for v in comps.values()),
                        key=lambda x: (-x[0], x[1]))
        cands.append((shown, [c for _, c in ranked]))
    out = []
    for shown, comps in cands:
        pat = phrase_pattern(shown)
        docs = {u.doc_id for u in ix.all_units() if pat.search(u.text) and any(
            pat.search(s) and _statement_ok(s, ix) for s in map(spoken, prose_sentences(u.text)))}
        if len(docs) >= UBIQUITOUS_SHARE * n:
            out.append((shown, comps, sorted(docs, key=lambda d: ix.doc_by_id[d].pos)))
    out.sort(key=lambda x: (-len(x[2]), -len(x[1]), x[0]))
    return out[:MAX_RUNNING]
