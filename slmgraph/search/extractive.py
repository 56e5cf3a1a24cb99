"""Extractive-first answers for models under 1B parameters.

A 135M model asked to write an answer loops, copies its examples or writes
generic sentences (issue 9: "The ability to learn from- the ability to learn
from- ...", "... are [1, 2, 3, 4, 5]."). So with small models an answer is
assembled from the data the query selected:

* global search: the best-scored community reports' titles and findings
  (:func:`report_points`), one point per report, near-duplicate findings
  merged with their citations;
* TS, basic and local search: the sentences of the selected passages (or of
  the local context's text units and relationships) nearest to the question
  (:func:`sentence_points`), each citing where it comes from;

then the model writes at most one opening sentence (:func:`synthesize`),
kept only when it is grounded in the points under the test used for report
titles (:func:`slmgraph.names.is_grounded`, half of its content words in the
points) and neither loops nor repeats. :func:`has_repetition` is the
property every answer must have: no repeated sentence, no looped phrase.
No point and no opening sentence is a sentence that gives orders to an
assistant (:func:`slmgraph.text.addressed_to_assistant`: injected "Ignore all
previous instructions ..." lines stay in the text units but are never repeated).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..client import DEADLINE_SENTENCE_S
from ..names import content_words, cut, is_grounded
from ..text import addressed_to_assistant, degenerate, overlaps, sentences, word_set

#: Two texts whose content words overlap this much (Jaccard) are near-duplicates.
NEAR_DUPLICATE = 0.6
#: A transcript's speaker label at the start of a sentence ("KEVIN SCOTT: ").
_SPEAKER = re.compile(r"^[A-Z][A-Z .'/-]+:\s*")
#: Markers of the context's labels that must not leak into an answer.
_MARKERS = re.compile(r"(?i)\b(passage|report|source|analyst)\s+\d+\s*:?")


@dataclass
class Point:
    """One point of an extractive answer.

    Attributes:
        head: a short label (a report title), or "" for a bare sentence.
        text: the point's sentence(s), copied from the data.
        ids: the ids it cites (first = where it was taken from).
        rank: the ranking key it was chosen by (higher first).
        label: the citation label of its ids when it differs from the
            answer's (DRIFT mixes report points and text-unit points), else "".
    """

    head: str
    text: str
    ids: list = field(default_factory=list)
    rank: float = 0.0
    label: str = ""


def _norm_words(s: str) -> frozenset:
    return frozenset(content_words(s)) or word_set(s)


def near_duplicate(a: str, b: str, threshold: float = NEAR_DUPLICATE) -> bool:
    """True when ``a`` and ``b`` share at least ``threshold`` of their content words (Jaccard)."""
    wa, wb = _norm_words(a), _norm_words(b)
    if not wa or not wb:
        return a.strip().casefold() == b.strip().casefold()
    return overlaps(wa, wb, threshold)


def has_repetition(text: str) -> bool:
    """True when ``text`` repeats a sentence (case and spacing ignored, 3+ words)
    or loops a phrase (1-8 words repeated 3+ times in a row, as in
    "the ability to learn from- the ability to learn from- the ability ...")."""
    seen = set()
    for line in text.split("\n"):
        for s in re.split(r"(?<=[.!?])\s+", line):
            words = re.findall(r"\w+", s.casefold())
            if len(words) < 3:
                continue
            key = " ".join(words)
            if key in seen:
                return True
            seen.add(key)
    words = re.findall(r"\w+", text.casefold())
    for k in range(1, 9):
        for i in range(0, len(words) - 3 * k + 1):
            a = words[i:i + k]
            if a == words[i + k:i + 2 * k] == words[i + 2 * k:i + 3 * k]:
                if k == 1 and not a[0].isalpha():
                    continue
                return True
    return False


def _rank_texts(question_vec, texts: list[str], embedder) -> list[float]:
    """Cosine of each text with the question (0s without an embedder)."""
    if embedder is None or question_vec is None or not texts:
        return [0.0] * len(texts)
    from .scoring import cosines

    return [float(c) for c in cosines(question_vec, embedder.encode(texts))]


def report_points(reports: list[dict], scores: dict, question_vec=None, embedder=None, max_points: int = 8,
                  per_report: int = 2, max_chars: int = 300, min_words: int = 8) -> list[Point]:
    """One point per report, best-scored reports first: the report's title as the head and
    the ``per_report`` sentences of its findings nearest to the question as the text
    (sentences of fewer than ``min_words`` words besides a speaker label, like
    "KEVIN SCOTT: Yeah.", are skipped unless a finding has no other).

    A finding that nearly repeats one already used (:func:`near_duplicate`)
    is not repeated: its report is cited by the point that holds it. A report
    whose findings were all used elsewhere, or whose title nearly repeats an
    earlier point's, joins that point's citations.

    Args:
        reports: dicts with ``community_id``, ``title``, ``summary``, ``findings``.
        scores: ``community_id -> helpfulness 0-100``.
        question_vec: the question's vector (None: findings in report order).
        max_points: points at most.

    Returns:
        points, best first; each cites the reports it holds.
    """
    ranked = sorted(reports, key=lambda r: (-scores.get(r["community_id"], 0.0), r["community_id"]))
    cands: list[tuple[int, str]] = []  # (report index, one sentence of a finding)
    for i, r in enumerate(ranked[: max_points * 2]):
        for f in r.get("findings") or []:
            body = f"{f.get('explanation') or f.get('summary') or ''}"
            sents = [x for x in sentences(body) if len(_SPEAKER.sub("", x).split()) >= min_words
                     and not addressed_to_assistant(x)]
            for x in sents or ([body] if body.strip() and not addressed_to_assistant(body) else []):
                cands.append((i, cut(x, max_chars)))
        if not r.get("findings"):  # a report without findings: its summary, else its text
            body = (r.get("summary") or re.sub(r"^#[^\n]*\n?", "", r.get("full_text") or "").strip()
                    or r.get("title", ""))
            if body and not addressed_to_assistant(body):
                cands.append((i, cut(body, max_chars)))
    sims = _rank_texts(question_vec, [t for _, t in cands], embedder)
    by_report: dict[int, list[tuple[float, str]]] = {}
    for (i, t), c in zip(cands, sims):
        by_report.setdefault(i, []).append((c, t))
    points: list[Point] = []
    used: list[tuple[str, Point]] = []  # finding text -> the point holding it
    for i, r in enumerate(ranked[: max_points * 2]):
        rid = r["community_id"]
        title_dup = next((p for p in points if p.head and near_duplicate(p.head, r["title"], 0.8)), None)
        if title_dup is not None:
            title_dup.ids.append(rid)
            continue
        chosen: list[str] = []
        for c, t in sorted(by_report.get(i, []), key=lambda x: -x[0]):
            dup = next((p for u, p in used if near_duplicate(u, t)), None)
            if dup is not None:
                if rid not in dup.ids:
                    dup.ids.append(rid)
                continue
            if any(near_duplicate(t, x) for x in chosen):
                continue
            chosen.append(t)
            if len(chosen) >= per_report:
                break
        if not chosen:
            continue
        if len(points) >= max_points:
            break
        p = Point(r["title"], " ".join(chosen), [rid], scores.get(rid, 0.0))
        points.append(p)
        used += [(t, p) for t in chosen]
    return points


def sentence_points(passages: list[tuple[object, str]], question_vec=None, embedder=None, max_points: int = 5,
                    min_words: int = 6, max_chars: int = 300) -> list[Point]:
    """The sentences of ``passages`` nearest to the question, one point each.

    Sentences of fewer than ``min_words`` words are skipped; a sentence that
    nearly repeats a chosen one (overlapping text units repeat sentences)
    adds its passage to that point's citations instead.

    Args:
        passages: ``(cite id, text)``, best first (the order breaks ties).

    Returns:
        up to ``max_points`` points, nearest first.
    """
    cands: list[tuple[int, object, str]] = []
    for order, (pid, text) in enumerate(passages):
        for s in sentences(" ".join((text or "").split())):
            if len(s.split()) >= min_words and not addressed_to_assistant(s):
                cands.append((order, pid, cut(s, max_chars)))
    sims = _rank_texts(question_vec, [c[2] for c in cands], embedder)
    ranked = sorted(zip(cands, sims), key=lambda x: (-x[1], x[0][0]))
    points: list[Point] = []
    for (order, pid, s), c in ranked:
        dup = next((p for p in points if near_duplicate(p.text, s)), None)
        if dup is not None:
            if pid not in dup.ids:
                dup.ids.append(pid)
            continue
        if len(points) >= max_points:
            continue
        points.append(Point("", s, [pid], c))
    return points


def render_points(points: list[Point], label: str) -> str:
    """Points as markdown bullets: ``- **head**: text [Label: 1, 2]`` (no head: ``- text [...]``);
    a point's own ``label`` overrides ``label``."""
    lines = []
    for p in points:
        cite = f" [{p.label or label}: {', '.join(map(str, p.ids))}]" if p.ids else ""
        lines.append(f"- **{p.head}**: {p.text}{cite}" if p.head else f"- {p.text}{cite}")
    return "\n".join(lines)


def grounded_synthesis(text: str, points: list[Point]) -> str | None:
    """The first sentence of a model-written ``text`` when it may open an answer, else None.

    Kept when: half of its content words occur in the points
    (:func:`slmgraph.names.is_grounded`, as for report titles), it is not a
    copied list or a loop (:func:`slmgraph.reports.degenerate`,
    :func:`has_repetition`), it has at least 4 words, it leaks no context
    label ("Passage 4:", "Report 12"), it gives no orders to an assistant
    (:func:`slmgraph.text.addressed_to_assistant`), and it does not merely repeat a point.
    """
    text = " ".join((text or "").split())
    first = sentences(text)[0] if sentences(text) else ""
    first = first.strip().strip('"').strip()
    if (len(first.split()) < 4 or _MARKERS.search(first) or degenerate(first) or has_repetition(first)
            or addressed_to_assistant(first)):
        return None
    words = set()
    for p in points:
        words.update(content_words(f"{p.head} {p.text}"))
    if not is_grounded(first, words, 0.5):
        return None
    if any(near_duplicate(first, p.text, 0.8) for p in points):
        return None
    if not first.endswith((".", "!", "?")):
        first += "."
    return first


def synthesize(client, prompts, question: str, points: list[Point], max_tokens: int = 60,
               max_point_tokens: int = 1500) -> tuple[str | None, object]:
    """Ask the model for one opening sentence over ``points``; ``(kept sentence or None, Generation)``.

    The points are given without citations, cut to ``max_point_tokens``
    tokens; greedy, capped at ``max_tokens`` (one sentence). See
    :func:`grounded_synthesis` for when the sentence is kept.
    """
    listing = "\n".join(f"- {p.head + ': ' if p.head else ''}{p.text}" for p in points)
    listing = client.truncate(listing, max_point_tokens)
    gen = client.call("synthesis", prompts.text("synthesis_system"),
                      prompts.fill("synthesis_user", question=question, points=listing),
                      schema=None, max_tokens=max_tokens, deadline_s=DEADLINE_SENTENCE_S, use_cache=False)
    return grounded_synthesis(gen.text, points), gen


def extractive_answer(points: list[Point], label: str, synthesis: str | None, sources_line: str) -> str:
    """The answer text: the synthesis (if any), the points, and the sources line."""
    body = render_points(points, label)
    parts = ([synthesis] if synthesis else []) + [body] + ([sources_line] if sources_line else [])
    return "\n\n".join(p for p in parts if p)

