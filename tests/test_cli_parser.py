"""The CLI parser (slmgraph.cli.parser): a mode option offers its Settings field's enum values and default, so
a new value is offered without a second list; --method offers the query methods of the API."""

import dataclasses
from types import MappingProxyType

import pytest

from slmgraph.api import METHODS
from slmgraph.cli.parser import build_parser
from slmgraph.config.settings import Mode, Settings
from slmgraph.tools.export import FORMATS

#: option -> (subcommand, Settings field, values it does not offer)
MODE_OPTIONS = {
    "--extractor": ("index", "extractor", ()), "--descriptions": ("index", "descriptions", ()),
    "--summaries": ("index", "summaries", ()), "--reports": ("index", "reports", ("none",)),
    "--executor": ("estimate", "executor", ()), "--answers": ("query", "answers", ()),
    "--opening": ("query", "opening", ()), "--helpfulness": ("query", "helpfulness", ()),
}


def _action(command: str, option: str):
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return next(a for a in sub.choices[command]._actions if option in a.option_strings)


def _field(name: str) -> dataclasses.Field:
    return next(f for f in dataclasses.fields(Settings) if f.name == name)


@pytest.mark.parametrize("option", sorted(MODE_OPTIONS))
def test_a_mode_option_offers_its_settings_enum(option):
    command, name, left_out = MODE_OPTIONS[option]
    f = _field(name)
    action = _action(command, option)
    assert list(action.choices) == [m.value for m in f.metadata["mode"] if m.value not in left_out]
    assert action.default == f.default and type(action.default) is str


def test_a_new_mode_value_is_offered_without_a_second_list(monkeypatch):
    class Extractor(Mode):
        LLM = "llm"
        NLP = "nlp"
        RULES = "rules"

    f = _field("extractor")
    monkeypatch.setattr(f, "metadata", MappingProxyType({**f.metadata, "mode": Extractor}))
    args = build_parser().parse_args(["index", "in", "--db", "x.duckdb", "--extractor", "rules"])
    assert args.extractor == "rules"


def test_method_and_format_choices_are_those_the_code_accepts():
    assert tuple(_action("query", "--method").choices) == METHODS
    assert tuple(_action("export", "--format").choices) == FORMATS
