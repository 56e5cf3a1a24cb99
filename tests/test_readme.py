"""The README's set-up commands, .ci/run and the CLI stay in step."""

import re
from pathlib import Path

from slmgraph.cli.parser import build_parser

ROOT = Path(__file__).resolve().parent.parent


def _commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```\n(.+?)\n```", quick)


def test_readme_has_two_setup_commands_and_ci_runs_the_test_one():
    cmds = _commands()
    assert len(cmds) == 2
    demo, tests = cmds
    assert demo.endswith("slmgraph demo") and "torch==2.13.0" in demo
    assert "pytest" in tests and "torch==2.13.0" in tests
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tests in ci.splitlines()


def test_every_documented_subcommand_exists():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert {"index", "query", "stats", "demo"} <= set(sub.choices)
