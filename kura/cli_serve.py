"""``kura serve``: the HTTP service (and MCP over streamable HTTP at ``/mcp``)."""

from __future__ import annotations
