"""One large file through the ingest stage: wall-clock and peak RSS of the first ingest and of a resume.

Generates a file of ``--mb`` MB of English-like text (seeded, so every run and checkout reads the same
bytes), then runs, each in its own process so that its peak RSS (``ru_maxrss``) is its own, with
``PYTHONPATH`` set to each ``--code`` checkout:

1. ``first``: read the folder, cut the file into 600/100-token text units with the bundled model's
   tokenizer, write them to a new index (``slmgraph.indexing.stages.ingest.ingest``, as the pipeline calls it);
2. ``resume``: the same again on that index (what a re-run does first after a later stage was interrupted).

Peak RSS includes the tokenizer's model (reported alone as ``model_rss_mb``).

Usage::

    python benchmarks/ingest_large.py [--mb 50] [--code before=/work/main] [--code after=.] [--name ingest_large]

Writes ``benchmarks/results/<name>.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def generate(path: Path, mb: float, seed: int = 0) -> int:
    """Write ``mb`` MB of seeded English-like prose (sentences of made-up words and capitalised names) to
    ``path``; returns its size in bytes."""
    rng = random.Random(seed)
    syll = ["ka", "lo", "mi", "ren", "to", "sa", "vel", "an", "dor", "is", "ne", "qu", "ar", "ith", "om", "el"]
    words = ["".join(rng.choice(syll) for _ in range(rng.randint(1, 3))) for _ in range(4000)]
    words += ["the", "of", "and", "to", "in", "a", "was", "that", "with", "for"] * 60
    names = [w.capitalize() + " " + rng.choice(words).capitalize() for w in rng.sample(words[:4000], 300)]
    target = int(mb * 1_000_000)
    n = 0
    with open(path, "w", encoding="utf-8") as f:
        while n < target:
            para = []
            for _ in range(rng.randint(3, 8)):
                s = [rng.choice(words) for _ in range(rng.randint(8, 22))]
                s[rng.randrange(len(s))] = rng.choice(names)
                para.append(" ".join(s).capitalize() + ".")
            text = " ".join(para) + "\n\n"
            f.write(text)
            n += len(text.encode("utf-8"))
    return n


def child(phase: str, input_dir: str, db: str) -> None:
    """One phase in this process; prints its figures as JSON."""
    from slmgraph.indexing.stages import ingest as ing
    from slmgraph.indexing.stages.ingest_read import read_documents
    from slmgraph.model.backend import LlamaModel
    from slmgraph.model.gguf import default_model_path
    from slmgraph.store.db import Store

    model = LlamaModel(default_model_path(), n_ctx=512, n_threads=1)
    model_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    docs, _ = read_documents(input_dir)
    store = Store(db, create=True)
    kw = {}
    if "chunking" in inspect.signature(ing.ingest).parameters:  # as slmgraph.indexing.pipeline.run_index calls it
        kw["chunking"] = ing.chunking_key(str(model.fingerprint), 600, 100)
    res = ing.ingest(store, docs, model.tokenize, model.detokenize, 600, 100, **kw)
    store.close()
    dt = time.perf_counter() - t0
    print(json.dumps({"seconds": round(dt, 1), "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF)
                                                                  .ru_maxrss / 1024),
                      "model_rss_mb": round(model_rss), "text_units": res.text_units, "added": res.added_units,
                      "tokens": res.tokens}))


def main() -> None:
    """Generate the file, run both phases per checkout, write the results files."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=50)
    ap.add_argument("--code", action="append", default=None, metavar="LABEL=PATH",
                    help="a checkout to measure (repeatable; default: after=this checkout)")
    ap.add_argument("--name", default="ingest_large")
    ap.add_argument("--child", nargs=3, metavar=("PHASE", "INPUT", "DB"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(*a.child)
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import benchkit

    codes = [c.split("=", 1) for c in (a.code or [f"after={Path(__file__).resolve().parents[1]}"])]
    cond = benchkit.start()
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        corpus.mkdir()
        size = generate(corpus / "large.txt", a.mb)
        for label, code in codes:
            db = Path(tmp) / f"{label}.duckdb"
            env = dict(os.environ, PYTHONPATH=str(Path(code).resolve()))
            runs[label] = {}
            for phase in ("first", "resume"):
                out = subprocess.run([sys.executable, __file__, "--child", phase, str(corpus), str(db)], env=env,
                                     capture_output=True, text=True, check=True)
                runs[label][phase] = json.loads(out.stdout.strip().splitlines()[-1])
                print(label, phase, runs[label][phase], flush=True)
            runs[label]["index_mb"] = round(db.stat().st_size / 1e6, 1)
    cond = benchkit.finish(cond)
    md = [f"# Ingest of one {size / 1e6:.0f} MB file", "",
          "`python benchmarks/ingest_large.py " + " ".join(f"--code {label}={code}" for label, code in codes)
          + f" --mb {a.mb:g}`: one generated file of English-like prose, cut into 600/100-token text units with "
          "the bundled model's tokenizer and written to a new index (`first`), then the same again on that index "
          "(`resume`). Each phase in its own process; peak RSS includes the tokenizer's model.", "",
          "| checkout | phase | seconds | peak RSS (MB) | model alone (MB) | text units | new |",
          "|---|---|---:|---:|---:|---:|---:|"]
    for label, r in runs.items():
        for phase in ("first", "resume"):
            f = r[phase]
            md.append(f"| {label} | {phase} | {f['seconds']} | {f['peak_rss_mb']} | {f['model_rss_mb']} | "
                      f"{f['text_units']} | {f['added']} |")
    md += ["", benchkit.sentence(cond)]
    benchkit.write_results(a.name, md, {"conditions": cond, "bytes": size, "runs": runs})


if __name__ == "__main__":
    main()
