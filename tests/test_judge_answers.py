"""benchmarks/judge_answers.py: blind packets (both orders, key kept apart) and the scorer's win rates and grades."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import judge_answers as ja  # noqa: E402


class _Ans:
    def __init__(self, text):
        self.text, self.citations, self.model_calls = text, {}, 0


class _Index:
    def __init__(self, *a, **k):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def query(self, question, method="global", level=None):
        return _Ans(f"METHOD-{method.upper()} says something about {question}")


def _verdict(pid, winner, ga, gb):
    return {"packet": pid, "criteria": {c: {"winner": winner, "reason": "r"} for c in ja.CRITERIA},
            "grades": {"A": {"grade": ga, "reason": "r"}, "B": {"grade": gb, "reason": "r"}}}


def test_packets_hide_methods_and_hold_both_orders(tmp_path, monkeypatch):
    import slmgraph

    monkeypatch.setattr(slmgraph, "open", lambda db: _Index())
    qs = tmp_path / "q.txt"
    qs.write_text("What is one?\n# skipped\nWhat is two?\n")
    packets, key = tmp_path / "packets", tmp_path / "key" / "key.json"
    ja.main(["packets", "--db", "x.duckdb", "--questions", str(qs), "--packets", str(packets), "--key", str(key)])
    files = sorted(p.name for p in packets.glob("q*.md"))
    assert files == ["q01-1.md", "q01-2.md", "q02-1.md", "q02-2.md"]
    k = json.loads(key.read_text())
    for n in (1, 2):
        one, two = k["packets"][f"q0{n}-1"], k["packets"][f"q0{n}-2"]
        assert {one["A"], one["B"]} == {"global", "basic"} and (one["A"], one["B"]) == (two["B"], two["A"])
        text = (packets / f"q0{n}-1.md").read_text()
        assert "Answer A" in text and "Answer B" in text
        assert text.index(f"METHOD-{one['A'].upper()}") < text.index(f"METHOD-{one['B'].upper()}")
    for p in packets.iterdir():  # nothing a judge sees names a method or the order
        body = p.read_text().lower()
        assert "global" not in body.replace("METHOD-GLOBAL".lower(), "") and "basic" not in body.replace(
            "METHOD-BASIC".lower(), "")
    schema = json.loads((packets / "verdict_schema.json").read_text())
    assert set(schema["properties"]["criteria"]["required"]) == set(ja.CRITERIA)


def test_key_inside_packets_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="must not lie inside"):
        ja.main(["packets", "--db", "x", "--questions", "q.txt", "--packets", str(tmp_path),
                 "--key", str(tmp_path / "key.json")])


def test_score_counts_ties_as_half_and_maps_sides_to_methods(tmp_path):
    key = {"methods": ["global", "basic"], "packets": {
        "q01-1": {"question_no": 1, "A": "global", "B": "basic"},
        "q01-2": {"question_no": 1, "A": "basic", "B": "global"},
        "q02-1": {"question_no": 2, "A": "basic", "B": "global"},
        "q02-2": {"question_no": 2, "A": "global", "B": "basic"}}}
    res = ja.score(key, [_verdict("q01-1", "A", 4, 2), _verdict("q01-2", "B", 2, 5),
                         _verdict("q02-1", "tie", 3, 3), _verdict("q02-2", "B", 1, 3)])
    # global wins q01 twice, ties once, loses once: (1 + 1 + 0.5 + 0) / 4
    assert res["win_rate"]["diversity"]["global"] == pytest.approx(0.625)
    assert res["win_rate"]["diversity"]["basic"] == pytest.approx(0.375)
    assert res["order_agreement"]["directness"] == pytest.approx(0.5)
    assert res["grades"]["global"]["mean"] == pytest.approx((4 + 5 + 3 + 1) / 4)
    assert res["grades"]["global"]["ge4"] == pytest.approx(0.5)


def test_invalid_verdict_is_named(tmp_path):
    bad = _verdict("q01-1", "C", 7, 2)
    (tmp_path / "v.json").write_text(json.dumps(bad))
    with pytest.raises(SystemExit) as exc:
        ja.read_verdicts(tmp_path)
    msg = str(exc.value)
    assert "v.json" in msg and "winner must be one of A, B, tie" in msg and "grades.A.grade" in msg


def test_versus_pits_one_method_from_two_keys_blind(tmp_path, monkeypatch):
    import slmgraph

    qs = tmp_path / "q.txt"
    qs.write_text("What is one?\nWhat is two?\n")
    keys = []
    for tag in ("old", "new"):
        class _Tagged(_Index):
            def query(self, question, method="global", level=None, _tag=tag):
                return _Ans(f"{_tag.upper()}-{method.upper()} on {question}")

        monkeypatch.setattr(slmgraph, "open", lambda db, cls=_Tagged: cls())
        key = tmp_path / f"{tag}.json"
        ja.main(["packets", "--db", f"{tag}.duckdb", "--questions", str(qs), "--packets", str(tmp_path / tag),
                 "--key", str(key)])
        keys.append(str(key))
    packets, key = tmp_path / "vs", tmp_path / "vs_key.json"
    ja.main(["versus", *keys, "--names", "main", "branch", "--packets", str(packets), "--key", str(key)])
    k = json.loads(key.read_text())
    assert k["methods"] == ["main", "branch"] and k["identical_answers"] == 0
    for n in (1, 2):
        one = k["packets"][f"q0{n}-1"]
        text = (packets / f"q0{n}-1.md").read_text()
        want = {"main": "OLD-GLOBAL", "branch": "NEW-GLOBAL"}
        assert text.index(want[one["A"]]) < text.index(want[one["B"]]) and "BASIC" not in text
        assert "main" not in text.lower() and "branch" not in text.lower()
    res = ja.score(k, [_verdict("q01-1", "A", 4, 2)])
    assert res["grades"][k["packets"]["q01-1"]["A"]]["mean"] == 4
