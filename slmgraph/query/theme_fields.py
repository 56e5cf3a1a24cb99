"""Guests by field: a question listing the fields its guests come from ("How do guests from robotics,
neuroscience, entertainment and online communities differ in how they approach building new technology?") asks
what the guests of each field say, not which passages name the field's word (no model).

* **asks** (:func:`asks_fields`): the question's list (:mod:`slmgraph.query.theme_facets`) follows "guests",
  "speakers", "interviewees", "people" or "experts" and "from", "in" or "working in" ("guests from medicine").
* **who** (:func:`field_guests`): the works with voices of their own (:mod:`slmgraph.query.theme_works`: a
  work's guests, its hosts aside). A work's affinity with a field is the mean cosine of its :data:`TOP_UNITS`
  text units nearest the field's label (stored unit vectors), plus the mean cosine of the sentences naming its
  voices nearest the label (how the work introduces its guest: "Samira Khan founded SkyParcel"), plus
  :data:`LEX_WEIGHT` times the share of its units naming the field's word. A field takes its best work and any
  within :data:`FIELD_MARGIN` of it, at most :data:`FIELD_WORKS`; a work is the guest of one field, taken by
  the earliest field in the question's order that has it best; a work whose affinity is no better than the
  median work's is nobody's. A field whose best work stands under :data:`MIN_Z` standard deviations above the
  works' mean (under :data:`Z_SHARE` times sqrt(n - 1) among n works, where fewer can stand so far) has no guests of its own ("business" among guests who all run something) and is answered by its
  word, as any list is.
* **quotes**: :func:`slmgraph.query.theme_facets.facet_themes` then reads each field's works only and quotes
  its guests only (see there).

A corpus without speaker labels, or with under :data:`MIN_WORKS` works with voices, has no guests to find:
the question is answered by the field's word as any list is.
"""


from __future__ import annotations

import re
from collections import Counter

import numpy as np

#: A list governed by the guests ("guests from", "speakers in", "people working in", "experts in the fields of").
_FROM = re.compile(r"(?i)\b(guests?|speakers?|interviewees|people|experts|panell?ists|contributors|participants)"
                   r"( who (come|came|work|worked))?\s+(from|in|working in|with backgrounds? in)"
                   r"( the)?( fields? of| worlds? of)?\s*$")
#: A list in parentheses after what the speakers do ("vary by profession (doctor, carpenter, fisherman)").
_BY_WORK = re.compile(r"(?i)\b(profession|professions|occupation|occupations|job|jobs|field|fields|trade|trades|"
                      r"background|backgrounds|discipline|disciplines|line of work|expertise)\s*\(\s*$")
#: Units per work whose cosines with a field's label are averaged.
TOP_UNITS = 3
#: Sentences naming a work's voices whose cosines with a field's label are averaged.
TOP_INTRO = 2
#: What naming the field's word in every unit adds to a work's affinity.
LEX_WEIGHT = 0.1
#: A field takes the works within this affinity of its best (cosine units), at most FIELD_WORKS.
FIELD_MARGIN = 0.03
FIELD_WORKS = 2
#: A field's best work stands this many standard deviations above the works' mean affinity, or the field has no
#: guests of its own (its word answers it); among n works, at most ``Z_SHARE * sqrt(n - 1)`` (one work alone apart
#: stands sqrt(n - 1) deviations above the mean: among six works, 2.2 at most).
MIN_Z = 2.0
Z_SHARE = 0.7
#: A work's guests of several fields: the words after each one's name weighed (characters), and the voices kept
#: within this cosine of the nearest.
INTRO_CHARS = 90
VOICE_MARGIN = 0.05
#: Works with voices of their own a corpus needs before its guests are looked up by field.
MIN_WORKS = 3


def asks_fields(question: str, first_label: str) -> bool:
    """True when ``question``'s list, opening on ``first_label``, is a list of the guests' fields (see the module
    doc), or a list in parentheses after a word for what they do ("by profession (doctor, carpenter)")."""
    at = (question or "").find(first_label)
    return at > 0 and bool(_FROM.search(question[:at]) or _BY_WORK.search(question[:at]))


def work_voices(ix) -> dict[str, list[str]]:
    """``work -> its voices`` (:func:`slmgraph.query.theme_works._voices`, in title case) for the works that have
    any, in corpus order; {} without speaker labels."""
    from slmgraph.query.theme_works import _speaking, _voices, co_hosts

    of = {d.doc_id: d.work or d.name or d.doc_id for d in ix.docs}
    order = list(dict.fromkeys(of.values()))
    spoke, found_in, _, home, n_units = _speaking(ix, of, order)
    if not any(spoke.values()):
        return {}
    hosting = co_hosts(spoke, order, ix)
    out = {}
    for w in order:
        v = _voices(w, spoke[w], Counter(), found_in, len(order), home, n_units[w], hosting)
        if v:
            out[w] = v
    return out


def field_guests(ix, facets: list, embedder) -> dict[int, tuple[list[str], list[str]]]:
    """``facet index -> (doc ids of its works, its voices)`` for the facets whose guests are found (see the
    module doc); {} when the corpus has under :data:`MIN_WORKS` works with voices or no embedder. The facets no
    guest stands out for are keyed ``-1 - index`` with ``(doc ids of the works standing out for another field of
    the question, [])``: a field answered by its word quotes no guest of another field (a neuroscientist's "gaming
    system" is no word of entertainment's guests)."""
    from slmgraph.query.extractive import _embed
    from slmgraph.query.theme_facets import _pattern, names
    from slmgraph.query.theme_model import _unit_norm

    voices = work_voices(ix)
    if len(voices) < MIN_WORKS or embedder is None or not facets:
        return {}
    of = {d.doc_id: d.work or d.name or d.doc_id for d in ix.docs}
    units = ix.all_units()
    uvec = ix.unit_vectors([u.chunk_id for u in units])
    labels = _embed([f.label for f in facets], embedder)
    works = list(voices)
    by_work: dict[str, list] = {w: [] for w in works}
    for u in units:
        if of[u.doc_id] in by_work:
            by_work[of[u.doc_id]].append(u)
    # how each work introduces its voices: its sentences naming one of them, by any speaker
    intro: dict[str, list[str]] = {}
    for w in works:
        parts = {p for v in voices[w] for p in v.split() if len(p) > 2}
        said = re.compile(r"\b(" + "|".join(map(re.escape, sorted(parts))) + r")\b", re.IGNORECASE) if parts else None
        found = []
        for u in by_work[w]:
            # a rough split will do to weigh an introduction (no sentence of it is quoted), and is fast
            if said is not None and said.search(u.text):
                found += [s for s in re.split(r"(?<=[.!?])\s+|\n+", u.text) if said.search(s)]
        intro[w] = list(dict.fromkeys(found))[:12]
    flat = [s for w in works for s in intro[w]]
    ivec = _embed(flat, embedder) if flat else np.zeros((0, labels.shape[1]))
    score = np.zeros((len(facets), len(works)))
    at = 0
    for j, w in enumerate(works):
        mine = [_unit_norm(uvec[u.chunk_id]) for u in by_work[w] if u.chunk_id in uvec]
        k = len(intro[w])
        for i, f in enumerate(facets):
            pats = _pattern(f)
            cos = sorted((float(v @ labels[i]) for v in mine), reverse=True)[:TOP_UNITS]
            near = sorted((float(x) for x in ivec[at:at + k] @ labels[i]), reverse=True)[:TOP_INTRO]
            lex = sum(1 for u in by_work[w] if names(u.text, f, pats)) / max(1, len(by_work[w]))
            score[i, j] = (np.mean(cos) if cos else 0.0) + (np.mean(near) if near else 0.0) + LEX_WEIGHT * lex
        at += k
    out: dict[int, tuple[list[str], list[str]]] = {}
    taken: set[int] = set()
    floor = np.median(score, axis=1)
    spreads = score.std(axis=1)
    z = (score - score.mean(axis=1, keepdims=True)) / np.where(spreads > 0, spreads, 1.0)[:, None]
    standing = z >= least_z(len(works))
    for i in range(len(facets)):
        spread = float(score[i].std())
        # a field no work stands out for ("business" when every guest runs something) has no guests of its own
        if spread <= 0 or (score[i].max() - score[i].mean()) / spread < least_z(len(works)):
            others = {works[j] for j in range(len(works)) if any(standing[x, j] for x in range(len(facets)) if x != i)}
            if others:
                out[-1 - i] = ([d.doc_id for d in ix.docs if of[d.doc_id] in others], [])
            continue
        free = [j for j in range(len(works)) if j not in taken and score[i, j] > floor[i]
                # a work is the guest of the field it is nearest, the question's earlier field on a tie; a work of
                # several guests may be the guest of several fields, one guest each
                and (len(voices[works[j]]) > 1 or score[i, j] >= max(score[x, j] for x in range(i, len(facets))))]
        if not free:
            continue
        free.sort(key=lambda j: -score[i, j])
        best = score[i, free[0]]
        picked = [j for j in free if score[i, j] >= best - FIELD_MARGIN][:FIELD_WORKS]
        taken.update(j for j in picked if len(voices[works[j]]) == 1)
        docs = [d.doc_id for d in ix.docs if of[d.doc_id] in {works[j] for j in picked}]
        out[i] = (docs, [v for j in picked for v in _nearest_voices(voices[works[j]], intro[works[j]],
                                                                     labels[i], embedder)])
    return out


def least_z(n: int) -> float:
    """How many standard deviations above the mean of ``n`` works' affinities a field's best work must stand:
    :data:`MIN_Z`, or :data:`Z_SHARE` times sqrt(n - 1) where that is less (among few works no one stands so far)."""
    return min(MIN_Z, Z_SHARE * max(0, n - 1) ** 0.5)


def _nearest_voices(voices: list[str], intro: list[str], label, embedder) -> list[str]:
    """The voices of a work of several guests nearest a field (``label``: its unit vector): each voice's words
    right after its name in the work's introductions, up to another guest's name ("Ruth Mbeki teaches physics and
    runs the science department"), by their best cosine with the field; those within :data:`VOICE_MARGIN` of the best. A work of
    one voice, or whose introductions name none apart, keeps them all."""
    from slmgraph.query.extractive import _embed

    if len(voices) < 2:
        return voices
    near = {}
    name = {v: re.compile(r"\b(" + "|".join(map(re.escape, [p for p in v.split() if len(p) > 2])) + r")\b",
                          re.IGNORECASE) for v in voices}
    for v in voices:
        after = []
        for x in intro:
            for m in name[v].finditer(x):
                # up to the next guest's name: "Agnes Pike, local historian, and June Okafor, nurse"
                stop = min([m.start() + INTRO_CHARS] + [o.start() for u in voices if u != v
                                                        for o in name[u].finditer(x, m.end())])
                after.append(x[m.start():stop])
        after = after[:TOP_INTRO * 3]
        if after:
            near[v] = float(np.max(_embed(after, embedder) @ label))
    if len(near) < len(voices):
        return voices
    best = max(near.values())
    return [v for v in voices if near[v] >= best - VOICE_MARGIN]
