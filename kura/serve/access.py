"""Who may talk to ``kura serve``, and how much they may send: decided before any routing.

This is plain ASGI wrapped around the whole app, so no route (the MCP mount included) can
forget it, and it needs no web framework to be read or tested.

* **Loopback unless there is a token.** A server reachable from other machines hands out
  every store it holds, so binding anything but loopback without a bearer token is refused
  at start. A token, once set, is checked on every route but ``/health`` in constant time.
* **The web pages take the token once.** A browser cannot send a bearer header on a link,
  so a page (``/``, ``/ui/…``) given ``?token=`` sets an HttpOnly, SameSite=Strict cookie and
  redirects to itself without it; the pages, and only they, accept that cookie, and a page
  without a valid token is a 401 page saying what to do (``kura.serve.web_access``).
* **A browser is the one local client that acts for someone else.** A request whose
  ``Origin`` is not this machine comes from another web site and is refused (it could
  otherwise post a memory with a "simple" cross-site request); with a token, an ``Origin``
  naming this very server (its ``Host``) is the pages' own forms and passes. Without a token the
  ``Host`` must be a loopback name too, so a page that rebinds its DNS name to 127.0.0.1
  gets nothing.
* **Whole bodies, bounded.** The body is read completely before the app runs and replayed
  to it, so a handler never acts on half a request: a client that leaves before its body is
  complete (fewer bytes than its Content-Length, a chunked body with no last chunk) is
  dropped without the app running at all. The limit is counted as bytes arrive: a
  Content-Length over it is refused unread, and a chunked body, or one longer than it
  claimed, is cut off as soon as it passes the limit.
* **One of each.** A request with two ``Host``, ``Origin`` or ``Authorization`` headers is
  a 400: a check that reads one of them while something else reads the other is a bypass
  (two ``Origin`` headers, the hostile one first, once got a cross-site write through).
* **HTTP only.** A WebSocket handshake is refused here with a 400 (it would otherwise pass
  every check above); ``kura serve`` hands every upgrade over as plain HTTP, and a
  WebSocket scope from another server is closed before it is accepted. The lifespan
  passes through.
* **A crash is an answer, not a dropped connection.** An exception that escapes the app
  before it answered becomes the JSON 500 (traceback to the server log) and the
  connection stays usable, as after any other error.
* **No echo of secrets or floods.** An error body whose text, keys included, looks like a
  secret loses its details; a value it repeats is cut to a couple of hundred characters.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from kura.errors import ConfigError
from kura.serve import web_access as web
from kura.text.secrets import find_secret

if TYPE_CHECKING:
    from kura.config import Config

MAX_BODY = 1 << 20  # 1 MiB: a memory is a paragraph; the limit stops accidents, not authors
MAX_ECHO = 200  # characters of a client's value an error message may repeat
ONCE = ("host", "origin", "authorization")  # headers a check reads: two of one is ambiguous
NO_WEBSOCKET = (
    "WebSocket is not served here: kura speaks plain HTTP (MCP: streamable HTTP at /mcp); nothing ran"
)
TOKEN_ENV = "KURA_TOKEN"

log = logging.getLogger("uvicorn.error")  # the server log uvicorn prints

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
        if scope["type"] == "websocket":  # not from kura serve (ws="none"); it would skip every check
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1008})  # refused: the server answers 403
            return
        if scope["type"] != "http":  # the lifespan
            await self.app(scope, receive, send)
            return
        named = [(k.decode("latin-1").lower(), v.decode("latin-1")) for k, v in scope["headers"]]
        headers = dict(named)
        refused = _malformed(named) or self._refusal(scope["path"], headers) or write_refusal(scope, headers)
        page = web.is_page(scope["path"])
        if page and self.token is not None and scope["method"] == "GET" and (refused or (401,))[0] == 401:
            given, rest = web.query_token(scope.get("query_string", b"").decode("latin-1"))
            if given is not None:  # ?token= once: a cookie, and the same address without it
                await self._take_token(send, scope.get("raw_path") or scope["path"].encode(), given, rest)
                return
        if page and refused is not None and refused[0] == 401:  # a browser: say it as a page
            await _send_page(send, 401, web.unauthorised_page(wrong=False), refused[2])
            return
        if refused is not None:
            await send_error(send, *refused)
            return
        declared = headers.get("content-length", "")
        if declared.strip().isdigit() and int(declared) > self.limit:
            # refused unread: what follows is discarded until the body deadline (kura.serve.listener)
            await send_error(send, 413, self._too_large())
            return
        try:
            body = await _read_body(receive, self.limit)
        except ClientLeft:
            return  # mid-body: nothing runs (nothing is written), and there is no one to answer
        if body is None:
            await send_error(send, 413, self._too_large())
            return
        await self._run(_json_scope(scope), _replay(body, receive), send)

    async def _run(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app, with an escaped exception answered here as the JSON 500 rather than
        re-raised (Starlette would reply and re-raise, and uvicorn then drops the
        keep-alive connection without ``Connection: close``)."""
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as err:
            if started:
                raise  # half an answer is out: only closing the connection can say so
            log.exception("kura serve: %s %s failed", scope.get("method"), scope.get("path"))
            await send_error(
                send, 500, f"internal error ({type(err).__name__}); the server log has the details"
            )

    async def _take_token(self, send: Send, path: bytes, given: str, rest: str) -> None:
        assert self.token is not None
        if not web.matches(given, self.token):
            await _send_page(send, 401, web.unauthorised_page(wrong=True), {})
            return
        where = path.decode("latin-1") + (f"?{rest}" if rest else "")
        headers = {"location": where, "set-cookie": web.cookie_header(self.token)}
        await _send_page(send, 303, b"", headers)

    def _refusal(self, path: str, headers: dict[str, str]) -> tuple[int, str, dict[str, str]] | None:
        origin = headers.get("origin")
        ours = self.token is not None and web.same_origin(origin, headers.get("host"))  # the pages' forms
        if origin is not None and not ours and not is_loopback(urlsplit(origin).hostname or ""):
            return 403, f"requests from web pages at {origin} are refused; kura serves local clients", {}
        if self.token is None:
            host = headers.get("host", "localhost")
            if not is_loopback(_hostname(host)):
                return 403, f"Host {host!r} names another machine; without a token kura is loopback only", {}
            return None
        if path == "/health" or path.startswith(web.STATIC):
            return None
        if web.is_page(path) and web.cookie_matches(headers.get("cookie", ""), self.token):
            return None
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), self.token.encode()):
            return None
        challenge = {"www-authenticate": 'Bearer realm="kura"'}
        return 401, "this server needs a token: send 'Authorization: Bearer <token>'", challenge

    def _too_large(self) -> str:
        return f"the request body is over {self.limit} bytes; nothing was read or written"


def _malformed(named: list[tuple[str, str]]) -> tuple[int, str, dict[str, str]] | None:
    """A request no check can judge: a header it reads given twice, or a WebSocket handshake."""
    names = [name for name, _ in named]
    for name in ONCE:
        if (count := names.count(name)) > 1:
            said = f"the request carries {count} {name.title()} headers where one is allowed; nothing ran"
            return 400, said, {}
    upgrades = ",".join(value for name, value in named if name == "upgrade").split(",")
    if "websocket" in (token.strip().lower() for token in upgrades):
        return 400, NO_WEBSOCKET, {"connection": "close"}
    return None


WRITES = ("POST", "PUT", "PATCH", "DELETE")
READS = ("/recall", "/context")  # POST routes that only read: a question is a body too


def is_write(method: str, path: str) -> bool:
    """True for a request of the JSON API (or MCP) that may change a store: any method but
    GET/HEAD/OPTIONS, save the two questions (``/recall``, ``/context``, prefixed or not).
    The pages' forms are not: they check their own ``Origin`` (``kura.serve.web``)."""
    if method not in WRITES or web.is_page(path):
        return False
    bare = path.split("/", 3)[3] if path.startswith("/s/") and path.count("/") >= 3 else path[1:]
    return f"/{bare}" not in READS


def write_refusal(scope: Scope, headers: dict[str, str]) -> tuple[int, str, dict[str, str]] | None:
    """Why a write may not run: a browser page may send a "simple" request (``text/plain``, a
    form type) to any local port with no preflight, and every page on this machine has a
    loopback origin. So a write is JSON, and an ``Origin``, when there is one, is this very
    server (its ``Host``); a client with no ``Origin`` is no browser, and the token rule holds."""
    method, path = scope["method"], scope["path"]
    if not is_write(method, path):
        return None
    origin = headers.get("origin")
    if origin is not None and not web.same_origin(origin, headers.get("host")):
        said = f"writes from web pages at {origin} are refused: a write takes this server's own origin"
        return 403, f"{said}; nothing was written", {}
    kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if method != "DELETE" and kind != "application/json":
        said = f"a write's body must be sent as application/json (Content-Type was {kind or 'missing'!r})"
        return 415, f"{said}; nothing was written — send 'Content-Type: application/json'", {}
    return None


def _hostname(host: str) -> str:
    """The name in a Host header (``[::1]:8085`` → ``::1``), or "" when it is not one."""
    try:
        return urlsplit(f"//{host}").hostname or ""
    except ValueError:
        return ""


class ClientLeft(Exception):
    """The client disconnected before the last of its body arrived."""


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole body; None past ``limit`` (counted as it arrives, so a chunked body or
    one longer than its Content-Length is cut off as soon as it is too large). ClientLeft
    when the client disconnected before the last of it: half a body is never run."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise ClientLeft
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


async def _send_page(send: Send, status: int, body: bytes, headers: dict[str, str]) -> None:
    raw = [*web.page_headers(), (b"content-length", str(len(body)).encode())]
    raw += [(k.encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


async def send_error(send: Send, status: int, message: str, headers: dict[str, str] | None = None) -> None:
    body = error_body(status, message)
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


HIDDEN = "the request was refused; the reason would have repeated a secret, so it is not shown"
_QUOTED = re.compile(rf"'([^'\n]{{{MAX_ECHO}}})[^'\n]+'" + rf'|"([^"\n]{{{MAX_ECHO}}})[^"\n]+"')


def shorten(text: str, limit: int = MAX_ECHO) -> str:
    """``text`` with any quoted value over ``limit`` characters cut short, and the whole
    kept under a few times that: a message may repeat what it refuses, not a flood of it."""
    text = _QUOTED.sub(lambda m: f"'{m.group(1) or m.group(2)}…'", text)
    return text if len(text) <= 5 * limit else text[: 5 * limit] + "…"


def _clipped(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= MAX_ECHO else value[:MAX_ECHO] + "…"
    if isinstance(value, list | tuple):
        return [_clipped(v) for v in value]
    if isinstance(value, dict):
        return {_clipped(str(k)): _clipped(v) for k, v in value.items()}
    return value


def error_body(status: int, message: str, **extra: Any) -> bytes:
    """The one error shape. Echoed values are cut short; if anything in it — the message,
    a field name in ``details``, any value — looks like a secret, only a generic message
    is sent."""
    extra = {k: v for k, v in extra.items() if v is not None}
    whole = json.dumps({"message": message, **extra}, ensure_ascii=False, default=str)  # before cutting
    detail = {"status": status, "message": shorten(message), **{k: _clipped(v) for k, v in extra.items()}}
    body = json.dumps({"error": detail}, ensure_ascii=False)
    if find_secret(whole) or find_secret(body) or find_secret(json.dumps(detail)):  # JSON's escapes too
        body = json.dumps({"error": {"status": status, "message": HIDDEN}})
    return body.encode("utf-8")
