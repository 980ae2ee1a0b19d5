"""``kura serve`` on the wire, attacked the way a hostile or broken client would: a real
uvicorn server on a loopback port configured as ``kura serve`` configures it (with short
deadlines so the suite stays fast), and raw sockets that send exactly what a slow, silent,
WebSocket-speaking or header-doubling client sends. The start-up checks run ``kura serve``
as a real process against a port that is really taken."""

from __future__ import annotations

import json
import os
import select
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import SAMPLE, uvicorn_app

from kura.config import parse_config
from kura.serve.http import create_app, mcp_mount
from kura.serve.listener import Deadlines
from kura.serve.pool import StorePool

TOKEN = "test-token-0123456789abcdef"
SHORT = Deadlines(idle=0.5, head=1.0, body=1.0)
WAIT = 10.0  # how long a test waits for what the deadlines promise, far past them


@dataclass
class Server:
    port: int
    root: Path

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=WAIT)


Copy = Callable[[Path], Path]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, sample_copy: Copy) -> Iterator[Server]:
    """The sample store, writable, behind ``kura serve``'s app (MCP mounted) with short deadlines."""
    yield from _serve(tmp_path_factory.mktemp("hardening"), sample_copy, token=None)


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory, sample_copy: Copy) -> Iterator[Server]:
    yield from _serve(tmp_path_factory.mktemp("hardening-token"), sample_copy, token=TOKEN)


def _serve(where: Path, sample_copy: Copy, *, token: str | None) -> Iterator[Server]:
    root = sample_copy(where / "team")
    service = StorePool(parse_config({"stores": {"team": {"path": str(root)}}}))
    try:
        app = create_app(service, token=token, mcp=mcp_mount(service), watch=False)
        with uvicorn_app(app, deadlines=SHORT) as url:
            yield Server(int(url.rsplit(":", 1)[1]), root)
    finally:
        service.close()


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def error(self, status: int) -> str:
        """The message of the one JSON error shape, after checking the status and the shape."""
        assert self.status == status, (self.status, self.body)
        assert self.headers["content-type"] == "application/json"
        said = json.loads(self.body)["error"]
        assert said["status"] == status
        message: str = said["message"]
        return message


def parse(data: bytes) -> Answer:
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return Answer(int(status_line.split()[1]), headers, body[: int(headers.get("content-length", len(body)))])


def answer(sock: socket.socket) -> Answer:
    """One response, read by its Content-Length (the connection may stay open)."""
    data = b""
    while b"\r\n\r\n" not in data:
        got = sock.recv(65536)
        assert got, f"the server closed the connection without answering: {data!r}"
        data += got
    head = parse(data)
    length = int(head.headers.get("content-length", "0"))
    while len(data.partition(b"\r\n\r\n")[2]) < length:
        data += sock.recv(65536)
    return parse(data)


def closed(sock: socket.socket) -> bytes | None:
    """Everything the server sent before it closed the connection, or None if it was still
    open after WAIT seconds."""
    data = b""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        ready, _, _ = select.select([sock], [], [], 0.05)
        if not ready:
            continue
        try:
            got = sock.recv(65536)
        except ConnectionResetError:
            return data
        if not got:
            return data
        data += got
    return None


def dribble(sock: socket.socket, data: bytes) -> tuple[int, bytes | None]:
    """Send ``data`` a byte every 50 ms (slowloris) until the server answers or closes, for
    at most WAIT seconds: how many bytes went out, and what came back before the close."""
    deadline = time.monotonic() + WAIT
    for sent in range(len(data)):
        ready, _, _ = select.select([sock], [], [], 0.05)
        if ready or time.monotonic() > deadline:
            return sent, closed(sock)
        try:
            sock.sendall(data[sent : sent + 1])
        except OSError:
            return sent, closed(sock)
    return len(data), closed(sock)


# -- idle and slow clients ---------------------------------------------------------------------


def test_a_connection_that_never_sends_a_byte_is_closed(server: Server) -> None:
    with server.connect() as sock:
        assert closed(sock) == b""


def test_a_connection_left_open_after_an_answer_is_closed(server: Server) -> None:
    with server.connect() as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert answer(sock).status == 200
        assert closed(sock) == b""


def test_a_head_sent_a_byte_at_a_time_is_cut_off(server: Server) -> None:
    head = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * 4000
    with server.connect() as sock:
        sent, said = dribble(sock, head)
    assert sent < len(head) and said is not None, "the server waited for the whole slow head"
    message = parse(said).error(408)
    assert message == "the request's headers did not arrive within 1 s; the connection is closed, nothing ran"
    assert parse(said).headers["connection"] == "close"


def test_a_body_slower_than_it_promised_is_cut_off_and_writes_nothing(server: Server) -> None:
    body = json.dumps({"slug": "slow-body", "description": "sent slowly", "body": "x" * 4000}).encode()
    head = f"POST /remember HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    with server.connect() as sock:
        sock.sendall(head + body[:100])
        sent, said = dribble(sock, body[100:])
    assert sent < len(body) - 100 and said is not None, "the server waited for the whole slow body"
    assert parse(said).error(408) == (
        "the request's body did not arrive within 1 s of its headers; the connection is closed, nothing ran"
    )
    assert not (server.root / "slow-body.md").exists()
    assert "slow-body" not in (server.root / "MEMORY.md").read_text()


def test_a_body_refused_unread_does_not_hold_the_connection(server: Server) -> None:
    """A 413 answers before the body is read; a client that keeps dribbling it is still cut off."""
    head = b"POST /recall HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99999999\r\n\r\n"
    with server.connect() as sock:
        sock.sendall(head + b"{")
        assert answer(sock).status == 413
        sent, said = dribble(sock, b"x" * 4000)
    assert sent < 4000 and said == b""


def test_requests_sent_whole_still_share_a_connection(server: Server) -> None:
    body = b'{"slug": "kept-alive", "description": "sent in two parts on a reused connection"}'
    with server.connect() as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert answer(sock).status == 200
        post = f"POST /remember HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        sock.sendall(post.encode() + body[:10])
        sock.sendall(body[10:])
        said = answer(sock)
    assert said.status == 200 and json.loads(said.body)["created"] is True
    assert (server.root / "kept-alive.md").exists()


# -- WebSocket handshakes ----------------------------------------------------------------------

HANDSHAKE = (
    "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:8085\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n"
)
REFUSED_WS = (
    "WebSocket is not served here: kura speaks plain HTTP (MCP: streamable HTTP at /mcp); nothing ran"
)


@pytest.mark.parametrize("path", ["/", "/health", "/mcp", "/mcp/", "/s/team/health", "/recall", "/nope"])
def test_a_websocket_handshake_is_refused_on_every_path(server: Server, path: str) -> None:
    with server.connect() as sock:
        sock.sendall(HANDSHAKE.format(path=path, extra="").encode())
        said = closed(sock)
    assert said is not None, f"{path}: the handshake was left hanging"
    assert parse(said).error(400) == REFUSED_WS
    assert parse(said).headers["connection"] == "close"


def test_a_cross_site_websocket_is_refused_before_the_token(token_server: Server) -> None:
    for extra in ("Origin: https://evil.example\r\n", f"Authorization: Bearer {TOKEN}\r\n", ""):
        with token_server.connect() as sock:
            sock.sendall(HANDSHAKE.format(path="/mcp", extra=extra).encode())
            said = closed(sock)
        assert said is not None and parse(said).error(400) == REFUSED_WS


# -- headers that must come once ---------------------------------------------------------------


def _remember(headers: str, slug: str) -> bytes:
    body = json.dumps({"slug": slug, "description": "planted with doubled headers"}).encode()
    head = f"POST /remember HTTP/1.1\r\n{headers}Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


@pytest.mark.parametrize(
    "origins",
    [
        ("https://evil.example", "http://localhost"),  # the guard used to read the last one only
        ("http://localhost", "https://evil.example"),
        ("http://localhost", "http://localhost"),
    ],
)
def test_two_origin_headers_are_a_400_and_write_nothing(server: Server, origins: tuple[str, str]) -> None:
    headers = "Host: 127.0.0.1\r\n" + "".join(f"Origin: {origin}\r\n" for origin in origins)
    with server.connect() as sock:
        sock.sendall(_remember(headers, "doubled"))
        message = answer(sock).error(400)
    assert message == "the request carries 2 Origin headers where one is allowed; nothing ran"
    assert not (server.root / "doubled.md").exists()


@pytest.mark.parametrize(
    "headers",
    ["Host: evil.example\r\nHost: 127.0.0.1\r\n", "Host: 127.0.0.1\r\nHost: evil.example\r\n"],
)
def test_two_host_headers_are_a_400_in_the_one_error_shape(server: Server, headers: str) -> None:
    with server.connect() as sock:
        sock.sendall(_remember(headers, "doubled-host"))
        said = closed(sock)
    assert said is not None
    assert parse(said).error(400) == (
        "the request is not valid HTTP/1.1 (a malformed request line or header, or a header such "
        "as Host given twice); nothing ran"
    )
    assert not (server.root / "doubled-host.md").exists()


def test_two_authorization_headers_are_a_400(token_server: Server) -> None:
    twice = f"Host: 127.0.0.1\r\nAuthorization: Bearer wrong\r\nAuthorization: Bearer {TOKEN}\r\n"
    with token_server.connect() as sock:
        sock.sendall(_remember(twice, "doubled-token"))
        message = answer(sock).error(400)
    assert message == "the request carries 2 Authorization headers where one is allowed; nothing ran"
    assert not (token_server.root / "doubled-token.md").exists()


# -- start-up: a port or an address that cannot be had -----------------------------------------


def _serve_process(
    store: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "kura", "-s", str(store), "serve", *args]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=60, env={**os.environ, **(env or {})}
    )


def test_a_busy_port_is_one_clear_line_and_exit_1(tmp_path: Path) -> None:
    store = tmp_path / "team"
    shutil.copytree(SAMPLE, store, ignore=shutil.ignore_patterns(".kura"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _serve_process(store, "--port", str(port))
    assert done.returncode == 1, done
    assert done.stdout == ""
    assert done.stderr == (
        f"kura: error: cannot listen on 127.0.0.1:{port}: another process is using that port "
        f"(another kura serve?); stop it or choose another --port\n"
    )


def test_an_address_not_on_this_machine_is_one_clear_line_and_exit_1(tmp_path: Path) -> None:
    store = tmp_path / "team"
    shutil.copytree(SAMPLE, store, ignore=shutil.ignore_patterns(".kura"))
    done = _serve_process(store, "--host", "192.0.2.1", "--port", "8085", env={"KURA_TOKEN": TOKEN})
    assert done.returncode == 1, done
    assert done.stdout == ""
    assert done.stderr == (
        "kura: error: cannot listen on 192.0.2.1:8085: that address is not one of this machine's; "
        "choose another --host (127.0.0.1 serves this machine only)\n"
    )


def test_every_connection_the_service_accepts_sends_without_waiting_for_acks() -> None:
    """An answer written as headers then body must leave at once: with Nagle's algorithm on,
    its last segment waited for the client's delayed ACK, 40 ms on Linux, for every small
    answer on a kept-alive connection (``/health`` took 44 ms, a warm recall 68). asyncio sets
    TCP_NODELAY only on sockets made with ``proto=IPPROTO_TCP``; the listener's accepted
    connections inherit it from the listening socket."""
    import socket

    from kura.serve.listener import listen

    for listening in listen("127.0.0.1", 0):
        with listening, socket.create_connection(listening.getsockname()[:2]):
            accepted, _ = listening.accept()
            with accepted:
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
