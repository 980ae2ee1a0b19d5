"""A host on ``kura serve``'s ``/mcp`` hears that the store changed, as one on ``kura mcp`` does.

A real ``kura serve`` process (its own file watcher), the SDK's streamable HTTP client holding a
session open, and a memory file written on disk during the session: the session gets
``notifications/resources/list_changed`` and lists the new memory.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
from conftest import write_memory
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from test_write_origin import serving

DEADLINE = 30.0  # seconds for the watcher to start and tell one change


async def _session_hears_a_change(url: str, store: Path) -> tuple[int, list[str], list[str]]:
    import httpx2

    notes: list[Any] = []

    async def note(message: Any) -> None:
        notes.append(message)

    def told() -> int:
        return sum(isinstance(n, types.ResourceListChangedNotification) for n in notes)

    async with (
        httpx2.AsyncClient(timeout=30) as http,
        streamable_http_client(f"{url}/mcp/", http_client=http) as (read, write),
        ClientSession(read, write, message_handler=note) as session,
    ):
        await session.initialize()
        before = [r.uri for r in (await session.list_resources()).resources]
        deadline, attempt, again = time.monotonic() + DEADLINE, 0, 0.0
        while told() == 0 and time.monotonic() < deadline:
            if time.monotonic() >= again:  # the watcher hashes the files first: write until heard
                write_memory(store, "written-on-disk", "project", f"a fact written by hand {attempt}")
                attempt, again = attempt + 1, time.monotonic() + 1.0
            await anyio.sleep(0.05)
        after = [r.uri for r in (await session.list_resources()).resources]
        return told(), before, after


def test_a_file_written_during_an_http_session_is_told_as_a_list_change(tmp_path: Path) -> None:
    with serving(tmp_path) as server:
        told, before, after = anyio.run(_session_hears_a_change, server.url, server.root)
    assert told >= 1, f"no notifications/resources/list_changed within {DEADLINE:.0f} s of the edit"
    assert "kura://team/memory/written-on-disk" not in before
    assert "kura://team/memory/written-on-disk" in after
