"""The embedder's options side by side on the same texts: throughput (texts/s, word pieces/s, CPU seconds)
and agreement with today's vectors (cosine to sentence-transformers on torch fp32).

Options: sentence-transformers on torch fp32 at several batch sizes (texts sorted longest first, as
:func:`slmgraph.indexing.stages.embed.embed_items` does); torch under bfloat16 autocast (``embed_precision =
"bf16"``); torch dynamic int8 (``torch.ao.quantization.quantize_dynamic`` on
the Linear layers); ONNX Runtime fp32 on a graph exported here from the shipped weights
(:mod:`slmgraph.indexing.stages.embed_onnx`); ONNX Runtime dynamic int8 of that graph; OpenVINO's CPU plugin
on the same graph at f32 and with its bf16 inference hint, where ``openvino`` is installed (not a dependency of
slmgraph: measured to decide whether it earns one). Each option runs ``--rounds`` times,
interleaved, and its best round is kept (contention only slows a round down).

The texts: a seeded sample of what the embed stage encodes for an index (``--db``: entities, text units,
their further windows, reports).

Usage:
    PYTHONPATH=. python benchmarks/embed_options.py --db INDEX.duckdb [--sample 480] [--rounds 2] [--name embed_options]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchkit  # noqa: E402


def sample_texts(db: str, n: int, embedder, seed: int = 0) -> list[str]:
    """``n`` texts drawn (seeded) from every item the embed stage encodes for the index ``db``."""
    import duckdb

    from slmgraph.indexing.stages.embed import entity_text, further_windows

    con = duckdb.connect(db, read_only=True)
    ents = [entity_text(a, b, c or "") for a, b, c in con.execute(
        "SELECT name, type, description FROM entities ORDER BY norm").fetchall()]
    units = [t for (t,) in con.execute("SELECT text FROM text_units ORDER BY chunk_id").fetchall()]
    reps = [t or "" for (t,) in con.execute("SELECT full_text FROM community_reports ORDER BY community_id").fetchall()]
    con.close()
    wins = [w for ws in further_windows(embedder, units) for w in ws]
    pool = ents + units + wins + reps
    rng = random.Random(seed)
    return rng.sample(pool, min(n, len(pool))), {"entity": len(ents), "text_unit": len(units),
                                                  "text_unit_window": len(wins), "report": len(reps)}


def ov_runner(st_model, onnx_path: Path, threads: int, hint: str):
    """An :class:`slmgraph.indexing.stages.embed_onnx.OnnxRunner` whose session is the encoder graph ``onnx_path``
    compiled by OpenVINO's CPU plugin (``hint``: ``"f32"`` or ``"bf16"``): the same batching and pooling."""
    import openvino as ov

    from slmgraph.indexing.stages.embed_onnx import INPUTS, OnnxRunner

    request = ov.Core().compile_model(str(onnx_path), "CPU", {
        "INFERENCE_PRECISION_HINT": hint, "INFERENCE_NUM_THREADS": threads,
        "PERFORMANCE_HINT": "LATENCY"}).create_infer_request()

    class Session:
        """ONNX Runtime's ``run(None, feed)`` over the OpenVINO infer request."""

        def run(self, _outputs, feed):
            return [request.infer(feed)[0]]

    runner = OnnxRunner.__new__(OnnxRunner)
    runner.st, runner.session, runner.path, runner.inputs = st_model, Session(), Path(onnx_path), list(INPUTS)
    return runner


def run(fn, texts: list[str]) -> tuple[np.ndarray, float, float]:
    w0, c0 = time.perf_counter(), time.process_time()
    v = fn(texts)
    return v, time.perf_counter() - w0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--sample", type=int, default=480)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--name", default="embed_options")
    ap.add_argument("--options", default="", help="option names to run besides today's, separated by semicolons "
                                                  "(default: all)")
    args = ap.parse_args()

    import torch

    from slmgraph.indexing.stages.embed import Embedder, embed_items, window_keys
    from slmgraph.indexing.stages.embed_onnx import OnnxRunner, export_onnx

    cond = benchkit.start()
    base = Embedder(threads=args.threads, batch_size=32)
    texts, pool = sample_texts(args.db, args.sample, base)
    _, lengths = window_keys(base, texts)
    pieces = sum(lengths)

    def st(bs: int, emb=base):
        def f(tx):
            emb.batch_size = bs
            return embed_items(emb, tx, lengths)
        return f

    bf16 = Embedder(threads=args.threads, batch_size=32, precision="bf16")
    q8 = Embedder(threads=args.threads, batch_size=32)
    q8.model = torch.ao.quantization.quantize_dynamic(q8.model, {torch.nn.Linear}, dtype=torch.qint8)

    tmp = Path(tempfile.mkdtemp(prefix="slmgraph-onnx-"))
    t0 = time.perf_counter()
    f32 = export_onnx(base.model, tmp / "model.onnx")
    export_s = time.perf_counter() - t0
    from onnxruntime.quantization import QuantType, quantize_dynamic

    t0 = time.perf_counter()
    quantize_dynamic(str(f32), str(tmp / "model_int8.onnx"), weight_type=QuantType.QInt8)
    quant_s = time.perf_counter() - t0
    ort32 = Embedder(threads=args.threads, batch_size=32)
    ort32.runner = OnnxRunner(ort32.model, ort32.model_dir, threads=args.threads, onnx_path=f32)
    ort8 = Embedder(threads=args.threads, batch_size=32)
    ort8.runner = OnnxRunner(ort8.model, ort8.model_dir, threads=args.threads, onnx_path=tmp / "model_int8.onnx")

    def ort(emb, bs):
        def f(tx):
            emb.batch_size = bs
            return embed_items(emb, tx, lengths)
        return f

    options = {
        "torch fp32, batch 32 (today)": st(32),
        "torch fp32, batch 64": st(64),
        "torch bf16 autocast, batch 32": st(32, bf16),
        "torch dynamic int8, batch 32": st(32, q8),
        "ONNX Runtime fp32, batch 32": ort(ort32, 32),
        "ONNX Runtime int8, batch 32": ort(ort8, 32),
    }
    import importlib.util

    if importlib.util.find_spec("openvino") is not None:
        for hint in ("f32", "bf16"):
            e = Embedder(threads=args.threads, batch_size=32)
            e.runner = ov_runner(e.model, f32, args.threads, hint)
            options[f"OpenVINO {hint}, batch 32"] = ort(e, 32)
    if args.options:
        keep = {o.strip() for o in args.options.split(";")} | {"torch fp32, batch 32 (today)"}
        options = {k: v for k, v in options.items() if k in keep}
    best: dict[str, tuple[float, float]] = {}
    vecs: dict[str, np.ndarray] = {}
    warm = texts[:16]
    for name, fn in options.items():
        fn(warm)
    for _ in range(args.rounds):
        for name, fn in options.items():
            v, wall, cpu = run(fn, texts)
            print(f"{name}: wall {wall:.1f} s, CPU {cpu:.1f} s, load {benchkit.loadavg()}", file=sys.stderr, flush=True)
            vecs[name] = v
            if name not in best or wall < best[name][0]:
                best[name] = (wall, cpu)
    ref = vecs["torch fp32, batch 32 (today)"]
    rows = []
    for name in options:
        wall, cpu = best[name]
        cos = (vecs[name] * ref).sum(1)
        rows.append({"option": name, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                     "texts_per_s": round(len(texts) / wall, 1), "pieces_per_s": round(pieces / wall),
                     "cpu_s_per_100_texts": round(100 * cpu / len(texts), 2),
                     "cos_min": round(float(cos.min()), 5), "cos_mean": round(float(cos.mean()), 6)})
    cond = benchkit.finish(cond)
    data = {**cond, "db": args.db, "pool": pool, "texts": len(texts), "word_pieces": pieces,
            "threads": args.threads, "rounds": args.rounds, "onnx_export_s": round(export_s, 2),
            "int8_quantize_s": round(quant_s, 2), "options": rows}
    md = [f"# Embedder options: all-MiniLM-L6-v2 on {len(texts)} texts of an index ({pieces:,} word pieces)", "",
          benchkit.sentence(cond), "",
          f"Texts: a seeded sample of the items of `{args.db}` ({pool}). torch / ONNX Runtime / OpenVINO with "
          f"{args.threads} intra-op threads; texts sorted longest first in steps of 256 (as the embed stage "
          f"does). Best of {args.rounds} interleaved rounds. ONNX export {export_s:.1f} s, int8 quantization "
          f"{quant_s:.1f} s (once per model). cos = cosine of each vector to today's (torch fp32, batch 32).", "",
          "| option | wall s | CPU s | texts/s | word pieces/s | CPU s per 100 texts | cos min | cos mean |",
          "|---|---|---|---|---|---|---|---|"]
    md += [f"| {r['option']} | {r['wall_s']} | {r['cpu_s']} | {r['texts_per_s']} | {r['pieces_per_s']:,} | "
           f"{r['cpu_s_per_100_texts']} | {r['cos_min']} | {r['cos_mean']} |" for r in rows]
    paths = benchkit.write_results(args.name, md, data)
    print("\n".join(md))
    print(paths)


if __name__ == "__main__":
    main()
