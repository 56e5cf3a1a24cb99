"""Documents and token-exact text units (paper sec. 3.1.1).

Documents are the ``.txt`` and ``.md`` files of a folder, read recursively in
sorted order. Each document is split into text units of ``chunk_size`` tokens
of the model's own tokenizer, overlapping by ``chunk_overlap`` tokens (GraphRAG
default 600/100). Ingest is incremental: a document whose bytes did not change
keeps its text units; removed documents are removed with everything that only
they supported.
"""

from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from .errors import UserError
from .store import Store

log = logging.getLogger("slmgraph")

SUFFIXES = (".txt", ".md")


@dataclass
class Document:
    """One input document: ``doc_id`` (sha256 of its bytes, 16 hex), path relative to the input, text."""

    doc_id: str
    path: str
    text: str


@dataclass
class TextUnit:
    """One chunk: token span ``[tok_start, tok_end)`` of its document and the text of those tokens."""

    chunk_id: str
    doc_id: str
    ord: int
    tok_start: int
    tok_end: int
    text: str

    @property
    def n_tokens(self) -> int:
        """Tokens in the unit."""
        return self.tok_end - self.tok_start


def _walk(root: Path):
    """Files under ``root``, following symbolic links to folders (each real folder once), skipping hidden ones."""
    seen: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in seen:
            dirnames[:] = []
            continue
        seen.add(real)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for f in filenames:
            p = Path(dirpath) / f
            if not f.startswith(".") and p.is_file():
                yield p


def read_documents(input_path: str | Path) -> tuple[list[Document], list[str]]:
    """Read the documents under ``input_path`` (a folder, read recursively, or one file).

    Returns:
        ``(documents, warnings)``: documents in sorted path order (duplicates by
        content kept once), and one warning line per skipped file.

    Raises:
        UserError: the path does not exist, or holds no readable ``.txt``/``.md`` text.
    """
    if not str(input_path).strip():
        raise UserError("the input path is empty: pass a folder of .txt/.md files")
    root = Path(input_path).expanduser()
    if not root.exists():
        raise UserError(f"input {root} does not exist: pass a folder of .txt/.md files")
    if root.is_file():
        files, base = [root], root.parent
    else:
        base = root
        files = sorted(p for p in _walk(root) if p.suffix.lower() in SUFFIXES)
    warnings: list[str] = []
    docs: list[Document] = []
    seen: dict[str, str] = {}
    for p in files:
        rel = str(p.relative_to(base))
        try:
            data = p.read_bytes()
        except OSError as exc:
            warnings.append(f"skipped {p}: cannot read it ({exc.strerror})")
            continue
        if b"\x00" in data[:8192]:
            warnings.append(f"skipped {p}: binary file, not text")
            continue
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            warnings.append(f"skipped {p}: not UTF-8 text (convert it with iconv -t UTF-8)")
            continue
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        if not text.strip():
            warnings.append(f"skipped {p}: empty")
            continue
        doc_id = hashlib.sha256(data).hexdigest()[:16]
        if doc_id in seen:
            warnings.append(f"skipped {p}: same content as {seen[doc_id]}")
            continue
        seen[doc_id] = rel
        docs.append(Document(doc_id, rel, text))
    if not docs:
        why = f" ({warnings[0]}{'; and %d more skipped' % (len(warnings) - 1) if len(warnings) > 1 else ''})" \
            if warnings else ""
        if root.is_file():
            raise UserError(f"input {root} has no readable text{why}: pass a UTF-8 .txt or .md file")
        raise UserError(f"no readable .txt or .md files under {root}{why}: point at a folder of text documents")
    return docs, warnings


def chunk_tokens(tokens: list[int], size: int, overlap: int) -> list[tuple[int, int]]:
    """Token windows ``[(start, end), ...]`` of ``size`` overlapping by ``overlap``.

    Every token is in at least one window; the last window ends at
    ``len(tokens)``; no window is empty. An empty token list gives no windows.

    Raises:
        UserError: ``size < 1`` or ``overlap`` not in ``[0, size)``.
    """
    if size < 1:
        raise UserError(f"chunk size {size} is not positive: pass --chunk-size of e.g. 600")
    if overlap < 0 or overlap >= size:
        raise UserError(f"chunk overlap {overlap} must be >= 0 and < chunk size {size}: pass e.g. --chunk-overlap 100")
    n = len(tokens)
    if n == 0:
        return []
    step = size - overlap
    spans = []
    start = 0
    while True:
        end = min(start + size, n)
        spans.append((start, end))
        if end >= n:
            break
        start += step
    return spans


def make_text_units(doc: Document, tokenize, detokenize, size: int, overlap: int) -> tuple[list[TextUnit], int]:
    """Split one document into text units with the model's tokenizer.

    Args:
        tokenize: ``str -> list[int]`` (the model's tokenizer, no BOS).
        detokenize: ``list[int] -> str``.

    Returns:
        ``(units, n_tokens_of_document)``.
    """
    tokens = tokenize(doc.text)
    units = []
    for i, (s, e) in enumerate(chunk_tokens(tokens, size, overlap)):
        text = detokenize(tokens[s:e])
        cid = hashlib.sha256(f"{doc.doc_id}:{s}:{e}:{text}".encode()).hexdigest()[:16]
        units.append(TextUnit(cid, doc.doc_id, i, s, e, text))
    return units, len(tokens)


def ingest(store: Store, docs: list[Document], tokenize, detokenize, size: int, overlap: int) -> dict:
    """Bring ``documents`` and ``text_units`` in line with ``docs``, in one transaction.

    Unchanged text units are kept (so their extractions are kept); text units
    of removed or changed documents are deleted with their extraction records,
    mentions and claims.

    Returns:
        dict with counts: ``documents``, ``text_units``, ``added_units``,
        ``removed_units``, ``removed_documents``, ``tokens``.
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
    with store.transaction():
        if gone_units:
            con.execute("CREATE OR REPLACE TEMP TABLE _gone(chunk_id VARCHAR)")
            con.executemany("INSERT INTO _gone VALUES (?)", [[c] for c in gone_units])
            for table in ("text_units", "extractions", "entity_mentions", "relationship_mentions", "claims",
                          "claim_extractions"):
                con.execute(f"DELETE FROM {table} WHERE chunk_id IN (SELECT chunk_id FROM _gone)")
            con.execute("DROP TABLE _gone")
            con.execute("DELETE FROM embeddings WHERE kind = 'text_unit' AND item_id NOT IN "
                        "(SELECT chunk_id FROM text_units)")
        if gone_docs:
            con.executemany("DELETE FROM documents WHERE doc_id = ?", [[d] for d in gone_docs])
        for d in docs:
            if d.doc_id not in have_docs:
                con.execute("INSERT INTO documents VALUES (?, ?, ?, ?, current_timestamp)",
                            [d.doc_id, d.path, len(d.text), doc_tokens[d.doc_id]])
            else:
                con.execute("UPDATE documents SET path = ? WHERE doc_id = ?", [d.path, d.doc_id])
        if new_units:
            con.executemany("INSERT INTO text_units VALUES (?, ?, ?, ?, ?, ?, ?)",
                            [[u.chunk_id, u.doc_id, u.ord, u.tok_start, u.tok_end, u.n_tokens, u.text]
                             for u in new_units])
    return {
        "documents": len(docs), "text_units": len(units), "added_units": len(new_units),
        "removed_units": len(gone_units), "removed_documents": len(gone_docs),
        "tokens": sum(doc_tokens.values()),
    }
