"""The embed stage's encoding on Ray actors (``slmgraph index --executor ray``).

Each actor loads the embedder once (:class:`EmbedSpec`: a picklable factory, so every node needs the
embedder's package installed, as it needs the GGUF for the model stages) and encodes one step of texts per
task; the driver stays the one writer and commits each step as it arrives
(:func:`slmgraph.indexing.stages.embed.embed_items`), so a killed actor loses at most its steps in flight and
the same command encodes only what no row has yet. Ray is started, kept offline and stopped as for the model
stages (:class:`slmgraph.indexing.executors.raypool.RayPool`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

from slmgraph.indexing.executors.batch import ThreadPlan
from slmgraph.indexing.executors.raypool import RayPool


@dataclass
class EmbedSpec:
    """What an embedding actor needs (picklable; sent once when the actor starts).

    Attributes:
        make: ``() -> embedder`` (an ``encode(texts) -> array (n, dim)`` object), a module-level callable or a
            ``functools.partial`` of one, pickled by reference.
    """

    make: Callable


class EmbedActor:
    """One Ray actor holding an embedder; tasks are ``(step, texts, key)``."""

    def __init__(self, index: int, spec: EmbedSpec):
        self.index = index
        self.error: str | None = None
        try:
            self.embedder = spec.make()
        except Exception as exc:  # noqa: BLE001 -- reported by ready(), so the driver can say it in one line
            self.error = f"the embedder could not be loaded on a Ray actor: {exc}"

    def ready(self) -> str | None:
        """None once the embedder is loaded, else why it is not."""
        return self.error

    def pid(self) -> int:
        """The actor's process id (tests kill it)."""
        return os.getpid()

    def run(self, task: tuple) -> tuple:
        """``(step, texts, key) -> (step, key, vectors (n, dim) float32, [], [])`` (no ledger, no cache)."""
        step, texts, key = task
        return step, key, self.embedder.encode(texts), [], []


class RayEmbedPool(RayPool):
    """:class:`slmgraph.indexing.executors.raypool.RayPool` of :class:`EmbedActor` s.

    Args:
        make: ``() -> embedder`` for each actor (:class:`EmbedSpec`).
        plan: actors (``plan.workers``) and the CPUs each asks Ray for (``plan.threads``).
        address: a running cluster, or None for a local instance.
        actors: number of actors; None as :class:`RayPool`.
    """

    actor_class = EmbedActor

    def __init__(self, make: Callable, plan: ThreadPlan, address: str | None = None, actors: int | None = None):
        super().__init__(lambda i: EmbedSpec(make), plan, address, "embed", actors=actors)
