"""Entity resolution: which normalised names denote the same entity (graph merge, ARCHITECTURE.md stage 4).

Name normalisation (:func:`slmgraph.names.forms.normalize_name`) already merges
case, punctuation, possessive, leading-article and corporate-suffix variants
("Microsoft" / "Microsoft Corp." / "MICROSOFT" share the key "microsoft").
Entity resolution then merges the keys that still fragment one entity, with
eight rules applied in this order, each merge logged with its rule:

0. ``compound`` -- names equal once spaces are removed and plural endings
   dropped (:func:`slmgraph.names.forms.tolerant_words`) merge into the one written
   with more words ("AcmeRobotics" into "Acme Robotics", "Catholics" and
   "Catholic" into one; hyphens and
   case are already folded by the normaliser: "Acme-Robotics", "ACME ROBOTICS").
0b. ``plural`` -- a name of two or more words and the name whose last word is its last word's regular
   English plural, the words before it the same (:func:`slmgraph.names.forms.plural_forms`: +s, +es,
   y -> ies), merge when both are names of the index ("Kingston Blacks" and "Kingston Black", "City Buses"
   and "City Bus"): the plural is made from a name found, never a singular by cutting an ending ("Henry
   James" never gives "Henry Jame"). They merge into the one with more mentions, the singular on a tie
   ("Thinking Machines", a company named 8 times, is not shown as its 1 "Thinking Machine"). Unlike the
   other rules it crosses the place guard (:func:`apart`): NER types a plural name as a group and its
   singular by its first word ("Kingston Black", an apple, a place), so the two types say nothing of one
   thing; it never merges a name typed ``person`` ("Tom Williams" is not "Tom William"). Pairs of
   compatible kinds were already merged by ``compound``.
1. ``title`` -- a name that starts with a title or honorific ("Agent Alex
   Mercer", "Dr. Chen") merges into the entity named without it ("Alex
   Mercer", "Chen") when that is itself an entity. When it is not, the key
   is kept (no entity is invented), but the name counts as a person and its
   title-stripped words are what the ``name-subset`` rule matches, so "Dr.
   Chen" still merges into a unique "Wei Chen". Plural titles open lists
   ("Agents Alex Mercer"); German titles are included ("Ministerin Käthe Böhm"). After the
   ``name-subset`` rule, an office before a lone surname ("Chair Okafor") merges into the one person
   name ending in it ("Miriam Okafor"), :func:`_office_surname_rule`.
2. ``name-subset`` -- a name whose words are the first or last word(s) of
   exactly one longer *person* name merges into it ("Alex" and "Mercer" into
   "Alex Mercer"); two longer candidates ("Alex Mercer", "Alex Smith") block
   it, and so does a shorter name that is an acronym ("CTO") -- unless its
   word is written in mixed case in the longer name (the speaker label
   "ANDREW" is the "Andrew" of "Andrew Ng"). The first and last word of a
   longer person name count too ("Henrik Angell" of "Henrik August Angell").
   A place never merges into an organisation by this rule: the longer name
   must be a person, and its shape is checked (the trawler text's "Aberlow" is
   not "Aberlow Fish Market").
   Only persons: "Microsoft" is not "Microsoft Research", "Paris" is not
   "Paris Hilton", "Washington" is not "Washington State University". The
   longer name must be typed ``person``, or be untyped (``unknown`` / ``other``,
   e.g. the LLM-free extractor's entities) *and* have been written with a
   title somewhere (the only evidence of a person without a model); the
   shorter one must be ``person`` or untyped. Because a small model's types
   are often wrong, the longer name must also be shaped like a personal name
   (:func:`person_shaped`: 2-4 words, no "of", no "College" or "Union" at
   its end, no possessive; "Soviet" does not merge into a mistyped "Soviet
   Union").
3. ``short-form`` -- a name whose words are the last word(s) of exactly one longer name that is not a
   person merges into it when its last word is the head of an organisation or place name
   (:data:`SHORT_FORM_HEADS`): "the Commission" after "the Philippine Commission", "Carey Business School"
   of "Johns Hopkins Carey Business School". First words never merge by this rule: "Aberlow" is not
   "Aberlow Fish Market", "Washington" not "Washington State University". Nor does a name merge into a phrase
   that only contains it (:func:`embeds_name`): one where it follows a preposition ("AGM of the Millbrook
   Allotment Association", a meeting of it) or one not written as a proper name ("fourteenth ..."); both stay.
3b. ``of-place`` -- a name followed by "of" and a place merges into the name alone when both are names of the
   index, the place is typed ``location`` and named in a text unit of either, and the name before "of" is
   more than a kind, a title or an office ("Harrowgate Marine Engineering of Ardmore" into "Harrowgate Marine
   Engineering"; "University of Oslo" never into "University"). :func:`_of_place_rule`.
4. ``acronym`` -- a name written in capitals (dots ignored) that equals the
   initials of exactly one name of two or more capitalised words, ignoring
   of/the/and/for, merges into it ("IBM" into "International Business
   Machines", "NGO" into "Non-Governmental Organization").
5. ``embedding`` -- names whose embeddings have cosine similarity >=
   ``threshold`` and compatible types merge into the one with more mentions
   (tie: longer key, then the lexicographically first). Pairs are taken in
   descending similarity and a merge must keep the cluster complete-linkage:
   every pair of names in it at least ``threshold`` similar and their types
   compatible, so A~B~C cannot chain two dissimilar ends together. The
   threshold None turns only this rule off.

Kinds never cross: a place (``location``) never merges with a name typed another kind -- an organisation,
a work, a person, an event -- by any rule but ``plural`` (a name and its plural form), however unreliable
the types (:func:`apart`; "Millbrook" is not "Millbrook Gazette", the city "Washington" not "George
Washington"). The ``name-subset`` rule needs
compatible types whatever their source, and with an untyped side the evidence of one text unit that names
both (``units``). Every ``merge_log`` detail ends with the evidence the merge used: the two types, and for
``name-subset`` the text unit that names both.

Types are compatible when equal or when either is untyped (``unknown``,
``other`` or empty); a cluster's type is its most frequent known type.
Types block merges only when their source is reliable (``types_reliable``:
the NER pipeline's types; docs/decisions.md: type accuracy of each source);
with unreliable types (a small model's choices) any two types are compatible,
and only the name shapes above guard the rules. The
rules 0-4 merge the shorter or abbreviated name into the fuller one (``plural``: into the form named more
often), so the fuller name is the key (and the displayed name) of the merged entity.

:func:`resolve_entities` is pure: counters in, a mapping and log rows out.

One concern, over 500 lines: deciding which name keys are one entity (the merge rules and their guards).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Mapping, NamedTuple

import numpy as np

from slmgraph.names.forms import plural_forms, tolerant_words
from slmgraph.names.lexicon import (LEADING_OFFICES, NOT_PERSON_HEADS, PERSONAL_TITLES, POST_NOMINAL_ROLES,
                                    SHORT_FORM_HEADS, TITLES)

#: Rule names in the order they are applied (the ``rule`` column of ``merge_log``).
RULES = ("compound", "plural", "title", "name-subset", "short-form", "of-place", "acronym", "embedding")

#: Types that carry no type information: compatible with every type.
UNTYPED = frozenset({"unknown", "other", ""})

#: Words that never occur inside a personal name ("van", "de" do: "Ludwig van Beethoven").
_NOT_IN_PERSON_NAMES = frozenset({"of", "the", "and", "for", "&"})

#: Words skipped when taking a name's initials for the ``acronym`` rule.
ACRONYM_SKIP = frozenset({"of", "the", "and", "for", "&", "to", "on", "in", "de", "del", "la", "le", "du", "des", "der",
                          "von", "van"})


class MergeRow(NamedTuple):
    """One ``merge_log`` row: ``norm`` merged into the entity ``into_norm``.

    ``into_norm`` is the final key of the merged entity (a row of
    ``entities``); ``score`` is the cosine similarity for the ``embedding``
    rule and None for the others; ``detail`` says why, in words.
    """

    norm: str
    into_norm: str
    rule: str
    score: float | None
    detail: str


@dataclass
class Resolution:
    """Result of :func:`resolve_entities`.

    Attributes:
        mapping: every input key -> the key of its entity (itself when not merged).
        log: one :class:`MergeRow` per merged-away key, in the order merged.
        merges: number of merges per rule (every rule of :data:`RULES` present).
        embedded: names embedded for the ``embedding`` rule (0: rule off or skipped).
    """

    mapping: dict[str, str]
    log: list[MergeRow] = field(default_factory=list)
    merges: dict[str, int] = field(default_factory=lambda: dict.fromkeys(RULES, 0))
    embedded: int = 0


#: Types a tie in the vote over text units gives way to, for a one-word name (:func:`majority_type`).
TIE_YIELDS = frozenset({"concept"})


def majority_type(types: Counter, exclude=UNTYPED, one_word: bool = False) -> str:
    """Most frequent type of ``types`` not in ``exclude`` (all of them when every type is excluded); a tie goes
    to the alphabetically first, except that for a ``one_word`` name a name's type goes before those of
    :data:`TIE_YIELDS` ("Leeds": NER labels the place a product in "the Leeds tour", where it modifies a noun),
    while a longer name keeps the alphabetical order ("Distinguished Service Medal", an award, stays a concept
    against an organisation). ``""`` when ``types`` is empty."""
    items = [(-n, one_word and t in TIE_YIELDS, t) for t, n in types.items() if t not in exclude and n > 0] \
        or [(-n, one_word and t in TIE_YIELDS, t) for t, n in types.items()]
    return min(items)[2] if items else ""


def known_type(types: Counter) -> str:
    """Most frequent type other than the untyped ones (tie: alphabetical); ``"unknown"`` if none."""
    known = [(-n, t) for t, n in types.items() if t not in UNTYPED and n > 0]
    return min(known)[1] if known else "unknown"


def compatible(a: str, b: str) -> bool:
    """True when entity types ``a`` and ``b`` may denote one entity: equal, or either untyped."""
    return a in UNTYPED or b in UNTYPED or a == b


def apart(a: str, b: str) -> bool:
    """True when entity types ``a`` and ``b`` are kinds that never denote one entity, however unreliable the
    types: a place and anything else typed (an organisation, a work, a person, an event). A town is not its
    newspaper ("Millbrook" / "Millbrook Gazette"), a city not a person ("Washington" / "George Washington")."""
    return a != b and a not in UNTYPED and b not in UNTYPED and "location" in (a, b)


def strip_titles(norm: str) -> tuple[str, list[str]]:
    """``(rest, titles)``: a normalised name without its leading :data:`TITLES`.

    At least one word is always kept: "general" stays "general".
    "lt col john smith" -> ("john smith", ["lt", "col"]). An office written as a title
    (:data:`LEADING_OFFICES`) goes too when two or more words remain: "chair priya nair" -> ("priya nair",
    ["chair"]), "chief executive tom reyes" -> ("tom reyes", ["chief", "executive"]).
    """
    words = norm.split()
    titles: list[str] = []
    while len(words) > 1 and words[0] in TITLES:
        titles.append(words.pop(0))
    k = 0
    while k < len(words) - 2 and words[k] in LEADING_OFFICES:
        k += 1
    if k and not any(w in NOT_PERSON_HEADS or w in _NOT_IN_PERSON_NAMES or w in LEADING_OFFICES for w in words[k:]):
        titles += words[:k]
        words = words[k:]
    return " ".join(words), titles


def acronym_of(surface: str) -> str | None:
    """The case-folded letters of ``surface`` when it is one acronym as written
    (2-10 capital letters, dots ignored: "IBM", "U.S."), else None ("NEW YORK")."""
    s = re.sub(r"\.\s*", "", surface.strip())
    if 2 <= len(s) <= 10 and s.isalpha() and s.isupper():
        return s.casefold()
    return None


def _capitalised_words(surfaces) -> set[str]:
    """Case-folded words written capitalised ("Machines", not "II" or "machines") in any of ``surfaces``."""
    out = set()
    for s in surfaces:
        for w in s.split() + re.split(r"[\s\-]+", s):
            w = re.sub(r"^[^\w]+|[^\w\-]+$", "", re.sub(r"['\u2019]s$", "", w))
            if w and w[0].isupper() and not (len(w) > 1 and w.isupper()):
                out.add(w.casefold())
    return out


def initials(norm: str, surfaces=None) -> set[str]:
    """Initials of a normalised name of two or more words, skipping :data:`ACRONYM_SKIP`.

    Both readings of hyphens: "non-governmental organization" -> {"no", "ngo"}.
    With ``surfaces`` (the name as written), only names whose counted words
    are all written capitalised have initials: "Apple II" has none (its "II"
    is not a word's initial), nor has "machine learning". Empty when fewer
    than two words remain.
    """
    caps = None if surfaces is None else _capitalised_words(surfaces)
    out = set()
    for words in (norm.split(), re.split(r"[\s\-]+", norm)):
        ws = [w for w in words if w and w not in ACRONYM_SKIP]
        if len(ws) >= 2 and all(w[0].isalpha() for w in ws) and (caps is None or all(w in caps for w in ws)):
            out.add("".join(w[0] for w in ws))
    return out


def person_shaped(core: tuple[str, ...], surfaces) -> bool:
    """True when a name can be a full personal name: 2-4 words (after titles), no
    "of/the/and/for", no digits, no organisation/place head word
    (:data:`NOT_PERSON_HEADS`), and as written no possessive ("Thor's Hammer"),
    no inner dot ("Ng.txt"), no word in capitals unless all of it is ("CTO
    Cisco" no, "SAM ALTMAN" yes). Guards the ``name-subset`` rule against
    mistyped entities.
    """
    if not 2 <= len(core) <= 4 or core[-1] in NOT_PERSON_HEADS:
        return False
    if any(w in _NOT_IN_PERSON_NAMES or any(c.isdigit() for c in w) for w in core):
        return False
    for s in surfaces:
        if re.search(r"['\u2019]s\b", s) or re.search(r"\w\.\w", s):
            return False
        if not s.isupper() and any(len(w) > 1 and w.isupper() for w in re.findall(r"\w+", s)):
            return False
    return True


def _pick_name(names: Counter) -> str:
    """Most frequent surface form (tie: alphabetical), as the graph displays it."""
    return min((-n, k) for k, n in names.items())[1] if names else ""


class _Clusters:
    """Union-find over entity keys that keeps each cluster's types, mentions,
    person evidence and the merge steps."""

    def __init__(self, names, types, mentions, types_reliable: bool = True, units=None):
        self.names = names
        self.units = units
        self.types_reliable = types_reliable
        self.parent = {n: n for n in names}
        self.types = {n: Counter(types.get(n, Counter())) for n in names}
        self.mentions = {n: int(mentions.get(n, 0)) for n in names}
        self.titled = {n: False for n in names}
        self.keys = {n: [n] for n in names}
        self.steps: list[tuple[str, str, str, float | None, str]] = []

    def find(self, n: str) -> str:
        root = n
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[n] != root:
            self.parent[n], n = root, self.parent[n]
        return root

    def roots(self) -> list[str]:
        return sorted(n for n in self.parent if self.parent[n] == n)

    def type(self, root: str) -> str:
        return known_type(self.types[root])

    def display(self, n: str) -> str:
        return _pick_name(self.names[n]) or n

    def compatible(self, a: str, b: str) -> bool:
        """Whether the clusters ``a`` and ``b`` may merge by type: never a place with another kind
        (:func:`apart`), else any types when types are unreliable, compatible ones when they are."""
        ta, tb = self.type(a), self.type(b)
        return not apart(ta, tb) and (not self.types_reliable or compatible(ta, tb))

    def shared_unit(self, a: str, b: str) -> str | None:
        """A text unit that names both ``a`` and ``b`` (any key of either cluster), or None; ``""`` when no
        text units were given (no evidence to ask for)."""
        if self.units is None:
            return ""
        ua = set().union(*(self.units.get(k, ()) for k in self.members(a)))
        ub = set().union(*(self.units.get(k, ()) for k in self.members(b)))
        both = sorted(ua & ub)
        return both[0] if both else None

    def members(self, root: str) -> list[str]:
        return self.keys[root]

    def evidence(self, a: str, b: str) -> str:
        """The types of ``a`` and ``b`` as merge evidence ("both person", "person and untyped")."""
        ta, tb = self.type(a), self.type(b)
        if ta == tb:
            return f"both typed {ta}" if ta not in UNTYPED else "both untyped"
        return f"typed {ta if ta not in UNTYPED else 'untyped'} and {tb if tb not in UNTYPED else 'untyped'}"

    def is_person(self, root: str) -> bool:
        t = self.type(root)
        return t == "person" or (t in UNTYPED and self.titled[root])

    def merge(self, child: str, into: str, rule: str, score: float | None, detail: str) -> None:
        self.parent[child] = into
        self.types[into].update(self.types.pop(child))
        self.mentions[into] += self.mentions.pop(child)
        self.titled[into] = self.titled[into] or self.titled.pop(child)
        self.keys[into] += self.keys.pop(child)
        self.steps.append((child, into, rule, score, detail))


def _personal_title(titles: list[str]) -> bool:
    return any(t in PERSONAL_TITLES for t in titles)


def _compound_rule(cl: _Clusters) -> None:
    by_joined: dict[str, list[str]] = {}
    for r in cl.roots():
        by_joined.setdefault("".join(tolerant_words(r)), []).append(r)
    for joined, keys in sorted(by_joined.items()):
        if len(keys) < 2:
            continue
        into = max(keys, key=lambda k: (k.count(" "), cl.mentions[k], k))
        for k in sorted(keys):
            a, b = cl.find(k), cl.find(into)
            if a != b and not apart(cl.type(a), cl.type(b)):
                cl.merge(a, b, "compound", None, f"'{cl.display(k)}' is '{cl.display(into)}' written without "
                                                 f"spaces or as a plural ({cl.evidence(a, b)})")


def _plural_rule(cl: _Clusters) -> None:
    """A name of two or more words and its plural form (the last word's :func:`plural_forms`, the words before
    it the same) merge when both are names of the index and neither is typed ``person``, across kinds, into
    the one with more mentions, the singular on a tie (module docstring, rule 0b)."""
    for s in cl.roots():
        words = s.split()
        if len(words) < 2:
            continue
        for form in sorted(plural_forms(words[-1])):
            p = " ".join(words[:-1] + [form])
            if p not in cl.parent:
                continue
            a, b = cl.find(p), cl.find(s)
            if a == b or "person" in (cl.type(a), cl.type(b)):
                continue
            child, into = (b, a) if cl.mentions[a] > cl.mentions[b] else (a, b)
            cl.merge(child, into, "plural", None, f"'{cl.display(p)}' is the plural of '{cl.display(s)}', both "
                                                  f"names of the index; merged into the one with more mentions "
                                                  f"({cl.mentions[into]} vs {cl.mentions[child]}; "
                                                  f"{cl.evidence(child, into)})")


def _title_rule(cl: _Clusters) -> None:
    for norm in sorted(cl.parent):
        rest, titles = strip_titles(norm)
        a = cl.find(norm)
        if not titles or (cl.types_reliable and cl.type(a) not in ("person", *UNTYPED)):
            continue
        cl.titled[a] = True
        if rest not in cl.parent:
            continue
        b = cl.find(rest)
        if a == b or not cl.compatible(a, b) or (cl.types_reliable and cl.type(b) not in ("person", *UNTYPED)):
            continue
        if (not cl.types_reliable or "person" not in (cl.type(a), cl.type(b))) and not person_shaped(
                tuple(rest.split()), cl.names[b]) and not (len(rest.split()) == 1 and _personal_title(titles)):
            continue  # untyped: "General Motors" is not "Motors" with a title
        cl.titled[b] = True
        cl.merge(a, b, "title", None, f"'{cl.display(norm)}' is '{cl.display(rest)}' with the title "
                                      f"'{' '.join(titles)}' ({cl.evidence(a, b)})")


def _subset_rule(cl: _Clusters) -> None:
    core = {r: tuple(strip_titles(r)[0].split()) for r in cl.roots()}
    index: dict[tuple[str, ...], set[str]] = {}
    for r, words in core.items():
        if not cl.is_person(r) or not person_shaped(words, cl.names[r]):
            continue
        for k in range(1, len(words)):  # first name(s) and last name(s)
            index.setdefault(words[:k], set()).add(r)
            index.setdefault(words[k:], set()).add(r)
        if len(words) >= 3:  # first and last name without the middle one(s): "Henrik Angell"
            index.setdefault((words[0], words[-1]), set()).add(r)
    # Longest first: a longer name is resolved before the shorter names inside it.
    for s in sorted(core, key=lambda r: (-len(core[r]), r)):
        if cl.find(s) != s or (cl.types_reliable and cl.type(s) not in ("person", *UNTYPED)):
            continue
        targets = {cl.find(r) for r in index.get(core[s], ())} - {s}
        if len(targets) != 1:
            continue
        t = targets.pop()
        if all(acronym_of(x) for x in cl.names[s]) and not _capitalised_words(cl.names[t]) >= set(core[s]):
            continue  # "CTO", "XP": an abbreviation, not a part of a personal name ("ANDREW" of "Andrew Ng" is)
        ts, tt = cl.type(s), cl.type(t)
        if not compatible(ts, tt):
            continue  # a name part typed otherwise is another entity ("Millbrook" is no part of a person)
        shared = cl.shared_unit(s, t)
        if (ts in UNTYPED or tt in UNTYPED) and shared is None:
            continue  # untyped: only where one text unit names the same referent both ways
        where = f", both named in text unit {shared[:12]}" if shared else ""
        cl.merge(s, t, "name-subset", None,
                 f"'{cl.display(s)}' is the first or last name of '{cl.display(t)}', the only person name "
                 f"containing it ({cl.evidence(s, t)}{where})")


def _office_surname_rule(cl: _Clusters) -> None:
    """An office or title written before a lone surname ("Chair Okafor", "Councillor Brandt") merges into the
    one person name ending in that surname ("Miriam Okafor"); logged as the ``title`` rule. The first word
    must be one of :data:`LEADING_OFFICES` and the second the last word of exactly one person-shaped person
    name, so "Member States" (no person "... States") stays apart."""
    surnames: dict[str, set[str]] = {}
    for r in cl.roots():
        words = tuple(strip_titles(r)[0].split())
        # A name holding an office word, or ending in a role noun, is a mis-cut title ("Kevin Scott Chief
        # Technology", "MacArthur Fellow"), not a person whose surname an office may stand before.
        if any(w in LEADING_OFFICES for w in words) or words[-1] in POST_NOMINAL_ROLES:
            continue
        if cl.is_person(r) and person_shaped(words, cl.names[r]):
            surnames.setdefault(words[-1], set()).add(r)
    for s in sorted(cl.roots()):
        words = s.split()
        if len(words) != 2 or words[0] not in LEADING_OFFICES or words[1] in LEADING_OFFICES:
            continue
        if cl.find(s) != s or cl.type(s) not in ("person", *UNTYPED):
            continue
        targets = {cl.find(r) for r in surnames.get(words[1], ())} - {s}
        if len(targets) != 1:
            continue
        t = targets.pop()
        if not cl.compatible(s, t):
            continue
        cl.titled[t] = True
        cl.merge(s, t, "title", None, f"'{cl.display(s)}' is the surname of '{cl.display(t)}', the only person "
                                      f"name ending so, with the office '{words[0]}' ({cl.evidence(s, t)})")


#: Words after which the rest of a name is what it is of, at or for ("AGM of the Millbrook Allotment Association").
_EMBEDDING_PREPOSITIONS = frozenset({"of", "for", "at", "in", "on", "to", "from", "by", "with"})


def written_proper(norm: str, surfaces) -> bool:
    """True when the first word of the key ``norm`` is written capitalised in one of its ``surfaces`` at least
    (a leading article the key drops is skipped): "the Philippine Commission" yes; "fourteenth AGM of ..." and a
    number first ("14th AGM ...") no."""
    first = norm.split()[0] if norm.split() else ""
    for s in surfaces:
        for w in re.findall(r"[^\W_][\w'\u2019.&-]*", s):
            if w.casefold().rstrip(".") == first:
                if w[:1].isupper():
                    return True
                break
    return False


def embeds_name(long_words: tuple[str, ...], n_short: int, surfaces) -> bool:
    """True when a longer name only contains the name of its last ``n_short`` words: the words before them end
    in a preposition (an article after it ignored: "AGM of the Millbrook Allotment Association" names a meeting
    of it), or the longer one is not written as a proper name (:func:`written_proper`: "fourteenth AGM ...").
    Such a phrase names something else, so it is never the entity the shorter name is merged into."""
    before = list(long_words[:len(long_words) - n_short])
    while before and before[-1] in ("the", "a", "an"):
        before.pop()
    return bool(before and before[-1] in _EMBEDDING_PREPOSITIONS) or not written_proper(" ".join(long_words),
                                                                                         surfaces)


def _short_form_rule(cl: _Clusters) -> None:
    core = {r: tuple(r.split()) for r in cl.roots()}
    index: dict[tuple[str, ...], set[str]] = {}
    for r, words in core.items():
        if len(words) < 2 or cl.is_person(r):
            continue
        for k in range(1, len(words)):
            if not embeds_name(words, len(words) - k, cl.names[r]):
                index.setdefault(words[k:], set()).add(r)
    for s in sorted(core, key=lambda r: (-len(core[r]), r)):
        if cl.find(s) != s or core[s][-1] not in SHORT_FORM_HEADS or cl.is_person(s):
            continue
        targets = {cl.find(r) for r in index.get(core[s], ())} - {s}
        if len(targets) != 1:
            continue
        t = targets.pop()
        if not cl.compatible(s, t):
            continue
        cl.merge(s, t, "short-form", None,
                 f"'{cl.display(s)}' is the last word(s) of '{cl.display(t)}', the only name ending so "
                 f"({cl.evidence(s, t)})")


def _of_place_rule(cl: _Clusters) -> None:
    """A name written with the place it is of ("Harrowgate Marine Engineering of Ardmore") merges into the name
    without it ("Harrowgate Marine Engineering") when both are names of the index, the place is a name of the
    index typed ``location`` and named in a text unit of either (``units``; no units given: anywhere), and the
    two are not kept apart by type (:meth:`_Clusters.compatible`). The name before "of" must be more than a
    kind or an office ("University of Oslo" is not "University", "King of Spain" not "King", "Bank of
    England" not "Bank"): a one-word one may be no head of a body or place, no title and no office."""
    for s in sorted(cl.roots()):
        words = s.split()
        if "of" not in words[1:-1] or cl.find(s) != s:
            continue
        k = len(words) - 1 - words[::-1].index("of")
        name, place = " ".join(words[:k]), " ".join(words[k + 1:])
        if name not in cl.parent or place not in cl.parent or cl.type(cl.find(place)) != "location":
            continue
        if len(words[:k]) == 1 and (name in SHORT_FORM_HEADS or name in LEADING_OFFICES or name in TITLES):
            continue
        a, b, p = cl.find(s), cl.find(name), cl.find(place)
        if a == b or b == p or not cl.compatible(a, b) or cl.type(b) == "location":
            continue
        if cl.units is not None and cl.shared_unit(a, p) is None and cl.shared_unit(b, p) is None:
            continue  # the place is named nowhere near: "of" may say something else
        cl.merge(a, b, "of-place", None, f"'{cl.display(s)}' is '{cl.display(name)}' with the place it is of, "
                                         f"'{cl.display(place)}' ({cl.evidence(a, b)})")


def _acronym_rule(cl: _Clusters) -> None:
    by_initials: dict[str, set[str]] = {}
    for r in cl.roots():
        for ini in initials(r, cl.names[r]):
            by_initials.setdefault(ini, set()).add(r)
    for a in cl.roots():
        if cl.find(a) != a:
            continue
        letters = {x for x in (acronym_of(s) for s in cl.names[a]) if x}
        targets = {cl.find(r) for x in letters for r in by_initials.get(x, ())} - {a}
        if len(targets) != 1:
            continue
        t = targets.pop()
        if not cl.compatible(a, t):
            continue
        cl.merge(a, t, "acronym", None, f"'{cl.display(a)}' is the initials of '{cl.display(t)}' "
                                        f"({cl.evidence(a, t)})")


def _unit_vectors(vecs, n: int) -> np.ndarray:
    v = np.asarray(vecs, dtype=np.float32)
    if v.ndim != 2 or v.shape[0] != n:
        raise ValueError(f"embed returned shape {v.shape} for {n} names: expected ({n}, dim)")
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norms > 0, norms, 1.0)


# Roman numerals with an I, V or X ("II", "XIV"): "DC" or "CD" in a name are rarely ordinals.
_ROMAN = re.compile(r"^(?=[IVXLC]*[IVX])(?=[IVXLC]+$)(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$")


def _numbers(name: str) -> tuple[str, ...]:
    """The numbers in a name: digit runs, and upper-case Roman numerals (I..LXXXIX) after its first word
    ("World War II" -> ("II",), "Apollo 11" -> ("11",), "I, Robot" -> ())."""
    words = re.findall(r"\w+", name)
    return tuple(sorted([w for w in words if w.isdigit()] + [w for w in words[1:] if _ROMAN.match(w)]))


def _embedding_rule(cl: _Clusters, embed, threshold: float, block: int = 1024) -> int:
    roots = cl.roots()
    if len(roots) < 2:
        return 0
    vecs = _unit_vectors(embed([cl.display(r) for r in roots]), len(roots))
    tol = threshold - 1e-6  # float32 rounding of a designed 0.9 must still count as 0.9
    pairs: list[tuple[float, int, int]] = []
    for i0 in range(0, len(roots), block):
        sims = vecs[i0:i0 + block] @ vecs.T
        ii, jj = np.nonzero(sims >= tol)
        for i, j in zip(ii.tolist(), jj.tolist()):
            i += i0
            if j > i:
                pairs.append((-float(sims[i - i0, j]), i, j))
    pairs.sort()
    members = {r: [k] for k, r in enumerate(roots)}
    for neg, i, j in pairs:
        a, b = cl.find(roots[i]), cl.find(roots[j])
        if a == b or not cl.compatible(a, b):
            continue
        if _numbers(cl.display(a)) != _numbers(cl.display(b)):
            continue  # "World War I" / "World War II", "Apollo 11" / "Apollo 13": different entities
        if float((vecs[members[a]] @ vecs[members[b]].T).min()) < tol:
            continue  # complete linkage: no chaining of dissimilar ends
        into, child = sorted((a, b), key=lambda r: (-cl.mentions[r], -len(r), r))
        score = round(-neg, 4)
        cl.merge(child, into, "embedding", score,
                 f"'{cl.display(roots[i])}' and '{cl.display(roots[j])}': name embeddings' cosine similarity "
                 f"{score:.3f} >= {threshold}; merged into the one with more mentions "
                 f"({cl.mentions[into]} vs {cl.mentions[child]}; {cl.evidence(child, into)})")
        members[into] = members[into] + members.pop(child)
    return len(roots)


def resolve_entities(names: Mapping[str, Counter], types: Mapping[str, Counter], mentions: Mapping[str, int], *,
                     threshold: float | None = 0.9,
                     embed: Callable[[list[str]], np.ndarray] | None = None, rules: bool = True,
                     types_reliable: bool = True, units: Mapping[str, set] | None = None) -> Resolution:
    """Entity resolution over normalised entity keys (rules in the module docstring).

    Args:
        names: key -> Counter of its surface forms (as in ``entity_mentions.name``).
        types: key -> Counter of its extracted types.
        mentions: key -> number of mentions (text units), used by the
            ``embedding`` rule to pick the entity merged into.
        threshold: cosine similarity at or above which the ``embedding`` rule
            merges; None turns that rule off (the other rules still apply).
        embed: ``list[str] -> array (n, dim)`` of name embeddings (rows are
            L2-normalised here if they are not). Called once, with the
            displayed names of the entities left after rules 0-4, and only
            when ``threshold`` is set and at least two entities are left; None
            also skips the rule.
        rules: apply the ``compound``, ``plural``, ``title``, ``name-subset``, ``short-form``, ``of-place`` and
            ``acronym`` rules
            (False with ``threshold`` None: normalised-name match only).
        types_reliable: types block merges (False: a small model's types, which do not; a place and
            another kind never merge either way, :func:`apart`).
        units: key -> the text units (ids) that mention it: the ``name-subset`` rule merges a name with an
            untyped side only where one text unit names both. None: no such evidence is asked for.

    Returns:
        :class:`Resolution`: the mapping of every key to its entity's key,
        and one merge_log row per merged-away key.

    Raises:
        ValueError: ``embed`` returned an array of the wrong shape.
    """
    cl = _Clusters(names, types, mentions, types_reliable, units)
    if rules:
        _compound_rule(cl)
        _plural_rule(cl)
        _title_rule(cl)
        _subset_rule(cl)
        _office_surname_rule(cl)
        _short_form_rule(cl)
        _of_place_rule(cl)
        _acronym_rule(cl)
    res = Resolution(mapping={})
    if threshold is not None and embed is not None:
        res.embedded = _embedding_rule(cl, embed, threshold)
    res.mapping = {n: cl.find(n) for n in sorted(names)}
    for child, parent, rule, score, detail in cl.steps:
        final = res.mapping[child]
        if final != parent:
            detail += f"; '{cl.display(parent)}' was merged into '{cl.display(final)}'"
        res.log.append(MergeRow(child, final, rule, score, detail))
        res.merges[rule] += 1
    return res
