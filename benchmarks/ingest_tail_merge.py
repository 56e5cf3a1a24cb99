"""What merging short trailing text units saves: files, text units and tokens of the ``ingest`` stage alone.

Issue 12: the podcast files are ~640 tokens each, so 600/100 token windows cut
each into a 600-token unit plus a unit of which 100 tokens are overlap and
~40 are new, and nearly half of all extraction calls read those ~40 tokens.
``slmgraph.indexing.stages.ingest`` now cuts units between words and merges a trailing unit
that adds fewer than ``TAIL_SHARE`` x chunk size new tokens into the unit
before it. This script chunks a corpus three ways with the model's own
tokenizer (no model call, no index):

1. ``main (token windows)``: the previous rule, fixed token windows
   (``chunk_tokens`` with no merge), as main cut them before this change;
2. ``word cuts, no merge``: units cut between words, ``tail_share = 0``;
3. ``word cuts + tail merge``: the default (``TAIL_SHARE``).

Per way: documents, text units, tokens summed over units (what extraction
reads, overlaps counted again), units over the chunk size, and the largest
unit. Fewer unit tokens and units = fewer extraction prompts.

Usage::

    python benchmarks/ingest_tail_merge.py [--input DIR] [--chunk-size 600] [--chunk-overlap 100]

Writes ``benchmarks/results/ingest_tail_merge.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from slmgraph.indexing.stages.ingest_chunk import TAIL_SHARE, chunk_tokens, make_text_units
from slmgraph.indexing.stages.ingest_read import read_documents
from slmgraph.model.backend import LlamaModel
from slmgraph.model.gguf import default_model_path

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)

PODCAST = benchkit.PODCAST


def main() -> None:
    """Chunk the corpus three ways and write the results files."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", default=str(PODCAST))
    ap.add_argument("--chunk-size", type=int, default=600)
    ap.add_argument("--chunk-overlap", type=int, default=100)
    a = ap.parse_args()
    model = LlamaModel(default_model_path(), n_ctx=512, n_threads=1)
    t0 = time.perf_counter()
    docs, warnings = read_documents(a.input)
    ways: dict[str, dict] = {}
    size, ov = a.chunk_size, a.chunk_overlap
    rows = {"main (token windows)": [], "word cuts, no merge": [], f"word cuts + tail merge ({TAIL_SHARE})": []}
    doc_tokens = 0
    for d in docs:
        toks = model.tokenize(d.text)
        doc_tokens += len(toks)
        rows["main (token windows)"] += [e - s for s, e in chunk_tokens(toks, size, ov)]
        u0, _ = make_text_units(d, model.tokenize, model.detokenize, size, ov, tail_share=0.0)
        rows["word cuts, no merge"] += [u.n_tokens for u in u0]
        u1, _ = make_text_units(d, model.tokenize, model.detokenize, size, ov)
        rows[f"word cuts + tail merge ({TAIL_SHARE})"] += [u.n_tokens for u in u1]
    for name, ns in rows.items():
        ways[name] = {"text_units": len(ns), "unit_tokens": sum(ns), "over_chunk_size": sum(n > size for n in ns),
                      "largest_unit": max(ns), "units_under_150_tokens": sum(n < 150 for n in ns)}
    base = ways["main (token windows)"]
    res = {"corpus": a.input, "documents": len(docs), "skipped": len(warnings), "document_tokens": doc_tokens,
           "chunk_size": size, "chunk_overlap": ov, "tail_share": TAIL_SHARE, "ways": ways,
           "tokenizer": model.name, "seconds": round(time.perf_counter() - t0, 1),
           "machine": benchkit.machine()}
    lines = [
        "# Ingest: text units of mere overlap (issue 12)", "",
        f"Corpus `{Path(a.input).name}` ({a.input}): {len(docs)} documents, {doc_tokens:,} tokens "
        f"({model.name} tokenizer), chunk size {size}, overlap {ov}, tail share {TAIL_SHARE} "
        f"(a trailing unit adding < {int(TAIL_SHARE * size)} new tokens merges into the one before).",
        "Ingest stage alone, no model call; counts are deterministic (timing not reported).", "",
        "| way | text units | tokens over units | vs main | units > chunk size | largest unit | units < 150 tokens |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, w in ways.items():
        lines.append(f"| {name} | {w['text_units']} | {w['unit_tokens']:,} | "
                     f"{(w['unit_tokens'] / base['unit_tokens'] - 1) * 100:+.1f} % tokens, "
                     f"{(w['text_units'] / base['text_units'] - 1) * 100:+.1f} % units | "
                     f"{w['over_chunk_size']} | {w['largest_unit']} | {w['units_under_150_tokens']} |")
    lines += ["", "Each text unit is one extraction call (plus gleaning), so the unit count is the call count; "
              "the tokens over units are the text tokens extraction reads.", "",
              "All three ways read the documents as ingest now does, with each podcast file's first line (its "
              "episode's file name) kept as the document's title rather than text; main also indexed those lines, "
              "which is why issue 12 counts 342 units and 112,202 tokens for the same 174 files.", ""]
    benchkit.write_results("ingest_tail_merge", lines, res)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
