"""LlamaModel._pick: the grammar-constrained greedy token is the best admissible one, whether it is
found among the top logits one at a time or by filtering the whole vocabulary."""

import numpy as np

from slmgraph.model.backend import PICK_TOP_K, LlamaModel


class GrammarStub:
    """The adapter's grammar calls over a fixed set of admissible token ids; counts full filters."""

    def __init__(self, allowed: set[int]):
        self.allowed = allowed
        self.checks = 0
        self.filters = 0

    def admits(self, sampler, tok: int, logit: float) -> bool:
        self.checks += 1
        return tok in self.allowed and np.isfinite(logit)

    def mask(self, sampler, logits: np.ndarray) -> np.ndarray:
        self.filters += 1
        out = np.full_like(logits, -np.inf)
        ids = np.fromiter(self.allowed, dtype=np.int64)
        out[ids] = logits[ids]
        return out


def _model(allowed: set[int]) -> LlamaModel:
    m = LlamaModel.__new__(LlamaModel)  # no GGUF: only _pick and its adapter calls are exercised
    m._lc = GrammarStub(allowed)
    return m


def _reference(logits: np.ndarray, allowed: set[int]) -> int | None:
    masked = np.full_like(logits, -np.inf)
    ids = np.fromiter(allowed, dtype=np.int64)
    masked[ids] = logits[ids]
    best = int(np.argmax(masked))
    return best if np.isfinite(masked[best]) else None


def test_pick_equals_the_full_filter_on_random_logits_and_grammars():
    rng = np.random.default_rng(7)
    found_early = filtered = 0
    for trial in range(400):
        n = 500
        logits = rng.normal(size=n).astype(np.float32)
        if trial % 5 == 0:  # ties, as quantized logits give
            logits = np.round(logits, 1)
        if trial % 7 == 0:
            logits[rng.integers(n)] = -np.inf  # a banned token
        allowed = set(rng.choice(n, size=int(rng.integers(0, 60)), replace=False).tolist())
        m = _model(allowed)
        assert m._pick(logits, object()) == _reference(logits, allowed)
        found_early += m._lc.filters == 0
        filtered += m._lc.filters
    assert found_early > 50 and filtered > 50  # both paths were taken


def test_a_token_in_the_top_k_is_found_without_filtering_the_vocabulary():
    logits = np.arange(1000, dtype=np.float32)  # token 999 is the arg-max
    m = _model({999 - PICK_TOP_K + 2})
    assert m._pick(logits, object()) == 999 - PICK_TOP_K + 2
    assert m._lc.filters == 0 and m._lc.checks == PICK_TOP_K - 1
    m = _model({3})  # far down: one filter of the whole vocabulary
    assert m._pick(logits, object()) == 3 and m._lc.filters == 1
    m = _model(set())
    assert m._pick(logits, object()) is None
    assert _model(set())._pick(logits, None) == 999  # no grammar: the arg-max
