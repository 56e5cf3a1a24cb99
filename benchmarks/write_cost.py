"""CPU seconds of the index's writes, stage by stage, for each of several checkouts (e.g. main and a branch).

For each ``--code LABEL=PATH`` a child process with ``PYTHONPATH=PATH`` builds an index of a slice of a
corpus (the first ``--units`` files of ``--input``, default 150 of podcast_large) the way ``slmgraph
index`` does on its default (LLM-free) route, with the model's work replaced by what a reference index
holds, so that what is measured is the cost of the stage around the writes:

* ``ingest``: reading is done before; ``ingest()`` cuts the documents with the bundled model's tokenizer
  and writes ``documents`` / ``text_units`` (as the pipeline calls it);
* ``extract``: each text unit's records (entity, relationship and concept mentions, read from
  ``--reference``, an index of the same files built by ``slmgraph index``) written with
  ``store_extraction`` in its own transaction, as ``run_extraction`` commits them (no spaCy);
* ``graph``, ``communities``, ``reports``: the stages themselves (entity resolution's embedding rule
  and the embed stage get seeded random unit vectors instead of the embedder's);
* ``embed``: ``run_embeddings`` with the bundled embedder's tokenizer (windows, keys) and the same
  random vectors (no forward pass).

Per stage: CPU seconds of the process (user + system, ``time.process_time``), of which inside the
index's transactions (the writes and their commits), the number of transactions, and wall-clock
seconds. Each child also prints a digest of every table it wrote (rows sorted), so the checkouts can
be shown to write the same index. CPU seconds on a shared machine still grow with contention (caches,
hyper-threads): compare checkouts measured in the same run, alternated (``--repeat``).

Usage::

    python benchmarks/write_cost.py --reference REF.duckdb [--input DIR] [--units 150]
        [--code main=/work/main] [--code branch=.] [--repeat 2] [--name write_cost]

Writes ``benchmarks/results/<name>.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

STAGES = ("ingest", "extract", "graph", "communities", "reports", "embed")
#: Tables compared between checkouts, with the columns left out (times of the run).
TABLES = {"documents": ("added_at",), "text_units": (), "extractions": (), "entity_mentions": (),
          "relationship_mentions": (), "concept_mentions": (), "concept_links": (), "entities": (),
          "entity_text_units": (), "relationships": (), "relationship_text_units": (), "concepts": (),
          "merge_log": (), "communities": (), "community_members": (), "community_reports": (), "embeddings": ()}


def slice_folder(src: Path, n: int, dst: Path) -> Path:
    """A folder of links to the first ``n`` files of ``src`` (sorted by name)."""
    dst.mkdir(parents=True, exist_ok=True)
    for f in sorted(p for p in src.iterdir() if p.is_file())[:n]:
        link = dst / f.name
        if not link.exists():
            link.symlink_to(f.resolve())
    return dst


def table_digest(con, table: str, leave_out=()) -> dict:
    """``{"rows", "digest"}`` of ``table``: 16 hex digits of sha256 over its rows (without ``leave_out``
    columns) as sorted reprs."""
    cols = [c for c, in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = ? "
                                    "ORDER BY column_index", [table]).fetchall() if c not in leave_out]
    rows = sorted(repr(r) for r in con.execute(f"SELECT {', '.join(cols)} FROM {table}").fetchall())
    return {"rows": len(rows), "digest": hashlib.sha256("\n".join(rows).encode()).hexdigest()[:16]}


class RandomVectors:
    """The embedder's tokenizer (windows, keys, word pieces) with seeded random unit vectors instead of its
    forward pass: each text's vector is a function of the text alone."""

    def __init__(self, inner):
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        for attr in ("windows", "piece_counts", "room", "max_seq_length"):
            if hasattr(inner, attr):
                setattr(self, attr, getattr(inner, attr))

    def encode(self, texts, progress=False):
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            out[i] = v / np.linalg.norm(v)
        return out


def child(input_dir: str, reference: str, db: str) -> None:
    """Build the index of ``input_dir`` into ``db`` stage by stage (see the module doc); prints JSON."""
    import duckdb

    from slmgraph.config.prompting import Prompts
    from slmgraph.config.settings import Settings
    from slmgraph.indexing.stages import extract as extract_mod
    from slmgraph.indexing.stages.communities import run_communities
    from slmgraph.indexing.stages.concepts import UnitConcepts
    from slmgraph.indexing.stages.embed import Embedder, run_embeddings
    from slmgraph.indexing.stages.extract_methods import Extraction
    from slmgraph.indexing.stages.graph import build_graph
    from slmgraph.indexing.stages.ingest import chunking_key, ingest
    from slmgraph.indexing.stages.ingest_read import read_documents
    from slmgraph.indexing.stages.reports import run_reports
    from slmgraph.model.backend import LlamaModel
    from slmgraph.model.client import ModelClient
    from slmgraph.model.gguf import default_model_path
    from slmgraph.store.db import Store, new_run_id

    settings = Settings()
    model = LlamaModel(default_model_path(), n_ctx=settings.n_ctx, n_threads=1)
    embedder = RandomVectors(Embedder(threads=1))
    docs, _ = read_documents(input_dir, follow_links=True)  # a sliced input is a folder of links
    ref = duckdb.connect(reference, read_only=True)
    records: dict[str, dict] = {}
    for row in ref.execute("SELECT chunk_id, cache_key, status, n_candidates, n_dropped, raw, n_ungrounded, gleanings, "
                           "evaluated_tokens, completion_tokens, n_left_out, n_choices, n_rejected "
                           "FROM extractions").fetchall():
        records[row[0]] = {"key": row[1], "fields": dict(zip(
            ("status", "n_candidates", "n_dropped", "raw", "n_ungrounded", "gleanings", "evaluated_tokens",
             "completion_tokens", "n_left_out", "n_choices", "n_rejected"), row[2:])),
            "entities": [], "relationships": [], "mentions": [], "links": []}
    for c, name, typ, desc in ref.execute("SELECT chunk_id, name, type, description FROM entity_mentions").fetchall():
        records[c]["entities"].append({"name": name, "type": typ, "description": desc})
    for c, s, t, desc, k in ref.execute("SELECT chunk_id, source_norm, target_norm, description, strength "
                                        "FROM relationship_mentions").fetchall():
        records[c]["relationships"].append({"source": s, "target": t, "description": desc, "strength": k})
    for c, norm, name, desc in ref.execute("SELECT chunk_id, norm, name, description FROM concept_mentions").fetchall():
        records[c]["mentions"].append({"norm": norm, "name": name, "description": desc})
    for c, a, b, kind, desc, n in ref.execute("SELECT chunk_id, concept_norm, other_norm, other_kind, description, "
                                              "sentences FROM concept_links").fetchall():
        records[c]["links"].append({"concept": a, "other": b, "other_kind": kind, "description": desc,
                                    "sentences": n})
    ref.close()

    store = Store(db, create=True)
    txn = {"cpu": 0.0, "n": 0}
    plain = Store.transaction

    @contextmanager
    def timed(self):
        t0 = time.process_time()
        try:
            with plain(self) as con:
                yield con
        finally:
            txn["cpu"] += time.process_time() - t0
            txn["n"] += 1

    Store.transaction = timed
    out: dict = {"stages": {}}

    @contextmanager
    def stage(name):
        c0, w0, t0, n0 = time.process_time(), time.perf_counter(), txn["cpu"], txn["n"]
        yield
        out["stages"][name] = {"cpu_s": round(time.process_time() - c0, 3),
                               "txn_cpu_s": round(txn["cpu"] - t0, 3), "transactions": txn["n"] - n0,
                               "wall_s": round(time.perf_counter() - w0, 3)}

    with stage("ingest"):
        ingest(store, docs, model.tokenize, model.detokenize, settings.chunk_size, settings.chunk_overlap,
               chunking=chunking_key(str(model.fingerprint), settings.chunk_size, settings.chunk_overlap))
    units = [c for c, in store.con.execute("SELECT chunk_id FROM text_units ORDER BY doc_id, ord").fetchall()]
    missing = [c for c in units if c not in records]
    extractions = []
    for c in units:
        if c in records:
            r = records[c]
            extractions.append((c, r["key"], Extraction(
                entities=r["entities"], relationships=r["relationships"], finish_reason="stop",
                concepts=UnitConcepts(mentions=r["mentions"], links=r["links"]), **r["fields"])))
    with stage("extract"):
        for c, key, ex in extractions:
            with store.transaction() as con:
                extract_mod.store_extraction(con, c, key, ex)
    client = ModelClient(model, store, new_run_id())
    with stage("graph"):
        build_graph(store, client.count, settings.entity_description_max_tokens, settings=settings,
                    embed=embedder.encode, client=client, prompts=Prompts(settings.prompts_dir), progress=False)
    with stage("communities"):
        run_communities(store, settings)
    with stage("reports"):
        run_reports(store, client, Prompts(settings.prompts_dir), settings, progress=False)
    with stage("embed"):
        run_embeddings(store, embedder, progress=False)
    out["text_units"] = len(units)
    out["units_without_reference"] = len(missing)
    out["tables"] = {t: table_digest(store.con, t, leave) for t, leave in TABLES.items()}
    out["tables"]["meta next_unit_no"] = {"rows": 1, "digest": store.get_meta("next_unit_no")}
    store.close()
    print("WRITE_COST " + json.dumps(out))


def run_child(code: str, input_dir: Path, reference: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(Path(code).resolve()))
    with tempfile.TemporaryDirectory(prefix="write_cost_") as tmp:
        proc = subprocess.run([sys.executable, __file__, "--child", str(input_dir), str(reference),
                               str(Path(tmp) / "x.duckdb")], env=env, capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith("WRITE_COST "):
            return json.loads(line[len("WRITE_COST "):])
    raise SystemExit(f"write_cost: the child for {code} failed:\n{proc.stderr[-3000:]}")


def main() -> None:
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    import benchkit

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--input", type=Path, default=benchkit.DATA / "corpora" / "podcast_large" / "input")
    ap.add_argument("--units", type=int, default=150, help="first N files of --input (default 150)")
    ap.add_argument("--reference", type=Path, required=True,
                    help="an index of the same files built by 'slmgraph index' (its extraction records are replayed)")
    ap.add_argument("--code", action="append", default=[], metavar="LABEL=PATH",
                    help="a checkout to measure (repeatable); default main=/work/main and branch=.")
    ap.add_argument("--repeat", type=int, default=1, help="runs per checkout, alternated; the median is reported")
    ap.add_argument("--name", default="write_cost")
    args = ap.parse_args()
    codes = dict(c.split("=", 1) for c in (args.code or ["main=/work/main", f"branch={here.parent}"]))
    cond = benchkit.start()
    runs: dict[str, list[dict]] = {label: [] for label in codes}
    with tempfile.TemporaryDirectory(prefix="write_cost_in_") as tmp:
        folder = slice_folder(args.input, args.units, Path(tmp) / "input")
        for _ in range(args.repeat):
            for label, code in codes.items():
                runs[label].append(run_child(code, folder, args.reference))
                print(f"{label}: " + ", ".join(f"{s} {runs[label][-1]['stages'][s]['cpu_s']:.2f}" for s in STAGES),
                      flush=True)
    cond = benchkit.finish(cond)
    med = {label: {s: {k: statistics.median(r["stages"][s][k] for r in rs)
                       for k in ("cpu_s", "txn_cpu_s", "transactions", "wall_s")} for s in STAGES}
           for label, rs in runs.items()}
    labels = list(codes)
    same = {t: len({json.dumps(runs[label][0]["tables"][t]) for label in labels}) == 1
            for t in runs[labels[0]][0]["tables"]}
    first = runs[labels[0]][0]
    lines = [f"# Write cost per stage: {', '.join(labels)}", "",
             f"`python benchmarks/write_cost.py --units {args.units} --repeat {args.repeat} "
             + " ".join(f"--code {k}={v}" for k, v in codes.items()) + "` on the first "
             f"{args.units} files of `{args.input.name if args.input.name != 'input' else args.input.parent.name}` "
             f"({first['text_units']} text units; extraction records replayed from a reference index, "
             f"{first['units_without_reference']} units without one). CPU seconds of the child process per "
             f"stage (median of {args.repeat}), of which inside the index's transactions (the writes and their "
             "commits).", "", benchkit.sentence(cond), "",
             "| stage | " + " | ".join(f"{label} CPU s | {label} in transactions s | {label} transactions"
                                     for label in labels) + " |",
             "|---|" + "---:|" * (3 * len(labels))]
    for s in STAGES:
        lines.append(f"| {s} | " + " | ".join(f"{med[label][s]['cpu_s']:.2f} | {med[label][s]['txn_cpu_s']:.2f} | "
                                              f"{med[label][s]['transactions']:.0f}" for label in labels) + " |")
    tot = {label: sum(med[label][s]["cpu_s"] for s in STAGES) for label in labels}
    txt = {label: sum(med[label][s]["txn_cpu_s"] for s in STAGES) for label in labels}
    lines.append("| all six | " + " | ".join(f"{tot[label]:.2f} | {txt[label]:.2f} | "
                                           f"{sum(med[label][s]['transactions'] for s in STAGES):.0f}"
                                           for label in labels) + " |")
    lines += ["", "Tables written: " + ("every table the same in all checkouts (rows and content, order aside)."
                                        if all(same.values()) else
                                        "**differ**: " + ", ".join(t for t, ok in same.items() if not ok) + "."), ""]
    data = {"conditions": cond, "units": args.units, "codes": codes, "repeat": args.repeat, "median": med,
            "runs": runs, "tables_same": same}
    md, js = benchkit.write_results(args.name, lines, data)
    print("\n".join(lines))
    print(f"wrote {md} and {js}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(*sys.argv[2:5])
    else:
        main()
