"""Ray executor of the model stages (``slmgraph index --executor ray``).

The same interface as :class:`slmgraph.indexing.executors.batch.WorkerPool`: extraction and
report writing run as tasks on Ray actors, each of which loads the GGUF once
(:func:`slmgraph.indexing.executors.batch.start_worker`: from ``model_path``, a path every node
must have, memory-mapped) and evaluates each stage's fixed prompt prefix
once; the DuckDB writer stays on the driver and commits each task's result as
it arrives, so the index is resumable exactly like with the local executor: a
killed actor loses at most its tasks in flight (:data:`IN_FLIGHT` per actor)
and the same command finishes the rest.

Air-gapped (checked by tests/test_ray.py, which traces every connect call
of the run and its Ray processes): usage-stats reporting is off
(``RAY_USAGE_STATS_ENABLED=0``, Ray docs "Usage Stats Collection") and no
dashboard is served (``include_dashboard=False``). Two more things, found by
that trace with ray 2.60, are switched off for the Ray processes a run starts
(:data:`LOCAL_RAY_ENV`): a local instance finds its node address by a UDP
connect towards 8.8.8.8 unless ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` makes it
use the loopback (ray/_private/services.py ``get_node_ip_address``) -- Ray reads
that variable once, into ``ray._private.ray_constants.ENABLE_RAY_CLUSTER``, when it
is first imported, so a program that imported Ray before slmgraph would start a
local instance whose servers (GCS, raylet, actors) listen on every interface
('::'): the constant itself is set for the ``ray.init`` of a local instance -- and the
usage-stats module of Ray's API server probes the cloud metadata address
169.254.169.254 and metadata.google.internal over HTTP even with usage stats
off (ray/dashboard/modules/usage_stats/usage_stats_head.py ``run``); its HTTP
client (requests) is pointed at a closed loopback port through ``HTTP_PROXY``
(gRPC, Ray's own transport, reads only the lower-case ``http_proxy``).

What ``include_dashboard=False`` does not stop (ray 2.60, ray/_private/node.py
``start_head_processes``): Ray still starts its API server, the process
``ray/dashboard/dashboard.py``, with only its usage-stats module and no web
front end (``--modules-to-load=UsageStatsHead --disable-frontend``; with the
plain ``ray`` package, which lacks aiohttp, also ``--minimal``: no HTTP server at
all), and each node's raylet starts a dashboard agent (metrics, no UI). Neither
can be switched off through Ray's API; tests/test_ray.py checks that no
dashboard front end runs and that every socket a local run listens on is on
127.0.0.1.
Ray is an optional extra: ``pip install 'slmgraph[ray]'``.
"""

from __future__ import annotations

import logging
import os
import time
from collections import deque
from typing import Callable

from slmgraph.indexing.executors.batch import ThreadPlan, WorkerError, WorkerPool, WorkerSpec, start_worker
from slmgraph.config.settings import Settings
from slmgraph.errors import UserError

#: Tasks queued on one actor at a time: one running, one waiting, so an actor
#: never idles while the driver commits (Ray docs, "Pattern: using ray.wait to
#: limit the number of pending tasks"). A killed actor loses at most these.
IN_FLIGHT = 2

#: Environment every Ray process of a run gets: no usage-stats reporting.
RAY_ENV = {"RAY_USAGE_STATS_ENABLED": "0"}

#: Environment of the processes of a local Ray instance (set while ``ray.init``
#: starts them, then restored): loopback node address, and Python HTTP clients
#: sent to a closed loopback port (port 9, "discard") instead of the network.
LOCAL_RAY_ENV = {**RAY_ENV, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "HTTP_PROXY": "http://127.0.0.1:9",
                 "HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": "127.0.0.1,localhost"}


def import_ray(local: bool = False):
    """The ``ray`` module, with usage stats off.

    Args:
        local: the run will start a local Ray instance: on a first import, Ray
            reads its node address mode from the environment
            (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``: loopback, no probe towards 8.8.8.8).

    Raises:
        UserError: Ray is not installed (names the extra to install).
    """
    for k, v in RAY_ENV.items():
        os.environ[k] = v  # read by ray.init and inherited by the processes it starts
    flag = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
    saved = os.environ.get(flag)
    if local:
        os.environ[flag] = LOCAL_RAY_ENV[flag]
    try:
        import ray
    except ImportError:
        raise UserError("--executor ray needs Ray, which is not installed: pip install 'slmgraph[ray]'") from None
    finally:
        if saved is None:
            os.environ.pop(flag, None)
        else:
            os.environ[flag] = saved
    return ray


class ModelActor:
    """One Ray actor: a model loaded once and a stage's job (:func:`slmgraph.indexing.executors.batch.start_worker`)."""

    def __init__(self, index: int, spec: WorkerSpec):
        self.index = index
        self.error: str | None = None
        try:
            self.job, self.ledger = start_worker(index, spec)
        except UserError as exc:  # reported by ready(), so the driver can say it in one line
            self.error = str(exc)

    def ready(self) -> str | None:
        """None once the model is loaded, else the user error that stopped it."""
        return self.error

    def pid(self) -> int:
        """The actor's process id (tests kill it)."""
        return os.getpid()

    def run(self, task: tuple) -> tuple:
        """``(task_id, payload, key) -> (task_id, key, result, ledger_rows, cache_entries)``."""
        task_id, payload, key = task
        out = self.job(payload)
        calls, puts = self.ledger.drain()
        return task_id, key, out, calls, puts


class RayPool:
    """Ray actors with the interface of :class:`slmgraph.indexing.executors.batch.WorkerPool`.

    Args:
        spec_for: ``worker index -> WorkerSpec`` (indices from 1).
        plan: the thread plan; each actor asks Ray for ``plan.threads`` CPUs and
            runs llama.cpp with that many threads.
        address: a running cluster (``"auto"``, ``"HOST:PORT"``); None starts a
            local Ray instance with ``plan.cores`` CPUs on 127.0.0.1, stopped on exit.
        name: the stage (actor names in Ray's logs).
        actors: number of actors; None = ``plan.workers`` on a local instance,
            and on a cluster as many as its CPUs allow (CPUs // ``plan.threads``).

    Raises:
        UserError: Ray missing, or an actor could not load its model or prompts.
        WorkerError: an actor died (killed, out of memory); the run resumes when rerun.
    """

    #: The actors' class: constructed as ``(index, spec_for(index))``, with ``ready``, ``pid`` and ``run(task)``.
    actor_class = ModelActor

    def __init__(self, spec_for: Callable[[int], WorkerSpec], plan: ThreadPlan, address: str | None = None,
                 name: str = "extract", actors: int | None = None):
        self.ray = import_ray(local=address is None)
        self.spec_for, self.plan, self.address, self.name = spec_for, plan, address, name
        self.n_actors = actors
        self.actors: list = []
        self.started_ray = False
        self.startup_seconds = 0.0

    def __enter__(self) -> "RayPool":
        ray = self.ray
        t0 = time.perf_counter()
        if not ray.is_initialized():
            common = dict(include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR,
                          runtime_env={"env_vars": dict(RAY_ENV)})
            if self.address is None:
                saved = {k: os.environ.get(k) for k in LOCAL_RAY_ENV}
                os.environ.update(LOCAL_RAY_ENV)
                try:
                    # Ray reads the variable into this constant when first imported; a program that imported
                    # Ray before slmgraph would otherwise bind its servers to every interface ('::').
                    consts = ray._private.ray_constants
                    saved_flag = consts.ENABLE_RAY_CLUSTER
                    consts.ENABLE_RAY_CLUSTER = False
                    try:
                        ray.init(num_cpus=max(self.plan.cores, self.plan.total_threads), **common)
                    finally:
                        consts.ENABLE_RAY_CLUSTER = saved_flag
                finally:
                    for k, v in saved.items():
                        if v is None:
                            os.environ.pop(k, None)
                        else:
                            os.environ[k] = v
            else:
                try:
                    ray.init(address=self.address, **common)
                except (ConnectionError, ValueError, RuntimeError) as exc:
                    raise UserError(f"--ray-address {self.address}: cannot join the Ray cluster ({exc}); start it "
                                    "with 'ray start --head' (see README) or omit --ray-address") from None
            self.started_ray = True
        n = self.n_actors
        if n is None:
            if self.address is None:
                n = self.plan.workers
            else:
                n = max(1, int(ray.cluster_resources().get("CPU", 1)) // self.plan.threads)
        cls = ray.remote(num_cpus=self.plan.threads, max_restarts=0, max_task_retries=0)(self.actor_class)
        self.actors = [cls.options(name=None).remote(i + 1, self.spec_for(i + 1)) for i in range(n)]
        try:
            errors = ray.get([a.ready.remote() for a in self.actors])
        except ray.exceptions.RayActorError as exc:
            raise WorkerError(f"a Ray {self.name} actor died while loading the model ({exc.__class__.__name__}): "
                              "is the model file at the same path on every node?") from None
        for err in errors:
            if err:
                raise UserError(err)
        self.startup_seconds = time.perf_counter() - t0
        return self

    def __exit__(self, *exc) -> None:
        ray = self.ray
        for a in self.actors:
            try:
                ray.kill(a)
            except Exception:  # noqa: BLE001 - already dead
                pass
        self.actors = []
        if self.started_ray:
            ray.shutdown()

    def pids(self) -> list[int]:
        """Process ids of the actors (for tests that kill one)."""
        return self.ray.get([a.pid.remote() for a in self.actors])

    def results(self, tasks: list[tuple]):
        """Send ``tasks`` ``(task_id, payload, key)``, at most :data:`IN_FLIGHT` per actor, and yield
        ``(task_id, key, result, ledger_rows, cache_entries, worker)`` as they complete. The caller
        may append to ``tasks`` while iterating (as :meth:`slmgraph.indexing.executors.batch.WorkerPool.results`)."""
        ray = self.ray
        todo = deque(tasks)
        seen = len(tasks)
        inflight: dict = {}
        load = [0] * len(self.actors)

        def feed(i: int) -> None:
            while load[i] < IN_FLIGHT and todo:
                ref = self.actors[i].run.remote(todo.popleft())
                inflight[ref] = i
                load[i] += 1

        for i in range(len(self.actors)):
            feed(i)
        while inflight:
            done, _ = ray.wait(list(inflight), num_returns=1)
            ref = done[0]
            i = inflight.pop(ref)
            load[i] -= 1
            try:
                task_id, key, out, calls, puts = ray.get(ref)
            except ray.exceptions.RayActorError:
                raise WorkerError(f"Ray {self.name} actor {i + 1} died (killed, or out of memory?): the finished "
                                  "tasks are saved; run the same command again to resume") from None
            except ray.exceptions.RayTaskError as exc:
                cause = getattr(exc, "cause", None)
                if isinstance(cause, UserError):
                    raise UserError(str(cause)) from None
                raise WorkerError(f"Ray {self.name} actor {i + 1} failed (run the same command again to resume; "
                                  f"report this if it repeats):\n{exc}") from None
            feed(i)
            yield task_id, key, out, calls, puts, i + 1
            todo.extend(tasks[seen:])
            seen = len(tasks)
            for j in range(len(self.actors)):
                feed(j)


def open_pool(spec_for: Callable[[int], WorkerSpec], plan: ThreadPlan, settings: Settings, name: str):
    """The executor of ``settings.executor``: a :class:`slmgraph.indexing.executors.batch.WorkerPool` ("local") or a
    :class:`RayPool` ("ray", ``settings.ray_address``, ``settings.workers`` actors if set); both
    context managers with the same ``results(tasks)``.

    Raises:
        UserError: ``ray`` asked for and not installed (names the extra).
    """
    if settings.executor == "ray":
        return RayPool(spec_for, plan, settings.ray_address, name, actors=settings.workers)
    return WorkerPool(spec_for, plan, name)
