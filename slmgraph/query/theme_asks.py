"""What a speaker asks, for a question about a transcript's interviewer ("What types of questions does Kevin
Scott commonly ask his guests?"), answered from the whole corpus without a model.

No community report holds the answer: it is spread over every work, one question at a time. So the answer is
built from the speaker's own questions: every sentence ending in a question mark that a transcript's turn gives
to the speaker (:func:`slmgraph.query.theme_model.speaker_of`), of at least :data:`MIN_WORDS` words (a "Really?"
asks nothing), a near-repeat within one document dropped (text units overlap). It states

* **how many** the speaker asks and in how many works;
* **their forms**: each question's opening, after fillers ("so", "like", "and"), read against a small table of
  English question openings (:data:`FORMS`): about the guest's past ("did you", "how did you"), their views ("do
  you think"), what they do ("do you", "how do you") or what if ("would you", "if you could"); else an other
  open question (a wh-word), an other yes-or-no question, or a statement asked back ("you grew up in Asia?");
* **their subjects**: the questions grouped by meaning (average-linkage clustering of their embeddings over
  cosine distance, cut at :data:`CLUSTER_DISTANCE`, as :mod:`slmgraph.query.theme_topics` groups phrases), each
  group of at least :data:`MIN_GROUP` questions labelled by the concept phrases its questions name, weighed by
  class-based TF-IDF with the group as the class (Grootendorst 2022); its examples come from distinct works;
* **their course** (:func:`_course`): where in a conversation each form and subject falls (the median of how far
  into its work each question is), so an answer can say that a conversation runs from the guest's past to their
  views; asked how guests are drawn out, the forms are named as the host's techniques in that order.
"""


from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from dataclasses import dataclass

from slmgraph.query.theme_model import PLEASANTRY
from slmgraph.query.theme_lead import _join, _q
from slmgraph.query.theme_topics import _work as work_of
from slmgraph.query.theme_works import _LABEL

#: A question about what a speaker asks.
_ASKS = re.compile(r"(?i)\b(questions?|ask(s|ed|ing)?|interview(s|ed|ing)?)\b")
#: A question naming "the host" rather than a speaker ("What questions does the host ask?").
_THE_HOST = re.compile(r"(?i)\bthe (co-?)?(host|interviewer|presenter)\b")
#: A question naming whose questions it asks about ("What questions does Margaret Okafor ask?").
_ASKED_BY = re.compile(r"\b(?:does|do|did) ((?:[A-Z][\w'-]+ ?){1,3}) ask")
#: A question about how a transcript's guests are drawn out ("What narrative techniques are used to encourage
#: guests to open up?"): the host's questions answer it.
_DRAWN = re.compile(r"(?i)\b(encourag\w*|prompt\w*|draws? out|drawn out|get(s|ting)? (the |their )?guests? to|"
                    r"open(s|ing)? up|interview(ing|er'?s?)? (style|techniques?|approach|methods?))\b")
_GUESTS = re.compile(r"(?i)\b(guests?|interviewees?)\b")
#: Words of a question's opening that ask nothing ("So, like, how did you ...").
_FILLERS = frozenset("so like and but well okay ok oh yeah now um uh right also then just".split())
#: Two-word fillers ("I mean", "you know").
_FILLER_PAIRS = frozenset({("i", "mean"), ("you", "know")})
#: The least words of a question worth quoting.
MIN_WORDS = 4
#: Question forms: (what the form asks, the openings that make it), checked in order.
FORMS = (
    ("their views", ("do you think", "what do you think", "how do you think", "do you feel", "how do you feel",
                     "do you believe", "would you say", "how do you see", "do you see", "what do you hope",
                     "what worries you", "what excites you", "what scares you", "do you worry", "are you worried",
                     "are you hopeful", "are you optimistic")),
    ("their past", ("did you", "were you", "was it", "was that", "how did you", "when did you", "what did you",
                    "where did you", "why did you", "who did you", "what was", "what were", "how was", "had you",
                    "have you always", "were your", "was your", "when was")),
    ("what if", ("would you", "if you could", "could you imagine", "what would", "how would", "if you had")),
    ("what they do", ("do you", "how do you", "what do you", "are you", "what are you", "how are you",
                      "is there", "are there", "what's your", "what is your", "have you")),
)
#: Cosine distance at which the questions' average-linkage tree is cut into subjects.
CLUSTER_DISTANCE = 0.6
#: Questions a subject needs.
MIN_GROUP = 3
#: Subjects the answer lists at most, and examples per subject.
MAX_SUBJECTS = 6
EXAMPLES = 3


@dataclass
class Asked:
    """One question: its text (speaker label dropped), unit number, document, position and form."""

    text: str
    source: int
    doc_id: str
    unit: int
    of: int
    form: str
    #: how far into its text unit the question is, 0 to 1
    at: float = 0.5


def speakers(ix) -> Counter:
    """``speaker label -> text units they speak in`` over the index."""
    out: Counter = Counter()
    for u in ix.all_units():
        out.update({x.strip() for x in _LABEL.findall(u.text)})
    return out


def about_asking(question: str) -> bool:
    """True when ``question`` may ask what a speaker asks (:data:`_ASKS`) or how guests are drawn out
    (:data:`_DRAWN`); no index is read."""
    return bool(_ASKS.search(question or "") or (_DRAWN.search(question or "") and _GUESTS.search(question)))


def drawn_out(question: str, ix) -> str:
    """The host (title case) whose questions answer ``question`` about how the guests are drawn out
    (:data:`_DRAWN`, naming guests and no speaker of the corpus): the speaker in at least
    :data:`slmgraph.query.theme_works.HOST_SHARE` of the works speaking in most units; "" otherwise."""
    if not (_DRAWN.search(question or "") and _GUESTS.search(question)):
        return ""
    words = set(re.findall(r"[a-z']+", question.casefold()))
    if any(set(label.casefold().split()) & words for label in speakers(ix)):
        return ""
    return _top_host(ix)


def asked_of(question: str, ix) -> str:
    """The speaker (title case, "Kevin Scott") whose questions ``question`` asks about: it speaks of questions or
    asking and names a speaker of the corpus (all of the label's words, or its last word of three letters or
    more), the one speaking in most units when several, or names "the host" (the host speaking in most units);
    "" otherwise."""
    if not _ASKS.search(question or ""):
        return ""
    words = set(re.findall(r"[a-z']+", question.casefold()))
    folded = question.casefold()
    for label, _ in speakers(ix).most_common():
        parts = label.casefold().split()
        if not (set(parts) <= words or (len(parts[-1]) >= 3 and parts[-1] in words)):
            continue
        # asked of the speaker ("Who asked Kevin Scott ...?"): not their own questions
        if re.search(r"\b(ask(s|ed|ing)?|interview(s|ed|ing)?)\s+(" + "|".join(map(re.escape, parts)) + r")\b", folded):
            return ""
        return " ".join(w.capitalize() for w in label.split())
    return _top_host(ix) if _THE_HOST.search(question) else ""


def _top_host(ix) -> str:
    """The corpus's host speaking in most units (title case), "" without hosts."""
    from slmgraph.query.theme_works import corpus_hosts

    said = speakers(ix)
    best = max(corpus_hosts(ix), key=lambda h: (said[h], h), default="")
    return " ".join(w.capitalize() for w in best.split())


#: Openings of the questions no form of :data:`FORMS` takes: other open questions, other yes-or-no questions;
#: any other opening is a statement asked back ("So, you grew up in Asia?"), checking what was said.
_WH = frozenset("what what's whats why how how's where when which who whom whose".split())
_AUX = frozenset("is isn't are aren't was wasn't were weren't do don't does doesn't did didn't can can't could "
                 "would will won't should shall has have had may might must".split())
#: A name a question opens on, addressing someone ("Priya, what did you want to be?").
_VOCATIVE = re.compile(r"^\s*([A-Z][\w'-]+(?: [A-Z][\w'-]+)?),\s+")
OPEN, YES_NO, CHECK = "other open questions", "other yes-or-no questions", "checks on what was just said"
#: Each of those forms said of one question.
_ONE = {OPEN: "an other open question", YES_NO: "an other yes-or-no question", CHECK: "a check on what was just said"}
#: Each form as a technique of drawing a guest out, named for an answer to a question about that.
_MOVES = {"their past": "starting from their own past", "their views": "asking for their views",
          "what if": "asking what they would do if", "what they do": "asking about what they do",
          CHECK: "following up on what they have just said", OPEN: "open questions",
          YES_NO: "yes-or-no questions"}
#: A technique whose questions come this far into a conversation (their median) is left for late in it.
LATE = 0.6


def form_of(question: str) -> str:
    """The form of ``question``: what its opening asks after fillers (:data:`FORMS`), else :data:`OPEN` (a
    wh-word), :data:`YES_NO` (an auxiliary verb) or :data:`CHECK` (a statement with a question mark)."""
    words = _opening(question)
    opening = " ".join(words[:5])
    for form, starts in FORMS:
        if any(opening == s or opening.startswith(s + " ") for s in starts):
            return form
    if words and (words[0] in _WH or _REQUEST.match(question)):
        return OPEN
    return YES_NO if words and words[0] in _AUX else CHECK


def _opening(question: str) -> list[str]:
    """The words of ``question``, case-folded, a name it opens on ("Priya, what did you ...") and fillers at its
    start dropped."""
    m = _VOCATIVE.match(question)
    if m and not {w.casefold() for w in m.group(1).split()} & (_FILLERS | _WH | _AUX):
        question = question[m.end():]
    words = re.findall(r"[a-z']+", question.casefold())
    while words and (words[0] in _FILLERS or tuple(words[:2]) in _FILLER_PAIRS):
        words = words[2:] if tuple(words[:2]) in _FILLER_PAIRS else words[1:]
    return words


def _opens(question: str, start: str) -> bool:
    return " ".join(_opening(question)).startswith(start + " ")


#: A request for an account, an open question without a question mark ("Tell us how it started, who turned up.").
_REQUEST = re.compile(r"(?i)^\W*(tell|talk|describe|walk) (us|me)\b")


def speaker_questions(ix, speaker: str, short: bool = False) -> list[Asked]:
    """Every question ``speaker`` asks (see the module doc), in corpus order, a near-repeat in the same document
    dropped; ``short``: questions under :data:`MIN_WORDS` words too ("And then?", a follow-up drawing a guest on),
    and requests for an account (:data:`_REQUEST`), open questions."""
    from slmgraph.query.extractive import _SPEAKER, prose_sentences
    from slmgraph.query.theme_model import _sentence_at, repeats, speaker_of, spoken

    out: list[Asked] = []
    for u in ix.all_units():
        for s in prose_sentences(u.text):
            asks = re.search(r"\?[\"'\u201d\u2019)]*$", s.strip()) or (short and _REQUEST.match(
                _SPEAKER.sub("", spoken(s))))
            if not asks or speaker_of(u.text, s) != speaker:
                continue
            body = _SPEAKER.sub("", spoken(s)).strip()
            # overlapping text units repeat a sentence within a document; a question asked again in another
            # work is asked again
            if len(re.findall(r"\w+", body)) < (1 if short else MIN_WORDS) or any(
                    a.doc_id == u.doc_id and repeats(body, a.text) for a in out[-20:]):
                continue
            d = ix.doc_by_id[u.doc_id]
            at = _sentence_at(u.text, body)
            out.append(Asked(body, u.number, u.doc_id, u.unit, d.n_units, form_of(body),
                             at / max(len(u.text), 1) if at >= 0 else 0.5))
    return out


def _course(ix, asked: list[Asked], groups: list, speaker: str, drawn: bool = False) -> str:
    """Where in a conversation the speaker's questions fall (:meth:`ThemeIndex.point_in_work`; the median of each
    form and subject of :data:`slmgraph.query.theme_render.PLACE_LEAST` questions or more), "" in a corpus whose
    works are single text units or when under two forms are placed. ``drawn``: the forms as techniques
    (:data:`_MOVES`), in the order a conversation takes them ("Read from Kevin Scott's 115 questions, in the order
    ..., the techniques are starting from their own past (26 questions, at 19 %), following up on what they have
    just said (46 questions, 40 % of all, at 45 %) ... and asking for their views late in a conversation (4
    questions, at 71 %)"); else
    the forms in the order they come, then the earliest and latest subjects, and, when questions about the past
    come in a conversation's first third and those about views or what if after its middle, that the
    conversations run from one to the other."""
    from slmgraph.query.theme_render import no_course, place_text, placed

    if no_course(ix, (a.doc_id for a in asked)):
        return ""
    order = [f for f, _ in FORMS] + [CHECK, OPEN, YES_NO]
    by_form = placed([(f, [ix.point_in_work(a.doc_id, a.unit, a.at) for a in asked if a.form == f]) for f in order])
    if len(by_form) < 2:
        return ""
    scale = "the median point of each, from a conversation's opening at 0 % to its end at 100 %"
    n = Counter(a.form for a in asked)
    by_form.sort(key=lambda fm: fm[1])
    if drawn:
        total = len(asked)
        moves = []
        for i, (f, m) in enumerate(by_form):
            move = _MOVES[f] if m < LATE or f in (OPEN, YES_NO) else f"{_MOVES[f]} late in a conversation"
            share = f", {round(100 * n[f] / total)} % of all" if n[f] >= total / 4 else ""
            moves.append(f"{move} ({n[f]} questions{share}, at {round(100 * m)} %)")
        text = (f"Read from {speaker}'s {total} questions, in the order a conversation takes them ({scale}), the "
                f"techniques are " + _join(moves))
    else:
        text = f"Where they fall in a conversation ({scale}): " + place_text(
            [(f"those about {f}" if f in dict(FORMS) else f, m) for f, m in by_form])
    subj = placed([(label, [ix.point_in_work(a.doc_id, a.unit, a.at) for a in qs]) for label, qs in groups])
    if len(subj) >= 2:
        subj.sort(key=lambda lm: lm[1])
        text += (f"; of the subjects, {subj[0][0]} comes first ({round(100 * subj[0][1])} %) and {subj[-1][0]} last "
                 f"({round(100 * subj[-1][1])} %)")
    if drawn:
        return text + "."
    at = dict(by_form)
    late = [f for f in ("their views", "what if") if at.get(f, 0.0) > 0.5]
    if at.get("their past", 1.0) < 1 / 3 and late:
        text += f". So a conversation runs from the guest's past to {late[0]}"
    return text + "."


#: Replies a technique needs, read whole, before the answer gives their median length.
MIN_REPLIES = 3
#: A technique whose median reply is this many times another's draws out more than it.
DRAWS_MORE = 1.5
#: The least words of a reply's sentence shown as its opening ("No." and "Right, right." say nothing of it).
REPLY_OPENING = 8


@dataclass
class Reply:
    """The turn answering one question: who gives it, its length in words, its first sentence, and whether it ends
    within the text unit (else its length is only a floor)."""

    speaker: str
    words: int
    opening: str
    whole: bool
    start: int = 0
    asked_at: int = 0


def reply_to(unit_text: str, question: str, asker: str) -> Reply | None:
    """The next speaker's turn after ``question`` in ``unit_text``
    (:func:`slmgraph.query.theme_model.speaker_of`'s turns), when another speaker than ``asker`` takes it; None when
    the question is not found, the unit ends before a reply, or the asker speaks next."""
    from slmgraph.query.extractive import _SPEAKER, prose_sentences
    from slmgraph.query.theme_model import _sentence_at, _shown_label, _turns

    at = _sentence_at(unit_text, question)
    if at < 0:
        return None
    after = [(start, label) for start, label in _turns(unit_text) if start > at]
    if not after or _shown_label(after[0][1]).casefold() == asker.casefold():
        return None
    start, label = after[0]
    end = after[1][0] if len(after) > 1 else len(unit_text)
    body = _SPEAKER.sub("", unit_text[start:end].strip())
    said = [x.strip() for x in prose_sentences(body)]
    # "No." or "Great question." opens many a reply that goes on to say a great deal
    opening = next((x for x in said if len(x.split()) >= REPLY_OPENING and not PLEASANTRY.search(x)), "")
    return Reply(_shown_label(label), len(body.split()), opening, len(after) > 1, start, at)


def _replies(ix, asked: list[Asked], speaker: str) -> dict[int, Reply]:
    """``index into asked -> Reply`` for each question a guest's turn answers in the same text unit: of several
    questions in one turn, the reply is to the last."""
    units = ix.unit_by_number()
    last: dict[tuple[int, int], tuple[int, Reply]] = {}
    for i, a in enumerate(asked):
        u = units.get(a.source)
        r = reply_to(u.text, a.text, speaker) if u is not None else None
        if r is not None and ((a.source, r.start) not in last or last[a.source, r.start][1].asked_at < r.asked_at):
            last[a.source, r.start] = (i, r)
    return dict(last.values())


def reply_lengths(asked: list[Asked], replies: dict[int, Reply]) -> dict[str, tuple[int, int]]:
    """``form -> (median words of the guests' whole replies, replies read)`` for each form with at least
    :data:`MIN_REPLIES` replies that end within their text unit: how much each kind of question draws out."""
    got: dict[str, list[int]] = {}
    for i, r in replies.items():
        if r.whole:
            got.setdefault(asked[i].form, []).append(r.words)
    return {f: (round(statistics.median(ws)), len(ws)) for f, ws in got.items() if len(ws) >= MIN_REPLIES}


def _median_point(ix, qs: list[Asked]) -> float:
    return statistics.median(ix.point_in_work(a.doc_id, a.unit, a.at) for a in qs)


def _by_technique(ix, asked: list[Asked]) -> list[tuple[str, list[Asked]]]:
    """``[(form, questions)]`` of the forms asked at least :data:`MIN_GROUP` times, in the order a conversation takes
    them (their questions' median point in their works)."""
    by: dict[str, list[Asked]] = {}
    for a in asked:
        by.setdefault(a.form, []).append(a)
    order = [f for f, _ in FORMS] + [CHECK, OPEN, YES_NO]
    kept = [(f, qs) for f, qs in by.items() if len(qs) >= MIN_GROUP]
    return sorted(kept, key=lambda fq: (_median_point(ix, fq[1]), order.index(fq[0])))


def _drawing(ix, qs: list[Asked], asked: list[Asked], replies: dict[int, Reply]) -> list[Asked]:
    """At most :data:`EXAMPLES` of ``qs`` from distinct works, no two alike: those that drew the longest replies
    first (a technique at work), then the rest in corpus order."""
    from slmgraph.query.theme_model import repeats

    at = {id(a): i for i, a in enumerate(asked)}
    if qs and qs[0].form == CHECK:  # a check is short ("And in what way?"): the shortest show it
        ranked = sorted(qs, key=lambda a: (at[id(a)] not in replies, len(a.text.split())))
    else:
        ranked = sorted(qs, key=lambda a: -(replies[at[id(a)]].words if at[id(a)] in replies else 0))
    picked, used = [], set()
    for a in ranked:
        if _work(ix, a.doc_id) not in used and not any(repeats(a.text, b.text) for b in picked):
            picked.append(a)
            used.add(_work(ix, a.doc_id))
        if len(picked) == EXAMPLES:
            break
    return picked


def _count(n: int, noun: str) -> str:
    """"1 work", "3 works" (``noun`` plural)."""
    return f"{n} {noun if n != 1 else noun[:-1]}"


def _work(ix, doc_id: str) -> str:
    return work_of(ix.doc_by_id[doc_id])


def subjects(ix, asked: list[Asked], embedder) -> list[tuple[str, list[Asked]]]:
    """``[(label, questions)]``: the questions grouped by meaning and labelled (see the module doc), the largest
    group first; [] without an embedder or with fewer than :data:`MIN_GROUP` questions."""
    from scipy.cluster.hierarchy import fcluster, linkage

    from slmgraph.query.extractive import _embed
    from slmgraph.query.theme_labels import _names, head_compounds, label_worthy, phrase_pattern
    from slmgraph.query.theme_model import word_stem

    if embedder is None or len(asked) < MIN_GROUP:
        return []
    v = _embed([a.text for a in asked], embedder)
    groups = fcluster(linkage(v, method="average", metric="cosine"), t=CLUSTER_DISTANCE, criterion="distance")
    members: dict[int, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(int(g), []).append(i)
    # the concept phrases the questions' units hold, found in the questions themselves
    by_unit = ix.unit_phrases(sorted({u.chunk_id for u in ix.all_units() if u.number in {a.source for a in asked}}))
    names = {x.casefold() for x in _names(ix)}
    number_of = {u.chunk_id: u.number for u in ix.all_units()}
    phrases_of: dict[int, set] = {}
    for chunk, held in by_unit.items():
        for key, surface in held:
            # a phrase and its head compounds ("term artificial intelligence" -> "artificial intelligence")
            for _, shown in head_compounds(key, surface):
                if label_worthy(shown) and shown.casefold() not in names:
                    phrases_of.setdefault(number_of.get(chunk), set()).add(shown)
    said: list[set] = []
    for a in asked:
        said.append({p.casefold() for p in phrases_of.get(a.source, ()) if phrase_pattern(p).search(a.text)})
    df = Counter(p for s in said for p in s)
    out = []
    for ids in members.values():
        if len(ids) < MIN_GROUP:
            continue
        tf = Counter(p for i in ids for p in said[i])
        # a compound as frequent as its head names the subject more closely ("artificial intelligence")
        ranked = sorted(tf, key=lambda p: (-tf[p] * math.log(1 + len(asked) / df[p]), -len(p.split()), p))
        label, stems = [], set()
        for p in ranked:
            w = {word_stem(x) for x in p.split()}
            if tf[p] >= 2 and not w & stems:
                label.append(p)
                stems |= w
            if len(label) == 2:
                break
        if not label:
            continue
        out.append((" and ".join(label), [asked[i] for i in ids]))
    out.sort(key=lambda g: (-len(g[1]), g[0]))
    return out[:MAX_SUBJECTS]


def asks_answer(ix, question: str, embedder) -> tuple[str, list[dict], list[int]] | None:
    """``(answer text, points, cited unit numbers)`` for a question about what a speaker asks (:func:`asked_of`),
    or None when it is not one; a speaker who asks none gets one sentence saying so, citing the first unit they
    speak in, and a corpus without speaker labels one sentence saying that it has none."""
    from slmgraph.query.theme_model import repeats

    speaker = asked_of(question, ix)
    drawn = "" if speaker else drawn_out(question, ix)
    speaker = speaker or drawn
    if not speaker:
        m = _ASKED_BY.search(question or "")
        if m and not speakers(ix):  # no transcript: who asks what cannot be read
            who = m.group(1).strip()
            return (f"The documents have no speaker labels (a line opening on a name and a colon, "
                    f"\"{who.upper()}: ...\"), so the questions {who} asks cannot be told from anyone else's.",
                    [], [])
        return None
    # drawing a guest out, "And then?" is a technique of its own
    asked = speaker_questions(ix, speaker, short=bool(drawn))
    n_works = len({_work(ix, d.doc_id) for d in ix.docs})
    noun = "works" if any(d.work for d in ix.docs) else "documents"
    if not asked:  # a guest, or a speaker who only answers: said so, not answered with their themes
        label = speaker.casefold()
        heard = [u for u in ix.all_units() if any(x.strip().casefold() == label for x in _LABEL.findall(u.text))]
        spoke = {_work(ix, u.doc_id) for u in heard}
        cite = f" [Sources: {heard[0].number}]" if heard else ""
        return (f"{speaker} asks no question (of {MIN_WORDS} words or more) in the corpus; they speak in "
                f"{len(spoke)} of its {n_works} {noun}.{cite}", [], [heard[0].number] if heard else [])
    works = {_work(ix, a.doc_id) for a in asked}
    where = f"all {n_works} {noun}" if len(works) == n_works else f"{len(works)} of the {n_works} {noun}"
    text = f"{speaker} asks {len(asked)} question{'s' if len(asked) != 1 else ''} in {where}"
    if len(works) > 1:
        text += f", about {round(len(asked) / len(works))} in each"
    forms = Counter(a.form for a in asked)
    shown = []
    for form, c in sorted(forms.items(), key=lambda kv: (-kv[1], kv[0])):
        starts = dict(FORMS).get(form)
        if starts:
            example = next((s for s in starts if any(form_of(s + " x") == form and _opens(a.text, s)
                                                     for a in asked if a.form == form)), starts[0])
            shown.append(f"{c} ask{'s' if c == 1 else ''} about {form} ({_q(example + ' …')})")
        else:
            first = min((a.text for a in asked if a.form == form), key=lambda t: (len(t.split()), t))
            shown.append(f"{c} {'are' if c != 1 else 'is'} {form if c != 1 else _ONE[form]} ({_q(first)})")
    if not drawn:  # a drawn-out answer names the forms as techniques, with these counts
        text += ". By their form, " + _join(shown)
    groups = subjects(ix, asked, embedder)
    if groups:
        text += (". Grouped by meaning, the largest groups ask about "
                 + _join([f"{label} ({len(qs)} questions, in {_count(len({_work(ix, a.doc_id) for a in qs}), noun)})"
                          for label, qs in groups]))
    course = _course(ix, asked, groups, speaker, drawn=bool(drawn))
    replies = _replies(ix, asked, speaker) if drawn else {}
    lengths = reply_lengths(asked, replies)
    if drawn:  # the question asks how the guests are drawn out: by the host's questions, in a conversation's order
        drew = ""
        if len(lengths) >= 2:  # how much each technique draws out: the length of the reply it gets
            ranked = sorted(lengths.items(), key=lambda kv: (-kv[1][0], kv[0]))
            read = sum(k for _, k in lengths.values())
            most, least = ranked[0], ranked[-1]
            drew = (f"How much each draws out, by the median length of the guest's reply ({read} replies read whole): "
                    + _join([f"{_MOVES[f]} {w} words" for f, (w, _) in ranked])
                    + (f"; so guests say most after {_MOVES[most[0]]} and least after {_MOVES[least[0]]}."
                       if most[1][0] >= DRAWS_MORE * max(least[1][0], 1) else "; so each draws about as much."))
        text = " ".join(x for x in ("The guests are drawn out by the host's questions.", course, drew, text) if x)
    elif course:
        text += ". " + course.rstrip(".")
    parts = [text + "."]
    points: list[dict] = []
    cited: list[int] = []

    def line(a: Asked) -> str:
        d = ix.doc_by_id[a.doc_id]
        at = d.name if a.of == 1 else f"{d.name}, unit {a.unit} of {a.of}"
        if a.source not in cited:
            cited.append(a.source)
        return f"- *{at}*: {a.text} [Sources: {a.source}]"

    if drawn:  # one section per technique, in a conversation's order, each question shown with the reply it drew
        groups = []
        place = {id(a): j for j, a in enumerate(asked)}
        for i, (form, qs) in enumerate(_by_technique(ix, asked), start=1):
            picked = _drawing(ix, qs, asked, replies)
            where = round(100 * _median_point(ix, qs))
            head = (f"{len(qs)} of {speaker}'s {len(asked)} questions ({round(100 * len(qs) / len(asked))} %), at a "
                    f"median {where} % of the way into a conversation")
            if form in lengths:
                w, k = lengths[form]
                head += f"; the guests' replies run a median {w} words ({k} read whole)"
            lines = [f"### {i}. {_MOVES[form]}", head + "."]
            for a in picked:
                lines.append(line(a))
                r = replies.get(place[id(a)])
                if r is not None and r.opening:
                    size = f"{r.words} words" if r.whole else f"{r.words} words or more"
                    lines.append(f"  - {r.speaker} replies ({size}): {_q(r.opening)}")
            parts.append("\n".join(lines))
            points.append({"topic": _MOVES[form], "text": " ".join(a.text for a in picked), "coverage": {},
                           "reports": [], "sources": [a.source for a in picked],
                           "documents": [{"doc_id": a.doc_id, "document": ix.doc_by_id[a.doc_id].name,
                                          "path": ix.doc_by_id[a.doc_id].path} for a in picked]})
    for i, (label, qs) in enumerate(groups, start=1):
        picked, used = [], set()
        for a in qs:  # examples from distinct works, no two alike
            if _work(ix, a.doc_id) not in used and not any(repeats(a.text, b.text) for b in picked):
                picked.append(a)
                used.add(_work(ix, a.doc_id))
            if len(picked) == EXAMPLES:
                break
        lines = [f"### {i}. {label}", f"{len(qs)} of {speaker}'s questions ask about {label}."]
        lines += [line(a) for a in picked]
        parts.append("\n".join(lines))
        points.append({"topic": label, "text": " ".join(a.text for a in picked), "coverage": {},
                       "reports": [], "sources": [a.source for a in picked],
                       "documents": [{"doc_id": a.doc_id, "document": ix.doc_by_id[a.doc_id].name,
                                      "path": ix.doc_by_id[a.doc_id].path} for a in picked]})
    if not groups and not drawn:  # no subject recurs: examples of each form
        for form, _ in FORMS:
            qs = [a for a in asked if a.form == form][:EXAMPLES]
            if qs:
                parts.append("\n".join([f"### {_q(form)}"] + [line(a) for a in qs]))
    docs = {}
    for a in asked:
        if a.source in cited and a.source not in docs:
            d = ix.doc_by_id[a.doc_id]
            docs[a.source] = d.name if a.of == 1 else f"{d.name}, unit {a.unit} of {a.of}"
    parts.append("Documents cited:\n" + "\n".join(f"- [{n}] {docs[n]}" for n in cited))
    parts.append(f"Sources: text units {', '.join(map(str, cited))}.")
    return "\n\n".join(parts), points, cited
