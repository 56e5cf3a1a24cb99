"""Settings: cache keys derived from field metadata, modes as enums, ``choices`` parsed once, dead keys."""

import dataclasses
import re
from pathlib import Path

import pytest

import slmgraph.config.settings as config
from slmgraph.indexing.stages.claims import claims_key
from slmgraph.config.settings import NOT_IN_INDEX, UNIT_KEYS, Reports, Settings
from slmgraph.errors import UserError
from slmgraph.indexing.stages.extract import extraction_key
from slmgraph.config.file import load

ROOT = Path(config.__file__).parents[1]  # the slmgraph package folder

#: Settings the extraction and claims stages read that do not change what they yield: where and how fast
#: the model runs (NOT_IN_INDEX) and the seed (decoding is greedy).
NOT_IN_UNIT_KEYS = NOT_IN_INDEX | {"seed"}


def _changed(v):
    if isinstance(v, config.Mode):
        return next(m for m in type(v) if m != v)
    if isinstance(v, bool):
        return not v
    if isinstance(v, (int, float)):
        return v + 1
    if v is None:
        return 7
    if isinstance(v, tuple):
        return tuple(v) + ("x",)
    return "none" if v == "auto" else "auto"


def _read(module_names) -> set[str]:
    names = {f.name for f in dataclasses.fields(Settings)}
    source = "\n".join((ROOT / f"{m}.py").read_text(encoding="utf-8") for m in module_names)
    return {n for n in re.findall(r"\b(?:s|settings)\.(\w+)", source) if n in names}


def test_every_field_is_classified_and_keys_are_known():
    for f in dataclasses.fields(Settings):
        keys = f.metadata.get("keys", ())
        assert set(keys) <= set(UNIT_KEYS), f.name
        if keys:  # a setting in a text unit's key changes what the index holds
            assert f.name not in NOT_IN_INDEX, f.name


@pytest.mark.parametrize("key,modules", [(("extraction", "extraction_model"), ("indexing/stages/extract", "indexing/stages/concepts", "indexing/stages/ner")),
                                         (("claims",), ("indexing/stages/claims",))])
def test_a_setting_a_stage_reads_is_in_its_cache_key(key, modules):
    keyed = {f.name for f in dataclasses.fields(Settings) if set(f.metadata.get("keys", ())) & set(key)}
    missing = _read(modules) - keyed - NOT_IN_UNIT_KEYS
    assert not missing, f"{', '.join(modules)} read {sorted(missing)}, which no field metadata puts in the {key[0]} key"


def test_each_keyed_setting_changes_its_key():
    base_x = extraction_key("t", "model", "prompts", Settings())
    base_c = claims_key("t", "model", "prompts", {}, Settings())
    for f in dataclasses.fields(Settings):
        keys = f.metadata.get("keys", ())
        if not keys:
            continue
        s = Settings()
        setattr(s, f.name, _changed(getattr(s, f.name)))
        if "extraction" in keys or "extraction_model" in keys:
            assert extraction_key("t", "model", "prompts", s) != base_x, f.name
        if "extraction_model" in keys:  # without a model call it does not matter
            assert extraction_key("t", "", "", s) == extraction_key("t", "", "", Settings()), f.name
        if "claims" in keys:
            assert claims_key("t", "model", "prompts", {}, s) != base_c, f.name
    # a setting outside the keys leaves them alone
    assert extraction_key("t", "model", "prompts", Settings(leiden_resolution=2.0)) == base_x


def test_modes_are_enums_that_keep_their_strings(tmp_path):
    s = Settings(reports="data")
    assert s.reports is Reports.DATA and s.reports == "data" and f"{s.reports}" == "data"
    assert s.index_fingerprint()["reports"] == "data" and '"reports": "data"' in s.to_json()
    s.extractor = "NLP"
    assert s.extractor is config.Extractor.NLP
    with pytest.raises(UserError, match="reports 'maybe' is not one of auto, model, data, none"):
        Settings(reports="maybe")
    cfg = tmp_path / "s.toml"
    cfg.write_text('answers = "extractive"\n')
    assert load(cfg)["answers"] == "extractive"
    cfg.write_text('answers = "poem"\n')
    with pytest.raises(UserError, match=r"s\.toml: answers = 'poem' must be one of auto, extractive, model"):
        load(cfg)


def test_choices_are_parsed_once_into_one_form(tmp_path):
    assert Settings(choices=" Type, keep").choices == "keep,type"
    assert Settings(choices="").choices == "auto" and Settings(choices="NONE").choices == "none"
    with pytest.raises(UserError, match="choices 'kepp'"):
        Settings(choices="kepp")
    cfg = tmp_path / "s.toml"
    cfg.write_text('choices = "relate,keep"\n')
    assert load(cfg)["choices"] == "keep,relate"
    # one canonical form: the same decisions written two ways are one extraction key
    assert extraction_key("t", "m", "p", Settings(choices="type,keep")) == \
        extraction_key("t", "m", "p", Settings(choices="keep,type"))


def test_temperature_is_gone_and_a_file_that_sets_it_gets_a_notice(tmp_path, capsys):
    assert "temperature" not in {f.name for f in dataclasses.fields(Settings)}
    cfg = tmp_path / "s.toml"
    cfg.write_text("temperature = 0.0\nseed = 3\n")
    assert load(cfg) == {"seed": 3}
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "'temperature' is no longer read" in err[0] and str(cfg) in err[0]
