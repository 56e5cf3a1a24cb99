"""Run conditions every benchmark records beside its figures (machine, cores, load, date).

Timings on this machine are often taken while other jobs share its cores; a
results file must say so. :func:`start` is called before the measurement and
:func:`finish` after it; :func:`sentence` renders the result as one line for the
markdown file.
"""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path

from slmgraph.config import physical_cores


def loadavg() -> str:
    """The 1, 5 and 15 minute load averages from ``/proc/loadavg`` ("?" where there is none)."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def start() -> dict:
    """Run conditions at the start of a measurement: ``date`` (UTC), ``machine``, ``python``,
    ``cores`` (physical), ``cpus`` (logical) and ``loadavg_start``."""
    cores = physical_cores()
    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": f"{platform.machine()}, {cores} physical cores",
            "python": platform.python_version(), "cores": cores, "cpus": os.cpu_count(),
            "loadavg_start": loadavg()}


def finish(cond: dict) -> dict:
    """``cond`` with ``loadavg_end`` and ``contended`` (True when the 1-minute load average at the
    start or the end exceeded the physical cores: other jobs shared the CPU)."""
    cond = dict(cond, loadavg_end=loadavg())
    loads = [float(v.split()[0]) for v in (cond["loadavg_start"], cond["loadavg_end"]) if v != "?"]
    cond["contended"] = any(x > cond["cores"] for x in loads)
    return cond


def sentence(cond: dict) -> str:
    """The run conditions as one markdown sentence, saying when timings were taken under CPU contention."""
    s = (f"Run conditions: {cond['date']}, {cond['machine']}, Python {cond['python']}; load average "
         f"{cond['loadavg_start']} at the start, {cond.get('loadavg_end', '?')} at the end")
    return s + (" -- **timings taken under CPU contention**." if cond.get("contended") else ".")
