"""The question embedder (slmgraph.query.question_embed): sentence-transformers' vectors for the bundled model, without torch."""

import subprocess
import sys

import numpy as np
import pytest

from slmgraph.query.question_embed import QueryEmbedder, erf, question_embedder

TEXTS = ["What are the main themes of this story?", "  Who is Alex Mercer?  ", "x", "Ünïcode — naïve café 東京",
         "How do guests generally perceive the impact of privacy laws on technology development?",
         "Kevin Scott, Bill Gates and Behind the Tech: " + "a long report text " * 200]


def test_vectors_match_sentence_transformers():
    pytest.importorskip("sentence_transformers")
    from slmgraph.indexing.stages.embed import Embedder

    ours = QueryEmbedder().encode(TEXTS)
    theirs = Embedder().encode(TEXTS)
    assert ours.shape == theirs.shape == (len(TEXTS), 384) and ours.dtype == np.float32
    assert np.abs(ours - theirs).max() < 1e-5
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)
    # Batches pad to their longest text: a text's vector does not depend on its neighbours.
    assert np.abs(QueryEmbedder().encode(TEXTS[:1]) - ours[:1]).max() < 1e-6


def test_erf_matches_the_standard_library():
    import math

    x = np.linspace(-6, 6, 2001, dtype=np.float32)
    assert np.abs(erf(x) - np.array([math.erf(v) for v in x])).max() < 5e-7  # 1.5e-7 plus float32 rounding
    assert np.abs(erf(x.astype(np.float64)) - np.array([math.erf(v) for v in x])).max() < 1.5e-7


def test_a_query_embeds_without_importing_torch():
    code = ("import sys; from slmgraph.query.question_embed import question_embedder; e = question_embedder(); "
            "v = e.encode(['Who is Alex Mercer?']); "
            "print(type(e).__name__, v.shape, [m for m in ('torch', 'sentence_transformers', 'transformers') "
            "if m in sys.modules])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["QueryEmbedder", "(1,", "384)", "[]"]


def test_another_model_folder_falls_back_to_sentence_transformers(tmp_path, monkeypatch):
    import slmgraph.indexing.stages.embed as embed

    made = []
    monkeypatch.setattr(embed, "Embedder", lambda path, **kw: made.append((path, kw)) or "st")
    (tmp_path / "modules.json").write_text('[{"type": "sentence_transformers.models.Transformer"}]')
    assert question_embedder(tmp_path, threads=2) == "st" and made == [(tmp_path, {"batch_size": 32, "threads": 2})]
    with pytest.raises(ValueError, match="not a BERT"):
        QueryEmbedder(tmp_path)
