"""Telling MCP sessions of changes (``kura.serve.mcp_listeners.Listeners``) when one client
never reads: the other sessions are still told, and a flood of changes gathers no threads.

A client that stops reading its stream makes the SDK's send of a notification wait (the
session's streams have no room, the socket's buffer is full). Filling a real socket takes
tens of thousands of notifications, so the session here stands in for that client at the
SDK's boundary: its ``send_resource_list_changed`` awaits what never comes. Everything else
is real: the event loop (an anyio portal in its own thread, as uvicorn's is), the tokens the
listeners hand their sends to, the threads they start.

Before: ``changed`` told the sessions one after another and waited for each, so the stuck
first session kept every other one from ever hearing, and each change (``soon``) left one
more thread blocked behind it: 300 changes, 300 threads.
"""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel

from kura.serve.mcp_listeners import Listeners

DEADLINE = 10.0
FLOOD = 300


class _Session:
    """A session whose client reads (``stuck`` unset) or never does."""

    def __init__(self, stuck: anyio.Event | None) -> None:
        self.stuck = stuck
        self.sent = 0

    async def send_resource_list_changed(self) -> None:
        if self.stuck is not None:
            await self.stuck.wait()
        self.sent += 1


def _poll(done: Any) -> bool:
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(0.01)
    return done()


def test_a_client_that_never_reads_holds_up_no_other_session_and_no_threads() -> None:
    listeners = Listeners()
    with anyio.from_thread.start_blocking_portal() as portal:
        stuck = portal.call(anyio.Event)
        silent, reader = _Session(stuck), _Session(None)

        async def hear(session: _Session) -> None:
            listeners.heard(SimpleNamespace(session=session, protocol_version="2025-06-18"))

        portal.call(hear, silent)  # first: the one the old loop waited on
        portal.call(hear, reader)
        before = threading.active_count()
        try:
            listeners.soon()
            assert _poll(lambda: reader.sent >= 1), "the reading session was never told"
            for _ in range(FLOOD):
                listeners.soon()
            grown = threading.active_count() - before
            assert grown <= 3, f"{grown} threads more after {FLOOD} changes"
            told = reader.sent
            listeners.soon()
            assert _poll(lambda: reader.sent > told), "a change after the flood was not told"
        finally:
            portal.call(stuck.set)
        assert _poll(lambda: silent.sent >= 1)
        assert _poll(lambda: threading.active_count() <= before)


def test_a_session_that_has_gone_is_forgotten() -> None:
    listeners = Listeners()

    class Gone:
        async def send_resource_list_changed(self) -> None:
            raise anyio.ClosedResourceError

    with anyio.from_thread.start_blocking_portal() as portal:
        reader = _Session(None)

        async def hear(session: object) -> None:
            listeners.heard(SimpleNamespace(session=session, protocol_version="2025-06-18"))

        portal.call(hear, Gone())
        portal.call(hear, reader)
        listeners.soon()
        assert _poll(lambda: reader.sent == 1 and len(listeners._sessions) == 1)
        listeners.soon()
        assert _poll(lambda: reader.sent == 2)
