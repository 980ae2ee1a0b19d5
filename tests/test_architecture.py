"""The shape the style guide promises, checked so it cannot quietly erode."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "kura"
EDGES = {
    "cli",
    "cli_base",
    "cli_look",
    "cli_recall",
    "cli_serve",
    "cli_mcp",
    "cli_distill",
    "cli_life",
    "cli_observe",
    "cli_context",
    "cli_eval",
    "cli_git",
    "cli_sync",
    "mcp_server",
    "server",
    "listener",
    "mcp",
    "watch",
    "__main__",
}
EDGE_ONLY = {"typer", "fastapi", "uvicorn", "mcp", "watchdog", "starlette"}
HEAVY = {"networkx", "onnxruntime", "numpy", "fastapi", "uvicorn", "mcp", "watchdog", "httpx", "markdown_it"}


def imported_roots(path: Path, *, top_level_only: bool) -> set[str]:
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    roots: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def core_modules() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if p.stem not in EDGES]


def test_core_never_imports_an_edge_framework() -> None:
    offenders = {p.name: imported_roots(p, top_level_only=False) & EDGE_ONLY for p in core_modules()}
    assert {name: found for name, found in offenders.items() if found} == {}


def test_heavy_imports_only_inside_functions() -> None:
    offenders = {p.name: imported_roots(p, top_level_only=True) & HEAVY for p in PACKAGE.rglob("*.py")}
    assert {name: found for name, found in offenders.items() if found} == {}


def test_importing_the_cli_stays_light() -> None:
    code = "import sys, kura.cli; print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in %r)))"
    result = subprocess.run([sys.executable, "-c", code % HEAVY], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


def test_modules_stay_small() -> None:
    sizes = {p.name: len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}
    assert {name: n for name, n in sizes.items() if n > 500} == {}


def test_every_core_module_explains_why() -> None:
    missing = [
        p.name
        for p in core_modules()
        if p.name != "__init__.py" and not ast.get_docstring(ast.parse(p.read_text()))
    ]
    assert missing == []


def test_a_current_prefill_imports_nothing_heavy(tmp_path: Path) -> None:
    import shutil

    store = tmp_path / "store"
    shutil.copytree(PACKAGE.parent / "sample-store", store, ignore=shutil.ignore_patterns(".kura"))
    subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(store), "weave"], capture_output=True, check=False
    )
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['kura', '-s', {str(store)!r}, 'prefill']\n"
        "try:\n    runpy.run_module('kura', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "heavy = {'yaml', 'typer', 'sqlite3', 'frontmatter', 'filelock', 'httpx', 'watchdog', 'networkx',"
        " 'markdown_it'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy), file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.startswith("<<<KURA-MAP store=store>>>")
    assert result.stderr.strip() == "[]"
