"""pyflakes finds no unused or undefined name in slmgraph, benchmarks and tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent


def test_pyflakes_finds_nothing():
    r = subprocess.run([sys.executable, "-m", "pyflakes", "slmgraph", "benchmarks", "tests"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and not r.stdout.strip(), r.stdout + r.stderr
