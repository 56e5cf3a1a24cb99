"""What a corpus's speakers say of one kind, for a question asking for statements of that kind across the whole
corpus ("What personal anecdotes do tech leaders often share?", "How have the guests' hopes and worries about AI
evolved?"), answered without a model.

No community report holds such an answer: a community groups what is said of a subject, and an anecdote or a
worry is a way of speaking found on any subject, in every work. So the answer is built from the
corpus's sentences of the kind asked, as answer-type matching does in question answering (Moldovan et al. 2000:
the question names the type of its answer, and the type is matched against the passages):

* **the kind** (:data:`KINDS`) is named by the question's words ("anecdotes", "stories", "passions",
  "hopes", "worries"), and a sentence is of that kind when it holds one of the kind's cues, a small table of
  English expressions (a story is told in the first person and the past: "when I was", "I remember", "my first
  job"; a worry names a fear or a risk); where enough sentences hold a cue that alone marks the kind, only
  those are read. Advice is marked by naming itself ("my advice", "I always tell students") or by replying to a
  host's request for it ("What would you tell your younger self?"); "you have to ..." alone is as often a
  description, so it weighs less;
* **the topic**: where at least :data:`MIN_FOUND` of them name a specific word of the question (one found in
  under :data:`SPECIFIC_SHARE` of the text units: "AI" in "hopes about AI"), only those are read;
* **relevance**: each is weighed by its cosine with the question, its cues and :data:`TOPIC_BONUS` for a topic
  word, less :func:`slmgraph.query.theme_model.statement_penalty` (short, leaning on the sentence before, in a
  work's intro or outro); at most :data:`PER_WORK` from one work, so the answer spans the corpus;
* in a transcript, a host's sentences (a speaker in most works, :data:`slmgraph.query.theme_works.HOST_SHARE`)
  are left out unless the question names the host: what guests share is asked; a unit opening mid-turn gives
  its first sentences to the speaker of the unit before;
* **groups**: stories by the stage of life they tell of (:data:`STAGES`: childhood, school, first jobs,
  founding), other kinds by meaning, labelled by class-based TF-IDF over the concept phrases they name
  (:func:`slmgraph.query.theme_asks.subjects`);
* a question about change ("evolved", "over time") gets each kind's sentences in corpus order, work by work,
  with how many are said in each half of the works.

The answer states how many sentences of the kind, by whom and in how many works; for stories, where in a
conversation each stage of life is told (:func:`_life_course`: the median point of each stage, and whether they come
in a life's order) and the elements the stories hold (:func:`elements`: a turning point, a mentor, luck, a setback);
for passions, what the speakers say they love (:func:`loves`); what recurs across speakers (:func:`motifs`: the
index's concept phrases their sentences share, near phrases joined by the embedder, said by three speakers or
more), then its subjects, each with quotes from distinct works naming their speaker and document.
"""


from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from slmgraph.query.theme_lead import _join, _q, speakers_first
from slmgraph.query.theme_works import corpus_hosts

#: The kinds of statement a question may ask for: ``name -> (the question's words naming it, what a sentence
#: of the kind is called, the sentence cues)``; a cue's weight is 1, or 2 for a cue that alone marks the kind.
KINDS: dict[str, tuple[re.Pattern, str, tuple[tuple[re.Pattern, float], ...]]] = {}


def _kind(name: str, asked: str, noun: str, strong: list[str], weak: list[str] = ()) -> None:
    cues = tuple((re.compile(r"(?i)\b(" + c + r")\b"), 2.0) for c in strong) + tuple(
        (re.compile(r"(?i)\b(" + c + r")\b"), 1.0) for c in weak)
    KINDS[name] = (re.compile(r"(?i)\b(" + asked + r")\b"), noun, cues)


#: First person then a verb in the past: a story's telling ("I started", "we built").
_PAST = (r"(i|we) (was|were|had|did|went|got|came|made|took|saw|knew|thought|told|grew|began|left|wrote|built|"
         r"found|became|ran|met|bought|sold|won|lost|spent|taught|read|fell|heard|felt|decided|started|joined|"
         r"moved|worked|learned|learnt|tried|realized|realised|wanted|used to|ended up)")
_kind("stories", r"anecdotes?|stories|recount\w*|memories|reminisc\w*|share[sd]? (their |personal )?experiences",
      "tell stories of their own",
      [r"i (still )?(remember|recall)", r"when i was", r"growing up", r"i grew up", r"as a (kid|child|teenager|boy|girl|"
       r"student)", r"my (first|dad|father|mom|mother|parents|grandfather|grandmother|grandma|grandpa|brother|sister)",
       r"(years|decades) ago", r"back (then|when|in (the )?(\d{2,4}s?|college|school))", r"one day",
       r"in (high school|college|grad school|graduate school|middle school)"],
      [_PAST, r"at the time"])
_kind("passions", r"passions?|passionate|motivations?|what (drives|motivates)|driven by|say they (love|enjoy)|"
      r"what do (the )?(guests|speakers|they) (love|enjoy)|hobb(y|ies)",
      "speak of their passions",
      [r"i (love|loved|adore|am passionate|'m passionate|was passionate)", r"passion(ate)?", r"i('m| am| was| got| became) (\w+ )?obsessed",
       r"fascinat\w*", r"what (drives|motivates|excites|gets) me", r"i('ve| have) always (been|wanted|loved)",
       r"(inspired|motivated|drove|drives) me", r"my (dream|calling|mission)", r"excit(es|ing to) me",
       r"i('m| am| was| get| got) (so |really |very |just |incredibly )?(excited|thrilled|delighted)",
       r"(meaningful|fulfilling|rewarding)"],
      [r"i (enjoy|enjoyed|care (deeply|a lot|so much) about)", r"excit\w*", r"curio(us|sity)", r"joy"])
_kind("hopes", r"hopes?|hopeful|optimis\w*|aspirations?", "voice hopes",
      [r"i('m| am)? (\w+ )?(hope|hopeful)", r"optimis\w*",
       r"i('m| am) (really |so |very )?excited", r"(great|enormous|huge) "
       r"(promise|potential|opportunit\w*)", r"(could|will|can|going to) (\w+ ){0,2}(help|solve|cure|transform|improve|"
       r"democratize|empower|revolutioni[sz]e)", r"(tremendous|enormous|incredible|huge) (\w+ )?(role|successes|progress)",
       r"good solutions"],
      [r"hopeful", r"promis\w*", r"opportunit(y|ies)(?! to\b)", r"excit\w*", r"potential", r"better (world|future|lives)", r"looking forward",
       r"can'?t wait", r"relieved", r"hopefully"])
_kind("worries", r"worr\w*|fears?|concerns?|anxiet\w*|pessimis\w*", "voice worries",
      [r"i('m| am)? (very |really |so |quite |deeply |still |also )?(worried|worry|afraid|scared|concerned|nervous|"
       r"anxious)", r"(worr|fear|scar|frighten|terrif)\w*",
       r"concern(ed|s|ing)?", r"danger(ous|s)?", r"(risk|threat)s?"],
      [r"harm\w*", r"misuse", r"limitations?", r"opaque", r"black box(es)?", r"beyond the capabilit\w*",
       r"(bad|wrong) (actors|hands|things)", r"unintended", r"(very |really |more )?careful(ly)?",
       r"caution\w*", r"bias(es|ed)?", r"(un)?safe(ty)?", r"misinformation", r"replac\w* (us|humans|people|jobs|workers)",
       r"(lose|losing|lost) (their |our |your )?jobs"])
_kind("advice", r"advice|advise[sd]?|tips", "give advice",
      [r"my (biggest |best |one |main |only )?(piece of )?advice", r"^\W*advice(?=\s*:)", r"advice (i|for|to) (always |would |'d )?"
       r"(give|anyone|everyone|people|kids|students|young|folks|founders)", r"i (always|would|'d|often) tell (people|"
       r"students|my students|kids|young|founders|anyone|everyone|folks)", r"i('d| would) (encourage|recommend|urge)",
       r"(don't|do not|never) be afraid", r"the (best|most important) thing you can do"],
      [r"you (have|need|ought|got) to", r"you('ve| have) got to", r"you should", r"find (something|the thing|what) you"])

#: A host's question asking for a kind ("What do you do when you're not rowing?" asks for a passion): the first
#: REPLY_SENTENCES whole statements of the guest's reply are of that kind, with PROMPT_WEIGHT, cue or no cue
#: ("Wooden boats." is no statement; "I've got a 1930s skiff in my garage" is).
PROMPTS = {k: re.compile(r"(?i)\b(" + p + r")") for k, p in {
    "stories": r"grow(ing)? up|grew up|childhood|as a (kid|child)|first (real )?job|how did you (get|start|find|end up|"
               r"come)|tell (us|me) (about|where|how)|what was (it|that) like|remember",
    "passions": r"when you'?re not|for fun|outside (of )?(work|the lab|the office)|hobb(y|ies)|passion|spare time|"
                r"free time|what do you (love|enjoy)|what (gets|got) you (excited|going)|what drives you",
    "hopes": r"hope|looking forward|excit|optimis|what'?s next|the future",
    "worries": r"worr|fear|concern|afraid|scar|nervous|risk|keeps? you up",
    "advice": r"advice|advise|what would you (tell|say to)|(tell|say to) (your )?(younger|young)|whisper in your|"
              r"(should|would|could) (a |an )?(young|younger|new|aspiring|beginning) \w+ (hear|know|learn|do)\b",
}.items()}
REPLY_SENTENCES = 1
#: Advice asked for is given over a few sentences, the advice itself seldom first ("I would say be a generalist
#: ... it's important to get a broad education."): that many of the reply's whole statements are of the kind.
ADVICE_REPLY = 3
PROMPT_WEIGHT = 2.0
#: A reply that denies what it was asked for ("Not really.", "Very little, to be honest.", "No, none at all."), not
#: one opening on such a word ("Nothing worries me more than ...", "No one knows ...").
_DENIES = re.compile(r"(?i)^\W*(?:(?:honestly|well|oh|um|uh),?\s+)*(?:not really|not much|not at all|very little|"
                     r"little|none|nothing|no(?:pe)?|not (?:a lot|that much|many|anything))"
                     r"(?=\s*(?:[,.!;]|$|to be honest|really|at all))")
#: A host's turn that asks: a question, or a request ("Tell us where you grew up.").
_ASKING = re.compile(r"\?[\"'\u201d\u2019)]*$|^\W*(tell|talk|describe|walk) (us|me)\b", re.IGNORECASE)
#: A question about change over time.
_CHANGE = re.compile(r"(?i)\b(evolv\w*|chang\w*|shift\w*|over (the )?(time|years|episodes)|across (the )?(episodes|"
                     r"years|series|time)|trend\w*|develop(ed|ment)? over)\b")
#: A question about the hosts themselves ("What does the host fear?").
_THE_HOST = re.compile(r"(?i)\bthe (co-?)?(hosts?|interviewers?|presenters?)\b(?!'s guests)")
#: A short sentence said whole: a capital, words, a full stop.
_SHORT_WHOLE = re.compile(r"^[A-Z][^.?!]*[.!]$")
#: A thank-you.
_THANKS = re.compile(r"(?i)\b(thank(s| you)|grateful)\b")
#: Words of a statement in the first person: what a speaker says of themself.
_FIRST = re.compile(r"(?i)\b(i|i'm|i've|i'd|i'll|me|my|we|we're|we've|our|us)\b")
#: Words of a question naming who speaks or where, or the form of what is said, not its topic ("guests",
#: "episodes", "narrative structures").
_FRAME = frozenset("""guest guests speaker speakers host hosts episode episodes podcast podcasts interview interviews
leader leaders corpus document documents work works share shares often commonly generally usually personal
describe give gives tell tells across want wants narrative narratives structure structures technique techniques
type types kind kinds way ways mention mentions mentioned talk talks discuss discusses speak speaks raise raises
bring brings never mostly mainly largely typically""".split())
#: A sentence naming a topic word of the question (:func:`topic_of`) gains this much.
TOPIC_BONUS = 0.2
#: A topic word found in under this share of the text units is specific ("career", "AI" in a corpus not all
#: about AI): when at least MIN_FOUND sentences of the kind name one, only those are quoted.
SPECIFIC_SHARE = 0.3
#: The stages of a life a story tells of, in life's order: ``(label, cue)``; a story naming two is of the later
#: (:func:`stage_of`), one naming none of "other moments"; a child is fifteen at most.
STAGES = tuple((label, re.compile(r"(?i)\b(" + cue + r")\b")) for label, cue in (
    ("childhood and family", r"when i was (a kid|a child|young|little|a boy|a girl|a teenager|\d|1[0-5]|five|six|seven|eight|"
     r"nine|ten|eleven|twelve|thirteen|fourteen|fifteen)|growing up|grew up|as a (kid|"
     r"child|boy|girl|teenager)|my (father|dad|mother|mom|parents|grandfather|grandmother|grandma|grandpa|brother|"
     r"sister|family)|childhood"),
    ("school and university", r"high school|middle school|college|universit\w+|grad(uate)? school|ph\.?d|"
     r"professor|undergrad\w*|class(es)?|teachers?|students?|a levels"),
    ("first jobs and careers", r"my (very )?first( real| proper| paid)? (job|jobs|boss|week|day|shift)|first jobs|"
     r"intern(ship)?s?|got hired|was hired|i joined|my boss|my manager|the manager|career|jobs?|worked there|"
     r"apprentic\w*|clerk"),
    ("founding and building", r"(started|founded|co-?founded|launched|built|building|ran|run) (a|the|my|our|this) "
     r"(company|startup|business|lab|team|project|group)|startups?|founders?|founding|raised (money|funding|a round)"),
))
OTHER_STAGE = "other moments"
#: Sentences of a kind the answer weighs at most (the most cued first), and quotes it keeps.
CANDIDATES = 400
KEEP = 24
#: Quotes from one work at most, and per subject shown.
PER_WORK = 4
EXAMPLES = 3
#: A cue adds this much to a sentence's cosine with the question.
CUE_WEIGHT = 0.05
#: A sentence of advice that says what it advises ("pick hard problems") gains this much over one that only names
#: advice ("I get asked for advice a lot").
ADVICE_BONUS = 0.2
#: The least sentences of the kind, in at least this many works, before the answer is given this way.
MIN_FOUND = 5
MIN_WORKS = 2
#: A hope given up: no hope.
_HOPE_GONE = re.compile(r"(?i)\b(not anymore|no longer|used to be (excited|hopeful|optimistic))\b")
#: The statements of a reply that a host's sentence naming a topic puts on it.
TOPIC_REPLY = 4
#: The most words of a host's question shown beside a reply.
ASKED_WORDS = 14


def _naming(turn: str, on) -> str:
    """The sentence of a host's ``turn`` that ``on`` (``text -> bool``) finds on the topic, else the whole turn."""
    from slmgraph.query.extractive import prose_sentences

    return next((x for x in prose_sentences(turn) if on(x)), turn)


def _clip(text: str) -> str:
    """``text`` cut to its first :data:`ASKED_WORDS` words."""
    words = text.split()
    return " ".join(words[:ASKED_WORDS]) + (" ..." if len(words) > ASKED_WORDS else "")


#: A sentence whose subject points back to the sentence before ("And they're pointing to ...", "It could ...").
_POINTS_BACK = re.compile(r"(?i)^\W*(?:(?:and|but|so|because)\W+)*(?:it|it's|its|this|that|they|they're|these|those)\b")
#: The longest sentence before (characters) that carries a topic to the sentence after it; a long one is quoted
#: whole with it, and would bury the quote.
CONTEXT_CHARS = 240

#: How a kind's sentences are said, in a passive sentence ("hopes are voiced").
_DONE = {"stories": "told", "passions": "spoken of", "hopes": "voiced", "worries": "voiced", "advice": "given"}
#: The least sentences of the kinds asked before a question about change gets :func:`_trend`.
TREND_LEAST = 6

#: What recurs across speakers (:func:`motifs`): a phrase found in at most this share of the text units (a rarer
#: one says more than "time" or "people"), said by at least this many speakers, at most this many shown; two
#: phrases nearer than this cosine are one ("father" and "dad").
MOTIF_SHARE = 0.25
MOTIF_SPEAKERS = 3
MOTIFS = 3
MOTIF_JOIN = 0.65


@dataclass
class Said:
    """One sentence of a kind: its text (speaker label dropped), unit number, document, position in it, speaker,
    kind and score."""

    text: str
    source: int
    doc_id: str
    unit: int
    of: int
    speaker: str
    kind: str
    score: float = 0.0
    #: a whole statement, fit to quote (:func:`slmgraph.query.theme_model._statement_ok`)
    ok: bool = True
    #: the sentence before it in the same turn (same speaker, same text unit), "" at a turn's start
    before: str = ""
    #: the host's last sentence before it, among the reply's first :data:`TOPIC_REPLY` statements, else ""
    asked: str = ""
    #: shown in brackets after the speaker (the host's sentence naming the topic the reply is on)
    lead: str = ""


def _straight(text: str) -> str:
    """``text`` with its apostrophes straight, as the cue tables write them; transcripts often curl them ("don’t")."""
    return text.replace("\u2019", "'")


def kinds_asked(question: str) -> list[str]:
    """The kinds of :data:`KINDS` that ``question`` asks for, in the table's order; [] for most questions."""
    return [k for k, (asked, _, _) in KINDS.items() if asked.search(question or "")]


#: A concession and what the speaker stresses after it: "Even though we have tremendous successes, there are also
#: limitations." / "AI holds so much potential, but we have to do it very carefully."
_CONCEDES = re.compile(r"(?i)^(?:\W*(?:\w+,?\s+)?(?:even though|although|though|while|despite)\b[^;]{3,},\s*(?P<main>.{8,})|"
                       r".{8,}?(?:,|;)\s*(?:but|yet|though|however)\b,?\s+(?P<but>.{8,}))$")


def stressed(sentence: str) -> str:
    """The clause ``sentence`` stresses after a concession (:data:`_CONCEDES`), "" when it concedes nothing."""
    m = _CONCEDES.match(_straight(sentence).strip())
    return (m.group("main") or m.group("but") or "") if m else ""


def cue_weight(sentence: str, kind: str, prompt: str = "") -> float:
    """The sum of the weights of ``kind``'s cues that ``sentence`` holds, plus :data:`PROMPT_WEIGHT` when it
    replies to ``prompt``, a host's question asking for the kind (:data:`PROMPTS`); a story needs the first
    person unless it replies to such a question."""
    sentence, prompt = _straight(sentence), _straight(prompt)
    # "Very little, to be honest." replies to "Any worries?" and voices none
    asked = bool(prompt) and bool(PROMPTS[kind].search(prompt)) and not _DENIES.match(sentence)
    w = sum(weight for pat, weight in KINDS[kind][2] if pat.search(sentence)) + (PROMPT_WEIGHT if asked else 0.0)
    if kind == "stories" and not asked and not _FIRST.search(sentence):
        return 0.0
    if kind == "hopes" and _HOPE_GONE.search(sentence):  # "I used to be excited; not anymore."
        return 0.0
    return w


def topic_of(question: str, ix) -> set[str]:
    """The topic words of ``question`` as word stems: :func:`slmgraph.query.theme_model.topic_words` and any
    acronym it names ("AI"), less the words asking for a kind (:data:`KINDS`) and naming who speaks or where
    (:data:`_FRAME`)."""
    from slmgraph.query.theme_model import topic_words, word_stem

    acronyms = {word_stem(a.casefold()) for a in re.findall(r"\b[A-Z]{2,4}\b", question or "")}
    return (topic_words(question, ix.all_units()) | acronyms) - _frame_stems(question)


def _frame_stems(question: str, change: bool = False) -> set[str]:
    """The stems of the words of ``question`` asking for a kind (:data:`KINDS`) or naming who speaks or where
    (:data:`_FRAME`), and with ``change`` those asking about change (:data:`_CHANGE`)."""
    from slmgraph.query.theme_model import word_stem

    return {word_stem(w) for w in re.findall(r"[a-z]+", (question or "").casefold())
            if any(KINDS[k][0].fullmatch(w) for k in KINDS) or w in _FRAME or (change and _CHANGE.fullmatch(w))}


def _every_topic(question: str) -> set[str]:
    """The question's words as stems (:func:`slmgraph.query.theme_model.question_words`) less its frame and change
    words (:func:`_frame_stems`): its topic where every document names it (:func:`topic_of` leaves out what most
    documents name)."""
    from slmgraph.query.theme_model import question_words

    return question_words(question) - _frame_stems(question, change=True)


def unit_counts(ix, stems: set[str]) -> Counter:
    """``stem -> the number of the index's text units holding a word of that stem``."""
    from slmgraph.query.theme_model import text_stems

    held: Counter = Counter()
    for u in ix.all_units():
        held.update(stems & text_stems(u.text))
    return held


def _specific(ix, topic: set[str]) -> set[str]:
    """The words of ``topic`` found in under :data:`SPECIFIC_SHARE` of the index's text units."""
    held = unit_counts(ix, topic)
    return {w for w in topic if held[w] < SPECIFIC_SHARE * max(1, len(ix.all_units()))}


def stage_of(sentence: str) -> str:
    """The stage of a life (:data:`STAGES`) a story's sentence tells of, the latest it names ("my job at this
    company right after I graduated high school" is a first job), else :data:`OTHER_STAGE`."""
    return next((label for label, cue in reversed(STAGES) if cue.search(sentence)), OTHER_STAGE)


def _same(a: str, b: str) -> bool:
    """True when sentence ``a`` nearly repeats ``b`` or one is a cut of the other (a text unit's edge)."""
    from slmgraph.query.theme_model import repeats

    fa, fb = a.casefold(), b.casefold()
    return repeats(a, b) or (len(fa.split()) >= 4 and fa in fb) or (len(fb.split()) >= 4 and fb in fa)


def _opening_speaker(before: str, text: str) -> str:
    """:func:`slmgraph.query.theme_model.opening_speaker`."""
    from slmgraph.query.theme_model import opening_speaker

    return opening_speaker(before, text)


#: A question asking which speakers say something of a kind ("Which guests are hopeful about AI?"), and the
#: sentences of the kind it needs.
_WHO_SAYS = re.compile(r"(?i)\b(which|what) (guests?|speakers?|interviewees|participants|contributors|members)\b|"
                       r"^\W*who\b")
WHICH_FOUND = 2
#: Kinds that answer each other: a sentence is of the one it says more of.
_RIVAL = {"hopes": "worries", "worries": "hopes"}


def found(ix, question: str, kinds: list[str]) -> list[Said]:
    """Every sentence of the corpus of one of ``kinds`` (a cue of the kind; see the module doc), as
    :func:`guest_sentences` reads them; in corpus order."""
    def weigh(body: str, prompt: str = "") -> tuple[float, str]:
        # a host's question asking for two kinds ("Hopes and worries?"), asked of or not, makes a reply of neither
        # by itself: "Mostly it worries me" answers it and is no hope
        if prompt and sum(1 for k in PROMPTS if PROMPTS[k].search(_straight(prompt))) > 1:
            prompt = ""
        # a sentence conceding one thing to stress another is of the kind it stresses
        main = stressed(body)
        if main and any(cue_weight(main, k) for k in set(kinds) | {_RIVAL.get(k) for k in kinds} - {None}):
            body = main
        w, kind = max((cue_weight(body, k, prompt), k) for k in kinds)
        # asked for one of a pair, a sentence saying more of the other is of the other ("My worries are bigger
        # than my hopes" is no hope)
        rival = _RIVAL.get(kind)
        if rival and rival not in kinds and cue_weight(body, rival) > w:
            return 0.0, kind
        return w, kind

    # a short sentence naming the kind itself says it whole ("Music is my passion.", "I hope it comes."); "I love
    # that man." names none
    return [s for s in guest_sentences(ix, question, weigh, whole=False)
            if s.ok or (s.score >= 2 and len(s.text.split()) >= 3 and _SHORT_WHOLE.match(s.text)
                        and KINDS[s.kind][0].search(s.text))]


def guest_sentences(ix, question: str, weigh, whole: bool = True) -> list[Said]:
    """The corpus's sentences that ``weigh`` (``(sentence, prompt) -> (weight, kind)``; ``prompt``: the host's
    question a sentence replies to, among the first :data:`REPLY_SENTENCES` (:data:`ADVICE_REPLY` for a request for
    advice) whole statements of the reply, praise of the question not counted, else
    "") gives a
    positive weight, each no
    thank-you and, with ``whole``, a whole statement (:func:`slmgraph.query.theme_model._statement_ok`; without,
    any sentence, each marked ``ok`` when whole), a near-repeat or a fragment of another in the same work dropped
    (kept once: the whole sentence, with its speaker where one copy names them); the hosts' own left out unless
    ``question`` names them, or only theirs kept when it asks about "the host"; in corpus order."""
    from slmgraph.query.extractive import _SPEAKER, prose_sentences
    from slmgraph.query.theme_model import PLEASANTRY, _statement_ok, speaker_of, spoken
    from slmgraph.query.theme_topics import _work

    folded = (question or "").casefold()
    every = {h.title() for h in corpus_hosts(ix)}
    hosts = {h for h in every if not any(
        re.search(r"\b" + re.escape(w) + r"\b", folded) for w in h.casefold().split() if len(w) >= 3)}
    # a question about "the host" asks for the hosts' own sentences
    only = every if _THE_HOST.search(question or "") and every else set()
    out: list[Said] = []
    prev = None
    prompt, replied, host_said, since = "", 0, "", 0
    for u in ix.all_units():
        # the unit before in the same work (a work's parts follow each other in corpus order)
        same = prev is not None and _work(ix.doc_by_id[prev.doc_id]) == _work(ix.doc_by_id[u.doc_id])
        opening = _opening_speaker(prev.text, u.text) if same else ""
        if not same:
            prompt, replied, host_said, since = "", 0, "", 0
        prev = u
        last, last_who = "", None
        for s in prose_sentences(u.text):
            body = _SPEAKER.sub("", spoken(s)).strip()
            # a unit opening mid-turn: its first sentences are said by the speaker of the unit before
            who = speaker_of(u.text, s) or opening
            before = last if who == last_who else ""
            last, last_who = body, who
            ok = _statement_ok(s if s == body else body, ix)
            if who in every:
                # the host's whole turn, sentence by sentence ("Let's talk about X. Everyone is asking about them.")
                host_said, since = (f"{host_said} {body}" if since == 0 and host_said else body), 0
                if _ASKING.search(body):
                    prompt, replied = body, 0
            elif who and ok and not PLEASANTRY.search(body):  # a reply's whole statements ("Baking." is none)
                replied += 1
            if who not in every:
                since += 1
            reach = ADVICE_REPLY if PROMPTS["advice"].search(_straight(prompt)) else REPLY_SENTENCES
            reply = who not in every and ok and 0 < replied <= reach
            w, kind = weigh(body, prompt if reply else "")
            # a thank-you states nothing of any kind ("Kevin, thank you so much for your curiosity.")
            if w <= 0 or _THANKS.search(body):
                continue
            if whole and not ok:
                continue
            if (who not in only) if only else (who in hosts):
                continue
            d = ix.doc_by_id[u.doc_id]
            # overlapping text units (and a work's overlapping parts) repeat a sentence, or cut it
            twin = next((a for a in reversed(out[-40:]) if _work(d) == _work(ix.doc_by_id[a.doc_id])
                         and _same(body, a.text)), None)
            if twin is not None:
                if len(body) > len(twin.text):  # the whole sentence over a unit's cut of it
                    twin.text, twin.source, twin.doc_id, twin.unit, twin.of = body, u.number, u.doc_id, u.unit, d.n_units
                    twin.ok = ok
                twin.speaker = twin.speaker or who
                continue
            # what the host said last leads the reply's first statements to its topic, asked or not ("Let's talk
            # about brain-computer interfaces." "I am hopeful.")
            asked = host_said if who not in every and 0 < since <= TOPIC_REPLY else ""
            out.append(Said(body, u.number, u.doc_id, u.unit, d.n_units, who, kind, w, ok=ok, before=before,
                            asked=asked))
    return out


def _on_topic(ix, said: list[Said], question: str) -> tuple[list[Said], list[str]]:
    """``(sentences, words)``: ``said`` less the sentences off the topic of ``question``, and its topic words as the
    question writes them, when at least :data:`MIN_FOUND` are on it; else all of ``said`` and []. A sentence is on
    the topic when it names a specific topic word (:func:`_specific`), or every topic word where none is specific
    (each unit names them); when its subject points back to its speaker's sentence before, which is on it; or, where
    none is specific, when it replies to a host's turn that is on it (:data:`TOPIC_REPLY`)."""
    from slmgraph.query.theme_model import names_asked, word_stem

    from dataclasses import replace

    topic = topic_of(question, ix) or _every_topic(question)
    specific = _specific(ix, topic)
    if specific:
        def on(text: str) -> bool:
            return names_asked(text, specific)
    else:  # every unit names the topic (a host asks each guest of it): a sentence names all its words
        def on(text: str) -> bool:
            return bool(topic) and topic <= {word_stem(w) for w in re.findall(r"[^\W_]+", text.casefold())}
    own = [s for s in said if on(s.text)]
    quoted = {(s.source, s.text) for s in own}
    # a sentence whose subject points back to its speaker's sentence before, which names the topic, is on it too
    # ("AI is transforming robotics. And they're pointing to opportunities."); it is quoted with that sentence, so
    # the quote names the topic, unless that sentence is quoted on its own
    named = own + [replace(s, text=f"{s.before} {s.text}", before="") for s in said
                   if not on(s.text) and s.before and len(s.before) <= CONTEXT_CHARS
                   and _POINTS_BACK.match(s.text) and on(s.before) and (s.source, s.before) not in quoted]
    # where every unit names the topic (a host puts it to each guest), a reply to the host's turn naming it is on it
    # ("Brain-computer interfaces?" "I am worried."), quoted with the host's sentence naming it; a topic only some
    # units name is read in the speakers' own words, the host's turns being long and naming much besides
    if not specific:
        taken = {(s.source, s.text) for s in named}
        named += [replace(s, lead=f"asked \u201c{_clip(_naming(s.asked, on))}\u201d") for s in said
                  if (s.source, s.text) not in taken and s.asked and on(s.asked) and not on(s.text)]
    if len(named) < MIN_FOUND:
        return said, []
    held = {word_stem(w) for s in named for w in re.findall(r"[^\W_]+", s.text.casefold() + " " + s.asked.casefold())}
    words = [w for w in re.findall(r"[^\W_]+", question) if word_stem(w.casefold()) in (specific or topic) & held]
    return named, _phrases(question, list(dict.fromkeys(words)))


def _phrases(question: str, words: list[str]) -> list[str]:
    """``words`` of ``question`` joined where the question writes them one after another ("brain", "computer",
    "interfaces" -> "brain-computer interfaces")."""
    out: list[str] = []
    end = -1
    for m in re.finditer(r"[^\W_]+", question or ""):
        if m.group(0) not in words:
            continue
        gap = question[end:m.start()] if end >= 0 else None
        if out and gap is not None and re.fullmatch(r"[\s-]+", gap):
            out[-1] += gap + m.group(0)
        else:
            out.append(m.group(0))
        end = m.end()
    return list(dict.fromkeys(out)) or words


def _strong(said: list[Said]) -> list[Said]:
    """The sentences of ``said`` whose cues weigh at least 2 (a cue that alone marks the kind, or two), when at
    least :data:`MIN_FOUND` of each kind asked are; else ``said``: a weak cue alone ("excited") often marks
    nothing."""
    kinds = {s.kind for s in said}
    strong = [s for s in said if s.score >= 2]
    return strong if all(sum(1 for s in strong if s.kind == k) >= MIN_FOUND for k in kinds) else said


def _pick(ix, said: list[Said], question: str, embedder, kinds: list[str]) -> list[Said]:
    """The sentences the answer quotes: the :data:`CANDIDATES` most cued weighed by cosine with ``question`` plus
    :data:`CUE_WEIGHT` per cue weight and :data:`TOPIC_BONUS` for naming a topic word, less
    :func:`slmgraph.query.theme_model.statement_penalty`; the best first, at most :data:`PER_WORK` from one work
    and :data:`KEEP` in all, shared evenly between ``kinds``."""
    from slmgraph.query.extractive import _embed
    from slmgraph.query.theme_model import repeats, statement_penalty
    from slmgraph.query.theme_topics import _work

    from slmgraph.query.theme_model import names_asked

    topic = topic_of(question, ix)
    pool = sorted(said, key=lambda s: -s.score)[:CANDIDATES]
    v = _embed([s.text for s in pool] + [question], embedder)
    for s, row in zip(pool, v[:-1]):
        s.score = (float(row @ v[-1]) + CUE_WEIGHT * s.score - statement_penalty(s, ix)
                   + (TOPIC_BONUS if names_asked(s.text, topic) else 0.0)
                   + (ADVICE_BONUS if s.kind == "advice" and advice_in(s.text) else 0.0))
    out: list[Said] = []
    for kind in kinds:
        per_work: Counter = Counter()
        mine: list[Said] = []
        for s in sorted((s for s in pool if s.kind == kind), key=lambda s: -s.score):
            w = _work(ix.doc_by_id[s.doc_id])
            if per_work[w] >= PER_WORK or any(repeats(s.text, t.text) for t in mine):
                continue
            mine.append(s)
            per_work[w] += 1
            if len(mine) == KEEP // len(kinds):
                break
        out += mine
    return out


def work_title(ix, w: str) -> str:
    """What a work key (:func:`slmgraph.query.theme_topics._work`: a series' name, or a document's id) is shown
    as: the series' name, or the document's display name (its title or file name), never its id."""
    d = ix.doc_by_id.get(w)
    return d.name if d is not None and not d.work else w


def in_context(s: Said) -> str:
    """``s.text`` as quoted: after its speaker's sentence before when its subject points back to it and that sentence
    is short ("We don't know how to do hard tech startups that well. This was one of my areas of passion at YC."); a
    quote whose "this" points at nothing leaves the reader to guess (extractive summaries' dangling references)."""
    if s.before and len(s.before) <= CONTEXT_CHARS and _POINTS_BACK.match(s.text) and not _same(s.before, s.text):
        return f"{s.before} {s.text}"
    return s.text


def _where(ix, s: Said) -> str:
    d = ix.doc_by_id[s.doc_id]
    return d.name if s.of == 1 else f"{d.name}, unit {s.unit} of {s.of}"


class Quotes:
    """The quoted sentences of an answer: each quote's line, the answer's points and its closing lists of the
    documents and text units cited, in citation order."""

    def __init__(self, ix):
        self.ix = ix
        self.cited: list[int] = []
        self.points: list[dict] = []
        self._where: dict[int, str] = {}
        #: (sentence before, quote) of each quote given its context (:func:`in_context`)
        self._context: list[tuple[str, str]] = []

    def line(self, s: Said) -> str:
        """``- *document, unit k of n*: Speaker: sentence [Sources: n]``; the unit is cited."""
        if s.source not in self.cited:
            self.cited.append(s.source)
            self._where[s.source] = _where(self.ix, s)
        who = f"{s.speaker} ({s.lead}): " if s.speaker and s.lead else f"{s.speaker}: " if s.speaker else ""
        text = in_context(s)
        if text != s.text:
            self._context.append((s.before, s.text))
        return f"- *{_where(self.ix, s)}*: {who}{text} [Sources: {s.source}]"

    def point(self, label: str, items: list[Said]) -> None:
        """One structured point of the answer: its label, text, the works it spans, sources and documents."""
        from slmgraph.query.theme_topics import _work

        ix = self.ix
        self.points.append({"topic": label, "text": " ".join(s.text for s in items), "coverage": {
            "works": len({_work(ix.doc_by_id[s.doc_id]) for s in items})}, "reports": [],
            "sources": [s.source for s in items],
            "documents": [{"doc_id": s.doc_id, "document": ix.doc_by_id[s.doc_id].name,
                           "path": ix.doc_by_id[s.doc_id].path} for s in items]})

    def answer(self, parts: list[str]) -> tuple[str, list[dict], list[int]]:
        """``(text, points, cited)``: ``parts`` joined, then the documents and text units cited; a quote's context
        quoted on its own elsewhere in the answer is not said twice."""
        body = "\n\n".join(parts)
        for before, quote in self._context:
            if body.count(before) > 1:
                body = body.replace(f"{before} {quote}", quote)
        text = "\n\n".join([body] + [
            "Documents cited:\n" + "\n".join(f"- [{n}] {self._where[n]}" for n in self.cited),
            f"Sources: text units {', '.join(map(str, self.cited))}."])
        return text, self.points, self.cited


def _by(items: list[Said]) -> str:
    """"Andrew Ng (3), Sam Altman (2) and Drew Endy": who says ``items``, the most first."""
    c = Counter(s.speaker for s in items if s.speaker)
    return _join([f"{p} ({n})" if n > 1 else p for p, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))])


def _groups(ix, chosen: list[Said], kind: str, embedder, split: bool = True) -> list[tuple[str, list[Said]]]:
    """``[(label, sentences)]``: stories by the stage of life they tell of (:data:`STAGES`, in life's order, "other
    moments" last), other kinds by meaning (:func:`slmgraph.query.theme_asks.subjects`, the rest under "other
    <kind>"), passions (``split``) in the work itself and beside it; the best first within each."""
    from slmgraph.query.theme_asks import subjects

    chosen = sorted(chosen, key=lambda s: -s.score)
    if kind == "passions" and split:  # what drives them at work, and what beside it
        work = [s for s in chosen if at_work(s.text)]
        beside = [s for s in chosen if not at_work(s.text)]
        if len(work) >= 2 and len(beside) >= 2:
            return [(AT_WORK, work), (BESIDE_WORK, beside)]
    if kind == "stories":
        by: dict[str, list[Said]] = {}
        for s in chosen:
            by.setdefault(stage_of(s.text), []).append(s)
        return [(label, by[label]) for label in [x for x, _ in STAGES] + [OTHER_STAGE] if label in by]
    if kind == "advice":  # advice by what it advises, when that names two kinds or more
        by: dict[str, list[Said]] = {}
        for s in chosen:
            said = advice_in(s.text)
            by.setdefault(advice_kind(said) if said else OTHER_ADVICE, []).append(s)
        if sum(1 for label in by if label != OTHER_ADVICE) >= 2:
            return [(label, by[label]) for label, _ in ADVICE_KINDS if label in by] + (
                [(OTHER_ADVICE, by[OTHER_ADVICE])] if OTHER_ADVICE in by else [])
    # a group named by the kind's own word ("advice" of advice) says nothing of what it holds
    groups = [(label, items) for label, items in subjects(ix, chosen, embedder)
              if not KINDS[kind][0].fullmatch(label)]
    grouped = {id(s) for _, items in groups for s in items}
    rest = [s for s in chosen if id(s) not in grouped]
    return groups + ([(f"other {kind}" if groups else OTHER_STAGE, rest)] if rest else [])


def _group_line(ix, items: list[Said], noun: str, terms: bool = True) -> str:
    """A group's first line: how many sentences, in how many works, by whom, and (``terms``) the noun phrases two
    or more of them name (:func:`slmgraph.query.theme_lead.shared_terms`) -- "9 sentences in 7 works, by Neha
    Narkhede (2), Danny Hillis and 5 others; 6 of them speak of “parents”, 2 of “stories”."."""
    from slmgraph.query.theme_lead import shared_terms
    from slmgraph.query.theme_topics import _work

    n, k = len(items), len({_work(ix.doc_by_id[s.doc_id]) for s in items})
    text = f"{n} sentence{'s' if n != 1 else ''} in {k} {noun if k != 1 else noun[:-1]}"
    who = Counter(s.speaker for s in items if s.speaker).most_common()
    if who:
        shown = [f"{p} ({c})" if c > 1 else p for p, c in who[:3]]
        rest = len(who) - 3
        text += ", by " + _join(shown + ([f"{rest} other{'s' if rest != 1 else ''}"] if rest > 0 else []))
    terms = shared_terms(items, ix)[:2] if n > 1 and terms else []
    if terms:
        text += f"; {terms[0][1]} of them speak of {_q(terms[0][0])}" + "".join(
            f", {c} of {_q(t)}" for t, c in terms[1:])
    return text + "."


def _shown(ix, items: list[Said], alone: bool = False) -> list[Said]:
    """The best :data:`EXAMPLES` of ``items`` (best first), from distinct works; ``alone`` (the kind's only group):
    twice as many, at most two from a work."""
    from slmgraph.query.theme_topics import _work

    out, used = [], Counter()
    for s in items:
        w = _work(ix.doc_by_id[s.doc_id])
        if used[w] < (2 if alone else 1):
            out.append(s)
            used[w] += 1
        if len(out) == EXAMPLES * (2 if alone else 1):
            break
    return out


def _halves(ix, mine: list[Said], order: dict, noun: str) -> str:
    """"In the first 12 works (“EP-03 …” to “EP-23 …”) 40 are told, in the last 12 (…) 55": the kind's sentences
    in each half of the corpus's works, in corpus order."""
    from slmgraph.query.theme_topics import _work

    works = sorted(order, key=order.get)
    half = len(works) // 2
    first, last = works[:half], works[half:]
    n1 = sum(1 for s in mine if order[_work(ix.doc_by_id[s.doc_id])] < half)
    t = lambda w: _q(work_title(ix, w))  # noqa: E731
    return (f"In the first {len(first)} {noun} ({t(first[0])} to {t(first[-1])}) {_said(n1)}, "
            f"in the last {len(last)} ({t(last[0])} to {t(last[-1])}) {_said(len(mine) - n1)}")


def _trend(ix, counts: dict[str, tuple[int, int]], topic: list[str], topic_counts: tuple[int, int], order: dict,
           noun: str) -> str:
    """What the halves' counts say, as one sentence: the halves of the works in corpus order, which kinds grow or
    fade from the first to the last, and whether the balance of two kinds tips ("Read in corpus order (the first 12
    works, “A” to “B”, then the last 12, “C” to “D”): hopes are voiced about as often in both halves (3 then 4) and
    worries mostly in the later works (1 then 5), as “AI” itself is named in more parts there (47 then 67); the
    balance tips toward worries in the later works."). ``counts``: ``kind -> (first half, last half)``;
    ``topic_counts``: the text units naming the question's topic words ``topic`` in each half; ``order``: work ->
    place in corpus order."""
    works = sorted(order, key=order.get)
    half = len(works) // 2
    lead = f"Read in {order_basis(ix)} ({_halves_named(ix, works, half, noun)})"

    def how(a: int, b: int) -> str:
        if b >= 2 * max(a, 1) and b >= 3:
            return f"mostly in the later {noun}"
        if a >= 2 * max(b, 1) and a >= 3:
            return f"mostly in the earlier {noun}"
        return "about as often in both halves"

    ways = {kind: how(a, b) for kind, (a, b) in counts.items()}
    figures = ", ".join(f"{kind} {a} then {b}" for kind, (a, b) in counts.items())
    if len(counts) > 1 and len(set(ways.values())) == 1:  # one sentence for kinds that move together
        verb = _DONE[next(iter(counts))] if len({_DONE[k] for k in counts}) == 1 else "said"
        text = f"{lead}: {_join(list(counts))} are both {verb} {next(iter(ways.values()))} ({figures})"
    else:
        text = f"{lead}: " + _join([f"{kind} {'are' if a + b != 1 else 'is'} {_DONE[kind]} {ways[kind]} "
                                                f"({a} then {b})" for kind, (a, b) in counts.items()])
    if topic and sum(topic_counts):
        a, b = topic_counts
        rose = sum(y for _, y in counts.values()) > sum(x for x, _ in counts.values())
        fewer = b < a
        link = "though" if rose == fewer else "as"
        text += (f", {link} {_join([_q(w) for w in topic])} itself is named in {'fewer' if fewer else 'more'} parts "
                 f"there ({a} then {b})") if a != b else ""
    kinds = list(counts)
    if len(kinds) == 2:
        (k1, (a1, b1)), (k2, (a2, b2)) = counts.items()
        # the share of the second kind in each half: a shift of a fifth or more is a tipping of the balance
        s1, s2 = a2 / max(a1 + a2, 1), b2 / max(b1 + b2, 1)
        if a1 + a2 and b1 + b2 and abs(s2 - s1) >= 0.2:
            text += f"; the balance tips toward {k2 if s2 > s1 else k1} in the later {noun}"
        elif a1 + a2 and b1 + b2:
            text += f"; the balance of {k1} and {k2} holds"
    return text + "."


def order_basis(ix) -> str:
    """How the corpus is ordered, as an answer says it: "date order" when at least half its documents carry a date,
    "episode order" when they are read by episode number (:func:`slmgraph.query.documents.corpus_documents`), else
    "corpus order"."""
    docs = ix.docs
    if len(docs) > 1 and 2 * sum(1 for d in docs if d.date) >= len(docs):
        return "date order"
    if any(getattr(d, "episode", None) is not None for d in docs):
        return "episode order"
    return "corpus order"


def _episodes_of(ix, works: list[str]) -> list[int] | None:
    """The episode number of each work (of its first document numbering one), or None when one has none."""
    got = []
    for w in works:
        n = next((d.episode for d in ix.docs if getattr(d, "episode", None) is not None
                  and (d.work if d.work is not None else d.doc_id) == w), None)
        if n is None:
            return None
        got.append(n)
    return got


def _halves_named(ix, works: list[str], half: int, noun: str) -> str:
    """"the first 12 works, episodes 5 to 31, then the last 12, episodes 33 to 57" (episode numbers where every work
    has one, else the first and last works' titles)."""
    eps = _episodes_of(ix, works)
    if eps is not None:
        return (f"the first {half} {noun}, episodes {eps[0]} to {eps[half - 1]}, then the last {len(works) - half}, "
                f"episodes {eps[half]} to {eps[-1]}")
    t = lambda w: _q(work_title(ix, w))  # noqa: E731
    return (f"the first {half} {noun}, {t(works[0])} to {t(works[half - 1])}, then the last {len(works) - half}, "
            f"{t(works[half])} to {t(works[-1])}")


#: Clauses shown per kind in each half (:func:`halves_said`), and the least words of one ("AI is opaque").
HALF_CLAUSES = 2
HALF_LEAST = 3


def halves_said(ix, items: list[Said], kinds: list[str], topic: list[str], order: dict, noun: str, nlp) -> str:
    """What the kinds' sentences say of the topic in each half of the works (corpus order), in their words: the
    clauses whose subject is the topic (:func:`slmgraph.query.clauses.subject_clause`), else the smallest clause
    naming it (:func:`slmgraph.query.clauses.topic_clause`), at most :data:`HALF_CLAUSES` per kind and half, each
    speaker's first before anyone's second -- "What they say of “AI” -- in the earlier works, worries: “AI is
    opaque” (Oren Etzioni); in the later works, hopes: “...” (...)".
    "" without a parser (``nlp`` None) or under two clauses."""
    from slmgraph.query.clauses import subject_clause, topic_clause
    from slmgraph.query.theme_model import word_stem
    from slmgraph.query.theme_topics import _work

    if nlp is None or not items:
        return ""
    alternatives = [frozenset(word_stem(w.casefold()) for w in t.split()) for t in topic]
    half = len(order) // 2
    read = [s for s in items if not s.text.rstrip("\"')\u201d\u2019 ").endswith("?")]
    got: dict[tuple[bool, str], list[tuple[str, str]]] = {}
    # a sentence conceding one thing to stress another says what it stresses ("..., but we have to be careful")
    for s, doc in zip(read, nlp.pipe([stressed(s.text) or s.text for s in read])):
        # the topic as the subject first ("AI is opaque"), else the clause naming it ("it's a dangerous thing to
        # sign over to an AI")
        clause = subject_clause(doc, alternatives, HALF_LEAST) or topic_clause(doc, alternatives, HALF_LEAST)
        if clause:
            later = order[_work(ix.doc_by_id[s.doc_id])] >= half
            got.setdefault((later, s.kind), []).append((clause, s.speaker))
    if sum(len(v) for v in got.values()) < 2:
        return ""

    def shown(found: list[tuple[str, str]]) -> str:
        return _join([f"{_q(c)}{f' ({w})' if w else ''}" for c, w in speakers_first(found)[:HALF_CLAUSES]])

    parts = []
    for later, when in ((False, f"in the earlier {noun}"), (True, f"in the later {noun}")):
        said = [f"{kind}: {shown(got[later, kind])}" for kind in kinds if got.get((later, kind))]
        parts.append(f"{when}, " + "; ".join(said) if said else f"{when}, none")
    return f"What they say of {_join([_q(t) for t in topic])} -- " + "; ".join(parts) + "."


def _topic_halves(ix, question: str, order: dict) -> tuple[int, int]:
    """The text units naming a specific topic word of ``question`` (:func:`_specific`) in the first half of the
    works (``order``: work -> place in corpus order) and in the last."""
    from slmgraph.query.theme_model import names_asked
    from slmgraph.query.theme_topics import _work

    specific = _specific(ix, topic_of(question, ix))
    half = len(order) // 2
    got = [order[_work(ix.doc_by_id[u.doc_id])] < half for u in ix.all_units() if names_asked(u.text, specific)]
    return sum(got), len(got) - sum(got)


def _life_course(ix, stories: list[Said], every: bool = False) -> str:
    """Where in a conversation the stories of each stage of life fall (:data:`STAGES`; the median of each stage of
    :data:`slmgraph.query.theme_render.PLACE_LEAST` stories or more, :meth:`ThemeIndex.point_in_work`), over all the
    corpus's stories, and whether they come in the order of a life -- "Where the 55 stories fall in a
    conversation (...): childhood and family at 15 %, school and university at 14 %, first jobs and careers at 23 %;
    so they are told in the order of a life, its early years first (each work apart: 4 of the 5 works ... open on the earliest stage they tell)."; "" with
    under three stages placed or in a corpus
    whose works are single text units. ``every``: ``stories`` are all the corpus's, not only those the answer counts
    ("Where all the corpus's 55 sentences telling stories fall ...")."""
    from slmgraph.query.theme_render import in_order, place_text

    found = _stages_placed(ix, stories)
    if not found:
        return ""
    text = (f"Where {'all the corpus' + chr(39) + 's' if every else 'these'} {len(stories)} sentences telling stories fall in a conversation (the median point of each stage, "
            f"from a conversation's opening at 0 % to its end at 100 %): {place_text(found)}")
    if in_order(found):
        text += "; so they are told in the order of a life, its early years first"
    else:
        text += "; so they do not follow the order of a life"
    works, ordered = _ordered_works(ix, stories)
    if works:  # a median hides the works that tell their stages another way
        text += (f" (each work apart: {ordered} of the {works} works telling two stages or more open on the earliest "
                 f"stage they tell)")
    return text + "."


def _stages_placed(ix, stories: list[Said]) -> list:
    """The stages of life the ``stories`` tell placed in a conversation
    (:func:`slmgraph.query.theme_render.placed`: ``[(stage, median point)]``), [] with under three placed or in a
    corpus whose works are single text units."""
    from slmgraph.query.theme_render import no_course, placed

    if no_course(ix, (s.doc_id for s in stories)):
        return []
    by: dict[str, list[float]] = {}
    for s in stories:
        by.setdefault(stage_of(s.text), []).append(ix.point_in_work(s.doc_id, s.unit))
    found = placed([(label, by.get(label, [])) for label, _ in STAGES])
    return found if len(found) >= 3 else []  # two stages make no order of a life


def structure_lead(ix, stories: list[Said], held: list[tuple[str, int, list[str], list[str]]]) -> str:
    """For a question about how stories are built (:data:`_STRUCTURE`), the answer in one sentence, from
    :func:`_life_course`'s order and :func:`elements`: "In short, the stories follow a life's order (the earlier
    stages told first in 4 of the 4 works telling two or more), set their scenes with an age or a year (27
    sentences, 5 speakers) and credit luck or chance (16 sentences, 4 speakers)."; "" with neither."""
    from slmgraph.query.theme_render import in_order

    parts = []
    found = _stages_placed(ix, stories)
    if found:
        works, ordered = _ordered_works(ix, stories)
        each = f" (the earliest stage told first in {ordered} of the {works} works telling two or more)" if works else ""
        parts.append(("follow a life's order, from childhood and school to work" if in_order(found)
                      else "do not follow a life's order") + each)
    for label, n, who, words in held:
        parts.append(f"{_ELEMENT_VERBS.get(label, 'hold ' + label)} ({n} sentence{'s' if n != 1 else ''}, "
                     f"{len(who)} speakers: {', '.join(_q(w) for w in words[:2])})")
    return f"In short, the stories {_join(parts)}." if parts else ""


def _element_quotes(ix, told: list[Said], held: list, question: str, embedder,
                    taken: list[Said]) -> list[tuple[str, list[Said], list[Said]]]:
    """``[(element, sentences, shown)]``: for each of ``held`` (:func:`elements` of ``told``) the statements of
    ``told`` holding its cue
    (counted as :func:`elements` counts them) and those shown (:func:`_shown`), nearest ``question`` first, none of
    ``taken`` (quoted elsewhere in the answer) nor of an element before."""
    from slmgraph.query.extractive import _embed

    used = {(s.source, s.text) for s in taken}
    out = []
    for label, _, _, _ in held:
        cue = dict(ELEMENTS)[label]
        items = [s for s in told if cue.search(_straight(s.text))]
        free = [s for s in items if (s.source, s.text) not in used]
        if not free:
            continue
        v = _embed([s.text for s in free] + [question], embedder)
        if v is not None:
            free = [s for _, s in sorted(zip(v[:-1] @ v[-1], free), key=lambda x: -x[0])]
        shown = _shown(ix, free)
        out.append((label, items, shown))
        used |= {(s.source, s.text) for s in shown}
    return out


def _ordered_works(ix, stories: list[Said]) -> tuple[int, int]:
    """``(works, ordered)``: the works whose stories tell two stages of life or more (:func:`stage_of`, "other
    moments" aside), and how many of them open on the earliest stage they tell (their first story is of it)."""
    from slmgraph.query.theme_topics import _work

    rank = {label: i for i, (label, _) in enumerate(STAGES)}
    told: dict[str, list[tuple[float, int]]] = {}
    for s in stories:
        stage = stage_of(s.text)
        if stage in rank:
            told.setdefault(_work(ix.doc_by_id[s.doc_id]), []).append((ix.point_in_work(s.doc_id, s.unit), rank[stage]))
    works = [sorted(v) for v in told.values() if len({r for _, r in v}) >= 2]
    ordered = sum(1 for v in works if v[0][1] == min(r for _, r in v))
    return len(works), ordered


def _verb(phrase: str, n: int) -> str:
    """``phrase`` ("tell stories of their own") for ``n`` sentences: its verb in the singular for one ("tells")."""
    verb, _, rest = phrase.partition(" ")
    return phrase if n != 1 else f"{verb}s {rest}"


def _said(n: int) -> str:
    return f"{n} {'is' if n == 1 else 'are'} said"


def motifs(ix, items: list[Said], question: str, embedder) -> list[tuple[list[str], list[str]]]:
    """``[(phrases, speakers)]``: what recurs across the speakers of ``items``, the most speakers first, at most
    :data:`MOTIFS`: the concept phrases of the index (:meth:`ThemeIndex.unit_phrases`) the sentences write, none of
    the question's words nor :data:`_FRAME`, each in at most :data:`MOTIF_SHARE` of the text units, phrases nearer
    than :data:`MOTIF_JOIN` by the embedder joined ("father", "dad"), each kept when at least
    :data:`MOTIF_SPEAKERS` named speakers say it (two, where only two speak); phrases as the index keys them,
    speakers in first-said order.
    [] without phrases in the index or an embedder."""
    from slmgraph.query.extractive import _embed
    from slmgraph.query.theme_model import word_stem

    units = ix.unit_by_number()
    chunks = {s.source: units[s.source].chunk_id for s in items if s.source in units}
    found = ix.unit_phrases(list(dict.fromkeys(chunks.values())))
    if not found or embedder is None:
        return []
    asked = {word_stem(w) for w in re.findall(r"[a-z]+", question.casefold())}
    df, n = ix.phrase_units, max(1, len(units))
    who: dict[str, list[str]] = {}
    for s in items:
        if not s.speaker:
            continue
        for key, surface in dict.fromkeys(found.get(chunks.get(s.source), [])):
            words = key.split()
            if (len(key) < 3 or df.get(key, 0) > MOTIF_SHARE * n or any(w in _FRAME for w in words)
                    or any(word_stem(w) in asked for w in words)
                    or not re.search(r"(?i)\b" + re.escape(surface) + r"\b", s.text)):
                continue
            if s.speaker not in who.setdefault(key, []):
                who[key].append(s.speaker)
    keys = sorted((k for k in who), key=lambda k: (-len(who[k]), df.get(k, 0), k))
    if not keys:
        return []
    vec = dict(zip(keys, _embed(keys, embedder)))
    groups: list[list[str]] = []
    for k in keys:  # each joins the first group whose head it is near, as the most spoken head stands for it
        g = next((g for g in groups if float(vec[g[0]] @ vec[k]) >= MOTIF_JOIN), None)
        if g is None:
            groups.append([k])
        else:
            g.append(k)
    least = max(2, min(MOTIF_SPEAKERS, len({s.speaker for s in items if s.speaker})))
    out = []
    for g in groups:
        speakers = list(dict.fromkeys(p for s in items for p in [s.speaker] if any(p in who[k] for k in g)))
        if len(speakers) >= least:
            out.append((g, speakers))
    out.sort(key=lambda m: -len(m[1]))
    return out[:MOTIFS]


#: What a story holds, the elements of a telling (Labov & Waletzky 1967 on oral narrative: its orientation, its
#: complicating action and its resolution; Campbell's mentor): ``(label, cue)``, cues with straightened apostrophes.
ELEMENTS = tuple((label, re.compile(r"(?i)\b(" + cue + r")\b")) for label, cue in (
    ("an age or a year that sets the scene", r"(19|20)\d\d|(at|when i was) (\d{1,2}|six|seven|eight|nine|ten|eleven|"
                                             r"twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen)|"
                                             r"\d{1,2}[- ]years?[- ]old|years ago|back then"),
    ("a turning point", r"(i|we) (suddenly |finally |eventually )?(realized|realised|decided|discovered|figured out)|"
                        r"that's when|that was when|turning point|changed (my life|everything)|it clicked|"
                        r"light ?bulb|aha moment"),
    ("a parent, teacher or mentor who set them on their way", r"mentors?|taught me|encouraged me|inspired me|"
                        r"showed me|pushed me|introduced me|took me under|learn(ed|t)? from my"),
    ("luck or chance", r"lucky|luck|fortunate|by accident|accidentally|serendip\w*|by chance|happened to"),
    ("a setback", r"failed|failures?|rejected|got fired|was fired|dropped out|went (bankrupt|under)|"
                  r"struggled|didn't work|was terrible at|flunked"),
))
#: Words of a passion found in the work itself ("excited about one of the Landing.AI projects").
_WORK = re.compile(r"(?i)\b(work|working|job|projects?|compan(y|ies)|startups?|research|engineering|labs?|careers?|"
                   r"build(ing)?|teams?|products?|science|discipline|industry|YC|AI)\b")
#: Words placing a passion away from the work ("Outside work I love Carnatic singing").
_OFF_WORK = re.compile(r"(?i)\b((outside|beyond|away from|besides|apart from|after)( of)? (my |the |our )?(work|job|office|"
                       r"lab)|when i'?m not (working|at work)|in my (spare|free) time|for fun|on weekends|"
                       r"with my (son|daughter|kids|children|wife|husband|partner|family|grandchildren))\b")


def at_work(text: str) -> bool:
    """True when a sentence of passion finds it in the work itself (:data:`_WORK`), not away from it (:data:`_OFF_WORK`)."""
    text = _straight(text)
    return bool(_WORK.search(text)) and not _OFF_WORK.search(text)


#: The passions' two groups (:func:`_groups`).
AT_WORK, BESIDE_WORK = "the work itself", "beside the work"
#: What a story does with each element, as a verb phrase of :func:`structure_lead`.
_ELEMENT_VERBS = {ELEMENTS[0][0]: "set their scenes with an age or a year", ELEMENTS[1][0]: "turn on a moment of decision",
                  ELEMENTS[2][0]: "credit a parent, teacher or mentor", ELEMENTS[3][0]: "credit luck or chance",
                  ELEMENTS[4][0]: "tell of setbacks"}
#: A question about how stories are built.
_STRUCTURE = re.compile(r"(?i)\b(narrative|structures?|arcs?|how (do|does) (\w+ ){1,2}(tell|recount|narrate))\b")
#: Speakers an element needs before the answer names it.
ELEMENT_SPEAKERS = 2


def elements(items: list[Said]) -> list[tuple[str, int, list[str], list[str]]]:
    """``[(element, sentences, speakers, cue words as said)]``: the :data:`ELEMENTS` the story sentences ``items``
    hold, each said by at least :data:`ELEMENT_SPEAKERS` speakers, the most told first."""
    out = []
    for label, cue in ELEMENTS:
        said = [(s, m.group(0)) for s in items for m in [cue.search(_straight(s.text))] if m]
        who = list(dict.fromkeys(s.speaker for s, _ in said if s.speaker))
        if len(who) >= ELEMENT_SPEAKERS:
            words = list({w.casefold(): re.sub(r"^i\b", "I", w) for _, w in reversed(said)}.values())[::-1]
            out.append((label, len(said), who, words))
    return sorted(out, key=lambda e: (-e[1], e[0]))


def elements_sentence(found: list[tuple[str, int, list[str], list[str]]], every: int = 0) -> str:
    """What :func:`elements` found, as one sentence ("What the stories hold: a turning point in 12 sentences of 7
    speakers (“i realized”, “i decided”); luck or chance in 8 ..."); "" with none. ``every``: over all the corpus's
    ``every`` story sentences, not only those the answer counts."""
    if not found:
        return ""
    # the elements are read in every sentence of a speaker's own past, not only the plainly told stories counted
    # before: saying so keeps the two counts from reading as one
    lead = (f"Read in all {every} of the corpus's sentences in which speakers tell of their own past (the plainly "
            f"told stories among them), what" if every else "What")
    return f"{lead} the stories hold: " + "; ".join(
        f"{label} in {n} sentence{'s' if n != 1 else ''} of {len(who)} speakers ({', '.join(_q(w) for w in words[:3])})"
        for label, n, who, words in found) + "."


#: Verbs an imperative of advice opens on ("Learn statistics.", "Talk to your users every week.").
_ADVICE_VERBS = (r"be|have|find|pick|learn|do|get|go|try|take|make|keep|stay|start|ask|read|follow|work|build|study|"
                 r"trust|stop|look|listen|spend|choose|talk|play|cook|count|finish|solve|hire|know|volunteer|record|"
                 r"come|write|practi[cs]e|surround|seek|care|focus|travel|save|check|say|use|join|treat|give|put|"
                 r"sharpen|measure|ship|protect|buy|remember|question|ignore|apply|visit|call|meet|fail|rest|sleep|"
                 r"survey|pay|photograph|clear|plan|prepare|document|insure|train|share|spend|invest|teach|clean|"
                 r"fix|repair|store|sell|sign|collect|send|avoid|embrace|accept|respect|value|enjoy|celebrate|"
                 r"forgive|breathe")
#: What a sentence of advice advises: an imperative opening it (after "so", "and", "first", ...), or the words after
#: "my advice is", "Advice:", "you've got to", "don't be afraid to" (apostrophes straightened).
_ADVISES = re.compile(r"(?i)^(?:(?:so|and|but|first|second|third|finally|also|well|yeah|oh|just),?\s+)*(?P<imp>(?:don't |do not |"
                      r"never )?(?:" + _ADVICE_VERBS + r")\b[^.;!?]*)|(?:\badvice\b[^.;!?]{0,40}?\b(?:is|was),?\s+(?:like,?\s+)?|"
                      r"\badvice\b[^.;!?:]{0,40}?:\s*|"
                      r"\byou(?:'ve| have)? (?:got to|have to|need to|should) (?:[^.;!?]{0,12}?\byou (?:have|need) to )?|"
                      r"\bwhat you (?:want|need|have|ought) to do is,?\s+)"
                      r"(?P<obj>[^.;!?]+)|(?P<afraid>\b(?:don't|do not|never) be afraid to [^.;!?]+)|"
                      r"^(?:(?:and|so|but),?\s+)*if [^,;.!?]{3,60},\s*(?P<cond>(?:don't |do not |never )?(?:"
                      + _ADVICE_VERBS + r")\b[^.;!?]*)")
#: Where the words of advice end: a reason or a new clause.
_ADVICE_END = re.compile(r"(?i)(,?\s+\b(because|so that|since|which|but i|and i|and then)\b.*$)|;.*$")
#: The most words of advice shown, and the most speakers.
ADVICE_WORDS, ADVISERS = 14, 10


def advises(items: list[Said]) -> list[tuple[str, str]]:
    """``[(what is advised, speaker)]``: the advice of the speakers of ``items`` in their words (:data:`_ADVISES`: an
    imperative, or what follows "my advice is", "you have to", "don't be afraid to"), a reason after it dropped, at
    most :data:`ADVICE_WORDS` words (up to a comma, where longer); each speaker's first before anyone's second, in
    first-said order, at most :data:`ADVISERS`."""
    out: list[tuple[str, str]] = []
    for s in items:
        if not s.speaker:
            continue
        said = advice_in(s.text)
        if said and not any(said.casefold() == x.casefold() for x, _ in out):
            out.append((said, s.speaker))
    return speakers_first(out)[:ADVISERS]


def advice_in(text: str) -> str:
    """What ``text`` advises (:data:`_ADVISES`), a reason after it dropped, 2 to :data:`ADVICE_WORDS` words (up to a
    comma, where longer); "" when it advises nothing ("I get asked for advice a lot.")."""
    if " \u2026 " in text:  # an announcement joined to the advice it goes on to give (:func:`with_advice`)
        return next((a for a in map(advice_in, reversed(text.split(" \u2026 "))) if a), "")
    m = _ADVISES.search(_straight(text).strip())
    if m is None:
        return ""
    said = _ADVICE_END.sub("", (m.group("imp") or m.group("obj") or m.group("afraid") or m.group("cond")
                                or "").strip())
    if len(said.split()) > ADVICE_WORDS:
        said = said.split(",")[0]
    said = re.sub(r"(?i)^(this|that|simple|simply)\s*[:,\u2013-]\s*", "", said.strip(" ,-\u2013"))
    return said if 2 <= len(said.split()) <= ADVICE_WORDS else ""


#: Sentences of the same turn read after one that announces advice without giving it, for the advice itself.
ADVICE_AHEAD = 8
#: A sentence announcing advice ("I get a lot of requests to give advice to kids", "Talking about advice for kids").
_ANNOUNCES = re.compile(r"(?i)\b(advice|advise|mentor\w*|tell (young|kids|students|people)|tell (every|each|all|my) "
                        r"\w+)\b")


def with_advice(ix, items: list[Said]) -> list[Said]:
    """``items`` with each sentence of advice that names advice without giving it (:data:`_ANNOUNCES`, no
    :func:`advice_in`) joined to the first of the next :data:`ADVICE_AHEAD` sentences of the speaker's turn that
    gives it ("I get requests to give advice to kids. … what you want to do is create a unique combination of
    skills"); others as they are."""
    from dataclasses import replace

    from slmgraph.query.extractive import prose_sentences
    from slmgraph.query.theme_model import _sentence_at, _turns, spoken

    out = []
    for s in items:
        if s.kind != "advice" or advice_in(s.text) or not _ANNOUNCES.search(s.text):
            out.append(s)
            continue
        u = ix.unit_by_number().get(s.source)
        at = _sentence_at(u.text, s.text) if u is not None else -1
        if at < 0:
            out.append(s)
            continue
        end = next((start for start, _ in _turns(u.text) if start > at), len(u.text))
        ahead = [spoken(x) for x in prose_sentences(u.text[at:end])][1:ADVICE_AHEAD + 1]
        gives = next((x for x in ahead if advice_in(x)), "")
        out.append(replace(s, text=f"{s.text} \u2026 {gives}") if gives else s)
    return out


#: What a piece of advice is about, read in its words (:func:`advice_in`): ``(label, cue)``, the cue found first
#: deciding; advice matching none is "other advice". The kinds of counsel a career or a craft is given in, as the interviews a
#: corpus holds give it.
ADVICE_KINDS = tuple((label, re.compile(r"(?i)\b(" + cue + r")\b")) for label, cue in (
    ("what to work on", r"pick|choose|problems?|questions?|passion\w*|interest(ed|s|ing)?|love|care about|"
                        r"work on|focus on|find (something|what|the thing|your)"),
    ("other people", r"mentors?|ask|people|network\w*|team\w*|friends?|help|listen to|collaborat\w*|talk to|"
                     r"customers?|users?|someone who|\w+ who (will|would|can) (tell|teach|show)"),
    ("learning and skills", r"learn\w*|stud(y|ies|ying)|read|skills?|courses?|class(es)?|school|online|teach "
                            r"yourself|disciplines?|fields?|practi[cs]e|curious|curiosity|math|code|coding|program\w*|"
                            r"fundamentals|engineering"),
    ("risk and persistence", r"afraid|fear|fail\w*|risks?|stray|try|tried|keep going|persist\w*|resilien\w*|fool|"
                             r"mistakes?|give up|quit|patien\w*|stick"),
    ("a life beyond work", r"hobb(y|ies)|outside|balance|rest|family|health|sleep|fun|enjoy"),
))
OTHER_ADVICE = "other advice"


def advice_kind(advice: str) -> str:
    """The :data:`ADVICE_KINDS` label of what ``advice`` (the words of :func:`advice_in`) is about: the kind whose cue
    comes first in it (what is advised leads: "learn chemistry with friends" is learning), the table's order on a
    tie; else :data:`OTHER_ADVICE`."""
    found = [(m.start(), i, label) for i, (label, cue) in enumerate(ADVICE_KINDS) for m in [cue.search(advice)] if m]
    return min(found)[2] if found else OTHER_ADVICE


def advice_lead(found: list[tuple[str, str]]) -> str:
    """"In short, the advice is of three kinds: what to work on (“pick hard problems”, David Baker); learning and
    skills (...); and a life beyond work (...)." over :func:`advises`' advice (advice of no kind last, as "other
    advice"); "" when it falls under fewer than two of :data:`ADVICE_KINDS`."""
    by: dict[str, list[tuple[str, str]]] = {}
    for a, who in found:
        by.setdefault(advice_kind(a), []).append((a, who))
    kinds = [label for label, _ in ADVICE_KINDS if label in by]
    if len(kinds) < 2:
        return ""
    n = len(kinds)
    parts = [f"{label} ({'; '.join(f'{_q(a)}, {who}' for a, who in by[label])})"
             for label in kinds + ([OTHER_ADVICE] if OTHER_ADVICE in by else [])]
    return (f"In short, the advice is of {_NUMBER_WORDS.get(n, str(n))} kinds"
            f"{', and some of none of them' if OTHER_ADVICE in by else ''}: " + "; ".join(parts[:-1])
            + "; and " + parts[-1] + ".")


_NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five"}


def advises_sentence(found: list[tuple[str, str]], every: int = 0) -> str:
    """What :func:`advises` found, as one sentence ("What they advise, in their own words: “pick hard problems that
    aren't solved” (David Baker); “have a hobby” (Justine Ezarik)."); "" with under two. ``every``: of all the
    corpus's ``every`` sentences of advice, not only those the answer counts."""
    if len(found) < 2:
        return ""
    lead = f"Across all the corpus's {every} sentences of advice, what" if every else "What"
    return f"{lead} they advise, in their own words: " + "; ".join(f"{_q(a)} ({who})" for a, who in found) + "."


#: What a speaker says they love: the words after "I love", "I'm passionate about", "my passion is", "fascinated me
#: the most was" (apostrophes straightened), up to a clause's end.
_LOVES = re.compile(r"(?i)\b(?:i (?:really |just |absolutely |always |also )?(?:love|loved|adore|adored|enjoy|enjoyed)(?: to)?"
                    r"|i(?:'m| am| was| feel| felt) (?:super |really |very |so |quite )?passionate(?: about)?"
                    r"|my (?:real |great |biggest )?passion (?:is|was|for)|fascinated me (?:the )?most (?:was|is))"
                    r" (?P<obj>[^,.;:!?\u2013\u2014\"]+)")
#: Where an object of love ends: a new clause.
_CLAUSE = re.compile(r"(?i)\s\b(because|as|when|while|which|who|where|since|if|but|so|and i|and then|and that|"
                     r"that (i|we|you|it)|in the|at the time|by the way)\b.*$")
#: Words before an object that say nothing of it ("that type of brainstorming", "sort of firsthand accounts").
_HEDGES = re.compile(r"(?i)\b(sort of|kind of|that type of|this type of|the idea of|like,?|just|really)\s+")
#: An object that is no thing loved: a pronoun or a clause ("I love that you do this", "I love it").
_NO_OBJECT = re.compile(r"(?i)^(it|that|this|them|these|those|you|him|her|us|what|how|the fact|to|being able|called|"
                        r"named|about|and|or|but|is|was|(do|be|go|get|make|see|say|hear|know|think)$)\b")
#: The most objects of love listed, and their most words.
LOVES, LOVE_WORDS = 12, 7


def loves(items: list[Said]) -> list[tuple[str, list[str]]]:
    """``[(what is loved, its speakers)]``: the objects of love ``items`` name (:data:`_LOVES`; clauses, hedges and
    pronouns dropped; at most :data:`LOVE_WORDS` words), one per speaker and object, in first-said order, objects
    differing only in case or a final "s" joined; at most :data:`LOVES`, each speaker's first before anyone's second."""
    out: dict[str, tuple[str, list[str]]] = {}
    for s in items:
        for m in _LOVES.finditer(_straight(s.text)):
            obj = re.sub(r"(?i)\s+(and|or|but|the|a)$", "", _CLAUSE.sub("", _HEDGES.sub("", m.group("obj"))).strip(" -'"))
            if not obj or _NO_OBJECT.match(obj) or len(obj.split()) > LOVE_WORDS:
                continue
            key = obj.casefold().rstrip("s")
            _, who = out.setdefault(key, (obj, []))
            if s.speaker and s.speaker not in who:
                who.append(s.speaker)
    rank: Counter = Counter()
    order = []
    for obj, who in out.values():  # the nth object of its first speaker
        first = who[0] if who else ""
        order.append((rank[first], len(order), obj, who))
        rank[first] += 1
    return [(obj, who) for _, _, obj, who in sorted(order)][:LOVES]


def passions_lead(items: list[Said], loved: list[tuple[str, list[str]]]) -> str:
    """For a question about passions, the answer in one sentence: the passions found in the work itself
    (:data:`_WORK`; each speaker's first, as the words from its cue on, at most :data:`LOVE_WORDS` + 4 words) and
    those beside it (:func:`loves`) -- "In short, what drives them is of two kinds: the work itself (“so excited
    about one of the Landing.AI projects” (Andrew Ng); ...) and what they love beside it (“reading firsthand
    accounts of people” (Sam Altman); ...)."; "" with under two of either."""
    said: dict[str, str] = {}
    for s in items:
        if not s.speaker or s.speaker in said or not at_work(s.text):
            continue
        cue = next((m for pat, _ in KINDS["passions"][2] for m in [pat.search(_straight(s.text))] if m), None)
        said[s.speaker] = _cut(_straight(s.text)[cue.start() if cue else 0:].rstrip(" .!?"), LOVE_WORDS + 4)
    away = lead_loves(loved)
    if len(said) < 2 or len(away) < 2:
        return ""
    work = "; ".join(f"{_q(w)} ({p})" for p, w in list(said.items())[:3])
    love = "; ".join(f"{_q(obj)}{f' ({_join(who)})' if who else ''}" for obj, who in away)
    return f"In short, what drives them is of two kinds: the work itself ({work}) and what they love beside it ({love})."


def _cut(text: str, most: int) -> str:
    """``text`` whole within ``most`` + 4 words, else to its first clause's end (a comma, a semicolon or a dash) where
    that comes within them, else to ``most`` words and " ...", words such as "to" or "in" left trailing dropped: a cut ending on a
    preposition reads as a fault."""
    from slmgraph.text.language import stop_words

    whole = text.split()
    if len(whole) <= most + 4:
        return " ".join(whole)
    clause = re.split(r"\s*[,;]\s+|\s+[-\u2013\u2014]+\s+", text, maxsplit=1)[0].split()
    if len(clause) <= most + 4:
        return " ".join(clause)
    words = clause[:most]
    while len(words) > 2 and words[-1].casefold() in stop_words("en"):
        words.pop()
    return " ".join(words) + " ..."


def lead_loves(loved: list[tuple[str, list[str]]]) -> list[tuple[str, list[str]]]:
    """The objects of :func:`loves` that :func:`passions_lead` names beside the work: the first three away from it."""
    return [(obj, who) for obj, who in loved if not at_work(obj)][:3]


def loves_sentence(found: list[tuple[str, list[str]]], every: int = 0) -> str:
    """What :func:`loves` found, as one sentence ("What they say they love: brainstorming (Bill Gates); reading
    firsthand accounts of people (Sam Altman)."); "" with under two objects. ``every``: the objects are of all the
    corpus's ``every`` sentences of the kind, not only those the answer counts ("Across all the corpus's 108 ...")."""
    if len(found) < 2:
        return ""
    lead = f"Across all the corpus's {every} sentences of passion, what" if every else "What"
    return f"{lead} they say they love: " + "; ".join(
        f"{_q(obj)}{f' ({_join(who)})' if who else ''}" for obj, who in found) + "."


def motif_sentence(found: list[tuple[list[str], list[str]]]) -> str:
    """What :func:`motifs` found, as one sentence ("What recurs across speakers: “school” (4 speakers: ...); ...");
    "" without any."""
    if not found:
        return ""
    said = lambda keys: _q(keys[0]) if len(keys) == 1 else ", ".join(map(_q, keys[:-1])) + " or " + _q(keys[-1])  # noqa: E731
    parts = [said(keys[:3]) + f" ({len(who)} speakers: {_join(who)})" for keys, who in found]
    return "What recurs across speakers: " + "; ".join(parts) + "."


def kinds_answer(ix, question: str, embedder, parse=None) -> tuple[str, list[dict], list[int]] | None:
    """``(answer text, points, cited unit numbers)`` for a question asking for statements of a kind
    (:func:`kinds_asked`; see the module doc), or None when it asks for none, without an embedder, or when fewer
    than :data:`MIN_FOUND` such sentences in :data:`MIN_WORKS` works are found (the answer by theme is given).
    ``parse``: ``() -> spaCy pipeline with a parser or None``, called only for a question about change over time
    naming a topic (:func:`halves_said`)."""
    from slmgraph.query.theme_topics import _work

    kinds = kinds_asked(question)
    if not kinds or embedder is None:
        return None
    every = found(ix, question, kinds)
    said, on = _on_topic(ix, every, question)
    said = _strong(said)
    if "advice" in kinds:  # an announcement of advice is quoted with the advice it goes on to give
        said = with_advice(ix, said)
    works_of = lambda items: {_work(ix.doc_by_id[s.doc_id]) for s in items}  # noqa: E731
    # a question about the hosts themselves reads their few sentences, one asking which speakers a few; a
    # corpus-wide kind needs more
    least, spread = ((1, 1) if _THE_HOST.search(question) and corpus_hosts(ix) else
                     (WHICH_FOUND, 1) if _WHO_SAYS.search(question) else (MIN_FOUND, MIN_WORKS))
    if len(said) < least or len(works_of(said)) < spread:
        return None
    picked = _pick(ix, said, question, embedder, kinds)
    n_works = len({_work(d) for d in ix.docs})
    noun = "works" if any(d.work for d in ix.docs) else "documents"
    cites = Quotes(ix)
    line, point = cites.line, cites.point
    heads, parts = [], []
    change = bool(_CHANGE.search(question))
    order = {w: i for i, w in enumerate(dict.fromkeys(_work(d) for d in ix.docs))}
    halves: dict[str, tuple[int, int]] = {}
    trend = change and len(order) >= 4 and sum(1 for s in said if s.kind in kinds) >= TREND_LEAST
    for kind in kinds:
        mine = [s for s in said if s.kind == kind]
        if not mine:
            continue
        name = KINDS[kind][1]
        chosen = [s for s in picked if s.kind == kind]
        spread = works_of(mine)
        where = f"all {n_works} {noun}" if len(spread) == n_works else f"{len(spread)} of the {n_works} {noun}"
        # replies to a host naming the topic are on it without naming it
        about = (f" {'on' if any(s.lead for s in mine) else 'naming'} {_join([_q(w) for w in on])}" if on else "")
        head = f"{len(mine)} sentence{'s' if len(mine) != 1 else ''} {_verb(name, len(mine))}{about} in {where}"
        per = Counter(_work(ix.doc_by_id[s.doc_id]) for s in mine)
        top = per.most_common(2)
        if len(top) > 1 and top[0][1] > top[1][1]:
            head += f", most in {_q(work_title(ix, top[0][0]))} ({top[0][1]})"
        # a question about passions away from the work asks for no split between the two
        groups = [] if change else _groups(ix, chosen, kind, embedder, not _OFF_WORK.search(question))
        # the passions at work and beside it are two sides of one answer: each shows as many as a lone group
        shown = {label: _shown(ix, items, len(groups) == 1 or label in (AT_WORK, BESIDE_WORK)) for label, items in groups}
        quoted = chosen if change else [s for v in shown.values() for s in v]
        if quoted:
            head += (f"; {'it is' if len(mine) == 1 else f'{len(quoted)} of the nearest the question are'} quoted, "
                     f"by {_by(quoted) or 'unnamed speakers'}")
        if groups and any(label != OTHER_STAGE for label, _ in groups):
            by = "by stage of life" if kind == "stories" else "by what they advise" if kind == "advice" else \
                "by meaning"
            # the groups hold the sentences nearest the question, not all the kind's: say so, or the counts disagree
            of = f"Of the {len(chosen)} nearest the question, grouped {by}" if len(chosen) < len(mine) else \
                f"Grouped {by}"
            head += (f". {of}, they speak of " + _join(
                [f"{label} ({len(items)}, in {len(works_of(items))} {noun if len(works_of(items)) != 1 else noun[:-1]})"
                 for label, items in groups if label != OTHER_STAGE]))
        if change and len(order) >= 4:
            if not trend:  # too few for a trend: each kind's halves are said on their own
                head += ". " + _halves(ix, mine, order, noun)
            first = sum(1 for s in mine if order[_work(ix.doc_by_id[s.doc_id])] < len(order) // 2)
            halves[kind] = (first, len(mine) - first)
        heads.append(head + ".")
        # a question's topic narrows the kind's sentences too far to read how they are told: all the corpus's are read
        pool = with_advice(ix, _strong([s for s in every if s.kind == kind])) if on else mine
        course = _life_course(ix, pool, bool(on)) if kind == "stories" else ""
        if course:
            heads.append(course)
        # the elements a telling is built of are read in every sentence telling a story, however faintly cued
        told = [s for s in every if s.kind == kind and s.ok] if kind == "stories" else []
        told_elements = elements(told)
        held = elements_sentence(told_elements, len(told)) if told else ""
        if held:  # what the stories share as stories
            heads.append(held)
        if kind == "stories" and _STRUCTURE.search(question):  # how stories are built, answered first
            heads.insert(0, structure_lead(ix, pool, told_elements))
        given = advises(pool) if kind == "advice" else []
        advised = advises_sentence(given, len(pool) if on else 0)
        lead = advice_lead(given) if advised else ""
        if lead:  # the advice itself by what it is about, answered first: it holds every piece the list would
            heads.insert(0, lead)
        elif advised:  # the advice itself, each speaker's in a line, is what the question asks for
            heads.append(advised)
        all_loved = loves(pool) if kind == "passions" else []
        first = passions_lead(mine, all_loved) if kind == "passions" and not _OFF_WORK.search(question) else ""
        # what the opening sentence already names beside the work is not listed again
        in_lead = lead_loves(all_loved) if first else []
        loved = loves_sentence([x for x in all_loved if x not in in_lead], len(pool) if on else 0)
        if loved:  # what each loves says what drives them better than any group of their sentences
            heads.append(loved)
        if first:  # the work and what beside it, answered first
            heads.insert(0, first)
        recurs = motif_sentence(motifs(ix, mine, question, embedder))
        if recurs:  # what the speakers' sentences have in common, beyond the groups each belongs to
            heads.append(recurs)
        if change:  # work by work in corpus order, so what changes can be read
            chosen.sort(key=lambda s: (order[_work(ix.doc_by_id[s.doc_id])], s.unit))
            title = f"### {kind.capitalize()}, {noun[:-1]} by {noun[:-1]}"
            # what the kind's sentences speak of, so the change can be read as a change of subject too
            parts.append("\n".join([title, _group_line(ix, chosen, noun)] + [line(s) for s in chosen]))
            point(kind, chosen)
            continue
        if kind == "stories" and _STRUCTURE.search(question):  # each element of the stories, shown at work
            for label, items, shown_here in _element_quotes(ix, told, told_elements, question, embedder, chosen):
                # an element's sentences share a way of telling, not a subject: the phrases they share say nothing
                parts.append("\n".join([f"### {label[0].upper() + label[1:]}", _group_line(ix, items, noun, False)]
                                       + [line(s) for s in shown_here]))
                point(label, shown_here)
            groups = [(label, items) for label, items in groups if label != OTHER_STAGE]
        for label, items in groups:
            title = label if len(groups) > 1 or label != OTHER_STAGE else kind
            # the kind's one group stands for all its sentences, as the opening counts them
            counted = mine if len(groups) == 1 else items
            parts.append("\n".join([f"### {title[0].upper() + title[1:]}", _group_line(ix, counted, noun)]
                                   + [line(s) for s in shown[label]]))
            point(label, shown[label])
    if not parts:
        return None
    if trend:
        # a question about change is answered by the change: the trend and what each half says lead, the counts follow
        said_halves = halves_said(ix, [s for s in said if s.kind in kinds], kinds, on, order, noun, parse()) if (
            on and parse is not None) else ""
        heads[:0] = [_trend(ix, halves, on, _topic_halves(ix, question, order) if on else (0, 0), order, noun),
                     said_halves]
    return cites.answer([" ".join(h for h in heads if h)] + parts)
