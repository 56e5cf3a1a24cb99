"""The batch engine of the model stages: a thread plan, worker processes, one writer.

Extraction is the stage that costs hours; its text units are independent, so
it runs in worker processes started with ``spawn`` (multiprocessing docs:
"fork" would copy the parent's llama.cpp threads and DuckDB connection). Each
worker loads the GGUF itself — memory-mapped, so the weights are shared
through the page cache and each worker adds only its KV cache — evaluates the
fixed prompt prefix (instructions + few-shot) once and reuses it for every
text unit (:meth:`slmgraph.model.backend.LlamaModel.complete`). Workers never touch
DuckDB: they send each text unit's records, its ledger rows and its cache
entries to the parent, the single writer, which commits them in one
transaction per text unit. A killed run therefore loses at most the units in
flight, and running the same command again resumes.

Community reports use the same engine (:mod:`slmgraph.indexing.stages.reports`): the
communities of one level are independent, so each level is one round of tasks
on the same pool (the workers load the model once for the whole stage), and
the writer commits each report as it arrives. ``--executor ray`` swaps the
process pool for Ray actors with the same interface (:mod:`slmgraph.indexing.executors.raypool`,
whose :func:`~slmgraph.indexing.executors.raypool.open_pool` the stages call).

Thread plan: llama.cpp's worker threads spin while they wait, so the total of
workers x threads must not exceed the physical cores (ARCHITECTURE.md "Running the model on a CPU";
docs/decisions.md: one thread per worker). ``--workers`` and
``--threads`` override the plan, with a warning when they oversubscribe.
"""

from __future__ import annotations

import ctypes
import json
import os
import queue
import signal
import sys
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable

from slmgraph.config.settings import Settings
from slmgraph.errors import UserError

#: Threads per worker in the default plan: a tiny model's per-token work is too
#: small to keep two threads busy, so 1-thread workers extract faster
#: (docs/decisions.md: one thread per worker).
DEFAULT_THREADS_PER_WORKER = 1


@dataclass(frozen=True)
class ThreadPlan:
    """How extraction uses the cores.

    Attributes:
        workers: extraction processes (1 = in the main process, no spawn).
        threads: llama.cpp threads of each worker.
        cores: physical cores available to this run.
        warning: one line when the plan oversubscribes the cores, else None.
    """

    workers: int
    threads: int
    cores: int
    warning: str | None = None

    @property
    def total_threads(self) -> int:
        """workers x threads."""
        return self.workers * self.threads


def plan_threads(cores: int, n_units: int, workers: int | None = None, threads: int | None = None) -> ThreadPlan:
    """Choose workers x threads for ``n_units`` text units on ``cores`` cores.

    Default: ``cores // DEFAULT_THREADS_PER_WORKER`` workers (never more than
    the text units to extract, at least one), so that workers x threads <=
    cores. Given only ``workers``, threads = cores // workers; given only
    ``threads``, workers = cores // threads; given both, both are kept and a
    warning is set when their product exceeds the cores.

    Raises:
        UserError: ``workers`` or ``threads`` below 1.
    """
    cores = max(1, cores)
    if workers is not None and workers < 1:
        raise UserError(f"--workers {workers} must be at least 1")
    if threads is not None and threads < 1:
        raise UserError(f"--threads {threads} must be at least 1")
    if workers is None and threads is None:
        threads = min(DEFAULT_THREADS_PER_WORKER, cores)
        workers = max(1, min(cores // threads, n_units))
        if workers == 1:
            threads = cores  # one process: give it every core
    elif workers is None:
        workers = max(1, min(cores // threads, n_units))
    elif threads is None:
        threads = max(1, cores // workers)
    warning = None
    if workers * threads > cores:
        warning = (f"{workers} workers x {threads} threads = {workers * threads} llama.cpp threads on {cores} "
                   f"cores: spinning threads will slow every worker down; use workers x threads <= {cores}")
    return ThreadPlan(workers, threads, cores, warning)


@dataclass
class WorkerSpec:
    """Everything a worker process needs (picklable; sent once at spawn).

    Attributes:
        model_path: GGUF file (None with a ``model_factory``, or for a stage without model calls).
        n_ctx, seed: as in :class:`slmgraph.model.backend.LlamaModel`.
        threads: llama.cpp threads of this worker.
        settings: the run's settings (extraction reads them).
        run_id: ledger run id.
        make_job: ``(client, prompts, settings, model) -> (payload -> result)``, a
            module-level function (pickled by reference): what a worker does with
            each task's payload. The extraction stage passes
            :func:`slmgraph.indexing.stages.extract.worker_job` (text -> Extraction), the report
            stage :func:`slmgraph.indexing.stages.reports.worker_job` (prompt -> model output),
            so this engine imports no stage.
        cache: ``llm_cache`` entries of the stage's calls ``{key: (output, finish_reason, tokens JSON)}``:
            workers cannot read DuckDB while the writer holds it.
        model_factory: ``threads -> Model`` used instead of loading ``model_path``
            (tests pass a picklable fake).
    """

    model_path: str | None
    n_ctx: int
    seed: int
    threads: int
    settings: Settings
    run_id: str
    make_job: Callable
    cache: dict = field(default_factory=dict)
    model_factory: Callable | None = None


class BufferedLedger:
    """The store interface :class:`slmgraph.model.client.ModelClient` needs, in a worker.

    ``cache_get`` answers from the parent's snapshot; ``cache_put`` and
    ``record_call`` are buffered and sent to the writer with the text unit's
    records, so that a unit's records, ledger rows and cache entries are
    committed together.
    """

    def __init__(self, cache: dict):
        self.cache = dict(cache)
        self.puts: list[tuple] = []
        self.calls: list[tuple] = []

    def cache_get(self, key: str) -> tuple[str, str, list[int] | None] | None:
        """``(output, finish_reason, token ids)`` of a cached call, or None.

        The snapshot may hold token ids as JSON text (parsed on a hit)."""
        hit = self.cache.get(key)
        if hit is not None and isinstance(hit[2], str):
            hit = (hit[0], hit[1], json.loads(hit[2]))
        return hit

    def cache_put(self, key: str, stage: str, output: str, finish_reason: str,
                  tokens: list[int] | None = None) -> None:
        """Buffer a cache entry (also answers later calls of this worker)."""
        self.cache[key] = (output, finish_reason, tokens)
        self.puts.append((key, stage, output, finish_reason, tokens))

    def record_call(self, *row) -> None:
        """Buffer one ledger row (the arguments of :meth:`slmgraph.store.db.Store.record_call`)."""
        self.calls.append(row)

    def drain(self) -> tuple[list[tuple], list[tuple]]:
        """``(ledger rows, cache entries)`` buffered since the last drain."""
        out = (self.calls, self.puts)
        self.calls, self.puts = [], []
        return out


def _die_with_parent() -> None:
    """Linux: have the kernel SIGKILL this worker when its parent dies (prctl PR_SET_PDEATHSIG)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def worker_main(index: int, spec: WorkerSpec, tasks, results, parent_pid: int) -> None:
    """Body of one worker process: load the model, run tasks until the ``None`` sentinel.

    Messages to ``results``: ``("ready", index, wall-clock time)``; ``("done", index, task_id,
    key, result, ledger_rows, cache_entries)``; ``("user_error", index,
    message)``; ``("error", index, traceback)``. Ctrl-C is left to the parent. On the sentinel the
    process flushes ``results`` and ends at once (``os._exit``), without the interpreter's shutdown.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # blocked since the spawn (_sigint_blocked): a pending one is dropped
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _die_with_parent()
    try:
        job, ledger = start_worker(index, spec)
        results.put(("ready", index, time.time()))
        while True:
            try:
                task = tasks.get(timeout=1.0)
            except queue.Empty:
                if os.getppid() != parent_pid:
                    return  # orphaned: the writer is gone
                continue
            if task is None:
                # Every result is in the pipe once the feeder thread is joined; the interpreter's own
                # shutdown (freeing the model's and spaCy's objects one by one) would only keep the parent
                # waiting in join, with nothing left to save.
                results.close()
                results.join_thread()
                os._exit(0)
            task_id, payload, key = task
            out = job(payload)
            calls, puts = ledger.drain()
            results.put(("done", index, task_id, key, out, calls, puts))
    except UserError as exc:
        results.put(("user_error", index, str(exc)))
    except BaseException:  # noqa: BLE001 - reported to the parent, which stops the run
        results.put(("error", index, traceback.format_exc(limit=8)))


@contextmanager
def _sigint_blocked():
    """Within the block, SIGINT is blocked in this thread (POSIX; elsewhere nothing changes). A process spawned
    there inherits the mask through its exec, so a Ctrl-C that reaches it while it is still starting (importing
    the stage's modules, before :func:`worker_main` ignores SIGINT) stays pending instead of printing its
    traceback; multiprocessing's resource tracker is started the same way. A SIGINT meanwhile is this
    process's, raised once the block ends (or at once on another thread's delivery)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def start_worker(index: int, spec: WorkerSpec) -> tuple[Callable, BufferedLedger]:
    """Load the model of worker ``index`` and build its job: ``(payload -> result, ledger)``.

    Shared by the process pool and the Ray actors (:mod:`slmgraph.indexing.executors.raypool`). A spec
    with neither ``model_path`` nor ``model_factory`` loads no model: ``make_job`` gets None for the
    client and the model.

    Raises:
        UserError: the model file or a prompt is unusable.
    """
    from slmgraph.model.backend import LlamaModel
    from slmgraph.model.client import ModelClient
    from slmgraph.config.prompting import Prompts

    if spec.model_factory is not None:
        model = spec.model_factory(spec.threads)
    elif spec.model_path is not None:
        model = LlamaModel(spec.model_path, n_ctx=spec.n_ctx, n_threads=spec.threads, seed=spec.seed)
    else:  # a stage without model calls (the LLM-free extraction): no model, no client
        model = None
    prompts = Prompts(spec.settings.prompts_dir)
    ledger = BufferedLedger(spec.cache)
    client = ModelClient(model, ledger, spec.run_id, worker=index) if model is not None else None
    return spec.make_job(client, prompts, spec.settings, model), ledger


class WorkerError(RuntimeError):
    """An extraction worker crashed or died; the finished text units are saved and a re-run resumes."""


class WorkerPool:
    """``plan.workers`` spawned worker processes fed from one task queue.

    Use as a context manager; leaving it (normally, on an error or on Ctrl-C)
    stops the workers. :meth:`results` may be called several times (one round
    per community level); iterate it to receive each task's ``(task_id, key,
    result, ledger_rows, cache_entries, worker)`` in completion order.

    Raises:
        UserError: a worker reported a user mistake (e.g. a prompt that does not fit).
        WorkerError: a worker crashed or died (the run can be resumed).
    """

    def __init__(self, spec_for: Callable[[int], WorkerSpec], plan: ThreadPlan, name: str = "extract"):
        import multiprocessing as mp

        self.ctx = mp.get_context("spawn")
        self.plan = plan
        self.tasks = self.ctx.Queue()
        self.results_q = self.ctx.Queue()
        self.t_start = self.t_start_wall = self._ready_at = 0.0
        self.startup_seconds = 0.0  #: from start until every worker had loaded its model
        self._ready = 0
        self._closed = False
        self.procs = [self.ctx.Process(target=worker_main, args=(i + 1, spec_for(i + 1), self.tasks,
                                                                  self.results_q, os.getpid()),
                                       name=f"slmgraph-{name}-{i + 1}", daemon=True)
                      for i in range(plan.workers)]

    def __enter__(self) -> "WorkerPool":
        if not self.t_start:  # a pool started ahead of its stage is entered again there
            self.t_start, self.t_start_wall = time.perf_counter(), time.time()
            try:
                with _sigint_blocked():
                    for p in self.procs:
                        p.start()
            except BaseException:  # e.g. a Ctrl-C between two starts: the workers started are stopped
                self.__exit__(*sys.exc_info())
                raise
        return self

    def __exit__(self, *exc) -> None:
        if self._closed:  # a pool started ahead of its stage may be closed by the stage and by its caller
            return
        self._closed = True
        if exc[0] is None:  # normal end: let idle workers leave on the sentinel
            for _ in self.procs:
                self.tasks.put(None)
            for p in self.procs:
                p.join(timeout=2)
        for p in self.procs:
            if p.is_alive():
                p.terminate()
        for p in self.procs:
            p.join(timeout=5)
        for q in (self.tasks, self.results_q):
            q.cancel_join_thread()
            q.close()

    def results(self, tasks: list[tuple]):
        """Send ``tasks`` ``(task_id, payload, key)`` and yield results as they complete.

        The caller may append to ``tasks`` while iterating (a community report
        that became ready when its last child's report arrived): what it
        appended is sent when it asks for the next result, and the iteration
        ends when every task sent has its result.
        """
        sent = 0

        def send() -> None:
            nonlocal sent
            while sent < len(tasks):
                self.tasks.put(tasks[sent])
                sent += 1

        send()
        pending = sent
        while pending:
            try:
                msg = self.results_q.get(timeout=0.5)
            except queue.Empty:
                dead = [p for p in self.procs if not p.is_alive() and p.exitcode not in (0, None)]
                if dead:
                    p = dead[0]
                    raise WorkerError(f"worker {p.name} died (exit code {p.exitcode}; out of memory?): "
                                      "run the same command again to resume") from None
                if not any(p.is_alive() for p in self.procs):
                    try:  # the last worker may have put its result just before exiting
                        msg = self.results_q.get(timeout=2.0)
                    except queue.Empty:
                        raise WorkerError("all workers exited with text units left: "
                                          "run the same command again to resume") from None
                else:
                    continue
            kind = msg[0]
            if kind == "ready":
                self._ready += 1
                # The worker's own clock: a pool started ahead of its stage reads the message only there.
                self._ready_at = max(self._ready_at, msg[2])
                if self._ready == len(self.procs):
                    self.startup_seconds = self._ready_at - self.t_start_wall
                continue
            if kind == "user_error":
                raise UserError(msg[2])
            if kind == "error":
                raise WorkerError(f"worker {msg[1]} failed (run the same command again to resume; "
                                  f"report this if it repeats):\n{msg[2]}")
            _, worker, task_id, key, out, calls, puts = msg
            pending -= 1
            yield task_id, key, out, calls, puts, worker
            before = sent
            send()
            pending += sent - before



def stage_plan(model, settings: Settings, n_tasks: int, say: Callable[[str], None] | None = None) -> ThreadPlan:
    """The thread plan of a model stage with ``n_tasks`` independent tasks.

    Cores: with ``--threads`` given, the physical cores other slmgraph
    processes leave free (:mod:`slmgraph.model.threads`); else this process's granted
    budget (``model.reserve_threads()``: the stage is about to run the model, so
    the process claims its threads now). Then :func:`plan_threads`; its warning goes
    to ``say``. With ``--executor ray`` the plan is per node: each actor gets
    ``plan.threads`` llama.cpp threads and the actors are ``plan.workers``
    unless ``--workers`` says otherwise (a cluster has more cores than this
    machine).
    """
    from slmgraph.config.settings import physical_cores
    from slmgraph.model.threads import claimed_elsewhere

    granted = model.reserve_threads()
    if settings.threads_explicit:
        cores = max(1, physical_cores() - claimed_elsewhere())
    else:
        cores = granted or settings.n_threads
    plan = plan_threads(cores, n_tasks, settings.workers, settings.n_threads if settings.threads_explicit else None)
    if plan.warning and say:
        say(f"warning: {plan.warning}")
    return plan

