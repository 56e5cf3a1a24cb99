"""The index embedder's forward pass on ONNX Runtime, exported here from the shipped weights.

sentence-transformers runs all-MiniLM-L6-v2 on torch; ONNX Runtime runs the same BERT encoder faster on a
CPU (docs/decisions.md: embedder on ONNX Runtime). The encoder of a loaded ``SentenceTransformer``
(its first module's ``auto_model``) is exported once with ``torch.onnx.export`` to a cache folder
(:func:`onnx_cache_dir`), keyed on a hash of the model's weights file, so nothing is downloaded and a
changed model gets a new graph. Tokenization stays sentence-transformers' own (``model.preprocess``), and
mean pooling over the attention mask and L2 normalisation are done in NumPy, the folder's Pooling and
Normalize modules; the vectors match torch's to float32 rounding (``tests/test_embed_onnx.py``).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

#: Names of the exported graph's inputs, in ``BertModel.forward`` order.
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def onnx_cache_dir() -> Path:
    """Folder of exported graphs: ``$SLMGRAPH_CACHE`` or ``$XDG_CACHE_HOME/slmgraph`` (default ``~/.cache/slmgraph``),
    then ``onnx``."""
    root = os.environ.get("SLMGRAPH_CACHE") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "slmgraph"
    return Path(root) / "onnx"


def weights_digest(model_dir: Path) -> str:
    """16 hex digits of sha256 over the model folder's weight and config files (names and bytes)."""
    h = hashlib.sha256()
    for name in ("config.json", "model.safetensors", "pytorch_model.bin"):
        p = Path(model_dir) / name
        if p.is_file():
            h.update(name.encode())
            with open(p, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
    return h.hexdigest()[:16]


def export_onnx(st_model, path: Path) -> Path:
    """Export the encoder of the sentence-transformers model ``st_model`` to the ONNX file ``path``
    (inputs :data:`INPUTS`, int64 of shape ``(batch, seq)``; output ``last_hidden_state`` of shape
    ``(batch, seq, hidden)``, float32), written to a temporary name and renamed, so a reader never sees a
    half-written file. Returns ``path``."""
    import torch

    encoder = st_model[0].auto_model.eval()

    class Hidden(torch.nn.Module):
        """The encoder's last hidden state from keyword inputs (positional order differs across versions)."""

        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    dummy = tuple(torch.ones((2, 8), dtype=torch.long) for _ in INPUTS)
    axes = {k: {0: "batch", 1: "seq"} for k in (*INPUTS, "last_hidden_state")}
    import warnings

    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(Hidden(encoder), dummy, str(tmp), input_names=list(INPUTS),
                          output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=17, dynamo=False)
    os.replace(tmp, path)
    return path


def onnx_available() -> bool:
    """True when ``onnxruntime`` and ``onnx`` (which the exporter needs) are importable."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnx"))


class OnnxRunner:
    """The forward pass of a sentence-transformers BERT model on ONNX Runtime.

    Args:
        st_model: the loaded ``SentenceTransformer`` (its tokenizer and, for the export, its encoder).
        model_dir: the model's folder (the cache key).
        threads: ONNX Runtime intra-op threads; None = its default (all cores).
        onnx_path: an exported graph to use instead of the cached one.
    """

    def __init__(self, st_model, model_dir: Path, threads: int | None = None, onnx_path: Path | None = None):
        import onnxruntime as ort

        self.st = st_model
        path = Path(onnx_path) if onnx_path else onnx_cache_dir() / f"{Path(model_dir).parent.name}-{weights_digest(model_dir)}.onnx"
        if not path.is_file():
            export_onnx(st_model, path)
        opts = ort.SessionOptions()
        if threads:
            opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        self.session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        self.path = path
        self.inputs = [i.name for i in self.session.get_inputs()]

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        """L2-normalised mean-pooled vectors, shape ``(len(texts), hidden)``, float32, in the given order;
        texts are batched longest first (by characters, as sentence-transformers does), so each batch of
        ``batch_size`` pads to about its own length."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.zeros((len(texts), 0), dtype=np.float32)
        for s in range(0, len(order), batch_size):
            idx = order[s:s + batch_size]
            feats = self.st.preprocess([texts[i] for i in idx])
            feed = {k: feats[k].numpy().astype(np.int64) for k in self.inputs if k in feats}
            if "token_type_ids" in self.inputs and "token_type_ids" not in feed:
                feed["token_type_ids"] = np.zeros_like(feed["input_ids"])
            h = self.session.run(None, feed)[0]
            mask = feed["attention_mask"].astype(np.float32)[:, :, None]
            pooled = (h * mask).sum(1) / np.maximum(mask.sum(1), 1e-9)
            if out.shape[1] == 0:
                out = np.zeros((len(texts), pooled.shape[1]), dtype=np.float32)
            out[idx] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return out

