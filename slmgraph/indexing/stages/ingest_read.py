"""Reading the input (paper sec. 3.1.1): the ``.txt``/``.md`` files of a folder found, decoded and titled
(:func:`read_input`), and the files and folders that exist but cannot be read named (:class:`Unreadable`).

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
document whose file no longer exists is removed. A symbolic link whose target is
outside the input folder is not followed unless asked (``follow_links``), and one
that leads back to a folder holding it (a loop) never is; each gets one warning
and, like an unreadable file, leaves what the index holds under it kept. A file name that is not valid
UTF-8 is stored and shown with each such byte written ``\\xNN``
(:func:`path_text`). A document whose text is no prose (:func:`slmgraph.text.shape.not_prose`: a dumped table,
a log, encoded data) is indexed with one warning line naming it and what to do; its text units with no
sentence structure or almost no words give no entity (:func:`slmgraph.text.shape.junk_passage`).
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import os
import re
import shlex
import stat
from dataclasses import dataclass, field
from pathlib import Path

from slmgraph.errors import UserError
from slmgraph.text.shape import not_prose

SUFFIXES = (".txt", ".md")

#: Byte-order marks, longest first (the UTF-32-LE mark begins with UTF-16-LE's).
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))

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
    (dangling or a loop), which makes the index partial only when the index held documents under it;
    ``skipped``: a file that was read but gives no text now (it no longer decodes, or it is empty), named by its
    ``skipped`` warning and again, when the index held its document, by :attr:`line`; ``unfollowed``: a symbolic
    link that exists but was not followed (a loop, or outside the input folder without ``follow_links``)."""

    path: str
    cause: str
    folder: bool = False
    warned: bool = True
    link: bool = False
    skipped: bool = False
    unfollowed: bool = False

    @property
    def line(self) -> str:
        """The warning line (without ``warning:``)."""
        if self.skipped:
            return f"skipped {self.path} ({self.cause}): its document in the index is kept"
        what = "folder " if self.folder else ""
        if self.unfollowed:
            return f"not reading {what}{self.path}: {self.cause}; what the index holds for it, if anything, is kept"
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


def _inside(path: str, folder: str) -> bool:
    """True when the real path ``path`` is ``folder`` or under it (both from :func:`os.path.realpath`)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


#: The remedy named for a symbolic link that leads outside the input folder.
FOLLOW_REMEDY = "pass --follow-links to read it, or move or copy what it leads to into the input folder"


def _link_cause(p: Path, target: str, chain: list[str], top: str, follow_links: bool) -> str | None:
    """Why the symbolic link ``p`` (real target ``target``) under a folder whose walk passed the real folders
    ``chain`` (the input's real folder ``top`` first) is not followed, one clause; None to follow it.

    A link to a folder the walk is inside, or to a folder holding one, is a loop (following it reads that
    folder again, and with it everything beside it); a link whose target is outside ``top`` is read only
    when ``follow_links``.
    """
    if any(_inside(c, target) for c in chain):
        return f"a symbolic link loop: it leads to {path_text(target)}, which holds the folder it is in"
    if not follow_links and not _inside(target, top):
        return f"a symbolic link to {path_text(target)}, outside the input folder: {FOLLOW_REMEDY}"
    return None


def _walk(root: Path, found: list[tuple[Path, str, bool, bool, bool]], follow_links: bool = False):
    """Files under ``root``, following symbolic links to folders (each real folder once), skipping hidden ones.

    A folder that cannot be listed and a dangling or looping symbolic link are appended to ``found`` as
    ``(path, cause, folder, warned, unfollowed)``; ``warned`` is False for a link not named ``*.txt``/``*.md``;
    ``unfollowed`` is True for a link that exists but is not followed (below). A symbolic
    link (to a file or a folder) whose real target is outside ``root``'s real folder is not followed unless
    ``follow_links``, and a link to a folder the walk is inside (or one holding it) never is: each is
    appended to ``found`` (:func:`_link_cause`) and warned once, without reading anything under it.
    """
    seen: set[str] = set()
    top = os.path.realpath(root)
    chains: dict[str, list[str]] = {}  # walked folder -> the real folders from the input's down to it

    def onerror(exc: OSError) -> None:
        found.append((Path(exc.filename), exc.strerror or str(exc), True, True, False))

    for dirpath, dirnames, filenames in os.walk(root, followlinks=True, onerror=onerror):
        real = os.path.realpath(dirpath)
        if real in seen:
            dirnames[:] = []
            continue
        seen.add(real)
        chain = chains.pop(dirpath, [top]) + ([real] if real != top else [])
        kept = []
        for d in sorted(d for d in dirnames if not d.startswith(".")):
            p = Path(dirpath) / d
            if p.is_symlink():
                cause = _link_cause(p, os.path.realpath(p), chain, top, follow_links)
                if cause is not None:
                    found.append((p, cause, True, True, True))
                    continue
            chains[os.path.join(dirpath, d)] = chain
            kept.append(d)
        dirnames[:] = kept
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
                found.append((p, _cause(exc, p), False, p.suffix.lower() in SUFFIXES, False))
                continue
            if stat.S_ISREG(mode):
                if p.is_symlink() and p.suffix.lower() in SUFFIXES:
                    cause = _link_cause(p, os.path.realpath(p), [], top, follow_links)
                    if cause is not None:
                        found.append((p, cause, False, True, True))
                        continue
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


def read_documents(input_path: str | Path, follow_links: bool = False) -> tuple[list[Document], list[str]]:
    """``(documents, warnings)`` of :func:`read_input` (same arguments and errors)."""
    r = read_input(input_path, follow_links)
    return r.documents, r.warnings


def read_input(input_path: str | Path, follow_links: bool = False) -> Reading:
    """Read the documents under ``input_path`` (a folder, read recursively, or one file).

    A symbolic link under the folder whose target is outside it is read only when ``follow_links``; a link
    to a folder holding the one it is in (a loop) never is: each is named by one warning (:func:`_walk`).

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
    found: list[tuple[Path, str, bool, bool, bool]] = []
    if root.is_file():
        files, base = [root], root.parent
    else:
        base = root
        files = sorted(p for p in _walk(root, found, follow_links) if p.suffix.lower() in SUFFIXES)

    def lost(p: Path, cause: str, folder: bool = False, warned: bool = True, unfollowed: bool = False) -> None:
        try:
            rel = path_text(p.relative_to(base))
        except ValueError:
            rel = path_text(p)
        u = Unreadable(rel, cause, folder, warned, link=unfollowed or (p.is_symlink() and not os.path.exists(p)),
                       unfollowed=unfollowed)
        unreadable.append(u)
        if warned:
            warnings.append(u.line)

    for p, cause, folder, warned, unfollowed in found:
        lost(p, cause, folder, warned, unfollowed)
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
            # A file that exists but no longer decodes keeps what the index holds for it, as an unreadable one.
            unreadable.append(Unreadable(rel, why.split(": convert it")[0].split("; ")[0], warned=False,
                                         skipped=True))
            continue
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        title, text = split_title(text, rel)
        if not text.strip():
            warnings.append(f"skipped {path_text(p)}: empty" + (" (only its title line)" if title else ""))
            # An emptied file still exists, and only a document whose file no longer exists is removed.
            unreadable.append(Unreadable(rel, "empty", warned=False, skipped=True))
            continue
        doc_id = hashlib.sha256(data).hexdigest()[:16]
        if doc_id in seen:
            warnings.append(f"skipped {path_text(p)}: same content as {seen[doc_id]}")
            continue
        seen[doc_id] = rel
        docs.append(Document(doc_id, rel, text, title or Path(rel).stem))
        shape = not_prose(text)
        if shape is not None:  # indexed all the same: the user decides whether it belongs in the corpus
            warnings.append(f"{path_text(p)} reads as no prose: {shape}; it is indexed, but its runs of text with no "
                            "sentence end give no entity, basic and lazy search pass over its text units that are no "
                            "prose, and no answer quotes a run of text that long: if it is not "
                            "a document (a table, a log, encoded data), move it out of the input folder and run "
                            "'slmgraph index' again")
    if not docs:
        why = f" ({warnings[0]}{'; and %d more skipped' % (len(warnings) - 1) if len(warnings) > 1 else ''})" \
            if warnings else ""
        if root.is_file():
            raise UserError(f"input {shown_root} has no readable text{why}: pass a UTF-8 .txt or .md file")
        raise UserError(f"no readable .txt or .md files under {shown_root}{why}: point at a folder of text documents")
    return Reading(docs, warnings, unreadable)
