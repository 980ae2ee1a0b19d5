"""No import cycle among kura's modules, counting the imports hidden inside functions too.

A cycle means two modules each need the other: the layering is a fiction there, and which
one is imported first decides whether a name exists yet. An import under
``if TYPE_CHECKING:`` never runs, so it does not count; one under its ``else:`` does.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parent.parent / "kura"


def module_name(path: Path, package: Path) -> str:
    parts = (package.name, *path.relative_to(package).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_type_checking(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_nodes(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement in ``node`` that can run, at any depth (functions included)."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
        return
    children = (
        node.orelse if isinstance(node, ast.If) and is_type_checking(node) else ast.iter_child_nodes(node)
    )
    for child in children:
        yield from import_nodes(child)


def imported_modules(path: Path, package: Path, known: set[str]) -> set[str]:
    """The package's modules one file imports: ``import a.b``, ``from a.b import name``,
    ``from a import module`` and relative imports, resolved."""
    here = module_name(path, package)
    parent = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    for node in import_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = parent.split(".")[: len(parent.split(".")) - node.level + 1]
            base = ".".join([*anchor, base] if base else anchor)
        found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names)
    return {name for name in found if name in known and name != here}


def import_graph(package: Path = PACKAGE) -> nx.DiGraph:
    paths = sorted(package.rglob("*.py"))
    known = {module_name(p, package) for p in paths}
    graph = nx.DiGraph()
    graph.add_nodes_from(known)
    for path in paths:
        here = module_name(path, package)
        graph.add_edges_from((here, target) for target in imported_modules(path, package, known))
    return graph


def cycles_in(graph: nx.DiGraph) -> list[str]:
    """Each cycle as ``a -> b -> … -> a``, starting from its first module by name."""
    found = []
    for cycle in nx.simple_cycles(graph):
        start = cycle.index(min(cycle))
        ring = cycle[start:] + cycle[:start]
        found.append(" -> ".join([*ring, ring[0]]))
    return sorted(found)


def test_the_graph_counts_every_import_that_can_run(tmp_path: Path) -> None:
    pkg = tmp_path / "kura"
    (pkg / "sub").mkdir(parents=True)
    sources = {
        "__init__.py": "",
        "a.py": "from kura import b\n",
        "b.py": "def f():\n    from kura.c import thing\n",
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from kura import a\nelse:\n"
        "    import kura.sub.d\n",
        "sub/__init__.py": "",
        "sub/d.py": "from .. import a\n",
    }
    for name, text in sources.items():
        (pkg / name).write_text(text)
    graph = import_graph(pkg)
    assert sorted(graph.edges) == [
        ("kura.a", "kura.b"),
        ("kura.b", "kura.c"),
        ("kura.c", "kura.sub.d"),
        ("kura.sub.d", "kura.a"),
    ]
    assert cycles_in(graph) == ["kura.a -> kura.b -> kura.c -> kura.sub.d -> kura.a"]


def test_no_import_cycle_among_modules() -> None:
    cycles = cycles_in(import_graph())
    assert cycles == [], f"{len(cycles)} import cycle(s):\n" + "\n".join(cycles)
