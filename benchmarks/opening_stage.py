"""The stage bench's ``opening`` stage alone, for the bundled models, merged into their capability records.

A full ``slmgraph bench`` reruns every stage (about 35 minutes per model on a shared 2-core machine); this
measures only the theme opening sentences (:func:`slmgraph.eval.calibrate.opening_quality`) on the same
workload: the demo story indexed on its LLM-free route (row 0's index), its first on-topic questions, row 0
once and then each model. With ``--records DIR`` the stage is added to each model's record there (other
stages kept as they are) when that record is current (:func:`slmgraph.model.policy.policy_version`).

Usage:
    PYTHONPATH=$PWD python benchmarks/opening_stage.py --out benchmarks/results/opening_s12.json \
        --records models/records [--models bundled,gemma]

Writes ``--out`` (JSON: row 0's and each model's stage, load averages, seconds).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from slmgraph.config.settings import Settings
from slmgraph.eval import calibrate
from slmgraph.model import policy
from slmgraph.samples import DULCE
from slmgraph.store.db import Store, new_run_id


def model_path(name: str) -> Path | None:
    """``bundled`` (SmolLM2-135M), ``gemma`` (Gemma 3 270M, None when not installed) or a GGUF path."""
    from slmgraph.errors import UserError
    from slmgraph.models import find_bundled_model, find_gemma_model

    if name == "bundled":
        return find_bundled_model()
    if name == "gemma":
        try:
            return find_gemma_model()
        except UserError as exc:
            print(f"skipping gemma: {exc}", file=sys.stderr)
            return None
    return Path(name)


def stage_row(model, settings: Settings, wl, embedder, free_db: Path, llm_free: bool) -> dict:
    """``{quality, seconds, cpu_seconds, calls, evaluated, cached, completion, model_seconds, loops,
    measure, figures}`` of the opening stage for one row."""
    run_id, c0 = new_run_id(), time.process_time()
    st = Store(free_db)
    try:
        o = calibrate.opening_quality(st, model, calibrate.llm_free_settings(settings), wl, embedder, run_id,
                                      llm_free=llm_free)
    finally:
        st.close()
    led = calibrate.ledger_rows(free_db, [run_id])
    return dict(calibrate._sum([led[x] for x in calibrate.LEDGER_STAGES["opening"] if x in led]),
                quality=o["quality"], seconds=o["seconds"], cpu_seconds=round(time.process_time() - c0, 1),
                measure=calibrate.MEASURES["opening"], figures=o)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="bundled,gemma", help="comma list: bundled, gemma or GGUF paths")
    ap.add_argument("--out", required=True, help="JSON file written")
    ap.add_argument("--records", help="records folder whose current records get the stage (e.g. models/records)")
    ap.add_argument("--questions", type=int, default=calibrate.ON_TOPIC, help="on-topic questions (default 5)")
    args = ap.parse_args(argv)
    from slmgraph.indexing.pipeline import run_index
    from slmgraph.indexing.stages.embed import Embedder
    from slmgraph.model.backend import load_model
    from slmgraph.web.serve import MemoEmbedder

    settings = Settings()
    wl = calibrate.workload(gold_docs=1, on_topic=args.questions, off_topic=1)
    paths = [p for p in (model_path(m.strip()) for m in args.models.split(",") if m.strip()) if p is not None]
    embedder = Embedder(batch_size=settings.embed_batch_size, threads=settings.n_threads)
    t0 = time.perf_counter()
    out = {"date": policy.today(), "version": policy.policy_version(),
           "load_average_before": [round(x, 2) for x in os.getloadavg()], "questions": wl.on_topic, "rows": []}
    with tempfile.TemporaryDirectory(prefix="slmgraph-opening-") as tmp:
        free_db = Path(tmp) / "llm_free.duckdb"
        free = None
        for p in paths:
            s = dataclasses.replace(settings, model_path=str(p))
            model = load_model(str(p), s.n_ctx, s.n_threads, s.seed, s.threads_explicit)
            if free is None:
                run_index(DULCE, free_db, calibrate.llm_free_settings(s), progress=False, model=model,
                          say=lambda m: None, embedder_factory=lambda: embedder)
                free = stage_row(model, s, wl, MemoEmbedder(embedder), free_db, llm_free=True)
                out["rows"].append({"model": "LLM-free", "stage": free})
                print(f"LLM-free: quality {free['quality']} ({free['figures']['themes']} themes)", flush=True)
            row = stage_row(model, s, wl, MemoEmbedder(embedder), free_db, llm_free=False)
            q, q0 = row["quality"], free["quality"]
            beats = q is not None and q0 is not None and q >= q0 and q > 0
            out["rows"].append({"model": model.name, "path": str(p), "stage": row, "beats": beats})
            print(f"{model.name}: quality {q} vs LLM-free {q0}: beats {beats}; {row['calls']} calls, "
                  f"{row['seconds']} s", flush=True)
            if args.records:
                rec_file = Path(args.records) / f"{policy.file_sha256(p)[:40]}.json"
                if not rec_file.is_file():
                    print(f"no record {rec_file}: not updated", file=sys.stderr)
                    continue
                rec = json.loads(rec_file.read_text(encoding="utf-8"))
                if rec.get("version") != policy.policy_version():
                    print(f"stale record {rec_file}: not updated", file=sys.stderr)
                    continue
                rec["stages"]["opening"] = {"beats": beats, "measure": row["measure"], "model": q, "llm_free": q0,
                                            "seconds": row["seconds"], "llm_free_seconds": free["seconds"],
                                            "figures": row["figures"]}
                rec_file.write_text(json.dumps(rec, indent=2) + "\n", encoding="utf-8")
                print(f"updated {rec_file}", flush=True)
    out["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    out["seconds"] = round(time.perf_counter() - t0, 1)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
