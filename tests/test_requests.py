"""Issue 18, one way through: what a surface asks for is defined once, in ``kura.request``.

The CLI, HTTP (``kura.payloads``), MCP (``kura.mcp_tools``), the store pool
(``kura.service``) and the Python API each read a request's defaults and ranges from there;
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
    from kura import cli_context, context
    from kura.mcp_tools import CONTEXT as MCP_CONTEXT  # the tool's spec
    from kura.mcp_tools import Tools
    from kura.payloads import ContextIn
    from kura.request import CONTEXT, ContextRequest
    from kura.service import Service

    assert (CONTEXT.budget, ContextRequest.RANGES) == (4000, {"budget": (50, 200_000)})
    for function in (context.context, cli_context.context, Service.context):
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
