"""ModelClient.choose: option scoring by token probability, cached and ledgered."""

from __future__ import annotations

import math

import pytest

from slmgraph.model.client import Choice, ModelClient
from slmgraph.store.db import Store

from conftest import FakeModel


def test_choice_probs_renormalise_and_handle_missing_mass():
    ch = Choice(options=["yes", "no"], logprobs=[math.log(0.2), math.log(0.6)])
    assert ch.probs == pytest.approx([0.25, 0.75])
    assert ch.best == 1
    # an option the model gives no mass (e.g. a token missing from the vocabulary)
    ch = Choice(options=["yes", "no"], logprobs=[float("-inf"), math.log(0.1)])
    assert ch.probs == pytest.approx([0.0, 1.0])
    # no mass anywhere: uniform, first option wins the tie
    ch = Choice(options=["a", "b", "c"], logprobs=[float("-inf")] * 3)
    assert ch.probs == pytest.approx([1 / 3] * 3)
    assert ch.best == 0


def test_choose_caches_and_ledgers(tmp_path):
    store = Store(tmp_path / "x.duckdb", create=True)
    model = FakeModel(choice_script=lambda s, u, o: [0.9, 0.1] if "help" in u else [0.1, 0.9])
    client = ModelClient(model, store, "run1")
    ch = client.choose("rate", "Question: q", "does this help?", ["yes", "no"])
    assert ch.best == 0 and not ch.from_cache
    again = client.choose("rate", "Question: q", "does this help?", ["yes", "no"])
    assert again.from_cache and again.probs == pytest.approx(ch.probs)
    assert len(model.calls) == 1
    other = client.choose("rate", "Question: q", "unrelated", ["yes", "no"])
    assert other.best == 1
    rows = store.con.execute("SELECT stage, completion_tokens, finish_reason FROM llm_calls").fetchall()
    assert rows == [("rate", 0, "choice"), ("rate", 0, "choice")]
    # a zero-probability option survives the cache round trip as no mass
    z = ModelClient(FakeModel(choice_script=lambda s, u, o: [0.0, 1.0]), store, "run2")
    z.choose("rate", "Q", "u", ["yes", "no"])
    hit = z.choose("rate", "Q", "u", ["yes", "no"])
    assert hit.from_cache and hit.probs == pytest.approx([0.0, 1.0])
    store.close()


def test_choose_rejects_a_single_option():
    client = ModelClient(FakeModel(), None, "r")
    with pytest.raises(ValueError):
        client.choose("rate", "s", "u", ["yes"])
