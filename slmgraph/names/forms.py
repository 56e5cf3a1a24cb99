"""Names in text: the candidate pass, name normalisation and the tolerant match.

The candidate pass proposes spans that are *in* the text: runs of capitalised
words (with "of", "de", "van", ... inside), all-caps acronyms, and
hyphenated/possessive forms reduced to their name. A small model is a poor
generator of names and a usable chooser (ARCHITECTURE.md, "Extraction quality"):
the candidates become a JSON-schema ``enum``, so the model cannot invent a
name. The same pass is the LLM-free ``nlp`` extractor.

The tolerant match (:func:`tolerant_key`, :func:`name_occurs`) compares names
while ignoring case, punctuation, plurals and a leading article; grounding
uses it to drop names that are not in their text unit, and the gold
benchmark to match predicted to gold entities.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import NamedTuple

from slmgraph.names.lexicon import MERGE_KEY_SUFFIXES, TITLE_ABBREVIATIONS, TITLES
from slmgraph.text.prose import WRAPPED_LINE_CHARS, fold, without_orders

# Every upper-case letter of the Basic Multilingual Plane (Latin, Greek,
# Cyrillic, ...): Python's re has no \p{Lu}.
_UPPER = "".join(sorted({chr(c) for c in range(0x10000) if chr(c).isupper() and chr(c).isalpha()}))
_UPPER_CLASS = "[" + re.escape(_UPPER) + "]"
# Capitalised word: an upper-case letter, then letters/digits, inner
# apostrophes/hyphens/ampersands, and dotted parts ("Landing.AI").
_CAP = rf"{_UPPER_CLASS}(?:[^\W_]|['\u2019&\-](?=[^\W_]))*(?:\.[^\W\d_][^\W_]*)*"
_CONNECT = r"(?:of|of the|de|du|da|del|der|van|von|la|le|al|bin|y)"
_GAP = r"(?:[^\S\n]+|[^\S\n]*\n[^\S\n]*)"  # spaces, or one line break (a name wrapped by a newline)
#: An abbreviated title and its full stop, as written or in capitals ("DR. BRENNER" in a transcript's speaker
#: label, a headline).
_TITLE_ABBR = r"(?:" + "|".join(sorted(set(TITLE_ABBREVIATIONS) | {t.upper() for t in TITLE_ABBREVIATIONS}, key=len,
                                       reverse=True)) + r")\."
_QUOTED = r"[\"\u201c]" + _CAP + r"[\"\u201d]"  # a nickname in quotes inside a name: Zoe "Ziggy" Marlowe

#: Capitalised words that begin sentences and are not names (English).
STOP = frozenset("""
a about above after again against all also although am an and another any are as at be because been before being
below between both but by can could did do does doing down during each even ever every few first for from further
had has have having he her here hers herself him himself his how however i if in into is it its itself just let
like many may me might mine more most much must my myself neither no nor not now of off oh ok okay on once one only
or other our ours ourselves out over own perhaps please rather really right same she should since so some still
such than that the their theirs them themselves then there these they this those though through thus to too
under until up upon us very was we well were what whatever when where whether which while who whom whose why will
with within without would yeah yes yet you your yours yourself yourselves
chapter part section mr mrs ms dr sir madam
later meanwhile finally instead maybe actually anyway sometimes everyone someone nobody everything something nothing
today tomorrow yesterday tonight thanks hello hi sure oh okay great good
i'm i've i'd i'll it's that's there's we're we've they're they've you're you've he's she's what's let's don't
can't won't isn't didn't doesn't
monday tuesday wednesday thursday friday saturday sunday
january february march april june july august september october november december
""".split())

_ARTICLES = ("the ", "a ", "an ")
#: Longer capitalised runs are headings or title-case prose, not names.
MAX_NAME_WORDS = 6
_CORP = re.compile(r"[\s,]+(" + "|".join(sorted(MERGE_KEY_SUFFIXES)) + r")\.?$")


def normalize_name(name: str) -> str:
    """The merge key of an entity name (str; empty if nothing is left).

    :func:`slmgraph.text.prose.fold` (NFKC, casefold, curly quotes and dashes plain), possessive ``'s`` removed,
    punctuation -- hyphens included -- dropped except inner ampersands, leading
    article removed, whitespace collapsed. "The Sorbonne's" -> "sorbonne";
    "Acme-Robotics" and "ACME ROBOTICS" -> "acme robotics" (a compound written
    as one word, "AcmeRobotics", is folded by entity resolution's
    ``compound`` rule, :mod:`slmgraph.indexing.stages.resolve`).
    """
    s = fold(name)
    s = re.sub(r"'s\b", "", s)
    s = re.sub(r"[^\w\s&]|_", " ", s)
    s = re.sub(r"\s+", " ", s).strip(" -&")
    for art in _ARTICLES:
        if s.startswith(art) and len(s) > len(art):
            s = s[len(art):]
            break
    if " " in s:
        s = _CORP.sub("", s)
    return s


#: Titles in front of a name, capitalised ("Herr", "Agent") or abbreviated with a full stop ("Prof."): a chain
#: of them opens a run ("Herr Prof. Müller"), and an abbreviated one may follow a capitalised word
#: ("Yesterday Dr. Watson", the stop word then dropped), so the full stop of "Prof." does not cut the name off.
_TITLE_WORD = r"(?:" + "|".join(sorted((t[0].upper() + t[1:] for t in TITLES), key=len, reverse=True)) + r")(?![\w.])"
_RUN = re.compile(rf"(?<![\w'\u2019])((?:(?:{_TITLE_ABBR}|{_TITLE_WORD}){_GAP})*{_CAP}(?:{_GAP}(?:{_CONNECT}{_GAP})*"
                  rf"(?:{_QUOTED}{_GAP})?(?:{_TITLE_ABBR}{_GAP})*{_CAP})*)")


#: German function words that begin sentences (stripped at a run's ends in German text).
STOP_DE = frozenset("""
der die das den dem des ein eine einer eines einem einen im am vom zum zur und oder aber auch nach bei mit für über
unter vor ich du er sie es wir ihr man dieser diese dieses jeder jede jedes kein keine wenn weil dass als wie so
""".split())

_TITLE_ABBR_FOLDED = frozenset(t.casefold() for t in TITLE_ABBREVIATIONS)


def _clean_span(span: str, stop: frozenset[str] = STOP) -> tuple[str | None, bool, int, int]:
    """``(name, lead_dropped, start, end)``: the span without leading/trailing stop words
    (``lead_dropped`` when leading ones were removed; ``start``/``end`` its offsets in
    ``span``), or ``(None, False, 0, 0)``. A leading abbreviated title ("Mr.") before
    another word is kept ("Mr. Holmes")."""
    words = [(m.start(), m.end(), m.group(0)) for m in re.finditer(r"\S+", span)]

    def folded(w: str) -> str:
        return w.casefold().replace("\u2019", "'").strip(".,;:-&'\"\u201c\u201d")

    while words and folded(words[0][2]) in stop and not (
            len(words) > 1 and words[0][2].endswith(".") and folded(words[0][2]) in _TITLE_ABBR_FOLDED):
        words.pop(0)
    while words and folded(words[-1][2]) in stop:
        words.pop()
    if not words or len(words) > MAX_NAME_WORDS:
        return None, False, 0, 0  # nothing left, or a title-case heading
    start, end = words[0][0], words[-1][1]
    out = span[start:end]
    stripped = out.lstrip(" -.&'\u2019\"\u201c")
    start += len(out) - len(stripped)
    out = re.sub(r"['\u2019]s$", "", stripped).rstrip(" -.&'\u2019\"\u201d") if not re.fullmatch(
        rf"{_TITLE_ABBR}", stripped) else stripped
    end = start + len(out)
    out = " ".join(out.split())
    lead_dropped = start > 0
    if len(out) < 2 or not any(c.isalpha() for c in out):
        return None, False, 0, 0
    if re.search(r"['\u2019](ll|ve|re|d|m|t)$", out, re.IGNORECASE):
        return None, False, 0, 0  # a contraction ("We'll"), not a name
    if out.count('"') % 2 or out.count("\u201c") != out.count("\u201d"):
        return None, False, 0, 0
    return out, lead_dropped, start, end


class Span(NamedTuple):
    """One occurrence of a capitalised-run candidate: ``[start, end)`` character offsets and the name
    (whitespace folded)."""

    start: int
    end: int
    name: str


def _title_case(word: str) -> bool:
    w = word.strip("\"\u201c\u201d.")
    return bool(w) and w[0].isupper() and any(c.islower() for c in w[1:])


def _run_pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """A run's pieces: the run itself, or its lines when it spans a line break and is not a wrapped name
    (a wrapped name has at most 4 words, all title-case, and its first line is prose of
    :data:`WRAPPED_LINE_CHARS` or more characters: "...with Alex\\nMercer"; "Sam\\nANDREW NG", a
    list of names one per line and a name before a label line ("...Achebe\\nApologies:") are not)."""
    run = text[start:end]
    if "\n" not in run:
        return [(start, end)]
    words = run.split()
    line_start = text.rfind("\n", 0, start) + 1
    wrapped_prose = start + run.index("\n") - line_start >= WRAPPED_LINE_CHARS
    label_next = text[end:end + 2].lstrip(" \t")[:1] == ":"  # "...Cllr Robert Achebe\nApologies: ..."
    if wrapped_prose and not label_next and len(words) <= 4 and all(_title_case(w) for w in words):
        return [(start, end)]
    pieces, pos = [], start
    for line in run.split("\n"):
        s = pos + (len(line) - len(line.lstrip()))
        e = pos + len(line.rstrip())
        if e > s:
            pieces.append((s, e))
        pos += len(line) + 1
    return pieces


def candidate_spans(text: str, language: str = "en") -> list[Span]:
    """Every occurrence of a capitalised-run candidate in ``text`` (in text order).

    A run of capitalised words (with "of", "de", "van", ... inside; an
    abbreviated title with its full stop in front, "Dr. Watson"; a quoted
    nickname inside, ``Zoe "Ziggy" Marlowe``; one line break inside when the
    run is a wrapped name) without the stop words at its ends. A name whose
    every occurrence is one word at the start of a sentence, line or quotation
    ("Today", "Focus") is left out. With ``language`` "de" German function
    words are stop words too and one-word runs are left out (German capitalises
    every noun), except acronyms.
    """
    stop = STOP | STOP_DE if language == "de" else STOP
    found: list[tuple[Span, str]] = []
    mid_sentence: set[str] = set()
    for m in _RUN.finditer(text):
        for s0, e0 in _run_pieces(text, m.start(1), m.end(1)):
            name, lead_dropped, a, b = _clean_span(text[s0:e0], stop)
            if name is None:
                continue
            key = normalize_name(name)
            if not key or key in stop:
                continue
            if language == "de" and " " not in name and not (name.isupper() and len(name) > 1):
                continue
            found.append((Span(s0 + a, s0 + b, name), key))
            if " " in key or name.isupper() or lead_dropped or not _sentence_initial(text, s0 + a):
                mid_sentence.add(key)
    return [sp for sp, key in found if key in mid_sentence]


def candidate_names(text: str, limit: int = 40) -> list[str]:
    """Candidate entity names of the capitalised-run pass (:func:`candidate_spans`), surface forms.

    Ranked by how often their normalised form occurs (most first), then by
    first position; one surface form per normalised name; at most ``limit``.
    This is the candidate pass without an NER pipeline (:mod:`slmgraph.indexing.stages.ner`).
    Sentences that give orders to an assistant (:func:`slmgraph.text.prose.without_orders`)
    yield no names.
    """
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    surface: dict[str, str] = {}
    for sp in candidate_spans(without_orders(text)):
        key = normalize_name(sp.name)
        counts[key] += 1
        if key not in first:
            first[key] = sp.start
            surface[key] = sp.name
    ranked = sorted(counts, key=lambda k: (-counts[k], first[k]))
    return [surface[k] for k in ranked[:limit]]


def _sentence_initial(text: str, pos: int) -> bool:
    """True when the word at ``pos`` starts a sentence, line or quotation (an opening quote after a space:
    'levity, "Hope everyone...' -- a quoted sentence begins with a capital whatever its first word)."""
    i = pos - 1
    while i >= 0 and text[i] in " \t\"'\u201c\u2018(*#-_\u2014":
        if text[i] in "\"\u201c" and (i == 0 or text[i - 1].isspace()):
            return True
        i -= 1
    if i >= 0 and text[i] == "." and re.search(rf"(?<![\w.]){_TITLE_ABBR}$", text[:i + 1]):
        return False
    return i < 0 or text[i] in ".!?:\n\u2026"


# --- tolerant match ---------------------------------------------------------
# Sources: the scoring rule of ARCHITECTURE.md ("Extraction quality": casefold, strip
# punctuation and leading articles); the plural rule is Harman's S-stemmer
# (D. Harman, "How effective is suffixing?", JASIS 42(1), 1991), plus "es"
# after a sibilant (boxes, churches, classes).

_POSSESSIVE = re.compile(r"'s(?![^\W_])")  # "Sorbonne's", tokenised "People 's"
_INNER_APOSTROPHE = re.compile(r"(?<=[^\W_])'(?=[^\W_])")  # "O'Brien", "Qur'an"
# Dotted single-letter acronyms ("U.S.", "U.S.A", "e.g."): the dots are dropped.
_DOTTED = re.compile(r"(?<![^\W_])(?:[^\W\d_]\.){1,}[^\W\d_](?![^\W_])\.?")
_WORD = re.compile(r"[^\W_]+")
_LEADING_ARTICLES = frozenset(("the", "a", "an"))


def _singular(word: str) -> str:
    """A word with a plural ending removed (keys are compared, not shown).

    Rules, in order, for words of 4+ characters: ``ies`` -> ``y`` (not after
    ``a``/``e``: "cities" -> "city", "series" -> "sery" on both sides);
    ``sses``/``xes``/``zzes``/``ches``/``shes`` -> drop ``es`` ("boxes" ->
    "box"); ``es`` -> drop ``s`` unless after ``a``/``e``/``o`` ("houses" ->
    "house", "Jones" -> "jone"); ``s`` -> dropped unless the word ends in
    ``ss``/``us``/``is`` ("rockets" -> "rocket"; "Paris", "Marcus",
    "Congress" stay). Words of 3 characters or fewer ("us", "bus", "gas")
    are left alone.
    """
    if len(word) < 4 or not word.endswith("s"):
        return word
    if word.endswith("ies") and len(word) > 4 and word[-4] not in "ae":
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "zzes", "ches", "shes")):
        return word[:-2]
    if word.endswith("es"):
        return word if word[-3] in "aeo" else word[:-1]
    if word.endswith(("ss", "us", "is")):
        return word
    return word[:-1]


def plural_forms(word: str) -> set[str]:
    """The regular English plurals of a lower-case ``word`` (set of str; empty for a word with a non-letter
    or of fewer than 2 letters): ``+s`` ("black" -> "blacks"), ``+es`` after s, x, z, ch, sh or o ("bus" ->
    "buses", "potato" -> "potatoes"; "+s" too after o: "pianos"), and ``y`` -> ``ies`` after a consonant
    ("berry" -> "berries"; "jay" -> "jays")."""
    if len(word) < 2 or not word.isalpha():
        return set()
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return {word + "es"}
    if word.endswith("y") and word[-2] not in "aeiou":
        return {word[:-1] + "ies"}
    return {word + "s", word + "es"} if word.endswith("o") else {word + "s"}


def tolerant_words(s: str, drop_article: bool = False) -> list[str]:
    """The words of ``s`` under the tolerant match (list of str; empty if none).

    Rules: :func:`slmgraph.text.prose.fold`; possessive ``'s`` dropped ("Sorbonne's", "People
    's Republic"); an apostrophe inside a word joins it ("O'Brien" ->
    "obrien"); dotted acronyms lose their dots ("U.S." -> "us"); every other
    non-alphanumeric character -- punctuation, hyphens, slashes, underscores --
    separates words ("Jean-Luc" and "Jean - Luc" both give "jean", "luc");
    each word loses a plural ending (:func:`_singular`). With
    ``drop_article``, a leading "the"/"a"/"an" is removed when a word follows
    it (ARCHITECTURE.md's scoring rule).
    """
    s = fold(s)
    s = _POSSESSIVE.sub("", s)
    s = _INNER_APOSTROPHE.sub("", s)
    s = _DOTTED.sub(lambda m: m.group(0).replace(".", ""), s)
    words = [_singular(w) for w in _WORD.findall(s)]
    if drop_article and len(words) > 1 and words[0] in _LEADING_ARTICLES:
        words = words[1:]
    return words


def tolerant_key(name: str) -> str:
    """The tolerant key of an entity name: its :func:`tolerant_words`, leading
    article dropped, joined by single spaces (str; empty if nothing is left).

    Two names match when their keys are equal: "The Beatles" = "beatles",
    "U.S." = "US", "Jean-Luc Picard" = "Jean - Luc Picard", "Sorbonne's" =
    "Sorbonne", "Companies" = "company". This is the gold scorer's entity
    match (ARCHITECTURE.md, "Extraction quality") and grounding's name form.
    """
    return " ".join(tolerant_words(name, drop_article=True))


_NICKNAME = re.compile(r'\s*["\u201c]([^"\u201c\u201d]+)["\u201d]\s*')


def name_forms(name: str) -> list[str]:
    """The forms a reader may use for the entity name ``name`` (list of str, ``name`` first).

    A quoted nickname between the given names and the last name gives two more: the name without it and
    the nickname with the last name (``Margaret "Peggy" Doyle`` -> ``Margaret Doyle``, ``Peggy Doyle``).
    """
    m = _NICKNAME.search(name)
    if not m or not name[:m.start()].strip() or not name[m.end():].strip():
        return [name]
    head, nick, tail = name[:m.start()].strip(), m.group(1).strip(), name[m.end():].strip()
    return [name, f"{head} {tail}", f"{nick} {tail}"]


_TEXT_KEYS: dict[str, str] = {}


def _text_key(text: str) -> str:
    """`` word word ... `` of ``text`` (padded with spaces), cached for the last few texts."""
    key = _TEXT_KEYS.get(text)
    if key is None:
        if len(_TEXT_KEYS) > 64:
            _TEXT_KEYS.clear()
        key = " " + " ".join(tolerant_words(text)) + " "
        _TEXT_KEYS[text] = key
    return key


def name_occurs(name: str, text: str) -> bool:
    """True when ``name`` occurs in ``text`` under the tolerant match.

    The name's tolerant key (leading article dropped) must appear as a
    contiguous sequence of whole words of the text's tolerant words -- not as
    a substring: "Al" does not occur in "Alex", "US" not in "business", but
    "the Sorbonne's" occurs in "at the Sorbonne" and "Jean Luc" in
    "Jean-Luc". A name with no words occurs nowhere.
    """
    key = tolerant_key(name)
    return bool(key) and f" {key} " in _text_key(text)


_MENTION_CACHE: dict[str, re.Pattern] = {}


def mentions(text: str, name: str) -> bool:
    """True when ``name`` occurs in ``text`` as whole words, ignoring case
    ("US" is not in "business", "AI" is not in "said")."""
    pat = _MENTION_CACHE.get(name)
    if pat is None:
        if len(_MENTION_CACHE) > 50_000:
            _MENTION_CACHE.clear()
        body = r"\s+".join(re.escape(w) for w in name.split())  # a name wrapped by a line break
        pat = re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE)
        _MENTION_CACHE[name] = pat
    return pat.search(text) is not None


def content_words(s: str) -> list[str]:
    """Lower-cased words of 3+ letters that are not stop words (for grounding checks)."""
    return [w for w in re.findall(r"[^\W\d_]{3,}", s.casefold()) if w not in STOP]


def is_grounded(claim: str, source_words: set[str], share: float = 1 / 3) -> bool:
    """True when at least ``share`` of ``claim``'s content words occur in ``source_words``.

    A small model's invented or copied text (a few-shot example, a looping
    phrase) shares few words with its source; faithful text shares most.
    Empty claims are not grounded.
    """
    w = content_words(claim)
    return bool(w) and sum(x in source_words for x in w) >= share * len(w)


def cut(s: str, max_chars: int) -> str:
    """Whitespace folded and cut at a word boundary to at most ``max_chars`` characters (ellipsis added)."""
    s = " ".join(s.split())
    return s if len(s) <= max_chars else s[: max_chars - 1].rsplit(" ", 1)[0] + "\u2026"


#: A third-person personal pronoun opening a sentence ("She gave a talk ...", "His daughter ..."): the
#: sentence is about the person named last before it, not about whoever else it names.
_PERSON_PRONOUN = re.compile(r"^[^\w]*(?:he|she|his|her|him|hers)\b(?![-'\u2019])", re.IGNORECASE)


#: Most sentences quoted together to keep a pronoun's person clear: the one naming the person and the
#: pronoun sentences after it.
PRONOUN_CHAIN = 3


def opens_on_pronoun(sentence: str) -> bool:
    """True when ``sentence`` opens on a third-person personal pronoun (:data:`_PERSON_PRONOUN`)."""
    return bool(_PERSON_PRONOUN.match(sentence))


def _last_person(sentence: str, persons: dict[str, str]) -> str | None:
    """The person of ``persons`` (surface form -> person) whose mention ends last in ``sentence``, or None."""
    best, at = None, -1
    for form, who in persons.items():
        body = r"\s+".join(re.escape(w) for w in form.split())
        for m in re.finditer(rf"(?<!\w){body}(?!\w)", sentence, re.IGNORECASE):
            if m.end() > at or (m.end() == at and len(form) > len(best or "")):
                best, at = who, m.end()
    return best


def pronoun_quote(sentences: list[str], i: int, persons: dict[str, str]) -> tuple[str | None, str | None]:
    """Who sentence ``i`` of ``sentences`` (one text unit's, in order) is about when it opens on a
    third-person pronoun, and how to quote it so that the pronoun stays clear.

    The pronoun stands for the person named last before it (``persons``: each surface form a text may use
    -> the person it names, e.g. {"Margaret Okafor": "Margaret Okafor", "Okafor": "Margaret Okafor"}),
    looked for in the nearest earlier sentence that names any person. Such a sentence is evidence about
    that person, not about another person it names or follows.

    Returns:
        ``(who, quote)``: ``(None, sentence)`` when the sentence does not open on a pronoun or no person is
        named before it; ``(who, quote)`` with the sentences from the one naming ``who`` to this one when
        they are at most :data:`PRONOUN_CHAIN` and each between opens on a pronoun too ("Walter Brennan
        spoke. He served ... He has offered ..."); ``(who, None)`` when ``who`` is named further back, too
        far to be quoted with it (drop it).
    """
    sentence = sentences[i]
    if not persons or not opens_on_pronoun(sentence):
        return None, sentence
    for j in range(i - 1, -1, -1):
        who = _last_person(sentences[j], persons)
        if who is not None:
            chain = sentences[j:i + 1]
            clear = len(chain) <= PRONOUN_CHAIN and all(opens_on_pronoun(s) for s in chain[1:])
            return who, " ".join(chain) if clear else None
    return None, sentence


def quoted_sentence(sents: list[str], k: int, persons: dict[str, str], max_chars: int) -> str | None:
    """Sentence ``k`` of ``sents`` (one text unit's) as a description quotes it, cut to ``max_chars``: when it
    opens on "he" or "she", with the sentence that names the person meant before it
    (:func:`pronoun_quote`; ``persons``: surface form -> person of the unit), and None
    when that person is named too far back or the two do not fit ``max_chars`` (the next sentence naming
    the entity describes it instead; only when none can is the sentence taken alone, as an empty
    description would leave the entity undescribed)."""
    _, quote = pronoun_quote(sents, k, persons)
    if quote is None or (quote != sents[k] and len(quote) > max_chars):
        return None
    return cut(quote, max_chars)


def number_word(word: str) -> bool:
    """True when ``word`` is a number written in letters ("twelve", "three", "hundred", "first"): a count or an
    order ("the twelve newsletters", "the first three years") names no topic (spaCy's English ``like_num``)."""
    from spacy.lang.en.lex_attrs import like_num

    return like_num(word)
