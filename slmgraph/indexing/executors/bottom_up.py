"""Bottom-up scheduling over a tree of tasks: a node is run once every child of it is done.

The community reports use it (:func:`slmgraph.indexing.stages.reports.run_reports`): a parent reads
only its own children's reports, so it is released as soon as its last child is committed, not after
the whole level, and no worker waits at a level's end while another finishes that level's last report.
"""

from __future__ import annotations

from collections import deque
from typing import Callable, Hashable, Iterator


def bottom_up(nodes: list[Hashable], parent_of: dict, prepare: Callable[[Hashable], object | None],
              call: Callable[[object], object] | None = None, pool=None) -> Iterator[tuple]:
    """Run ``nodes`` children first, yielding each node's result as it arrives.

    A node is ready once every node of ``nodes`` whose parent it is has been yielded (or done without
    a task); ready nodes are released in the order of ``nodes``, a parent after the child that
    completed it. Releasing a node calls ``prepare(node)``, which returns the node's task payload, or
    None when the node needed no task (it is then done at once). The consumer commits each yielded
    result before asking for the next one, so a released parent's ``prepare`` sees its children's.

    Args:
        nodes: the node ids to run; a parent outside ``nodes`` (or None) is ignored.
        parent_of: ``node -> parent node`` (None or missing: a root).
        prepare: ``node -> payload | None``.
        call: ``payload -> result``, run in this process when ``pool`` is None.
        pool: an executor with ``results(tasks)`` (:class:`slmgraph.indexing.executors.batch.WorkerPool`,
            :class:`slmgraph.indexing.executors.raypool.RayPool`), sent ``(node, payload, None)`` tasks
            and yielding ``(node, key, result, calls, puts, worker)``; tasks released while it runs are
            appended to the list it reads.

    Yields:
        ``(node, result, calls, puts)``: ``calls`` and ``puts`` are the ledger rows and cache entries a
        pool's worker made (empty in this process, whose client records its own).
    """
    need = {n: 0 for n in nodes}
    for n in nodes:
        p = parent_of.get(n)
        if p in need:
            need[p] += 1
    ready = deque(n for n in nodes if not need[n])
    tasks: list[tuple] = []

    def done(n) -> None:
        p = parent_of.get(n)
        if p in need:
            need[p] -= 1
            if not need[p]:
                ready.append(p)

    def release() -> None:
        while ready:
            n = ready.popleft()
            payload = prepare(n)
            if payload is None:
                done(n)
            else:
                tasks.append((n, payload, None))

    release()
    if pool is None:
        i = 0
        while i < len(tasks):
            n, payload, _ = tasks[i]
            i += 1
            yield n, call(payload), (), ()
            done(n)
            release()
    else:
        for n, _key, result, calls, puts, _worker in pool.results(tasks):
            yield n, result, calls, puts
            done(n)
            release()
