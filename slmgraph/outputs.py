"""Output paths of the commands that write files (``init``, ``export``, ``picture``, ``prompt-tune``,
``bench``): one rule for all of them, stated here and in the README ("Output files").

* **A missing folder is created with its parents** (like ``mkdir -p``): :func:`output_folder` for a
  folder the command writes into, :func:`output_file` for a file (its folder). A folder that cannot be
  created, a file where a folder is wanted or a folder where a file is wanted is a one-line
  :class:`slmgraph.errors.UserError` naming the path and the remedy.
* **Existing files.** Files the command generates from the index -- ``export``'s tables and
  ``graph.graphml``, ``picture``'s HTML and PNG, ``bench``'s ``bench.json`` and ``bench.png`` -- are
  overwritten: running the command again refreshes them. Files you are meant to edit -- ``init``'s
  ``slmgraph.toml`` and ``prompts/``, ``prompt-tune``'s prompt files -- are never overwritten without
  ``--force``: the command refuses and names them. No command deletes any other file in the folder.
"""

from __future__ import annotations

from pathlib import Path

from slmgraph.errors import UserError


def output_folder(path: str | Path, flag: str = "--out") -> Path:
    """The folder ``path`` (``~`` expanded), created with its parents when missing.

    Raises:
        UserError: ``path`` is empty, is a file, or cannot be created (e.g. a parent is a file, no permission).
    """
    if not str(path).strip():
        raise UserError(f"{flag} is empty: pass a folder to write into")
    out = Path(path).expanduser()
    if out.exists() and not out.is_dir():
        raise UserError(f"{flag} {out} is a file: pass a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create {flag} folder {out} ({exc.strerror}): pick another folder") from None
    return out


def output_file(path: str | Path, flag: str = "--out", example: str = "out.txt") -> Path:
    """The file path ``path`` (``~`` expanded) with its folder created (parents too) when missing; an existing
    file there is left for the caller to overwrite.

    Raises:
        UserError: ``path`` is empty or a folder, or its folder cannot be created.
    """
    if not str(path).strip():
        raise UserError(f"{flag} is empty: pass a file name such as {example}")
    out = Path(path).expanduser()
    if out.is_dir():
        raise UserError(f"{flag} {out} is a folder: pass a file name such as {example}")
    output_folder(out.parent, f"the folder of {flag}")
    return out
