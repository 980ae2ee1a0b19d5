"""The token for a browser: what ``kura.serve.access.Guard`` does differently for the web pages.

A browser cannot add ``Authorization: Bearer`` to a link it follows, so on a server with a
token the pages (``/``, ``/ui/…``, ``/s/{name}/ui/…``) take the token once as ``?token=``:
a right one is answered with a redirect to the same URL without it, setting an HttpOnly,
SameSite=Strict cookie that the pages — and only the pages, never the JSON API or MCP —
accept from then on (compared in constant time, as the bearer token is). A wrong or
missing token on a page is a 401 page that says what to do, not the API's JSON.

The cookie is never sent by another site (SameSite=Strict), and a page's state-changing
form (pour, toss) is refused unless its ``Origin`` names this server (``same_origin``). It
holds a keyed hash of the token, never the token: browsers send a host's cookies to every
port on it, so another local service could read it — and would get a pass to these pages,
not the bearer token the API and MCP take.
"""

from __future__ import annotations

import hashlib
import hmac
import html
from urllib.parse import parse_qsl, urlencode, urlsplit

COOKIE = "kura_token"
STATIC = "/ui/static/"  # the stylesheet: no data in it, so no token (the 401 page uses it too)
PAGE_HEADERS: dict[str, str] = {
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",  # no-referrer would make a form's Origin "null"
    "cache-control": "no-store",
}


def is_page(path: str) -> bool:
    """True for the web pages: ``/``, ``/ui/…`` and ``/s/{name}/ui/…`` (and ``/s/{name}/``)."""
    if path in ("/", "/ui") or path.startswith("/ui/"):
        return True
    if path.startswith("/s/"):
        rest = path[3:].partition("/")[2]
        return rest in ("", "ui") or rest.startswith("ui/")
    return False


def cookie_token(header: str) -> str | None:
    """The ``kura_token`` value in a Cookie header, if there is one."""
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE:
            return value
    return None


def matches(given: str | None, token: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def query_token(query: str) -> tuple[str | None, str]:
    """(the ``token`` in a query string, the query without it)."""
    pairs = parse_qsl(query, keep_blank_values=True)
    tokens = [value for name, value in pairs if name == "token"]
    rest = urlencode([(name, value) for name, value in pairs if name != "token"])
    return (tokens[-1] if tokens else None), rest


def same_origin(origin: str | None, host: str | None) -> bool:
    """True when a browser's ``Origin`` names the server it is talking to (its ``Host``)."""
    if not origin or not host:
        return False
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.strip().lower()


def page_pass(token: str) -> str:
    """What the cookie holds: a keyed hash of the token, never the token itself."""
    return hmac.new(token.encode(), b"kura web pages", hashlib.sha256).hexdigest()


def cookie_matches(header: str, token: str) -> bool:
    return matches(cookie_token(header), page_pass(token))


def cookie_header(token: str) -> str:
    return f"{COOKIE}={page_pass(token)}; Path=/; HttpOnly; SameSite=Strict"


def unauthorised_page(wrong: bool) -> bytes:
    """The 401 a browser sees on a page without a valid token: what to do next."""
    said = (
        "The token in the link is not this server's token; nothing was set."
        if wrong
        else "This kura server is reachable from other machines, so it asks for its token."
    )
    body = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>kura — token needed</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="/ui/static/kura.css"></head>
<body><main class="narrow"><h1>A token is needed</h1>
<p>{html.escape(said)}</p>
<p>Open this page once with <code>?token=YOUR_TOKEN</code> added to its address. The token is
<code>$KURA_TOKEN</code> (or <code>[server] token</code> in <code>kura.toml</code>) where
<code>kura serve</code> runs. The browser then keeps it in a cookie for this site only and the
address loses it; the pages work from then on.</p>
<p>Scripts and agents send <code>Authorization: Bearer YOUR_TOKEN</code> instead.</p>
</main></body></html>
"""
    return body.encode("utf-8")


def page_headers(content_type: str = "text/html; charset=utf-8") -> list[tuple[bytes, bytes]]:
    """The headers every page answer carries (ASGI form)."""
    raw = [(b"content-type", content_type.encode())]
    return raw + [(k.encode(), v.encode()) for k, v in PAGE_HEADERS.items()]
