"""Documents and text units cut at word boundaries (paper sec. 3.1.1).

Documents are the ``.txt`` and ``.md`` files of a folder, read recursively in
sorted order. Files are decoded as UTF-8, or as UTF-16/UTF-32 when they start
with that encoding's byte-order mark; a file with a NUL byte anywhere (binary,
or UTF-16 without a byte-order mark) or that is not valid in its encoding is
skipped with one warning line, as are unreadable sub-folders and symbolic links
to files that do not exist. A first line that is the file's own name (as in
the podcast transcripts, whose files begin with their episode's file name) is
metadata: it becomes the document's ``title`` and is not part of its text.

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
before it, which may then exceed ``chunk_size`` by up to that many tokens
(issue 12: the podcast files of ~640 tokens otherwise become a 600-token unit
plus a unit of ~40 new tokens; measured in
``benchmarks/results/ingest_tail_merge.md``).

Ingest is incremental: a document whose bytes did not change keeps its text
units; removed documents are removed with everything that only they supported.
"""

from __future__ import annotations

import codecs
import hashlib
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import UserError
from .store import Store

log = logging.getLogger("slmgraph")

SUFFIXES = (".txt", ".md")

#: A trailing text unit adding fewer new tokens than this share of the chunk
#: size is merged into the unit before it (issue 12; 0.25 of 600 = 150 tokens,
#: measured on the podcast sample in benchmarks/results/ingest_tail_merge.md).
TAIL_SHARE = 0.25

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


def _walk(root: Path, warnings: list[str]):
    """Files under ``root``, following symbolic links to folders (each real folder once), skipping hidden ones.

    A folder that cannot be listed, and a symbolic link named ``*.txt``/``*.md``
    whose target does not exist, add one line each to ``warnings``.
    """
    seen: set[str] = set()

    def onerror(exc: OSError) -> None:
        warnings.append(f"skipped folder {exc.filename}: cannot read it ({exc.strerror or exc})")

    for dirpath, dirnames, filenames in os.walk(root, followlinks=True, onerror=onerror):
        real = os.path.realpath(dirpath)
        if real in seen:
            dirnames[:] = []
            continue
        seen.add(real)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for d in dirnames:
            p = Path(dirpath) / d
            if p.is_symlink() and not p.exists():
                warnings.append(f"skipped {p}: a symbolic link to {os.readlink(p)}, which does not exist")
        for f in filenames:
            p = Path(dirpath) / f
            if f.startswith("."):
                continue
            if p.is_file():
                yield p
            elif p.is_symlink() and not p.exists() and p.suffix.lower() in SUFFIXES:
                warnings.append(f"skipped {p}: a symbolic link to {os.readlink(p)}, which does not exist")


def decode(data: bytes, name: str) -> tuple[str | None, str | None]:
    """Decode a file's bytes: UTF-32/UTF-16/UTF-8 by byte-order mark, else UTF-8.

    Returns:
        ``(text, None)`` or ``(None, reason)`` where ``reason`` is the warning
        (binary: a NUL byte anywhere in the file; not valid in its encoding),
        with an ``iconv -f ... -t UTF-8`` remedy that converts the file in place (through a
        temporary file next to it, ``NAME.utf8``, which the next run does not read: no .txt/.md suffix).
    """
    enc = next((e for bom, e in _BOMS if data.startswith(bom)), None)
    tmp = Path(name).with_name(Path(name).name + ".utf8")  # next to the file, never in the working directory
    conv = f"convert it in place with  iconv -f {{src}} -t UTF-8 '{name}' > '{tmp}' && mv '{tmp}' '{name}'"
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
        return None, (f"not UTF-8 text (byte {exc.start}): {conv.format(src='WINDOWS-1252')}, naming its real "
                      "encoding after -f")
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


def read_documents(input_path: str | Path) -> tuple[list[Document], list[str]]:
    """Read the documents under ``input_path`` (a folder, read recursively, or one file).

    Returns:
        ``(documents, warnings)``: documents in sorted path order (duplicates by
        content kept once), and one warning line per skipped file or folder.

    Raises:
        UserError: the path does not exist, or holds no readable ``.txt``/``.md`` text.
    """
    if not str(input_path).strip():
        raise UserError("the input path is empty: pass a folder of .txt/.md files")
    root = Path(input_path).expanduser()
    warnings: list[str] = []
    if not root.exists():
        if root.is_symlink():
            raise UserError(f"input {root} is a symbolic link to {os.readlink(root)}, which does not exist")
        raise UserError(f"input {root} does not exist: pass a folder of .txt/.md files")
    if root.is_file():
        files, base = [root], root.parent
    else:
        base = root
        files = sorted(p for p in _walk(root, warnings) if p.suffix.lower() in SUFFIXES)
    docs: list[Document] = []
    seen: dict[str, str] = {}
    for p in files:
        rel = str(p.relative_to(base))
        try:
            data = p.read_bytes()
        except OSError as exc:
            warnings.append(f"skipped {p}: cannot read it ({exc.strerror})")
            continue
        text, why = decode(data, str(p))
        if text is None:
            warnings.append(f"skipped {p}: {why}")
            continue
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        title, text = split_title(text, rel)
        if not text.strip():
            warnings.append(f"skipped {p}: empty" + (" (only its title line)" if title else ""))
            continue
        doc_id = hashlib.sha256(data).hexdigest()[:16]
        if doc_id in seen:
            warnings.append(f"skipped {p}: same content as {seen[doc_id]}")
            continue
        seen[doc_id] = rel
        docs.append(Document(doc_id, rel, text, title or Path(rel).stem))
    if not docs:
        why = f" ({warnings[0]}{'; and %d more skipped' % (len(warnings) - 1) if len(warnings) > 1 else ''})" \
            if warnings else ""
        if root.is_file():
            raise UserError(f"input {root} has no readable text{why}: pass a UTF-8 .txt or .md file")
        raise UserError(f"no readable .txt or .md files under {root}{why}: point at a folder of text documents")
    return docs, warnings


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
    spans = [[m.start(), m.end()] for m in pattern.finditer(text)]
    if not spans:
        return [(0, len(text), count(text))] if text else []
    spans[0][0] = 0
    spans[-1][1] = len(text)
    out: list[tuple[int, int, int]] = []
    for s, e in spans:
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
            out.append((s, s + cut, count(text[s:s + cut])))
            s += cut
            n = count(text[s:e])
        out.append((s, e, n))
    return out


def make_text_units(doc: Document, tokenize, detokenize, size: int, overlap: int,
                    tail_share: float = TAIL_SHARE) -> tuple[list[TextUnit], int]:
    """Split one document into text units cut between words (see the module doc).

    Args:
        tokenize: ``str -> list[int]`` (the model's tokenizer, no BOS).
        detokenize: ``list[int] -> str`` (unused: units are slices of the text; kept for callers).
        size, overlap: tokens per unit and of overlap between neighbours.
        tail_share: see :data:`TAIL_SHARE`.

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
            n = cache[piece] = len(tokenize(piece))
        return n

    n_doc = len(tokenize(doc.text))
    # Segment the way the tokenizer joins whitespace: the convention whose counts add up to the
    # document's own token count (exact for GPT-2-style BPE with leading spaces).
    segs = segments(doc.text, count, max(1, size - overlap))
    if sum(n for _, _, n in segs) != n_doc:
        alt = segments(doc.text, count, max(1, size - overlap), _SEGMENT_TRAIL)
        if abs(sum(n for _, _, n in alt) - n_doc) < abs(sum(n for _, _, n in segs) - n_doc):
            segs = alt
    cum = [0]
    for _, _, n in segs:
        cum.append(cum[-1] + n)
    units = []
    for i, (a, b) in enumerate(pack([n for _, _, n in segs], size, overlap, tail_share)):
        cs, ce = segs[a][0], segs[b - 1][1]
        text = doc.text[cs:ce]
        s, e = cum[a], cum[b]
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


def next_unit_no(store: Store) -> int:
    """The citation number the next new text unit gets: past every number ever given in this index
    (meta ``next_unit_no``, kept when text units are removed, so a number never names another unit)."""
    top = store.con.execute("SELECT coalesce(max(unit_no), 0) FROM text_units").fetchone()[0]
    return max(int(top) + 1, int(store.get_meta("next_unit_no") or 1))


def ingest(store: Store, docs: list[Document], tokenize, detokenize, size: int, overlap: int) -> IngestResult:
    """Bring ``documents`` and ``text_units`` in line with ``docs``, in one transaction.

    Unchanged text units are kept (so their extractions are kept); text units
    of removed or changed documents are deleted with their extraction records,
    mentions and claims. New text units get the next index-wide citation numbers
    (``unit_no``) in the order of ``docs`` (sorted paths) and position: a number is
    given once, when its text unit is first ingested, so adding a file never renumbers
    the text units already cited in answers (:func:`next_unit_no`). When anything
    changes, meta ``complete`` is set to 0 in the same transaction; when nothing
    does, nothing is written.

    Returns:
        dict with counts: ``documents``, ``text_units``, ``added_units``,
        ``removed_units``, ``removed_documents``, ``tokens`` (of the documents),
        ``unit_tokens`` (summed over text units, overlaps counted again).
    """
    wanted_docs = {d.doc_id: d for d in docs}
    units: list[TextUnit] = []
    doc_tokens: dict[str, int] = {}
    for d in docs:
        u, n = make_text_units(d, tokenize, detokenize, size, overlap)
        units.extend(u)
        doc_tokens[d.doc_id] = n
    wanted_units = {u.chunk_id: u for u in units}
    con = store.con
    have_units = {r[0] for r in con.execute("SELECT chunk_id FROM text_units").fetchall()}
    have_docs = {r[0] for r in con.execute("SELECT doc_id FROM documents").fetchall()}
    gone_units = sorted(have_units - set(wanted_units))
    new_units = [u for u in units if u.chunk_id not in have_units]
    gone_docs = sorted(have_docs - set(wanted_docs))
    changed_docs = [d for d in docs if d.doc_id in have_docs]
    if changed_docs:
        old = {r[0]: tuple(r[1:]) for r in con.execute(
            "SELECT doc_id, path, title, n_chars, n_tokens FROM documents").fetchall()}
        changed_docs = [d for d in changed_docs
                        if old.get(d.doc_id) != (d.path, d.title, len(d.text), doc_tokens[d.doc_id])]
    if not (gone_units or gone_docs or new_units or changed_docs or any(d.doc_id not in have_docs for d in docs)):
        # Nothing to write: a no-op re-run leaves the tables (and the file) as they are.
        return IngestResult(documents=len(docs), text_units=len(units), added_units=0, removed_units=0,
                            removed_documents=0, tokens=sum(doc_tokens.values()),
                            unit_tokens=sum(u.n_tokens for u in units))
    with store.transaction():
        store.set_meta("complete", "0")  # with the change itself: a crash after it leaves the index marked unfinished
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
        for d in docs:
            if d.doc_id not in have_docs:
                con.execute("INSERT INTO documents (doc_id, path, n_chars, n_tokens, added_at, title) "
                            "VALUES (?, ?, ?, ?, current_timestamp, ?)",
                            [d.doc_id, d.path, len(d.text), doc_tokens[d.doc_id], d.title])
        for d in changed_docs:  # same bytes, moved or re-titled (or re-tokenized)
            con.execute("UPDATE documents SET path = ?, title = ?, n_chars = ?, n_tokens = ? WHERE doc_id = ?",
                        [d.path, d.title, len(d.text), doc_tokens[d.doc_id], d.doc_id])
        if new_units:
            first = next_unit_no(store)
            con.executemany("INSERT INTO text_units (chunk_id, doc_id, ord, tok_start, tok_end, n_tokens, text, "
                            "char_start, char_end, unit_no) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            [[u.chunk_id, u.doc_id, u.ord, u.tok_start, u.tok_end, u.n_tokens, u.text,
                              u.char_start, u.char_end, first + i] for i, u in enumerate(new_units)])
            store.set_meta("next_unit_no", str(first + len(new_units)))
    return IngestResult(documents=len(docs), text_units=len(units), added_units=len(new_units),
                        removed_units=len(gone_units), removed_documents=len(gone_docs),
                        tokens=sum(doc_tokens.values()), unit_tokens=sum(u.n_tokens for u in units))
