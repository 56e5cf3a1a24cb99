"""The word lists of names (slmgraph.names.lexicon): one home for titles and corporate suffixes, and what the
sub-lists keep apart."""

import ast
import re
from pathlib import Path

import pytest

from slmgraph.names import lexicon
from slmgraph.text.markdown import mask_markup

PACKAGE = Path(__file__).resolve().parent.parent / "slmgraph"
#: Words only a title list or a corporate-suffix list holds: a string in code naming two of them is such a list.
MARKERS = frozenset("gmbh llc plc kg srl mrs mx insp monsieur mme mlle".split())


def _list_strings(path: Path) -> list[str]:
    """The string constants of a module that are not docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_titles_and_corporate_suffixes_are_listed_only_in_the_lexicon():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "lexicon.py" and path.parent.name == "names":
            continue
        strings = _list_strings(path)
        words = {w.casefold() for s in strings for w in re.findall(r"[A-Za-z]+", s)}
        if len(words & MARKERS) >= 2:
            found.append(f"{path.relative_to(PACKAGE)}: {sorted(words & MARKERS)}")
    assert not found, found


def test_sub_lists_are_parts_of_their_family():
    assert lexicon.PERSONAL_TITLES <= lexicon.TITLES
    assert set(lexicon.TITLES_PYSBD_LACKS) <= set(lexicon.TITLE_ABBREVIATIONS)
    assert lexicon.COMPANY_ABBREVIATIONS <= lexicon.MERGE_KEY_SUFFIXES & lexicon.COMMA_SUFFIXES & lexicon.ORG_SUFFIXES
    assert lexicon.TITLES <= lexicon.ROLE_WORDS
    assert not lexicon.REGNAL_NUMBERS & lexicon.MERGE_KEY_SUFFIXES  # "World War II" keeps its number


@pytest.mark.parametrize("tag", ["mark", "MARK", "q"])
def test_html_elements_are_masked_by_the_same_tag_list_as_quoted_prose(tag):
    # <mark> and <q> are HTML elements (the prose renderer drops them): masked, so "Mark" is not part of a name
    text = f"Read <{tag}>Zorbitz Quell</{tag}> today."
    masked = mask_markup(text)
    assert len(masked) == len(text)
    assert re.findall(r"[A-Za-z]+", masked) == ["Read", "Zorbitz", "Quell", "today"]
