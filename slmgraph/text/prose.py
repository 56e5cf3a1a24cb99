"""Text helpers shared by the stages and the query engines (the lowest layer: imports only the word lists of
:mod:`slmgraph.names.lexicon`).

* :func:`parse_json`: model output to JSON, repaired with the json-repair library.
* :func:`degenerate`: model text that is a copied list or a loop rather than prose.
* :func:`fold`: the one character folding under every tolerant comparison (the entity merge key
  ``names.normalize_name``, the tolerant name key ``names.tolerant_key``, claims' quote check).
* :func:`word_count`: words counted in the script's own units (a Han or kana character is one);
  :func:`word_length`: the same for a length limit (a Han or kana character is 1/1.5 word).
* :func:`word_set` / :func:`overlaps`: the one near-duplicate test (Jaccard share of words), used by the
  loop guard, answer clean-up and extractive answers.
* :func:`sentences` / :func:`sentence_spans`: the one sentence splitter (pysbd), used by every stage
  and query engine.
* :func:`addressed_to_assistant` (with :func:`order_spans`, :func:`without_orders`): sentences that
  give orders to an AI assistant (prompt injection), kept out of names, reports and answers.
* :func:`markdown_structure` / :func:`plain_sentence`: a sentence of a Markdown document as prose (table
  rows, headings and code fences are not prose; emphasis, links and backslash escapes are rendered), for
  everything quoted from the documents (data-built reports, extractive answers).
"""

from __future__ import annotations

import json
import re
import threading
import unicodedata
from functools import lru_cache

import json_repair
import pysbd

from slmgraph.names.lexicon import TITLES_PYSBD_LACKS


#: Apostrophe-like, quote and dash characters made plain by :func:`fold`.
_PLAIN = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'", "\u00b4": "'",
                        "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-"})


def fold(s: str) -> str:
    """``s`` for tolerant matching: Unicode NFKC, casefolded, curly/typographic apostrophes, quotes and
    dashes made plain (’ ‘ ʼ ` ´ to ', “ ” to ", – — to -), whitespace collapsed to single spaces.

    The first step of every tolerant comparison: the entity merge key
    (``names.normalize_name``), the tolerant name key (``names.tolerant_key``) and
    claims' source-quote check (``claims.quote_in_text``). Raises nothing.
    """
    return " ".join(unicodedata.normalize("NFKC", s).casefold().translate(_PLAIN).split())


#: Characters of the scripts written without spaces between words (Han ideographs, kana, and their
#: iteration marks): each one counts as a word in :func:`word_count`.
_UNSPACED = re.compile(r"[\u3005\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")


def word_count(s: str) -> int:
    """How many words ``s`` holds, counted in its script's own units: a whitespace-separated word of an
    alphabetic script counts one, each Han or kana character counts one (Chinese and Japanese put no
    spaces between words; a character is the unit their word counts use), punctuation alone counts none.

    ``word_count("Grace Hopper joined the Navy.") == 5``; ``word_count("王小明在北京大学学习物理学。") == 13``.
    Raises nothing.
    """
    n = 0
    for w in s.split():
        cjk = len(_UNSPACED.findall(w))
        rest = _UNSPACED.sub(" ", w)
        n += cjk + sum(1 for part in rest.split() if re.search(r"\w", part))
    return n


#: Han or kana characters per word of running Chinese or Japanese text: a word of a segmented Chinese
#: corpus averages about 1.5 characters, so a length limit set in words reads a character as 1/1.5 word.
UNSPACED_CHARS_PER_WORD = 1.5


def word_length(s: str) -> float:
    """How long ``s`` is in words, for a length limit set in words: as :func:`word_count`, except that a Han or
    kana character counts 1/:data:`UNSPACED_CHARS_PER_WORD` of a word (a character is a unit, not a word's
    length). ``word_length("王小明在北京大学学习物理学。") == 13 / 1.5``. Raises nothing."""
    unspaced = len(_UNSPACED.findall(s))
    return word_count(s) - unspaced + unspaced / UNSPACED_CHARS_PER_WORD


#: Share of words (Jaccard) at which a model-written sentence repeats an earlier one: the loop
#: guard's free-text check (``backend``) and answers' clean-up (``search.dedupe_lines``); a small
#: model's looping sentences share at least this much (docs/decisions.md: small models loop).
REPEAT_SHARE = 0.8


def word_set(s: str) -> frozenset[str]:
    """The casefolded words (``\\w+``) of ``s``, as a set."""
    return frozenset(re.findall(r"\w+", s.casefold()))


#: Runs of Han characters (with the iteration mark 々) or katakana: the content words of Chinese and Japanese text,
#: which puts no spaces between words; hiragana, mostly endings and particles shared by any two Japanese texts,
#: separates them.
_HAN_KATAKANA = re.compile(r"[\u3005\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]+")


def cjk_bigrams(s: str) -> frozenset[str]:
    """The character bigrams of the Han and katakana runs of ``s`` (a run of one character: that character), the
    units word overlap can count in unspaced Chinese and Japanese text, where ``\\w+`` takes a whole clause for
    one word: ``cjk_bigrams("霧笛の保存") == {"霧笛", "保存"}``; empty for text without such characters."""
    out = set()
    for run in _HAN_KATAKANA.findall(s):
        out.update([run] if len(run) == 1 else (run[i:i + 2] for i in range(len(run) - 1)))
    return frozenset(out)


def overlaps(a: frozenset, b: frozenset, share: float = REPEAT_SHARE) -> bool:
    """True when the word sets ``a`` and ``b`` share at least ``share`` of their union (Jaccard
    similarity >= ``share``); False when both are empty."""
    return bool(a or b) and len(a & b) >= share * len(a | b)


def parse_json(text: str) -> tuple[object, str]:
    """Parse model output as JSON, repairing it if needed (json-repair library).

    Returns:
        ``(value, status)``: status ``ok`` (valid as generated), ``repaired``
        (e.g. a record cut by ``max_tokens``, closed by json-repair) or
        ``failed`` (value None).
    """
    try:
        return json.loads(text), "ok"
    except (json.JSONDecodeError, ValueError):
        pass
    try:
        value = json_repair.loads(text)
    except Exception:  # json-repair raises assorted errors on garbage
        return None, "failed"
    if value in ("", None, [], {}):
        return None, "failed"
    return value, "repaired"



def degenerate(text: str) -> bool:
    """True for model text that is a copied list or a loop rather than prose:
    a comma-separated part or a word repeated 3+ times, or a run of 6+ digits
    ("Gordon,Gordon,Gordon", "10.1012303010101")."""
    parts = [p.strip().casefold() for p in text.split(",") if p.strip()]
    if parts and max(parts.count(p) for p in parts) >= 3:
        return True
    if re.search(r"\d{6,}", text):
        return True
    words = re.findall(r"\w+", text.casefold())
    long_words = [w for w in words if len(w) > 3]
    return bool(long_words) and max(long_words.count(w) for w in long_words) >= max(3, len(long_words) // 3)


#: A line at least this long (characters) that breaks without a sentence end is hard-wrapped prose;
#: shorter lines (list items, headings, table cells, a transcript's short turns) end where they end.
#: The same rule decides whether a capitalised run broken by a line is one name (``names``, ``ner``).
WRAPPED_LINE_CHARS = 40
#: Lines that are Markdown structure (heading, table row, list item, quote, code fence) or a
#: transcript's speaker turn ("KEVIN SCOTT: ..."): never joined to their neighbours.
_STRUCTURE_LINE = re.compile(r"\s*(?:#{1,6}\s|\||[-*+\u2022]\s|\d{1,3}[.)]\s|>|```|~~~|[A-Z][A-Z .'\u2019-]{1,40}:\s)")
#: Characters after which a line break ends the sentence anyway.
_LINE_END_STOP = set(".!?:;\u3002\uff01\uff1f")
#: A line may go on a wrapped sentence although it opens with no letter: with a digit ("30 March"), a
#: currency sign ("£640", "$5": Unicode category Sc, :func:`_continues_without_letter`) or "(" ("(orchard lead)").
_CONTINUATION_OPENERS = set("0123456789(")
#: A line opened by a record's label rather than wrapped words: a time or date ("10:30", "2025-01-03",
#: "12/05"), a parenthesised item mark ("(a) ", "(iv) ", "(2) "), or a column-aligned row (a tab or three spaces).
_RECORD_LINE = re.compile(r"\s*(?:\d+[:/-]\d|\(\w{1,4}\)\s)|.*\S(?:\t| {3,})\S")
#: A chat template's special-token string ("<|im_end|>", "<|endoftext|>"): a line ending in one is never
#: joined to the next (an injected turn, not prose wrapped at a width).
SPECIAL_TOKEN = re.compile(r"<\|[^<>|\s]*\|>")


def _continues_without_letter(line: str, nxt: str) -> bool:
    """True when line ``nxt``, opened by a digit, a currency sign or "(", may go on ``line``'s sentence: neither
    line is a record (:data:`_RECORD_LINE`). Both lines are raw (not stripped)."""
    first = nxt.lstrip()[:1]
    return (bool(first) and (first in _CONTINUATION_OPENERS or unicodedata.category(first) == "Sc")
            and not _RECORD_LINE.match(line) and not _RECORD_LINE.match(nxt))


def _soft_wraps_as_spaces(text: str) -> str:
    """``text`` (same length) with the line breaks inside hard-wrapped prose shown as spaces.

    pysbd ends a sentence at every line break: right for a transcript's turns and for Markdown's
    headings, list items and table rows, wrong for prose wrapped at a fixed width. A single line
    break is a soft wrap when neither line is structure (:data:`_STRUCTURE_LINE`), the first line
    holds no special-token string (:data:`SPECIAL_TOKEN`) and ends without ``.!?:;`` and the next
    starts with a letter that is lower-case ("the ship\\nreached") or follows a line of
    :data:`WRAPPED_LINE_CHARS` or more characters ("... waiting for Alex\\nMercer"). After such a
    long line, a next line opened by a digit, a currency sign or "(" (:func:`_continues_without_letter`:
    "... dug holes in clay on\\n30 March.", "... Dev Anand\\n(orchard lead) were elected.") goes on
    the sentence too, unless either line is a record (:data:`_RECORD_LINE`: a time or date label, an
    item mark "(a)", a column-aligned row).
    """
    text = text.replace("\r", " ")
    if "\n" not in text:
        return text
    lines = text.split("\n")
    out = []
    for i, line in enumerate(lines[:-1]):
        nxt = lines[i + 1].lstrip()
        body = line.rstrip()
        soft = (body and nxt and body[-1] not in _LINE_END_STOP
                and (nxt[0].isalpha() or _continues_without_letter(line, lines[i + 1]))
                and not SPECIAL_TOKEN.search(body)
                and not _STRUCTURE_LINE.match(line) and not _STRUCTURE_LINE.match(lines[i + 1])
                and (nxt[0].islower() or len(body.strip()) >= WRAPPED_LINE_CHARS))
        out.append(line + (" " if soft else "\n"))
    out.append(lines[-1])
    return "".join(out)


#: A sentence ending in a title pysbd's English abbreviation list lacks ("Fr. Brown", "Insp. Lestrade";
#: :data:`slmgraph.names.lexicon.TITLES_PYSBD_LACKS`) is joined to the next.
_TITLE_END = re.compile(r"(?<![\w.])(?:" + "|".join(TITLES_PYSBD_LACKS) + r")\.\s*$")
#: Sentence-split cache size (distinct texts): the stages split the same text unit several times
#: (extraction, graph, reports) and the query engines the same passages per question.
SENTENCE_CACHE_TEXTS = 4096


_SEGMENTERS = threading.local()

#: Compiled patterns kept for pysbd: its English rules build about three patterns per abbreviation found in a
#: text, more than the 512 that ``re`` keeps, so without this each split recompiles most of them.
PYSBD_PATTERNS = 16384


class _PatternCache:
    """The ``re`` module as pysbd's modules see it (:func:`_quiet_recompiles`): the same functions on patterns
    compiled once and kept in an LRU cache of :data:`PYSBD_PATTERNS`, so the splits are unchanged."""

    def __getattr__(self, name: str):
        return getattr(re, name)

    @staticmethod
    @lru_cache(maxsize=PYSBD_PATTERNS)
    def _compiled(kind: type, pattern, flags: int) -> re.Pattern:
        return re.compile(pattern, flags)

    def compile(self, pattern, flags: int = 0) -> re.Pattern:
        if isinstance(pattern, re.Pattern):
            return re.compile(pattern, flags)
        return self._compiled(type(pattern), pattern, int(flags))

    def sub(self, pattern, repl, string, count=0, flags=0):
        return self.compile(pattern, flags).sub(repl, string, count)

    def subn(self, pattern, repl, string, count=0, flags=0):
        return self.compile(pattern, flags).subn(repl, string, count)

    def search(self, pattern, string, flags=0):
        return self.compile(pattern, flags).search(string)

    def match(self, pattern, string, flags=0):
        return self.compile(pattern, flags).match(string)

    def fullmatch(self, pattern, string, flags=0):
        return self.compile(pattern, flags).fullmatch(string)

    def findall(self, pattern, string, flags=0):
        return self.compile(pattern, flags).findall(string)

    def finditer(self, pattern, string, flags=0):
        return self.compile(pattern, flags).finditer(string)

    def split(self, pattern, string, maxsplit=0, flags=0):
        return self.compile(pattern, flags).split(string, maxsplit)


def _quiet_recompiles() -> None:
    """Point the ``re`` name of every loaded pysbd module at one :class:`_PatternCache`."""
    import sys

    cache = _PatternCache()
    for name, mod in list(sys.modules.items()):
        if (name == "pysbd" or name.startswith("pysbd.")) and getattr(mod, "re", None) is re:
            mod.re = cache


_quiet_recompiles()


class _Segmenter(pysbd.Segmenter):
    """pysbd's segmenter with its last step, finding each sentence in the text, done by ``str.find``: pysbd
    compiles a regular expression of each sentence (``re.escape(sentence) + r"\\s*"``) for that search, which
    was most of a split's time, and the same sentences and offsets come out."""

    def sentences_with_char_spans(self, sentences):
        """pysbd's ``Segmenter.sentences_with_char_spans`` (0.3.4): per sentence, the first of its
        non-overlapping occurrences in the text, counted from the start, with the whitespace after it, that
        ends past the previous sentence's span; a sentence with none is left out."""
        from pysbd.utils import TextSpan

        text = self.original_text
        spans = []
        prior_end = 0
        for sent in sentences:
            if not sent:  # an empty sentence: pysbd's own search, whose pattern matches any whitespace
                for m in re.finditer(r"\s*", text):
                    if m.end() > prior_end:
                        spans.append(TextSpan(m.group(), m.start(), m.end()))
                        prior_end = m.end()
                        break
                continue
            pos = 0
            while (start := text.find(sent, pos)) >= 0:
                end = start + len(sent)
                while end < len(text) and text[end].isspace():  # r"\s*" (str.isspace is re's \s)
                    end += 1
                if end > prior_end:
                    spans.append(TextSpan(text[start:end], start, end))
                    prior_end = end
                    break
                pos = end
        return spans


def _segmenter() -> pysbd.Segmenter:
    """The pysbd segmenter of this thread (English rules, text kept as is; pysbd 0.3.4 also ends sentences at
    the CJK full stops 。！？; :class:`_Segmenter`). One per thread: a segmenter keeps the text it is splitting
    on itself, so two threads sharing one split each other's text."""
    seg = getattr(_SEGMENTERS, "seg", None)
    if seg is None:
        seg = _SEGMENTERS.seg = _Segmenter(language="en", clean=False, char_span=False)
    return seg


@lru_cache(maxsize=SENTENCE_CACHE_TEXTS)
def _spans(text: str) -> tuple[tuple[int, int], ...]:
    shown = _soft_wraps_as_spaces(text)
    ends: list[int] = []
    cur = 0
    for piece in _segmenter().segment(shown):
        body = piece.strip()
        if not body:
            continue
        i = shown.find(body, cur)
        if i < 0:  # pysbd altered the text (never seen with clean=False): the piece joins the next one
            continue
        cur = i + len(body)
        ends.append(cur)
    spans: list[tuple[int, int]] = []
    start = 0
    glue = False
    for end in ends + [len(text)]:
        a, b = start, end
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        start = end
        if a == b:
            continue
        if glue and spans:
            spans[-1] = (spans[-1][0], b)
        else:
            spans.append((a, b))
        glue = bool(_TITLE_END.search(text[a:b]))
    return tuple(spans)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` character offsets of the sentences of ``text``, in order, whitespace
    trimmed (so ``text[start:end]`` is the sentence).

    The one sentence splitter of slmgraph: pysbd 0.3.4 (Sadvilkar & Neumann 2020, the
    "Golden Rules" segmenter; https://github.com/nipunsadvilkar/pySBD) with its English rules,
    so "Dr. Chen met Mr. Li. They spoke." is two sentences and "3.5 km", "U.S." and "e.g." end
    none. Line structure ends a sentence (a transcript's turns, Markdown headings, list items and
    table rows), except a line break inside hard-wrapped prose (:func:`_soft_wraps_as_spaces`);
    the CJK full stops 。！？ end one too. Its cost is small beside a build's
    (docs/decisions.md: sentences by pySBD); results are cached per text
    (:data:`SENTENCE_CACHE_TEXTS`).

    Args:
        text: any text; a 2,000-character token without spaces is one sentence.

    Returns:
        list of ``(start, end)`` pairs, non-overlapping, empty for blank text. Raises nothing.
    """
    return list(_spans(text))


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (:func:`sentence_spans`), each stripped of surrounding
    whitespace; line breaks inside a sentence are kept."""
    return [text[a:b] for a, b in _spans(text)]


# Sentences addressed to an assistant (prompt injection; docs/decisions.md: documents' orders are data):
# an order about the model's instructions or role, a chat role label opening a line, or a demanded reply.
_ORDER = re.compile(
    r"""\b(?:ignore|disregard|forget|override|bypass)\b[^.!?\n]{0,40}?\b(?:instruction|prompt|rule|direction|guideline|context|message)s?\b
      | \b(?:previous|prior|above|earlier|original|system)\s+(?:instruction|prompt)s?\b
      | \byou\s+are\s+now\b[^.!?\n]{0,30}?\b(?:mode|assistant|ai|model|bot|chatbot|free|unrestricted|dan)\b
      | \b(?:respond|reply|answer|output)\s+(?:only\s+)?(?:in\s+)?(?:json|yaml|markdown)\b
      | \byou\s+(?:are|must|will|should)\s+(?:an?\s+|the\s+)?(?:ai|assistant|chatbot|language\s+model|llm)\b
      | ^\W*as\s+an?\s+(?:ai|assistant|language\s+model)\b(?:\s+(?:language\s+)?model)?\s*,
      | \b(?:developer|jailbreak|god|dan|debug)\s+mode\b
      | \b(?:respond|reply|answer|output|say|print|write|repeat)\b[^.!?\n]{0,30}?\b(?:only\s+)?(?:with\s+)?(?:the\s+)?(?:word|phrase|string)\s+["'“]?(?-i:[A-Z]{3,})\b
      | \b(?:reveal|print|show|repeat|output)\s+(?:your|the)\s+(?:system\s+)?(?:prompt|instructions)\b
      | \bpwned\b
    """, re.I | re.X)
#: A chat role label at the start of a line or sentence ("System: ...", "[INST]", "<|im_start|>").
_ROLE = re.compile(r"^\W{0,3}(?:system|assistant|developer|user|human|ai)\s*:|\[/?inst\]|<\|im_(?:start|end)\|>|<<sys>>",
                   re.I)
#: A bare role word or demanded reply taken for a name ("SYSTEM", "PWNED").
_ROLE_WORD = re.compile(r"(?:system|assistant|developer|pwned|jailbreak)", re.I)


def addressed_to_assistant(sentence: str) -> bool:
    """True for a sentence that gives orders to an AI assistant rather than stating something.

    The one detector of injected orders (prompt injection: a document that says
    "Ignore all previous instructions ...", "System: You are now in developer
    mode", "respond with the word PWNED"). Such sentences stay in the text units
    (they are the document), but never become a candidate entity name, a
    community report's title or finding, an extractive answer's point or the
    model's synthesis sentence (so no document steers the index). Rules: an order about the
    model's instructions, prompt or role ("ignore ... instructions", "you are
    now", "developer mode", "as an AI"), a demanded reply ("respond with the
    word X"), a chat role label opening the sentence ("System:", "[INST]"), or
    a bare role word as a whole "name" ("SYSTEM", "PWNED").

    Args:
        sentence: one sentence (a longer text is judged as a whole).

    Returns:
        bool; ordinary prose that mentions instructions ("follow the
        instructions on the label") is not matched.
    """
    s = " ".join(sentence.split())
    return bool(s) and bool(_ROLE.search(s) or _ORDER.search(s) or _ROLE_WORD.fullmatch(s.strip(" .:!\"'")))


def order_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` character offsets of the sentences of ``text`` that
    :func:`addressed_to_assistant` matches (sentences of :func:`sentence_spans`)."""
    return [(a, b) for a, b in _spans(text) if addressed_to_assistant(text[a:b])]


def without_orders(text: str) -> str:
    """``text`` with the sentences addressed to an assistant replaced by spaces
    (same length, newlines kept, so offsets into ``text`` stay valid)."""
    out = list(text)
    for a, b in order_spans(text):
        out[a:b] = [c if c == "\n" else " " for c in text[a:b]]
    return "".join(out)


# --- Markdown in quoted sentences --------------------------------------------------------------
# Text units keep their documents' text as written, Markdown included; a sentence quoted into a
# report or an answer must read as prose: "| Bluewater Trust | project lead | 200,000 |" is a table
# row, not a statement, and "5 \\* 3" must not print its backslash.

#: A table row or rule (GitHub-flavoured Markdown: cells between pipes, "|---|:--:|").
_TABLE_LINE = re.compile(r"^\s*\|.*|.*\|\s*$|^[^|\n]*\|[^|\n]*\|")
#: A fenced-code line, an ATX heading, a thematic break.
_FENCE_LINE = re.compile(r"^\s{0,3}(?:```|~~~)")
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}(?:\s|$)")
_RULE_LINE = re.compile(r"^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$")
#: Block markers of a line that carries prose: a block quote, a list item (bullet or number).
_BLOCK_MARKER = re.compile(r"^\s{0,3}(?:>\s?)+|^\s{0,3}(?:[-*+\u2022]|\d{1,3}[.)])\s+")
#: Characters of inline Markdown (emphasis, code, links, escapes, entities, HTML).
_INLINE_MARKUP = re.compile(r"[\\*_`\[<&!]")
#: Names of HTML elements: an inline tag of one of them is markup; any other "tag" is a word in angle
#: brackets the text means ("<Vortex> Industries") and is quoted as written.
HTML_TAGS = frozenset("""
a abbr b br blockquote body code dd del details div dl dt em font h1 h2 h3 h4 h5 h6 head hr html i img ins kbd li
link mark meta ol p pre q s script section small span strong style sub summary sup table tbody td th thead title tr u
ul
""".split())
_TAG_NAME = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)")


def markdown_structure(sentence: str) -> str | None:
    """The kind of Markdown structure ``sentence`` is, or None when it may be prose.

    ``table`` (a row or rule of a pipe table: it starts or ends with ``|``, or has two pipes),
    ``heading`` (an ATX heading, ``# Title``), ``code`` (a code fence), ``rule`` (a thematic break,
    ``---``). A sentence as :func:`sentences` gives it: line structure ends a sentence, so a table
    row or a heading is a sentence of its own. Raises nothing.
    """
    s = sentence.strip()
    if not s:
        return None
    if _FENCE_LINE.match(s):
        return "code"
    if _HEADING_LINE.match(s):
        return "heading"
    if _RULE_LINE.match(s):
        return "rule"
    if _TABLE_LINE.match(s):
        return "table"
    return None


@lru_cache(maxsize=1)
def _markdown():
    """The CommonMark inline parser (markdown-it-py, https://markdown-it-py.readthedocs.io)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


def plain_sentence(sentence: str) -> str:
    """``sentence`` as plain prose: Markdown block markers (``> ``, ``- ``, ``1. ``) removed and its
    inline Markdown rendered as text by markdown-it-py's CommonMark parser -- emphasis marks dropped
    (``**Trust**`` -> ``Trust``), links and images as their text, code spans as their code, backslash
    escapes and entities resolved (``\\*`` -> ``*``, ``&amp;`` -> ``&``), inline tags of HTML elements
    (:data:`HTML_TAGS`) dropped while any other word in angle brackets is kept as written --
    and whitespace folded. Text without Markdown characters is only whitespace-folded, so plain text
    ("5 * 3", "snake_case", "KEVIN SCOTT: Yes.") comes back as it was. Raises nothing.
    """
    s = _BLOCK_MARKER.sub("", " ".join(sentence.split()), count=1)
    if not _INLINE_MARKUP.search(s):
        return s
    try:
        tokens = _markdown().parseInline(s)
    except Exception:  # markdown-it-py raises only on bugs; a sentence is then quoted as written
        return s
    out = []
    for tok in (tokens[0].children or []) if tokens else []:
        if tok.type in ("text", "code_inline", "image"):
            out.append(tok.content)
        elif tok.type == "html_inline":
            tag = _TAG_NAME.match(tok.content)
            if not tag or tag.group(1).lower() not in HTML_TAGS:
                out.append(tok.content)  # "<Vortex>": the text's own word, not a tag to drop
        elif tok.type in ("softbreak", "hardbreak"):
            out.append(" ")
    return _BLOCK_MARKER.sub("", " ".join("".join(out).split()), count=1)  # "\\* Alex ..." -> "* Alex ..."
