"""An unknown setting or option name gets one message naming it and the nearest valid name, wherever it is given."""

import types

import pytest

import slmgraph
from slmgraph.api import Index
from slmgraph.config import file as sf
from slmgraph.config.settings import Settings
from slmgraph.errors import UserError


@pytest.mark.parametrize("name,nearest", [
    ("chunk_sise", "chunk_size"), ("chunksize", "chunk_size"), ("overlap", "chunk_overlap"),
    ("resolution_treshold", "resolution_threshold"),
])
def test_python_api_suggests_the_nearest_setting(tmp_path, name, nearest):
    with pytest.raises(UserError) as exc:
        slmgraph.index(tmp_path, tmp_path / "x.duckdb", **{name: 300})
    msg = str(exc.value)
    assert "\n" not in msg and f"unknown setting {name!r}" in msg and f"did you mean {nearest}?" in msg
    assert not (tmp_path / "x.duckdb").exists()


def test_settings_file_suggests_the_nearest_key_not_the_first_with_the_same_prefix(tmp_path):
    cfg = tmp_path / "s.toml"
    cfg.write_text("chunk_overlapp = 3\n")
    with pytest.raises(UserError, match=r"unknown key 'chunk_overlapp' \(did you mean chunk_overlap\?\)"):
        sf.load(cfg)


def test_query_option_suggests_the_nearest_option():
    fake = types.SimpleNamespace(settings=Settings())
    with pytest.raises(UserError, match=r"unknown option 'budgett' \(did you mean budget\?\)"):
        Index.query_settings(fake, budgett=3)


def test_no_hint_when_nothing_is_close():
    assert sf.nearest_name("zebra", sf.KEYS) is None
    msg = sf.unknown_name("here", "setting", "zebra", sf.KEYS, "see the keys")
    assert msg == "here: unknown setting 'zebra': see the keys"
