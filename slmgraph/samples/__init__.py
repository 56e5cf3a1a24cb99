"""Sample corpus shipped with slmgraph for the demo and tests.

``dulce.txt``: "Operation: Dulce", an AI-generated science-fiction novella
(23,600 bytes) from microsoft/graphrag's test fixtures, MIT licence (``LICENSE``
here; provenance in ``README_PROVENANCE.txt``).

``dulce_questions.txt`` (on-topic questions of the story) and ``offtopic_questions.txt``
(questions no corpus here answers) are the fixed question set of ``slmgraph bench``.

``redocred_dev_slice.json``: the first 8 documents of Re-DocRED's revised dev set (github.com/tonytan48/Re-DocRED
@ ccfb54f5, ``data/dev_revised.json``), MIT licence (``LICENSE_Re-DocRED``): the gold extraction documents of
``slmgraph bench``.
"""

from pathlib import Path

SAMPLE_DIR = Path(__file__).resolve().parent
DULCE = SAMPLE_DIR / "dulce.txt"
DULCE_QUESTIONS = SAMPLE_DIR / "dulce_questions.txt"
OFFTOPIC_QUESTIONS = SAMPLE_DIR / "offtopic_questions.txt"
GOLD_SLICE = SAMPLE_DIR / "redocred_dev_slice.json"
