"""The index embedder's precision (setting ``embed_precision``, slmgraph.indexing.stages.embed): parsed from
settings and the settings file, honoured by the index run (the embed-ahead thread and the embed stage share
its embedder), recorded in meta and the embed stage's figures; fp32 gives today's vectors exactly, bf16
vectors within rounding of them."""

import json

import numpy as np
import pytest
from conftest import FakeEmbedder, FakeModel

import slmgraph.indexing.stages.embed as embed
from slmgraph.config import file as sf
from slmgraph.config.settings import EmbedPrecision, Settings
from slmgraph.errors import UserError
from slmgraph.indexing.pipeline import run_index
from slmgraph.store.db import Store

TEXTS = ["What are the main themes of this story?", "x", "Ünïcode — naïve café 東京",
         "Kevin Scott (PERSON): host of Behind the Tech, a podcast about technology leaders.",
         "Kevin Scott, Bill Gates and Behind the Tech: " + "a long report text about software " * 60,
         "Alex Mercer went to the base at night and met Taylor Cruz at the gate."]


def test_the_setting_is_parsed_from_settings_and_the_file(tmp_path):
    assert Settings().embed_precision == "auto"
    assert Settings(embed_precision=" BF16 ").embed_precision is EmbedPrecision.BF16
    with pytest.raises(UserError, match="embed_precision 'fp16' is not one of auto, fp32, bf16"):
        Settings(embed_precision="fp16")
    cfg = tmp_path / "slmgraph.toml"
    cfg.write_text('embed_precision = "fp32"\n')
    s, src = sf.resolve(Settings(), sf.load(cfg), cfg, set())
    assert s.embed_precision is EmbedPrecision.FP32 and src["embed_precision"] == f"file {cfg}"
    # Where the embedder runs, not what the index holds: an index built at one precision is not rebuilt at the other.
    assert "embed_precision" not in Settings().index_fingerprint()


def test_auto_follows_the_cpus_native_bf16_and_a_bad_value_is_one_line(monkeypatch):
    monkeypatch.setattr(embed, "native_bf16", lambda: True)
    assert embed.resolve_precision("auto") == "bf16"
    monkeypatch.setattr(embed, "native_bf16", lambda: False)
    assert embed.resolve_precision(EmbedPrecision.AUTO) == "fp32"
    assert embed.resolve_precision("bf16") == "bf16" and embed.resolve_precision("fp32") == "fp32"
    with pytest.raises(UserError, match="embed_precision 'int4'"):
        embed.resolve_precision("int4")


class PrecisionEmbedder(FakeEmbedder):
    """The conftest fake built as :class:`slmgraph.indexing.stages.embed.Embedder` is, keeping what it was asked for."""

    made: list = []

    def __init__(self, *a, precision="fp32", **k):
        self.precision = embed.resolve_precision(precision)
        PrecisionEmbedder.made.append(self.precision)


@pytest.mark.parametrize("setting,native,want", [("fp32", True, "fp32"), ("bf16", False, "bf16"),
                                                 ("auto", True, "bf16"), ("auto", False, "fp32")])
def test_the_index_run_builds_its_embedder_at_the_setting_and_records_the_precision(tmp_path, corpus, monkeypatch,
                                                                                    setting, native, want):
    monkeypatch.setattr(embed, "Embedder", PrecisionEmbedder)
    monkeypatch.setattr(embed, "native_bf16", lambda: native)
    PrecisionEmbedder.made = []
    notes = []
    s = Settings(extractor="nlp", reports="none", n_threads=2, embed_precision=setting)
    out = run_index(corpus, tmp_path / "i.duckdb", s, model=FakeModel(), progress=False, say=notes.append)
    assert PrecisionEmbedder.made == [want]  # one embedder, shared by the thread ahead and the embed stage
    assert out["embed"]["precision"] == want and out["embed"]["embedded"] > 0
    assert any(n.startswith(f"embed: {out['embed']['embedded']} vectors computed in {want} ") for n in notes), notes
    st = Store(tmp_path / "i.duckdb", read_only=True)
    assert st.get_meta("embed_precision") == want
    (note,) = st.con.execute("SELECT note FROM stage_runs WHERE stage = 'embed'").fetchone()
    st.close()
    assert json.loads(note)["precision"] == want


@pytest.fixture(scope="module")
def real():
    """The bundled all-MiniLM-L6-v2 at fp32 and at bf16, and the texts' vectors straight from
    sentence-transformers (what the index stored before the setting)."""
    fp32 = embed.Embedder(threads=2, precision="fp32")
    bf16 = embed.Embedder(threads=2, precision="bf16")
    plain = fp32.model.encode(TEXTS, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
    return fp32, bf16, plain


def test_fp32_gives_todays_vectors_exactly_and_bf16_within_rounding(real):
    fp32, bf16, plain = real
    assert fp32.precision == "fp32" and bf16.precision == "bf16"
    a, b = fp32.encode(TEXTS), bf16.encode(TEXTS)
    assert np.array_equal(a, plain)
    assert b.shape == a.shape and b.dtype == np.float32
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    assert not np.array_equal(a, b)  # bf16 really ran
    assert (a * b).sum(1).min() >= 0.9999


def test_a_bf16_vector_depends_on_its_batch_only_within_rounding(real):
    _, bf16, _ = real
    together = bf16.encode(TEXTS)
    alone = np.concatenate([bf16.encode([t]) for t in TEXTS])
    bf16.batch_size = 2
    try:
        pairs = bf16.encode(TEXTS[::-1])[::-1]
    finally:
        bf16.batch_size = 32
    # Padding changes how a bf16 product is blocked; the bound is the one to fp32 (benchmarks/results/embed_bf16.md).
    for other in (alone, pairs):
        assert (together * other).sum(1).min() >= 0.9999


@pytest.mark.parametrize("amx,avx512_bf16,onednn,want", [
    (True, False, True, True),     # Sapphire Rapids: AMX tiles
    (False, True, True, True),     # Zen 4, Cooper Lake: AVX512-BF16
    (False, False, True, False),   # plain AVX512: oneDNN would emulate bf16
    (True, True, False, False),    # a torch build without oneDNN's bf16 kernels
])
def test_native_bf16_is_amx_or_avx512_bf16_with_onednn_kernels(monkeypatch, amx, avx512_bf16, onednn, want):
    import torch

    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx, raising=False)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: avx512_bf16, raising=False)
    monkeypatch.setattr(torch.ops.mkldnn, "_is_mkldnn_bf16_supported", lambda: onednn, raising=False)
    assert embed.native_bf16() is want
    assert embed.resolve_precision("auto") == ("bf16" if want else "fp32")


def test_each_thread_encodes_with_the_embedders_thread_count_unless_it_asks_for_its_own(real):
    import threading

    import torch

    fp32 = real[0]
    seen = []
    inner = fp32.model.encode

    def spy(*a, **k):
        seen.append((threading.current_thread().name, torch.get_num_threads()))
        return inner(*a, **k)

    def ahead():
        # The embed-ahead thread's share of the cores, set the way it sets it; then torch's count left at 1
        # the way any other code on another thread may leave it.
        with embed.encode_threads(1):
            fp32.encode(TEXTS[:2])
        torch.set_num_threads(1)

    def stage():
        # A thread that never computed before takes torch's last count when it first does.
        fp32.encode(TEXTS[:2])

    def run(fn, name):
        t = threading.Thread(target=fn, name=name)
        t.start()
        t.join()

    fp32.model.encode = spy
    try:
        run(ahead, "ahead")
        run(stage, "stage")
        run(ahead, "ahead")
        fp32.encode(TEXTS[:2])
    finally:
        del fp32.model.encode
    assert seen == [("ahead", 1), ("stage", 2), ("ahead", 1), ("MainThread", 2)]
