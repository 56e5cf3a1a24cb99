"""Sample corpus shipped with slmgraph for the demo and tests.

``dulce.txt``: "Operation: Dulce", an AI-generated science-fiction novella
(23,600 bytes) from microsoft/graphrag's test fixtures, MIT licence (``LICENSE``
here; provenance in ``README_PROVENANCE.txt``).
"""

from pathlib import Path

SAMPLE_DIR = Path(__file__).resolve().parent
DULCE = SAMPLE_DIR / "dulce.txt"
