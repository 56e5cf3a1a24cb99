"""Name spans cut, joined and trimmed to names: the rules of the candidate pass that read only text and
character offsets (no spaCy), applied by :func:`slmgraph.indexing.stages.ner.find_candidates` to the spans of
NER and of the capitalised runs.

* Spans cut apart: at blank lines (:func:`paragraph_parts`), at commas between capitalised parts
  (:func:`comma_parts`), and a person from the organisation or place they are of
  (:func:`affiliation_parts`: "Marta Kellen von Bluewater Trust").
* Spans made whole: a transcript's speaker label in capitals (:func:`speaker_labels`: "DR. BRENNER:"), a
  kind of undertaking before a colon with the name after it (:func:`undertakings`: "Operation: Dulce"), a
  year before an event (:func:`with_year`: "2002 Winter Olympics").
* Spans trimmed to the name: leading articles and trailing clauses (:func:`trim_span`), a salutation and a
  trailing office (:func:`unaddressed`), leading titles and offices (:func:`untitled`: "Chair Priya Nair"), a
  line's label word (:func:`unlabelled`: "Update Rory:"), the words before a ship's prefix
  (:func:`vessel_cut`), a German kind word (:func:`unclassified`).
* Spans that are no name: a word cut by the text's edge (:func:`edge_cut`), an office with what it is of
  (:func:`is_office`), a heading of the document's structure (:data:`STRUCTURE_HEADING`).
* The type an untyped capitalised run's last word says (:func:`head_type`).
"""

from __future__ import annotations

import re

from slmgraph.names.forms import _TITLE_ABBR, STOP, WRAPPED_LINE_CHARS, normalize_name
from slmgraph.names.kinds import head_kind, salutation_cut, trailing_office_cut
from slmgraph.names.lexicon import (
    AFFILIATION_HEADS, COMMA_SUFFIXES, EVENT_HEADS, GENERIC_WORDS, HEAD_TYPES, KIND_WORDS, LABEL_WORDS,
    LEADING_OFFICES, NOT_PERSON_HEADS, ORG_SUFFIXES, PLACE_NOUNS, ROLE_WORDS, TITLES, UNDERTAKINGS, VESSEL_PREFIXES,
)


def edge_cut(text: str, start: int, end: int, at_start: bool, at_end: bool, recurs: bool) -> bool:
    """True when the span ``[start, end)`` may be a word cut by the text's edge.

    At a document's start only a span in capitals can be a cut word (a cut
    title-case word starts lower-case: "ndrew"); at a document's end a span in capitals or ending a prose line
    (of ``WRAPPED_LINE_CHARS`` or more; a short last line is a list item or heading), when it
    touching the last character when the text does not end a sentence; at a
    text unit's inner edge (the overlap of the neighbouring unit holds the
    whole word) any span touching it. A name that also occurs away from the
    edge is kept.
    """
    if recurs:
        return False
    head = text[:start].strip()
    tail = text[end:].strip()
    if not head:
        if not at_start:
            return True
        if text[start:end].replace(" ", "").isupper():
            return True
    if not tail:
        if not at_end:
            return True
        line = text[text.rfind("\n", 0, start) + 1:end]
        return text[start:end].replace(" ", "").isupper() or len(line) >= WRAPPED_LINE_CHARS
    return False


_BLANK_LINE = re.compile(r"\n[^\S\n]*\n\s*")


#: A dash with a space on each side: it joins two phrases ("Kestrel Point Society — Spring Newsletter", a
#: title line), never two words of one name ("Jean-Luc", "Baden-Württemberg" have none).
_SPACED_DASH = re.compile(r"[^\S\n]+[\u2014\u2013][^\S\n]+")


def paragraph_parts(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """``text[start:end]`` cut at blank lines and at spaced dashes (:data:`_SPACED_DASH`): no name runs from a
    heading or paragraph into the next one (spaCy's NER returned "Holmfirth Bay\n\nHolmfirth Bay" for a
    heading followed by its paragraph), nor across the dash of a title line ("Kestrel Point Lighthouse
    Preservation Society — Autumn Newsletter", tagged one organisation). Returns ``(start, end)`` character
    offsets of the non-empty parts."""
    parts, at = [], start
    cuts = sorted([*_BLANK_LINE.finditer(text, start, end), *_SPACED_DASH.finditer(text, start, end)],
                  key=lambda m: m.start())
    for m in cuts:
        if m.start() > at:
            parts.append((at, m.start()))
        at = max(at, m.end())
    if end > at:
        parts.append((at, end))
    return parts


def comma_parts(text: str, start: int, end: int, etype: str) -> list[tuple[int, int, str]]:
    """An NER span cut at its commas when every part is capitalised: ``[(start, end, type)]``.

    "Hayes, Mercer" (a vocative pair, tagged WORK_OF_ART) is two names; "Springfield, Illinois" two places.
    A part that is a corporate or generational suffix stays with the name before it ("Acme, Inc.",
    "King, Jr."). Parts of a person or place span keep its type; parts of another span are untyped (the
    label described the whole).
    """
    span = text[start:end]
    if ", " not in span:
        return [(start, end, etype)]
    parts, pos = [], 0
    for piece in span.split(","):
        a = pos + len(piece) - len(piece.lstrip())
        parts.append((start + a, start + pos + len(piece.rstrip())))
        pos += len(piece) + 1
    merged: list[list[int]] = []
    for a, b in parts:
        word = text[a:b].strip(" .").casefold()
        if merged and (word in COMMA_SUFFIXES or not text[a:b][:1].isupper()):
            merged[-1][1] = b
        else:
            merged.append([a, b])
    if len(merged) == 1:
        return [(start, end, etype)]
    ptype = etype if etype in ("person", "location") else "unknown"
    return [(a, b, ptype) for a, b in merged if b > a]



_LOCATIVE = re.compile(r"[^\S\n]+(in|on)[^\S\n]+(?=[A-Z])")


def locative_parts(text: str, start: int, end: int, etype: str) -> list[tuple[int, int, str]]:
    """An NER span cut before a trailing locative phrase, ``[(start, end, type)]``: "the Wool Exchange Hall on
    Mill Street" -> "the Wool Exchange Hall" and "Mill Street", "the Corran Hall in Eastbridge" -> "the Corran
    Hall" and "Eastbridge" (the phrase says where the named thing is; the name ends before it). Cut only in a
    place or organisation span whose part before the preposition has two or more capitalised words and whose
    part after is capitalised: after "in" any name, after "on" a name with a place's head noun ("Mill
    Street"); "Alice in Wonderland", "Stratford on Avon", "Committee on Foreign Affairs" stay whole. The
    part before keeps ``etype``; the part after is a place."""
    if etype not in ("organization", "location", "unknown"):
        return [(start, end, etype)]
    for m in _LOCATIVE.finditer(text, start, end):
        left = [w for w in text[start:m.start()].split() if w.casefold() not in ("the", "a", "an")]
        right = text[m.end():end].split()
        if len(left) < 2 or not all(w[:1].isupper() for w in left) or not right:
            continue
        if any(w[:1].islower() and w.casefold() not in ("of", "and", "upon") for w in right):
            continue
        if m.group(1) == "on" and head_kind(" ".join(right)) != "location":
            continue
        if left[-1].casefold() in ("conference", "convention", "forum", "panel", "symposium"):
            continue  # "a conference on Trade": a body named after its subject
        return [(start, m.start(), etype), (m.end(), end, "location")]
    return [(start, end, etype)]


#: A lower-case noun of a place right after a name (:data:`PLACE_NOUNS`): the name is the place's ("Dulce base"),
#: not an organisation, whatever NER said (an acronym is left alone: "NATO base").
PLACE_AFTER = re.compile(r"[^\S\n]+(?:" + "|".join(sorted(PLACE_NOUNS)) + r")\b")


def is_office(name: str) -> bool:
    """True for an office written with what it is of: every word before the first "of" is a role word
    (:data:`ROLE_WORDS`; hyphenated parts each): "Emperor of Japan", "Bishop of Pittsburgh", "Co-Chief
    Executive Officer of Power Corporation of Canada". Who holds it is another name (Re-DocRED annotates
    the holder, not the office)."""
    head, sep, _ = name.partition(" of ")
    if not sep or not head:
        return False
    parts = [p.casefold().rstrip(".") for w in head.split() for p in w.split("-") if p]
    return bool(parts) and all(p in ROLE_WORDS for p in parts)


#: A heading of the document's own structure ("Chapter 3", "Part II", "Section 4.2", "Episode 52"): spaCy
#: tags some as entities (the demo story's "Chapter 1".."Chapter 3" became one-entity communities whose
#: data-built reports said only "Chapter 3." and outscored the story's real communities).
STRUCTURE_HEADING = re.compile(
    r"(?i)^(chapter|part|section|book|act|scene|episode|volume|vol\.?|appendix|figure|fig\.?|table|page|"
    r"kapitel|teil|abschnitt)\s+([0-9]+(\.[0-9]+)*|[ivxlcdm]+|[a-z]|one|two|three|four|five|six|seven|eight|"
    r"nine|ten|eleven|twelve)$")


def unaddressed(start: int, end: int, name: str, etype: str) -> tuple[int, int, str, str]:
    """A name without the salutation before it and the office after it ("Dear Priya Natarajan" -> "Priya
    Natarajan", "Robert Achebe Leader" -> "Robert Achebe"; :mod:`slmgraph.names.kinds`). "Dear Mayor" becomes
    "Mayor", which as a lone title is no entity."""
    k, rest = salutation_cut(name)
    if k:
        start, name = start + k, rest
    if etype in ("person", "unknown"):
        short = trailing_office_cut(name)
        if short != name:
            end, name = start + len(short), short
    return start, end, name, etype


def untitled(text: str, start: int, end: int, name: str, etype: str) -> tuple[int, int, str, str]:
    """A person's full name without the titles in front ("Dr. Kebwe Steven Kebwe" -> "Kebwe Steven Kebwe",
    "Herr Prof. Müller" -> "Müller", "Leader of the Opposition Khaleda Zia" is left alone): leading
    :data:`slmgraph.names.lexicon.TITLES` are dropped when two or more words remain or when two or more titles
    precede one name; "Mr. Holmes" keeps its one title (one word would be left, and "Mr." and "Mrs. Holmes"
    are different people). An office written as a title ("Chair Priya Nair", "Chief Executive Tom Reyes",
    :data:`slmgraph.names.lexicon.LEADING_OFFICES`, the first word capitalised) is dropped when a full
    personal name of two or more title-case words remains ("Chair Nair" stays whole), also from a span NER
    typed an organisation. Gold names carry no titles (Re-DocRED)."""
    words = list(re.finditer(r"\S+", name))
    k = 0
    while k < len(words) - 1 and words[k].group(0).casefold().rstrip(".") in TITLES:
        k += 1
    if k == 1 and len(words) == 2:
        k = 0  # "Mr. Holmes"
    if k == len(words) - 1 and head_kind(name):
        k = 0  # "Alderman Library": a title word naming a place or body, not a person's title
    j = k
    while j < len(words) - 2 and words[j].group(0).casefold().rstrip(".") in LEADING_OFFICES:
        j += 1
    rest = [w.group(0) for w in words[j:]]
    full_name = (len(rest) >= 2 and words[0].group(0)[:1].isupper() and all(title_cased(w) for w in rest)
                 and not any(w.casefold().rstrip(".,") in NOT_PERSON_WORDS for w in rest))
    if full_name and (j > k and etype in ("person", "unknown") or j > 0 and etype == "organization"):
        k = j  # "Chair Priya Nair", "Treasurer Fiona Baxter", "Ms Elaine Forsyth" tagged ORG: not the name
    elif k == 0 or etype not in ("person", "unknown"):
        return start, end, name, etype
    cut = words[k].start()
    return start + cut, end, name[cut:], "person"


def unlabelled(text: str, start: int, end: int, name: str, etype: str) -> tuple[int, int, str, str]:
    """A name without the label word glued to it where a line opens with "Label Name:" ("Update Rory:",
    "Note Smith:" -> "Rory", "Smith"; :data:`slmgraph.names.lexicon.LABEL_WORDS`): the label heads the line,
    the name is whom it is about. Left whole unless a colon follows the span and a title-case word remains."""
    words = name.split()
    line_start = text.rfind("\n", 0, start) + 1
    if (len(words) < 2 or text[line_start:start].strip(" \t*-_#>\u2022") or not text[end:end + 2].lstrip(" ").startswith(":")
            or words[0].casefold().rstrip(".") not in LABEL_WORDS or len(words[0]) < 3
            or words[0].casefold() in TITLES or not all(title_cased(w) for w in words[1:])):
        return start, end, name, etype
    cut = name.index(words[1], len(words[0]))
    return start + cut, end, name[cut:], etype


def vessel_cut(start: int, end: int, name: str, etype: str) -> tuple[int, int, str, str]:
    """A ship's name without the words before its prefix ("Delivery of the MV Solas" -> "MV Solas", a
    capitalised run from a sentence's start), typed ``concept`` when untyped (a vessel is a made thing)."""
    words = list(re.finditer(r"\S+", name))
    k = next((i for i, w in enumerate(words[:-1]) if w.group(0) in VESSEL_PREFIXES and title_cased(words[i + 1].group(0))),
             None)
    if k is None or (k and not words[k - 1].group(0).islower()):
        return start, end, name, etype
    cut = words[k].start()
    return start + cut, end, name[cut:], "concept" if etype == "unknown" else etype


def unclassified(start: int, end: int, name: str, etype: str) -> tuple[int, int, str, str]:
    """A name without a kind word and what precedes it (:data:`KIND_WORDS`: "Firma Bosch GmbH" and "Vertreter
    der Firma Bosch GmbH" -> "Bosch GmbH", typed organization unless NER typed it otherwise), so it is one
    entity with the name written without it."""
    words = list(re.finditer(r"\S+", name))
    k = max((i for i, w in enumerate(words[:-1]) if w.group(0).casefold() in KIND_WORDS), default=None)
    if k is None:
        return start, end, name, etype
    kind = KIND_WORDS[words[k].group(0).casefold()]
    cut = words[k + 1].start()
    return start + cut, end, name[cut:], kind if etype in ("unknown", "person") else etype


#: A line that opens with a label and a colon ("DR. BRENNER: We begin.", "COUNCILLOR REYES:"); the label is
#: checked by :func:`speaker_labels` (capitals, 1-5 words).
_LABEL_LINE = re.compile(r"^[^\S\n]*([^\W\d_][^\n:]{0,60}?)[^\S\n]*:(?=\s|$)", re.M)
_LABEL_PART = re.compile(r"[^/&\s](?:[^/&]*[^/&\s])?")  # the speakers of "KEVIN SCOTT/ANDREW NG", "A & B"
_LABEL_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['\u2019.\-](?=[^\W\d_]))*\.?")


def speaker_labels(text: str, items: list, entity_types: tuple[str, ...]) -> list:
    """The candidate spans ``items`` (``(start, end, name, type, source)``) with transcript speaker labels
    made whole: a line that opens with a label in capitals (1-5 words, titles with their full stop included;
    several speakers joined by "/" or "&") and a colon names who speaks, so the label is one ``person`` span
    ("BRENNER" of "DR. BRENNER", "REYES" of "COUNCILLOR REYES", "ANDREW NG": titles cut) in place of the
    pieces NER or the capitalised runs made of it (spaCy's pipeline learnt names from mixed-case text: "DR"
    alone came out as a place); a label of
    only :data:`LABEL_WORDS`, titles and office words ("HOST:", "Q:", "THE PRESIDENT:") names no one and
    gives no entity."""
    person = "person" if "person" in entity_types else "unknown"
    for m in _LABEL_LINE.finditer(text):
        label = m.group(1)
        letters = [c for c in label if c.isalpha()]
        if not all(c.isupper() for c in letters):
            continue
        parts = [(m.start(1) + p.start(), m.start(1) + p.end()) for p in _LABEL_PART.finditer(label)]
        if not all(1 <= len(text[a:b].split()) <= 5 and all(_LABEL_WORD.fullmatch(w) for w in text[a:b].split())
                   for a, b in parts):
            continue
        for s, e in parts:  # "KEVIN SCOTT/ANDREW NG:": two speakers
            words = text[s:e].split()
            items = [it for it in items if not (it[0] < e and s < it[1])]
            folded = [w.casefold().rstrip(".") for w in words]
            if sum(c.isalpha() for c in text[s:e]) > 1 and any(
                    w not in LABEL_WORDS and w not in ROLE_WORDS and w not in STOP for w in folded):
                k = 0
                while k < len(words) - 1 and folded[k] in TITLES:
                    k += 1  # "DR. SMITH": the speaker is Smith (a label's title is how the minutes address him)
                s += _nth_word_start(text[s:e], k)
                items.append((s, e, " ".join(words[k:]), person, "ner"))
    return sorted(items, key=lambda it: it[0])


#: Words between a person's name and the organisation or place the person is of or at, in English, German,
#: Dutch, French, Spanish, Portuguese and Italian: "Marta Kellen of / from / at Bluewater Trust", "von (der)",
#: "aus", "bei", "van", "de (la)", "del", "della", "des", "du", "da", "di", "dos".
_AFFILIATION = re.compile(r"[^\S\n]+(?:(?:of|from|at)(?:[^\S\n]+the)?|von(?:[^\S\n]+(?:der|dem|den))?|vom|"
                          r"(?:aus|bei)(?:[^\S\n]+(?:der|dem|den))?|van(?:[^\S\n]+(?:der|den|de))?|"
                          r"de(?:[^\S\n]+(?:la|los|las))?|del|della|des|du|da|di|dos)[^\S\n]+(?=[^\W\d_])")


def title_cased(word: str) -> bool:
    """A word of a personal name as written: capital first, lower-case after ("Kellen", "O'Neil",
    "Müller-Lüdenscheidt"), or an initial ("J.")."""
    w = word.rstrip(",")
    if re.fullmatch(r"[^\W\d_]\.", w):
        return w[0].isupper()
    return (bool(re.fullmatch(r"[^\W\d_]+(?:['\u2019\-][^\W\d_]+)*", w)) and w[0].isupper()
            and any(c.islower() for c in w[1:]))


def affiliation_parts(text: str, item: tuple, others: dict[str, set[str]],
                       entity_types: tuple[str, ...]) -> list[tuple]:
    """A span cut into a person and what the person is of, when it is one: ``[item]`` or two items.

    "Marta Kellen von Bluewater Trust" -> "Marta Kellen" (person) and "Bluewater Trust" (organization): the
    part before a connector (:data:`_AFFILIATION`) is a personal name -- two to four title-case words after
    any titles, none a head, office, stop or corporate word -- and the part after it is an organisation or
    place: it has a head word (:data:`AFFILIATION_HEADS`) or a corporate suffix, or (weaker evidence, taken
    only when the name before it is titled or is a person elsewhere in the text unit) it is an acronym or a
    name the text unit has elsewhere as an organisation or place (``others``: normalised name -> types).
    Names of one word before the connector stay whole ("Bank of America", "Ludwig van Beethoven", "Duke of
    Wellington"), and so do names whose first part is no personal name ("Supreme Soviet of the USSR",
    "Natural History Museum of Los Angeles County").
    """
    s, e, name, etype, src = item
    span = text[s:e]
    for m in _AFFILIATION.finditer(span):
        left, right = span[:m.start()], span[m.end():]
        words = left.split()
        k = 0
        while k < len(words) and words[k].casefold().rstrip(".") in TITLES:
            k += 1
        core = words[k:]
        if not 2 <= len(core) <= 4 or not all(title_cased(w) for w in core):
            continue
        if any(w.casefold().rstrip(".,") in NOT_PERSON_WORDS for w in core):
            continue
        rwords = right.split()
        if not rwords or not (rwords[0][:1].isupper()):
            continue
        folded = [w.casefold().strip(".,") for w in rwords]
        rtype = next((AFFILIATION_HEADS[w] for w in folded if w in AFFILIATION_HEADS), None)
        if rtype is None and folded[-1] in ORG_SUFFIXES:
            rtype = "organization"
        if rtype is None:
            lkey = normalize_name(" ".join(core))
            person_elsewhere = k > 0 or "person" in others.get(lkey, ()) or "person" in others.get(
                normalize_name(core[-1]), ())
            rkey = normalize_name(right)
            known = others.get(rkey, set()) & {"organization", "location"}
            if not person_elsewhere:
                continue
            if known:
                rtype = sorted(known)[0]
            elif len(rwords) == 1 and right.strip(".,").isupper() and len(right.strip(".,")) > 1:
                rtype = "organization"
            else:
                continue
        a0, a1 = s, s + len(left.rstrip())
        b0 = s + m.end()
        b1 = b0 + len(right.rstrip(" .,;:"))
        person = "person" if "person" in entity_types else "unknown"
        return [(a0, a1, " ".join(left.split()), person, src),
                (b0, b1, " ".join(text[b0:b1].split()), rtype if rtype in entity_types else "unknown", src)]
    return [item]


_UNDERTAKING = re.compile(r"(?<![\w'\u2019])((?i:" + "|".join(sorted(UNDERTAKINGS)) + r"))[^\S\n]*:[^\S\n]*(?=\S)")


_CAP_WORDS = re.compile(r"[^\W\d_a-z][\w'\u2019\-]*(?:[^\S\n]+[^\W\d_a-z][\w'\u2019\-]*){0,4}")


def undertakings(text: str, items: list, entity_types: tuple[str, ...]) -> list:
    """The candidate spans with "Operation: Dulce" made one ``event`` span: a kind of undertaking
    (:data:`UNDERTAKINGS`, capitalised) and a colon right before a candidate name are the undertaking's name,
    not a one-word entity ("Operation") beside the name ("Dulce"), which keeps its own mentions elsewhere."""
    for m in _UNDERTAKING.finditer(text):
        word = m.group(1)
        if not word[0].isupper():
            continue
        after = [it for it in items if it[0] == m.end()]
        cap = _CAP_WORDS.match(text, m.end())
        if not after and not cap:
            continue
        # the name after the colon: a candidate there, or else its capitalised words (a name that only ever
        # follows "Operation:" in a text unit is sentence-initial there and not a capitalised-run candidate)
        name_end = max(it[1] for it in after) if after else cap.end()
        items = [it for it in items if not (it[0] < name_end and m.start() < it[1])]
        etype = "event" if "event" in entity_types else "unknown"
        items.append((m.start(), name_end, " ".join(text[m.start():name_end].split()), etype,
                      after[0][4] if after else "caps"))
    return sorted(items, key=lambda it: it[0])


#: What opens an NER span without being part of the name: an article, a lower-case stop word ("of
#: Fisheries"), a list heading ("List of Taito games" -> "Taito games", then trimmed), a decade ("1990s").
_LEAD = re.compile(r"^(?:(?i:the|a|an)|of|in|at|on|for|by|and|(?i:list of)|\d{3}0s)\s+")


#: Words that are no part of a personal name: heads of organisation and place names, offices, stop words,
#: common nouns that open names, corporate suffixes (the affiliation split's personal-name check).
NOT_PERSON_WORDS = (NOT_PERSON_HEADS | frozenset(AFFILIATION_HEADS) | frozenset(HEAD_TYPES) | ROLE_WORDS | STOP
                     | GENERIC_WORDS | ORG_SUFFIXES)


def head_type(name: str, entity_types: tuple[str, ...]) -> str:
    """The type of an untyped capitalised run: ``person`` when it holds a quoted nickname (``James "Jimmy"
    Frise``), else by its last word (:data:`HEAD_TYPES`) when it has two or more words; ``unknown`` otherwise
    or when that type is not configured."""
    words = name.split()
    if len(words) > 2 and any(w[:1] in "\"\u201c" and w[-1:] in "\"\u201d" for w in words[1:-1]):
        t = "person"
    elif len(words) >= 2:
        t = HEAD_TYPES.get(words[-1].casefold(), "unknown")
    else:
        t = "unknown"
    return t if t in entity_types else "unknown"


def with_year(text: str, sp):
    """A capitalised run naming an event, with the year written right before it ("2002 Winter Olympics")."""
    last = sp.name.split()[-1].casefold()
    m = re.search(r"(?<!\S)(\d{4}(?:[\u2013\-/]\d{2,4})?) $", text[max(0, sp.start - 12):sp.start])
    if last in EVENT_HEADS and m:
        start = sp.start - (len(m.group(0)))
        return type(sp)(start, sp.end, f"{m.group(1)} {sp.name}")
    return sp


YEAR = re.compile(r"\d{4}(?:[\u2013\-/]\d{2,4})?")


def _nth_word_start(s: str, k: int) -> int:
    """Offset of the ``k``-th (0-based) whitespace-separated word of ``s``."""
    return [m.start() for m in re.finditer(r"\S+", s)][k]


def trim_span(text: str, start: int, end: int) -> tuple[str, int, int]:
    """An NER span's name, cut to its name (offsets follow the cut; ``("", ...)`` when nothing is left).

    Removed: leading words that are not the name (:data:`_LEAD`: an article, "of", "List of", a decade);
    an unclosed parenthesis and what follows it ("Association ... (AACSB"
    -> "Association ..."); what follows a sentence end inside the span (a word of two or more lower-case
    letters and a full stop: "...in Oslo. Angell" -> "...in Oslo"; not after a title such as "Mrs.");
    a trailing possessive; whitespace folded. A span with no capital letter ("communist") is not a name.
    trailing lower-case words that begin with a stop word ("Billboard Hot 100 for a week" -> "Billboard Hot
    100", "Tony Day of" -> "Tony Day"; "Rogaland county" stays); a stop word after an initial ("World War
    I. After" -> "World War I"). Other words stay: titles of works begin with stop words ("Where the Wild
    Things Are").
    """
    span = text[start:end]
    while True:  # "the", "of Fisheries", "List of Taito games", "1990s Rocksburg"
        m = _LEAD.match(span)
        if not m:
            break
        start += m.end()
        span = span[m.end():]
    if span.count("(") > span.count(")"):
        span = span[:span.rindex("(")]
    m = re.search(r"[a-z\u00df-\u00ff]{2}\.(\s+)(?=[A-Z])", span)
    if m and not re.search(rf"(?<![\w.]){_TITLE_ABBR}$", span[:m.start(1)]):
        span = span[:m.start(1)]
    m = re.search(r"\b[A-Z]\.(\s+)(\w+)", span)
    if m and m.group(2).casefold() in STOP:  # "World War I. After": the next sentence's first word
        span = span[:m.start(1)]
    words = span.split()
    k = len(words)
    while k > 1 and words[k - 1].islower():
        k -= 1
    if k < len(words) and words[k].casefold() in STOP:  # "Billboard Hot 100 for a week", "Tony Day of"
        span = span[:_nth_word_start(span, k)]
    span2 = re.sub(r"['\u2019]s?$", "", span.rstrip()).rstrip(" .,;:-")
    end = start + len(span2)
    name = " ".join(span2.split())
    if not any(ch.isupper() for ch in name):
        return "", start, end
    return name, start, end
