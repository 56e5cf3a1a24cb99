"""Aspects of a focused global answer: the on-topic statements of every community that bears on the question,
gathered and organised into labelled aspects by the data (no model).

* **gather** (:func:`gather`): the statements within :data:`ASPECT_MARGIN` of the best one's relevance and
  :data:`slmgraph.query.theme_model.PROBE_GAP` nearer the question than any off-topic probe, whichever
  community they come from, up to :data:`MAX_STATEMENTS` by maximal marginal relevance (Carbonell &
  Goldstein 1998), near repeats dropped and at most :data:`PER_UNIT` from one text unit;
* **cluster** (:func:`cluster`): Ward's agglomerative clustering of their embeddings
  (``scipy.cluster.hierarchy``; Manning, Raghavan & Schuetze 2008, ch. 17) cut into
  :data:`MIN_ASPECTS`-:data:`MAX_ASPECTS` aspects where the mean silhouette is best (Rousseeuw 1987);
* **label** (:func:`aspect_labels`): each aspect's noun compounds that its statements name
  (:func:`slmgraph.query.theme_labels.weighted_phrases`: class-based TF-IDF against the corpus times residual
  IDF), weighed again by the statements naming them times class-based TF-IDF with the aspects as the classes
  (Grootendorst 2022, BERTopic: ``log(1 + A / f)``, ``f`` of the ``A`` aspects whose statements name the
  phrase), the question's own words left out, then :func:`slmgraph.query.theme_labels.pick_label` against the
  aspect's centroid, kept when it fits the aspect (:func:`_fits`); a statement far from its aspect's label
  (:data:`STATEMENT_FIT`), and the statements of an aspect without a label, are quoted last as
  :data:`OTHER`;
* **open** (:func:`aspects_overview`): one sentence stating the aspects with their statements, works and
  speakers ("12 statements from 7 of the 24 works bear on the question, in three aspects, the most relevant
  first: protein design (3 statements from 2 works, by David Baker), ...").
"""


from __future__ import annotations

import math
import re

import numpy as np

from slmgraph.query.documents import coverage
from slmgraph.query.extractive import _Mmr, _embed
from slmgraph.query.theme_labels import _phrase_key, pick_label, weighted_phrases
from slmgraph.query.theme_model import EVIDENCE_MARGIN, PROBE_GAP, Theme, ThemeIndex, _unit_norm, question_words, repeats, statement_works, word_stem
from slmgraph.query.theme_render import _join, reach_text

#: Relevance (cosine units) below the best statement's within which a statement is gathered.
ASPECT_MARGIN = EVIDENCE_MARGIN
#: Statements an answer gathers at most; under :data:`MIN_STATEMENTS` the answer keeps its themes.
MAX_STATEMENTS = 12
MIN_STATEMENTS = 5
#: Statements of one text unit at most (a unit is one passage of one speaker).
PER_UNIT = 2
#: Cosine an aspect's label has at least with the centroid of its statements.
LABEL_FIT = 0.45
#: Cosine a statement has at least with its aspect's label to be quoted under it (an aspect keeps two or more).
STATEMENT_FIT = 0.3
#: Share of the statements at most that fit no aspect (more: the answer keeps its themes).
MAX_OTHER_SHARE = 0.5
#: The number of aspects an answer has.
MIN_ASPECTS = 2
MAX_ASPECTS = 5

#: The topic of the statements no aspect's label fits.
OTHER = "other statements"

_NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five"}


def gather(cands: list, vecs, rel: list[float], cos, off) -> list[int]:
    """Indices of ``cands`` (``(community id, Statement)`` pairs, statements as unit vectors ``vecs``) that an
    answer quotes, best first: see the module doc. ``cos``/``off``: each statement's cosine with the question
    and its highest with an off-topic probe."""
    if not rel:
        return []
    top = max(rel)
    pool = [k for k in range(len(cands)) if rel[k] >= top - ASPECT_MARGIN and cos[k] - off[k] >= PROBE_GAP]
    mmr = _Mmr(vecs)
    chosen: list[int] = []
    per_unit: dict[int, int] = {}
    left = sorted(pool, key=lambda k: (-rel[k], k))
    while left and len(chosen) < MAX_STATEMENTS:
        k = max(left, key=lambda j: (mmr.value(j, rel[j]), -j))
        left.remove(k)
        st = cands[k][1]
        if per_unit.get(st.source, 0) >= PER_UNIT or any(repeats(st.text, cands[j][1].text) for j in chosen):
            continue
        chosen.append(k)
        per_unit[st.source] = per_unit.get(st.source, 0) + 1
        mmr.add(k)
    return chosen


def _silhouette(x, ids) -> float:
    """Mean silhouette (Rousseeuw 1987) of the labelling ``ids`` of unit vectors ``x`` over cosine distance;
    a point alone in its cluster scores 0."""
    d = 1.0 - x @ x.T
    out = []
    for i in range(len(x)):
        own = [j for j in range(len(x)) if ids[j] == ids[i] and j != i]
        if not own:
            out.append(0.0)
            continue
        a = float(d[i, own].mean())
        b = min(float(d[i, [j for j in range(len(x)) if ids[j] == c]].mean()) for c in set(ids) if c != ids[i])
        out.append((b - a) / max(a, b) if max(a, b) > 0 else 0.0)
    return float(np.mean(out))


def cluster(vecs) -> list[list[int]]:
    """Groups of row indices of ``vecs`` (unit vectors, so Euclidean distance orders as cosine distance):
    Ward's agglomerative clustering (``scipy.cluster.hierarchy``) cut into the number of clusters, from
    :data:`MIN_ASPECTS` to :data:`MAX_ASPECTS` and at most half the rows, whose mean silhouette over cosine
    distance is highest (Rousseeuw 1987); a cluster of one row joins the cluster whose centroid is nearest it.
    Groups in row order, by their first row; one group when no cut leaves two clusters of two rows."""
    from scipy.cluster.hierarchy import fcluster, linkage

    x = np.asarray(vecs, dtype=float)
    n = len(x)
    if n < 2 * MIN_ASPECTS:
        return [list(range(n))]
    z = linkage(x, method="ward")
    best = None
    for k in range(MIN_ASPECTS, min(MAX_ASPECTS, n // 2) + 1):
        ids = [int(c) for c in fcluster(z, t=k, criterion="maxclust")]
        big = [c for c in set(ids) if ids.count(c) >= 2]
        if len(big) < MIN_ASPECTS:
            continue
        cent = {c: x[[i for i in range(n) if ids[i] == c]].mean(axis=0) for c in big}
        ids = [c if c in cent else max(cent, key=lambda b: float(cent[b] @ x[i])) for i, c in enumerate(ids)]
        s = _silhouette(x, ids)
        if best is None or s > best[0]:
            best = (s, ids)
    if best is None:
        return [list(range(n))]
    groups: dict[int, list[int]] = {}
    for i, c in enumerate(best[1]):
        groups.setdefault(c, []).append(i)
    return sorted(groups.values(), key=lambda g: g[0])


def _asked(phrase: str, asked: set[str]) -> bool:
    """True when every word of ``phrase`` is a word of the question (by stem): the question's topic is what
    every aspect shares, not what tells one apart."""
    words = re.findall(r"[^\W_]+", phrase.casefold())
    return bool(words) and all(word_stem(w) in asked for w in words)


def _fits(label_vec, i: int, svecs: list) -> bool:
    """True when a label (unit vector) says what aspect ``i`` is about: its cosine with the centroid of the
    aspect's statements (``svecs[i]``, unit vectors) is at least :data:`LABEL_FIT`, and its mean cosine with
    them exceeds its mean cosine with any other aspect's statements (a phrase said in passing, "human
    toddler", or one as near the other aspects, names none)."""
    if float(label_vec @ _unit_norm(svecs[i].mean(axis=0))) < LABEL_FIT:
        return False
    own = float((svecs[i] @ label_vec).mean())
    return all(own > float((v @ label_vec).mean()) for j, v in enumerate(svecs) if j != i)


def aspect_labels(ix: ThemeIndex, groups: list[list], embedder, question: str,
                  chunks_of: list[list[str]]) -> list[list[str]]:
    """The label phrases of each aspect (``groups``: lists of Statements; ``chunks_of``: the text units each
    aspect's phrases are counted over), [] for an aspect no phrase labels: see the module doc."""

    asked = question_words(question)
    weighed = []
    for sts, chunks in zip(groups, chunks_of):
        ws = weighted_phrases(ix, chunks, [s.text for s in sts])
        # a lone word ("jobs") gathers sentences that share a word, not a topic
        weighed.append([x for x in ws if not _asked(x[0], asked) and len(x[0].split()) > 1])
    said = [" ".join(s.text for s in sts).casefold() for sts in groups]
    svecs = [_embed([s.text for s in sts], embedder) for sts in groups]
    a = len(groups)
    labels: list[list[str]] = []
    taken: set[str] = set()
    for i, ws in enumerate(weighed):
        out = []
        for p, w, us in ws:
            if _phrase_key(p) in taken:
                continue
            pat = re.compile(r"(?<!\w)" + re.escape(p.casefold()) + r"(?!\w)")
            f = sum(1 for s in said if pat.search(s)) or 1
            tf = sum(1 for s in groups[i] if pat.search(s.text.casefold())) or 1
            out.append((p, w * tf * math.log1p(a / f), us))
        out.sort(key=lambda x: (-x[1], x[0]))
        picked = pick_label(out, _unit_norm(svecs[i].mean(axis=0)), embedder) if out else []
        if picked and not _fits(_embed(picked[:1], embedder)[0], i, svecs):
            picked = []
        labels.append(picked)
        taken.update(_phrase_key(p) for p in picked)
    return labels


def focused_aspects(ix: ThemeIndex, cands: list, vecs, rel: list[float], cos, off, embedder, question: str,
                    make_themes) -> list[Theme]:
    """The themes of a focused answer as aspects (see the module doc), best first, or [] when fewer than
    :data:`MIN_STATEMENTS` statements pass, fewer than :data:`MIN_ASPECTS` aspects get a label and keep two
    statements near it, or more than :data:`MAX_OTHER_SHARE` of the statements fit none (the caller then
    answers as before).

    Args:
        cands: ``(community id, Statement)`` pairs with ``rel`` set; vecs: their unit vectors; cos, off: as
            :func:`gather`.
        make_themes: ``[community id] -> [Theme]``, one bare theme per id (its names and concepts).
    """
    if embedder is None or vecs is None:
        return []
    chosen = gather(cands, vecs, rel, cos, off)
    if len(chosen) < MIN_STATEMENTS:
        return []
    groups = [[chosen[i] for i in g] for g in cluster(vecs[chosen])]
    if len(groups) < MIN_ASPECTS:
        return []
    unit_chunk = {u.number: u.chunk_id for u in ix.all_units()}
    owners = [max(set(cands[k][0] for k in g), key=lambda c: (sum(1 for k in g if cands[k][0] == c),
                                                               max(rel[k] for k in g if cands[k][0] == c)))
              for g in groups]
    comm_units = ix.units(list(dict.fromkeys(owners)))
    chunks_of = [[unit_chunk[cands[k][1].source] for k in g if cands[k][1].source in unit_chunk] +
                 [u.chunk_id for u in comm_units.get(c, [])] for g, c in zip(groups, owners)]
    labels = aspect_labels(ix, [[cands[k][1] for k in g] for g in groups], embedder, question, chunks_of)
    named = [i for i, lab in enumerate(labels) if lab]
    rest = [k for i in range(len(groups)) if i not in named for k in groups[i]]
    merged = {}
    for i in named:  # a statement far from its aspect's label is quoted with the others
        lv = _embed(labels[i][:1], embedder)[0]
        fit = [k for k in groups[i] if float(vecs[k] @ lv) >= STATEMENT_FIT]
        if len(fit) >= 2:
            merged[i] = fit
        rest += [k for k in groups[i] if k not in fit or len(fit) < 2]
    named = [i for i in named if i in merged]
    # an answer most of whose statements fit no aspect is no synthesis of them
    if len(named) < MIN_ASPECTS or len(rest) > MAX_OTHER_SHARE * len(chosen):
        return []
    order = sorted(named, key=lambda i: (-max(rel[k] for k in merged[i]), i))
    themes = make_themes([owners[i] for i in order] + ([cands[max(rest, key=lambda k: rel[k])][0]] if rest else []))
    out = []
    if rest:  # the statements of no labelled aspect: on the question, quoted last under no label of their own
        t = themes[-1]
        t.statements = [cands[k][1] for k in sorted(rest, key=lambda k: (-rel[k], k))]
        t.topic, t.concepts, t.names, t.score = OTHER, [], [], max(rel[k] for k in rest)
        quoted = sorted({s.doc_id for s in t.statements}, key=lambda d: ix.doc_by_id[d].pos)
        t.doc_ids = t.community_docs = quoted
        t.coverage = coverage(quoted, ix.docs)
        t.aspect = True
    for i, t in zip(order, themes):
        ks = sorted(merged[i], key=lambda k: (-rel[k], k))
        t.statements = [cands[k][1] for k in ks]
        t.topic = _join(labels[i])
        t.concepts = list(labels[i])
        t.score = max(rel[k] for k in ks)
        quoted = {s.doc_id for s in t.statements}
        docs = sorted(set(ix.phrase_documents(labels[i])) | quoted, key=lambda d: ix.doc_by_id[d].pos)
        t.doc_ids = docs
        t.community_docs = docs
        t.coverage = coverage(docs, ix.docs)
        said = " ".join(s.text for s in t.statements).casefold()
        t.names = [n for n in t.names if re.search(r"(?<!\w)" + re.escape(n.casefold()) + r"(?!\w)", said)]
        t.aspect = True
        out.append(t)
    return out + themes[len(order):]


def is_aspects(themes: list[Theme]) -> bool:
    """True when ``themes`` are :func:`focused_aspects`' aspects."""
    return bool(themes) and all(getattr(t, "aspect", False) for t in themes)


def aspect_opening(t: Theme) -> str:
    """The sentence of the aspect of statements no label fits; "" for another theme."""
    if getattr(t, "aspect", False) and t.topic == OTHER:
        n = len(t.statements)
        return (f"{n} more statement{'s' if n != 1 else ''} on the question, in none of the aspects above"
                f"{' (speakers: ' + _join(list(dict.fromkeys(s.speaker for s in t.statements if s.speaker))) + ')' if any(s.speaker for s in t.statements) else ''}.")
    return ""


def aspects_overview(themes: list[Theme], ix: ThemeIndex) -> str:
    """The answer's opening sentences over its aspects: how many statements from how many works (documents)
    answer, and each labelled aspect with its statements, works and speakers, the most relevant first -- "9
    statements from 5 of the 24 works bear on the question, in three aspects, the most relevant first: protein
    design (3 statements from 2 works, by David Baker), medical imaging (4 statements from 2 works) and
    caution about deployment (2 statements from 1 work, by Daniela Rus)."; a speaker is named only for the
    statements that have one; then how many statements fit no aspect, and the most widely discussed aspect."""
    sts = [s for t in themes for s in t.statements]
    if not sts:
        return ""
    k, noun = statement_works(sts, ix)
    of = len({d.work or d.doc_id for d in ix.docs}) if noun == "work" else len(ix.docs)
    where = f"from all {of} {noun}s" if k == of and of > 1 else f"from {k} of the {of} {noun}s" if of > 1 else ""
    named = [t for t in themes if t.topic != OTHER]
    items = []
    for t in named:
        n = len(t.statements)
        w, _ = statement_works(t.statements, ix)
        who = list(dict.fromkeys(s.speaker for s in t.statements if s.speaker))
        said = sum(1 for s in t.statements if s.speaker)
        by = "" if not who else f", by {_join(who)}" if said == n else f", {said} of them by {_join(who)}"
        src = f" from {w} {noun}{'s' if w != 1 else ''}" if of > 1 else ""
        items.append(f"{t.topic} ({n} statement{'s' if n != 1 else ''}{src}{by})")
    m = len(named)
    sep = "; " if any("," in i for i in items) else ", "
    listed = items[0] if m == 1 else sep.join(items[:-1]) + f"{sep.rstrip()} and " + items[-1]
    head = f"{len(sts)} statement{'s' if len(sts) != 1 else ''}{' ' + where if where else ''} bear on the question"
    text = f"{head}, in {_NUMBERS.get(m, str(m))} aspects, the most relevant first: {listed}."
    rest = sum(len(t.statements) for t in themes if t.topic == OTHER)
    if rest:
        text += f" {rest} more fit{'s' if rest == 1 else ''} none of them."
    widest = max(named, key=lambda t: (t.coverage["documents"], -named.index(t)))
    text += f" Of these aspects, {widest.topic} is the most widely discussed (in {reach_text(widest.coverage, False, False)})."
    return text
