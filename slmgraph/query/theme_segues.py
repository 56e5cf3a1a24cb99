"""Segues: a question asking whether speakers move between their own stories and another kind of talk ("Do guests
segue between personal narratives and industry insights fluidly, and how does this impact the overall story?") is
answered from the replies where they do, counted and quoted (no model).

No community report holds such an answer: it is about how the speakers talk, found inside single replies in every
work. So each guest's turn is read sentence by sentence:

* **a story** is a sentence of the ``stories`` kind (:func:`slmgraph.query.theme_kinds.cue_weight`: the first
  person and the past, "when I was", "I remember");
* **the other side** is a whole statement (:func:`slmgraph.query.theme_model._statement_ok`) of at least
  :data:`MIN_WORDS` words, no story, nearer by the embedder to the question's other phrase ("industry insights")
  than to its story phrase ("personal narratives"), by at least :data:`SIDE_MARGIN`;
* **a segue** is a story followed within :data:`REACH` sentences of the same turn by a sentence of the other side
  (or the other way round): the speaker moves on by themselves, no host's question between; a turn counts one move
  each way, its clearest;
* **the link**: a segue whose two sentences share a content word (a noun phrase of the index, or in an index
  without them a word of five letters or more, no stop word) is one where the story leads into the point.

The answer says in how many works and how often guests move each way, by whom, how many of those moves carry a
word of the story into the point, and quotes the clearest segue of each work (the pair whose second sentence is
nearest the question's other phrase), story first.
"""

from __future__ import annotations

import re
from collections import Counter

from slmgraph.query.theme_lead import _join, _q

#: A question asking whether speakers move between two kinds of talk: its verb, then "between X and Y".
_SEGUE = re.compile(r"(?i)\b(segue|segues|segueing|move|moves|moving|transition|transitions|transitioning|switch|"
                    r"switches|switching|shift|shifts|shifting|pivot|pivots|pivoting|alternate|alternates|weave|weaves|"
                    r"go|goes)\b(?: \w+){0,3}? between (?:their |the |own )*(.+?) and (?:their |the )*(.+?)"
                    r"(?=\s*(?:[,?.;]|\band how\b|\band what\b|\band does\b|\band is\b|$))")
#: A phrase naming the speakers' own stories ("personal narratives", "anecdotes", "their experiences").
_STORY_SIDE = re.compile(r"(?i)\b(personal|narratives?|anecdot\w*|stor(y|ies)|experiences?|memor(y|ies)|life|"
                         r"lives|biograph\w*|backgrounds?)\b")
#: The first person singular: a story of the speaker's own ("we passed a point decades ago" is none).
_SINGULAR = re.compile(r"(?i)\b(i|i'm|i've|i'd|me|my)\b")
#: Trailing words of a question's phrase that say how, not what ("industry insights fluidly").
_HOW = re.compile(r"(?i)(\s+(\w+ly|(within|in) (one|a|the same|a single) (answer|reply|turn|response)))+$")
#: Sentences of one turn a segue spans at most (the story, then the point within this many after it).
REACH = 4
#: The fewest words of a sentence of the other side.
MIN_WORDS = 8
#: How much nearer the other phrase than the story phrase a sentence of the other side stands (cosine).
SIDE_MARGIN = 0.2
#: Works quoted at most, one segue each.
SHOWN = 5


def asks_segue(question: str) -> tuple[str, str] | None:
    """``(story phrase, other phrase)`` of a question asking whether speakers move between their stories and
    another kind of talk ("segue between personal narratives and industry insights" -> ("personal narratives",
    "industry insights")), or None when it asks no such thing or neither phrase names stories."""
    m = _SEGUE.search(question or "")
    if not m:
        return None
    a, b = (_HOW.sub("", m.group(k).strip()) for k in (2, 3))
    if _STORY_SIDE.search(a) and not _STORY_SIDE.search(b):
        return a, b
    if _STORY_SIDE.search(b) and not _STORY_SIDE.search(a):
        return b, a
    return None


def _content(text: str, phrases: list[str]) -> set[str]:
    """The content words of ``text`` a segue's two sentences may share: the index's noun phrases it writes, or in
    an index without them its words of five letters or more that are no stop words, by stem."""
    from slmgraph.names.forms import STOP
    from slmgraph.query.theme_model import word_stem

    low = text.casefold()
    if phrases:
        return {p for p in phrases if re.search(r"\b" + re.escape(p) + r"\b", low)}
    return {word_stem(w) for w in re.findall(r"[a-z]{5,}", low) if w not in STOP}


def segues(ix, story_phrase: str, other_phrase: str, embedder) -> tuple[list[dict], int]:
    """``(segues, turns)``: every segue of the corpus's guests (see the module doc), in corpus order, each
    ``{"speaker", "first", "second", "to_other": bool, "score", "link": [shared words]}`` where ``first`` and
    ``second`` are :class:`slmgraph.query.theme_kinds.Said` (the story first when ``to_other``); ``turns``: the
    guests' turns holding a story. Hosts' turns are not read."""

    from slmgraph.query.extractive import _embed, prose_sentences
    from slmgraph.query.theme_kinds import Said, found
    from slmgraph.query.theme_model import _statement_ok, _turns, spoken
    from slmgraph.query.theme_works import corpus_hosts

    hosts = {h.casefold() for h in corpus_hosts(ix)}
    # the stories the answer to "what stories do guests tell?" quotes from, in the first person singular
    told = [s for s in found(ix, "", ["stories"]) if _SINGULAR.search(s.text)]
    units_told = {s.source for s in told}
    told_text = {s.text for s in told}
    turns: list[tuple[object, str, list[tuple[str, bool]]]] = []
    next_asked: dict[int, str] = {}  # a turn's place in turns -> the host's turn that follows it in the unit
    for u in ix.all_units():
        if u.number not in units_told:
            continue
        marks = _turns(u.text)
        for k, (at, label) in enumerate(marks):
            if label.casefold() in hosts:
                continue
            end = marks[k + 1][0] if k + 1 < len(marks) else len(u.text)
            said = [spoken(x) for x in prose_sentences(u.text[at:end].split(":", 1)[-1])]
            said = [x for x in said if x]
            stories = [any(x.endswith(t) or t.endswith(x) for t in told_text) for x in said]
            if any(stories):
                if k + 1 < len(marks) and marks[k + 1][1].casefold() in hosts:
                    stop = marks[k + 2][0] if k + 2 < len(marks) else len(u.text)
                    next_asked[len(turns)] = u.text[marks[k + 1][0]:stop].split(":", 1)[-1]
                turns.append((u, label, list(zip(said, stories))))
    # only a sentence within reach of a story can be the other side of a segue: embed those alone
    near: list[str] = []
    for _, _, said in turns:
        for i, (x, story) in enumerate(said):
            if not story and any(said[j][1] for j in range(max(0, i - REACH), min(len(said), i + REACH + 1))):
                near.append(x)
    near = list(dict.fromkeys(near))
    if not near:
        return [], len(turns)
    v = _embed(near + [story_phrase, other_phrase], embedder)
    gap = dict(zip(near, (v[:-2] @ v[-1] - v[:-2] @ v[-2]).tolist()))
    to_other_cos = dict(zip(near, (v[:-2] @ v[-1]).tolist()))
    phrases = sorted({k for ks in ix.unit_phrases([u.chunk_id for u, _, _ in turns]).values() for k, _ in ks},
                     key=len, reverse=True)

    def other(x: str) -> bool:
        return (gap.get(x, -1.0) >= SIDE_MARGIN and len(x.split()) >= MIN_WORDS and not x.rstrip("\"')").endswith("?")
                and _statement_ok(x, ix))

    best: dict[tuple[int, bool], dict] = {}
    seen: set = set()
    for t, (u, label, said) in enumerate(turns):
        d = ix.doc_by_id[u.doc_id]
        who = " ".join(w.capitalize() for w in label.split()) if label.isupper() else label
        mk = lambda x: Said(x, u.number, u.doc_id, u.unit, d.n_units, who, "segue")  # noqa: E731
        for i, (x, story) in enumerate(said):
            if not story:
                continue
            after = next((said[j][0] for j in range(i + 1, min(len(said), i + REACH + 1))
                          if not said[j][1] and other(said[j][0])), None)
            before = next((said[j][0] for j in range(i - 1, max(-1, i - REACH - 1), -1)
                           if not said[j][1] and other(said[j][0])), None)
            for first, second, forward in ((x, after, True), (before, x, False)):
                if first is None or second is None or (first, second) in seen:
                    continue
                seen.add((first, second))
                link = sorted(_content(first, phrases) & _content(second, phrases))
                point = second if forward else first
                story_said = first if forward else second
                # what the host asks next takes up the point, the story, or neither (None: the unit ends first)
                asked = next_asked.get(t)
                taken = None if asked is None else (
                    "point" if (_content(point, phrases) - _content(story_said, phrases)) & _content(asked, phrases)
                    else "story" if _content(story_said, phrases) & _content(asked, phrases) else "")
                move = {"speaker": who, "first": mk(first), "second": mk(second), "to_other": forward,
                        "score": float(to_other_cos[point]), "link": link, "taken": taken}
                # one reply moves each way once, however many of its story sentences lead to the point: the
                # clearest move of the turn stands for it (a link first, then the point nearest the other phrase)
                key = (t, forward)
                if key not in best or (bool(link), move["score"]) > (bool(best[key]["link"]), best[key]["score"]):
                    best[key] = move
    out = [best[k] for k in sorted(best)]
    return out, len(turns)


#: Moves to the other side whose next host's turn is read, needed before the answer says what the host takes up.
MIN_FOLLOWED = 3


def _impact(ix, forward: list[dict], other_phrase: str) -> str:
    """What the moves do to the conversation, as sentences (a leading space), "" with too few: where in a
    conversation they come (the median point of their works, :meth:`ThemeIndex.point_in_work`), and what the host's
    next question takes up (a content word of the point not in the story, one of the story, or neither), counted
    where the text unit holds that question (at least :data:`MIN_FOLLOWED`)."""
    from slmgraph.query.theme_render import no_course

    out = ""
    if len(forward) >= MIN_FOLLOWED and not no_course(ix, (s["first"].doc_id for s in forward)):
        at = sorted(ix.point_in_work(s["first"].doc_id, s["first"].unit) for s in forward)
        mid = (at[(len(at) - 1) // 2] + at[len(at) // 2]) / 2
        part = "first third" if mid < 1 / 3 else "middle third" if mid < 2 / 3 else "last third"
        out += (f" The moves come at a median {round(100 * mid)} % of the way into a conversation (its "
                f"{part}).")
    followed = [s for s in forward if s["taken"] is not None]
    if len(followed) >= MIN_FOLLOWED:
        c = Counter(s["taken"] for s in followed)
        out += (f" Of the {len(followed)} moves the host's next question can be read after, it takes up the "
                f"point's subject in {c['point']}, goes back to the story's in {c['story']}, and turns to something "
                f"else in {c['']}: ")
        if c["point"] > max(c["story"], c[""]):
            out += f"so a move to {other_phrase} steers the conversation toward it."
        elif c["story"] > max(c["point"], c[""]):
            out += "so the conversation stays with the story, the point an aside."
        else:
            out += "so a move seldom sets the conversation's next subject."
    return out


def _times(n: int) -> str:
    return "once" if n == 1 else "twice" if n == 2 else f"{n} times"


def segue_answer(ix, question: str, embedder) -> tuple[str, list[dict], list[int]] | None:
    """``(answer text, points, cited unit numbers)`` for a question asking whether speakers move between their
    stories and another kind of talk (:func:`asks_segue`; see the module doc), or None when it asks no such
    thing, without an embedder, or when the corpus has no speaker turns with stories in them."""
    from slmgraph.query.theme_kinds import Quotes, work_title
    from slmgraph.query.theme_topics import _work

    sides = asks_segue(question)
    if sides is None or embedder is None:
        return None
    story_phrase, other_phrase = sides
    found, turns = segues(ix, story_phrase, other_phrase, embedder)
    works = list(dict.fromkeys(_work(d) for d in ix.docs))
    noun = "works" if any(d.work for d in ix.docs) else "documents"
    forward = [s for s in found if s["to_other"]]
    back = [s for s in found if not s["to_other"]]
    in_works = list(dict.fromkeys(_work(ix.doc_by_id[s["first"].doc_id]) for s in found))
    if not found:  # none found is no proof that none are made: the stories are answered as stories
        return None
    by = Counter(s["speaker"] for s in forward)
    linked = [s for s in forward if s["link"]]
    shared = Counter(w for s in linked for w in s["link"])
    lead = (f"Yes, in {len(in_works)} of the {len(works)} {noun}" if 2 * len(in_works) >= len(works) else
            f"Seldom: in {len(in_works)} of the {len(works)} {noun}")
    head = (f"{lead}. Within one reply, with no question between, guests move from a story of their own to "
            f"{other_phrase} {_times(len(forward))}"
            + ((f", by {next(iter(by))}" if len(by) == 1 else
                f", most often {_join([f'{p} ({n})' if n > 1 else p for p, n in by.most_common(4)])}") if by else "")
            + f", and from {other_phrase} back to a story {_times(len(back))}.")
    if forward:
        words = f" ({_join([_q(w) for w, _ in shared.most_common(3)])})" if shared else ""
        head += (f" In {len(linked)} of the {len(forward)} moves to {other_phrase}, the point picks up the story's "
                 f"subject{words}: there the story grounds the point in the guest's own experience"
                 if linked else f" In none of the {len(forward)} moves to {other_phrase} does the point pick up "
                 f"the story's subject" if len(forward) > 1 else
                 f" The one move to {other_phrase} does not pick up the story's subject")
        head += (f"; in the other {len(forward) - len(linked)}, the point changes subject." if linked and
                 len(linked) < len(forward) else ".")
    head += _impact(ix, forward, other_phrase)
    cites = Quotes(ix)
    parts = [head]
    best: dict[str, dict] = {}
    for s in found:  # the clearest segue of each work: to the other side, its point nearest the other phrase
        w = _work(ix.doc_by_id[s["first"].doc_id])
        key = (s["to_other"], bool(s["link"]), s["score"])
        if w not in best or key > (best[w]["to_other"], bool(best[w]["link"]), best[w]["score"]):
            best[w] = s
    shown = sorted(best.values(), key=lambda s: (-s["to_other"], -bool(s["link"]), -s["score"]))[:SHOWN]
    shown.sort(key=lambda s: works.index(_work(ix.doc_by_id[s["first"].doc_id])))
    for s in shown:
        w = _work(ix.doc_by_id[s["first"].doc_id])
        how = (f"from a story to {other_phrase}" if s["to_other"] else f"from {other_phrase} to a story")
        link = f", carrying {_join([_q(x) for x in s['link'][:2]])} across" if s["link"] else ""
        parts.append("\n".join([f"### {s['speaker']}, in {_q(work_title(ix, w))}: {how}{link}",
                                cites.line(s["first"]), cites.line(s["second"])]))
        cites.point(f"{s['speaker']}: {how}", [s["first"], s["second"]])
    return cites.answer(parts)
