"""CPU seconds of the LLM-free extraction worker's job against spaCy's raw ``nlp.pipe`` on the same text units.

The sample is :func:`index_throughput.llm_free_limits`'s: ``--sample`` text units of the index, every n-th by
``chunk_id``. In one process: the worker job (:func:`slmgraph.indexing.stages.extract.nlp_worker_job`, tasks
of 8 as the stage sends them) first runs over as many other text units (a worker mid-run: spaCy, pysbd and
the lemmatizer warmed up), then once over the sample (a worker meets each text unit once; a second pass
would find its sentence splits cached), then ``nlp.pipe`` over the sample's masked texts, batches of 32
(the benchmark's raw limit) and of 8 (the stage's task size), ``--reps`` times. CPU time
(``time.process_time``), so other processes on a loaded machine inflate the figures less than wall time
would; compare figures of one machine and one load only. Prints one JSON line.

Usage::

    python benchmarks/extract_worker_cpu.py INDEX.duckdb [--sample 96] [--reps 2]
"""

from __future__ import annotations

import argparse
import json
import os
import time

import duckdb

from slmgraph.config.prompting import Prompts
from slmgraph.config.settings import Settings
from slmgraph.indexing.stages.extract import nlp_worker_job
from slmgraph.indexing.stages.ner import pipeline_for
from slmgraph.text.markdown import mask_markup


def cpu(f) -> float:
    c0 = time.process_time()
    f()
    return time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db", help="an index (DuckDB file) with text units, e.g. one `slmgraph index` built")
    ap.add_argument("--sample", type=int, default=96)
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args()
    c_start = time.process_time()
    con = duckdb.connect(args.db, read_only=True)
    rows = con.execute("SELECT text, ord = min(ord) OVER (PARTITION BY doc_id), ord = max(ord) OVER "
                       "(PARTITION BY doc_id), chunk_id FROM text_units").fetchall()
    con.close()
    rows.sort(key=lambda r: r[3])
    step = max(1, len(rows) // args.sample)
    tasks = [(t, (bool(a), bool(b))) for t, a, b, _ in rows[::step][:args.sample]]
    warm = [(t, (bool(a), bool(b))) for t, a, b, _ in rows[min(step - 1, 3)::step][:args.sample]]
    s = Settings()
    s.extractor = "nlp"
    job = nlp_worker_job(None, Prompts(s.prompts_dir), s, None)
    job(warm[:1])
    start_cpu = time.process_time() - c_start
    for i in range(1, len(warm), 8):
        job(warm[i:i + 8])
    nlp, _ = pipeline_for(s.ner_model)
    masked = [mask_markup(t) for t, _ in tasks]

    def run_job():
        for i in range(0, len(tasks), 8):
            job(tasks[i:i + 8])

    def pipe(batch: int):
        def run():
            for _ in nlp.pipe(masked, batch_size=batch):
                pass
        return run

    load0 = os.getloadavg()[0]
    res = {"job": [cpu(run_job)], "pipe32": [], "pipe8": []}
    for _ in range(args.reps):
        res["pipe32"].append(cpu(pipe(32)))
        res["pipe8"].append(cpu(pipe(8)))
    print(json.dumps({"units": len(tasks), "characters": sum(map(len, masked)), "start_cpu_s": round(start_cpu, 2),
                      **{f"{k}_cpu_s": [round(x, 2) for x in v] for k, v in res.items()},
                      "job_over_pipe32": round(res["job"][0] / min(res["pipe32"]), 3),
                      "loadavg": [round(load0, 1), round(os.getloadavg()[0], 1)]}))


if __name__ == "__main__":
    main()
