"""Where ``kura serve`` meets the network: the listening sockets, and a deadline on every
wait for a client.

Why it is built this way:

* **Bound first.** The sockets are bound before any store is opened or any model loaded,
  so a port another process holds, or an address this machine does not have, is one
  ``ConfigError`` naming host:port and the next step — not uvicorn's raw ``OSError`` logged
  after the whole app has started, and exit 3.
* **Every wait for the client has a deadline.** uvicorn closes a keep-alive connection only
  after an answer, so a connection that never sends a byte, a request head dribbled a byte
  at a time (slowloris) or a body far slower than its ``Content-Length`` promised each held
  a connection — and the Guard's whole-body read — for ever. Here a connection with no
  request under way is closed after ``idle`` seconds; a request's headers must all arrive
  within ``head`` seconds of the connection (or of the previous answer), and its body
  within ``body`` seconds of its headers, or it gets a 408 in the one JSON error shape and
  the connection is closed. A deadline counts the whole phase, not the gap between bytes,
  so dribbling does not reset it. The server's own turn (a slow recall, an MCP event
  stream) has no deadline.
* **One protocol, whatever is installed.** Always uvicorn's h11 protocol (httptools, when
  present, would bypass the deadlines) and no WebSocket protocol: every upgrade reaches the
  Guard as plain HTTP and is refused there in the one error shape, rather than depending on
  which WebSocket library happens to be installed.
* **Unreadable requests answer in the one shape too.** h11 refuses a malformed request (a
  bad request line, two ``Host`` headers) with a 400; it goes out as JSON like any other.
"""

from __future__ import annotations

import asyncio
import errno
import http
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from kura.errors import ConfigError
from kura.serve.access import error_body

if TYPE_CHECKING:
    import uvicorn

Phase = Literal["head", "body"]
MALFORMED = (
    "the request is not valid HTTP/1.1 (a malformed request line or header, or a header such as "
    "Host given twice); nothing ran"
)
BACKLOG = 2048  # uvicorn's default
LOOPBACK = "(127.0.0.1 serves this machine only)"


@dataclass(frozen=True, slots=True)
class Deadlines:
    """Seconds a client may take: ``idle`` with no request under way, ``head`` for a
    request's headers (from the connection or the previous answer), ``body`` for its body
    (from its headers). A 1 MiB body at the default takes ~35 KB/s."""

    idle: float = 5.0
    head: float = 10.0
    body: float = 30.0


def listen(host: str, port: int) -> list[socket.socket]:
    """Sockets bound and listening on every address ``host`` names (the first only for port
    0, so there is one port to report); ConfigError saying why not and what to do."""
    name = host.strip().removeprefix("[").removesuffix("]")
    where = f"[{name}]:{port}" if ":" in name else f"{name}:{port}"
    try:
        found = socket.getaddrinfo(name or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as err:
        why = f"no address has that name ({_reason(err)})"
        raise ConfigError(f"cannot listen on {where}: {why}; choose another --host {LOOPBACK}") from None
    addresses = list(dict.fromkeys((family, address) for family, _, _, _, address in found))
    sockets: list[socket.socket] = []
    try:
        for family, address in addresses[:1] if port == 0 else addresses:
            sockets.append(_bound(family, address))
    except OSError as err:
        for sock in sockets:
            sock.close()
        raise ConfigError(f"cannot listen on {where}: {_why(err)}") from None
    return sockets


def _bound(family: int, address: Any) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart need not wait out TIME_WAIT
        # Each answer leaves in one go: with Nagle on, a reply written as headers then body
        # waits for the client's delayed ACK (40 ms on Linux) before its last segment.
        # Accepted connections inherit the option (asyncio sets it only for proto=IPPROTO_TCP).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)  # "::" and "0.0.0.0" are two sockets
        sock.bind(address)
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def _why(err: OSError) -> str:
    if err.errno == errno.EADDRINUSE:
        return "another process is using that port (another kura serve?); stop it or choose another --port"
    if err.errno == errno.EADDRNOTAVAIL:
        return f"that address is not one of this machine's; choose another --host {LOOPBACK}"
    if err.errno == errno.EACCES:
        return "permission denied (ports below 1024 need privileges); choose another --port"
    return f"{_reason(err)}; check --host and --port"


def _reason(err: OSError | UnicodeError) -> str:
    return (err.strerror if isinstance(err, OSError) else None) or str(err) or type(err).__name__


def address_of(sock: socket.socket) -> str:
    """``http://host:port`` for a listening socket, as a person would type it."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if sock.family == socket.AF_INET6 else f"http://{host}:{port}"


def uvicorn_config(app: Any, *, deadlines: Deadlines = Deadlines(), **options: Any) -> uvicorn.Config:
    """The uvicorn configuration ``kura serve`` runs ``app`` with (``options`` on top, e.g.
    ``log_level``); run it with ``uvicorn.Server(config).run(sockets=listen(...))``."""
    import uvicorn

    return uvicorn.Config(
        app,
        http=_protocol(deadlines),
        ws="none",
        lifespan="on",
        server_header=False,
        access_log=False,
        **options,
    )


def raw_error(status: int, message: str) -> bytes:
    """A whole error response in the one JSON shape, closing the connection: for answers
    written beneath h11, where a request may be half-read."""
    body = error_body(status, message)
    head = (
        f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


def _protocol(deadlines: Deadlines) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a deadline on each phase that waits for the client."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Deadlined(H11Protocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.timeout_keep_alive = deadlines.idle  # type: ignore[assignment]  # a float is fine
            self.phase: Phase | None = None
            self.timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)  # type: ignore[arg-type]
            # idle from the start, not only after a first answer
            self.timeout_keep_alive_task = self.loop.call_later(
                deadlines.idle, self.timeout_keep_alive_handler
            )
            self.track()

        def connection_lost(self, exc: Exception | None) -> None:
            self.stop()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            super().handle_events()
            self.track()

        def track(self) -> None:
            """Arm the deadline of the phase the client is in, once per phase."""
            state = self.conn.their_state
            phase: Phase | None = "head" if state is h11.IDLE else "body" if state is h11.SEND_BODY else None
            if phase != self.phase:
                self.stop()
                self.phase = phase
                if phase is not None:
                    self.timer = self.loop.call_later(getattr(deadlines, phase), self.late, phase)

        def stop(self) -> None:
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None

        def late(self, phase: Phase) -> None:
            self.timer = None
            if self.transport.is_closing():
                return
            if phase == "head":
                said = f"the request's headers did not arrive within {deadlines.head:g} s"
            else:
                said = f"the request's body did not arrive within {deadlines.body:g} s of its headers"
            if phase == "head" or not self.cycle.response_started:  # else half an answer is out
                self.transport.write(raw_error(408, f"{said}; the connection is closed, nothing ran"))
            self.transport.close()  # the app, if it is reading the body, sees a disconnect: nothing runs

        def send_400_response(self, msg: str) -> None:
            self.transport.write(raw_error(400, MALFORMED))
            self.transport.close()

        def _unsupported_upgrade_warning(self) -> None:
            """Quiet: the Guard refuses the upgrade (uvicorn would suggest installing a
            WebSocket library, which would not help)."""

    return Deadlined
