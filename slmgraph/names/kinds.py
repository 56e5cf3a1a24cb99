"""Kinds of names: a name's type from more evidence than one NER label, what is not a name, and which lines
state no relationship.

One concern, typing names: the kind tables below (:data:`HEAD_KINDS`, :data:`PREFIX_KINDS`,
:data:`DEFINITION_KINDS`, the not-a-name lists) are the rules of the vote and stay beside it; the word lists
other modules share (titles, offices, suffixes) are in :mod:`slmgraph.names.lexicon`.

**Types by vote** (:func:`vote`). Every mention of a name in a text unit gives evidence, weighed:

* its NER label (:data:`slmgraph.indexing.stages.ner.NER_TYPES`): 2 per mention, except a person label on a
  name holding a digit ("MM106": a code or product, no personal name);
* the head noun or corporate suffix of a name of two or more words (:data:`HEAD_KINDS`: "Fenwick Lane",
  "Aldane River", "Hollins Meadows" are places, "Millbrook Gazette", "Bluewater Renewables", "Millbrook
  Library", "... Ltd" organisations): :data:`HEAD_WEIGHT` per mention, so it outvotes NER, which learnt
  names from news text and types an unknown two-word name as a person;
* a title before it ("Councillor Reyes", :data:`slmgraph.names.lexicon.TITLES`), or a capitalised office the
  candidate pass cut off the name ("Treasurer | Fiona Baxter", :data:`slmgraph.names.lexicon.LEADING_OFFICES`):
  person, :data:`TITLE_WEIGHT` per mention;
* its context (:func:`context_kind`): a quoted title ('"Mess of Blues"') -> concept, :data:`HEAD_WEIGHT`;
  "the song X", "the film X" -> concept; "in X", "near X", "the town of X" -> location (a name of two or more
  words: 1), "crossing to X", "the ferry to X" -> location, and "X (born 1950)",
  "X was born", "X's wife" -> person, :data:`PLACE_WEIGHT` per mention; a language after "in" or before a
  gloss -> concept ("written in Latin", "(Persian: ...)"); "at X" -> location against a person label only
  (a company has premises too); "X's board", "X's shareholders" -> organization; "X said", "X says" ->
  person unless the name has a head noun: 1 per mention. A preposition of place governs every name of its
  list ("in Manchester and Glasgow": Glasgow too). A role said of the name (:func:`role_after`: "X (Chair)",
  "X (Music Director)", "X, Chair" on a signature, "X, the conductor,") -> person, :data:`DEFINITION_WEIGHT`;
  "X, who" -> person, as an NER label weighs. A place's head noun does not block these person cues, a title or
  an office before the name: it is only guessed from the last word ("Gideon Marsh", "Ilse Brook"), the cue is
  said of the person.

The head noun is the word before "of" when that word says a kind ("Battle of Vimy Ridge" -> event,
"University of Oslo" -> organization), else the last word, else a kind-saying first word
(:data:`PREFIX_KINDS`: "Via Pesce", "Piazza ...", "FK Fyllingsdalen", "Operation Vistula", "Storm Babet"; a ship's
prefix in capitals, :data:`slmgraph.names.lexicon.VESSEL_PREFIXES`: "HMS Ardent", "MV Solas" -> concept);
a one-word name with a place ending (:data:`PLACE_SUFFIXES`: "Yorkshire", "Pittsburgh") is a place. A
newspaper is an organisation (it reports, asks and publishes); awards, charts and treaties are works.

* a definition or apposition (:func:`definition_kind`): "X is a Canadian rock band", "X (born 1950) is an
  American singer", "X, a village in ..." -> the kind of the last lower-case noun of that noun phrase,
  :data:`DEFINITION_WEIGHT` after "is/was" (it outvotes NER's work or event too), :data:`PLACE_WEIGHT` as an
  apposition;
* an acronym NER typed a person or nothing ("ABBA", "INSEAD") -> organization, :data:`TITLE_WEIGHT`.

Each mention of a one-word name that is the first or last word of a name the vote made a person in the
same text unit ("Robeson" beside "Paul Robeson") also votes person with :data:`PART_WEIGHT`. Names written
as one list ("Marta Argerich, Nelson Goerner, Ivo Pogorelich and Jan Lisiecki", :func:`coordinated`) are of
one kind: when two thirds of the list share a kind (:func:`list_kind`), each other member votes for it with
:data:`LIST_WEIGHT`; of two names joined by "and" / "or" alone (:func:`coordinated_pairs`), a place makes an
untyped partner a place (:func:`pair_kind`: "to Leeds and York"). A title in quotes ('"Two Doors Down"', :func:`quoted_titles`) is one name, a work.

The type with the largest weight wins; on a tie a place beats an organisation (spaCy types a town ORG when
it is the subject of a sentence and GPE after "in": the place reading is the one both share), and
otherwise the type of the first mention stays. Untyped evidence ("unknown") never votes. Across text
units each unit's mention votes once with its unit's winner (:func:`slmgraph.indexing.stages.graph.build_graph`).
NER's ``concept`` and ``event`` (works, laws, products, events) are not outvoted by a head noun: titles of
works are made of any words ("Abbey Road").

**Not a name** (:func:`not_a_name`): a salutation ("Dear Mayor": the word after "Dear" is an address);
an office or title alone ("Town Clerk", "Deputy Mayor"); a word naming a part of a document
(:data:`DOCUMENT_PARTS`: "Minutes", "Agenda", "Present", a transcript's "(Crosstalk.)"); an interjection
("Bye-bye"); a common word that only opens sentences and is written in lower case elsewhere in the text unit
("Momentum", "Stories") or is followed by an adverb particle ("Stick around."); a ship's prefix alone ("MV").
An untyped office of two or three words ("Music Director") and a plural written only as the possessive of an
office ("Players' Representative") are no names either (:func:`office_phrase`).

**List lines** (:func:`list_spans`): an attendance line ("Present: ...", "Apologies: ..."), a signature
block (the lines after "Yours sincerely,"), a distribution line ("To:", "cc:", "Distribution:") and a
comma list of names with no other word (:func:`names_only`) state no relationship between the names in
them: extraction's same-sentence co-occurrence and the concepts' links skip them, no description is taken
from them, and a list line is never quoted (:func:`list_line`); the names stay mentions.
"""

from __future__ import annotations

import re
from collections import Counter

from slmgraph.names.forms import STOP
from slmgraph.names.lexicon import (BYLINE_WORDS, CALENDAR_WORDS, DATELINE_WORDS, HEAD_SUFFIXES, LEADING_OFFICES,
                                    MONTH_NAMES, OFFICE_WORDS, ROLE_WORDS, TITLES, VESSEL_PREFIXES)

#: Last words of multi-word names that say their kind (the head of an English noun phrase is its last word).
HEAD_KINDS: dict[str, str] = {
    **dict.fromkeys("""lane street road avenue drive close crescent terrace boulevard highway motorway
        meadow meadows field fields common heath moor moors marsh fen downs wood woods forest park gardens
        wilderness river brook stream creek beck burn lake loch pond reservoir canal falls bay cove harbour
        harbor coast beach island islands isle peninsula valley vale hill hills mountain mountains mount peak
        peaks ridge glacier desert county parish borough township village city town district province region
        regions voivodeship estate quarter square bridge airport palace castle mall empire""".split(),
        "location"),
    **dict.fromkeys(sorted(HEAD_SUFFIXES), "organization"),
    **dict.fromkeys("""library renewables energy holdings group
        company partners partnership associates industries technologies systems solutions enterprises ventures
        capital bank council committee commission board trust foundation association society club federation
        party ministry department agency authority institute university college school academy hospital
        museum orchestra band choir records press government fotball football ferries airways airlines""".split(),
        "organization"),
    # a firm is named by the plural of its members' profession ("Sorensen Bay Architects", "Royal Engineers")
    **dict.fromkeys("""architects solicitors engineers consultants accountants surveyors builders contractors
        lawyers advocates""".split(), "organization"),
    # a newspaper reports, asks and publishes: to a reader it is an organisation (its publisher), not a work
    **dict.fromkeys("""gazette times post journal herald chronicle courier tribune observer newspaper magazine
        daily""".split(), "organization"),
    # awards, charts, treaties, scriptures, registers: works
    **dict.fromkeys("""award awards prize medal chart charts act agreement treaty accord report policy testament
        album register""".split(), "concept"),
    **dict.fromkeys("""tour championships championship cup olympics games festival tournament competition
        restoration uprising rebellion revolution war wars battle campaign election elections summit
        expedition""".split(), "event"),
}

#: First words that say the kind of a name whose last word does not: Romance-language streets, squares
#: and schools ("Via Pesce", "Piazza XX Settembre", "Escuela Latinoamericana de Medicina"), "Mount X", "Lake X",
#: sports-club abbreviations ("FK Fyllingsdalen", "SK Ull"), "Operation X", a named storm ("Storm Babet"). Ship
#: prefixes ("HMS Ardent", "MV Solas") are :data:`slmgraph.names.lexicon.VESSEL_PREFIXES`, read as written.
PREFIX_KINDS: dict[str, str] = {
    **dict.fromkeys("""via viale corso piazza piazzale plaza praça rue calle avenida avenue rua largo mount mt
        lake loch fort cape isle lago monte mont sierra cerro gmina""".split(), "location"),
    **dict.fromkeys("""escuela universidad università université universität universidade banco banca fc afc cf
        sk fk if sc sv club""".split(), "organization"),
    **dict.fromkeys("operation storm hurricane typhoon cyclone".split(), "event"),
}

#: Nouns of buildings and streets that are also surnames ("Stuart Hall", "Ella Row"): they say a place only after
#: another common noun of a kind or of this list ("Town Hall", "Harbour Row", "Market Tower", "Mill Row"), which no
#: personal name holds.
BUILDING_NOUNS = frozenset("hall row house tower cottage quay pier wharf market chapel inn mill yard".split())

#: Prefixes that say the kind of a two-word name only ("Lake Varrin", "Mount Kellen").
_SHORT_PREFIXES = frozenset("mount mt lake loch fort cape isle".split())
#: Endings of one-word place names ("Yorkshire", "Pittsburgh", "Kazakhstan", "Islamabad", "Volgograd").
PLACE_SUFFIXES = ("shire", "burgh", "istan", "abad", "grad")

#: Weight of a head noun per mention (an NER label weighs 2, a context cue 1).
HEAD_WEIGHT = 4
#: Weight of "in X" per mention: more than one NER label ("in Yorkshire", tagged PERSON).
PLACE_WEIGHT = 3
#: Weight of a one-word name being the first or last word of a person named in the same text unit
#: ("Robeson" beside "Paul Robeson", tagged ORG alone), per mention.
PART_WEIGHT = 3
#: Weight of a personal title before a name ("Councillor Reyes"), per mention.
TITLE_WEIGHT = 3
NER_WEIGHT = 2
CONTEXT_WEIGHT = 1

#: NER types a head noun does not outvote (titles of works and names of events are made of any words).
KEPT_NER_TYPES = frozenset({"concept", "event"})


def head_kind(name: str) -> str | None:
    """The kind the last word of a name says (:data:`HEAD_KINDS`), else None: "Fenwick Lane" -> location,
    "Bluewater Renewables Ltd" -> organization, and a head alone is the short form of such a name ("the
    Commission" -> organization)."""
    words = [w.strip(".,;:'\u2019()").casefold() for w in name.split()]
    words = [w for w in words if w]
    if not words or len(words) == 1 and not name[:1].isupper():
        return None
    if "of" in words[1:-1] and words[words.index("of", 1) - 1] in HEAD_KINDS:
        return HEAD_KINDS[words[words.index("of", 1) - 1]]  # "Battle of Vimy Ridge", "University of Oslo"
    if len(words) > 1 and words[-1] in BUILDING_NOUNS and (words[-2] in HEAD_KINDS or words[-2] in OFFICE_QUALIFIERS
                                                          or words[-2] in BUILDING_NOUNS):
        return "location"  # "Gullhaven Town Hall", "Harbour Row", "Mill Row": common nouns, a building or street
    if words[-1] in HEAD_KINDS or len(words) == 1 and not words[0].endswith(PLACE_SUFFIXES):
        return HEAD_KINDS.get(words[-1])
    if len(words) == 1:
        return "location" if len(words[0]) >= 7 else None  # a bare ending ("Shire") is a common word
    if words[0].rstrip(".") in _SHORT_PREFIXES and len(words) > 2:
        return None  # "Lake Varrin Water Project": a longer name is named after the lake, not the lake
    if name.split()[0].strip(".") in VESSEL_PREFIXES:
        return "concept"  # "MV Solas", "HMS Ardent": a ship, a made thing (its prefix in capitals, not "Ms")
    return PREFIX_KINDS.get(words[0].rstrip("."))


_BEFORE_PLACE = re.compile(r"(?:^|[^\w])(?:in|near|outside|inside|across|around|throughout)\s+(?:the\s+)?$", re.I)
_BEFORE_SITE = re.compile(r"(?:^|[^\w])at\s+(?:the\s+)?$", re.I)
#: "crossing to X", "sailed to X", "the ferry to X": a journey goes to a place (a letter goes "to" anyone, and
#: a player "moved to" a club).
_JOURNEY_TO = re.compile(r"(?:^|[^\w])(?:cross(?:es|ed|ing|ings)?|sail(?:s|ed|ing|ings)?|travel(?:s|led|ed|ling|ing)?|"
                         r"flights?|fl(?:y|ies|ew)|ferr(?:y|ies)|routes?|voyages?|journeys?)\s+(?:back\s+)?to\s+"
                         r"(?:the\s+)?$", re.I)
#: A language written after "in" ("written in Latin", "sung in Persian"): a work's medium, not a place.
_LANGUAGE = re.compile(r"[A-Z][a-z]+(?:ish|ese|ic|ian|i|ew)|Latin|Greek|French|Dutch|Thai|Sanskrit|Swahili|Tamil|"
                       r"Malayalam|Welsh|Czech|Basque|Gaelic|Esperanto|Amharic|German|Japanese")
_NOUN_AFTER = re.compile(r"[^\S\n]+[a-z]")
_AFTER_ORG = re.compile(r"['\u2019]s\s+(?:board|shareholders|directors|chief\s+executive|ceo|chairman|chair|staff|"
                        r"employees|workers|share\s+price|shares|annual\s+report|accounts|headquarters|subsidiary)\b",
                        re.I)
_AFTER_PERSON = re.compile(r"\s*,?\s+(?:said|says|told|asked|added|replied|wrote|argued|recalled|explained)\b")


#: "the city of X", "the village of X", "capital of X": a place's name follows.
_PLACE_OF = re.compile(r"(?:city|town|village|hamlet|municipality|commune|capital|province|region|county|district|"
                       r"island|state|country|parish|suburb|neighbourhood|neighborhood|river|valley)\s+of\s+$", re.I)
#: "X (born 12 May 1950)", "X (1900 - 1980)", "X was born", "X's wife": a person's name precedes.
_PERSON_AFTER = re.compile(r"\s*\((?:born|n[ée]e|c\.|died|d\.|b\.)|\s*\(\d{3,4}\s*[\u2013\-]|\s+(?:was|is)\s+born\b|"
                           r"['\u2019]s\s+(?:wife|husband|son|daughter|father|mother|brother|sister|widow|birth|death|"
                           r"childhood|parents)\b", re.I)
#: "(Persian: ...)", "in Latin": a language's name.
_LANGUAGE_GLOSS = re.compile(r"\s*:\s*\S")


#: "the song X", "the album X", "the film X": a work's title follows.
_WORK_BEFORE = re.compile(r"\b(?:song|single|album|EP|film|movie|novel|book|game|video\s+game|series|sitcom|show|"
                          r"telenovela|soundtrack|opera|play|poem|painting|documentary|episode)"
                          r"\s+$", re.I)
#: "the schooner Mary Ellen", "the trawler Solas": a vessel's name follows (a made thing, typed as works are), however
#: much it looks like a person's.
_VESSEL_BEFORE = re.compile(r"\b(?:ship|steamship|steamer|schooner|yacht|trawler|lifeboat|brig|brigantine|barque|"
                            r"sloop|frigate|liner|tug|tugboat|cutter|clipper|smack|lugger|collier|tanker|freighter|"
                            r"submarine|destroyer|cruiser|battleship|vessel)[^\S\n]+$", re.I)
_OPEN_QUOTE = ('"', "\u201c")
_CLOSE_QUOTE = re.compile(r"[.,!?]?[\"\u201d]")


#: Nouns that say what a name is when a definition or an apposition gives it ("X is a Canadian rock band",
#: "X, a village in ..."), beyond :data:`HEAD_KINDS`.
DEFINITION_KINDS: dict[str, str] = {
    **{w: k for w, k in HEAD_KINDS.items() if w not in ("post", "times", "daily", "act", "common", "close",
                                                         "drive", "quarter", "square", "empire", "games",
                                                         "football", "fotball")},
    **dict.fromkeys("""person man woman singer songwriter rapper musician guitarist drummer bassist pianist
        violinist composer conductor actor actress comedian presenter broadcaster journalist writer author poet
        novelist playwright screenwriter painter sculptor artist photographer designer architect engineer
        scientist physicist chemist biologist mathematician economist historian philosopher professor teacher
        scholar politician diplomat lawyer judge businessman businesswoman entrepreneur executive footballer
        cricketer player athlete boxer wrestler swimmer cyclist runner skater skier coach manager director
        producer priest bishop monk nun saint king queen prince princess emperor empress pope general officer
        soldier pilot model dancer activist founder member leader minister president chef explorer inventor
        physician doctor nurse character daughter son wife husband governor senator ambassador mayor forward
        midfielder defender goalkeeper striker winger defenceman defenseman fisherman fisherwoman farmer crofter
        welder sailor mariner seaman skipper shopkeeper resident representative""".split(), "person"),
    **dict.fromkeys("""municipality commune settlement hamlet suburb neighbourhood neighborhood capital state
        country nation area locality zone woreda prefecture oblast canton station archipelago sea ocean gulf
        strait continent street""".split(), "location"),
    **dict.fromkeys("""firm manufacturer label team studio publisher broadcaster airline organisation
        organization duo trio quartet ensemble charity army navy regiment unit party union league church
        denomination tribe people newspaper magazine""".split(), "organization"),
    **dict.fromkeys("""song single album film movie novel book game series show programme program sitcom play
        opera poem painting documentary episode telenovela soundtrack franchise musical comic manga anime
        console software language dialect missile rifle aircraft ship car vehicle""".split(), "concept"),
    **dict.fromkeys("""conflict season race match ceremony concert attack massacre earthquake hurricane storm
        crisis protest strike""".split(), "event"),
}
#: Weight of a definition ("X is a village in ..."): a sentence written to say what X is outvotes two NER
#: labels; an apposition ("X, a village") weighs as "in X".
DEFINITION_WEIGHT = 5
_DEFINITION = re.compile(r"[^\S\n]*(?:\([^()\n]{0,80}\)[^\S\n]*)?(?:(?P<is>(?:is|was|are|were)[^\S\n]+(?:also[^\S\n]+)?"
                         r"(?:an?|the|one[^\S\n]+of[^\S\n]+the))|,[^\S\n]*an?)[^\S\n]+")
_DEFINITION_STOP = frozenset("""in of from on at by for that which who whose with and or but to as near based
    located situated born founded known""".split())


def definition_kind(text: str, end: int) -> tuple[str, int] | None:
    """``(kind, weight)`` a definition or an apposition after a name ending at ``end`` gives: the last noun of
    :data:`DEFINITION_KINDS` among the (at most six) words after "is a/the" / ", a", up to a preposition,
    clause word or participle after the noun (", the" is left out: "Before World War II, the town was") (the head of an English noun phrase is its last word: "a football player" is a person, "a
    football club" an organisation); None without one."""
    m = _DEFINITION.match(text, end)
    if not m:
        return None
    kind = None
    for w in re.findall(r"[^\W\d_][\w'\u2019-]*|[,.;:()]", text[m.end():m.end() + 80])[:6]:
        if (w.casefold() in _DEFINITION_STOP or not w[0].isalpha()
                or kind is not None and w.endswith(("ed", "ing")) and len(w) > 5):
            break  # a preposition, clause word or participle after the noun ends the phrase ("a film directed by")
        if w.islower():  # a capitalised word is a name or a demonym, not the noun saying what X is
            kind = DEFINITION_KINDS.get(w, kind)
    if kind is None:
        return None
    return kind, DEFINITION_WEIGHT if m.group("is") else PLACE_WEIGHT


#: A role stated of the name right after it: in brackets ("Helena Voss (Chair)", "Gideon Marsh (Music
#: Director)"), after a comma up to the end of the clause ("Helena Voss, Chair", "Ruth Okafor, Players'
#: Representative, on behalf of") or on the next line of a signature ("Helena Voss\nChair, Northmoor ...").
_ROLE_AFTER = re.compile(r"[^\S\n]*(?:\((?P<b>[^()\n]{2,40})\)|(?:,[^\S\n]*(?:the[^\S\n]+|our[^\S\n]+|its[^\S\n]+)?|"
                         r"[^\S\n]*\n[^\S\n]*)(?!(?:his|her|their|whose|my|your)\b)(?P<c>[^\W\d_][\w'\u2019 -]{1,40}?)[^\S\n]*(?=[,.;\n]|$))")
#: "X, who": a relative pronoun for a person (a band or a team is "who" too, so it weighs as an NER label).
_WHO_AFTER = re.compile(r"[^\S\n]*,[^\S\n]*who\b")
#: "in Manchester and Glasgow", "near Leeds, York or Hull": a preposition governs every name of its list.
_BEFORE_PLACE_LIST = re.compile(r"(?:^|[^\w])(?:in|near|outside|inside|across|around|throughout)[^\S\n]+(?:the[^\S\n]+)?"
                                r"[A-Z][\w'\u2019-]*(?:[^\S\n]+[A-Z][\w'\u2019-]*)*"
                                r"(?:[^\S\n]*,[^\S\n]*[A-Z][\w'\u2019-]*(?:[^\S\n]+[A-Z][\w'\u2019-]*)*)*"
                                r"(?:[^\S\n]*,)?[^\S\n]+(?:and|or)[^\S\n]+$")
#: Last words of a role said of a person ("Chair", "Music Director", "Players' Representative", "conductor").
ROLE_NOUNS = frozenset(OFFICE_WORDS | ROLE_WORDS | {w for w, k in DEFINITION_KINDS.items() if k == "person"})


def role_after(text: str, end: int) -> bool:
    """True when a person's role is written right after the name ending at ``end`` (:data:`_ROLE_AFTER`): at
    most four words, the last of :data:`ROLE_NOUNS` and every one capitalised or the role a lower-case noun
    phrase ("(chair)", ", the conductor,")."""
    m = _ROLE_AFTER.match(text, end)
    if not m:
        return False
    role = m.group("b") or m.group("c")
    words = [w.strip(".,;:'\u2019") for w in role.split()]
    words = [w for w in words if w]
    if not 1 <= len(words) <= 4 or words[-1].casefold() not in ROLE_NOUNS:
        return False
    return bool(m.group("b")) or all(w[:1].isupper() for w in words) or all(w.islower() for w in words)


def context_kind(text: str, start: int, end: int) -> tuple[str, int] | None:
    """``(kind, weight)`` the words around the mention ``text[start:end]`` say, or None: "in X", "near X",
    "the city of X" -> location (:data:`PLACE_WEIGHT`); "at X" -> ``site`` (a place or premises);
    "X (born 1950)", "X was born", "X's wife" -> person (:data:`PLACE_WEIGHT`); "X's board" -> organization;
    "X said" -> person (not for a name with a head noun: "Bluewater Renewables said"); a language after
    "in" or before a gloss ("written in Latin", "(Persian: ...)") -> concept."""
    name = text[start:end]
    after = text[end:end + 40]
    possessive = after.startswith(("'s", "\u2019s"))
    before = text[max(0, start - 24):start]
    definition = definition_kind(text, end)
    if definition is not None:
        return definition
    if _LANGUAGE.fullmatch(name) and (_LANGUAGE_GLOSS.match(after) and before.rstrip().endswith("(")
                                      or _BEFORE_PLACE.search(before) and not _NOUN_AFTER.match(after)):
        return "concept", PLACE_WEIGHT  # "written in Latin", "(Persian: ...)"
    if before.endswith(_OPEN_QUOTE) and _CLOSE_QUOTE.match(after):
        return "concept", HEAD_WEIGHT  # '"Mess of Blues"': a quoted title is a work's
    if _WORK_BEFORE.search(before):
        return "concept", PLACE_WEIGHT  # "the song Mess of Blues"
    if _VESSEL_BEFORE.search(before) and name[:1].isupper():
        return "concept", DEFINITION_WEIGHT  # "the schooner Mary Ellen": the noun says what the name is
    if _AFTER_ORG.match(after):
        return "organization", CONTEXT_WEIGHT
    head = head_kind(name)
    if _PERSON_AFTER.match(after) and head in (None, "location"):
        return "person", PLACE_WEIGHT
    if head in (None, "location") and role_after(text, end):
        return "person", DEFINITION_WEIGHT  # "Helena Voss (Chair)": a role said of the name defines it
    if head in (None, "location") and _WHO_AFTER.match(after):
        return "person", NER_WEIGHT
    if (_BEFORE_PLACE.search(before) or _PLACE_OF.search(before)
            or _BEFORE_PLACE_LIST.search(text, max(0, start - 80), start)) and not possessive:
        # a one-word name after "in" is a place far more often than NER says; a longer one NER typed
        # ("in the European Union") keeps its label
        return "location", PLACE_WEIGHT if " " not in name.strip() else CONTEXT_WEIGHT
    if _JOURNEY_TO.search(text[max(0, start - 40):start]) and not possessive:
        return "location", PLACE_WEIGHT  # "crossing to Eilean Mor": where a journey ends is a place
    if _BEFORE_SITE.search(before) and not possessive:
        return "site", CONTEXT_WEIGHT
    if _AFTER_PERSON.match(after) and head in (None, "location"):
        return "person", CONTEXT_WEIGHT
    return None


def vote(evidence: list[tuple[str, int]], entity_types) -> str:
    """The type of a name from its weighed evidence ``[(type, weight), ...]`` in mention order (rules in the
    module docstring); ``unknown`` when nothing typed it or the winner is not configured."""
    weights: Counter = Counter()
    first: dict[str, int] = {}
    for i, (t, w) in enumerate(evidence):
        if t and t != "unknown" and t in entity_types:
            weights[t] += w
            first.setdefault(t, i)
    if not weights:
        return "unknown"
    top = max(weights.values())
    best = [t for t in weights if weights[t] == top]
    if "location" in best and "organization" in best:
        best.remove("organization")
    return min(best, key=first.get)


_ACRONYM = re.compile(r"[A-Z][A-Z&]{1,6}")
_WORD_BEFORE = re.compile(r"([^\W\d_]+)\.?[^\S\n]+$")


def _office_before(text: str, start: int) -> bool:
    """True when a capitalised title or office is written right before ``start`` ("Treasurer |Fiona Baxter")."""
    m = _WORD_BEFORE.search(text, max(0, start - 30), start)
    return bool(m) and m.group(1)[:1].isupper() and m.group(1).casefold() in LEADING_OFFICES


def mention_evidence(text: str, start: int, end: int, name: str, ner_type: str, source: str) -> list[tuple[str, int]]:
    """The evidence one mention gives (``[(type, weight)]``, see the module docstring): its NER type when NER
    typed it, its head noun's kind unless NER called it a work or event, its context's kind."""
    out: list[tuple[str, int]] = []
    # A name holding a digit ("MM106", "B52") is a code, a model or a product: NER's person label for it is a
    # guess at an unfamiliar word, and no personal name is written so.
    if ner_type != "unknown" and not (ner_type == "person" and any(ch.isdigit() for ch in name)):
        out.append((ner_type, NER_WEIGHT if source == "ner" else CONTEXT_WEIGHT))
    head = head_kind(name)
    if head and ner_type not in KEPT_NER_TYPES:
        out.append((head, HEAD_WEIGHT))
    words = name.split()
    # a title or office is said of the person; a place's head noun is only guessed from the name's last word
    # ("Gideon Marsh")
    personal = head in (None, "location")
    if len(words) > 1 and words[0].casefold().rstrip(".") in TITLES and ner_type not in KEPT_NER_TYPES and not head:
        out.append(("person", TITLE_WEIGHT))  # "Councillor Reyes", tagged ORG: a title names a person
    elif len(words) > 1 and ner_type not in KEPT_NER_TYPES and personal and _office_before(text, start):
        out.append(("person", TITLE_WEIGHT))  # "Treasurer Fiona Baxter", the office cut off the name
    if ner_type in ("person", "unknown") and _ACRONYM.fullmatch(name) and not text.startswith(":", end):
        out.append(("organization", TITLE_WEIGHT))  # "ABBA", "INSEAD": an acronym names a body, not a person
    ctx = context_kind(text, start, end)
    if ctx is None:
        return out
    kind, weight = ctx
    if kind == "site":  # "at X": a place or an organisation's premises; a person only by mistake
        if ner_type == "person" and head is None:
            out.append(("location", weight))
    elif ner_type not in KEPT_NER_TYPES or kind == "concept" or definition_kind(text, end) is not None:
        out.append((kind, weight))
    return out


# --- coordination ----------------------------------------------------------------------------------

_COORDINATION = re.compile(r"[^\S\n]*,[^\S\n]*(?:(?:and|or|&)[^\S\n]+)?|[^\S\n]+(?:and|or|&)[^\S\n]+")
_CONJUNCTION = re.compile(r"[^\S\n]+(?:and|or|&)[^\S\n]+")
#: Weight of a coordinated list's kind on a member of another kind (per list): more than one NER label.
LIST_WEIGHT = 3


def coordinated(text: str, mentions: list[tuple[int, int, str]]) -> list[list[str]]:
    """The keys of the names written as one list ("Marta Argerich, Nelson Goerner, Ivo Pogorelich and Jan
    Lisiecki"): runs of three or more mentions ``(start, end, key)`` joined only by a comma, "and", "or" or
    "&", in text order."""
    out: list[list[str]] = []
    run: list[str] = []
    last_end = None
    for s, e, key in sorted(mentions):
        if last_end is not None and _COORDINATION.fullmatch(text, last_end, s):
            run.append(key)
        else:
            if len(run) >= 3:
                out.append(run)
            run = [key]
        last_end = e
    if len(run) >= 3:
        out.append(run)
    return out


def coordinated_pairs(text: str, mentions: list[tuple[int, int, str]]) -> list[list[str]]:
    """The keys of two names joined by "and", "or" or "&" alone ("to Leeds and York"), in text order; a pair
    with a comma before, between or after it is part of a longer list or an apposition and is left out."""
    out: list[list[str]] = []
    ms = sorted(mentions)
    for (s0, e0, k0), (s1, e1, k1) in zip(ms, ms[1:]):
        if (_CONJUNCTION.fullmatch(text, e0, s1) and not text[:s0].rstrip().endswith(",")
                and not text[e1:].lstrip().startswith(",")):
            out.append([k0, k1])
    return out


def pair_kind(kinds: list[str]) -> str | None:
    """``location`` for two names joined by "and" / "or" when one is a place and the other untyped ("Leeds and
    York"): a conjunction joins phrases of one category, so the untyped one votes for it (:data:`LIST_WEIGHT`);
    only a place spreads, the type NER gets wrong least often (a person or an organisation beside an untyped
    name is as often a mistake carried over). None otherwise."""
    typed = [k for k in kinds if k != "unknown"]
    return "location" if len(kinds) == 2 and typed == ["location"] else None


def list_kind(kinds: list[str]) -> str | None:
    """The kind two thirds or more of a list's typed members share (two at least), else None: names
    written as one list are of one kind, so the rest vote for it (:data:`LIST_WEIGHT`)."""
    typed = [k for k in kinds if k != "unknown"]
    if not typed:
        return None
    top, n = Counter(typed).most_common(1)[0]
    return top if n >= 2 and 3 * n >= 2 * len(kinds) else None


# --- quoted titles ---------------------------------------------------------------------------------

_QUOTED = re.compile(r'"([^"\n]{3,120})"|\u201c([^\u201d\n]{3,120})\u201d|\u2018([^\u2019\n]{3,120})\u2019')
#: Words a title leaves in lower case ("Two Doors Down", "The Girl with the Golden Hair", "Los Ricos También").
_TITLE_SMALL = frozenset("""a an the of in on at to for and but or nor with by from as via vs
    into onto over off up out de la le les el los las del di da du des von van der den y e et""".split())


def quoted_titles(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, title)`` of each title written in quotes: two to twelve words, the first and every
    word outside :data:`_TITLE_SMALL` capitalised (two at least), no sentence punctuation inside, not a
    nickname inside a name or an alias in brackets ('"Two Doors Down"',
    '\u201cSpecial Recognition/Honour\u201d'; not '"more acoustic, less pop-oriented."' nor a line of dialogue
    such as '"Bah! Humbug!"'). Offsets are those of the words inside the quotes; a closing full stop or comma
    is left out."""
    out = []
    for m in _QUOTED.finditer(text):
        g = next(i for i in (1, 2, 3) if m.group(i) is not None)
        s, e = m.start(g), m.end(g)
        while e > s and text[e - 1] in ".,;: ":
            e -= 1
        while s < e and text[s] == " ":
            s += 1
        inner = text[s:e]
        words = re.findall(r"[^\W_][\w'\u2019-]*", inner)
        if re.search(r"[A-Z][\w.'\u2019-]*[^\S\n]$", text[max(0, m.start() - 30):m.start()]) and re.match(
                r"[^\S\n]+[A-Z]", text[m.end():m.end() + 3]):
            continue  # a nickname inside a personal name: Dwayne "The Rock" Johnson
        if text[m.start() - 1:m.start()] == "(" and text[m.end():m.end() + 1] == ")":
            continue  # an alias in brackets: Tim Cratchit ("Tiny Tim")
        if (not 2 <= len(words) <= 12 or re.search(r"[.!?;:]\s", inner) or inner.endswith(("!", "?"))
                or sum(w[:1].isupper() for w in words) < 2
                or not words[0][:1].isupper()
                or any(not w[:1].isupper() and not w[:1].isdigit() and w.casefold() not in _TITLE_SMALL
                       for w in words)):
            continue
        out.append((s, e, inner))
    return out


# --- not a name -------------------------------------------------------------------------------------

#: Words that name a part of a document or meeting, not an entity ("Minutes", "Agenda", "Present").
DOCUMENT_PARTS = frozenset("""
minutes agenda present absent apologies attendees attendance attending item items motion motions resolved
resolution actions action matters arising aob business memo memorandum subject re cc bcc signed signature
enclosure enclosures appendix annex summary introduction conclusion conclusions contents preface foreword
abstract acknowledgements references bibliography glossary notes note transcript recording
crosstalk laughter laughs laughing applause inaudible unintelligible silence pause music overlapping
""".split())

#: Interjections written capitalised at the start of a sentence or turn ("Bye-bye.", "Cheers!").
INTERJECTIONS = frozenset("""
bye bye-bye goodbye hello hi hey cheers thanks wow oops ouch hmm um uh ah aha alright ok okay yeah yep nope
absolutely exactly indeed congratulations welcome sorry pardon yay whoa woo huh yup nah aw
""".split())

#: Words that qualify an office ("Town Clerk", "County Surveyor", "Deputy Mayor"), not a name of anyone.
OFFICE_QUALIFIERS = frozenset("town city county parish borough district state national regional general "
                              "deputy vice senior chief principal council".split())

_SALUTATION = re.compile(r"(?i)^dear\s+")


def salutation_cut(name: str) -> tuple[int, str]:
    """``(characters cut, rest)`` of a name written with a salutation ("Dear Mayor" -> (5, "Mayor"),
    "Dear Priya Natarajan" -> (5, "Priya Natarajan")); ``(0, name)`` without one."""
    m = _SALUTATION.match(name)
    if not m or m.end() >= len(name):
        return 0, name
    return m.end(), name[m.end():]


_PLURAL_POSSESSIVE_OFFICE = re.compile(r"s['\u2019][^\S\n]+([A-Z][a-z]+)")


def office_phrase(name: str, etype: str, text: str, positions: list[tuple[int, int]]) -> bool:
    """True for a capitalised office NER left untyped ("Music Director", "Education Director": at most three
    words, the last an office, :data:`slmgraph.names.lexicon.ROLE_WORDS` / ``OFFICE_WORDS``) and for a plural
    noun written only as the possessive of an office ("Players' Representative": the people the office
    serves); a person's name before an office is cut earlier ("Robert Achebe Leader")."""
    words = [w.strip(".,;:'\u2019").casefold() for w in name.split()]
    if etype != "unknown" or not words or name.isupper():
        return False
    if 2 <= len(words) <= 3 and words[-1] in OFFICE_WORDS | ROLE_WORDS | {"representative"}:
        return True
    if len(words) != 1 or not positions:
        return False
    for _, e in positions:
        m = _PLURAL_POSSESSIVE_OFFICE.match(text, e - 1)
        if not m or m.group(1).casefold() not in OFFICE_WORDS | ROLE_WORDS | {"representative"}:
            return False
    return True


def office_only(name: str) -> bool:
    """True for a name made of office words alone: titles, offices and what qualifies them ("Town Clerk",
    "Deputy Mayor", "Council Leader"); its last word an office or title."""
    words = [w.strip(".,;:'\u2019").casefold() for w in name.split()]
    words = [p for w in words for p in w.split("-") if p]
    if not words or name.isupper() and len(words) == 1:
        return False
    offices = OFFICE_WORDS | TITLES
    return words[-1] in offices and all(w in offices or w in OFFICE_QUALIFIERS for w in words)


def trailing_office_cut(name: str) -> str:
    """A personal name without an office written after it ("Robert Achebe Leader" -> "Robert Achebe"):
    trailing office words are cut when two or more title-case words remain; else ``name``."""
    words = name.split()
    k = len(words)
    while k > 2 and words[k - 1].strip(".,").casefold() in OFFICE_WORDS | TITLES:
        k -= 1
    if k == len(words) or not all(w[:1].isupper() and w[1:2].islower() for w in words[:k]):
        return name
    return " ".join(words[:k])


#: An adverb particle after a sentence's first word: the word is a verb ("Stick around.", "Hang on.").
_PARTICLE_AFTER = re.compile(r"[^\S\n]+(?:around|up|down|out|away|back|off|over|on|together|tight)\b[.!,]?")


def _opens_sentence(text: str, pos: int) -> bool:
    i = pos - 1
    while i >= 0 and text[i] in " \t\"'\u201c\u2018(*#-_\u2014":
        i -= 1
    return i < 0 or text[i] in ".!?:\n\u2026"


def calendar_name(name: str) -> bool:
    """True when ``name`` names a time of the calendar, not an entity: a holiday, a season or a weekday
    (:data:`slmgraph.names.lexicon.CALENDAR_WORDS`: "Christmas", "Easter", "Autumn"), alone or with months,
    years and "to"/"and" ("Easter to October 2023"). A month alone is left to NER (it may be a person's name,
    "June")."""
    words = [w.strip(".,;:!?()'\u2019").casefold() for w in name.split()]
    words = [w for w in words if w]
    if not words or not any(w in CALENDAR_WORDS for w in words):
        return False
    return all(w in CALENDAR_WORDS or w in MONTH_NAMES or w.isdigit() or w in ("to", "and", "until", "eve", "day")
               for w in words)


def not_a_name(name: str, text: str, positions: list[tuple[int, int]]) -> str | None:
    """Why a candidate ``name`` with mentions at ``positions`` of ``text`` is not a name, or None.

    Returns one of ``"salutation"``, ``"office"``, ``"prefix"``, ``"document part"``, ``"date"``,
    ``"interjection"``, ``"common word"`` (rules in the module docstring)."""
    if salutation_cut(name)[0]:
        return "salutation"
    if name.strip().strip(".") in VESSEL_PREFIXES and positions and all(
            re.match(r"[^\S\n]+[A-Z][a-z]", text[e:e + 4]) for _, e in positions):
        return "prefix"  # "MV" cut from "MV Solas": a ship's prefix names no ship ("the SS killed" is a body)
    words = [w.strip(".,;:!?'\u2019").casefold() for w in name.split()]
    if office_only(name):
        return "office"
    if name.isupper() and len(name) > 1:
        return None  # an acronym ("US", "AOB" aside)
    if words and all(w in DOCUMENT_PARTS or w in STOP for w in words):
        return "document part"
    if calendar_name(name):
        return "date"
    if len(words) != 1:
        return None
    w = words[0]
    if w in INTERJECTIONS or all(p in INTERJECTIONS for p in w.split("-")):
        return "interjection"
    if positions and all(_opens_sentence(text, s) and _PARTICLE_AFTER.match(text, e) for s, e in positions):
        return "common word"  # "Stick around.", "Hang on.": an imperative verb, capitalised where it opens
    if positions and all(_opens_sentence(text, s) for s, _ in positions) and re.search(
            rf"(?<![\w'\u2019-]){re.escape(w)}(?![\w'\u2019-])", text):
        return "common word"  # "Momentum is building ... the momentum": a word, capitalised where it opens
    return None


# --- list lines -----------------------------------------------------------------------------------

_LIST_LABEL = re.compile(
    r"(?i)^[^\S\n]*(?:present|also\s+present|members\s+present|councillors\s+present|officers\s+present|absent|"
    r"apologies(?:\s+for\s+absence)?|in\s+attendance|attendees|attending|attendance|participants|panel(?:ists)?|"
    r"signed|signatories|signatures|witness(?:es)?|cc|bcc|to|from|distribution(?:\s+list)?|circulation|"
    r"copies\s+to|copy\s+to|recipients)"
    r"(?:[^\S\n]+(?:from|for|of|on\s+behalf\s+of)[^\S\n]+[^\W\d_][^:.\n]{0,40}?)?"  # "Present from the board:"
    r"[^\S\n]*(?::|[\-\u2013](?=[^\S\n]))[^\S\n]*")
_CLOSING = re.compile(r"(?i)^[^\S\n]*(?:yours\s+(?:sincerely|faithfully|truly)|sincerely|(?:best|kind|warm|warmest)\s+"
                      r"regards|regards|best\s+wishes|with\s+thanks|respectfully)[^\S\n]*[,.]?[^\S\n]*$")


#: A label and a colon, then the list it heads ("Speakers: A, B (chair), C", whatever the label).
_LABELLED = re.compile(r"^[^\S\n]*[^\W\d_][^\W\d_'\u2019-]*(?:[^\S\n]+[^\W\d_][^\W\d_'\u2019-]*){0,3}[^\S\n]*:"
                       r"[^\S\n]*([^\n]*)$")
#: Lower-case words a name in a list may hold ("Ludwig van Beethoven", "Maria de la Cruz").
_NAME_PARTICLES = frozenset("of de la le du da van von der den di al bin ibn".split())
#: Fewest names a labelled list line holds (two could be a speaker's turn naming a pair).
LIST_NAMES_MIN = 3


def labelled_names(line: str) -> bool:
    """True for a label and a colon followed by :data:`LIST_NAMES_MIN` or more capitalised names separated by
    commas or semicolons (an "and" before the last), with nothing else but words in brackets: "Speakers:
    Councillor Peter Brandt (committee chair), Chair Miriam Okafor, Robert Ainsley, Grace Mbeki." lists who
    spoke and states nothing, whatever its label."""
    m = _LABELLED.match(line.strip().lstrip("*-_#>\u2022 \t"))
    if not m:
        return False
    body = re.sub(r"\([^)]*\)", " ", m.group(1)).strip().rstrip(".;, ")
    items = [i.strip() for i in re.split(r"[,;]|\s+and\s+|\s+&\s+", body)]
    if len(items) < LIST_NAMES_MIN or not re.search(r"[,;]", body):
        return False
    for item in items:
        words = item.split()
        if not 1 <= len(words) <= 5 or not words[0][:1].isupper() or not all(
                w[:1].isupper() or w.casefold() in _NAME_PARTICLES for w in words):
            return False
    return True


def list_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of the list lines of ``text``: a line opening with a list label
    ("Present:", "Apologies:", "cc:", "To:", "Distribution:") or any label before a list of names
    (:func:`labelled_names`), the lines after a label line that ends at
    its colon ("Present:" then one name per line) and after a letter's closing ("Yours sincerely,"), up to
    the next blank line."""
    out: list[tuple[int, int]] = []
    pos = 0
    open_block = False
    for line in text.split("\n"):
        end = pos + len(line)
        if not line.strip():
            open_block = False
        elif _CLOSING.match(line):
            open_block = True
        else:
            m = _LIST_LABEL.match(line)
            if m or open_block or labelled_names(line):
                out.append((pos, end))
            if m and not line[m.end():].strip():
                open_block = True
        pos = end + 1
    return out


_NAME_WORDS = r"(\s+[A-Z][\w'\u2019-]*\.?){0,4}"
#: A letter's or an article's furniture: salutations ("Dear members,", "Ladies and gentlemen, dear friends,"),
#: sign-offs ("Yours sincerely, Jane Smith", "With respect,"), bylines ("By Jane Smith, correspondent") and
#: bare signature lines ("Jane Smith").
_FURNITURE = re.compile(
    r"^\W*(?:"
    r"[Dd]ear\s+[^!?]{1,60}?[,:!]"
    r"|(?:[Ll]adies and [Gg]entlemen|[Gg]ood (?:morning|afternoon|evening)|[Hh]ello)"
    r"(?:\s*,\s*(?:[Dd]ear\s+)?[^!?,.]{1,40}?)?\s*[,:!]"
    r"|(?:[Yy]ours(?: (?:sincerely|faithfully|truly|ever|respectfully))?|[Ss]incerely(?: yours)?|(?:[Ww]ith )?(?:[Kk]ind|"
    r"[Bb]est|[Ww]arm|[Ww]armest) (?:regards|wishes)|[Rr]egards|[Mm]any thanks|[Ww]ith (?:thanks|respect|gratitude)|"
    r"[Rr]espectfully(?: yours)?)\s*[,.!]?" + _NAME_WORDS + r"\s*[,.]?"
    r"|(?:(?:[Ww]ritten|[Rr]eported|[Pp]osted) )?[Bb]y\s+[A-Z][\w'\u2019-]*\.?(?:\s+[A-Z][\w'\u2019-]*\.?){1,3}"
    r"(?:\s*,\s*[^.!?]{0,50})?"
    r"|[A-Z][\w'\u2019-]*\.?(?:\s+[A-Z][\w'\u2019-]*\.?){1,3}"
    r")\s*$")


def furniture(sentence: str) -> bool:
    """True when ``sentence`` (a speaker label already cut) is a letter's or an article's furniture, no
    statement (:data:`_FURNITURE`: "Dear members,", "Ladies and gentlemen, dear friends,", "Yours sincerely, Jane
    Smith", "With respect,", "By Jane Smith, correspondent", a signature line; :func:`dateline`: "Published 14
    December 2025."): never quoted, and no concept or description comes from it."""
    return bool(_FURNITURE.match(sentence.strip())) or dateline(sentence)


_MONTH = r"(?:" + "|".join(sorted(map(re.escape, MONTH_NAMES), key=len, reverse=True)) + r")\.?"
_DAY = r"\d{1,2}(?:st|nd|rd|th|er|\.)?"
#: A date as written: a day and a month name ("14 December 2025", "14. Dezember", "14 de diciembre de 2025",
#: "December 14, 2025", "Dec. 14"), a month name and a year ("December 2025"), a date in figures
#: ("2025-12-14", "14.12.2025", "12/14/25") or a year alone.
_DATE = re.compile(
    rf"(?<![\w.]){_DAY}\s+(?:(?:of|de)\s+)?{_MONTH}(?:,?\s+(?:de\s+)?\d{{4}})?(?!\w)"
    rf"|(?<![\w.]){_MONTH}\s+{_DAY}(?:,?\s+\d{{4}})?(?![\w.])"
    rf"|(?<![\w.]){_MONTH},?\s+(?:(?:of|de)\s+)?\d{{4}}(?!\w)"
    r"|(?<![\w.])(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.](?:\d{4}|\d{2}))(?![\w.]\d)"
    r"|(?<![\w.])(?:1[5-9]|20)\d\d(?!\w)",
    re.I)
#: A time of day ("10:30", "4.10pm", "10 a.m.", "14h05", "14:05 Uhr").
_TIME = re.compile(r"(?<![\w.:])\d{1,2}(?:[:.h]\d{2}(?:\s*[ap]\.?\s?m\b\.?)?|\s*[ap]\.?\s?m\b\.?)(?![\w:])", re.I)
_DIGIT = re.compile(r"\d")
_DATELINE_WORD = re.compile(r"[^\W\d_][\w'\u2019.-]*|\d+", re.U)


def dateline(sentence: str) -> bool:
    """True when ``sentence`` only dates a text (or dates and signs it): a date (:data:`_DATE`) and nothing
    else but a time, the words of :data:`slmgraph.names.lexicon.DATELINE_WORDS` (publication verbs,
    prepositions, weekdays, time zones) and an author's name after "by" (:data:`slmgraph.names.lexicon.BYLINE_WORDS`,
    capitalised words): "Published 14 December 2025.", "Last updated: Monday, 3 May 2024, 10:30 GMT",
    "Posted by Jane Smith on 3 May 2024", "Veröffentlicht am 14.12.2025". It states no finding of the text it
    dates; "The hedge was cut on 14 December 2025." states one (a word not of the list)."""
    if not _DIGIT.search(sentence):  # every form of _DATE holds a digit: most sentences need no scan of it
        return False
    s, dates = _DATE.subn(" ", sentence)
    if not dates:
        return False
    author = False  # inside a byline's name: capitalised words after "by", joined by "and"
    for w in _DATELINE_WORD.findall(_TIME.sub(" ", s)):
        f = w.casefold().rstrip(".")
        if f in BYLINE_WORDS:
            author = True
        elif author and (w[:1].isupper() or f in ("and", "&", "und", "et", "y")):
            continue
        elif f in DATELINE_WORDS:
            author = False
        else:
            return False
    return True


def list_line(sentence: str) -> bool:
    """True when ``sentence`` is (or opens) a list line: a list label and its colon ("Present: Morag Lindsay
    (chair), Duncan Reid, ...", "Apologies: Callum Shaw.", "cc: ...") or any label before a list of names
    (:func:`labelled_names`), a record of who was there or who receives a copy, never a statement to quote."""
    return bool(_LIST_LABEL.match(sentence.lstrip(" \t*-_#>\u2022"))) or labelled_names(sentence)


_LIST_FILLERS = frozenset("and & or also with plus".split())


def names_only(sentence: str, names: list[str]) -> bool:
    """True for a comma list of names with no other word: two or more of ``names`` in ``sentence``, a comma
    or semicolon between them, and nothing else but titles, offices, "and", punctuation and words in
    brackets ("Cllr Tom Reyes (Chair), Cllr Ana Li and Mayor Elena Ruiz.")."""
    if not re.search(r"[,;]", sentence):
        return False
    rest = sentence
    found = 0
    for n in sorted(names, key=len, reverse=True):
        body = r"\s+".join(re.escape(w) for w in n.split())
        rest, k = re.subn(rf"(?<!\w){body}(?:['\u2019]s)?(?!\w)", " ", rest, flags=re.I)
        found += bool(k)
    if found < 2:
        return False
    rest = re.sub(r"\([^)]*\)", " ", rest)
    words = [w.casefold() for w in re.findall(r"[^\W\d_]+(?:['\u2019.-][^\W\d_]+)*", rest)]
    offices = OFFICE_WORDS | TITLES | OFFICE_QUALIFIERS | _LIST_FILLERS | {"cllr", "cllrs"}
    return all(w.rstrip(".") in offices for w in words)
