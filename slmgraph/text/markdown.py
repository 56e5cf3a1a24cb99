"""Markdown, code, LaTeX and HTML structure masked out of a text, offsets kept (the candidate pass reads the masked
text, so markup yields no names and the text unit keeps its original text).
"""

from __future__ import annotations

import re
from functools import lru_cache

from slmgraph.text.prose import HTML_TAGS, without_orders

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


#: Texts whose masked form is kept (:func:`mask_markup`): the extraction masks a text unit where its parse is
#: batched and again in the candidate pass, a few text units apart.
MASKED_TEXTS = 64


@lru_cache(maxsize=MASKED_TEXTS)
def mask_markup(text: str) -> str:
    """``text`` with Markdown/code/LaTeX/HTML structure replaced by spaces (same length, offsets kept).

    Masked whole: fenced code blocks, inline code, math (``$...$``), images,
    URLs, LaTeX commands with their argument when the argument is markup
    (:data:`_LATEX_MARKUP_ARGS`: ``\\label{...}``, ``\\cite{...}``...), the
    rule row of a table and the table's header row, tags of HTML elements
    (:data:`slmgraph.text.prose.HTML_TAGS`, any case). Masked in part: a link keeps its text (``[Acme](http://...)`` ->
    ``Acme``), another LaTeX command keeps its argument's text
    (``\\textbf{Acme}`` -> ``Acme``), an unknown tag keeps its word
    (``Quantum <Leap> Labs`` -> ``Quantum  Leap  Labs``), table pipes become
    full stops (each cell its own sentence), heading ``#``, ``##...##``, emphasis
    ``*``/``_`` and quote ``>`` marks become spaces. Sentences that give orders to an
    assistant (:func:`slmgraph.text.prose.without_orders`: injected "System: ...", "respond
    with the word PWNED") are masked whole, so they yield no candidate names. The last
    :data:`MASKED_TEXTS` results are kept.
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
        elif name in HTML_TAGS:
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
