"""A running ``kura serve``, called over its HTTP API: the MCP tools' second back end.

``kura mcp`` with ``KURA_URL`` set answers from a server that is already up instead of
opening the stores itself, so several hosts share one warm embedding model and search
index, and writes from all of them go through one process. The methods mirror
``kura.serve.mcp_server.Local`` and return the same dictionaries the service does.

The server's refusals keep their meaning here: 404 is ``NotFound``, 403 is
``PolicyRefused``, 400/413/422 are ``InvalidRequest``, with the server's own message. A
server that cannot be reached, or that refuses the token, is a ``StoreError`` that says
how to fix it. ``httpx`` is imported on the first call, not at start-up.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from kura.errors import KuraError, NotFound, PolicyRefused, StoreError, UnknownStore
from kura.serve.pool import InvalidRequest

if TYPE_CHECKING:
    import httpx

CONNECT_SECONDS = 5.0
READ_SECONDS = 120.0  # a first recall loads the model and may build the index


class Remote:
    """``kura serve`` at ``url`` (bearer ``token`` if given). ``bound``: the one store
    every call names; otherwise each call names its own, or the server's default."""

    def __init__(self, url: str, *, token: str | None = None, bound: str | None = None) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.bound = bound
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()  # calls arrive on worker threads; one client serves them all

    # -- the calls --------------------------------------------------------------------------

    def stores(self) -> list[dict[str, Any]]:
        found = self._call("GET", "/stores", None)
        rows: list[dict[str, Any]] = found.get("stores", []) if isinstance(found, dict) else found
        return rows

    def name(self, selector: str | None) -> str:
        return str(_row(self.stores(), selector)["name"])

    def writable(self, selector: str | None) -> bool:
        return bool(_row(self.stores(), selector).get("writable"))

    def recall(
        self, selector: str | None, question: str, top: int, hops: int, chars: int, at: str = ""
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"question": question, "top": top, "hops": hops, "chars": chars}
        if at:  # only when asked: a server from before ``at`` refuses a field it does not know
            body["at"] = at
        found: dict[str, Any] = self._call("POST", "/recall", selector, json=body)
        return found

    def context(self, selector: str | None, task: str, budget: int) -> dict[str, Any]:
        found: dict[str, Any] = self._call(
            "POST", "/context", selector, json={"task": task, "budget": budget}
        )
        return found

    def read(self, selector: str | None, slug: str) -> dict[str, Any]:
        found: dict[str, Any] = self._call("GET", f"/memory/{quote(slug, safe='')}", selector)
        return found

    def map(self, selector: str | None) -> str:
        return str(self._call("GET", "/prefill", selector, params={"format": "text"}))

    def doctor(self, selector: str | None) -> dict[str, Any]:
        found: dict[str, Any] = self._call("GET", "/doctor", selector)
        return found

    def memories(self, selector: str | None, type: str | None) -> list[dict[str, Any]]:
        params = {"all": "true", **({"type": type} if type else {})}  # every one, with its state
        found = self._call("GET", "/memories", selector, params=params)
        rows: list[dict[str, Any]] = found.get("memories", []) if isinstance(found, dict) else found
        return rows

    def recent(self, selector: str | None, since: str, type: str | None) -> dict[str, Any]:
        params = {"since": since, **({"type": type} if type else {})}
        found: dict[str, Any] = self._call("GET", "/recent", selector, params=params)
        return found

    def remember(self, selector: str | None, **fields: Any) -> dict[str, Any]:
        body = {k: v for k, v in fields.items() if v is not None}
        found: dict[str, Any] = self._call("POST", "/remember", selector, json=body)
        return found

    def edit(self, selector: str | None, **fields: Any) -> dict[str, Any]:
        found: dict[str, Any] = self._call("POST", "/edit", selector, json=fields)
        return found

    def history(self, selector: str | None, slug: str) -> dict[str, Any]:
        found: dict[str, Any] = self._call("GET", f"/history/{quote(slug, safe='')}", selector)
        return found

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    # -- HTTP -------------------------------------------------------------------------------

    def _call(self, method: str, path: str, selector: str | None, **kwargs: Any) -> Any:
        import httpx

        params = dict(kwargs.pop("params", {}))
        store = self.bound or selector
        if store:
            params["store"] = store
        try:
            response = self._http().request(method, path, params=params, **kwargs)
        except httpx.HTTPError as err:
            raise StoreError(
                f"cannot reach kura serve at {self.url} ({type(err).__name__}: {err}); start it with "
                "`kura serve`, or unset KURA_URL to work on the stores directly"
            ) from None
        if response.status_code >= 400:
            raise _error(self.url, response)
        if response.headers.get("content-type", "").startswith("application/json"):
            return response.json()
        return response.text

    def _http(self) -> httpx.Client:
        import httpx

        with self._lock:
            if self._client is None:
                headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
                timeout = httpx.Timeout(READ_SECONDS, connect=CONNECT_SECONDS)
                self._client = httpx.Client(base_url=self.url, headers=headers, timeout=timeout)
            return self._client


def _row(rows: list[dict[str, Any]], selector: str | None) -> dict[str, Any]:
    """The server's row for the store a selector names (the default one for None)."""
    for row in rows:
        if row["name"] == selector or selector in row.get("modes", []):
            return row
    if selector is None and rows:
        return next((r for r in rows if r.get("default")), rows[0])
    names = ", ".join(r["name"] for r in rows) or "none"
    modes = ", ".join(sorted(m for r in rows for m in r.get("modes", []))) or "none"
    raise UnknownStore(f"no store or mode named {selector!r} (stores: {names}; modes: {modes})")


def _error(url: str, response: httpx.Response) -> KuraError:
    status, message = response.status_code, _message(response)
    if status == 401:
        return StoreError(
            f"kura serve at {url} wants a token ({message}); set KURA_TOKEN to the server's token"
        )
    if status == 403:
        return PolicyRefused(message)
    if status == 404:
        return NotFound(message)
    if status in (400, 413, 422):
        return InvalidRequest(message)
    return StoreError(f"kura serve at {url} answered {status}: {message}")


def _message(response: httpx.Response) -> str:
    """The server's own words: ``error``, ``detail`` (FastAPI's, a list for 422) or ``message``."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:300] or response.reason_phrase
    if not isinstance(body, dict):
        return str(body)[:300]
    for key in ("error", "detail", "message"):
        value = body.get(key)
        if isinstance(value, dict):
            value = value.get("message") or value.get("detail") or value
        if isinstance(value, list):
            value = "; ".join(_located(item) for item in value)
        if value:
            return str(value)
    return str(body)[:300]


def _located(item: Any) -> str:
    if not isinstance(item, dict):
        return str(item)
    where = ".".join(str(part) for part in item.get("loc", []) if part != "body")
    return f"{where}: {item.get('msg', '')}" if where else str(item.get("msg", item))
