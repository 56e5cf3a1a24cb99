"""Import layers: no module imports one from a higher layer, no import cycle, only the adapter imports llama_cpp.

The layer table is read from ``slmgraph/ARCHITECTURE.md`` ("Layers"), so the
document and this test cannot disagree. Imports are read with ``ast`` from
every module of the package (those inside function bodies too), so a lazy
import cannot hide an upward edge or a cycle.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "slmgraph" / "ARCHITECTURE.md"
#: package dirs outside slmgraph/ (pyproject's package-dir)
EXTRA = {"slmgraph.prompts": ROOT / "prompts", "slmgraph.models": ROOT / "models"}


def module_files() -> dict[str, Path]:
    """``{dotted module name: file}`` of every module of the package."""
    out = {}
    for f in sorted((ROOT / "slmgraph").rglob("*.py")):
        parts = list(f.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = f
    for name, d in EXTRA.items():
        for f in sorted(d.glob("*.py")):
            out[name if f.stem == "__init__" else f"{name}.{f.stem}"] = f
    return out


def layer_table() -> list[list[str]]:
    """The "Layers" table of ARCHITECTURE.md: per layer, lowest first, its modules in order (dotted names)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("\n## Layers", 1)[1].split("\n## ", 1)[0]
    layers: dict[int, list[str]] = {}
    for m in re.finditer(r"^\|\s*(\d+)\s*\|[^|]*\|([^|]*)\|", section, re.M):
        names = re.findall(r"`([\w.]+)`", m.group(2))
        layers[int(m.group(1))] = [n if n == "slmgraph" else f"slmgraph.{n}" for n in names]
    assert layers, "no layer table found in ARCHITECTURE.md's Layers section"
    return [layers[k] for k in sorted(layers)]


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """slmgraph modules ``name`` imports anywhere in its file (``from . import x`` resolved to a module when x is one)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    package = name if is_pkg else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known and "." in t:
                t = t.rsplit(".", 1)[0]
            if t in known and t != name:
                out.add(t)
    return out


def import_graph() -> dict[str, set[str]]:
    """``{module: slmgraph modules it imports}``."""
    files = module_files()
    return {name: imports_of(name, f, set(files)) for name, f in files.items()}


def rank() -> dict[str, tuple[int, int]]:
    """``{module: (layer, position)}``; position orders the stage layer's modules by data flow (0 elsewhere)."""
    out = {}
    for i, mods in enumerate(layer_table()):
        for j, m in enumerate(mods):
            out[m] = (i, j)
    return out


def test_every_module_has_a_layer():
    placed = rank()
    missing = sorted(set(module_files()) - set(placed))
    assert not missing, f"modules missing from ARCHITECTURE.md's Layers table: {missing}"
    stale = sorted(set(placed) - set(module_files()))
    assert not stale, f"ARCHITECTURE.md's Layers table names modules that do not exist: {stale}"


def upward_imports(graph: dict[str, set[str]], ranks: dict[str, tuple[int, int]], ordered_layers: set[int]) -> list[str]:
    """Edges that go up: to a higher layer, or within an ordered layer to a later module."""
    bad = []
    for a, targets in graph.items():
        for b in targets:
            la, lb = ranks[a], ranks[b]
            if lb[0] > la[0] or (lb[0] == la[0] and la[0] in ordered_layers and lb[1] > la[1]):
                bad.append(f"{a} -> {b}")
    return sorted(bad)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import cycle found by depth-first search (each reported once per entry point)."""
    found, state = [], {}

    def visit(n, stack):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                found.append(stack[stack.index(m):] + [m])
            elif m not in state:
                visit(m, stack)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n, [])
    return found


def ordered_layers() -> set[int]:
    """Layers whose table row says their modules are listed in data-flow order."""
    text = ARCHITECTURE.read_text(encoding="utf-8").split("\n## Layers", 1)[1].split("\n## ", 1)[0]
    return {int(m.group(1)) for m in re.finditer(r"^\|\s*(\d+)\s*\|[^|]*\(in order\)", text, re.M)}


def test_no_import_goes_up_a_layer():
    assert upward_imports(import_graph(), rank(), ordered_layers()) == []


def test_no_import_cycle():
    assert cycles(import_graph()) == []


def test_only_the_adapter_imports_llama_cpp():
    users = []
    for name, f in module_files().items():
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(m == "llama_cpp" or m.startswith("llama_cpp.") for m in mods):
                users.append(name)
    assert sorted(set(users)) == ["slmgraph.model.adapter"]


@pytest.mark.parametrize("graph, expect", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, [["a", "b", "c", "a"]]),
    ({"a": {"b"}, "b": set()}, []),
])
def test_cycle_finder(graph, expect):
    assert cycles(graph) == expect


def test_checker_sees_an_upward_import():
    ranks = {"slmgraph.store": (0, 0), "slmgraph.graph": (2, 5), "slmgraph.reports": (2, 7), "slmgraph.cli": (5, 0)}
    graph = {"slmgraph.store": {"slmgraph.cli"}, "slmgraph.graph": {"slmgraph.reports"},
             "slmgraph.reports": {"slmgraph.graph"}, "slmgraph.cli": {"slmgraph.store"}}
    assert upward_imports(graph, ranks, {2}) == ["slmgraph.graph -> slmgraph.reports", "slmgraph.store -> slmgraph.cli"]


def test_lazy_imports_are_seen(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from .reports import degenerate\n    from . import store\n")
    assert imports_of("slmgraph.graph", f, {"slmgraph.reports", "slmgraph.store", "slmgraph"}) == {
        "slmgraph.reports", "slmgraph.store"}
