"""Documents and text units cut at word boundaries (paper sec. 3.1.1).

Documents are the ``.txt`` and ``.md`` files of a folder, read recursively in
sorted order. Files are decoded as UTF-8, or as UTF-16/UTF-32 when they start
with that encoding's byte-order mark; a file with a NUL byte anywhere (binary,
or UTF-16 without a byte-order mark) or that is not valid in its encoding is
skipped with one warning line that names the encoding most likely to read it
(:func:`likely_encodings`). A first line that is the file's own name (as in
the podcast transcripts, whose files begin with their episode's file name) is
metadata: it becomes the document's ``title`` and is not part of its text.

A file or folder that exists but cannot be read (permission denied, a
dangling symbolic link, a symbolic link loop, an I/O error) is *unreadable*,
not removed: it gets one warning line naming its cause, and what the index
holds for it is kept (:class:`Unreadable`, :func:`ingest`'s ``keep``). Only a
document whose file no longer exists is removed. A file name that is not valid
UTF-8 is stored and shown with each such byte written ``\\xNN``
(:func:`path_text`).

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

Ingest is incremental: a document whose bytes did not change keeps its text
units (not cut again under the same :func:`chunking_key`); removed documents are
removed with everything that only they supported. Documents are cut and committed
one at a time, in memory of a few bytes per word (:func:`make_text_units`).
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import logging
import os
import re
import shlex
import stat
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from tqdm import tqdm

from slmgraph.errors import UserError
from slmgraph.store.db import Store

log = logging.getLogger("slmgraph")

SUFFIXES = (".txt", ".md")

#: A trailing text unit adding fewer new tokens than this share of the chunk
#: size is merged into the unit before it, so a file just over a unit leaves no
#: sliver (docs/decisions.md: tail units merged).
TAIL_SHARE = 0.25

#: Version of the cutting rules, part of :func:`chunking_key`: raise it when a change cuts documents differently.
CHUNKER_VERSION = 1
#: Characters of a document between two progress updates of its segmenting.
PROGRESS_CHARS = 1 << 20
#: A document longer than this (characters) is never tokenized whole: its token count is the sum over its
#: segments, whose whitespace convention is the one that counts its first :data:`HEAD_CHARS` exactly.
TOKENIZE_BLOCK = 1 << 20
HEAD_CHARS = 1 << 16

#: Byte-order marks, longest first (the UTF-32-LE mark begins with UTF-16-LE's).
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))

#: A segment: leading whitespace plus one whitespace-free run (tokenizers that attach a space to the
#: word after it: GPT-2-style BPE, SentencePiece), or the run plus its trailing whitespace.
_SEGMENT_LEAD = re.compile(r"\s*\S+")
_SEGMENT_TRAIL = re.compile(r"\S+\s*")
#: Where a run without spaces is best cut: after a sentence or clause mark.
_SOFT_CUT = re.compile(r"[。！？!?．.、，,;；:：)）」』\]]")
#: A first line naming a file: ``name.txt`` or ``name.md``, then whitespace or the end.
_TITLE_LINE = re.compile(r"[ \t]*([^\n]{1,250}?\.(?:txt|md))(?=[ \t\n]|$)", re.IGNORECASE)


@dataclass
class Document:
    """One input document: ``doc_id`` (sha256 of its bytes, 16 hex), path relative to the input, text,
    and ``title`` (the file name its first line gave, else the file's stem)."""

    doc_id: str
    path: str
    text: str
    title: str | None = None


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


def path_text(name: str | os.PathLike) -> str:
    """A file name as slmgraph stores and shows it (str): unchanged when it is valid UTF-8; else each byte
    that is not (held by Python as a lone surrogate, PEP 383) written as the four characters ``\\xNN``, as
    in ``bad\\xffname.txt``. Lossless except for a name that itself holds a backslash, ``x`` and two hex digits."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


@dataclass
class Unreadable:
    """A file or folder under the input that exists but cannot be read: ``path`` relative to the input
    (:func:`path_text` form), ``cause`` (one clause: ``Permission denied``, ``a dangling symbolic link: its target X
    does not exist``, ``a symbolic link loop``, an I/O error), ``folder``: a folder that cannot be listed,
    ``warned``: False for a dangling link or loop not named ``*.txt``/``*.md`` (it may have been a linked
    folder), named only when the index held documents under it; ``link``: a symbolic link that leads nowhere
    (dangling or a loop), which makes the index partial only when the index held documents under it."""

    path: str
    cause: str
    folder: bool = False
    warned: bool = True
    link: bool = False

    @property
    def line(self) -> str:
        """The warning line (without ``warning:``)."""
        what = "folder " if self.folder else ""
        if self.link:
            return f"cannot read {what}{self.path}: {self.cause}; what the index holds for it, if anything, is kept"
        return f"cannot read {what}{self.path}: {self.cause}; what the index holds for it is kept"


def _cause(exc: OSError, p: Path | None = None) -> str:
    """Why ``p`` cannot be read, one clause (the OS's own words for an error that is not a link's)."""
    if exc.errno == errno.ELOOP:
        return "a symbolic link loop"
    if p is not None and exc.errno == errno.ENOENT and p.is_symlink():
        return f"a dangling symbolic link: its target {path_text(os.readlink(p))} does not exist"
    return exc.strerror or str(exc)


def _walk(root: Path, found: list[tuple[Path, str, bool, bool]]):
    """Files under ``root``, following symbolic links to folders (each real folder once), skipping hidden ones.

    A folder that cannot be listed and a dangling or looping symbolic link are appended to ``found`` as
    ``(path, cause, folder, warned)``; ``warned`` is False for a link not named ``*.txt``/``*.md``.
    """
    seen: set[str] = set()

    def onerror(exc: OSError) -> None:
        found.append((Path(exc.filename), exc.strerror or str(exc), True, True))

    for dirpath, dirnames, filenames in os.walk(root, followlinks=True, onerror=onerror):
        real = os.path.realpath(dirpath)
        if real in seen:
            dirnames[:] = []
            continue
        seen.add(real)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for f in filenames:
            p = Path(dirpath) / f
            if f.startswith("."):
                continue
            try:
                mode = p.stat().st_mode
            except OSError as exc:
                if exc.errno == errno.ENOENT and not p.is_symlink():
                    continue  # gone since the folder was listed: removed
                # A link that leads nowhere may have been a linked folder: quiet unless it names a text file.
                found.append((p, _cause(exc, p), False, p.suffix.lower() in SUFFIXES))
                continue
            if stat.S_ISREG(mode):
                yield p


#: Python codec names whose iconv name is not the upper-case name with ``-`` for ``_`` (glibc's ``iconv -l``).
_ICONV_NAMES = {"latin_1": "ISO-8859-1", "shift_jis": "SHIFT_JIS", "mac_roman": "MACINTOSH",
                "mac_cyrillic": "MAC-CYRILLIC", "mac_latin2": "MAC-CENTRALEUROPE", "mac_iceland": "MAC-IS",
                "shift_jis_2004": "SHIFT_JISX0213", "shift_jisx0213": "SHIFT_JISX0213",
                "euc_jis_2004": "EUC-JISX0213", "ptcp154": "PT154", "kz1048": "RK1048", "ascii": "ASCII"}


def iconv_name(codec: str) -> str:
    """The ``iconv -f`` name of a Python codec name (``gb18030`` -> ``GB18030``, ``cp1252`` -> ``WINDOWS-1252``)."""
    if codec in _ICONV_NAMES:
        return _ICONV_NAMES[codec]
    name = codec.upper().replace("_", "-")
    name = re.sub(r"^ISO(8859|2022)-", r"ISO-\1-", name)
    name = re.sub(r"^(UTF-(?:16|32))-([BL]E)$", r"\1\2", name)
    return re.sub(r"^CP(125\d)$", r"WINDOWS-\1", name)


#: Under this many bytes, letter frequencies are too few to rank encodings, so Western text is named first.
SHORT_TEXT_BYTES = 4096


def _western(data: bytes) -> bool:
    """True when short ``data`` reads as Western European text in Windows-1252: it decodes, holds no control
    character, and under 30 % of its letters are non-ASCII (Cyrillic or Greek bytes read as Windows-1252
    give mostly accented letters)."""
    if len(data) >= SHORT_TEXT_BYTES:
        return False
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        return False
    if any(ord(c) < 32 and c not in "\t\n\r\f" for c in text):
        return False
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(1 for c in letters if ord(c) > 127) < 0.3 * len(letters)


def likely_encodings(data: bytes, k: int = 3) -> list[str]:
    """The iconv names of the encodings that decode ``data`` to the most plausible text, best first, at most
    ``k`` (charset-normalizer's ranking: least mess, then the best fit of a language's letter frequencies);
    ``["WINDOWS-1252"]`` when it finds none."""
    from charset_normalizer import from_bytes

    out: list[str] = []
    if _western(data):
        out.append("WINDOWS-1252")
    for match in from_bytes(data):
        name = iconv_name(match.encoding)
        if match.encoding not in ("utf_8", "utf_8_sig") and name not in out:
            out.append(name)
        if len(out) == k:
            break
    return out or ["WINDOWS-1252"]


def decode(data: bytes, name: str) -> tuple[str | None, str | None]:
    """Decode a file's bytes: UTF-32/UTF-16/UTF-8 by byte-order mark, else UTF-8.

    Returns:
        ``(text, None)`` or ``(None, reason)`` where ``reason`` is the warning
        (binary: a NUL byte anywhere in the file; not valid in its encoding),
        with an ``iconv -f ... -t UTF-8`` remedy that converts the file in place (through a
        temporary file next to it, ``NAME.utf8``, which the next run does not read: no .txt/.md suffix);
        for a file that is not UTF-8, the encoding named is the one that reads it as the most plausible
        text (:func:`likely_encodings`), and the next likely ones are listed.
    """
    enc = next((e for bom, e in _BOMS if data.startswith(bom)), None)
    tmp = Path(name).with_name(Path(name).name + ".utf8")  # next to the file, never in the working directory
    q, qt = shlex.quote(name), shlex.quote(str(tmp))
    conv = f"convert it in place with  iconv -f {{src}} -t UTF-8 {q} > {qt} && mv {qt} {q}"
    if enc is None and b"\x00" in data:
        zeros_odd, zeros_even = data[1::2].count(0), data[0::2].count(0)
        half = max(1, len(data) // 2)
        if zeros_odd > 0.3 * half and zeros_even < 0.05 * half:
            return None, f"looks like UTF-16 without a byte-order mark: {conv.format(src='UTF-16LE')}"
        if zeros_even > 0.3 * half and zeros_odd < 0.05 * half:
            return None, f"looks like UTF-16 without a byte-order mark: {conv.format(src='UTF-16BE')}"
        return None, f"binary file, not text (a NUL byte at byte {data.index(0)})"
    try:
        text = data.decode(enc or "utf-8")
    except UnicodeDecodeError as exc:
        if enc and enc != "utf-8-sig":
            return None, f"not valid {enc.upper()} despite its byte-order mark (byte {exc.start})"
        best, *rest = likely_encodings(data)
        others = f" (the next likely: {', '.join(rest)})" if rest else ""
        return None, (f"not UTF-8 text (byte {exc.start}); it reads best as {best}: {conv.format(src=best)}, "
                      f"naming its real encoding after -f if it is another{others}")
    if "\x00" in text:
        return None, f"binary file, not text (a NUL character at character {text.index(chr(0))})"
    return text, None


def split_title(text: str, path: str) -> tuple[str | None, str]:
    """Split off a first line that is the file's own name (metadata, not text).

    The line is a name ending in ``.txt``/``.md`` whose stem is the file's stem
    or a prefix of it (``EP-03.txt`` heading ``EP-03-part10.txt``), followed by
    whitespace. Returns ``(title or None, rest of the text)``.
    """
    m = _TITLE_LINE.match(text)
    if not m:
        return None, text
    name = Path(m.group(1).strip())
    own = Path(path)
    if not (name.name.lower() == own.name.lower() or
            (len(name.stem) >= 3 and own.stem.lower().startswith(name.stem.lower()))):
        return None, text
    return name.stem, text[m.end():].lstrip()


@dataclass
class Reading:
    """What :func:`read_input` found: ``documents`` (sorted by path), ``warnings`` (one line each, the
    unreadable ones included) and ``unreadable`` (:class:`Unreadable`, whose indexed documents are kept)."""

    documents: list[Document]
    warnings: list[str]
    unreadable: list[Unreadable] = field(default_factory=list)


def read_documents(input_path: str | Path) -> tuple[list[Document], list[str]]:
    """``(documents, warnings)`` of :func:`read_input` (same errors)."""
    r = read_input(input_path)
    return r.documents, r.warnings


def read_input(input_path: str | Path) -> Reading:
    """Read the documents under ``input_path`` (a folder, read recursively, or one file).

    Returns:
        a :class:`Reading`: documents in sorted path order (duplicates by content kept once,
        paths in :func:`path_text` form), one warning line per skipped file or folder, and the
        files and folders that exist but could not be read.

    Raises:
        UserError: the path does not exist, or holds no readable ``.txt``/``.md`` text.
    """
    if not str(input_path).strip():
        raise UserError("the input path is empty: pass a folder of .txt/.md files")
    root = Path(input_path).expanduser()
    warnings: list[str] = []
    unreadable: list[Unreadable] = []
    shown_root = path_text(root)
    if not root.exists():
        try:
            root.stat()
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UserError(f"input {shown_root} is a symbolic link loop: pass a folder of .txt/.md files"
                                ) from None
        if root.is_symlink():
            raise UserError(f"input {shown_root} is a symbolic link to {path_text(os.readlink(root))}, which does "
                            "not exist")
        raise UserError(f"input {shown_root} does not exist: pass a folder of .txt/.md files")
    found: list[tuple[Path, str, bool, bool]] = []
    if root.is_file():
        files, base = [root], root.parent
    else:
        base = root
        files = sorted(p for p in _walk(root, found) if p.suffix.lower() in SUFFIXES)

    def lost(p: Path, cause: str, folder: bool = False, warned: bool = True) -> None:
        try:
            rel = path_text(p.relative_to(base))
        except ValueError:
            rel = path_text(p)
        u = Unreadable(rel, cause, folder, warned, link=p.is_symlink() and not os.path.exists(p))
        unreadable.append(u)
        if warned:
            warnings.append(u.line)

    for p, cause, folder, warned in found:
        lost(p, cause, folder, warned)
    docs: list[Document] = []
    seen: dict[str, str] = {}
    for p in files:
        rel = path_text(p.relative_to(base))
        try:
            data = p.read_bytes()
        except OSError as exc:
            if exc.errno == errno.ENOENT and not p.is_symlink():
                continue  # removed since the folder was listed
            lost(p, _cause(exc, p))
            continue
        text, why = decode(data, path_text(p))
        if text is None:
            warnings.append(f"skipped {path_text(p)}: {why}")
            continue
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        title, text = split_title(text, rel)
        if not text.strip():
            warnings.append(f"skipped {path_text(p)}: empty" + (" (only its title line)" if title else ""))
            continue
        doc_id = hashlib.sha256(data).hexdigest()[:16]
        if doc_id in seen:
            warnings.append(f"skipped {path_text(p)}: same content as {seen[doc_id]}")
            continue
        seen[doc_id] = rel
        docs.append(Document(doc_id, rel, text, title or Path(rel).stem))
    if not docs:
        why = f" ({warnings[0]}{'; and %d more skipped' % (len(warnings) - 1) if len(warnings) > 1 else ''})" \
            if warnings else ""
        if root.is_file():
            raise UserError(f"input {shown_root} has no readable text{why}: pass a UTF-8 .txt or .md file")
        raise UserError(f"no readable .txt or .md files under {shown_root}{why}: point at a folder of text documents")
    return Reading(docs, warnings, unreadable)


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
                    tail_share: float = TAIL_SHARE, on_chars=None) -> tuple[list[TextUnit], int]:
    """Split one document into text units cut between words (see the module doc).

    Memory is a few bytes per word of the document (segment arrays) plus its units' text.

    Args:
        tokenize: ``str -> list[int]`` (the model's tokenizer, no BOS).
        detokenize: ``list[int] -> str`` (unused: units are slices of the text; kept for callers).
        size, overlap: tokens per unit and of overlap between neighbours.
        tail_share: see :data:`TAIL_SHARE`.
        on_chars: ``n -> None``, called with the characters segmented so far (progress), or None.

    Returns:
        ``(units, n_tokens_of_document)``. ``units[i].text`` is
        ``doc.text[char_start:char_end]``; ``tok_start``/``tok_end`` are sums of
        segment token counts (equal to the document's token positions for
        tokenizers that never join across whitespace, such as GPT-2-style BPE).

    Raises:
        UserError: ``size < 1`` or ``overlap`` not in ``[0, size)``.
    """
    _check_sizes(size, overlap)
    cache: dict[str, int] = {}

    def count(piece: str) -> int:
        n = cache.get(piece)
        if n is None:
            n = len(tokenize(piece))
            if len(piece) < 64:  # words repeat; long pieces (bisection prefixes) rarely do
                cache[piece] = n
        return n

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


@dataclass
class IngestResult:
    """What stage 1 did: ``documents`` read, ``text_units`` in the index after it, of which
    ``added_units`` new; ``removed_units`` / ``removed_documents`` gone with their documents;
    ``tokens`` of the documents and ``unit_tokens`` over the units (overlaps counted again),
    in the index model's tokens."""
    documents: int
    text_units: int
    added_units: int
    removed_units: int
    removed_documents: int
    tokens: int
    unit_tokens: int
    #: Paths of indexed documents kept because their file or folder could not be read (``keep``).
    kept: list[str] = field(default_factory=list)

    def summary(self, settings=None) -> list[str]:
        """The progress line ``index`` prints."""
        kept = f", {len(self.kept)} document{'s' if len(self.kept) > 1 else ''} kept unread" if self.kept else ""
        return [f"ingest: {self.documents} documents, {self.tokens} tokens, {self.text_units} text units "
                f"({self.added_units} new, {self.removed_units} removed{kept})"]


def kept_paths(paths, keep) -> list[str]:
    """The ``paths`` (document paths) that are one of ``keep``'s :class:`Unreadable` paths or under one."""
    tops = [u.path.rstrip("/") for u in keep]
    return [p for p in paths if any(t in (".", "") or p == t or p.startswith(t + "/") for t in tops)]


def next_unit_no(store: Store) -> int:
    """The citation number the next new text unit gets: past every number ever given in this index
    (meta ``next_unit_no``, kept when text units are removed, so a number never names another unit)."""
    top = store.con.execute("SELECT coalesce(max(unit_no), 0) FROM text_units").fetchone()[0]
    return max(int(top) + 1, int(store.get_meta("next_unit_no") or 1))


def chunking_key(model_fingerprint: str, size: int, overlap: int) -> str:
    """What a document's text units depend on besides its bytes: the tokenizer's model, the unit size and
    overlap, :data:`TAIL_SHARE` and this module's cutting rules (stored per document, ``documents.chunking``)."""
    return hashlib.sha256(repr((CHUNKER_VERSION, model_fingerprint, size, overlap, TAIL_SHARE)).encode()
                          ).hexdigest()[:16]


def ingest(store: Store, docs: list[Document], tokenize, detokenize, size: int, overlap: int,
           keep: list[Unreadable] = (), chunking: str | None = None, progress: bool = False) -> IngestResult:
    """Bring ``documents`` and ``text_units`` in line with ``docs``, one document at a time.

    Unchanged text units are kept (so their extractions are kept); a document
    whose bytes and ``chunking`` key (:func:`chunking_key`) are those it was indexed
    with keeps its text units without being cut again. An indexed document
    whose file or folder is in ``keep`` (it exists but could not be read, :class:`Unreadable`)
    is kept as it is, with its text units; text units
    of removed or changed documents are deleted with their extraction records,
    mentions and claims. New text units get the next index-wide citation numbers
    (``unit_no``) in the order of ``docs`` (sorted paths) and position: a number is
    given once, when its text unit is first ingested, so adding a file never renumbers
    the text units already cited in answers (:func:`next_unit_no`).

    Each new or changed document is committed in its own transaction (an interrupted
    ingest keeps the documents it finished), then the removals in one (the index run's
    store marks the index unfinished in the first, :class:`slmgraph.indexing.pipeline.RunStore`);
    when nothing changes, nothing is written. Memory: one document's text units at a time
    (:func:`make_text_units`). ``progress`` shows a bar over the characters to cut
    (after two seconds).

    Returns:
        an :class:`IngestResult`.
    """
    con = store.con
    old = {r[0]: tuple(r[1:]) for r in con.execute(
        "SELECT doc_id, path, title, n_chars, n_tokens, chunking FROM documents").fetchall()}
    old_units: dict[str, list[tuple[str, int]]] = {}
    for doc_id, chunk_id, n in con.execute("SELECT doc_id, chunk_id, n_tokens FROM text_units").fetchall():
        old_units.setdefault(doc_id, []).append((chunk_id, n))
    wanted_docs = {d.doc_id for d in docs}
    kept: list[str] = []
    kept_ids: set[str] = set()
    if keep:  # documents of files that exist but could not be read: not removed
        unread = {doc_id: row[0] for doc_id, row in old.items() if doc_id not in wanted_docs}
        kept = kept_paths(sorted(unread.values()), keep)
        kept_ids = {doc_id for doc_id, path in unread.items() if path in set(kept)}

    def reusable(d: Document) -> bool:
        o = old.get(d.doc_id)
        return bool(chunking) and o is not None and o[4] == chunking and o[2] == len(d.text) \
            and d.doc_id in old_units

    todo_chars = sum(len(d.text) for d in docs if not reusable(d))
    bar = tqdm(total=todo_chars, desc="ingest", unit="char", unit_scale=True, dynamic_ncols=True,
               disable=not progress or not todo_chars, delay=2.0)
    wanted_units: set[str] = set()
    tokens = unit_tokens = n_units = added = 0
    try:
        for d in docs:
            if reusable(d):
                ids = old_units[d.doc_id]
                n_doc = old[d.doc_id][3]
                wanted_units.update(c for c, _ in ids)
                tokens += n_doc
                unit_tokens += sum(n for _, n in ids)
                n_units += len(ids)
                if old[d.doc_id][:2] != (d.path, d.title):  # same bytes, moved or re-titled
                    with store.transaction():
                        con.execute("UPDATE documents SET path = ?, title = ? WHERE doc_id = ?",
                                    [d.path, d.title, d.doc_id])
                continue
            units, n_doc = make_text_units(d, tokenize, detokenize, size, overlap, on_chars=bar.update)
            have = {c for c, _ in old_units.get(d.doc_id, ())}
            new = [u for u in units if u.chunk_id not in have]
            wanted_units.update(u.chunk_id for u in units)
            tokens += n_doc
            unit_tokens += sum(u.n_tokens for u in units)
            n_units += len(units)
            row = (d.path, d.title, len(d.text), n_doc)
            o = old.get(d.doc_id)
            if o is not None and not new and o[:4] == row:
                if chunking and o[4] != chunking:  # the key alone (an index of an older version): no content
                    con.execute("UPDATE documents SET chunking = ? WHERE doc_id = ?", [chunking, d.doc_id])
                continue
            with store.transaction():
                if o is None:
                    con.execute("INSERT INTO documents (doc_id, path, n_chars, n_tokens, added_at, title, chunking) "
                                "VALUES (?, ?, ?, ?, current_timestamp, ?, ?)",
                                [d.doc_id, d.path, len(d.text), n_doc, d.title, chunking])
                else:  # same bytes, moved, re-titled or cut again
                    con.execute("UPDATE documents SET path = ?, title = ?, n_chars = ?, n_tokens = ?, chunking = ? "
                                "WHERE doc_id = ?", [d.path, d.title, len(d.text), n_doc, chunking, d.doc_id])
                if new:
                    first = next_unit_no(store)
                    con.executemany(
                        "INSERT INTO text_units (chunk_id, doc_id, ord, tok_start, tok_end, n_tokens, text, "
                        "char_start, char_end, unit_no) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [[u.chunk_id, u.doc_id, u.ord, u.tok_start, u.tok_end, u.n_tokens, u.text,
                          u.char_start, u.char_end, first + i] for i, u in enumerate(new)])
                    store.set_meta("next_unit_no", str(first + len(new)))
            added += len(new)
    finally:
        bar.close()
    gone_docs = sorted(set(old) - wanted_docs - kept_ids)
    gone_units = sorted(c for doc_id, ids in old_units.items() if doc_id not in kept_ids
                        for c, _ in ids if c not in wanted_units)
    if gone_units or gone_docs:
        with store.transaction():
            if gone_units:
                con.execute("CREATE OR REPLACE TEMP TABLE _gone(chunk_id VARCHAR)")
                con.executemany("INSERT INTO _gone VALUES (?)", [[c] for c in gone_units])
                for table in ("text_units", "extractions", "entity_mentions", "relationship_mentions", "claims",
                              "claim_extractions", "concept_mentions", "concept_links"):
                    con.execute(f"DELETE FROM {table} WHERE chunk_id IN (SELECT chunk_id FROM _gone)")
                con.execute("DROP TABLE _gone")
                # Their embeddings stay until the embed stage, which copies a vector to a new text unit
                # with the same text (an edited document's unchanged parts) and deletes the rest.
            if gone_docs:
                con.executemany("DELETE FROM documents WHERE doc_id = ?", [[d] for d in gone_docs])
    return IngestResult(documents=len(docs), text_units=n_units, added_units=added,
                        removed_units=len(gone_units), removed_documents=len(gone_docs),
                        tokens=tokens, unit_tokens=unit_tokens, kept=kept)
