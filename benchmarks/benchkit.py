"""What the benchmark scripts share: run conditions, the results files, index look-ups.

* Run conditions every benchmark records beside its figures (machine, cores, load, date).
  Timings on this machine are often taken while other jobs share its cores; a results file
  must say so. :func:`start` is called before the measurement and :func:`finish` after it;
  :func:`sentence` renders the result as one line for the markdown file.
* :func:`write_results`: ``benchmarks/results/<name>.md`` and ``.json``.
* :func:`docs_of_communities`: the documents behind communities (coverage of an answer).

Imported as ``import benchkit`` (a script's own folder is on ``sys.path``).
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

from slmgraph.config.settings import physical_cores

#: ``benchmarks/results/``: where every benchmark writes its ``<name>.md`` and ``<name>.json``.
RESULTS = Path(__file__).resolve().parent / "results"
#: The benchmark data sets, which the repository does not ship: the podcast-transcript sample of the
#: GraphRAG paper's corpus (CDLA-Permissive-2.0) and a Re-DocRED gold sample. Environment variable
#: ``SLMGRAPH_DATA``; default: the ``shared`` folder beside the checkout. Every default data path of
#: the benchmarks is derived here (each script also takes the path as an argument).
DATA = Path(os.environ.get("SLMGRAPH_DATA") or Path(__file__).resolve().parents[2] / "shared")
#: The podcast sample (174 transcript files, 6 episodes) and its global questions.
PODCAST_SAMPLE = DATA / "corpora" / "podcast_sample"
PODCAST = PODCAST_SAMPLE / "input"
#: The Re-DocRED dev sample (first 100 documents) used by ``extraction_gold.py``.
REDOCRED_GOLD = DATA / "gold" / "re_docred_dev_sample" / "dev_revised_first100.json"


def loadavg() -> str:
    """The 1, 5 and 15 minute load averages from ``/proc/loadavg`` ("?" where there is none)."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def machine() -> str:
    """``"x86_64, 2 physical cores, Python 3.11.7"``: the machine a figure was taken on."""
    return f"{platform.machine()}, {physical_cores()} physical cores, Python {platform.python_version()}"


def start() -> dict:
    """Run conditions at the start of a measurement: ``date`` (UTC), ``machine``, ``python``,
    ``cores`` (physical), ``cpus`` (logical) and ``loadavg_start``."""
    cores = physical_cores()
    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": machine(),
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
    s = (f"Run conditions: {cond['date']}, {cond['machine']}; load average "
         f"{cond['loadavg_start']} at the start, {cond.get('loadavg_end', '?')} at the end")
    return s + (" -- **timings taken under CPU contention**." if cond.get("contended") else ".")


def write_results(name: str, markdown: str | list[str], data) -> tuple[Path, Path]:
    """Write ``RESULTS/<name>.md`` (lines joined by newlines, one final newline) and
    ``RESULTS/<name>.json`` (``data``, indented); returns both paths."""
    text = markdown if isinstance(markdown, str) else "\n".join(markdown)
    RESULTS.mkdir(parents=True, exist_ok=True)
    md, js = RESULTS / f"{name}.md", RESULTS / f"{name}.json"
    md.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
    js.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return md, js


def docs_of_communities(store, ids: list[int]) -> set[str]:
    """Documents (``doc_id``) whose text units support an entity of any of the communities ``ids``."""
    if not ids:
        return set()
    q = ",".join("?" * len(ids))
    return {r[0] for r in store.con.execute(f"""
        SELECT DISTINCT t.doc_id FROM community_members m JOIN entity_text_units e USING (entity_id)
        JOIN text_units t USING (chunk_id) WHERE m.community_id IN ({q})""", ids).fetchall()}
