"""What each work of a corpus discusses on its own, for a corpus-wide answer (no model): the podcast's episodes
one by one, each with its voices and the subjects no other work shares.

A corpus-wide answer states the themes its works share (:mod:`slmgraph.query.theme_topics`) and its communities'
themes; a reader of a corpus of distinct works (a podcast's episodes, a series of talks) also asks what each
one is about, which no shared theme says. So, for a corpus of :data:`MIN_WORKS` to :data:`MAX_WORKS` works
whose answer traces no arc over time (:mod:`slmgraph.query.theme_arc` says what a dated series turns to):

* **subjects**: a work's noun phrases and their head compounds (``concept_mentions``) weighed by TF-IDF with
  the work as the document (Salton & Buckley 1988; BERTopic's class-based TF-IDF, Grootendorst 2022, takes
  the class as the document the same way): the work's text units holding the phrase times
  ``log(works / works holding it)``, a noun compound weighing :data:`COMPOUND_WEIGHT` times a single word (a
  compound names a subject, a lone noun often a register), for its :data:`CANDIDATES` heaviest phrases times
  their cosine with the centroid of the work's units (KeyBERT's ranking of a document's phrases, Grootendorst
  2020: a phrase of one aside, "blue cheese", is far from what the work discusses). A subject is found in at least two of the work's
  units (:data:`MIN_UNITS` in a work of :data:`LONG_WORK` units or more) and in at most :data:`MAX_WORK_SHARE` of the works, is :func:`slmgraph.query.theme_labels.label_worthy`,
  topical (:func:`slmgraph.query.theme_labels.topicality` at least :data:`MIN_TOPICALITY`), no name and holds
  no word of a person's name ("daniela"); one sharing a word stem with a subject listed before it is left out
  ("fiction writer" after "science fiction authors");
* **voices**: the transcript's speakers (a line opening on an upper-case label, "BILL GATES:") found in under
  half the works and speaking in no other work's units more (a year-in-review replays other works' guests),
  the one speaking in most of the work's units first, with any speaking in near as many
  (:data:`VOICE_SHARE`), none when the first speaks in under :data:`VOICE_MIN_SHARE` of them (a compilation);
  in a corpus without speaker labels, the persons (entities) its title names.

A subject written mostly in brackets ("(laughter)") is a transcript's note, not said, and is left out.

Each work's line names its title, its parts, its voices and its subjects with the parts (or, for a work of
one document, the passages) they are found in.
"""


from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from slmgraph.names.lexicon import LABEL_CAPITALS as _UP
from slmgraph.query.theme_labels import _names, head_compounds, label_worthy, residual_idf, topicality
from slmgraph.query.theme_lead import _join, _q
from slmgraph.query.theme_model import ThemeIndex, word_stem
from slmgraph.store.corpus_stats import phrase_key

#: Works a corpus needs before its answer lists them one by one, and the most it lists.
MIN_WORKS = 5
MAX_WORKS = 30
#: A work's subject is found in at most this share of the works.
MAX_WORK_SHARE = 0.5
#: The least residual IDF of a subject's modifiers (:func:`slmgraph.query.theme_labels.topicality`).
MIN_TOPICALITY = 0.4
#: A noun compound's weight against a single word's.
COMPOUND_WEIGHT = 1.5
#: A work's phrases ranked by their cosine with it (the heaviest by TF-IDF).
CANDIDATES = 15
#: Subjects a work's line lists.
SUBJECTS = 4
#: A voice is named beside the most quoted one when quoted in at least this share of its units.
VOICE_SHARE = 0.8
#: A work's voice speaks in at least this share of its text units (fewer: a compilation names none).
VOICE_MIN_SHARE = 0.3
#: Voices a work's line names at most.
VOICES = 2
#: A speaker's label opening a line of a transcript ("BILL GATES: It was stunning").
_LABEL = re.compile(rf"(?m)^[ \t]*([{_UP}][{_UP}.'-]+(?: [{_UP}][{_UP}.'-]+){{0,3}}):")
#: Works with subjects a corpus needs (this share of its works, and MIN_WORKS) before they are listed.
LISTED_SHARE = 0.5
#: A speaker found in at least this share of the works hosts the series.
HOST_SHARE = 0.8
#: A co-host: a speaker found in at least CO_HOST_MIN_WORKS works and CO_HOST_SHARE of them, beside a guest in at
#: least half of them (:func:`co_hosts`).
CO_HOST_MIN_WORKS = 3
CO_HOST_SHARE = 0.3
#: A series is one of conversations when at least this share of its works have a voice of their own.
GUESTED_SHARE = 0.8
#: A work of at least this many text units lists subjects found in at least MIN_UNITS of them (else two).
LONG_WORK = 10
MIN_UNITS = 3
#: Works whose first subject the overview sentence names.
OVERVIEW_WORKS = 8


@dataclass
class Work:
    """One work: its title, parts (documents), text units, voices and subjects ``[(as written, parts or, for a
    work of one part, text units holding it)]``."""

    title: str
    parts: int
    units: int
    voices: list = field(default_factory=list)
    subjects: list = field(default_factory=list)
    #: the corpus's hosts: ``[(speaker, works they speak in)]``, those speaking in at least HOST_SHARE of the works
    hosts: list = field(default_factory=list)
    #: the corpus is a series of conversations: hosts, and a voice of its own in GUESTED_SHARE of all its works
    series: bool = False


def _squash(text: str) -> str:
    return re.sub(r"[^a-z]", "", text.casefold())


def _person(name: str) -> str:
    return name.title() if name.isupper() else name


def corpus_works(ix: ThemeIndex, embedder) -> list[Work]:
    """The corpus's works in corpus order, each with its voices and subjects (see the module doc); [] for a
    corpus of under :data:`MIN_WORKS` or over :data:`MAX_WORKS` works, without an embedder, or with subjects in
    fewer than :data:`LISTED_SHARE` of its works (or :data:`MIN_WORKS`)."""
    import duckdb
    import numpy as np

    from slmgraph.query.extractive import _embed

    # a work is named by its series' name, a document by its display name (its title or file name)
    of = {d.doc_id: d.work or d.name or d.doc_id for d in ix.docs}
    order = list(dict.fromkeys(of.values()))
    n = len(order)
    if not MIN_WORKS <= n <= MAX_WORKS or embedder is None:
        return []
    con = ix.store.con
    try:
        rows = con.execute("""SELECT m.chunk_id, m.norm, m.name, u.doc_id FROM concept_mentions m
                              JOIN text_units u USING (chunk_id)""").fetchall()
    except duckdb.Error:
        return []
    try:  # an index without entity types names no persons
        people = con.execute("""SELECT DISTINCT x.chunk_id, t.doc_id, e.name FROM entities e
                                JOIN entity_text_units x USING (entity_id) JOIN text_units t USING (chunk_id)
                                WHERE e.type = 'person'""").fetchall()
    except duckdb.Error:
        people = []
    held: dict[str, dict[str, set]] = defaultdict(lambda: defaultdict(set))  # work -> key -> chunks
    surface: dict[str, Counter] = defaultdict(Counter)
    for c, norm, name, d in rows:
        if d in of:
            for k, shown in head_compounds(phrase_key(str(norm)), str(name or norm)):
                held[of[d]][k].add(c)
                surface[k][shown] += 1
    named: dict[str, Counter] = defaultdict(Counter)  # work -> person -> units naming them
    found_in: dict[str, set] = defaultdict(set)  # a person (or "speaker " + label) -> works
    name_words: set[str] = set()
    for c, d, name in people:
        if d in of and name:
            named[of[d]][str(name)] += 1
            found_in[str(name).casefold()].add(of[d])
            name_words.update(w.casefold() for w in re.findall(r"\w+", str(name)) if len(w) > 2)
    units = ix.all_units()
    spoke, heard_in, _, home, _ = _speaking(ix, of, order)
    found_in.update(heard_in)
    for label in {p for w in order for p in spoke[w]}:
        name_words.update(w.casefold() for w in re.findall(r"\w+", label) if len(w) > 2)
    texts: dict[str, list[str]] = defaultdict(list)
    for u in units:
        texts[of[u.doc_id]].append(u.text)
    works_of: Counter = Counter(k for w in order for k in held[w])
    ridf, names = residual_idf(ix), {x.casefold() for x in _names(ix)}
    doc_of = {u.chunk_id: u.doc_id for u in units}
    vectors = ix.unit_vectors([u.chunk_id for u in units])
    parts = Counter(of.values())
    n_units: Counter = Counter()
    for d in ix.docs:
        n_units[of[d.doc_id]] += d.n_units
    hosting = co_hosts(spoke, order, ix)
    voices = {w: _voices(w, spoke[w], named[w], found_in, n, home, n_units[w], hosting) for w in order}
    out = []
    for w in order:
        scored = []
        least = MIN_UNITS if n_units[w] >= LONG_WORK else 2
        for k, chunks in held[w].items():
            if len(chunks) < least or works_of[k] > MAX_WORK_SHARE * n or k in names:
                continue
            shown = surface[k].most_common(1)[0][0]
            if set(k.split()) & name_words or not label_worthy(shown) or topicality(k, ridf) < MIN_TOPICALITY:
                continue
            weight = len(chunks) * math.log(n / works_of[k]) * (COMPOUND_WEIGHT if " " in k else 1.0)
            scored.append((-weight, -len(k.split()), k, shown))
        scored = sorted(scored)[:CANDIDATES]
        mine = [vectors[c] for c in {c for ch in held[w].values() for c in ch} if c in vectors]
        if scored and mine:
            centre = np.mean([v / (np.linalg.norm(v) or 1.0) for v in mine], axis=0)
            cos = _embed([x[3] for x in scored], embedder) @ (centre / (np.linalg.norm(centre) or 1.0))
            scored = sorted((x[0] * max(float(c), 0.0), *x[1:]) for x, c in zip(scored, cos))
        picked, stems = [], set()
        for _, _, k, shown in scored:
            s = {word_stem(x) for x in k.split()}
            if s & stems or _bracketed(shown, texts[w]):
                continue
            picked.append((shown, len({doc_of.get(c) for c in held[w][k]}) if parts[w] > 1 else len(held[w][k])))
            stems |= s
            if len(picked) == SUBJECTS:
                break
        if not picked:
            continue
        out.append(Work(w, parts[w], n_units[w], voices[w], picked))
    # a list of a few works' subjects would read as the corpus's: most works need some
    if len(out) < max(MIN_WORKS, LISTED_SHARE * n):
        return []
    guested = sum(1 for w in order if voices[w])
    speakers = Counter(p for w in order for p in spoke[w])
    hosts = [(_person(p), c) for p, c in sorted(speakers.items(), key=lambda kv: (-kv[1], kv[0]))
             if c >= HOST_SHARE * n]
    for x in out:
        x.hosts = hosts
        x.series = bool(hosts) and guested >= GUESTED_SHARE * n
    return out


def _speaking(ix: ThemeIndex, of: dict, order: list[str]) -> tuple[dict, dict, dict, dict, Counter]:
    """Who speaks where, from the speaker labels of the index's text units: ``(spoke, heard_in, first, home,
    units)`` = work -> label -> units they speak in; ``"speaker " + label`` -> works; ``(work, label)`` -> the
    first unit number they speak in; label -> their home, the work they speak in most (the earlier on a tie);
    work -> its text units. ``of``: doc_id -> work; ``order``: the works in corpus order."""
    spoke: dict[str, Counter] = defaultdict(Counter)
    heard_in: dict[str, set] = defaultdict(set)
    first: dict[tuple[str, str], int] = {}
    units: Counter = Counter()
    for u in ix.all_units():
        w = of[u.doc_id]
        units[w] += 1
        for label in {x.strip() for x in _LABEL.findall(u.text)}:
            spoke[w][label] += 1
            heard_in["speaker " + label].add(w)
            first.setdefault((w, label), u.number)
    at = {w: i for i, w in enumerate(order)}
    home = {p: max(order, key=lambda w: (spoke[w][p], -at[w])) for p in {p for w in order for p in spoke[w]}}
    return spoke, heard_in, first, home, units


def co_hosts(spoke: dict, order: list[str], ix: ThemeIndex | None = None) -> set[str]:
    """The labels of the corpus's hosts and co-hosts: speakers found in at least :data:`HOST_SHARE` of the works
    (and two), and speakers found in at least :data:`CO_HOST_MIN_WORKS` works and :data:`CO_HOST_SHARE` of them
    who, in at least half of those works, speak beside a guest -- a speaker found in fewer works who speaks in at
    least as many of that work's units (a co-host joins some episodes; a guest of a work filed in parts speaks
    beside no one but the host); with ``ix``, also a speaker the corpus introduces as a co-host ("my co-host and
    producer, Jonah Reed"), in however few works. ``spoke``: work -> label -> units (:func:`_speaking`)."""
    every = Counter(p for w in order for p in spoke[w])
    n = len(order)
    out = {p for p, c in every.items() if c >= 2 and c >= HOST_SHARE * n}
    if ix is not None:
        out |= introduced_hosts(ix, [p for p in every if p not in out])
    for p, c in every.items():
        if p in out or c < CO_HOST_MIN_WORKS or c < CO_HOST_SHARE * n:
            continue
        beside = sum(1 for w in order if spoke[w][p] and any(
            q != p and every[q] < c and spoke[w][q] >= spoke[w][p] for q in spoke[w]))
        if beside >= 0.5 * c:
            out.add(p)
    return out


#: Words introducing a co-host ("my co-host and producer, Jonah Reed", "Jonah Reed, my co-host").
_CO_HOST = r"(?:co-?hosts?|co-?presenters?)"
_NAMES_CO_HOST = re.compile(r"(?i)\b" + _CO_HOST + r"\b")


def introduced_hosts(ix: ThemeIndex, labels: list[str]) -> set[str]:
    """The speaker ``labels`` whose name some text unit writes as a co-host's: within a few words after "co-host" or
    "co-presenter" ("my co-host and producer, Jonah Reed"), or before "my co-host" ("Jonah Reed, my co-host")."""
    names = {p: _person(p) for p in labels if len(_person(p).split()) >= 2}
    if not names:
        return set()
    # only the few units naming a co-host are read name by name
    texts = [u.text for u in ix.all_units() if _NAMES_CO_HOST.search(u.text)]
    out = set()
    for label, name in names.items():
        said = re.compile(r"(?i)\b" + _CO_HOST + r"\b[^.?!:]{0,40}?\b" + re.escape(name) + r"\b|\b" + re.escape(name)
                          + r",?\s+(?:my|our|the)\s+" + _CO_HOST + r"\b")
        if any(said.search(t) for t in texts):
            out.add(label)
    return out


def corpus_hosts(ix: ThemeIndex) -> set[str]:
    """The labels (as written, "KEVIN SCOTT") of the corpus's hosts and co-hosts (:func:`co_hosts`), its works as
    :func:`slmgraph.query.theme_topics._work` keys them; read once per index view (a lane asks several times)."""
    from slmgraph.query.theme_topics import _work

    cached = getattr(ix, "_corpus_hosts", None)
    if cached is None:
        of = {d.doc_id: _work(d) for d in ix.docs}
        order = list(dict.fromkeys(of.values()))
        cached = ix._corpus_hosts = co_hosts(_speaking(ix, of, order)[0], order, ix)
    return cached


def _bracketed(phrase: str, texts: list[str]) -> bool:
    """True when most of ``phrase``'s occurrences in ``texts`` stand inside brackets ("(laughter)")."""
    said = re.compile(r"\b" + re.escape(phrase.casefold()))
    inside = outside = 0
    for t in texts:
        low = t.casefold()
        for m in said.finditer(low):
            opened = max(low.rfind("(", 0, m.start()), low.rfind("[", 0, m.start()))
            closed = max(low.rfind(")", 0, m.start()), low.rfind("]", 0, m.start()))
            if opened > closed:
                inside += 1
            else:
                outside += 1
    return inside > outside


def _voices(title: str, spoke: Counter, named: Counter, found_in: dict, n: int, home: dict,
            units: int, hosts: set = frozenset()) -> list[str]:
    """A work's own voices (see the module doc): its speakers found in under half the works and at home there
    (or its one such speaker), no co-host of ``hosts`` (:func:`co_hosts`), or, without speaker labels, the
    persons its title names."""
    heard = [(p, c) for p, c in sorted(spoke.items(), key=lambda kv: (-kv[1], kv[0]))
             if len(found_in["speaker " + p]) < n / 2 and p not in hosts]
    speakers = [(p, c) for p, c in heard if home.get(p) == title]
    if len(heard) == 1:  # one guest speaking on (a work's second part, filed apart) is its voice
        speakers = heard
    if speakers:
        top = speakers[0][1]
        # a compilation (a year in review) replays many voices, none speaking through it: it names none
        if top < VOICE_MIN_SHARE * units:
            return []
        return [_person(p) for p, c in speakers[:VOICES] if c >= VOICE_SHARE * top]
    own = [p for p, _ in named.most_common() if len(found_in[p.casefold()]) < n / 2]
    squashed = _squash(title)
    return [_person(p) for p in own if all(_squash(x) in squashed for x in p.split())][:VOICES]


def _noun(works: list[Work]) -> tuple[str, str]:
    """``("work", "parts")`` for works of several documents, else ``("document", "passages")``."""
    return ("work", "parts") if any(w.parts > 1 for w in works) else ("document", "passages")


def works_overview(works: list[Work]) -> str:
    """One sentence naming each work's first subject, opening on what the series is when it is one of
    conversations (hosts speaking in most works, each work with a voice of its own): "It is a series of
    conversations, each work with a guest of its own; besides the themes they share, each turns to its guest's
    own subjects (listed work by work at the end): Andrew Ng on neural networks, Sam Altman on capital, ... and
    16 more." "" without works."""
    if not works:
        return ""
    shown = [f"{_join(w.voices)} on {w.subjects[0][0]}" if w.voices else f"{w.subjects[0][0]} in {_q(w.title)}"
             for w in works[:OVERVIEW_WORKS]]
    more = len(works) - len(shown)
    if more:
        shown.append(f"{more} more")
    noun, _ = _noun(works)
    if works[0].series:
        return (f"It is a series of conversations, each {noun} with a guest of its own; besides the themes they "
                f"share, each turns to its guest's own subjects (listed {noun} by {noun} at the end): {_join(shown)}.")
    return f"Each {noun} also has subjects of its own (listed {noun} by {noun} at the end): {_join(shown)}."


def works_section(works: list[Work]) -> str:
    """``### Work by work`` and one line per work: "- **Andrew Ng** (“EP-03 …”, 29 parts): neural networks (in 7
    parts), unsupervised learning (3) and wealth inequality (2)."; "" without works."""
    if not works:
        return ""
    noun, part = _noun(works)
    lines = [f"### {noun.capitalize()} by {noun}",
             f"Each {noun}'s own subjects: the noun phrases found in at least two of its {part} (three of a long "
             f"{noun}'s) and in few other {noun}s, the most distinctive first."]
    for w in works:
        head = f"**{_join(w.voices)}** ({_q(w.title)}, " if w.voices else f"**{_q(w.title)}** ("
        size = f"{w.parts} parts" if w.parts > 1 else f"{w.units} passages"
        subjects = _join([f"{s} (in {c} {'parts' if w.parts > 1 else 'passages'})" if i == 0 else f"{s} ({c})"
                          for i, (s, c) in enumerate(w.subjects)])
        lines.append(f"- {head}{size}): {subjects}.")
    return "\n".join(lines)


#: A question asking who a transcript's guests or speakers are ("Who are the guests on the show?").
_CAST = re.compile(r"(?i)\b(who (are|were|was|is) (all )?(the |our |its )?(guests?|speakers?|interviewees?|panell?ists?|"
                   r"participants?|hosts?)|(list|name) (all )?(the )?(guests|speakers|interviewees)|"
                   r"which guests (appear|are|were|came|come|feature))\b")
#: What may follow the words asking who the guests are, and still ask only that ("Who are the guests on the show?",
#: "Which guests were interviewed?"); anything else asks which guests say or think something ("Which guests are
#: against the act?", "Who are the guests that worry about drones?").
_CAST_TAIL = re.compile(r"(?i)^\s*(?:[?.!]|$|(?:(?:that|who) (?:were |are )?)?(?:on|in|of|at|across|featured|"
                        r"interviewed|invited|heard|there|present|here|appearing|appeared|so far|this|these|most|often|more|regularly)\b(?!"
                        r" favou?r\b)|,? and (?:what|which) (?:fields?|jobs?|professions?|backgrounds?|work) (?:do|did) "
                        r"they\b)")


#: A question asking what the guests do besides who they are ("... and what fields do they come from?").
_WHAT_FIELDS = re.compile(r"(?i)\band (?:what|which) (?:fields?|jobs?|professions?|backgrounds?|work)\b")
#: What introduces a name as someone who is something: "Tom Brook, a carpenter", "Lena Okafor is a family doctor",
#: "David Baszucki, who is the co-founder", "Daniela is a researcher" (``{name}``: the name's pattern).
_INTRO = r"(?i)\b{name}(?:\s+\w+)?(?:,\s+(?:a|an|the|who is|who's|who was)\s|(?:,\s+who)?\s+(?:is|was|works as)\s+(?:a|an|the)\s)"


def _introduced(ix: ThemeIndex, of: dict, w: str, voices: list[str]) -> str:
    """The first sentence of work ``w`` naming one of ``voices`` (by surname or first name) as someone who is something
    (:data:`_INTRO`: the name then "is a", ", a", ", who is the"), quoted; "" without one."""
    from slmgraph.query.extractive import prose_sentences

    # a guest is introduced by surname or, in their own conversation, by first name ("Daniela is a researcher")
    names = [p for v in voices for p in dict.fromkeys([v.split()[-1], v.split()[0]]) if len(p) > 2]
    if not names:
        return ""
    intro = re.compile(_INTRO.format(name="(?:" + "|".join(map(re.escape, names)) + ")"))
    for u in ix.all_units():
        if of.get(u.doc_id) != w:
            continue
        for x in prose_sentences(u.text):
            x = re.sub(r"^[A-Z][A-Z .'-]+:\s*", "", x.strip())  # the label says who speaks, not who is meant
            if intro.search(x):
                # a speaker's opening word ("Yeah, Surya is a professor ...") is no part of the introduction
                x = re.sub(r"(?i)^(?:(?:yeah|yes|well|so|and|okay|oh|now),?\s+)+", "", x)
                x = x[:1].upper() + x[1:]
                return _q(x if len(x) <= 300 else x[:297].rsplit(" ", 1)[0] + " ...")
    return ""


def cast_answer(ix: ThemeIndex, question: str) -> tuple[str, list[dict], list[int]] | None:
    """``(answer text, points, cited unit numbers)`` for a question asking who a transcript's guests or speakers
    are: its hosts (speakers in at least :data:`HOST_SHARE` of its works, and two) and each work's own voices
    (see the module doc), work by work, each citing the first unit its voice speaks in; a work with no voice
    of its own names the speakers it replays. None when the question is no such question or the corpus has no
    speaker labels."""
    m = _CAST.search(question or "")
    if not m or not _CAST_TAIL.match(question[m.end():]):
        return None
    of = {d.doc_id: d.work or d.name or d.doc_id for d in ix.docs}
    order = list(dict.fromkeys(of.values()))
    n = len(order)
    spoke, found_in, first, home, n_units = _speaking(ix, of, order)
    if not any(spoke.values()):
        return None
    every = Counter(p for w in order for p in spoke[w])
    hosting = co_hosts(spoke, order, ix)
    hosts = [(p, c) for p, c in sorted(every.items(), key=lambda kv: (-kv[1], kv[0])) if p in hosting]
    noun = "works" if any(d.work for d in ix.docs) else "documents"
    lines, points, cited = [], [], []
    guests: set[str] = set()
    fields = bool(_WHAT_FIELDS.search(question[m.end():]))
    for w in order:
        voices = _voices(w, spoke[w], Counter(), found_in, n, home, n_units[w], hosting)
        if voices:
            guests.update(voices)
            src = first.get((w, voices[0].upper())) or next(
                (first[(w, p)] for p in spoke[w] if _person(p) == voices[0]), None)
            said = _introduced(ix, of, w, voices) if fields else ""  # what they do, as the work says it
            lines.append(f"- **{_join(voices)}**: {_q(w)}" + (f": {said}" if said else "")
                         + (f" [Sources: {src}]" if src else ""))
        else:
            replayed = [_person(p) for p, _ in sorted(spoke[w].items(), key=lambda kv: (-kv[1], kv[0]))
                        if p not in dict(hosts)]
            if not replayed:
                lines.append(f"- {_q(w)}: no speaker of its own besides the hosts")
                continue
            src = first.get((w, next(p for p in spoke[w] if _person(p) == replayed[0])))
            lines.append(f"- {_q(w)}: no guest of its own; it replays {_join(replayed[:6])}"
                         + (f" [Sources: {src}]" if src else ""))
        if src:
            cited.append(src)
            points.append({"topic": w, "text": lines[-1][2:], "coverage": {}, "reports": [], "sources": [src],
                           "documents": []})
    head = ""
    if hosts:
        (h, c), rest = hosts[0], hosts[1:]
        head = f"{_person(h)} hosts {f'all {n}' if c == n else f'{c} of the {n}'} {noun}"
        if rest:
            head += " (with " + _join([f"{_person(x)} in {k}" for x, k in rest]) + ")"
    text = (f"{head}; the guests, {noun[:-1]} by {noun[:-1]} ({len(guests)} in all):" if head else
            f"The speakers of their own, {noun[:-1]} by {noun[:-1]} ({len(guests)} in all):")
    return "\n".join([text] + lines) + (f"\n\nSources: text units {', '.join(map(str, cited))}." if cited else ""), \
        points, cited
