"""The index embedder's precision on this machine: what ``embed_precision = "auto"`` decides, and how far a
vector moves with the precision and, at each precision, with the batch it is encoded in (padding).

Texts: entities and text units of ``--db`` (seeded shuffle). Each text is encoded in the embed stage's batches
of 32, alone (batch 1) and in batches of 7 in reverse order; cos = cosine of a vector to the same text's in
batches of 32. This is the tolerance the equality tests allow a bf16 vector (tests/test_embed_precision.py).

Usage:
    PYTHONPATH=. python benchmarks/embed_precision.py --db INDEX.duckdb [--texts 80] [--name embed_precision]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchkit  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--texts", type=int, default=80)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--name", default="embed_precision")
    args = ap.parse_args()

    import duckdb
    import torch

    from slmgraph.indexing.stages.embed import Embedder, entity_text, native_bf16, resolve_precision

    cond = benchkit.start()
    con = duckdb.connect(args.db, read_only=True)
    half = args.texts // 2
    units = [t for (t,) in con.execute("SELECT text FROM text_units ORDER BY chunk_id LIMIT ?", [half]).fetchall()]
    ents = [entity_text(a, b, c or "") for a, b, c in con.execute(
        "SELECT name, type, description FROM entities ORDER BY norm LIMIT ?", [args.texts - half]).fetchall()]
    con.close()
    texts = units + ents
    random.Random(0).shuffle(texts)
    decision = {"auto": resolve_precision("auto"), "native_bf16": native_bf16(),
                "amx_tile": bool(torch.cpu._is_amx_tile_supported()),
                "avx512_bf16": bool(torch.cpu._is_avx512_bf16_supported()),
                "mkldnn_bf16": bool(torch.ops.mkldnn._is_mkldnn_bf16_supported()),
                "cpu_capability": torch.backends.cpu.get_cpu_capability(), "torch": torch.__version__}
    rows, ref = [], None
    for p in ("fp32", "bf16"):
        emb = Embedder(threads=args.threads, precision=p)
        base = emb.encode(texts)
        if ref is None:
            ref = base
        emb.batch_size = 1
        alone = emb.encode(texts)
        emb.batch_size = 7
        sevens = emb.encode(texts[::-1])[::-1]
        for name, v in (("batch 32 vs fp32 batch 32", base), ("alone vs batch 32", alone),
                        ("batch 7, reversed, vs batch 32", sevens)):
            other = ref if name.endswith("fp32 batch 32") else base
            cos = (v * other).sum(1)
            rows.append({"precision": p, "compare": name, "cos_min": round(float(cos.min()), 7),
                         "cos_mean": round(float(cos.mean()), 8),
                         "max_abs": float(f"{np.abs(v - other).max():.2e}")})
    cond = benchkit.finish(cond)
    md = [f"# The index embedder's precision: auto decides {decision['auto']}", "", benchkit.sentence(cond), "",
          f"torch {decision['torch']}, CPU capability {decision['cpu_capability']}; AMX tiles "
          f"{decision['amx_tile']}, AVX512-BF16 {decision['avx512_bf16']}, oneDNN bf16 {decision['mkldnn_bf16']}. "
          f"{len(texts)} texts of `{args.db}` (text units and entities), {args.threads} threads.", "",
          "| precision | vectors compared | cos min | cos mean | max abs difference |", "|---|---|---|---|---|"]
    md += [f"| {r['precision']} | {r['compare']} | {r['cos_min']} | {r['cos_mean']} | {r['max_abs']} |" for r in rows]
    paths = benchkit.write_results(args.name, md, {**cond, "decision": decision, "texts": len(texts), "rows": rows})
    print("\n".join(md))
    print(paths)


if __name__ == "__main__":
    main()
