"""Serving: the store pool behind ``kura serve`` (HTTP) and ``kura mcp`` (MCP), and the watcher."""
