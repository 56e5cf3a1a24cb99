"""A machine-wide budget of llama.cpp threads across slmgraph processes.

llama.cpp's worker threads spin while they wait, so two processes that each
run as many threads as there are cores slow each other down badly (ARCHITECTURE.md "Running the model
on a CPU"; docs/decisions.md: one thread per worker). Each
process that loads a model registers its thread count in a small file under
the system temp folder; a new process gets at most the cores not already
claimed by live slmgraph processes (at least one), and says so.
"""

from __future__ import annotations

import atexit
import os
import tempfile
from pathlib import Path

from slmgraph.config.settings import physical_cores

REGISTRY = Path(tempfile.gettempdir()) / "slmgraph-threads"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def claimed_elsewhere(registry: Path | None = None) -> int:
    """Threads claimed by other live slmgraph processes (stale claims are removed); ``registry``
    defaults to :data:`REGISTRY`."""
    registry = registry or REGISTRY
    total = 0
    if not registry.is_dir():
        return 0
    for f in registry.iterdir():
        try:
            pid = int(f.name)
            n = int(f.read_text().strip() or 0)
        except (ValueError, OSError):
            continue
        if pid == os.getpid():
            continue
        if _alive(pid):
            total += n
        else:
            f.unlink(missing_ok=True)
    return total


def claim_threads(requested: int, explicit: bool, warn, registry: Path | None = None, cores: int | None = None) -> int:
    """Threads this process may use, registered until it exits.

    Args:
        requested: threads asked for (the default is the physical cores).
        explicit: the user set ``--threads``: keep it, but warn on oversubscription.
        warn: ``str -> None`` for a one-line warning.
        registry: the claims folder (default :data:`REGISTRY`).

    Returns:
        ``requested`` if it fits beside the other processes' claims (or was
        explicit), else the free cores (at least 1).
    """
    cores = cores or physical_cores()
    registry = registry or REGISTRY
    other = claimed_elsewhere(registry)
    granted = requested
    if other + requested > cores:
        if explicit:
            warn(f"{other} llama.cpp threads already run in other slmgraph processes on this {cores}-core "
                 f"machine; --threads {requested} oversubscribes the cores and will slow both down")
        else:
            granted = max(1, cores - other)
            warn(f"{other} llama.cpp threads already run in other slmgraph processes on this {cores}-core "
                 f"machine: using {granted} thread(s); expect both to be slower until the other finishes")
    try:
        registry.mkdir(exist_ok=True)
        mine = registry / str(os.getpid())
        mine.write_text(str(granted))
        atexit.register(lambda: mine.unlink(missing_ok=True))
    except OSError:
        pass
    return granted


def update_claim(threads: int, registry: Path | None = None) -> None:
    """Change this process's registered thread count (e.g. to workers x threads
    while extraction worker processes run, which do not register themselves)."""
    mine = (registry or REGISTRY) / str(os.getpid())
    try:
        if mine.exists():
            mine.write_text(str(threads))
    except OSError:
        pass
