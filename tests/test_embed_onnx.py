"""The index embedder on ONNX Runtime (slmgraph.indexing.stages.embed_onnx): the same vectors as sentence-transformers on torch,
from a graph exported locally from the shipped weights and cached by their hash."""

import numpy as np
import pytest

TEXTS = ["What are the main themes of this story?", "  Who is Alex Mercer?  ", "x", "Ünïcode — naïve café 東京",
         "Kevin Scott (PERSON): host of Behind the Tech, a podcast about technology leaders.",
         "Kevin Scott, Bill Gates and Behind the Tech: " + "a long report text " * 200]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    monkeypatch.setenv("SLMGRAPH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_onnx_vectors_match_torch_and_the_graph_is_cached(cache):
    from slmgraph.indexing.stages.embed import Embedder

    torch_emb = Embedder(backend="torch", threads=2)
    onnx_emb = Embedder(backend="onnx", threads=2)
    assert torch_emb.runner is None and onnx_emb.runner is not None
    graphs = list((cache / "onnx").glob("*.onnx"))
    assert len(graphs) == 1 and graphs[0] == onnx_emb.runner.path
    ours, theirs = onnx_emb.encode(TEXTS), torch_emb.encode(TEXTS)
    assert ours.shape == theirs.shape == (len(TEXTS), 384) and ours.dtype == np.float32
    assert np.abs(ours - theirs).max() < 1e-5
    # Batches pad to their longest text and the order is kept: a text's vector does not depend on its neighbours.
    onnx_emb.batch_size = 2
    assert np.abs(onnx_emb.encode(TEXTS[::-1])[::-1] - ours).max() < 1e-5
    assert onnx_emb.encode([]).shape == (0, 384)
    # The export is reused, not redone: a second embedder reads the cached file.
    mtime = graphs[0].stat().st_mtime_ns
    again = Embedder(backend="onnx")
    assert again.runner.path == graphs[0] and graphs[0].stat().st_mtime_ns == mtime


def test_auto_backend_uses_onnx_when_installed(cache):
    from slmgraph.indexing.stages.embed import Embedder

    assert Embedder(backend="auto").runner is not None
