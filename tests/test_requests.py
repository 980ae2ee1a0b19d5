"""Issue 18, one way through: what a surface asks for is defined once, in ``kura.request``.

The CLI, HTTP (``kura.serve.schemas``), MCP (``kura.serve.mcp_tools``), the store pool
(``kura.serve.pool``) and the Python API each read a request's defaults and ranges from there;
none writes a number of its own, so changing one is one edit.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from types import SimpleNamespace

import kura


def _written(literal: str) -> list[str]:
    """The modules of the kura package that spell ``literal`` as a number."""
    package = Path(kura.__file__).parent
    return sorted(
        p.name for p in package.rglob("*.py") if re.search(rf"(?<![\w.]){literal}(?![\w.])", p.read_text())
    )


def test_every_surface_takes_its_context_budget_from_one_request() -> None:
    from kura.cli import context as cli_context
    from kura.recall import context
    from kura.request import CONTEXT, ContextRequest
    from kura.serve.mcp_tools import CONTEXT as MCP_CONTEXT  # the tool's spec
    from kura.serve.mcp_tools import Tools
    from kura.serve.pool import StorePool
    from kura.serve.schemas import ContextIn

    assert (CONTEXT.budget, ContextRequest.RANGES) == (4000, {"budget": (50, 200_000)})
    for function in (context.context, cli_context.context, StorePool.context):
        assert inspect.signature(function).parameters["budget"].default == CONTEXT.budget, function
    low, high = ContextRequest.RANGES["budget"]
    http = ContextIn.model_json_schema()["properties"]["budget"]
    assert (http["default"], http["minimum"], http["maximum"]) == (CONTEXT.budget, low, high)
    tools = Tools(SimpleNamespace(bound=None), readonly=True)  # type: ignore[arg-type]
    mcp = tools.schema(MCP_CONTEXT)["properties"]["budget"]
    assert (mcp["default"], mcp["minimum"], mcp["maximum"]) == (CONTEXT.budget, low, high)
    assert "(default 4000)" in mcp["description"]
    assert ContextRequest("t", budget=49).out_of_range() == "budget must be between 50 and 200000, got 49"
    assert ContextRequest("t", budget=200_000).out_of_range() == ""
    assert (low, CONTEXT.budget) == (context.MIN_BUDGET, context.DEFAULT_BUDGET)
    assert _written("4000") == ["request.py"]


def _constants(module: str) -> list[object]:
    """The literal values written in a kura module's code (strings, numbers; f-string parts)."""
    import ast

    tree = ast.parse((Path(kura.__file__).parent / f"{module}.py").read_text())
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)]


def test_every_surface_takes_its_remember_defaults_and_limits_from_one_request() -> None:
    from typer.main import get_command

    from kura.cli.base import app
    from kura.files import memory_index
    from kura.request import REMEMBER, RememberRequest
    from kura.serve import mcp_tools
    from kura.serve.schemas import RememberIn

    assert (REMEMBER.NEW_TYPE, REMEMBER.TITLE_CHARS, REMEMBER.SLUG_CHARS) == ("project", 40, 200)
    assert (
        RememberRequest("deploy-day", "deploys go out on Tuesdays").type is None
    )  # the store picks NEW_TYPE
    assert memory_index.TITLE_MAX == REMEMBER.TITLE_CHARS
    assert (
        memory_index.title_for("x" * 41, "deploys go out on Tuesdays", "deploy-day")
        == "deploys go out on Tuesdays"
    )
    http = RememberIn.model_json_schema()["properties"]
    assert http["slug"]["maxLength"] == REMEMBER.SLUG_CHARS
    assert http["supersedes"]["anyOf"][0]["maxLength"] == REMEMBER.SLUG_CHARS
    assert http["type"]["description"] == "New memories default to project."
    tools = mcp_tools.Tools(SimpleNamespace(bound=None), readonly=False)  # type: ignore[arg-type]
    mcp = tools.schema(mcp_tools.REMEMBER)["properties"]
    assert mcp["title"]["description"] == "Short title for the index (40 characters at most)."
    command = get_command(app).commands["remember"]  # type: ignore[attr-defined]
    helps = {p.name: p.help for p in command.params}
    assert helps["title"] == "Short title for the index (≤40 chars)."
    assert helps["type"] == "One of user, feedback, project, reference (new memories default to project)."
    for module in (
        "cli/commands",
        "serve/schemas",
        "serve/mcp_tools",
        "serve/mcp_specs",
        "files/memory_index",
        "files/memory",
    ):  # each reads them, none writes them
        written = _constants(module)
        assert [v for v in written if type(v) is int and v in (40, 200)] == [], module
        assert [v for v in written if isinstance(v, str) and re.search(r"to project|≤40|\b40 char", v)
                and "1–40" not in v] == [], module  # fmt: skip
    assert "project" not in _constants("files/memory")
