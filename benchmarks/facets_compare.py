"""Compare two dumps of global answers (``benchmarks/global_answer_dump.py``'s JSON, ``{question: text}``) and
print, per question, whether the answer is byte-identical, the facets the current code parses from it
(:func:`slmgraph.query.theme_facets.facets_for`) and, for a faceted answer, the statements quoted per facet
(a facet's section lists them as ``- *document*: ...`` lines; its one line without evidence quotes none).

Usage::

    python benchmarks/facets_compare.py BEFORE.json AFTER.json
"""

import json
import re
import sys

from slmgraph.query.theme_facets import facets_for


def facet_counts(text: str) -> list[tuple[str, int]]:
    """``[(facet label, statements quoted)]`` of a faceted answer's sections, in order."""
    out = []
    for sec in re.split(r"\n\n(?=### \d+\. )", text)[1:]:
        head = sec.splitlines()[0]
        label = re.sub(r"^### \d+\. ", "", head).split(" [Reports:")[0]
        out.append((label, sum(1 for line in sec.splitlines() if line.startswith("- *"))))
    return out


def main() -> None:
    before = json.load(open(sys.argv[1], encoding="utf-8"))
    after = json.load(open(sys.argv[2], encoding="utf-8"))
    print("| question | facets parsed | answer | statements per facet |")
    print("|---|---|---|---|")
    for q, a in after.items():
        facets = [f.label for f in facets_for(q, "auto")]
        same = before.get(q) == a
        counts = "; ".join(f"{lab}: {n}" for lab, n in facet_counts(a)) if facets and not same else ""
        print(f"| {q} | {', '.join(facets) or 'none'} | {'byte-identical' if same else 'changed'} | {counts} |")


if __name__ == "__main__":
    main()
