"""``--method auto``: route a question to global (or lazy) or local search.

A cheap rule, no model call: a question that contains one of the phrases in
``prompts/auto_global.txt`` (themes, trends, "across", "overall", ...) asks
about the whole corpus and goes to global search -- to lazy search on an
index built with ``--no-reports``, which has no reports to map over; so does
a question about change over time (:func:`asks_change`), and one asking for a side of the corpus
(:func:`aspect_asked`: "What lessons were learned?") that names no person, place or organisation; any other
question is taken to be about named things and goes to local search.
DRIFT is not chosen automatically (see :func:`route`). Users tailor the
phrases by copying the file into their ``--prompts`` folder.
"""

from __future__ import annotations

import re
from typing import Callable

from slmgraph.names.forms import content_words, number_word
from slmgraph.config.prompting import Prompts
from slmgraph.query.theme_model import is_temporal

#: A question asking how something changed, besides :func:`slmgraph.query.theme_model.is_temporal`'s phrases
#: ("How did the nurse staffing situation change during 2025?", "How has the board's role shifted?"); a verb, not
#: its noun ("How do guests perceive ... technology development?" asks no change).
_HOW_CHANGED = re.compile(r"(?i)\bhow (did|has|have|had|do|does|was|were|is|are)\b[^?]*?"
                          r"\b(chang(e|es|ed|ing)|evolv(e|es|ed|ing)|develop(s|ed|ing)?|shift(s|ed|ing)?|"
                          r"progress(es|ed|ing)?|grow(s|n|ing)?|grew|declin(e|es|ed|ing)|improv(e|es|ed|ing)|"
                          r"worsen(s|ed|ing)?)\b"
                          r"\s*(\?|$|\b(during|over|since|in|after|before|between|through|throughout|across|from)\b)")


def asks_change(question: str) -> bool:
    """True when ``question`` asks how something changed over time: :func:`slmgraph.query.theme_model.is_temporal`
    ("evolved", "over the year") or "how did/has X change/evolve/shift" with no object ("... change during
    2025?"; "How did Linda Cho change the budget?" asks about an act): a question about the whole period."""
    return is_temporal(question) or bool(_HOW_CHANGED.search(question or ""))


def global_phrases(prompts: Prompts) -> list[str]:
    """The routing phrases (lower case), comments and blank lines skipped."""
    return [ln.strip().lower() for ln in prompts.text("auto_global").splitlines()
            if ln.strip() and not ln.lstrip().startswith("#")]


#: Words that name the corpus itself or frame a question about all of it ("the main themes of this
#: story", "what do these podcast episodes discuss overall", "across these weekly team notes", "over the
#: quarter": the period and the group a series of notes or minutes covers): they are not a topic of their own.
CORPUS_WORDS = frozenset("""
story stories document documents text texts corpus collection book books novel chapter chapters podcast
podcasts episode episodes transcript transcripts conversation conversations interview interviews article
articles file files data dataset material materials record records source sources content contents writing
writings whole entire everything anything something main key important biggest major central recurring
common overall general big picture ideas idea points point themes theme topics topic things thing recur recurs
discuss discussed discusses discussion talk talked talks talking say says said mention mentioned cover
covered covers raise raised explore explored describe described speakers speaker people guests guest
give tell list explain show provide brief short summary
newsletter newsletters letter letters minutes meeting meetings report reports memo memos email emails paper papers
note notes post posts call calls
weekly monthly daily yearly annual quarterly week weeks month months quarter quarters year years day days
team teams session sessions entry entries log logs journal journals diary update updates
series season seasons shows programme programmes broadcast broadcasts lecture lectures essay essays speech speeches
volume volumes archive archives
""".split())


def corpus_wide_phrase(question: str, prompts: Prompts) -> str | None:
    """The routing phrase of a question about the whole corpus and nothing narrower, or None.

    ``question`` must contain a routing phrase (``prompts/auto_global.txt``) and name no topic of its
    own: every content word (:func:`slmgraph.names.forms.content_words`) is part of a routing phrase, a
    word of :data:`CORPUS_WORDS` or a number word (:func:`number_word`). Such a question ("What are the main
    themes of this story?") has an answer in any non-empty index, so global, DRIFT, lazy, basic and local
    search do not refuse it by the helpfulness floor (which exists to refuse questions the corpus cannot
    answer). A question with a topic ("the main themes of quantum chromodynamics", "knitting patterns") is
    judged by the floor like any other: the phrase alone let off-topic questions through.
    """
    hit = _routing_phrase(question, prompts)
    if hit is None:
        return None
    return None if _question_topic(question, prompts) else hit


def _routing_phrase(question: str, prompts: Prompts) -> str | None:
    """The first routing phrase (``prompts/auto_global.txt``) ``question`` holds, or None."""
    q = question.lower()
    return next((ph for ph in global_phrases(prompts) if ph in q), None)


def route(question: str, prompts: Prompts, reports: bool = True,
          named: Callable[[str], list[str]] | None = None) -> tuple[str, str]:
    """``(method, reason)``: ``global`` (``lazy`` when the index has no community
    reports, ``reports`` False: built with ``--no-reports``) or ``local``, and why, in words.

    DRIFT is never chosen: it costs a global primer plus local searches, and
    no measurement yet shows which questions it answers better (it is asked for
    with ``--method drift``). A question about change over time (:func:`asks_change`) goes to global
    (lazy) search too: local search reads a few entities' text units, not the whole period; so does one asking
    for one side of the corpus and naming nothing (:func:`aspect_asked`: "What were the main challenges?"), whose
    names ``named(question)`` gives (default: its capitalised runs; see :func:`aspect_asked`)."""
    q = question.lower()
    lazy = ", and the index has no community reports (--no-reports)"
    if asks_change(question):
        why = "the question asks how something changed over time, which takes the whole corpus"
        return ("global", why) if reports else ("lazy", why + lazy)
    for phrase in global_phrases(prompts):
        if phrase in q:
            why = f'the question mentions "{phrase}", which asks about the whole corpus'
            return ("global", why) if reports else ("lazy", why + lazy)
    aspect = aspect_asked(question, prompts, named)
    if aspect is not None:
        why = (f'the question asks for "{aspect}" and names no person, place or organisation, which takes the '
               "whole corpus")
        return ("global", why) if reports else ("lazy", why + lazy)
    return "local", "the question names no corpus-wide theme, so it is answered from the nearest entities"


#: The opening of a question asking for one fact -- an amount, a time, a place, a person ("How much does the plus
#: plan cost a month?", "Who set the goals?") -- not for one side of the whole corpus, whatever aspect word it holds.
_ASKS_FACT = re.compile(r"(?i)^\W*(how (much|many|long|often|far|old|big|large|soon)|when|where|who|whom|whose)\b")


def aspect_asked(question: str, prompts: Prompts, named: Callable[[str], list[str]] | None = None) -> str | None:
    """The aspect word of a question asking for one side of the whole corpus -- "What are the main challenges
    discussed?", "What lessons were learned?", "What successes did the society report?" -> "challenges",
    "lessons", "successes" -- or None.

    One of its topic words (:func:`_question_topic`) is a word of an aspect of :data:`ASPECTS`, it does not open
    asking for one fact (:data:`_ASKS_FACT`: "how much", "when", "who", ...), and it names no
    person, place or organisation: ``named(question)`` is empty (``named``: ``question -> [names]``; the API
    passes the named-entity gate's names, :func:`slmgraph.query.named.check_names` with the index's own proper
    names; default: the capitalised runs of :func:`slmgraph.names.forms.candidate_spans`, a capitalised first
    word alone being none). "What challenges did Alice Chen face?" names her and is asked of local search. Its
    other topic words are not weighed: a cheap rule, no lookup of common nouns, which global search judges
    (:func:`corpus_aspect`, else by the helpfulness floor).
    """
    if _ASKS_FACT.match(question or ""):
        return None
    topic = _question_topic(question, prompts)
    hit = next((w for w in topic if any(w in words for words, _ in ASPECTS)), None)
    if hit is None:
        return None
    if named is None:
        from slmgraph.names.forms import candidate_spans

        names = [sp.name for sp in candidate_spans(question)]
    else:
        names = named(question)
    return None if names else hit


#: Aspects a question about the whole corpus may ask for ("What were the society's main challenges?"): the words
#: naming each (as a question writes them) and short phrases and impersonal sentences saying it, whose nearest
#: cosine ranks a theme's statements (a sentence opening "We had ..." matched "we had 87 members" by its
#: function words). Kept here, not in prompts/: a bundled prompt file's bytes version the models' records.
ASPECTS: tuple[tuple[frozenset, tuple[str, ...]], ...] = tuple(
    (frozenset(words.split()), tuple(said.split(" | "))) for words, said in (
    ("challenge challenges difficulty difficulties problem problems setback setbacks obstacle obstacles hurdle "
     "hurdles issue issues risk risks threat threats struggle struggles shortfall shortfalls weakness weaknesses",
     "a serious problem | a setback | a difficulty | Numbers fell. | It was damaged. | It was delayed. | "
     "It was cancelled. | It is at risk. | Money ran short. | It failed."),
    ("success successes achievement achievements accomplishment accomplishments milestone milestones strength "
     "strengths",
     "a great success | an achievement | a milestone | Numbers grew. | It was completed. | It won an award. | "
     "The target was reached."),
    ("goal goals aim aims plan plans priority priorities objective objectives ambition ambitions",
     "a goal for the future | a plan for next year | a priority | The aim is to finish it. | "
     "It is planned for next year."),
    ("disagreement disagreements conflict conflicts controversy controversies dispute disputes tension tensions",
     "a disagreement | a dispute | a controversy | The decision was opposed. | They argued about it."),
    ("lesson lessons",
     "a lesson learned | In hindsight it should have been done differently. | It taught a lesson."),
))


def _question_topic(question: str, prompts: Prompts) -> list[str]:
    """The content words of ``question`` (:func:`slmgraph.names.forms.content_words`, lower case) that name a
    topic, in the question's order: neither a word of a routing phrase (``prompts/auto_global.txt``; nor one of 4+
    letters inflected, :func:`_inflects`: "summary" of "summar") nor one of :data:`CORPUS_WORDS` nor a number word
    (:func:`number_word`). The one topic-word rule of :func:`corpus_wide_phrase`, :func:`corpus_aspect`,
    :func:`aspect_asked` and :func:`asked_topic`."""
    framing = {w for ph in global_phrases(prompts) for w in ph.split()}
    return [w for w in content_words(question)
            if w not in CORPUS_WORDS and w not in framing and not any(_inflects(w, f) for f in framing if len(f) >= 4)
            and not number_word(w)]


def named_corpus_phrase(question: str, prompts: Prompts, held: Callable[[list[str]], list[bool]]) -> str | None:
    """The routing phrase of a question about the whole corpus that names its documents with words of their own
    ("What are the main themes across these board minutes?"): every topic word (:func:`_question_topic`) is of
    :func:`corpus_name_words` and ``held`` (``words -> whether most documents hold each``) says most documents hold
    it, as a name of the corpus they all share; None otherwise ("these flood newsletters" in a corpus of newsletters
    a few of which tell of a flood asks about the flood)."""
    hit = _routing_phrase(question, prompts)
    topic = _question_topic(question, prompts) if hit else []
    if not topic or not set(topic) <= corpus_name_words(question):
        return None
    return hit if all(held(topic)) else None


#: Nouns a user names their documents by ("minutes", "episodes", "reports"); the words before one after "these" or
#: "the" may name the corpus ("these board minutes", "this podcast series") or a topic ("these flood newsletters").
CORPUS_NOUNS = frozenset("""
story stories document documents text texts corpus collection book books novel novels chapter chapters podcast
podcasts episode episodes transcript transcripts conversation conversations interview interviews article articles
file files newsletter newsletters letter letters minutes meeting meetings report reports memo memos email emails
paper papers note notes post posts call calls series season seasons show shows programme programmes broadcast
broadcasts lecture lectures essay essays speech speeches volume volumes archive archives log logs journal journals
diary diaries entry entries update updates record records
""".split())
#: Words that point at the corpus before its name.
_POINTING = frozenset("these this those the all our its".split())


def corpus_name_words(question: str) -> set[str]:
    """The words (lower case) of ``question`` that may name its corpus: at most two between "these", "this", "the",
    ... (:data:`_POINTING`) and a noun of :data:`CORPUS_NOUNS` ("board" of "across these board minutes", "podcast"
    of "this podcast series"); :func:`named_corpus_phrase` tells a name from a topic by the documents holding it."""
    words = re.findall(r"[a-z0-9][a-z0-9'-]*", (question or "").casefold())
    out: set[str] = set()
    for i, w in enumerate(words):
        if w not in CORPUS_NOUNS:
            continue
        for j in range(max(0, i - 3), i):
            if words[j] in _POINTING and all(x not in _POINTING for x in words[j + 1:i]):
                out.update(words[j + 1:i])
                break
    return out


#: Endings that inflect or derive a routing phrase's word ("themes", "summary" of "summar", "generally"); a longer
#: word merely holding one ("maintenance" holds "main", "ideal" "idea") is a word of its own.
_FRAMING_ENDINGS = ("s", "es", "y", "ies", "ly", "ed", "ing", "ize", "ise", "izes", "ises", "ized", "ised", "izing",
                    "ising", "ization", "isation")


def _inflects(word: str, framing: str) -> bool:
    """True when ``word`` is ``framing`` with one of :data:`_FRAMING_ENDINGS`."""
    return word.startswith(framing) and word[len(framing):] in _FRAMING_ENDINGS


#: Verbs a question asking for one side of the corpus frames the aspect with ("What problems did the society face?",
#: "What lessons were learned?", "What disagreements came up?"): they name no topic of their own.
ASPECT_VERBS = frozenset("""
face faced faces facing learn learned learnt learning come came comes coming arise arose arisen arising emerge
emerged emerging occur occurred encounter encountered encountering overcome overcame experience experienced
meet met see saw seen achieve achieved reach reached set pursue pursued identify identified remain remaining
resolve resolved resolving solve solved solving fix fixed handle handled address addressed tackle tackled deal dealt
""".split())


def corpus_aspect(question: str, prompts: Prompts, common=frozenset()) -> tuple[str, list[str]] | None:
    """``(aspect word, the phrases saying the aspect)`` of a question about the whole corpus from one side --
    "What were the society's main challenges?" -- or None.

    Every topic word of ``question`` (:func:`_question_topic`) is a word of one aspect of :data:`ASPECTS`
    ("challenges"), a verb framing it (:data:`ASPECT_VERBS`: "faced", "learned") or names the corpus's own
    subject: its :func:`slmgraph.store.corpus_stats.word_stem` is in ``common`` (the stems found in nearly every
    document: "society" in a society's newsletters); at least one is an aspect's. Such a question has an answer in any non-empty index, as "What are the main themes?" has: the
    corpus's themes, each led by its statements nearest the aspect. A question with another topic word ("the
    challenges of orchid care") is judged by the floor like any other.
    """
    from slmgraph.store.corpus_stats import word_stem

    topic = _question_topic(question, prompts)
    for words, said in ASPECTS:
        hit = [w for w in topic if w in words]
        if hit and all(w in words or w in ASPECT_VERBS or word_stem(w) in common for w in topic):
            return hit[0], list(said)
    return None


def asked_topic(question: str, prompts: Prompts) -> str | None:
    """The topic of a question asking for the themes of something narrower than the corpus -- "What are the main
    themes of the restoration work?" -> "restoration work" -- or of how something changed over time ("How has
    membership changed over time?" -> "membership", its words of change aside), or None: ``question`` holds a routing phrase
    (``prompts/auto_global.txt``) and topic words (:func:`_question_topic`), joined in its order. Its framing
    ("the main themes of") says nothing of the topic, and its words pull the question's vector away from it."""
    q = question.lower()
    if is_temporal(question):  # "How has membership changed over time?" -> "membership"
        topic = [w for w in _question_topic(question, prompts) if w not in _CHANGE_WORDS]
        return " ".join(topic) or None
    if not any(ph in q for ph in global_phrases(prompts)):
        return None
    topic = _question_topic(question, prompts)
    return " ".join(topic) or None


#: The words a question about change over time frames its topic with (:func:`slmgraph.query.theme_model.is_temporal`).
_CHANGE_WORDS = frozenset("""change changed changes changing evolve evolved evolves evolving evolution develop developed
develops developing development progress progressed progression time times years year decades decade past last
since first start beginning history timeline trend trends shift shifted grow grew grown""".split())
