"""Telling MCP sessions that the store changed: ``notifications/resources/list_changed``.

(``kura mcp`` runs its own watcher here; ``kura serve``'s ``/mcp`` hears its server's watchers
through ``StorePool.hear``; ``kura mcp`` with ``KURA_URL`` has no store to watch, so it asks the
server how many changes each store has had, ``poll_server``.)

A person edits a memory in their editor, or another agent writes one, while a host holds
a live session with ``kura mcp``: the resources the host listed (``kura.serve.mcp_resources``)
are no longer what is there. The store's watcher (``kura.serve.watch``, the one ``kura
watch`` and ``kura serve`` use: debounced, unchanged bytes ignored) runs in the server's
process, and each settled change is told to every session that has sent a request (the
only way to know a session exists at the low level of the SDK), from the watcher's thread
into the session's event loop. The warm state is refreshed first (``StorePool.changed``),
so a host that lists or recalls on hearing it gets what is on disk.

A 2026-07-28 session hears of changes only through ``subscriptions/listen``, which kura
does not serve, so such sessions are never told (and its capabilities say so).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from kura.serve.pool import StorePool
from kura.serve.watch import stop_watching, watch

log = logging.getLogger("kura.mcp")

_MODERN = ("2026-07-28",)  # protocol revisions whose notifications need subscriptions/listen
POLL = 2.0  # seconds between a proxy's looks at its server's change counts


class Listeners:
    """The sessions to tell, each with the event loop it lives in."""

    def __init__(self) -> None:
        self._sessions: dict[int, tuple[Any, Any]] = {}  # id(session) -> (session, anyio token)
        self._lock = threading.Lock()
        self._busy: set[int] = set()  # sessions with a send under way
        self._again: set[int] = set()  # … and a change since it began: told once more
        self.told = 0  # changes told (to any session)

    def heard(self, ctx: Any) -> None:
        """Note the session a request came on (called in its event loop)."""
        import anyio.lowlevel

        session = getattr(ctx, "session", None)
        if session is None or getattr(ctx, "protocol_version", None) in _MODERN:
            return
        with self._lock:
            if id(session) not in self._sessions:
                self._sessions[id(session)] = (session, anyio.lowlevel.current_token())

    def changed(self) -> None:
        """Tell every session the resource list changed (called from any thread, the event
        loop's too): each send from a thread of its own, at most one a session at a time. A
        change that comes while a session's send is under way is told once more when it
        returns (however many came), so a client that does not read, whose send waits, holds
        up no other session and a flood of changes gathers no threads. A session that has
        gone is forgotten."""
        with self._lock:
            idle = [(key, entry) for key, entry in self._sessions.items() if key not in self._busy]
            self._again.update(key for key in self._sessions if key in self._busy)
            self._busy.update(key for key, _ in idle)
        for key, (session, token) in idle:
            threading.Thread(
                target=self._tell, args=(key, session, token), name="kura-mcp-tell", daemon=True
            ).start()

    def _tell(self, key: int, session: Any, token: Any) -> None:
        import anyio.from_thread

        while True:
            try:
                anyio.from_thread.run(session.send_resource_list_changed, token=token)
            except Exception as err:  # noqa: BLE001 - a closed session or loop: stop telling it
                log.debug("resource list change not sent: %s", err)
                with self._lock:
                    self._sessions.pop(key, None)
                    self._busy.discard(key)
                    self._again.discard(key)
                return
            with self._lock:
                self.told += 1
                if key not in self._again:
                    self._busy.discard(key)
                    return
                self._again.discard(key)

    def soon(self) -> None:
        """``changed`` (kept for ``StorePool.hear``: a caller on the event loop, a page's save
        in ``kura serve``, is neither blocked nor refused the loop's own thread)."""
        self.changed()


class Watching:
    """The watchers started for a server; ``stop`` ends them."""

    def __init__(self) -> None:
        self.started: list[tuple[Any, Any]] = []
        self.stopped = threading.Event()
        self._lock = threading.Lock()

    def stop(self) -> None:
        self.stopped.set()
        with self._lock:
            for watcher, observer in self.started:
                stop_watching(watcher, observer)
            self.started.clear()


def watch_stores(service: StorePool, stores: Callable[[], list[str]], listeners: Listeners) -> Watching:
    """Watch each store ``stores()`` names, in a thread of its own (hashing a big store's
    files takes a moment and the host is waiting for its handshake); each change refreshes
    the service and is told to ``listeners``."""
    watching = Watching()

    def start() -> None:
        try:
            names = stores()
        except Exception as err:  # noqa: BLE001 - no store to watch: the tools say why when called
            log.debug("not watching: %s", err)
            return
        for name in names:
            if watching.stopped.is_set():
                return
            root = service.config.stores[name].path
            try:
                started = watch(root, _nothing, after=_tell(service, name, listeners), beat=False)
                service.watching(name)
            except OSError as err:
                log.warning("kura mcp: not watching store '%s' (%s)", name, err)
                continue
            with watching._lock:
                if watching.stopped.is_set():
                    stop_watching(*started)
                    return
                watching.started.append(started)

    threading.Thread(target=start, name="kura-mcp-watch", daemon=True).start()
    return watching


def poll_server(
    stores: Callable[[], list[dict[str, Any]]], listeners: Listeners, *, every: float = POLL
) -> Watching:
    """For ``kura mcp`` with ``KURA_URL``: ask the server for its stores (``GET /stores``: each
    with the count of changes its watchers took in) every ``every`` seconds, and tell the
    sessions when a count moved. A server that does not answer is asked again; one from before
    the counts moves none, so its sessions are told nothing, as before."""
    watching = Watching()

    def run() -> None:
        seen: dict[str, Any] | None = None
        while not watching.stopped.is_set():
            try:
                now = {str(row.get("name")): row.get("changes") for row in stores()}
            except Exception as err:  # noqa: BLE001 - a server gone a while: look again later
                log.debug("server not polled: %s", err)
            else:
                if seen is not None and now != seen:
                    listeners.changed()
                seen = now
            watching.stopped.wait(every)

    threading.Thread(target=run, name="kura-mcp-poll", daemon=True).start()
    return watching


def _tell(service: StorePool, name: str, listeners: Listeners) -> Callable[[set[str]], None]:
    def changed(rels: set[str]) -> None:
        service.changed(rels, name)
        listeners.changed()

    return changed


def _nothing() -> None:
    """The watcher's re-weave step: the map is woven again when it is asked for."""
