"""The errors behind extraction_gold.py's figures: each document's strict false positives, false negatives
and wrongly typed matches, for one configuration (read them to find a rule's cause; change no figure here).

Indexes and scores exactly as :mod:`extraction_gold` does (same functions, same gold file, same
configurations) and prints, per document::

    FP  <aliases of a predicted entity that matched no gold entity one-to-one> [type] (lenient: gold ...)
    FN  <names of a gold entity no prediction matched> [gold type]
    TY  <aliases> [predicted type] != gold <gold type>

then the totals and the counts of wrong types by (predicted type, gold type). A false positive marked
``lenient`` matches a gold entity another prediction already took (a fragment: resolution did not merge it).

Usage::

    python benchmarks/extraction_errors.py --config nlp --docs 100 > /tmp/errors.txt
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

from extraction_gold import (DEFAULT_GOLD, GOLD_TYPES, WordTokenizer, config_settings, index_document, load_gold,
                             model_path_of, score_document)
from slmgraph.errors import UserError
from slmgraph.names.forms import tolerant_key
from slmgraph.config.prompting import Prompts


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, index and score each document, print its errors."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="nlp", help="one configuration of extraction_gold.py (default nlp)")
    ap.add_argument("--docs", type=int, default=100, help="documents, from the first (default 100)")
    ap.add_argument("--first", type=int, default=0, help="index of the first document (default 0)")
    ap.add_argument("--gold", type=Path, default=DEFAULT_GOLD, help="Re-DocRED JSON (default: ../shared's sample)")
    args = ap.parse_args(argv)
    try:
        if model_path_of(args.config, None) is not None:
            raise UserError(f"--config {args.config} loads a model: this script runs the LLM-free configurations")
        s = config_settings(args.config, None)
        docs = load_gold(args.gold, args.first + args.docs)[args.first:]
    except UserError as exc:
        print(f"extraction_errors: error: {exc}", file=sys.stderr)
        return 2
    embedder = None
    if s.resolution_threshold is not None:
        from slmgraph.indexing.stages.embed import Embedder

        embedder = Embedder(batch_size=s.embed_batch_size, threads=s.n_threads)
    model, prompts = WordTokenizer(), Prompts(s.prompts_dir)
    totals, wrong_types = Counter(), Counter()
    with tempfile.TemporaryDirectory(prefix="slmgraph-errors-") as tmp:
        for doc in docs:
            pred, _ = index_document(doc, s, model, prompts, embedder, Path(tmp) / f"d{doc.index}.duckdb", "errors")
            sc, matching = score_document(pred, doc)
            by_key: dict[str, list[int]] = {}
            for gi, g in enumerate(doc.entities):
                for k in g.keys:
                    by_key.setdefault(k, []).append(gi)
            print(f"== doc {doc.index}: {doc.title}  (strict tp {sc.entities.tp} fp {sc.entities.fp} "
                  f"fn {sc.entities.fn})")
            matched_gold = set(matching.values())
            for pid, names in sorted(pred.aliases.items()):
                hits = sorted({gi for n in names for gi in by_key.get(tolerant_key(n), ())})
                if hits and all(doc.entities[gi].excluded for gi in hits):
                    continue
                if pid not in matching:
                    taken = [" / ".join(sorted(set(doc.entities[gi].names))) for gi in hits]
                    note = f" (lenient: gold {'; '.join(taken)})" if taken else ""
                    print(f"  FP  {' | '.join(sorted(names))} [{pred.types.get(pid)}]{note}")
                    totals["fp_fragment" if hits else "fp_no_gold"] += 1
            for gi, g in enumerate(doc.entities):
                if not g.excluded and gi not in matched_gold:
                    print(f"  FN  {' / '.join(sorted(set(g.names)))} [{g.type}]")
                    totals["fn"] += 1
            for pid, gi in matching.items():
                t, gt = pred.types.get(pid, "unknown"), doc.entities[gi].type
                if t not in GOLD_TYPES.get(gt, set()):
                    print(f"  TY  {' | '.join(sorted(pred.aliases[pid]))} [{t}] != gold {gt}")
                    wrong_types[(t, gt)] += 1
    print("== totals:", dict(totals))
    print("== wrong types (predicted, gold):", ", ".join(f"{a}/{b} {n}" for (a, b), n in wrong_types.most_common()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
