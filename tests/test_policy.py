"""One policy decides every ``auto`` setting (slmgraph.model.policy): the size rule without a record, the
capability record the stage bench writes with one. A scripted competent fake model, answering from the
gold, gets a record that turns its routes on, and ``auto`` then takes them."""

from __future__ import annotations

import json
import re

import pytest
from conftest import FakeEmbedder, FakeModel, stage_of

from slmgraph.eval import calibrate
from slmgraph.model import policy
from slmgraph.config.settings import Settings
from slmgraph.eval.gold import GOLD_TYPES
from slmgraph.indexing.pipeline import run_index
from slmgraph.tools.stats import collect, render
from slmgraph.store.db import Store
from slmgraph.text.prose import sentences


class BigFake(FakeModel):
    n_params = 1_500_000_000
    fingerprint = "fakebig1"


@pytest.mark.parametrize("setting", sorted(policy.SETTINGS))
def test_without_a_record_the_size_rule_decides_and_a_given_mode_is_obeyed(setting):
    small, big = FakeModel(), BigFake()
    assert not policy.route(setting, "auto", small).model
    assert policy.route(setting, "auto", big).model is policy.SIZE_RULE[setting]
    assert "size rule (no record)" in policy.route(setting, "auto", small).reason
    assert policy.route(setting, "model", small).model
    assert not policy.route(setting, "off", big).model


def test_record_is_keyed_by_the_gguf_sha256_with_the_hash_cached_by_path_size_and_mtime(tmp_path):
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF" + b"x" * 1000)
    first = policy.file_sha256(f)
    cache = json.loads((policy.records_dir() / "hashes.json").read_text())
    assert cache[str(f.resolve())]["sha256"] == first
    cache[str(f.resolve())]["sha256"] = "cached"  # a hit is read from the cache, not re-hashed
    (policy.records_dir() / "hashes.json").write_text(json.dumps(cache))
    assert policy.file_sha256(f) == "cached"
    f.write_bytes(b"GGUF" + b"y" * 2000)  # another size: hashed again
    assert policy.file_sha256(f) not in ("cached", first)


def test_a_stale_record_is_ignored_and_a_current_one_decides(tmp_path):
    m = FakeModel()
    rec = policy.Record(key=policy.model_key(m), model=m.name, version="old-s0",
                        stages={"report": {"beats": True, "model": 0.9, "llm_free": 0.8, "measure": "q"}})
    policy.write_record(rec)
    assert not policy.route("reports", "auto", m).model
    assert "stale record" in policy.route("reports", "auto", m).reason
    rec.version = policy.policy_version()
    policy.write_record(rec)
    r = policy.route("reports", "auto", m)
    assert r.model and "capability record" in r.reason and "0.9" in r.reason
    assert not policy.route("answers", "auto", m).model  # not measured: the LLM-free route
    assert policy.notice(Settings(), m) is None


def test_index_and_stats_say_which_route_ran_and_why_and_how_to_calibrate(tmp_path, corpus):
    said = []
    run_index(corpus, tmp_path / "i.duckdb", Settings(workers=1), progress=False, model=FakeModel(),
              say=said.append, embedder_factory=FakeEmbedder)
    notes = [s for s in said if "slmgraph calibrate" in s]
    assert len(notes) == 1 and "size rule" in notes[0]
    st = Store(tmp_path / "i.duckdb", read_only=True)
    try:
        figs = collect(st)
        text = render(figs, "i.duckdb")
        note = st.con.execute("SELECT note FROM stage_runs WHERE stage = 'reports'").fetchone()[0]
    finally:
        st.close()
    assert figs["routes"]["reports"]["route"] == "llm-free"
    assert "size rule" in figs["routes"]["reports"]["reason"] and "who did each stage" in text
    assert json.loads(note)["route"] == figs["routes"]["reports"]  # the stage's ledger row says it too


# --- the competent fake model -------------------------------------------------------------------------


def competent_script(docs):
    """A fake that answers from the gold: gold mentions typed as the gold says, other candidates ``other``,
    gold pairs related; descriptions, summaries, reports and answers copied from the text they are given."""
    types, pairs = {}, set()
    for d in docs:
        for g in d.entities:
            for n in g.names:
                types[n] = sorted(GOLD_TYPES.get(g.type, {"other"}))[0]
        for p in d.pairs:
            a, b = sorted(p)
            pairs |= {frozenset((x, y)) for x in d.entities[a].names for y in d.entities[b].names}

    def sentence_with(text, *names):
        return next((s for s in sentences(text) if all(n in s for n in names)), "")

    def script(system, user, schema):
        stage = stage_of(schema, system)
        if stage == "choice":  # gleaning: "were entities missed?" yes, so the names past the budget are read
            return schema["choices"][0]
        if stage == "extract":
            text = user.split('Text:\n"""\n', 1)[-1].rsplit('\n"""', 1)[0]
            props = schema["properties"]["entities"]["properties"]
            names = list(props)
            gold_doc = any(n in types for n in names)
            ents, rels = {}, []
            for n in names:
                t = types.get(n, "other") if gold_doc else "person"
                ents[n] = {"type": t, "description": sentence_with(text, n)[:180]}
            kept = [n for n in names if ents[n]["type"] != "other"]
            for i, a in enumerate(kept):
                for b in kept[i + 1:]:
                    s = sentence_with(text, a, b)
                    if len(rels) < 6 and s and (not gold_doc or frozenset((a, b)) in pairs):
                        rels.append({"source": a, "target": b, "description": s[:180], "strength": 5})
            return json.dumps({"entities": ents, "relationships": rels})
        if stage == "report":
            data = user.split('"""', 2)[1]
            rows = [ln.split(",", 2) for ln in data.splitlines() if ln.count(",") >= 2][1:]
            descs = [r[2].strip('"') for r in rows if len(r) == 3 and len(r[2]) > 20]
            title = rows[0][0] if rows else "Community"
            rep = {"title": title, "summary": descs[0] if descs else title, "rating": 5,
                   "rating_explanation": "From the data."}
            if "findings" in schema["properties"]:
                rep["findings"] = [{"summary": title, "explanation": d} for d in descs[1:3]]
            return json.dumps(rep)
        if stage == "map":
            q = re.search(r"Question: (.*)", user).group(1).lower()
            words = set(re.findall(r"\w{5,}", q))
            points = []
            for rid, body in re.findall(r"Report (\d+)\n(.*?)(?=\nReport \d+\n|\Z)", user, re.S):
                body = body.split("\n", 1)[-1]  # past the report's title line
                hit = next((s for s in sentences(body) if words & set(re.findall(r"\w{5,}", s.lower()))), None)
                if hit and len(points) < 3:
                    points.append({"answer": hit.strip()[:300], "reports": [int(rid)]})
            return json.dumps({"points": points})
        if stage == "reduce":
            ctx = user.split('"""', 2)[1].strip()
            return "\n".join(ln for ln in ctx.splitlines()
                             if ln.strip() and not ln.startswith(("----", "Importance Score")))
        if stage == "answer" and "opening sentence" in system:  # a theme's opening: two statements joined
            block = user.split('"""', 2)[1]
            st = [ln[2:].split(": ", 1)[-1].rstrip(".") for ln in block.splitlines() if ln.startswith("- ")]
            return f"{' '.join(st[0].split()[:7])}, and {' '.join(st[1].split()[:7])}."
        if stage == "answer" and user.startswith("Element:"):  # element summary: the first description
            return user.split('"""', 2)[1].strip().splitlines()[0]
        if stage == "claims":
            from conftest import sentence_claims

            return json.dumps({"claims": sentence_claims(user)})
        return "An answer."
    return script


def test_competent_fake_gets_a_record_turning_its_routes_on_and_auto_takes_them(tmp_path, corpus):
    wl = calibrate.workload(gold_docs=2, on_topic=2, off_topic=2)
    model = FakeModel(script=competent_script(wl.gold_docs))
    res = calibrate.run([None], tmp_path / "out", Settings(), say=lambda m: None, load=lambda p, s: model, wl=wl,
                        embedder_factory=FakeEmbedder)
    free, row = res["rows"]
    assert free["model"] == "LLM-free" and free["stages"]["extract"]["calls"] == 0
    assert set(row["cpu_seconds"]) == {"extract", "story", "answer", "opening"} and res["cpu_seconds"] > 0
    assert row["stages"]["extract"]["calls"] > 0 and row["stages"]["report"]["calls"] > 0
    assert row["stages"]["summarize"]["calls"] > 0 and row["stages"]["answer"]["calls"] > 0
    assert row["stages"]["extract"]["quality"] >= free["stages"]["extract"]["quality"]
    assert row["stages"]["extract"]["figures"]["type_accuracy"] > free["stages"]["extract"]["figures"]["type_accuracy"]
    assert row["stages"]["opening"]["calls"] > 0 and free["stages"]["opening"]["calls"] == 0
    for stage in ("extract", "summarize", "report", "answer", "opening"):
        assert row["beats"][stage], (stage, row["stages"][stage]["figures"], free["stages"][stage]["figures"])
    md = (tmp_path / "out" / "bench.md").read_text()
    assert "| extract | LLM-free |" in md and "| report | fake-model.gguf |" in md
    assert (tmp_path / "out" / "bench.png").stat().st_size > 0
    rec = json.loads(open(res["records"][0]).read())
    assert rec["key"] == "fingerprint-fake0001" and rec["stages"]["report"]["beats"] is True
    # auto now takes the model routes: an index with every default writes reports and descriptions by model
    for setting in ("descriptions", "summaries", "reports", "answers", "opening"):
        assert policy.route(setting, "auto", model).model, setting
    model.calls.clear()
    said = []
    run_index(corpus, tmp_path / "i.duckdb", Settings(workers=1), progress=False, model=model, say=said.append,
              embedder_factory=FakeEmbedder)
    assert not any("calibrate" in s for s in said)
    st = Store(tmp_path / "i.duckdb", read_only=True)
    try:
        stages = dict(st.con.execute("SELECT stage, count(*) FROM llm_calls GROUP BY stage").fetchall())
        routes = collect(st)["routes"]
    finally:
        st.close()
    assert stages.get("report") and stages.get("extract"), stages
    assert routes["reports"]["route"] == "model" and "capability record" in routes["reports"]["reason"]


def test_a_fake_that_copies_nothing_gets_a_record_keeping_the_llm_free_routes(tmp_path):
    wl = calibrate.workload(gold_docs=1, on_topic=1, off_topic=1)

    def poor(system, user, schema):
        stage = stage_of(schema, system)
        if stage == "extract":
            names = list(schema["properties"]["entities"]["properties"])
            return json.dumps({"entities": {n: {"type": "event", "description": "Lorem ipsum dolor sit amet."}
                                            for n in names}, "relationships": []})
        if stage == "report":
            return json.dumps({"title": "Lorem", "summary": "Lorem ipsum dolor sit amet consectetur.", "rating": 1,
                               "rating_explanation": "x", "findings": []})
        if stage == "choice":
            return schema["choices"][-1]
        return "Lorem ipsum dolor sit amet consectetur adipiscing."

    model = FakeModel(script=poor)
    res = calibrate.run([None], tmp_path / "out", Settings(), say=lambda m: None, load=lambda p, s: model, wl=wl,
                        embedder_factory=FakeEmbedder)
    beats = res["rows"][1]["beats"]
    assert not beats["extract"] and not beats["report"] and not beats["summarize"] and not beats["opening"]
    assert not policy.route("reports", "auto", model).model
    assert not policy.route("opening", "auto", model).model
    assert not policy.route("descriptions", "auto", model).model


def test_an_option_the_route_cannot_use_says_so_in_one_line_each(tmp_path, corpus):
    from slmgraph.indexing.pipeline import idle_options

    s = Settings(workers=1, prompts_dir=str(tmp_path / "tuned"), entity_types=("person", "weapon"))
    lines = idle_options(s, FakeModel())
    assert len(lines) == 2 and all("\n" not in x and "slmgraph calibrate" in x for x in lines)
    assert lines[0].startswith(f"--prompts {tmp_path / 'tuned'}: no index stage calls the model")
    assert lines[1].startswith("--entity-types") and "no entity gets weapon" in lines[1]
    forced = Settings(workers=1, prompts_dir=str(tmp_path / "tuned"), entity_types=("person", "weapon"),
                      descriptions="model")
    assert idle_options(forced, FakeModel()) == []  # the model extracts: both act
    said = []
    run_index(corpus, tmp_path / "i.duckdb", Settings(workers=1, entity_types=("person", "weapon")), progress=False,
              model=FakeModel(), say=said.append, embedder_factory=FakeEmbedder)
    assert sum("no entity gets weapon" in x for x in said) == 1


def test_calibrate_command_writes_the_record_where_records_points(tmp_path, capsys, monkeypatch):
    import slmgraph.model.backend
    from slmgraph.cli.main import main

    monkeypatch.setattr(slmgraph.model.backend, "load_model", lambda *a, **k: FakeModel())
    monkeypatch.setattr("slmgraph.indexing.stages.embed.Embedder", lambda *a, **k: FakeEmbedder())
    rec_dir = tmp_path / "recs"
    code = main(["calibrate", "bundled", "--out", str(tmp_path / "c"), "--records", str(rec_dir), "--gold-docs", "1",
                 "--on-topic", "1", "--off-topic", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    rec = json.loads((rec_dir / "fingerprint-fake0001.json").read_text())
    assert rec["source"] == "calibrate" and rec["version"] == policy.policy_version()
    assert set(rec["stages"]) == {"extract", "summarize", "report", "answer", "opening"}  # claims, P(yes) opt-in
    assert all({"beats", "model", "llm_free", "measure"} <= set(v) for v in rec["stages"].values())
    assert "| answer | LLM-free |" in out and str(rec_dir) in out and "| claims |" not in out
    assert re.search(r"s in all, [\d.]+ CPU s \(LLM-free \d+, fake-model.gguf \d+;", out)
    assert main(["calibrate", "bundled", "--out", str(tmp_path / "c"), "--records", str(rec_dir), "--gold-docs", "1",
                 "--on-topic", "1", "--off-topic", "1", "--claims"]) == 0
    rec = json.loads((rec_dir / "fingerprint-fake0001.json").read_text())
    assert set(rec["stages"]) == {"extract", "summarize", "report", "claims", "answer", "opening"}
    assert "| claims | fake-model.gguf |" in capsys.readouterr().out
    assert main(["calibrate", str(tmp_path / "missing.gguf"), "--out", str(tmp_path / "c")]) == 2
    assert "missing.gguf is not a file" in capsys.readouterr().err


def test_a_shipped_record_applies_when_the_user_has_none_and_the_users_own_comes_first(tmp_path, monkeypatch):
    m = FakeModel()
    shipped = tmp_path / "shipped"
    shipped.mkdir()
    monkeypatch.setattr(policy, "SHIPPED_RECORDS", shipped)
    rec = policy.Record(key=policy.model_key(m), model=m.name, version=policy.policy_version(),
                        stages={"report": {"beats": True, "model": 0.9, "llm_free": 0.8, "measure": "q"}})
    (shipped / policy.record_path(rec.key).name).write_text(json.dumps(rec.__dict__))
    policy._CACHE.clear()
    assert policy.route("reports", "auto", m).model
    rec.stages["report"]["beats"] = False
    policy.write_record(rec)  # the user's own calibration
    assert not policy.route("reports", "auto", m).model


def test_the_routes_table_of_stats_left_aligns_its_words():
    from slmgraph.tools.stats import _table

    lines = _table(["setting", "route", "why"], [["answers", "llm-free", "capability record: model 0.65 worse"],
                                                 ["opening", "model", "size rule"]], text_columns=3).splitlines()
    assert [ln.index(w) for ln, w in zip(lines, ["why", "capability", "size"])] == [lines[0].index("why")] * 3


def test_query_without_a_record_says_in_one_line_that_the_size_rule_applied_and_how_to_calibrate(
        tmp_path, corpus, capsys, monkeypatch, fake_cli):
    import slmgraph.model.backend
    from slmgraph.cli.main import main

    monkeypatch.setattr(slmgraph.model.backend, "load_model", lambda *a, **k: FakeModel())
    monkeypatch.setattr("slmgraph.query.question_embed.question_embedder", lambda *a, **k: FakeEmbedder())
    db = str(tmp_path / "i.duckdb")
    assert main(["index", str(corpus), "--db", db]) == 0
    err = capsys.readouterr().err
    assert sum("size rule" in ln and "slmgraph calibrate" in ln for ln in err.splitlines()) == 1
    assert main(["query", "Who founded Acme Corporation?", "--db", db, "--method", "basic"]) == 0
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if "size rule" in ln]
    assert len(lines) == 1 and "slmgraph calibrate" in lines[0], err


def test_editing_the_prompts_readme_keeps_records_current_but_a_prompt_edit_does_not(tmp_path, monkeypatch):
    import shutil

    from slmgraph.config.prompting import bundled_dir

    copy = tmp_path / "prompts"
    shutil.copytree(bundled_dir(), copy)
    monkeypatch.setattr(policy, "bundled_dir", lambda: copy)
    before = policy.policy_version()
    (copy / "README.md").write_text("A new link in the prompts' documentation.\n", encoding="utf-8")
    assert policy.policy_version() == before
    (copy / "map_system.txt").write_text("Answer in one word.\n", encoding="utf-8")
    assert policy.policy_version() != before


def test_the_bundled_models_shipped_records_are_current():
    for f in policy.SHIPPED_RECORDS.glob("*.json"):
        assert json.loads(f.read_text(encoding="utf-8"))["version"] == policy.policy_version(), f.name
