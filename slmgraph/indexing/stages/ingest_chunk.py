"""Cutting one document into text units at word boundaries (paper sec. 3.1.1; :func:`make_text_units`).

Each document is split into text units of at most ``chunk_size`` tokens of the
model's own tokenizer, overlapping by at most ``chunk_overlap`` tokens (GraphRAG
default 600/100, paper sec. 3.1.1). Units are cut between words, never inside
one: the text is split into segments of leading whitespace plus one
whitespace-free run, segments are counted in tokens and packed greedily, so a
cut that would fall inside a word moves back to the whitespace before it (a
unit may therefore hold a few tokens fewer than ``chunk_size``). A run longer
than a unit's budget (text without spaces, e.g. Japanese or Chinese) is cut
between characters, after a sentence mark where one falls in its last half.
Units are slices of the document's characters, so they rejoin to it exactly
(``char_start``/``char_end`` are stored): no character is lost where its bytes
would span two token windows.

A trailing unit that would add fewer than ``TAIL_SHARE`` x ``chunk_size`` new
tokens (tokens not already in the unit before it) is merged into the unit
before it, which may then exceed ``chunk_size`` by up to that many tokens,
so a file a little over ``chunk_size`` is not cut into a full unit and a sliver
(docs/decisions.md: tail units merged).
"""

from __future__ import annotations

import hashlib
import re
from array import array
from dataclasses import dataclass
from typing import Iterator

from slmgraph.errors import UserError
from slmgraph.indexing.stages.ingest_read import Document

#: A trailing text unit adding fewer new tokens than this share of the chunk
#: size is merged into the unit before it, so a file just over a unit leaves no
#: sliver (docs/decisions.md: tail units merged).
TAIL_SHARE = 0.25

#: Characters of a document between two progress updates of its segmenting.
PROGRESS_CHARS = 1 << 20
#: A document longer than this (characters) is never tokenized whole: its token count is the sum over its
#: segments, whose whitespace convention is the one that counts its first :data:`HEAD_CHARS` exactly.
TOKENIZE_BLOCK = 1 << 20
HEAD_CHARS = 1 << 16

#: A segment: leading whitespace plus one whitespace-free run (tokenizers that attach a space to the
#: word after it: GPT-2-style BPE, SentencePiece), or the run plus its trailing whitespace.
_SEGMENT_LEAD = re.compile(r"\s*\S+")
_SEGMENT_TRAIL = re.compile(r"\S+\s*")
#: Where a run without spaces is best cut: after a sentence or clause mark.
_SOFT_CUT = re.compile(r"[。！？!?．.、，,;；:：)）」』\]]")


class TokenCounts:
    """Tokens of a piece of text in the model's tokenizer (``tokenize``: ``str -> list[int]``), called as
    ``counts(piece) -> int``. Pieces under 64 characters are remembered, at most ``limit`` of them, so one
    object shared by the documents of an ingest tokenizes each word once (words repeat across documents;
    long pieces, bisection prefixes, rarely do)."""

    def __init__(self, tokenize, limit: int = 1 << 18):
        self.tokenize, self.limit = tokenize, limit
        self.known: dict[str, int] = {}

    def __call__(self, piece: str) -> int:
        n = self.known.get(piece)
        if n is None:
            n = len(self.tokenize(piece))
            if len(piece) < 64 and len(self.known) < self.limit:
                self.known[piece] = n
        return n


@dataclass
class TextUnit:
    """One chunk: token span ``[tok_start, tok_end)`` of its document, its characters
    ``text = document.text[char_start:char_end]``."""

    chunk_id: str
    doc_id: str
    ord: int
    tok_start: int
    tok_end: int
    text: str
    char_start: int = 0
    char_end: int = 0

    @property
    def n_tokens(self) -> int:
        """Tokens in the unit."""
        return self.tok_end - self.tok_start


def _check_sizes(size: int, overlap: int) -> None:
    if size < 1:
        raise UserError(f"chunk size {size} is not positive: pass --chunk-size of e.g. 600")
    if overlap < 0 or overlap >= size:
        raise UserError(f"chunk overlap {overlap} must be >= 0 and < chunk size {size}: pass e.g. --chunk-overlap 100")


def pack(counts: list[int], size: int, overlap: int, tail_share: float = TAIL_SHARE) -> list[tuple[int, int]]:
    """Pack segments of ``counts[i]`` tokens into windows ``[(first, end), ...]`` of segment indices.

    Each window holds whole segments of at most ``size`` tokens in all (a
    segment of more tokens stands alone), the next window starts with the
    last segments of the one before that fit in ``overlap`` tokens, and
    always adds at least one new segment. Every segment is in a window; the
    last window ends at ``len(counts)``. A last window adding fewer than
    ``tail_share * size`` new tokens is merged into the window before it.

    Raises:
        UserError: ``size < 1`` or ``overlap`` not in ``[0, size)``.
    """
    _check_sizes(size, overlap)
    n = len(counts)
    spans: list[tuple[int, int]] = []
    i = 0
    while i < n:
        j, tok = i, 0
        while j < n and (j == i or tok + counts[j] <= size):
            tok += counts[j]
            j += 1
        spans.append((i, j))
        if j >= n:
            break
        k, back = j, 0
        while k - 1 > i and back + counts[k - 1] <= overlap and back + counts[k - 1] + counts[j] <= size:
            k -= 1
            back += counts[k]
        i = k
    if len(spans) >= 2:
        new = sum(counts[spans[-2][1]:spans[-1][1]])
        if new < tail_share * size:
            spans[-2:] = [(spans[-2][0], spans[-1][1])]
    return spans


def chunk_tokens(tokens: list[int], size: int, overlap: int, tail_share: float = 0.0) -> list[tuple[int, int]]:
    """Token windows ``[(start, end), ...]`` of ``size`` overlapping by ``overlap`` (one token per segment).

    Every token is in at least one window; the last window ends at
    ``len(tokens)``; no window is empty. An empty token list gives no windows.
    ``tail_share`` as in :func:`pack` (0 = no merge).

    Raises:
        UserError: ``size < 1`` or ``overlap`` not in ``[0, size)``.
    """
    return pack([1] * len(tokens), size, overlap, tail_share)


def segments(text: str, count, limit: int, pattern: re.Pattern = _SEGMENT_LEAD) -> list[tuple[int, int, int]]:
    """Cut ``text`` into segments ``[(char_start, char_end, tokens), ...]`` that tile it exactly.

    A segment is leading whitespace plus one whitespace-free run (trailing
    whitespace of the text joins the last), or with ``_SEGMENT_TRAIL`` the run
    plus its trailing whitespace (leading whitespace joins the first). A segment of more than ``limit``
    tokens is cut between characters into pieces of at most ``limit`` tokens
    (each the longest such prefix, ended after a sentence or clause mark when
    one falls in its second half).

    Args:
        count: ``str -> int`` tokens of a piece of text in the model's tokenizer.
        limit: the most tokens of one piece (>= 1).
    """
    return list(iter_segments(text, count, limit, pattern))


def iter_segments(text: str, count, limit: int, pattern: re.Pattern = _SEGMENT_LEAD,
                  on_chars=None) -> Iterator[tuple[int, int, int]]:
    """The segments of :func:`segments`, one at a time (no list of the whole text's words is built);
    ``on_chars(n)`` is called with the characters done, every :data:`PROGRESS_CHARS` or so."""
    if not text:
        return
    prev: list[int] | None = None
    reported = 0
    for m in pattern.finditer(text):
        if prev is not None:
            yield from _pieces(text, prev[0], prev[1], count, limit)
            if on_chars is not None and prev[1] - reported >= PROGRESS_CHARS:
                on_chars(prev[1] - reported)
                reported = prev[1]
            prev = [m.start(), m.end()]
        else:
            prev = [0, m.end()]
    if prev is None:
        yield 0, len(text), count(text)
    else:
        yield from _pieces(text, prev[0], len(text), count, limit)
    if on_chars is not None:
        on_chars(len(text) - reported)


def _pieces(text: str, s: int, e: int, count, limit: int) -> Iterator[tuple[int, int, int]]:
    """Segment ``text[s:e]`` as ``(start, end, tokens)``, cut between characters while over ``limit`` tokens."""
    n = count(text[s:e])
    while n > limit and e - s > 1:
        lo, hi = 1, e - s - 1  # longest prefix within the limit, by bisection on characters
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if count(text[s:s + mid]) <= limit:
                lo = mid
            else:
                hi = mid - 1
        cut = lo
        soft = [m.end() for m in _SOFT_CUT.finditer(text, s + lo // 2, s + lo)]
        if soft:
            cut = soft[-1] - s
        yield s, s + cut, count(text[s:s + cut])
        s += cut
        n = count(text[s:e])
    yield s, e, n


def _segment_arrays(text: str, count, limit: int, pattern: re.Pattern, on_chars=None) -> tuple[array, array]:
    """``(starts, tokens)`` of the segments of ``text`` as compact arrays (a segment ends where the next starts)."""
    starts, tokens = array("q"), array("l")
    for s, _, n in iter_segments(text, count, limit, pattern, on_chars):
        starts.append(s)
        tokens.append(n)
    return starts, tokens


def make_text_units(doc: Document, tokenize, detokenize, size: int, overlap: int,
                    tail_share: float = TAIL_SHARE, on_chars=None,
                    counts: TokenCounts | None = None) -> tuple[list[TextUnit], int]:
    """Split one document into text units cut between words (see the module doc).

    Memory is a few bytes per word of the document (segment arrays) plus its units' text.

    Args:
        tokenize: ``str -> list[int]`` (the model's tokenizer, no BOS).
        detokenize: ``list[int] -> str`` (unused: units are slices of the text; kept for callers).
        size, overlap: tokens per unit and of overlap between neighbours.
        tail_share: see :data:`TAIL_SHARE`.
        on_chars: ``n -> None``, called with the characters segmented so far (progress), or None.
        counts: the pieces' token counts (:class:`TokenCounts` of ``tokenize``), shared by the documents of an
            ingest; None = this document's own.

    Returns:
        ``(units, n_tokens_of_document)``. ``units[i].text`` is
        ``doc.text[char_start:char_end]``; ``tok_start``/``tok_end`` are sums of
        segment token counts (equal to the document's token positions for
        tokenizers that never join across whitespace, such as GPT-2-style BPE).

    Raises:
        UserError: ``size < 1`` or ``overlap`` not in ``[0, size)``.
    """
    _check_sizes(size, overlap)
    count = counts if counts is not None else TokenCounts(tokenize, limit=1 << 62)
    limit = max(1, size - overlap)
    if len(doc.text) <= TOKENIZE_BLOCK:
        n_doc = len(tokenize(doc.text))
        # Segment the way the tokenizer joins whitespace: the convention whose counts add up to the
        # document's own token count (exact for GPT-2-style BPE with leading spaces).
        starts, counts = _segment_arrays(doc.text, count, limit, _SEGMENT_LEAD, on_chars)
        if sum(counts) != n_doc:
            alt = _segment_arrays(doc.text, count, limit, _SEGMENT_TRAIL)
            if abs(sum(alt[1]) - n_doc) < abs(sum(counts) - n_doc):
                starts, counts = alt
            del alt
    else:  # no list of the whole document's tokens: the convention is chosen on its head
        cut = doc.text.rfind(" ", 0, HEAD_CHARS)
        head = doc.text[:cut if cut > 0 else HEAD_CHARS]
        n_head = len(tokenize(head))
        off = [abs(sum(n for _, _, n in iter_segments(head, count, limit, p)) - n_head)
               for p in (_SEGMENT_LEAD, _SEGMENT_TRAIL)]
        pattern = _SEGMENT_TRAIL if off[1] < off[0] else _SEGMENT_LEAD
        starts, counts = _segment_arrays(doc.text, count, limit, pattern, on_chars)
        n_doc = sum(counts)
    units = []
    tok = at = 0  # token position of segment ``at``, the current window's first: windows only move forward
    for i, (a, b) in enumerate(pack(counts, size, overlap, tail_share)):
        tok += sum(counts[at:a])
        at = a
        cs, ce = starts[a], starts[b] if b < len(starts) else len(doc.text)
        text = doc.text[cs:ce]
        s, e = tok, tok + sum(counts[a:b])
        cid = hashlib.sha256(f"{doc.doc_id}:{s}:{e}:{text}".encode()).hexdigest()[:16]
        units.append(TextUnit(cid, doc.doc_id, i, s, e, text, cs, ce))
    return units, n_doc

