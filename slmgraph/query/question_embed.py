"""The question embedder of the query engines: the bundled all-MiniLM-L6-v2 run in NumPy, without torch.

A query embeds a question and a few probe questions, a dozen short texts; importing torch and
sentence-transformers for that cost a new ``slmgraph query`` process several seconds before its own work
(docs/decisions.md: question embedder in NumPy). The index stage keeps :class:`slmgraph.indexing.stages.embed.Embedder`
(sentence-transformers on torch) for its thousands of texts; this module computes the same vectors for the
same model folder: the model's own tokenizer (the ``tokenizers`` library reading its ``tokenizer.json``,
as sentence-transformers' fast tokenizer does, cut at its ``max_seq_length``), the BERT encoder
(Devlin et al. 2019, sec. 3; Hugging Face's ``BertModel`` layer for layer: post-LayerNorm blocks, exact
erf GELU) from the weights in ``model.safetensors``, mean pooling over the attention mask and L2
normalisation, the three modules of the folder's ``modules.json``. ``tests/test_query_embed.py`` checks
that its vectors match sentence-transformers'.

A model folder of another shape (not a BERT encoder with mean pooling and normalisation) is not handled
here: :func:`question_embedder` returns :class:`slmgraph.indexing.stages.embed.Embedder` for it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from slmgraph.indexing.stages.embed import default_embedder_dir

#: Texts per forward pass (each pass pads to its longest text).
BATCH = 16


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, elementwise: Abramowitz & Stegun 1964, formula 7.1.26 (1.5e-7 absolute, plus the
    rounding of ``x``'s dtype)."""
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return np.sign(x) * (1.0 - poly * np.exp(-a * a))


def _supported(path: Path) -> bool:
    """True when ``path`` is a sentence-transformers folder of a BERT encoder, mean pooling and Normalize."""
    try:
        modules = [m["type"].rsplit(".", 1)[-1] for m in json.loads((path / "modules.json").read_text())]
        pooling = json.loads((path / "1_Pooling" / "config.json").read_text())
        config = json.loads((path / "config.json").read_text())
    except (OSError, ValueError, KeyError, TypeError):
        return False
    mean_only = pooling.get("pooling_mode_mean_tokens") and not any(
        v for k, v in pooling.items() if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens")
    return (modules == ["Transformer", "Pooling", "Normalize"] and bool(mean_only)
            and config.get("model_type") == "bert" and config.get("hidden_act") == "gelu"
            and config.get("position_embedding_type", "absolute") == "absolute"
            and (path / "model.safetensors").is_file() and (path / "tokenizer.json").is_file())


class QueryEmbedder:
    """all-MiniLM-L6-v2 (or another BERT sentence-transformers folder of the same shape) in NumPy.

    Args:
        model_dir: the model folder; None = the bundled all-MiniLM-L6-v2.

    Attributes:
        name / dim / max_seq_length: as :class:`slmgraph.indexing.stages.embed.Embedder`'s.

    Raises:
        ValueError: the folder is not of the supported shape (see :func:`question_embedder`).
    """

    def __init__(self, model_dir: str | Path | None = None):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        path = Path(model_dir) if model_dir else default_embedder_dir()
        if not _supported(path):
            raise ValueError(f"{path} is not a BERT sentence-transformers folder with mean pooling")
        cfg = json.loads((path / "config.json").read_text())
        st_cfg = json.loads((path / "sentence_bert_config.json").read_text()) \
            if (path / "sentence_bert_config.json").is_file() else {}
        self.name = path.parent.name if path.name == "model" else path.name
        self.max_seq_length = int(st_cfg.get("max_seq_length") or cfg["max_position_embeddings"])
        self.dim = int(cfg["hidden_size"])
        self.heads = int(cfg["num_attention_heads"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.lower = bool(st_cfg.get("do_lower_case", False))
        self.tok = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(max_length=self.max_seq_length)
        w = load_file(str(path / "model.safetensors"))
        pre = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""
        self.w = {k[len(pre):]: v for k, v in w.items() if k.startswith(pre)}
        self.layers = int(cfg["num_hidden_layers"])

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + self.eps) * self.w[f"{name}.weight"] + self.w[f"{name}.bias"]

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Last hidden states ``(batch, seq, dim)`` of the encoder for padded ``ids`` and their ``mask``."""
        w = self.w
        n, seq = ids.shape
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:seq]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._norm(x, "embeddings.LayerNorm")
        hd = self.dim // self.heads
        bias = np.where(mask[:, None, None, :] > 0, 0.0, np.finfo(np.float32).min).astype(np.float32)
        for i in range(self.layers):
            p = f"encoder.layer.{i}"

            def heads(t):
                return t.reshape(n, seq, self.heads, hd).transpose(0, 2, 1, 3)
            q = heads(self._dense(x, f"{p}.attention.self.query"))
            k = heads(self._dense(x, f"{p}.attention.self.key"))
            v = heads(self._dense(x, f"{p}.attention.self.value"))
            s = q @ k.transpose(0, 1, 3, 2) / np.float32(math.sqrt(hd)) + bias
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            ctx = (s @ v).transpose(0, 2, 1, 3).reshape(n, seq, self.dim)
            x = self._norm(self._dense(ctx, f"{p}.attention.output.dense") + x, f"{p}.attention.output.LayerNorm")
            h = self._dense(x, f"{p}.intermediate.dense")
            h = (h * 0.5 * (1.0 + erf(h / np.float32(math.sqrt(2.0))))).astype(np.float32)
            x = self._norm(self._dense(h, f"{p}.output.dense") + x, f"{p}.output.LayerNorm")
        return x

    def encode(self, texts: list[str], progress: bool = False) -> np.ndarray:
        """L2-normalised vectors, shape ``(len(texts), dim)``, float32 (``progress`` is ignored)."""
        from threadpoolctl import threadpool_limits

        # One BLAS thread: a question's matrices are small, and OpenBLAS's spinning threads cost more than
        # they give, many times more when other processes hold the cores.
        with threadpool_limits(1, user_api="blas"):
            return self._encode(texts)

    def _encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        enc_all = self.tok.encode_batch([t.strip().lower() if self.lower else t.strip() for t in texts])
        order = sorted(range(len(texts)), key=lambda i: len(enc_all[i].ids))  # batches pad to about their own length
        for s in range(0, len(order), BATCH):
            idx = order[s:s + BATCH]
            enc = [enc_all[i] for i in idx]
            seq = max(len(e.ids) for e in enc)
            ids = np.zeros((len(enc), seq), dtype=np.int64)
            mask = np.zeros((len(enc), seq), dtype=np.float32)
            for i, e in enumerate(enc):
                ids[i, :len(e.ids)] = e.ids
                mask[i, :len(e.ids)] = 1.0
            h = self._forward(ids, mask)
            pooled = (h * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
            out[idx] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return out


def question_embedder(model_dir: str | Path | None = None, batch_size: int = 32, threads: int | None = None):
    """The embedder queries use: :class:`QueryEmbedder` for a folder it supports (the bundled one), else
    :class:`slmgraph.indexing.stages.embed.Embedder` (sentence-transformers) with ``batch_size`` and ``threads``."""
    path = Path(model_dir) if model_dir else default_embedder_dir()
    if _supported(path):
        return QueryEmbedder(path)
    from slmgraph.indexing.stages.embed import Embedder

    return Embedder(path, batch_size=batch_size, threads=threads)
