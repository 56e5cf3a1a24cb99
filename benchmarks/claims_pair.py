"""Claims on a conflicting pair (issue 13 item 9): one document reports a bribe, the other denies it.

Indexes the two documents with ``--claims`` and the given model (default: the
bundled SmolLM2-135M-Instruct), then lists every stored claim with its
document, subject, object, type, status and source quote, and the claims
dropped by validation. Before the quote was chosen as a sentence number,
main stored 0 claims and dropped 5 on this pair.

Usage::

    python benchmarks/claims_pair.py [--model PATH.gguf]

Writes ``benchmarks/results/claims_pair.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from slmgraph.config.settings import Settings
from slmgraph.indexing.pipeline import run_index
from slmgraph.store.db import Store

import benchkit  # benchmarks/benchkit.py (this script's folder is on sys.path)


DOCS = {
    "report.txt": "Mayor Karl Lind accepted a bribe of 50,000 euros from Halvorsen Construction in March 2023, "
                  "according to documents seen by the Bergen Tribune. The payment was made in cash at the company's "
                  "office. Halvorsen Construction later won the contract for the new harbour bridge.\n",
    "denial.txt": "The city of Bergen denies that Mayor Karl Lind accepted any money from Halvorsen Construction. "
                  "A spokesperson for the city said the Bergen Tribune report was false and that the harbour bridge "
                  "contract was awarded in an open tender.\n",
}


def main() -> None:
    """Index the pair with claims and write the results files."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "pair"
        root.mkdir()
        for name, text in DOCS.items():
            (root / name).write_text(text)
        db = Path(tmp) / "pair.duckdb"
        t0 = time.perf_counter()
        out = run_index(root, db, Settings(model_path=a.model, claims=True), progress=False, say=lambda m: None)
        seconds = time.perf_counter() - t0
        st = Store(db, read_only=True)
        rows = st.con.execute(
            "SELECT d.path, c.subject_norm, c.object_norm, c.type, c.status, c.source_quote FROM claims c "
            "JOIN text_units t USING (chunk_id) JOIN documents d USING (doc_id) ORDER BY d.path, c.claim_id"
        ).fetchall()
        model = st.get_meta("model_name")
        st.close()
    c = out["claims"]
    res = {"model": model, "claims": [dict(zip(("document", "subject", "object", "type", "status", "quote"), r))
                                      for r in rows],
           "stored": c["claims"], "dropped": c["dropped"], "ungrounded": c["ungrounded"], "self": c["self"],
           "invalid": c["invalid"], "seconds": round(seconds, 1),
           "machine": benchkit.machine() + ", shared with other jobs"}
    lines = ["# Claims on a conflicting pair (issue 13 item 9)", "",
             f"Model {model}; two documents (a bribe reported / denied), `index --claims`; {seconds:.0f} s in all "
             "(CPU shared with other processes). Before this change main stored 0 claims and dropped 5.", "",
             f"Stored {c['claims']} claims ({c['self']} with subject = object kept without an object), dropped "
             f"{c['dropped']} ({c['ungrounded']} whose sentence does not name the subject, {c['invalid']} invalid).",
             "", "| document | subject | object | type | status | quote (the chosen sentence) |", "|---|---|---|---|---|---|"]
    lines += [f"| {d} | {s} | {o or '—'} | {t} | {st} | {q} |" for d, s, o, t, st, q in rows]
    right = sum(1 for d, s, o, t, st, q in rows if "lind" in (s or "") + (o or "")
                and ((d == "report.txt" and st == "TRUE") or (d == "denial.txt" and st == "FALSE")))
    lines += ["", f"Claims naming the mayor with the document's status (TRUE in the report, FALSE in the denial): "
                  f"{right} of {len(rows)}. Both documents keep claims with their source sentences; whether the "
                  "subject, type and status are right is up to the model.", ""]
    benchkit.write_results("claims_pair", lines, res)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
