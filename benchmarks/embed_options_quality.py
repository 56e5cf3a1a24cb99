"""The embedder's options measured against retrieval quality: CPU seconds per 100k word pieces, cosine to
today's vectors, recall@10 on the HotpotQA sample and the helpfulness AUC on the podcast sample's on- and
off-topic questions.

Options (each an ``encode(texts)`` over the bundled all-MiniLM-L6-v2): sentence-transformers on torch fp32 at
batch 16, 32 (today), 64 and 128, texts sorted longest first in steps of 256 (as
:func:`slmgraph.indexing.stages.embed.embed_items` does) and, for batch 32, unsorted (what length buckets
save); torch under bfloat16 autocast (``embed_precision = "bf16"``); torch dynamic int8 on the Linear layers; ONNX Runtime fp32 on a graph exported from the shipped
weights (:mod:`slmgraph.indexing.stages.embed_onnx`) and its dynamic int8.

* CPU: ``time.process_time`` (every thread of this process) over a seeded sample of what the embed stage
  encodes for ``--db`` (entities, text units, further windows, reports); cos = each vector's cosine to today's.
* recall@10: the HotpotQA sample (20 questions, 10 paragraphs each) as one document per question (the
  ``docs`` corpus of ``benchmarks/window_recall.py``), indexed once (``--extractor nlp``, no reports); each
  option re-encodes its text units and further windows; a text unit ranks by its best window; recall@10 is
  the share of supporting-fact sentences inside the 10 first text units.
* AUC: ``--sample-db``, an index of the podcast sample; each option re-encodes its level-0 reports; per
  question the best report cosine; ROC AUC of the 10 on-topic questions' best against the 10 off-topic ones'.

Questions are embedded twice: by the query-time embedder (:func:`slmgraph.query.question_embed.question_embedder`,
fp32 NumPy, what ``slmgraph query`` uses whatever made the index) and by the option itself.

Usage:
    PYTHONPATH=. python benchmarks/embed_options_quality.py --db INDEX.duckdb --sample-db PODCAST_SAMPLE.duckdb
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchkit  # noqa: E402
import window_recall  # noqa: E402

PIECES_UNIT = 100_000


def hotpot_index(work: Path) -> tuple[Path, list[dict]]:
    """The HotpotQA ``docs`` corpus indexed LLM-free with today's embedder: ``(index path, questions)``."""
    from slmgraph.config.settings import Settings
    from slmgraph.indexing.pipeline import run_index
    from slmgraph.model.backend import load_model

    questions = json.loads(window_recall.HOTPOT.read_text(encoding="utf-8"))
    corpus = window_recall.build(questions, work, "docs")
    db = work / "hotpot.duckdb"
    if not db.is_file():
        s = Settings(extractor="nlp", reports="none")
        run_index(corpus, db, s, progress=False, model=load_model(None, 8192, s.n_threads, 42), say=lambda m: None)
    return db, questions


def recall_at(qvecs: np.ndarray, owners: list[str], mat: np.ndarray, text: dict, questions: list[dict], k: int) -> float:
    """Share of the questions' supporting-fact sentences inside the ``k`` text units ranked first (best window)."""
    from slmgraph.indexing.stages.embed_lookup import nearest_units

    found = total = 0
    for q, qv in zip(questions, qvecs):
        hits = [cid for cid, _ in nearest_units(qv, owners, mat, k)]
        for f in window_recall.facts(q):
            total += 1
            found += any(f in text[c] for c in hits)
    return found / max(1, total)


def auc(qvecs: np.ndarray, rmat: np.ndarray, n_on: int) -> float:
    from slmgraph.query.scoring import roc_auc

    best = (qvecs @ rmat.T).max(1).tolist()
    return roc_auc(best[:n_on], best[n_on:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True, help="an index whose items give the CPU sample")
    ap.add_argument("--sample-db", required=True, help="an index of the podcast sample (with reports)")
    ap.add_argument("--sample", type=int, default=240)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--options", default="", help="option names to run, separated by semicolons (default: all)")
    ap.add_argument("--cpu-only", action="store_true",
                    help="CPU and cosine only, no recall or AUC (for options whose vectors equal today's)")
    ap.add_argument("--name", default="embed_options_quality")
    args = ap.parse_args()

    import duckdb
    import torch

    from embed_options import sample_texts
    from global_answers import OFF_TOPIC, SHARED, load_questions
    from slmgraph.indexing.stages.embed import Embedder, embed_items, further_windows, window_keys
    from slmgraph.indexing.stages.embed_onnx import OnnxRunner, export_onnx
    from slmgraph.query.question_embed import question_embedder

    work = args.work or Path(tempfile.mkdtemp(prefix="embed_quality_"))
    work.mkdir(parents=True, exist_ok=True)
    cond = benchkit.start()
    base = Embedder(threads=args.threads, batch_size=32)
    texts, pool = sample_texts(args.db, args.sample, base)
    _, lengths = window_keys(base, texts)
    pieces = sum(lengths)

    # Quality corpora, made once with today's embedder's windows.
    hdb, hq = hotpot_index(work)
    con = duckdb.connect(str(hdb), read_only=True)
    units = con.execute("SELECT chunk_id, text FROM text_units ORDER BY chunk_id").fetchall()
    con.close()
    htext = {c: " ".join(t.split()) for c, t in units}
    h_items, h_owners = [], []
    for (cid, t), wins in zip(units, further_windows(base, [t for _, t in units])):
        for x in [t] + wins:
            h_items.append(x)
            h_owners.append(cid)
    _, h_len = window_keys(base, h_items)
    con = duckdb.connect(args.sample_db, read_only=True)
    reports = [t or "" for (t,) in con.execute(
        "SELECT full_text FROM community_reports WHERE level = 0 ORDER BY community_id").fetchall()]
    con.close()
    _, r_len = window_keys(base, reports)
    on_topic = load_questions(SHARED / "global_questions_sample.csv")
    g_questions = on_topic + OFF_TOPIC
    qe = question_embedder()
    hq_fp32 = qe.encode([q["question"] for q in hq])
    gq_fp32 = qe.encode(g_questions)

    def sorted_fn(emb, bs, lens):
        def f(tx):
            emb.batch_size = bs
            return embed_items(emb, tx, lens)
        return f

    def unsorted_fn(emb, bs):
        def f(tx):
            # Batches in the texts' own order: no length buckets at all.
            out = []
            for s in range(0, len(tx), bs):
                out.append(emb.model.encode(tx[s:s + bs], batch_size=bs, normalize_embeddings=True,
                                            convert_to_numpy=True))
            return np.concatenate(out).astype(np.float32) if out else np.zeros((0, emb.dim), np.float32)
        return f

    wanted = [o.strip() for o in args.options.split(";") if o.strip()]
    q8 = ort32 = ort8 = None
    if not wanted or any("int8" in o or "ONNX" in o for o in wanted):
        q8 = Embedder(threads=args.threads, batch_size=32)
        q8.model = torch.ao.quantization.quantize_dynamic(q8.model, {torch.nn.Linear}, dtype=torch.qint8)
    if not wanted or any("ONNX" in o for o in wanted):
        tmp = Path(tempfile.mkdtemp(prefix="slmgraph-onnx-"))
        f32 = export_onnx(base.model, tmp / "model.onnx")
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(str(f32), str(tmp / "model_int8.onnx"), weight_type=QuantType.QInt8)
        ort32 = Embedder(threads=args.threads, batch_size=32)
        ort32.runner = OnnxRunner(ort32.model, ort32.model_dir, threads=args.threads, onnx_path=f32)
        ort8 = Embedder(threads=args.threads, batch_size=32)
        ort8.runner = OnnxRunner(ort8.model, ort8.model_dir, threads=args.threads,
                                 onnx_path=tmp / "model_int8.onnx")

    bf16 = Embedder(threads=args.threads, batch_size=32, precision="bf16")
    options = {
        "torch fp32, batch 32 (today)": (base, 32, True),
        "torch bf16 autocast, batch 32": (bf16, 32, True),
        "torch fp32, batch 16": (base, 16, True),
        "torch fp32, batch 64": (base, 64, True),
        "torch fp32, batch 128": (base, 128, True),
        "torch fp32, batch 32, no length buckets": (base, 32, False),
        "torch dynamic int8, batch 32": (q8, 32, True),
        "ONNX Runtime fp32, batch 32": (ort32, 32, True),
        "ONNX Runtime int8, batch 32": (ort8, 32, True),
    }
    names = [n for n in options if not wanted or n in wanted or n.startswith("torch fp32, batch 32 (today)")]
    rows, ref = [], None
    for name in names:
        emb, bs, buckets = options[name]
        fn = sorted_fn(emb, bs, lengths) if buckets else unsorted_fn(emb, bs)
        fn(texts[:8])  # warm
        w0, c0 = time.perf_counter(), time.process_time()
        v = fn(texts)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        if ref is None:
            ref = v
        cos = (v * ref).sum(1)
        row = {"option": name, "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
               "cpu_s_per_100k_pieces": round(cpu * PIECES_UNIT / pieces, 1),
               "cos_min": round(float(cos.min()), 5), "cos_mean": round(float(cos.mean()), 6),
               "recall10_fp32_questions": None, "recall10_own_questions": None,
               "auc_fp32_questions": None, "auc_own_questions": None, "loadavg": benchkit.loadavg()}
        if not args.cpu_only:
            hv = sorted_fn(emb, bs, h_len)(h_items) if buckets else unsorted_fn(emb, bs)(h_items)
            rv = sorted_fn(emb, bs, r_len)(reports) if buckets else unsorted_fn(emb, bs)(reports)
            hq_own = emb.encode([q["question"] for q in hq])
            gq_own = emb.encode(g_questions)
            row.update({"recall10_fp32_questions": round(recall_at(hq_fp32, h_owners, hv, htext, hq, 10), 3),
                        "recall10_own_questions": round(recall_at(hq_own, h_owners, hv, htext, hq, 10), 3),
                        "auc_fp32_questions": round(auc(gq_fp32, rv, len(on_topic)), 3),
                        "auc_own_questions": round(auc(gq_own, rv, len(on_topic)), 3)})
        print(json.dumps(row), file=sys.stderr, flush=True)
        rows.append(row)
    cond = benchkit.finish(cond)
    data = {**cond, "db": args.db, "sample_db": args.sample_db, "pool": pool, "texts": len(texts),
            "word_pieces": pieces, "threads": args.threads, "hotpot_vectors": len(h_items),
            "reports_level0": len(reports), "questions": {"on_topic": len(on_topic), "off_topic": len(OFF_TOPIC)},
            "options": rows}
    md = ["# Embedder options against retrieval quality: all-MiniLM-L6-v2", "", benchkit.sentence(cond), "",
          f"CPU: {len(texts)} texts sampled (seeded) from `{args.db}` ({pool}), {pieces:,} word pieces, "
          f"{args.threads} intra-op threads, one round each (CPU seconds of this process, all threads). "
          f"cos: each vector's cosine to today's. recall@10: HotpotQA sample, 20 questions, "
          f"{len(h_items)} text-unit and window vectors. AUC: {len(reports)} level-0 reports of `{args.sample_db}`, "
          f"{len(on_topic)} on-topic against {len(OFF_TOPIC)} off-topic questions. Questions by the query-time "
          "embedder (fp32, NumPy) / by the option itself.", "",
          "| option | CPU s per 100k word pieces | cos min | cos mean | recall@10 (fp32 q / own q) | "
          "AUC (fp32 q / own q) |", "|---|---|---|---|---|---|"]
    md += [f"| {r['option']} | {r['cpu_s_per_100k_pieces']} | {r['cos_min']} | {r['cos_mean']} | "
           f"{r['recall10_fp32_questions']} / {r['recall10_own_questions']} | "
           f"{r['auc_fp32_questions']} / {r['auc_own_questions']} |" for r in rows]
    paths = benchkit.write_results(args.name, md, data)
    print("\n".join(md))
    print(paths)


if __name__ == "__main__":
    main()
