"""How a dated corpus moves over time, in one sentence of a corpus-wide answer (no model): the corpus's
dated documents, in date order, fall into a few consecutive periods, and each period is named by the noun
phrases it discusses most distinctively -- "Over time, the documents turn from compost bays (2 of 4 documents) and
plant sale (2 of 4) in March 2017 \u2013 November 2018, to wildlife pond (2 of 4) ... in March 2019 \u2013 October 2020,
and to ...".

A period's phrases are weighed by class-based TF-IDF with the period as the class (Grootendorst 2022,
BERTopic) over documents: the share of the period's documents holding the phrase times
``log(1 + N / n)``, ``n`` the corpus's dated documents holding it, of ``N``. A phrase must recur in at least
two of the period's documents, so one document's passing topic never names a period.
"""


from __future__ import annotations

import math

from slmgraph.query.theme_labels import head_compounds, label_worthy, prose_phrases
from slmgraph.query.theme_model import ThemeIndex
from slmgraph.query.theme_render import _join
from slmgraph.store.corpus_stats import phrase_key

#: Dated documents a corpus needs before its answer traces an arc (fewer: every theme line shows its dates).
MIN_DATED = 6
#: Share of the documents that must carry a date (a date found in a few transcripts' text dates no corpus).
DATED_SHARE = 0.8
#: Documents a period holds at least; at most this many periods.
MIN_PERIOD_DOCS = 2
MAX_PERIODS = 4
#: Phrases that name a period at most.
PERIOD_PHRASES = 2
#: A one-word phrase weighs this share of its weight: a noun compound names a topic, a lone head seldom does.
WORD_WEIGHT = 0.5


def periods(docs: list, k: int | None = None) -> list[list]:
    """``docs`` (dated, in date order) cut into ``k`` consecutive runs of near-equal length (default: 3 up to
    12 documents, then 4, never a run under :data:`MIN_PERIOD_DOCS`); [] for too few documents."""
    n = len(docs)
    if k is None:
        k = 3 if n <= 12 else MAX_PERIODS
    k = min(k, n // MIN_PERIOD_DOCS)
    if k < 2:
        return []
    bounds = [round(i * n / k) for i in range(k + 1)]
    return [docs[bounds[i]:bounds[i + 1]] for i in range(k)]


def document_phrases(ix: ThemeIndex, doc_ids: list[str]) -> tuple[dict[str, set[str]], dict[str, str]]:
    """``({doc_id: phrase keys of its prose}, {key: surface form})``: the noun phrases of each document's text
    units and their trailing sub-phrases ("new water main" -> "water main" -> "main") that are
    :func:`label_worthy`, less those held only in titles and list lines (:func:`prose_phrases`)."""
    if not doc_ids:
        return {}, {}
    q = ",".join("?" * len(doc_ids))
    owner = dict(ix.store.con.execute(f"SELECT chunk_id, doc_id FROM text_units WHERE doc_id IN ({q})",
                                      list(doc_ids)).fetchall())
    out: dict[str, set[str]] = {d: set() for d in doc_ids}
    seen: dict[str, dict[str, int]] = {}
    for c, rows in prose_phrases(ix, list(owner)).items():
        for key, name in rows:
            for sk, sn in head_compounds(phrase_key(key), name):
                if label_worthy(sn):
                    out[owner[c]].add(sk)
                    seen.setdefault(sk, {})[sn] = seen.get(sk, {}).get(sn, 0) + 1
    surface = {k: max(v.items(), key=lambda kv: (kv[1], kv[0]))[0] for k, v in seen.items()}
    return out, surface


def period_topics(runs: list[list], held: dict[str, set[str]], n: int) -> list[list[tuple[str, int]]]:
    """Per period of ``runs``, up to :data:`PERIOD_PHRASES` ``(phrase key, documents of the period holding
    it)``, heaviest first by the module doc's weight; a phrase sharing a word with one already taken for the
    period, or naming the period before it, is skipped (the arc says what changed). ``held``: doc_id -> keys,
    ``n``: the dated documents."""
    df: dict[str, int] = {}
    for keys in held.values():
        for k in keys:
            df[k] = df.get(k, 0) + 1
    out, before = [], set()
    for run in runs:
        cnt: dict[str, int] = {}
        for d in run:
            for k in held.get(d.doc_id, ()):
                cnt[k] = cnt.get(k, 0) + 1
        need = min(MIN_PERIOD_DOCS, len(run))
        scored = sorted(((c / len(run) * math.log1p(n / df[k]) * (1.0 if " " in k else WORD_WEIGHT), k, c)
                         for k, c in cnt.items() if c >= need and k not in before), key=lambda x: (-x[0], x[1]))
        picked: list[tuple[str, int]] = []
        words: set[str] = set()
        for _, k, c in scored:
            if len(picked) >= PERIOD_PHRASES:
                break
            if set(k.split()) & words:
                continue
            picked.append((k, c))
            words |= set(k.split())
        out.append(picked)
        before = {k for k, _ in picked}
    return out


def _when(d) -> str:
    """A document's date as its title writes it ("2017-03"), else as found in its text ("14 January 2025")."""
    from slmgraph.indexing.stages.topics import title_date

    return title_date(d.title) or d.date


def arc_sentence(ix: ThemeIndex) -> str:
    """One sentence tracing what a dated corpus discusses, period by period (see the module doc); "" unless at
    least :data:`DATED_SHARE` of its documents carry a date and :data:`MIN_DATED` of its works do (the parts
    of one work count as one, from its first part's date), when two periods would meet on one date, or when a
    period has no phrase recurring in two of its works."""
    if not ix.docs or sum(1 for d in ix.docs if d.date) < DATED_SHARE * len(ix.docs):
        return ""
    works: dict[str, list] = {}
    for d in ix.docs:
        if d.date:
            works.setdefault(d.work if d.work is not None else d.doc_id, []).append(d)
    firsts = [parts[0] for parts in works.values()]  # corpus order is date order where documents are dated
    if len(firsts) < MIN_DATED:
        return ""
    runs = periods(firsts)
    if not runs or any(_when(a[-1]) == _when(b[0]) for a, b in zip(runs, runs[1:])):
        return ""
    held, surface = document_phrases(ix, [d.doc_id for parts in works.values() for d in parts])
    by_first = {parts[0].doc_id: set().union(*(held.get(d.doc_id, set()) for d in parts)) for parts in works.values()}
    topics = period_topics(runs, by_first, len(firsts))
    if any(not t for t in topics):
        return ""
    parts = []
    for i, (run, picked) in enumerate(zip(runs, topics)):
        noun = " works" if len(firsts) < sum(len(x) for x in works.values()) else " documents"
        named = _join([f"{surface.get(k, k)} ({c} of {len(run)}{noun if i == 0 and j == 0 else ''})"
                       for j, (k, c) in enumerate(picked)])
        parts.append(f"{named} in {_when(run[0])} \u2013 {_when(run[-1])}")
    return "Over time, the documents turn from " + _join(parts, ", to ", ", and to ") + "."
