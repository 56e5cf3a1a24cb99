"""The named-entity gate: a question about a person, organisation or place the index never mentions is
not answered from whatever text happens to be nearest.

Every search method refuses a question its index holds nothing near by a cosine floor
(:mod:`slmgraph.query.scoring`); on a small corpus that floor's margin is thin -- in a user's tryout,
local search answered "Who is Angela Merkel?" on five files about a lake clean-up (23.2 against a floor
of 21.7), quoting whatever sentence was nearest. A name is a sharper test than a cosine: the question
names something, and the index either holds it or does not.

:func:`check_names` finds the names of the question with the index's own NER pipeline
(:func:`slmgraph.indexing.stages.ner.pipeline_for`, spaCy's English small pipeline by default; its spans labelled
:data:`GATE_LABELS`: people, organisations, places), or without one with the capitalised-run pass
(:func:`slmgraph.names.forms.candidate_spans`). A name is *known* when, under the index's own name keys
(:func:`slmgraph.names.forms.tolerant_words`, built on :func:`slmgraph.text.prose.fold`: case, punctuation,
plurals, a leading article), all its words are words of one entity's name ("Merkel" of "Angela
Merkel", "Varrin Council" of "Varrin County Council"), or the name occurs in a text unit
(:func:`slmgraph.names.forms.name_occurs`: a name the extraction left out, or merged under another name, is
still in the documents). A question whose names are all unknown gets one line saying so
(``prompts/no_answer_name.txt``), with no model call and before the embedder is needed, followed by "Did you
mean ...?" with the index's entity names nearest a misspelt one (:func:`close_names`); a question naming one
known and one unknown thing is answered, and ``details["unknown_names"]`` lists the unknown.
"""

from __future__ import annotations

import time

from slmgraph.names.forms import candidate_spans, name_forms, name_occurs, tolerant_words
from slmgraph.names.lexicon import TITLES
from slmgraph.text.prose import fold

#: spaCy (OntoNotes 5 / CoNLL) labels of the names a question must find in the index: people,
#: organisations, countries/cities/states, other locations, facilities. Nationalities and groups (NORP),
#: events, works and products are left out: they are often written differently in the documents
#: ("German" for "Germans") or are not what the corpus is about.
GATE_LABELS = frozenset({"PERSON", "PER", "ORG", "GPE", "LOC", "FAC"})


def _without_titles(name: str) -> str:
    """``name`` without leading titles ("President Obama" -> "Obama", "Dr. Ana Reyes" -> "Ana Reyes");
    a name that is only a title is returned as it was."""
    words = name.split()
    k = 0
    while k < len(words) - 1 and words[k].strip(".").casefold() in TITLES:
        k += 1
    return " ".join(words[k:])


def question_names(question: str, settings) -> list[str]:
    """The people, organisations and places ``question`` names (surface forms, titles removed, one per
    tolerant key, in order).

    With an NER pipeline (``settings.ner_model``, as :func:`slmgraph.indexing.stages.ner.pipeline_for` resolves it) its
    entity spans labelled :data:`GATE_LABELS` that hold a capital letter; without one (``none``, or spaCy not installed) the
    capitalised runs of :func:`slmgraph.names.forms.candidate_spans` ("What does Andrew Ng say?" ->
    "Andrew Ng"; a capitalised first word alone is not a name). A pipeline that cannot be loaded is
    treated as none. Raises nothing.
    """
    from slmgraph.errors import UserError
    from slmgraph.indexing.stages.ner import pipeline_for

    try:
        nlp, _ = pipeline_for(getattr(settings, "ner_model", "auto"))
    except UserError:
        nlp = None
    if nlp is not None:
        # A span with no capital letter is no name as written ("apple varieties": spaCy's small English
        # pipeline tags "apple" ORG).
        raw = [e.text for e in nlp(question).ents if e.label_ in GATE_LABELS and any(c.isupper() for c in e.text)]
    else:
        raw = [sp.name for sp in candidate_spans(question)]
    out, seen = [], set()
    for name in raw:
        name = _without_titles(" ".join(name.split()).strip(" '\"\u2019?.,;:!"))
        key = " ".join(tolerant_words(name, drop_article=True))
        if key and key not in seen:
            seen.add(key)
            out.append(name)
    return out


def _entity_words(store) -> list[frozenset]:
    """The tolerant word set of every entity name of the index."""
    return [frozenset(tolerant_words(str(n), drop_article=True))
            for (n,) in store.con.execute("SELECT name FROM entities").fetchall()]


def entities_named(store, name: str) -> list[int]:
    """The ids of the entities ``name`` denotes, best first: those one of whose name forms
    (:func:`slmgraph.names.forms.name_forms`: ``Margaret "Peggy" Doyle`` is also "Peggy Doyle" and "Margaret
    Doyle") has the name's tolerant words, most connected first; else the one entity whose name holds all of
    them ("Natarajan" of "Priya Natarajan"; none when several do). The one name lookup of local search,
    the API and serve's entity search."""
    words = frozenset(tolerant_words(name, drop_article=True))
    if not words:
        return []
    exact, within = [], []
    for eid, n in store.con.execute("SELECT entity_id, name FROM entities ORDER BY degree DESC, entity_id").fetchall():
        forms = [frozenset(tolerant_words(f, drop_article=True)) for f in name_forms(str(n))]
        if words in forms:
            exact.append(eid)
        elif words <= forms[0]:
            within.append(eid)
    return exact or (within if len(within) == 1 else [])


def named_entities(store, names: list[str]) -> list[str]:
    """The entity keys (``entities.norm``) the question's ``names`` denote, in the order named: for each,
    the first of :func:`entities_named`."""
    out: list[str] = []
    for name in names:
        for eid in entities_named(store, name)[:1]:
            norm = store.con.execute("SELECT norm FROM entities WHERE entity_id = ?", [eid]).fetchone()[0]
            if norm not in out:
                out.append(norm)
    return out


def known_names(store, names: list[str]) -> dict[str, bool]:
    """``name -> known`` for ``names`` (see the module doc): its tolerant words all in one entity's
    name, or the name occurring in a text unit (tolerant match). Reads the entities' names and, for a
    name no entity holds, the text units (folded once; only units holding the name's longest word
    are matched in full)."""
    out: dict[str, bool] = {}
    ents = _entity_words(store) if names else []
    folded: list[str] | None = None
    texts: list[str] = []
    for name in names:
        words = frozenset(tolerant_words(name, drop_article=True))
        if not words or any(words <= e for e in ents):
            out[name] = True
            continue
        if folded is None:
            texts = [t for (t,) in store.con.execute("SELECT text FROM text_units").fetchall()]
            folded = [fold(t) for t in texts]
        probe = max(words, key=len)
        probe = probe[:-1] if probe.endswith("y") and len(probe) > 3 else probe  # "city" of "cities"
        out[name] = any(probe in f and name_occurs(name, t) for f, t in zip(folded, texts))
    return out


def index_names(store, question: str, covered: list[str] = ()) -> list[str]:
    """The entity names of the index that ``question`` contains as whole words, under the tolerant match
    (case-insensitive; a name form of :func:`slmgraph.names.forms.name_forms` counts), longest first.

    The NER pass of :func:`question_names` misses names it has no cue for (spaCy's small English pipeline
    finds nothing in "Who is Tomas Reinholt?" but tags "Hannah Pryce" in the same question), so the index's
    own names are looked up too. Only proper names count: a name written with a capital letter in the index
    that no text unit writes in lower case ("Fireblight" beside "fireblight" is a common word) and, for one
    word, that some text unit writes after a word or comma (the test of
    :func:`slmgraph.names.forms.candidate_spans`: "Lesson" only opening sentences is no name). A name inside a longer one found (``covered``, or another index name)
    is left out, so "Angela" of "Angela Merkel" cannot vouch for an unknown "Angela Merkel".

    Returns:
        Names as the index writes them (list of str, possibly empty). Raises nothing.
    """
    import re

    qkey = " " + " ".join(tolerant_words(question)) + " "
    taken = [" " + " ".join(tolerant_words(c, drop_article=True)) + " " for c in covered]
    found: list[tuple[str, str]] = []
    for (name,) in store.con.execute("SELECT name FROM entities ORDER BY degree DESC, entity_id").fetchall():
        name = str(name)
        if not any(c.isupper() for c in name):
            continue
        for form in name_forms(name):
            key = " " + " ".join(tolerant_words(form, drop_article=True)) + " "
            if key.strip() and key in qkey:
                found.append((name, key))
                break
    found.sort(key=lambda f: -len(f[1]))
    texts: list[str] | None = None
    out: list[str] = []
    for name, key in found:
        if any(key in t for t in taken):
            continue
        words = re.findall(r"[^\W_]+", name)
        if texts is None:
            texts = [t for (t,) in store.con.execute("SELECT text FROM text_units").fetchall()]
        lower = re.compile(r"(?<!\w)" + r"\W+".join(re.escape(w.lower()) for w in words) + r"(?!\w)")
        if words and any(lower.search(t) for t in texts):
            continue  # the documents write it as a common word
        if len(words) == 1 and not name.isupper():
            mid = re.compile(r"[\w,;:]\s+" + re.escape(name) + r"(?!\w)")
            if not any(mid.search(t) for t in texts):
                continue  # only ever capitalised at a sentence's start: no evidence it is a name
        taken.append(key)
        out.append(name)
    return out


def check_names(store, question: str, settings, in_index: bool = False) -> dict:
    """The named-entity gate of ``question`` on the index ``store``.

    With ``in_index``, the names of the index's entities the question contains (:func:`index_names`)
    are named too, after the NER's: they are known by construction.

    Returns:
        ``{"named": [names], "unknown_names": [names the index does not hold], "answer": bool}``;
        ``answer`` is False only when the question names something and nothing it names is known.
    """
    named = question_names(question, settings)
    if in_index:
        named += index_names(store, question, named)
    known = known_names(store, named)
    unknown = [n for n in named if not known[n]]
    gate = {"named": named, "unknown_names": unknown, "answer": not named or len(unknown) < len(named)}
    close = close_names(store, unknown) if not gate["answer"] else []
    if close:
        gate["close_names"] = close
    return gate


#: How alike (difflib's ratio of the case-folded names) an entity's name must be to a name the index does not
#: hold before the refusal offers it: a misspelling ("Ramanthan" for "Ramanathan") is near 0.9.
CLOSE_NAME_RATIO = 0.8


def close_names(store, names: list[str]) -> list[str]:
    """The index's entity names nearest each of ``names`` (difflib's ratio at least :data:`CLOSE_NAME_RATIO`),
    one per name, the best-connected first on a tie; [] when none is near."""
    import difflib

    if not names:
        return []
    ents = [str(n) for (n,) in store.con.execute("SELECT name FROM entities ORDER BY degree DESC, entity_id").fetchall()]
    folded = {}
    for e in ents:
        folded.setdefault(e.casefold(), e)
    out = []
    for name in names:
        got = difflib.get_close_matches(_without_titles(name).casefold(), list(folded), n=1, cutoff=CLOSE_NAME_RATIO)
        if got and folded[got[0]] not in out:
            out.append(folded[got[0]])
    return out


def known_of(named: dict) -> list[str]:
    """The names of ``named`` (:func:`check_names`) the index holds."""
    return [n for n in named.get("named", []) if n not in named.get("unknown_names", [])]


def name_variants(names: list[str]) -> list[str]:
    """``names`` and, for a name of several words, its last word when that is a name of its own ("Okafor" of
    "Marta Okafor", as a text says it again): the forms a sentence naming them may use."""
    out = list(names)
    for n in names:
        words = n.split()
        if len(words) > 1 and len(words[-1]) > 2 and words[-1][:1].isupper():
            out.append(words[-1])
    return list(dict.fromkeys(out))


def units_naming(texts: dict, names: list[str]) -> set:
    """The keys of ``texts`` (``id -> text``) whose text names one of ``names`` under the tolerant match
    (:func:`slmgraph.names.forms.name_occurs`)."""
    return {i for i, t in texts.items() if any(name_occurs(n, t) for n in names)} if names else set()


def names_vouch(named: dict, gate: dict) -> dict:
    """The relevance gate ``gate`` of basic or local search, passed when the question names something the
    index holds (``named`` from :func:`check_names`): an entity's name or a name in its text is stronger
    evidence that the index can answer than the question's embedding cosine, which for a short "Who is
    X?" falls under the floor even where X's own text unit exists (a new user's "Who is Elena Voss?",
    scored 6.9 against a floor of 18.5). Adds ``known_names``.

    Returns:
        ``gate``, with ``answer`` True and ``known_names`` set when a named name is known.
    """
    known = [n for n in named.get("named", []) if n not in named.get("unknown_names", [])]
    if known and not gate.get("answer"):
        gate = dict(gate, answer=True, known_names=known)
    return gate


#: Names a refusal line quotes (:func:`quoted_names`); the others are counted.
QUOTED_NAMES = 5


def quoted_names(names: list[str]) -> str:
    """``'A'``, ``'A' or 'B'``, ``'A', 'B' or 'C'``; past :data:`QUOTED_NAMES` names, the rest counted
    (``'A', ..., 'E' or 3 other names``), and each name cut as :func:`slmgraph.errors.echo` cuts it, so a
    question naming many or very long names still gets a line that reads."""
    from slmgraph.errors import echo

    q = [f"'{echo(n)}'" for n in names[:QUOTED_NAMES]]
    rest = len(names) - len(q)
    if rest:
        return ", ".join(q) + f" or {rest} other name{'s' if rest > 1 else ''}"
    return q[0] if len(q) == 1 else ", ".join(q[:-1]) + " or " + q[-1]


def name_refusal(ans, prompts, gate: dict, on_text, t0: float):
    """``ans`` as the no-answer of a question whose names the index does not hold
    (``prompts/no_answer_name.txt``; no model call): ``details`` holds the gate and ``refused``."""
    ans.text = prompts.fill("no_answer_name", names=quoted_names(gate["unknown_names"])).strip()
    if gate.get("close_names"):  # a misspelt name: the index's nearest names
        ans.text += f" Did you mean {quoted_names(gate['close_names'])}?"
    ans.citations = {}
    ans.context = []
    ans.details = {**ans.details, "refused": True, "refused_by": "names", "removed_citations": {}, **gate}
    if on_text is not None:
        on_text(ans.text)
    ans.seconds = time.perf_counter() - t0
    return ans


def name_details(gate: dict) -> dict:
    """The gate's figures for an answered question's ``details``: ``named`` and ``unknown_names``."""
    return {"named": gate["named"], "unknown_names": gate["unknown_names"]}
