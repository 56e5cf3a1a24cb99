"""slmgraph.model.threads: a model stage reserves its threads once, before the worker plan."""

from __future__ import annotations

from conftest import FakeModel

import slmgraph.model.backend as backend
from slmgraph.indexing.executors.batch import stage_plan
from slmgraph.config.settings import Settings


class _Adapter:
    def __init__(self):
        self.threads = []

    def set_threads(self, n):
        self.threads.append(n)


def test_reserve_threads_claims_once_and_lowers_the_threads():
    model = backend.LlamaModel.__new__(backend.LlamaModel)
    asked = []
    model.n_threads, model._lc = 2, _Adapter()
    model._claim = lambda n: asked.append(n) or 1
    assert model.reserve_threads() == 1 and model.reserve_threads() == 1
    assert asked == [2] and model._lc.threads == [1] and model.n_threads == 1


def test_a_model_stage_reserves_its_threads_before_planning_workers():
    class Counting(FakeModel):
        reserved = 0

        def reserve_threads(self):
            self.reserved += 1
            return 2

    m = Counting()
    plan = stage_plan(m, Settings(), 10)
    assert m.reserved == 1 and plan.cores == 2
