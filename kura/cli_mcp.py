"""``kura mcp``: the MCP server over stdio, for hosts that start it themselves."""

from __future__ import annotations
