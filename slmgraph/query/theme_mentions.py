"""How often, and by whom, a corpus's speakers name what a question asks about ("How often do guests mention
collaboration with other companies or industry rivals?", "Which guests talk about company culture?"), answered
without a model.

A question asking how often something is said, or which speakers say it, asks for a count and a list of names,
which no community report holds: the answer counts the corpus's own mentions.

* **The asked terms** (:func:`asked_terms`): a phrase of two or three of the question's words that the corpus
  holds as a concept (``concept_mentions``) in at least :data:`MIN_UNITS` text units ("company culture"); else
  the question's specific topic words (:func:`slmgraph.query.theme_kinds.topic_of`) found in at most
  :data:`ANCHOR_SHARE` of the text units, the rarest first ("collaboration", "rivals": not "companies", which
  most units hold); else its rarest topic word.
* **Coverage**: the text units and works naming each term, whoever speaks.
* **Who says it**: the sentences naming a term (:func:`slmgraph.query.theme_kinds.guest_sentences`: the hosts'
  own left out unless the question names them), counted by speaker and by work, each quoted by its cosine with
  the question.

A question asking what the speakers think of a named thing ("How do guests perceive the Coastal Housing Act?",
"What are the guests' views on the CHA?") is answered as "which": a view of it is said in the sentences naming it
(or its other form), the hosts' left out; a view of a common noun ("education") is answered by theme.

"How often" is answered with the coverage, how widely the works name it (rarely: in under a third of them; in
most: over two thirds) and quotes work by work; "which" with the speakers who name it, the most first, a
quote or two each, and how many of the corpus's other speakers (its hosts aside) never use its words (they may
speak of it in others). A question asking who is for or against it ("Which guests support X and which oppose
it?") sorts the speakers by a stance said in so many words, first person, beside the name or opening a reply to
it (:func:`stated_stances`); hope and worry words are no stance.
"""


from __future__ import annotations

import functools
import re
from collections import Counter

from slmgraph.names.forms import STOP as _STOP
from slmgraph.query.theme_lead import _join, _q
from slmgraph.query.theme_model import near_words

#: A question asking how often something is said.
_OFTEN = re.compile(r"(?i)\bhow (often|frequently)\b|\bhow many (times|guests|speakers|episodes|works|documents)\b")
#: A question asking how many speakers take a side ("How many guests oppose the act?").
_HOW_MANY_SIDE = re.compile(r"(?i)\bhow many (guests|speakers|interviewees|participants|panell?ists|people)\b.{0,30}?"
                            r"\b(support|supports|oppose|opposes|against|in favou?r of|approve of|object to|(?:are|were|is) for)\b")
#: The people a question asks about as a group ("guests", "members").
_GROUP = r"(guests?|speakers?|interviewees|participants|panell?ists|contributors|residents|members)"
#: A question asking which speakers say something.
_WHICH = re.compile(r"(?i)\b(which|what) " + _GROUP + r"\b|"
                    r"\bwho (talks|speaks|mentions|discusses|raises|brings up)\b")
#: A question asking what speakers think of something ("How do guests perceive X?", "What are the guests' views on
#: X?", "What do guests think of X?").
_VIEWS = re.compile(r"(?i)\bhow do(es)? (the )?" + _GROUP + r"\b[^?]{0,40}?\b(perceive|view|see|feel|think|regard|"
                    r"judge)\b|\bwhat (are|were|is) (the )?" + _GROUP + r"(['’]s?)? (views?|opinions?|thoughts|"
                    r"feelings|take|stance)\b|\bwhat do(es)? (the )?" + _GROUP + r" (think|feel|make)\b")
#: The words of a question asking for views: never what it asks about.
_VIEW_WORDS = frozenset("""view views perceive perceived perception opinion opinions thought thoughts feel feelings
think regard judge stance take""".split())
#: The words of a question asking who is for or against something ("Which guests support the drones and which
#: oppose them?"): a stance, never what it asks about.
_STANCE_WORDS = frozenset("""support supports supported supporting oppose opposes opposed opposing against favour
favor favours favors favoured favored object objects objected approve approves approved disapprove disapproves
welcome welcomes welcomed criticise criticises criticised criticize criticizes criticized praise praises praised
agree agrees agreed disagree disagrees disagreed""".split())
#: A question asking who is for or against something ("Which guests support the drones and which oppose them?",
#: "Which guests are against the act?").
_STANCE_Q = re.compile(r"(?i)\b(support|supports|oppose|opposes|against|in favou?r of|approve of|object to)\b")
#: A stance said in so many words, first person: "I'm all for the CHA", "I support it", "I'm strongly in favor";
#: "I'm against them", "I oppose that part of it"; a reply opening on "For it." or "Against it as written."; words
#: of hope or worry are no stance ("a real risk" is said by supporters too).
_FOR = re.compile(r"(?i)\b(i|we)(['’]m| am|['’]re| are)( (?!not\b|never\b)\w+)? (for|in favou?r)\b|"
                  r"\b(i|we)( (?!not\b|never\b|don['’]t\b|would\b|could\b|might\b)\w+)? support\b|"
                  r"\b(i|we)(['’]m| am|['’]re| are) (fully |firmly )?behind\b|^\W*for it\b|"
                  r"\b(i|we)(['’]m| am|['’]re| are) (a |an )?(\w+ )?(supporters?|fans?|advocates?|champions?) of\b")
_AGAINST = re.compile(r"(?i)\b(i|we)(['’]m| am|['’]re| are)( (?!not\b|never\b)\w+)? (against|opposed)\b|"
                      r"\b(i|we)( (?!not\b|never\b|don['’]t\b|would\b|could\b|might\b)\w+)? oppose\b|"
                      r"^\W*against it\b|\b(i|we)(['’]m| am|['’]re| are) (a |an )?(\w+ )?(opponents?|critics?) of\b")
#: Said of oneself, no stance: "I'm neither for nor against it yet".
_NEITHER = re.compile(r"(?i)\bneither for nor against\b|\bnot (yet )?(for|against) (it|them)\b")
#: Another person's view, reported by the speaker: "My son is in favour of it", "My neighbour thinks it is the best
#: thing", "She says it will fail": no view of the speaker's own.
_REPORTED = re.compile(
    r"(?i)^\W*(?:(?:and|but|so|well|now|actually|though|mind you),?\s+)?(?:(?:my|our)\s+(?:\w+\s+)?"
    r"(?:son|sons|daughter|daughters|sister|sisters|brother|brothers|wife|husband|partner|neighbou?rs?|mother|"
    r"father|mum|mom|dad|parents|friends?|colleagues?|boss|family|kids|children|students|customers|clients|"
    r"patients|members|uncle|aunt|cousins?|grand\w+|in-laws|flatmates?|landlord|tenants|staff)|he|she|they)"
    r"\b(?:\s*,[^,]{1,60},)?(?:\s+\w+){0,3}?\s+(?:thinks?|believes?|says?|said|feels?|reckons?|is|are|was|were|supports?|opposes?)\b")
#: The sides of a stance question, in the order the answer gives them.
_SIDES = ("for it", "against it", "for and against it", "no stance in so many words")
#: An acronym, in the singular or the plural ("CHA", "AFs").
_ACRO = re.compile(r"[A-Z]{2,5}s?")
#: A name of capitalised words, "of", "the" or "and" between them ("Head of the River").
_NAME = re.compile(r"[A-Z][\w'-]*(?:\s+(?:(?:of|the|and|de|van|von)\s+)*[A-Z][\w'-]*)+")
#: A question asking who never says something.
_NEVER = re.compile(r"(?i)\b(never|not|n't|nor)\b")
#: A phrase of the question is an asked term when the corpus holds it as a concept in at least this many units.
MIN_UNITS = 2
#: A topic word of the question is an asked term when found in at most this share of the text units.
ANCHOR_SHARE = 0.1
#: Another form of an asked term (an acronym, or what it stands for) counts when the corpus writes it this often.
FORM_USES = 2
#: Small words a name may hold that give no letter to its acronym.
_SMALL = frozenset({"of", "the", "and", "for", "on", "de", "van", "von"})
#: Quotes per work ("how often") and per speaker ("which"); works and speakers shown at most.
PER_WORK = 2
PER_SPEAKER = 2
SHOWN = 8


def asks_mentions(question: str) -> str:
    """``"often"`` for a question asking how often something is said, ``"which"`` for one asking which speakers
    say it, ``"views"`` for one asking what speakers think of it, else ""."""
    if _HOW_MANY_SIDE.search(question or ""):  # "How many guests oppose the act?" counts people, not mentions
        return "which"
    if _OFTEN.search(question or ""):
        return "often"
    if _WHICH.search(question or ""):
        return "which"
    return "views" if _VIEWS.search(question or "") else ""


def _singular(word: str) -> str:
    """An English plural's singular, roughly ("ferries" -> "ferry", "buses" -> "bus", "drones" -> "drone");
    "autonomous", "press" and "analysis" are left alone."""
    w = word.casefold()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 4 and re.search(r"(ss|x|ch|sh)es$", w):
        return w[:-2]
    if len(w) > 3 and w.endswith("s") and not re.search(r"(ss|us|is)$", w):
        return w[:-1]
    return w


def _phrase_keys(text: str) -> set[str]:
    """The keys a phrase may be stored under: :func:`slmgraph.store.corpus_stats.phrase_key`'s (a final "s"
    dropped) and its words' singulars (a concept's lemma: "autonomous ferry" of "autonomous ferries")."""
    from slmgraph.store.corpus_stats import phrase_key

    return {phrase_key(text), " ".join(_singular(w) for w in re.findall(r"[^\W_]+", text))}


def asked_terms(question: str, ix) -> list[str]:
    """The terms ``question`` asks about, as it writes them (see the module doc); [] without any."""
    from slmgraph.names.forms import STOP
    from slmgraph.query.theme_kinds import _FRAME, topic_of, unit_counts
    from slmgraph.query.theme_model import word_stem

    words = re.findall(r"[A-Za-z][\w'-]*", question or "")
    # a name of several words the corpus writes as the question does ("the Head of the River race")
    names = [m.group(0) for m in _NAME.finditer(question or "") if m.start() > 0]
    # two names of two words or more joined by "and" are two things ("the Coastal Housing Act and the Riverside
    # Plan"); "Procter and Gamble" stays one
    split = [re.split(r"\s+and\s+(?:the\s+)?", n) for n in names]
    names = [x for n, parts in zip(names, split) for x in (parts if all(len(p.split()) >= 2 for p in parts) else [n])]
    held = [n for n in names if any(n.casefold() in u.text.casefold() for u in ix.all_units())]
    # an acronym in the plural the corpus writes, in either number ("the AFs"; a singular one is a topic word)
    for a in re.findall(r"(?<=\s)[A-Z]{2,5}s\b", question or ""):
        said = re.compile(r"\b" + (a[:-1] if a.endswith("s") else a) + r"s?\b")
        if a not in held and any(said.search(u.text) for u in ix.all_units()):
            held.append(a)
    if held:
        return held
    df = ix.phrase_units
    phrases: list[str] = []
    for n in (3, 2):
        for i in range(len(words) - n + 1):
            seg = words[i:i + n]
            if any(w.casefold() in STOP or w.casefold() in _FRAME or w.casefold() in _STANCE_WORDS for w in seg):
                continue
            text = " ".join(seg)
            # a phrase the corpus holds, or another name of one it names ("the housing law": the Housing Act)
            if ((max(df.get(k, 0) for k in _phrase_keys(text)) >= MIN_UNITS or (n == 2 and other_forms(text, ix)))
                    and not any(text.casefold() in p.casefold() for p in phrases)):
                phrases.append(text)
    # "the Act", "the tram": the one name of a kind the corpus writes that ends in, or holds, the word
    byword = named_by_word(question, ix.all_text())
    if byword and not any(byword[0].casefold() in [p.casefold()] + [f.casefold() for f in other_forms(p, ix)]
                          for p in phrases):
        phrases.append(byword[0])
    if phrases:
        return phrases
    # the words asking for views ("views", "perceive", "think of") are the question's frame, never its subject
    topic = topic_of(question, ix) - {word_stem(w) for w in _VIEW_WORDS | _STANCE_WORDS}
    if not topic:  # what every document names ("the ferry" of an island's oral history) is still asked about
        from slmgraph.query.theme_model import question_words

        topic = question_words(question) - {word_stem(w) for w in _FRAME | _VIEW_WORDS | _STANCE_WORDS} - {
            word_stem(w.casefold()) for w in words if w.casefold() in ("often", "many", "times", "each")}
    if not topic:
        return []
    held = unit_counts(ix, topic)
    n = max(1, len(ix.all_units()))
    found = sorted((w for w in topic if held[w]), key=lambda w: (held[w], w))
    rare = [w for w in found if held[w] <= ANCHOR_SHARE * n] or found[:1]
    surface = {word_stem(w.casefold()): w for w in words}
    return [surface.get(w, w) for w in rare]


def absent_phrase(question: str, ix) -> str | None:
    """The question's subject phrase when no text unit names it (so an answer by theme must say so): its first run
    of two or more content words (no stop, frame, view, stance or comparing word; a run ends at punctuation),
    as its last two words ("new wind farm" -> "wind farm"), as the question writes them, when no text unit names
    them; None when one does, or the question has no such run."""
    from slmgraph.names.forms import STOP
    from slmgraph.query.theme_facets import _FOCUS_FRAME
    from slmgraph.query.theme_kinds import _FRAME
    from slmgraph.query.theme_labels import phrase_pattern

    def content(w: str) -> bool:
        x = w.casefold()
        return (len(x) > 2 and x not in STOP and x not in _FRAME and x not in _VIEW_WORDS and x not in _STANCE_WORDS
                and x not in _FOCUS_FRAME and not w[:1].isupper())

    run: list[str] = []
    for tok in re.findall(r"[A-Za-z][\w'-]*|[^\w\s]", question or "") + ["."]:
        if tok[:1].isalpha() and content(tok):
            run.append(tok)
            continue
        if len(run) >= 2:
            break
        run = []
    if len(run) < 2:
        return None
    # its shortest ending on the head: when no unit names that, none names the longer phrase either
    phrase = " ".join(run[-2:])
    pat = phrase_pattern(phrase)
    return None if any(pat.search(u.text) for u in ix.all_units()) else phrase


def unnamed_parts(question: str, ix) -> tuple[list[str], list[str]]:
    """``(absent, unheld)`` from one reading of the corpus's words: ``absent`` as :func:`absent_words` ([] when the
    question also names a word most documents hold); ``unheld``
    the topic words of the question's subject (its words after the first "about", "regarding", "concerning" or
    "on") that no text unit holds, as it writes them ("schools" of "What did the council decide about local
    schools?" in minutes that never name a school), [] when every one is held or the question names no subject
    so. The topic words are :func:`slmgraph.query.theme_kinds.topic_of`'s, its view and stance words aside."""
    from slmgraph.query.theme_kinds import _frame_stems, topic_of, unit_counts
    from slmgraph.query.theme_model import question_words, word_stem

    aside = {word_stem(w) for w in _VIEW_WORDS | _STANCE_WORDS}
    every = topic_of(question, ix)
    topic = every - aside
    held = unit_counts(ix, topic) if topic else {}
    gone = {w for w in topic if not held.get(w)}
    # a word of the question left out of its topic for being in most documents is named: the question asks of
    # what the corpus holds everywhere ("drones" of "What does the host personally think about drones?")
    if question_words(question) - every - _frame_stems(question) - aside:
        gone = set()

    def written(text: str, stems: set) -> list[str]:
        return list(dict.fromkeys(w for w in re.findall(r"[A-Za-z][\w'-]*", text) if word_stem(w.casefold()) in stems))

    m = _SUBJECT.search(question or "")
    return (written(question or "", topic) if topic and gone == topic else [],
            written(question[m.end():], gone) if m else [])


#: Where a question's subject begins ("What did the council decide about local schools?").
_SUBJECT = re.compile(r"(?i)\b(about|regarding|concerning|on)\b")


def absent_words(question: str, ix) -> list[str]:
    """The question's topic words (:func:`slmgraph.query.theme_kinds.topic_of`, its view and stance words aside),
    as it writes them, when it has some and no text unit holds any of them ("cryptocurrency", "bitcoin" of a corpus
    that never names either); [] otherwise."""
    return unnamed_parts(question, ix)[0]


def reported(sentence: str) -> bool:
    """Whether ``sentence`` gives another person's view rather than the speaker's (:data:`_REPORTED`)."""
    return bool(_REPORTED.search(sentence or ""))


def stance(text: str) -> tuple[int, int]:
    """``(sentences for, sentences against)`` what ``text`` names, in so many words and in the first person
    (:data:`_FOR`, :data:`_AGAINST`; "neither for nor against" is neither)."""
    from slmgraph.text.prose import sentences

    pro = con = 0
    for x in sentences(_NEITHER.sub(" ", text or "")):
        pro += bool(_FOR.search(x))
        con += bool(_AGAINST.search(x))
    return pro, con


def stated_stances(unit_text: str, names) -> list[tuple[str, str]]:
    """``[(speaker, sentence)]``: the sentences of ``unit_text`` saying a stance in so many words (:data:`_FOR`,
    :data:`_AGAINST`) on what ``names`` (``text -> bool``) matches: beside a sentence naming it in the same turn
    ("The CHA gives teachers a chance to stay. I support it."), or opening the reply to another speaker's turn
    naming it ("So are you for or against the CRA?" -- "Against it as written."). Speakers as
    :func:`slmgraph.query.theme_model.speaker_of` writes them."""
    from slmgraph.query.theme_model import _turns
    from slmgraph.text.prose import sentences

    marks = _turns(unit_text)
    segs = [(label, unit_text[o:(marks[k + 1][0] if k + 1 < len(marks) else len(unit_text))].split(":", 1)[-1])
            for k, (o, label) in enumerate(marks)]
    out = []
    for k, (label, text) in enumerate(segs):
        said = [x.strip() for x in sentences(text)]
        near = set()
        for i, x in enumerate(said):
            if names(x):
                near.update(range(max(0, i - 1), min(len(said), i + 2)))
        if k and segs[k - 1][0] != label and names(segs[k - 1][1]):
            near.update(range(min(2, len(said))))
        who = " ".join(w.capitalize() for w in label.split()) if label.isupper() else label
        out += [(who, said[i]) for i in sorted(near) if _FOR.search(_NEITHER.sub(" ", said[i]))
                or _AGAINST.search(_NEITHER.sub(" ", said[i]))]
    return out


def persons(ix) -> set[str]:
    """The case-folded names of the index's persons: its entities typed ``person`` and its speakers' labels."""
    import duckdb

    from slmgraph.query.theme_works import _LABEL

    try:
        out = {str(n).casefold() for (n,) in ix.store.con.execute(
            "SELECT name FROM entities WHERE lower(type) = 'person'").fetchall()}
    except duckdb.Error:
        out = set()
    return out | {y.strip().casefold() for u in ix.all_units() for y in _LABEL.findall(u.text)}


def _tail(name: str, text: str) -> list[str]:
    """``[the last two words of name]`` ("housing act" of "Coastal Housing Act") when ``text`` writes them, in any
    case, at least :data:`FORM_USES` times apart from the whole name; [] for a name of under three words."""
    words = name.split()
    if len(words) < 3:
        return []
    tail = " ".join(words[-2:])
    said = len(re.findall(r"\b" + re.escape(tail) + r"\b", text, re.IGNORECASE))
    whole = len(re.findall(r"\b" + re.escape(name) + r"\b", text, re.IGNORECASE))
    return [tail.casefold()] if said - whole >= FORM_USES else []


#: Nouns that name one kind of thing a proposal's name ends in; a speaker swaps one for another of its kind ("the
#: housing law" of "the Coastal Housing Act", "the riverside scheme" of "the Millbrook Riverside Plan").
_KINDS = (frozenset("act law bill legislation statute regulation regulations ordinance measure".split()),
          frozenset("plan scheme proposal project programme program initiative development redevelopment strategy "
                    "policy".split()))


@functools.lru_cache(maxsize=8)
def _kind_names(text: str) -> frozenset[str]:
    """The names of a kind (:data:`_KINDS`) ``text`` writes: runs of two or more capitalised words ending in a kind's
    noun, a leading article dropped ("Coastal Housing Act" of "The Coastal Housing Act"); read once per corpus
    text (the same text is asked for several forms of several terms)."""
    heads = {w for k in _KINDS for w in k}
    runs = {re.sub(r"^(?:The|This|That|An?)\s+", "", m.group(0)) for m in re.finditer(
        r"\b[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)+", text)}
    return frozenset(n for n in runs if len(n.split()) >= 2 and n.split()[-1].casefold() in heads)


def _aliases(name: str, text: str) -> list[str]:
    """Other names ``text`` gives the thing ``name`` names (lower case): a word of the name before its last, with
    another noun of the last word's kind (:data:`_KINDS`) after it, as ``text`` writes it ("housing law" of "Coastal
    Housing Act"); a word that begins another name of that kind in ``text`` ("Coastal" of "Coastal Resilience
    Act" too) is no one name's; [] when the name ends in no such noun."""
    words = name.split()
    kind = next((k for k in _KINDS if words[-1].casefold() in k), None)
    if len(words) < 2 or kind is None:
        return []
    heads = "|".join(sorted(kind))
    others = {n.casefold() for n in _kind_names(text) if n.split()[-1].casefold() in kind}
    others = {o for o in others if not name.casefold().endswith(o) and not o.endswith(name.casefold())}
    out = []
    for w in words[:-1]:
        low = w.casefold()
        if low in _SMALL or len(low) < 3 or any(low in o.split() for o in others):
            continue
        for m in re.finditer(r"\b" + re.escape(low) + r"\s+(" + heads + r")s?\b", text, re.IGNORECASE):
            form = f"{low} {m.group(1).casefold()}"
            if m.group(1).casefold() != words[-1].casefold() and form not in out:
                out.append(form)
    return out


def named_by_word(question: str, text: str) -> tuple[str, str] | None:
    """``(name, word)`` for a question saying "the <word>" of a name of a kind (:data:`_KINDS`) that ``text``
    writes: "the Act" where the corpus's only act is the Coastal Housing Act, "the tram" where its only name of a
    kind holding "Tram" is the Riverside Tram Plan (``word`` then: "tram"; a kind's own noun: ""); None without
    one, or with two such names."""
    heads = {w for k in _KINDS for w in k}
    names = _kind_names(text)
    for m in re.finditer(r"(?i)\b(?:the|this)\s+([a-z][\w-]+)\b(?!\s+[A-Z])", question or ""):
        w = m.group(1).casefold()
        if w in _STANCE_WORDS or w in _VIEW_WORDS or len(w) < 3:
            continue
        fit = {n for n in names if n.split()[-1].casefold() == w} if w in heads else {
            n for n in names if w in [x.casefold() for x in n.split()[:-1]]}
        if len(fit) == 1:
            return next(iter(fit)), ("" if w in heads else w)
    return None


def _bare_heads(ix, names: list[str], named) -> dict[str, re.Pattern]:
    """``doc_id -> pattern`` of "the <last word>" ("the Act", "the plan") of each of ``names`` that is a name of a
    kind (:data:`_KINDS`), for each document where ``named`` (``text -> bool``) finds it and no other name ending
    in that word is written: there "the act" can only be that act."""
    heads = {n.split()[-1].casefold() for n in names if len(n.split()) > 1 and any(
        n.split()[-1].casefold() in k for k in _KINDS)}
    if not heads:
        return {}
    own = {n.casefold() for n in names}
    text_of: dict[str, str] = {}
    for u in ix.all_units():
        text_of[u.doc_id] = text_of.get(u.doc_id, "") + "\n" + u.text
    out = {}
    for doc, text in text_of.items():
        if not named(text):
            continue
        ok = []
        for h in sorted(heads):
            others = {m.group(0).casefold() for m in re.finditer(
                r"\b[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*\s+" + h.capitalize() + r"\b", text)}
            if all(any(o.endswith(n) or n.endswith(o) for n in own) or o.split()[0] in {"the", "this", "that"}
                   for o in others):
                ok.append(h)
        if ok:
            out[doc] = re.compile(r"(?i)\b(?:the|this) (?:" + "|".join(ok) + r")\b")
    return out


def other_forms(term: str, ix) -> list[str]:
    """The other ways the corpus writes ``term``, each at least :data:`FORM_USES` times: a name's acronym ("CAZ" of
    "Clean Air Zone"), or the name an acronym stands for ("Clean Air Zone" of "CAZ"), and a long name's last two
    words ("housing act" of "Coastal Housing Act": a speaker shortens a name they have said), and its other names
    of the same kind (:func:`_aliases`: "housing law"); [] without one. ``ix``: the theme index, or the corpus's
    text."""
    text = ix if isinstance(ix, str) else ix.all_text()
    words = [w for w in term.split() if w[:1].isupper() and w.casefold() not in _SMALL]
    if _NAME.fullmatch(term) and len(words) >= 2:
        acro = "".join(w[0] for w in words).upper()
        return (([acro] if len(re.findall(r"\b" + acro + r"\b", text)) >= FORM_USES else []) + _tail(term, text)
                + _aliases(term, text))
    if _ACRO.fullmatch(term):
        term = term[:-1] if term.endswith("s") else term  # "AFs": the autonomous ferries
        found: Counter = Counter()
        for m in re.finditer(r"\b[A-Z][\w'-]*(?:\s+(?:(?:of|the|and|for|on)\s+)*[A-Z][\w'-]*){1,4}", text):
            words = m.group(0).split()
            for i in range(len(words)):  # any span of the run ("The Clean Air Zone" holds "Clean Air Zone")
                for j in range(i + 2, len(words) + 1):
                    span = words[i:j]
                    caps = [w for w in span if w[0].isupper()]
                    # a sentence's opening word and a pronoun spell no name ("And I" is no "AI")
                    if any(w.casefold() in _STOP for w in caps):
                        continue
                    if span[0][0].isupper() and span[-1][0].isupper() and "".join(w[0] for w in caps).upper() == term:
                        found[" ".join(w if w.casefold() in _SMALL else w[0].upper() + w[1:].lower()
                                       for w in span)] += 1
        best = [f for f, n in found.most_common(1) if n >= FORM_USES]
        return best + [t for f in best for t in _tail(f, text) + _aliases(f, text)]
    words = term.casefold().split()
    kind = next((k for k in _KINDS if words[-1] in k), None) if len(words) == 2 else None
    if kind is not None:  # "riverside plan", "resilience law": the one name of its kind holding the word
        names = {n for n in _kind_names(text) if n.split()[-1].casefold() in kind
                 and words[0] in n.casefold().split()[1:]}
        if len(names) == 1:
            full = next(iter(names))
            return [f for f in [full] + other_forms(full, ix) if f.casefold() != term.casefold()]
    return []


def _matcher(term: str, people: set[str] = frozenset(), also: list[str] = ()):
    """``text -> bool``: whether a text names ``term`` or one of ``also`` (:func:`other_forms`): a person's name of
    two words (one of ``people``, or the start of one) by either word too, as written ("Harriet" of "Harriet
    Lowe"; "Quay Street" is no person), another name in any case ("the clean air zone"), an acronym as written, a
    phrase by its words (plurals allowed), a word by its stem."""
    from slmgraph.query.theme_labels import phrase_pattern
    from slmgraph.query.theme_model import names_asked, word_stem

    tests = [_matcher(a, people) for a in also]
    if tests:
        own = _matcher(term, people)
        return lambda text: own(text) or any(t(text) for t in tests)
    if _ACRO.fullmatch(term):
        pat = re.compile(r"\b" + (term[:-1] if term.endswith("s") else term) + r"s?\b")
        return lambda text: bool(pat.search(text))
    if _NAME.fullmatch(term):
        parts = term.split()
        person = any(p == term.casefold() or p.startswith(term.casefold() + " ") for p in people)
        whole = re.compile(r"\b" + re.escape(term) + r"\b", re.IGNORECASE)
        part = re.compile(r"\b(" + "|".join(map(re.escape, parts)) + r")\b") if len(parts) == 2 and person else None
        return lambda text: bool(whole.search(text) or (part is not None and part.search(text)))
    if " " in term:
        pat = phrase_pattern(term)
        return lambda text: bool(pat.search(text))
    stem = {word_stem(term.casefold())}
    return lambda text: names_asked(text, stem)


def _sided(ix, units, by, first: dict, named, names: list[str], elsewhere=None) -> tuple[dict, dict]:
    """``(sides, stated)``: each speaker of ``by`` on one side of :data:`_SIDES` by the stances they say in so many
    words (:func:`stated_stances`) where ``named`` (``text -> bool``) finds the thing asked, or "the act" where their
    document names only that one of ``names`` (:func:`_bare_heads`); ``stated``: speaker -> those sentences, each as
    a copy of their ``first`` sentence naming it. ``elsewhere`` (``text -> bool``): another thing asked; a stance
    sentence naming it and not this one is on that one ("I support the act. But I'm against the plan.")."""
    from dataclasses import replace

    bare = _bare_heads(ix, names, named)
    stated: dict[str, list] = {}
    for u in units:
        here = named
        if u.doc_id in bare:  # "I'm against the act" where the act is the one this document names
            here = lambda text, pat=bare[u.doc_id]: named(text) or bool(pat.search(text))  # noqa: E731
        if here(u.text):
            for who, y in stated_stances(u.text, here):
                if elsewhere is not None and elsewhere(y) and not named(y):
                    continue
                if who in first and all(y != z.text for z in stated.get(who, [])):
                    stated.setdefault(who, []).append(replace(
                        first[who], text=y, source=u.number, doc_id=u.doc_id, unit=u.unit,
                        of=ix.doc_by_id[u.doc_id].n_units, ok=True))
    lean = {p: stance(" ".join(z.text for z in zs)) for p, zs in stated.items()}
    # one side only, or no side: words for it and against it both make a view mixed
    sides = {p: "for it" if lean.get(p, [0, 0])[0] and not lean[p][1] else "against it"
             if lean.get(p, [0, 0])[1] and not lean[p][0] else "for and against it" if lean.get(p, [0, 0])[0]
             else _SIDES[-1] for p in by}
    return sides, stated


#: "<term> with <partners>" in a question ("collaboration with other companies or industry rivals").
_WITH = re.compile(r"(?i)\b([a-z][\w-]+) with (?:other |their |the |its |fellow |each )*([a-z][\w\s-]{2,60}?)\s*(?:[?,;.]|$)")


def _stems(text: str) -> set[str]:
    from slmgraph.query.theme_model import word_stem

    return {word_stem(w) for w in re.findall(r"[a-z]+", text.casefold())}


def _with_pair(question: str, terms: list[str]) -> tuple[str, set[str], str] | None:
    """``(term, partner stems, partners as shown)`` of a question asking how often an asked term is said with
    something ("How often do guests mention collaboration with other companies or industry rivals?" ->
    ("collaboration", {"company", "industry", "rival"}, "“companies”, “industry” or “rivals”")); None when it asks
    no such thing of one of ``terms``."""
    from slmgraph.names.forms import STOP
    from slmgraph.query.theme_model import word_stem

    m = _WITH.search(question or "")
    # the word before "with" is a term, or ends one ("the housing law with the tram")
    term = next((t for t in terms if m and t.casefold().split()[-1] == m.group(1).casefold()), None)
    if not m or term is None:
        return None
    words = [w for w in re.findall(r"[a-z][\w-]*", m.group(2).casefold()) if w not in STOP and w not in ("or", "and")]
    if not words:
        return None
    shown = [_q(w) for w in dict.fromkeys(words)]
    return (term, {word_stem(w) for w in words},
            shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1])


def mentions_answer(ix, question: str, embedder) -> tuple[str, list[dict], list[int]] | None:
    """``(answer text, points, cited unit numbers)`` for a question asking how often something is said or which
    speakers say it (:func:`asks_mentions`; see the module doc), or None when it asks neither, without an
    embedder, or when no speaker's sentence names an asked term (the answer by theme is given)."""
    from slmgraph.query.extractive import _embed
    from slmgraph.query.theme_kinds import Quotes, guest_sentences, work_title
    from slmgraph.query.theme_topics import _work

    how = asks_mentions(question)
    if not how or embedder is None:
        return None
    terms = asked_terms(question, ix)
    if not terms:
        return None
    # What speakers think of a named thing ("the Coastal Housing Act", "the CHA") or of a phrase the corpus holds
    # ("the delivery drones") is in the sentences naming it; a view of a lone common noun ("education") is a theme
    # of its own, answered by theme.
    if how == "views" and not all(_NAME.fullmatch(t) or _ACRO.fullmatch(t) or " " in t for t in terms):
        return None
    people = persons(ix) if any(_NAME.fullmatch(t) for t in terms) else set()
    forms = {t: other_forms(t, ix) or near_words(t, ix, embedder) for t in terms}
    byword = named_by_word(question, ix.all_text())
    if byword and byword[1] and byword[0] in forms and byword[1] not in [f.casefold() for f in forms[byword[0]]]:
        forms[byword[0]].append(byword[1])  # "the tram" as the question says it
    match = [(t, _matcher(t, people, forms[t])) for t in terms]
    shown_term = lambda t: _q(t) + (f" (also {_join([_q(f) for f in forms[t]])})" if forms[t] else "")  # noqa: E731

    def weigh(body: str, prompt: str = "") -> tuple[float, str]:
        return next(((1.0, t) for t, m in match if m(body)), (0.0, ""))

    # every sentence naming it counts ("I remember 1987."); whole ones are quoted first
    said = guest_sentences(ix, question, weigh, whole=False)
    if not said:
        return None
    v = _embed([s.text for s in said] + [question], embedder)
    for s, row in zip(said, v[:-1]):
        s.score = float(row @ v[-1])
    units = ix.all_units()
    work_of = {d.doc_id: _work(d) for d in ix.docs}
    order = list(dict.fromkeys(work_of[d.doc_id] for d in ix.docs))
    noun = "works" if any(d.work for d in ix.docs) else "documents"
    part = "parts" if noun == "works" else "text units"
    reach = []
    named_works: set = set()
    for t, m in match:
        hit = [u for u in units if m(u.text)]
        ws = {work_of[u.doc_id] for u in hit}
        named_works |= ws
        if not hit:
            reach.append(f"{shown_term(t)} in none")
            continue
        where = f" ({_q(work_title(ix, next(w for w in order if w in ws)))})" if len(ws) == 1 else ""
        reach.append(f"{shown_term(t)} is named in {len(hit)} of the {len(units)} {part}, in {len(ws)} of the "
                     f"{len(order)} {noun}{where}")
    cites = Quotes(ix)
    line, point = cites.line, cites.point
    by = Counter(s.speaker for s in said if s.speaker)
    parts = []
    if how == "often":
        share = len(named_works) / max(1, len(order))
        often = ("rarely" if share < 1 / 3 else "in most of the " + noun if share > 2 / 3
                 else "in some of the " + noun)
        head = (_join(reach[:1] + [r.replace(" is named", "") for r in reach[1:]]) + f". It comes up {often}: "
                f"{len(said)} sentence{'s' if len(said) != 1 else ''} name{'s' if len(said) == 1 else ''} it")
        if by:
            head += ", by " + _join([f"{p} ({c})" if c > 1 else p for p, c in by.most_common(SHOWN)])
        head += "."
        pair = _with_pair(question, terms)
        joint: set[int] = set()
        if pair is not None:  # "collaboration with other companies": the term said with its partner, or not at all
            term, partners, shown_partners = pair
            joint = {id(s) for s in said if _stems(s.text) & partners and _matcher(term)(s.text)}
            head += (f" Of these, {len(joint)} name{'s' if len(joint) == 1 else ''} {_q(term)} together with "
                     f"{shown_partners}." if joint else
                     f" None names {_q(term)} together with {shown_partners}: in these words, the corpus does not "
                     f"speak of {term} with them, and what it says of {term} is on other things.")
        parts.append(head)
        per = Counter(work_of[s.doc_id] for s in said)
        shown = {w for w, _ in sorted(per.items(), key=lambda kv: (-kv[1], order.index(kv[0])))[:SHOWN]}
        for w in [w for w in order if w in shown]:  # the works naming it most, in corpus order
            mine = sorted((s for s in said if work_of[s.doc_id] == w),
                          key=lambda s: (id(s) not in joint, not s.ok, -s.score))[:PER_WORK]
            n = per[w]
            parts.append("\n".join([f"### {work_title(ix, w)} ({n} sentence{'s' if n != 1 else ''})"]
                                   + [line(s) for s in mine]))
            point(work_title(ix, w), mine)
    else:
        if not by:
            return None
        from slmgraph.query.theme_works import _LABEL

        from slmgraph.query.theme_works import corpus_hosts

        labels = {y.strip() for u in units for y in _LABEL.findall(u.text)}
        # a label cut by a text unit's edge ("LOWE:" of "HARRIET LOWE:") is no speaker of its own
        whole = {x for x in labels if not any(y != x and y.endswith(" " + x) for y in labels)}
        everyone = {" ".join(x.capitalize() for x in label.split()) for label in whole}
        hosts = {" ".join(x.capitalize() for x in h.split()) for h in corpus_hosts(ix)}
        others = len(everyone - hosts - set(by))
        items = []
        for p, c in by.most_common(SHOWN):
            ws = [w for w in order if any(s.speaker == p and work_of[s.doc_id] == w for s in said)]
            items.append(f"{p} ({c} sentence{'s' if c != 1 else ''}, in {_join([_q(work_title(ix, w)) for w in ws[:2]])}"
                         f"{' and others' if len(ws) > 2 else ''})")
        head = (f"{len(by)} speaker{'s' if len(by) != 1 else ''} name{'s' if len(by) == 1 else ''} "
                f"{_join([shown_term(t) for t in terms])}" + (f"; the {SHOWN} who name it most" if len(by) > SHOWN
                                                              else "") + ": " + _join(items))
        # who is for it and who against, by what each says where they name it (all their sentences, not the shown);
        # two things asked are sided apart ("Which guests support both the plan and the act?")
        per_term: list[tuple[list[str], dict, dict]] = []
        # a question on views is answered by stance too, where any speaker states one in so many words
        if _STANCE_Q.search(question) or how == "views":
            first = {}  # a speaker's sentence naming it, whose place a stated stance takes
            for x in said:
                first.setdefault(x.speaker, x)
            for ts in ([[t] for t in terms] if len(terms) > 1 else [terms]):
                tests = [m for t, m in match if t in ts]
                rest = [m for t, m in match if t not in ts]
                naming = lambda text, tests=tests: any(m(text) for m in tests)  # noqa: E731
                # each thing's sides list those who name it
                own = Counter({p: c for p, c in by.items() if any(naming(x.text) for x in said if x.speaker == p)})
                per_term.append((ts, *_sided(
                    ix, units, own, first, naming,
                    [(forms[t][:1] if _ACRO.fullmatch(t) else [t])[0] for t in ts if forms[t] or _NAME.fullmatch(t)],
                    (lambda text, rest=rest: any(m(text) for m in rest)) if rest else None)))
            if not _STANCE_Q.search(question) and all(v == _SIDES[-1] for _, sd, _ in per_term for v in sd.values()):
                per_term = []
        sides = per_term[0][1] if len(per_term) == 1 else {}
        short = {"for it": "for", "against it": "against", "for and against it": "for and against",
                 _SIDES[-1]: "no stance on"}
        label_of = {p: sides[p] for p in by} if sides else {p: ", ".join(
            f"{short[sd[p]]} {_q(ts[0])}" for ts, sd, _ in per_term if p in sd) for p in by} if per_term else {}
        never = sorted(everyone - hosts - set(by))
        if how == "views":
            pass  # who never names it is not what a question about views asks
        elif _NEVER.search(question) and never:  # "Which guests never mention ...?": those are the answer
            head = (f"{len(never)} speaker{'s' if len(never) != 1 else ''} never name{'s' if len(never) == 1 else ''} "
                    f"{_join([shown_term(t) for t in terms])}: {_join(never)}. {head[0].upper() + head[1:]}")
        elif others > 0:
            head += (f"; the other {others} speakers of the corpus never use these words" if others > 1 else
                     "; the other speaker of the corpus never uses these words")
        if sides:
            groups = [(k, [p for p, _ in by.most_common() if sides[p] == k]) for k in _SIDES]
            head += (". Saying so in so many words where they name it, " + "; ".join(f"{k}: {_join(ps)}" for k, ps in
                                                                                   groups if ps))
            asked = _HOW_MANY_SIDE.search(question)
            if asked:  # the count asked for, first
                side = "against it" if re.search(r"(?i)oppose|against|object", asked.group(2)) else "for it"
                n = sum(1 for p in by if sides[p] == side)
                head = (f"{n} of the {len(by)} speakers who name it say in so many words that they are {side}. "
                        + head)
        elif per_term:
            head += ". Saying so in so many words where they name them, " + "; ".join(
                f"on {_q(ts[0])}, " + "; ".join(f"{k}: {_join(ps)}" for k in _SIDES for ps in
                                              [[p for p, _ in by.most_common() if sd.get(p) == k]] if ps)
                for ts, sd, _ in per_term)
            if re.search(r"(?i)\bboth\b", question):  # what the question asks, first
                both = {k: [p for p, _ in by.most_common() if all(sd.get(p) == k for _, sd, _ in per_term)]
                        for k in ("for it", "against it")}
                # for one and silent on the other, by these names: what "no one" may leave out, said so
                maybe = [p for p, _ in by.most_common() if p not in both["for it"] and
                         any(sd.get(p) == "for it" for _, sd, _ in per_term) and
                         all(sd.get(p, _SIDES[-1]) in ("for it", _SIDES[-1]) for _, sd, _ in per_term)]
                head = (f"For both, in so many words: {_join(both['for it']) or 'no one'}"
                        + (f" (for one and no stance said on the other under these names: {_join(maybe)})"
                           if maybe else "")
                        + f"; against both: {_join(both['against it']) or 'no one'}. " + head)
        parts.append(head + ". " + _join(reach[:1] + [r.replace(" is named", "") for r in reach[1:]]) + ".")
        shown = [p for p, _ in by.most_common(SHOWN)]
        if per_term:  # those for it first, then those against, as the question asks
            shown.sort(key=lambda p: tuple(_SIDES.index(sd.get(p, _SIDES[-1])) for _, sd, _ in per_term))
        for p in shown:
            # a view the speaker reports of someone else ("My neighbour thinks ...") is quoted after their own
            mine = sorted((s for s in said if s.speaker == p), key=lambda s: (not s.ok, reported(s.text), -s.score))
            if per_term:  # the stance said on each thing asked first
                lead = [z for _, _, st in per_term for z in st.get(p, [])[:1]]
                lead = [z for i, z in enumerate(lead) if all(z.text != y.text for y in lead[:i])]
                mine = lead + [s for s in mine if not any(z.text in s.text for z in lead)]
            mine = mine[:max(PER_SPEAKER, len(per_term))]
            parts.append("\n".join([f"### {p}" + (f" ({label_of[p]})" if label_of else "")] + [line(s) for s in mine]))
            point(p, mine)
    # asked who speaks of a phrase no text unit names ("company culture"), the answer counts a word of it: it says
    # so first (a count's opening says already which words it counts together)
    missing = absent_phrase(question, ix) if how == "which" else None
    if parts and missing and missing.casefold() not in {t.casefold() for t in terms}:
        parts[0] = (f"No passage of the corpus names \u201c{missing}\u201d; what follows is what it says of "
                    f"{_join([_q(t) for t in terms])} alone. {parts[0]}")
    return cites.answer(parts)
