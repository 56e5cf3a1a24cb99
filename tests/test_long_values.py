"""A value the user gave -- an entity name, an option's value, a path, the names a question asks about -- of
10,000 characters is quoted in an error or answer line by its first characters and "…", never in full; a path
too long for the file system is one error line, not a traceback."""

import pytest

from slmgraph.cli.main import main
from slmgraph.config.file import convert_argument
from slmgraph.errors import ECHO_CHARS, UserError, echo, echo_repr
from slmgraph.query import browse
from slmgraph.query.named import quoted_names
from slmgraph.store.db import Store

LONG = "Zorblax" + "Q" * 10_000


def _one_short_line(text: str) -> str:
    lines = [x for x in text.splitlines() if x.strip()]
    assert len(lines) == 1, text[:500]
    assert len(lines[0]) < ECHO_CHARS + 250 and "…" in lines[0], lines[0][:500]
    return lines[0]


def test_echo_cuts_a_long_value_and_leaves_a_short_one():
    assert echo("Ana Reyes") == "Ana Reyes" and echo_repr("Ana Reyes") == "'Ana Reyes'"
    assert echo(LONG) == LONG[:ECHO_CHARS] + "…"
    assert echo_repr(LONG) == repr(LONG[:ECHO_CHARS] + "…")
    assert echo([LONG]).startswith("['Zorblax") and len(echo([LONG])) == ECHO_CHARS + 1


def test_an_unknown_entity_of_a_long_name_is_refused_in_one_short_line(tmp_path):
    store = Store(tmp_path / "i.duckdb", create=True)
    try:
        with pytest.raises(UserError) as err:
            browse.entity(store, LONG)
    finally:
        store.close()
    line = _one_short_line(str(err.value))
    assert line.startswith("entity 'ZorblaxQQ") and "is not in this index" in line


def test_a_setting_of_a_long_value_is_refused_in_one_short_line():
    with pytest.raises(UserError) as err:
        convert_argument("answers", LONG, "Index.query(answers=...)")
    assert "must be one of" in _one_short_line(str(err.value))


def test_a_refusal_quotes_long_names_cut_and_many_names_counted():
    assert quoted_names(["Ana Reyes", "Bo Lund"]) == "'Ana Reyes' or 'Bo Lund'"
    assert quoted_names([LONG]) == f"'{LONG[:ECHO_CHARS]}…'"
    names = [f"Name{i} Person" for i in range(12)]
    assert quoted_names(names) == ", ".join(f"'{n}'" for n in names[:5]) + " or 7 other names"


@pytest.mark.parametrize("argv", [
    ["query", "--db", "x.duckdb", "--method", LONG, "Who?"],   # argparse's invalid choice
    ["query", "--db", "x.duckdb", "--level", LONG, "Who?"],    # argparse's invalid int
    ["stats", "--db", "x.duckdb", LONG],                       # unrecognized arguments
    ["stats", "--db", LONG],                                   # a --db name too long to look up
    ["query", "--db", LONG, "Who?"],
    ["index", LONG, "--db", "x.duckdb"],                       # an input path too long to look up
])
def test_the_command_line_refuses_a_long_value_in_one_short_line(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse's own errors
        status = exc.code
    assert status == 2
    _one_short_line(capsys.readouterr().err)
    assert not (tmp_path / "x.duckdb").exists()
