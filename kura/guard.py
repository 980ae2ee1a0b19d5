"""Who may talk to ``kura serve``, and how much they may send: decided before any routing.

This is plain ASGI wrapped around the whole app, so no route (the MCP mount included) can
forget it, and it needs no web framework to be read or tested.

* **Loopback unless there is a token.** A server reachable from other machines hands out
  every store it holds, so binding anything but loopback without a bearer token is refused
  at start. A token, once set, is checked on every route but ``/health`` in constant time.
* **A browser is the one local client that acts for someone else.** A request whose
  ``Origin`` is not this machine comes from another web site and is refused (it could
  otherwise post a memory with a "simple" cross-site request). Without a token the
  ``Host`` must be a loopback name too, so a page that rebinds its DNS name to 127.0.0.1
  gets nothing.
* **Whole bodies, bounded.** The body is read completely before the app runs and replayed
  to it, so a handler never acts on half a request. The limit is counted as bytes arrive:
  a Content-Length over it is refused unread, and a chunked body, or one longer than it
  claimed, is cut off as soon as it passes the limit.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from kura.errors import ConfigError
from kura.secrets import find_secret

if TYPE_CHECKING:
    from kura.config import Config

MAX_BODY = 1 << 20  # 1 MiB: a memory is a paragraph; the limit stops accidents, not authors
TOKEN_ENV = "KURA_TOKEN"

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """True for names and addresses that only this machine can reach."""
    name = host.strip().strip("[]").lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse to listen beyond loopback without a token (ConfigError says how to fix it)."""
    if not token and not is_loopback(host):
        raise ConfigError(
            f"refusing to listen on {host}: other machines could read and write every store "
            f"here — set ${TOKEN_ENV} (or [server] token in kura.toml) to a long random string "
            "that clients send as 'Authorization: Bearer …', or bind 127.0.0.1"
        )


def resolve_token(config: Config, env: dict[str, str], name: str = TOKEN_ENV) -> str | None:
    """The bearer token: the environment variable ``name`` first, then ``[server] token``."""
    token = env.get(name) or str(config.server.get("token") or "")
    return token.strip() or None


class Guard:
    """Pure ASGI, outside the router so nothing (the MCP mount included) can forget it:
    origin, host and token checks, then the whole body read and replayed."""

    def __init__(self, app: Any, *, token: str | None, limit: int = MAX_BODY) -> None:
        self.app, self.token, self.limit = app, token, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refused = self._refusal(scope["path"], headers)
        if refused is not None:
            await send_error(send, *refused)
            return
        declared = headers.get("content-length", "")
        if declared.strip().isdigit() and int(declared) > self.limit:
            await send_error(send, 413, self._too_large())  # refused unread; uvicorn drains the rest
            return
        body = await _read_body(receive, self.limit)
        if body is None:
            await send_error(send, 413, self._too_large())
            return
        await self.app(_json_scope(scope), _replay(body, receive), send)

    def _refusal(self, path: str, headers: dict[str, str]) -> tuple[int, str, dict[str, str]] | None:
        origin = headers.get("origin")
        if origin is not None and not is_loopback(urlsplit(origin).hostname or ""):
            return 403, f"requests from web pages at {origin} are refused; kura serves local clients", {}
        if self.token is None:
            host = headers.get("host", "localhost")
            if not is_loopback(_hostname(host)):
                return 403, f"Host {host!r} names another machine; without a token kura is loopback only", {}
            return None
        if path == "/health":
            return None
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), self.token.encode()):
            return None
        challenge = {"www-authenticate": 'Bearer realm="kura"'}
        return 401, "this server needs a token: send 'Authorization: Bearer <token>'", challenge

    def _too_large(self) -> str:
        return f"the request body is over {self.limit} bytes; nothing was read or written"


def _hostname(host: str) -> str:
    """The name in a Host header (``[::1]:8085`` → ``::1``), or "" when it is not one."""
    try:
        return urlsplit(f"//{host}").hostname or ""
    except ValueError:
        return ""


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole body, or None past ``limit`` (counted as it arrives, so a chunked body or
    one longer than its Content-Length is cut off as soon as it is too large)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks)  # the client left; the handler will see the disconnect
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # after the body: wait for the disconnect, as a server would

    return replay


def _json_scope(scope: Scope) -> Scope:
    """``/mcp`` without the slash reaches the mount; an API body is JSON whatever its type."""
    path = scope["path"]
    if path == "/mcp":
        return {**scope, "path": "/mcp/", "raw_path": b"/mcp/"}
    if path.startswith("/mcp/") or scope["method"] != "POST":
        return scope
    headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-type"]
    return {**scope, "headers": [*headers, (b"content-type", b"application/json")]}


async def send_error(send: Send, status: int, message: str, headers: dict[str, str] | None = None) -> None:
    body = error_body(status, message)
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def error_body(status: int, message: str, **extra: Any) -> bytes:
    if find_secret(message):
        message = "the request was refused; the reason would have repeated a secret, so it is not shown"
    detail = {"status": status, "message": message, **{k: v for k, v in extra.items() if v is not None}}
    return json.dumps({"error": detail}, ensure_ascii=False).encode("utf-8")
