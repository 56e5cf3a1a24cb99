"""How a corpus's speakers view something ("How do guests generally perceive the impact of privacy laws on
technology development?", "What are the guests' views on remote work?"), answered without a model.

A question asking for the speakers' views of a subject asks what each of them says of it, for and against. A
community report groups what is said of a subject with everything near it, and quotes whatever is nearest the
question's words. So, in a corpus with speaker labels, the answer reads the speakers' own sentences naming the
subject:

* **the subject** (:func:`slmgraph.query.theme_mentions.asked_terms`): a name of several words the corpus holds,
  else a phrase the corpus holds as a concept, else the question's rarest topic word with the topic words the
  question writes in a row with it ("privacy laws"), when enough sentences name them all; a word common to
  many subjects is never the subject alone;
* **the sentences**: every sentence naming a term, as
  :func:`slmgraph.query.theme_kinds.guest_sentences` reads them (the hosts' own left out unless the question
  names them; whole statements only);
* **the stance**, by the cue table of :data:`slmgraph.query.theme_kinds.KINDS` and words taking a side: a sentence
  holding a cue of worry (a fear, a risk, harm, caution) or objection ("against", "a mistake") voices a concern or
  objection; one holding a cue of hope (a promise, an opportunity, "could help") or support ("I support it", "in
  favour") support, a hope or a benefit; the stronger wins; the rest are other views;
* **the quotes**: within each stance, by cosine with the question plus :data:`OPINION_WEIGHT` for a marked
  opinion ("I think", "I believe", "should"), less :func:`slmgraph.query.theme_model.statement_penalty`; the best
  :data:`EXAMPLES` from distinct works.

The answer states how many sentences name the subject, by whom, in how many works, and how they divide by
stance; then one section per stance, each opening with its count, works, speakers and shared phrases, the
unmarked views, when many, split by what they speak of (:func:`slmgraph.query.theme_asks.subjects`: grouped by
meaning, labelled by the concept phrases they name).
"""


from __future__ import annotations

import re

from slmgraph.query.theme_lead import _q
from slmgraph.query.theme_render import _join

#: A question asking how speakers view, perceive or feel about something.
_VIEWS = re.compile(r"(?i)\b(perceiv\w*|perceptions?|views?|viewpoints?|opinions?|perspectives?|attitudes?|stances?|"
                    r"(feel|think|thoughts) (about|on|of)|regard)\b")
#: The words of a question asking for views: never its subject ("How do guests feel about ...?").
_VIEW_WORDS = frozenset("""perceive perceives perceived perception perceptions view views viewpoint viewpoints
opinion opinions perspective perspectives attitude attitudes stance stances feel feels felt think thinks thought
thoughts regard regards""".split())
#: Words naming the people whose views are asked.
_PEOPLE = re.compile(r"(?i)\b(guests?|speakers?|interviewees?|participants?|panell?ists?|leaders?|experts?|founders?|"
                     r"executives?|ceos?|people|they|members|residents|authors?|scientists?|engineers?|"
                     r"researchers?|witnesses|callers|contributors)\b")
#: A marked opinion: the speaker says it is their view, or what ought to be.
_OPINION = re.compile(r"(?i)\b(i think|i believe|i feel|in my (view|opinion)|to me|i'm (convinced|skeptical|not sure)|"
                      r"should|shouldn't|ought to|need to|have to|must)\b")
#: What a marked opinion adds to a sentence's cosine with the question.
OPINION_WEIGHT = 0.05
#: The least sentences naming the subject, and the works they come from, before the answer is given this way.
MIN_FOUND = 3
MIN_WORKS = 2
#: Quotes per stance; twice as many, at most two from a work, when the sentences hold one stance only.
EXAMPLES = 3
#: Unmarked views this many or more are grouped by meaning (:func:`slmgraph.query.theme_asks.subjects`), the
#: largest SUBJECTS groups shown.
SPLIT_OTHER = 6
SUBJECTS = 3
#: The stances, in the answer's order: ``(label, the cue kind of theme_kinds.KINDS marking it)``.
STANCES = (("concerns and objections", "worries"), ("support, hopes and benefits", "hopes"), ("other views", ""))
#: Words taking a side: against ("I oppose it", "a mistake") and for ("I support it", "nothing but upside").
_AGAINST = re.compile(r"(?i)\b(against|oppos\w*|object(ed|ion)?|i (don't|do not|won't|will not) (want|support|back)|"
                      r"(a|big|huge) mistake|bad idea|downsides?|won't work|unfair|too (far|much|expensive|costly))\b")
_FOR = re.compile(r"(?i)\b(i (fully |strongly |really )?(support|back|welcome)|in favou?r|i'm (all )?for|i am (all )?for|"
                  r"(good|great|best) (news|thing|idea)|upsides?|worth it|a (real )?benefit)\b")
#: What a word taking a side weighs, as a cue that alone marks the side.
SIDE_WEIGHT = 2.0


def asks_views(question: str) -> bool:
    """True when ``question`` asks how speakers view something: a word asking for views (:data:`_VIEWS`) and one
    naming people (:data:`_PEOPLE`); "What is the view from the lighthouse?" asks for none."""
    return bool(_VIEWS.search(question or "") and _PEOPLE.search(question or ""))


def stance_of(sentence: str) -> str:
    """The stance label (:data:`STANCES`) of ``sentence``: the side weighing most in it -- the cues of its kind
    (:data:`slmgraph.query.theme_kinds.KINDS`) plus :data:`SIDE_WEIGHT` for a word taking that side
    (:data:`_AGAINST`, :data:`_FOR`) -- against first on a tie; "other views" without a cue of either."""
    from slmgraph.query.theme_kinds import cue_weight

    side = {"worries": _AGAINST, "hopes": _FOR}
    weights = [(cue_weight(sentence, kind) + (SIDE_WEIGHT if side[kind].search(sentence) else 0.0), -i, label)
               for i, (label, kind) in enumerate(STANCES) if kind]
    w, _, label = max(weights)
    return label if w > 0 else STANCES[-1][0]


def _topic_terms(question: str, ix) -> list[str]:
    """The topic words of ``question`` (:func:`slmgraph.query.theme_kinds.topic_of`, less the words naming who
    speaks and asking for views) that some text unit holds, as the question writes them, the rarest first."""
    from slmgraph.query.theme_kinds import _FRAME, topic_of, unit_counts
    from slmgraph.query.theme_model import word_stem

    frame = {word_stem(w) for w in _FRAME | _VIEW_WORDS}
    topic = topic_of(question, ix) - frame
    held = unit_counts(ix, topic)
    surface = {word_stem(w.casefold()): w for w in re.findall(r"[^\W_]+", question)}
    return [surface.get(w, w) for w in sorted((w for w in topic if held[w]), key=lambda w: (held[w], w))]


def _unheld(question: str, ix) -> list[str]:
    """The question's topic words (:func:`slmgraph.query.theme_model.question_words`, less the words naming who
    speaks or asking for views) that no text unit holds, as the question writes them ("wind farm" of a corpus
    about a harbour: ["farm"]); [] when the corpus names them all."""
    from slmgraph.query.theme_kinds import _FRAME, unit_counts
    from slmgraph.query.theme_model import question_words, word_stem

    asked = question_words(question) - {word_stem(w) for w in _FRAME | _VIEW_WORDS}
    held = unit_counts(ix, asked)
    return [w for w in dict.fromkeys(re.findall(r"[^\W_]+", question))
            if word_stem(w.casefold()) in asked and not held[word_stem(w.casefold())]]


def _never_named(words: list[str], ix) -> str:
    """The answer for a subject the corpus never names: which words no document holds, and the corpus's nearest
    word to each where one is close (a misspelling: "Zoen" -> "zone")."""
    import difflib

    vocab = sorted({w for u in ix.all_units() for w in re.findall(r"[^\W\d_]{3,}", u.text.casefold())})
    near = []
    for w in words:
        f = w.casefold()
        # two letters swapped ("Zoen"), else a close spelling of a longer word; short words are near too many
        close = [v for v in vocab if len(v) == len(f) and sorted(v) == sorted(f)
                 and sum(a != b for a, b in zip(v, f)) == 2] or (
            [v for v in difflib.get_close_matches(f, vocab, n=1, cutoff=0.85) if abs(len(v) - len(f)) <= 1]
            if len(f) >= 5 else [])
        if close:
            near.append(f"{_q(w)} -> {_q(close[0])}")
    text = (f"No text of the corpus names {_join([_q(w) for w in words], last=' or ')}, so no speaker's view of it "
            f"can be given.")
    if near:
        text += f" Did you mean: {', '.join(near)}?"
    return text


def _subject_sentences(ix, question: str, terms: list[str]) -> tuple[list, list[str], bool]:
    """``(sentences, terms, every)``: the speakers' whole sentences naming the subject, the terms they name, and
    whether each names every term. The
    rarest term and the terms the question writes in a row with it ("privacy laws") are one subject: the
    sentences naming them all, when at
    least :data:`MIN_FOUND`; else those naming the rarest term (``terms[0]``), when at least MIN_FOUND: a word
    common to many subjects ("impact", "laws" of physics) is never the subject alone. ([], terms, False) without
    enough."""
    from slmgraph.query.theme_kinds import guest_sentences
    from slmgraph.query.theme_mentions import _matcher, other_forms

    if not terms:
        return [], terms, False
    words = [w.casefold() for w in re.findall(r"[^\W_]+", question)]
    at = {words.index(t.casefold()): t for t in terms if " " not in t and t.casefold() in words}
    run: list[str] = []
    if terms[0] in at.values():  # the terms written in a row with the rarest
        i = j = words.index(terms[0].casefold())
        while i - 1 in at:
            i -= 1
        while j + 1 in at:
            j += 1
        run = [at[k] for k in range(i, j + 1)] if j > i else []
    tries = ([run] if run else []) + [terms[:1]]
    for want in tries:
        match = [_matcher(t, also=other_forms(t, ix)) for t in want]
        said = guest_sentences(ix, question, lambda body, prompt="": (1.0, "") if all(m(body) for m in match)
                               else (0.0, ""), whole=True)
        if len(said) >= MIN_FOUND:
            return said, want, len(want) > 1
    return [], terms, False


def views_answer(ix, question: str, embedder) -> tuple[str, list[dict], list[int]] | None:
    """``(answer text, points, cited unit numbers)`` for a question asking how speakers view something
    (:func:`asks_views`; see the module doc) -- one sentence, citing nothing, when too few sentences name the
    subject and a topic word of the question is named by no text unit (with the nearest word of the corpus to a misspelt one) -- or None when it asks nothing of the kind, without an embedder, in a
    corpus without speaker labels, or when fewer than :data:`MIN_FOUND` sentences in :data:`MIN_WORKS` works name
    the subject (the answer by theme is given)."""
    from slmgraph.query.extractive import _embed
    from slmgraph.query.theme_asks import subjects
    from slmgraph.query.theme_kinds import Quotes, _by, _group_line, _shown
    from slmgraph.query.theme_mentions import asked_terms
    from slmgraph.query.theme_model import statement_penalty
    from slmgraph.query.theme_topics import _work

    if not asks_views(question) or embedder is None:
        return None
    terms = asked_terms(question, ix)
    if not any(" " in t for t in terms):  # no name or phrase the corpus holds: its topic words, the rarest first
        terms = _topic_terms(question, ix)
    said, terms, every = _subject_sentences(ix, question, terms)
    unheld = _unheld(question, ix) if len(said) < MIN_FOUND else []
    if unheld:  # what the corpus never names has no views to report: say so, not quote what is near it
        return _never_named(unheld, ix), [], []
    works = {_work(ix.doc_by_id[s.doc_id]) for s in said}
    # without speaker labels there are no speakers' views to set apart: the answer by theme is given
    if len(said) < MIN_FOUND or len(works) < MIN_WORKS or not any(s.speaker for s in said):
        return None
    v = _embed([s.text for s in said] + [question], embedder)
    for s, row in zip(said, v[:-1]):
        s.score = (float(row @ v[-1]) + (OPINION_WEIGHT if _OPINION.search(s.text) else 0.0)
                   - statement_penalty(s, ix))
        s.kind = stance_of(s.text)
    n_works = len({_work(d) for d in ix.docs})
    noun = "works" if any(d.work for d in ix.docs) else "documents"
    groups = [(label, sorted((s for s in said if s.kind == label), key=lambda s: -s.score)) for label, _ in STANCES]
    groups = [(label, items) for label, items in groups if items]
    where = f"all {n_works} {noun}" if len(works) == n_works else f"{len(works)} of the {n_works} {noun}"
    n = len(said)
    named = _join([_q(t) for t in terms], last=" and " if every else " or ")
    head = (f"{n} of the speakers' sentences name{'s' if n == 1 else ''} {named}, "
            f"in {where}, by {_by(said) or 'unnamed speakers'}")
    split = [f"{len(items)} {'voice' if len(items) != 1 else 'voices'} {label}" if label != STANCES[-1][0]
             else f"{len(items)} {'hold' if len(items) != 1 else 'holds'} {'other views' if len(items) != 1 else 'another view'}"
             for label, items in groups]
    head += ". By their cue words, " + _join(split) + "."
    # the unmarked views, most of them, by what they speak of
    other = STANCES[-1][0]
    split_other = []
    if groups and groups[-1][0] == other and len(groups[-1][1]) >= SPLIT_OTHER:
        split_other = subjects(ix, groups[-1][1], embedder)[:SUBJECTS]
        if split_other:
            head += " The other views speak most of " + _join(
                [f"{label} ({len(items)})" for label, items in split_other]) + "."
    cites = Quotes(ix)
    parts = [head]
    avoid = " ".join(terms)
    for label, items in groups:
        if label == other and split_other:
            for sub, mine in split_other:
                mine = sorted(mine, key=lambda s: -s.score)
                shown = _shown(ix, mine)
                parts.append("\n".join([f"### Other views: {sub}", _group_line(ix, mine, noun, avoid)]
                                       + [cites.line(s) for s in shown]))
                cites.point(f"{other}: {sub}", shown)
            continue
        shown = _shown(ix, items, len(groups) == 1)
        parts.append("\n".join([f"### {label[0].upper() + label[1:]}", _group_line(ix, items, noun, avoid)]
                               + [cites.line(s) for s in shown]))
        cites.point(label, shown)
    return cites.answer(parts)
