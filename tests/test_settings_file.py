"""The settings file: ``slmgraph init`` writes it, index/estimate/query read it, flags override it."""

import dataclasses
import json

import pytest
from conftest import FakeEmbedder, FakeModel

from slmgraph.config import file as sf
from slmgraph.cli.main import main
from slmgraph.config.settings import Settings


def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _one_line_error(err, *words):
    lines = [x for x in err.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("slmgraph: error: "), err
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_every_settable_field_has_a_key_and_no_key_is_stale():
    fields = {f.name for f in dataclasses.fields(Settings)}
    assert {k.name for k in sf.SPEC} == fields - sf.NOT_IN_FILE
    assert all(k.help.strip() for k in sf.SPEC)


def test_init_writes_a_commented_file_that_reads_back_as_the_defaults(tmp_path, capsys):
    code, out, _ = _run(capsys, "init", str(tmp_path / "proj"))
    assert code == 0 and "slmgraph.toml" in out
    text = (tmp_path / "proj" / "slmgraph.toml").read_text()
    for k in sf.SPEC:
        assert f"{k.name} = " in text
        assert f"# {k.help}" in text
    values = sf.load(tmp_path / "proj" / "slmgraph.toml")
    defaults = Settings()
    assert values and all(getattr(defaults, k) == v for k, v in values.items())
    assert "model_path" not in values and "n_threads" not in values  # unset by default: written commented out
    code, _, err = _run(capsys, "init", str(tmp_path / "proj"))
    assert code == 2
    _one_line_error(err, "exists", "--force")
    assert _run(capsys, "init", str(tmp_path / "proj"), "--force")[0] == 0


def test_init_with_prompts_copies_them_and_the_placeholder_check_passes(tmp_path, capsys):
    from slmgraph.config.prompting import Prompts

    assert _run(capsys, "init", str(tmp_path), "--prompts")[0] == 0
    values = sf.load(tmp_path / "slmgraph.toml")
    assert values["prompts_dir"] == str(tmp_path / "prompts")
    Prompts(values["prompts_dir"]).check()
    assert (tmp_path / "prompts" / "extract_system.txt").is_file()


@pytest.mark.parametrize("line,words", [
    ("chunk_sise = 300", ["chunk_sise", "unknown key", "did you mean chunk_size"]),
    ("chunk_size = \"big\"", ["chunk_size", "whole number"]),
    ("chunk_size = 10", ["chunk_size", "at least 50"]),
    ("claims = 1", ["claims", "true or false"]),
    ("extractor = \"gpt\"", ["extractor", "llm, nlp"]),
    ("entity_types = []", ["entity_types", "non-empty list"]),
    ("local_shares = [1, 2]", ["local_shares", "four non-negative"]),
    ("resolution_threshold = 1.5", ["resolution_threshold", "(0, 1]"]),
    ("chunk_size = [", ["not valid TOML"]),
])
def test_bad_keys_and_values_are_one_line_naming_key_and_file(tmp_path, corpus, capsys, line, words):
    cfg = tmp_path / "s.toml"
    cfg.write_text(line + "\n")
    code, _, err = _run(capsys, "index", str(corpus), "--db", str(tmp_path / "x.duckdb"), "--config", str(cfg),
                        "--quiet")
    assert code == 2
    _one_line_error(err, str(cfg), *words)
    assert not (tmp_path / "x.duckdb").exists()


def test_missing_config_file_and_cross_key_check(tmp_path, corpus, capsys):
    code, _, err = _run(capsys, "query", "--db", str(tmp_path / "x.duckdb"), "--config", str(tmp_path / "no.toml"),
                        "what?")
    assert code == 2
    _one_line_error(err, "no.toml", "slmgraph init")
    cfg = tmp_path / "s.toml"
    cfg.write_text("chunk_size = 300\nchunk_overlap = 400\n")
    code, _, err = _run(capsys, "estimate", str(corpus), "--config", str(cfg), "--quiet")
    assert code == 2
    _one_line_error(err, "chunk_overlap", f"file {cfg}")


def test_resolve_flags_over_file_over_defaults(tmp_path):
    cfg = tmp_path / "slmgraph.toml"
    cfg.write_text('chunk_size = 300\nmax_gleanings = 0\nmodel_path = "m/x.gguf"\nresolution_threshold = "off"\n')
    values = sf.load(cfg)
    assert values["model_path"] == str(tmp_path / "m" / "x.gguf")  # relative to the file
    assert values["resolution_threshold"] is None
    typed = sf.typed_from_flags({"chunk_size", "quiet"})
    cli = Settings(chunk_size=200)
    s, src = sf.resolve(cli, values, cfg, typed)
    assert s.chunk_size == 200 and src["chunk_size"] == "flag --chunk-size"
    assert s.max_gleanings == 0 and src["max_gleanings"] == f"file {cfg}"
    assert src["seed"] == "default" and s.resolution_threshold is None
    assert sf.find(None, tmp_path) == cfg.resolve() and sf.find(None, tmp_path / "m") is None


def _patch_models(monkeypatch):
    import slmgraph.indexing.stages.embed
    import slmgraph.indexing.pipeline

    monkeypatch.setattr(slmgraph.indexing.pipeline, "load_model", lambda *a, **k: FakeModel())
    monkeypatch.setattr(slmgraph.indexing.stages.embed, "Embedder", lambda *a, **k: FakeEmbedder())
    monkeypatch.setattr("slmgraph.query.question_embed.question_embedder", lambda *a, **k: FakeEmbedder())


def test_index_reads_the_file_in_the_working_directory_and_stats_shows_sources(tmp_path, corpus, capsys,
                                                                                monkeypatch):
    _patch_models(monkeypatch)
    monkeypatch.chdir(tmp_path)
    assert _run(capsys, "init")[0] == 0
    text = (tmp_path / "slmgraph.toml").read_text()
    text = text.replace("min_community_size = 4", "min_community_size = 2").replace("max_gleanings = 1",
                                                                                    "max_gleanings = 0")
    (tmp_path / "slmgraph.toml").write_text(text)
    code, _, err = _run(capsys, "index", str(corpus), "--db", "i.duckdb", "--gleanings", "1", "--workers", "1",
                        "--quiet")
    assert code == 0, err
    code, out, _ = _run(capsys, "stats", "--db", "i.duckdb", "--json")
    settings = json.loads(out)["settings"]
    assert settings["min_community_size"] == {"value": 2, "source": f"file {tmp_path.resolve() / 'slmgraph.toml'}"}
    assert settings["max_gleanings"] == {"value": 1, "source": "flag --gleanings"}
    assert settings["model_path"]["source"] == "default"  # commented out in the file
    code, out, _ = _run(capsys, "stats", "--db", "i.duckdb")
    assert "settings of the last index run" in out and "flag --gleanings" in out and "min_community_size" in out
    assert "chunk_size " not in out  # at its default: only counted


def test_query_reads_the_settings_file_and_a_typed_flag_overrides_it(tmp_path, corpus, capsys, monkeypatch):
    import slmgraph.model.backend
    from slmgraph.indexing.pipeline import run_index

    _patch_models(monkeypatch)
    monkeypatch.setattr(slmgraph.model.backend, "load_model", lambda *a, **k: FakeModel())
    db = tmp_path / "i.duckdb"
    run_index(corpus, db, Settings(min_community_size=2), progress=False, model=FakeModel(),
              embedder_factory=FakeEmbedder, say=lambda m: None)
    cfg = tmp_path / "q.toml"
    cfg.write_text("basic_top_k = 1\nlocal_context_tokens = 250\n")
    code, out, err = _run(capsys, "query", "--db", str(db), "--config", str(cfg), "--method", "basic", "--json",
                          "Who founded Acme Corporation?")
    assert code == 0, err
    assert [c["kind"] for c in json.loads(out)["context"]] == ["text_unit"]  # basic_top_k = 1 from the file
    cfg.write_text("local_context_tokens = 100\n")
    code, _, err = _run(capsys, "query", "--db", str(db), "--config", str(cfg), "what?")
    assert code == 2
    _one_line_error(err, "local_context_tokens", "at least 200", str(cfg))
    code, _, err = _run(capsys, "query", "--db", str(db), "--config", str(cfg), "--local-tokens", "300",
                        "--method", "basic", "what?")
    assert code == 2  # the file is checked even where a flag overrides the key: the file itself is wrong
