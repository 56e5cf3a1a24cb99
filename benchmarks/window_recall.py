"""Recall of basic-search retrieval with and without vectors per further window of a text unit, and
what the windows cost the embed stage.

all-MiniLM-L6-v2 reads the first 256 word pieces of a text; a text unit is about 600 model tokens, so
its later sentences were read by no vector. With further windows (``slmgraph.indexing.stages.embed.further_windows``)
every sentence is read whole by some vector and a unit is ranked by its best window.

Corpus: the HotpotQA sample (``gold/hotpotqa_sample``: 20 questions, 10 paragraphs each, 200
passages), built two ways in ``--work``:

* ``docs``: one document per question, its 10 paragraphs (title line, then text) in their order --
  about 1,000 words, so 2-3 text units whose later paragraphs lie past the embedder's window;
* ``passages``: one document per paragraph (about 100 words: one text unit, inside the window).

Each corpus is indexed twice with the default settings but ``--extractor nlp --no-reports`` (no
model call; the bundled GGUF's tokenizer cuts the text units): once with an embedder that computes no
further window (what main did) and once with the windows. Measured per build: the embed stage's
vectors computed, word pieces encoded and seconds (wall clock, with the load average: timings on a
shared machine). Recall@k: the share of the questions' supporting-fact sentences that lie in one of
the ``k`` text units basic search ranks first (by the text-unit vector alone, or by the best window).

Usage::

    python benchmarks/window_recall.py [--work DIR] [--name window_recall]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)
from slmgraph.model.backend import load_model
from slmgraph.config.settings import Settings
from slmgraph.indexing.stages.embed import Embedder
from slmgraph.indexing.stages.embed_lookup import load_vectors, nearest, nearest_units, unit_matrix
from slmgraph.indexing.pipeline import run_index
from slmgraph.store.db import Store

HOTPOT = benchkit.DATA / "gold" / "hotpotqa_sample" / "hotpotqa_sample20.json"
KS = (1, 3, 5, 10)


class NoWindows(Embedder):
    """The bundled embedder without further windows: one vector per text unit, as before."""

    def __init__(self):
        super().__init__()
        self.room = None


def build(questions: list[dict], work: Path, mode: str) -> Path:
    """Write the ``mode`` corpus (``docs`` or ``passages``) into ``work/mode`` and return its folder."""
    root = work / mode
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    for qi, q in enumerate(questions):
        paras = [f"{title}\n{''.join(sents).strip()}" for title, sents in q["context"]]
        if mode == "docs":
            (root / f"q{qi:02d}.txt").write_text("\n\n".join(paras) + "\n", encoding="utf-8")
        else:
            for pi, p in enumerate(paras):
                (root / f"q{qi:02d}_p{pi}.txt").write_text(p + "\n", encoding="utf-8")
    return root


def facts(q: dict) -> list[str]:
    """The supporting-fact sentences of a question, whitespace folded."""
    ctx = {title: sents for title, sents in q["context"]}
    out = []
    for title, idx in q["supporting_facts"]:
        sents = ctx.get(title) or []
        if idx < len(sents):
            out.append(" ".join(sents[idx].split()))
    return [f for f in out if f]


def recall(store: Store, questions: list[dict], embedder, windows: bool) -> dict:
    """Recall@k of the supporting facts over the text units ranked first, per ``k`` in :data:`KS`."""
    text = {cid: " ".join(t.split()) for cid, t in store.con.execute("SELECT chunk_id, text FROM text_units").fetchall()}
    if windows:
        _, mat, owners = unit_matrix(store)
    else:
        ids, mat = load_vectors(store, "text_unit")
    qvs = embedder.encode([q["question"] for q in questions])
    found = {k: 0 for k in KS}
    total = 0
    for q, qv in zip(questions, qvs):
        hits = nearest_units(qv, owners, mat, max(KS)) if windows else nearest(qv, ids, mat, max(KS))
        for f in facts(q):
            total += 1
            for k in KS:
                if any(f in text[cid] for cid, _ in hits[:k]):
                    found[k] += 1
    return {"facts": total, **{f"recall@{k}": round(found[k] / total, 3) for k in KS}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=None, help="folder for the corpora and indexes (default: a temp dir)")
    ap.add_argument("--name", default="window_recall")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="window_recall_"))
    questions = json.loads(HOTPOT.read_text(encoding="utf-8"))
    settings = Settings(extractor="nlp", reports="none")
    model = load_model(None, 8192, settings.n_threads, 42)
    cond = benchkit.start()
    rows = []
    for mode in ("docs", "passages"):
        corpus = build(questions, work, mode)
        for label, factory in (("before", NoWindows), ("after", Embedder)):
            db = work / f"{mode}_{label}.duckdb"
            db.unlink(missing_ok=True)
            emb_holder = {}

            def make(factory=factory, emb_holder=emb_holder):
                emb_holder["e"] = factory()
                return emb_holder["e"]

            t0 = time.perf_counter()
            out = run_index(corpus, db, settings, progress=False, model=model, embedder_factory=make,
                            say=lambda m: None)
            wall = time.perf_counter() - t0
            store = Store(db, read_only=True)
            units = store.con.execute("SELECT count(*) FROM text_units").fetchone()[0]
            r = recall(store, questions, emb_holder["e"], windows=label == "after")
            store.close()
            e = out["embed"]
            rows.append({"corpus": mode, "label": label, "text_units": units, "vectors": e["embedded"],
                         "per_kind": e["per_kind"], "word_pieces": e["word_pieces"],
                         "embed_seconds": round(e["seconds"], 1), "index_seconds": round(wall, 1), **r})
            print(json.dumps(rows[-1]))
    cond = benchkit.finish(cond)
    md = ["# Recall with vectors per further window of a text unit",
          "",
          "`python benchmarks/window_recall.py` (HotpotQA sample: 20 questions, 200 paragraphs; "
          "`--extractor nlp --no-reports`, bundled all-MiniLM-L6-v2). *before*: one vector per text unit "
          "(its first 256 word pieces); *after*: plus one vector per further window, a unit ranked by its "
          "best window. Recall@k: share of the supporting-fact sentences inside the first k text units "
          "basic search ranks.",
          "",
          "| corpus | build | text units | vectors computed | of them windows | word pieces encoded | "
          "embed s | " + " | ".join(f"recall@{k}" for k in KS) + " |",
          "|---|---|---:|---:|---:|---:|---:|" + "---:|" * len(KS)]
    for r in rows:
        win = r["per_kind"].get("text_unit_window", {}).get("embedded", 0)
        md.append(f"| {r['corpus']} | {r['label']} | {r['text_units']} | {r['vectors']} | {win} | "
                  f"{r['word_pieces']:,} | {r['embed_seconds']} | "
                  + " | ".join(f"{r[f'recall@{k}']:.3f}" for k in KS) + " |")
    md += ["", f"Supporting-fact sentences: {rows[0]['facts']}. Embed seconds are wall clock of the whole embed "
           "stage (entities and text units) on a shared machine: compare the word pieces.", "",
           benchkit.sentence(cond)]
    benchkit.write_results(args.name, md, {"conditions": cond, "rows": rows})


if __name__ == "__main__":
    main()
