"""The HTTP service, run for real: uvicorn on a free loopback port, every route through httpx.

Bad input is written as attacks — each case a way a client could break a request, smuggle a
name out of its store or slip past the guard — with the exact status it must get, and a
check that nothing was written."""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import Cli, uvicorn_app, write_memory

from kura.config import Config, parse_config
from kura.errors import ConfigError
from kura.files.memory_index import parse_index
from kura.serve.access import MAX_BODY, check_bind, is_loopback, resolve_token
from kura.serve.http import create_app
from kura.serve.pool import MAX_TOP, StorePool
from kura.store.store import Store

TOKEN = "test-token-0123456789abcdef"
SECRET = "sk-ant-" + "Q" * 40


def make_stores(root: Path, sample_copy: Callable[[Path], Path]) -> Config:
    """team (writable, the sample store), vault (frozen), desk (distiller-only), and a
    memory-shaped file beside them that no route may ever serve."""
    sample_copy(root / "team")
    for name in ("vault", "desk"):
        (root / name).mkdir()
    write_memory(root / "vault", "archive-disk", "project", "the archive lives on the slow disk")
    (root / "vault" / "MEMORY.md").write_text("# I\n\n- [Archive](archive-disk.md) — slow disk\n")
    (root / "desk" / "MEMORY.md").write_text("# Desk\n")
    (root / "outside.md").write_text("---\nname: o\ndescription: FOREIGN\ntype: user\n---\nFOREIGN\n")
    return config_for(root)


def config_for(root: Path) -> Config:
    return parse_config(
        {
            "stores": {
                "team": {"path": str(root / "team"), "label": "the team"},
                "vault": {"path": str(root / "vault"), "write_policy": "frozen", "charter": "Be terse."},
                "desk": {"path": str(root / "desk"), "write_policy": "distiller-only"},
            },
            "modes": {"build": "team", "archive": "vault"},
        }
    )


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, sample_copy: Callable[[Path], Path]) -> Path:
    """The stores with their search indexes built once, so each copy recalls at once."""
    root = tmp_path_factory.mktemp("template")
    service = StorePool(make_stores(root, sample_copy))
    for name in ("team", "vault"):
        service.recall("warm up", hops=0, selector=name)
    service.close()
    return root


def copy_of(template: Path, where: Path) -> Config:
    shutil.copytree(template, where)  # copy2 keeps mtimes: the copied index is still current
    return config_for(where)


def running(app: Any) -> Any:
    """A real uvicorn server for ``app`` on a free loopback port (``conftest.uvicorn_app``)."""
    return uvicorn_app(app)


@dataclass
class Served:
    url: str
    service: StorePool
    http: httpx.Client

    def root(self, store: str = "team") -> Path:
        return Path(self.service.config.stores[store].path)

    def files(self) -> dict[str, bytes]:
        """Every memory file and index of every store, to prove nothing was written."""
        roots = [self.root(name) for name in self.service.config.stores]
        return {str(p): p.read_bytes() for root in roots for p in sorted(root.rglob("*.md"))}


@contextmanager
def serving(config: Config, *, readonly: bool = False, **options: Any) -> Iterator[Served]:
    service = StorePool(config, readonly=readonly)
    try:
        with running(create_app(service, **options)) as url, httpx.Client(base_url=url, timeout=30) as client:
            yield Served(url, service, client)
    finally:
        service.close()


@pytest.fixture
def served(template: Path, tmp_path: Path) -> Iterator[Served]:
    """A server of its own, for a test that writes."""
    with serving(copy_of(template, tmp_path / "stores")) as s:
        yield s


@pytest.fixture(scope="module")
def shared(template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server for the tests that must not write (each checks that nothing was)."""
    with serving(copy_of(template, tmp_path_factory.mktemp("shared") / "stores")) as s:
        yield s


def error(response: httpx.Response, status: int) -> dict[str, Any]:
    """The error object, after checking the status and the one error shape."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body: dict[str, Any] = response.json()["error"]
    assert body["status"] == status and body["message"]
    return body


def raw(url: str, request: bytes) -> tuple[int, bytes]:
    """Send bytes exactly as given (no URL normalising, any headers) and read one response."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            data += sock.recv(65536)
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = dict(line.lower().split(": ", 1) for line in lines[1:])
        while len(rest) < int(headers.get("content-length", 0)):
            rest += sock.recv(65536)
        return int(lines[0].split()[1]), rest


# -- every route -------------------------------------------------------------------------------


def test_every_route_answers(served: Served) -> None:
    http = served.http
    assert http.get("/health").json()["ok"] is True
    assert [(s["name"], s["writable"], s["modes"]) for s in http.get("/stores").json()] == [
        ("desk", False, []), ("team", True, ["build"]), ("vault", False, ["archive"]),
    ]  # fmt: skip
    assert http.get("/doctor").json()["store"] == "team"
    assert [r["store"] for r in http.get("/doctor?all=1").json()] == ["desk", "team", "vault"]
    index = http.get("/index")
    assert index.headers["content-type"].startswith("text/plain") and index.text.startswith("# Memory index")
    assert http.get("/profile?store=vault").json() == {
        "store": "vault", "label": "", "charter": "Be terse.", "persona": ""
    }  # fmt: skip
    memory = http.get("/memory/backup-schedule").json()
    assert memory["slug"] == "backup-schedule" and memory["type"] == "project"
    assert memory["text"] == (served.root() / "backup-schedule.md").read_text()
    listed = http.get("/memories").json()
    keys = {"slug", "name", "description", "type", "state", "archived", "archived_reason", "superseded_by"}
    assert len(listed) == 40 and keys == set(listed[0]) and {m["state"] for m in listed} == {"current"}
    assert {m["type"] for m in http.get("/memories?type=feedback").json()} == {"feedback"}
    found = http.post("/recall", json={"question": "when do the nightly database backups run?", "hops": 0})
    assert found.status_code == 200 and found.json()["picked"][0]["slug"] == "backup-schedule"
    made = http.post(
        "/remember", json={"slug": "tea", "description": "green tea in the kitchen", "type": "user"}
    )
    assert made.json() == {
        "store": "team", "slug": "tea", "path": "tea.md", "created": True, "changed": True, "index_changed": True,
        "body_kept": False, "superseded": None, "revises": None, "notes": [],
    }  # fmt: skip
    assert "- [green tea in the kitchen](tea.md)" in (served.root() / "MEMORY.md").read_text()
    assert http.get("/memory/tea").json()["description"] == "green tea in the kitchen"


def test_context_lists_its_items_and_what_was_left_out(served: Served) -> None:
    asked = {"task": "when do the nightly database backups run?", "budget": 500}
    told = served.http.post("/context", json=asked)
    assert told.status_code == 200
    body = told.json()
    assert body["tokens"] <= 500 and body["store"] == "team" and body["recall"] == "embedded"
    assert [s["name"] for s in body["sections"]][:3] == ["rules", "map", "memory"]
    assert {"section", "source", "tokens", "why"} <= set(body["items"][0])
    assert body["left_out"] and all(i["why"] for i in body["left_out"])
    assert body["tokens"] <= sum(s["tokens"] for s in body["sections"]) <= 500
    assert served.http.post("/context", json=asked).json()["text"] == body["text"]
    assert served.http.post("/context", json={**asked, "budget": 10}).status_code == 422
    assert served.http.post("/context", json={"task": ""}).status_code == 422


def test_prefill_has_an_etag_and_answers_304(served: Served) -> None:
    http = served.http
    text = http.get("/prefill?format=text")
    assert text.status_code == 200 and text.text.startswith("<<<KURA-MAP store=team>>>")
    tag = text.headers["etag"]
    assert tag.startswith('"') and http.get("/prefill").headers["etag"] == f"W/{tag}"
    assert http.get("/prefill").json()["text"] == text.text
    for sent in (tag, f"W/{tag}", f'"nope", {tag}', "*", tag.strip('"')):
        again = http.get("/prefill?format=text", headers={"if-none-match": sent})
        assert (again.status_code, again.content, again.headers["etag"]) == (304, b"", tag), sent
    assert http.get("/prefill", headers={"if-none-match": tag}).status_code == 304
    assert http.get("/prefill?format=text", headers={"if-none-match": '"other"'}).status_code == 200
    http.post("/remember", json={"slug": "tea", "description": "green tea in the kitchen"})
    changed = http.get("/prefill?format=text", headers={"if-none-match": tag})
    assert changed.status_code == 200 and changed.headers["etag"] != tag and "green tea" in changed.text


# -- choosing a store --------------------------------------------------------------------------


def test_each_selector_form_reaches_its_store(shared: Served) -> None:
    http = shared.http
    for path in (
        "/memories?store=vault",
        "/memories?mode=archive",
        "/s/vault/memories",
        "/s/archive/memories",
    ):
        assert [m["slug"] for m in http.get(path).json()] == ["archive-disk"], path
    for body in ({"store": "vault"}, {"mode": "archive"}):
        found = http.post("/recall", json={"question": "where is the archive?", "hops": 0, **body})
        assert found.json()["store"] == "vault"
    assert http.post("/s/archive/recall", json={"question": "archive disk"}).json()["store"] == "vault"
    assert http.get("/s/vault/index").text.startswith("# I")
    assert http.get("/s/vault/memory/archive-disk").json()["slug"] == "archive-disk"
    assert http.get("/s/build/memory/archive-disk").status_code == 404  # the team has no such memory
    # two selectors that agree are fine; two that disagree are refused, never one silently chosen
    assert http.get("/s/vault/profile?mode=archive").json()["store"] == "vault"
    said = error(http.get("/s/vault/profile?store=team"), 422)["message"]
    assert "names two stores" in said and "'vault'" in said and "'team'" in said
    error(http.post("/recall?store=team", json={"question": "x", "store": "vault"}), 422)


def test_an_unknown_store_is_a_404_listing_the_stores(shared: Served) -> None:
    http = shared.http
    for response in (
        http.get("/index?store=nope"),
        http.get("/index?mode=nope"),
        http.get("/s/nope/index"),
        http.get("/s/nope/health"),
        http.post("/recall", json={"question": "x", "store": "nope"}),
        http.post("/remember", json={"slug": "x", "description": "y", "mode": "nope"}),
        http.get(f"/memories?store={shared.root('vault')}"),  # a folder path is never a selector
    ):
        assert error(response, 404)["stores"] == ["desk", "team", "vault"]
    assert not (shared.root() / "x.md").exists()


PROBES = [
    "/memory/../MEMORY",
    "/memory/%2e%2e/MEMORY",
    "/memory/..%2f..%2foutside",
    "/memory/%2e%2e%2f%2e%2e%2foutside",
    "/memory/../../outside",
    "/memory//etc/passwd",
    "/memory/%2Fetc%2Fpasswd",
    "/memory/..%5c..%5coutside",
    "/memory/MEMORY",
    "/memory/.kura/lock",
    "/memory/archive-disk",  # another store's memory
    "/memory/%00backup-schedule",
    "/s/..%2fvault/memory/archive-disk",
    "/s/%2e%2e/memory/outside",
]


@pytest.mark.parametrize("path", PROBES)
def test_a_name_never_leaves_its_store(shared: Served, path: str) -> None:
    status, body = raw(
        shared.url, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
    )
    assert status == 404 and b"FOREIGN" not in body and b"root:" not in body
    assert json.loads(body)["error"]["status"] == 404


# -- bad input ---------------------------------------------------------------------------------

BAD = [
    # (what, method, path, body, status)
    ("malformed JSON", "POST", "/recall", b'{"question": ', 400),
    ("not UTF-8", "POST", "/remember", b'{"slug": "x", "description": "\xff\xfe"}', 400),
    ("JSON, not an object", "POST", "/recall", b'["question"]', 422),
    ("no body at all", "POST", "/remember", b"", 422),
    ("missing question", "POST", "/recall", {"hops": 1}, 422),
    ("question not a string", "POST", "/recall", {"question": 5}, 422),
    ("blank question", "POST", "/recall", {"question": "   "}, 422),
    ("top as a string", "POST", "/recall", {"question": "x", "top": "3"}, 422),
    ("top as a bool", "POST", "/recall", {"question": "x", "top": True}, 422),
    ("top as a float", "POST", "/recall", {"question": "x", "top": 2.5}, 422),
    ("top zero", "POST", "/recall", {"question": "x", "top": 0}, 422),
    ("top too big", "POST", "/recall", {"question": "x", "top": MAX_TOP + 1}, 422),
    ("top enormous", "POST", "/recall", {"question": "x", "top": 10**40}, 422),
    ("hops negative", "POST", "/recall", {"question": "x", "hops": -1}, 422),
    ("chars tiny", "POST", "/recall", {"question": "x", "chars": 10}, 422),
    ("store not a string", "POST", "/recall", {"question": "x", "store": ["vault"]}, 422),
    ("a misspelled field", "POST", "/remember", {"slug": "x", "description": "y", "tpye": "user"}, 422),
    ("missing description", "POST", "/remember", {"slug": "x"}, 422),
    ("empty description", "POST", "/remember", {"slug": "x", "description": ""}, 422),
    ("blank description", "POST", "/remember", {"slug": "x", "description": " \n "}, 422),
    ("unknown type", "POST", "/remember", {"slug": "x", "description": "y", "type": "secrets"}, 422),
    ("slug escaping", "POST", "/remember", {"slug": "../x", "description": "y"}, 422),
    ("slug absolute", "POST", "/remember", {"slug": "/tmp/x", "description": "y"}, 422),
    ("slug is the index", "POST", "/remember", {"slug": "MEMORY", "description": "y"}, 422),
    ("body not a string", "POST", "/remember", {"slug": "x", "description": "y", "body": {"a": 1}}, 422),
    ("lone surrogate", "POST", "/remember", b'{"slug": "x", "description": "y \\ud800"}', 422),
    ("unknown type filter", "GET", "/memories?type=secrets", None, 422),
    ("unknown format", "GET", "/prefill?format=xml", None, 422),
    ("all not a bool", "GET", "/doctor?all=maybe", None, 422),
    ("no such route", "GET", "/nope", None, 404),
    ("wrong method", "GET", "/recall", None, 405),
    ("no such memory", "GET", "/memory/never-written", None, 404),
]


@pytest.mark.parametrize(("what", "method", "path", "body", "status"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_gets_the_right_status_and_changes_nothing(
    shared: Served, what: str, method: str, path: str, body: Any, status: int
) -> None:
    before = shared.files()
    content = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    response = shared.http.request(
        method, path, content=content, headers={"content-type": "application/json"}
    )
    error(response, status)
    assert shared.files() == before


def test_a_crash_is_a_json_500_that_keeps_its_details(
    shared: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> None:
        raise RuntimeError("/private/path/in/the/traceback")

    monkeypatch.setattr(shared.service, "health", broken)
    said = error(shared.http.get("/health"), 500)
    assert "RuntimeError" in said["message"] and "/private/path" not in said["message"]


def test_a_refused_secret_is_never_echoed(shared: Served) -> None:
    before = shared.files()
    for fields in ({"body": f"the key is {SECRET}"}, {"title": SECRET}, {"slug": SECRET}):
        response = shared.http.post(
            "/remember", json={"slug": "keys", "description": "where keys live", **fields}
        )
        assert (
            response.status_code == 422 and SECRET not in response.text and SECRET[:20] not in response.text
        )
    typed = shared.http.post("/remember", json={"slug": "k", "description": "d", "type": SECRET})
    assert typed.status_code == 422 and SECRET not in typed.text  # a validation error does not echo input
    assert shared.files() == before


def test_oversized_bodies_are_refused_whatever_content_length_says(shared: Served) -> None:
    before = shared.files()
    big = json.dumps({"slug": "big", "description": "x" * MAX_BODY}).encode()
    error(shared.http.post("/remember", content=big, headers={"content-type": "application/json"}), 413)

    def chunks() -> Iterator[bytes]:  # no content-length at all: chunked
        yield b'{"slug": "big", "description": "'
        for _ in range(20):
            yield b"x" * 65536
        yield b'"}'

    error(shared.http.post("/remember", content=chunks(), headers={"content-type": "application/json"}), 413)
    head = "POST /remember HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
    # claims a gigabyte, sends a few bytes: refused at once, not waited for
    status, body = raw(shared.url, f"{head}content-length: 1000000000\r\n\r\n{{}}".encode())
    assert status == 413 and json.loads(body)["error"]["status"] == 413
    # claims a few bytes, sends more: only what it claimed is read, and that is not JSON
    status, body = raw(
        shared.url, f'{head}content-length: 20\r\n\r\n{{"slug": "lie", "description": "x"}}'.encode()
    )
    assert status == 400 and json.loads(body)["error"]["status"] == 400
    assert shared.http.get("/health").status_code == 200  # the server is fine
    assert shared.files() == before


def test_writes_are_refused_where_the_store_or_server_says_so(shared: Served) -> None:
    before = shared.files()
    assert (
        "frozen"
        in error(shared.http.post("/s/vault/remember", json={"slug": "x", "description": "y"}), 403)[
            "message"
        ]
    )
    said = error(shared.http.post("/remember", json={"slug": "x", "description": "y", "store": "desk"}), 403)
    assert "distiller-only" in said["message"]
    assert shared.files() == before
    with serving(shared.service.config, readonly=True) as readonly:
        assert [s["writable"] for s in readonly.http.get("/stores").json()] == [False, False, False]
        said = error(readonly.http.post("/remember", json={"slug": "x", "description": "y"}), 403)
        assert "read-only" in said["message"]
        assert readonly.http.post("/recall", json={"question": "backups"}).status_code == 200
    assert shared.files() == before


def test_curl_without_a_json_content_type_still_works(shared: Served) -> None:
    """The seed's ``curl -d`` line sends a form content type; the body is JSON all the same."""
    response = shared.http.post(
        "/recall",
        content=b'{"question":"when do backups run?","hops":1}',
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code == 200 and response.json()["question"] == "when do backups run?"


# -- who may talk to it ------------------------------------------------------------------------


def test_web_pages_and_rebound_hosts_are_refused(shared: Served) -> None:
    before = shared.files()
    post = {"slug": "csrf", "description": "planted by a web page"}
    for headers in ({"origin": "https://evil.example"}, {"origin": "null"}, {"host": "evil.example:8085"}):
        error(shared.http.post("/remember", json=post, headers=headers), 403)
        error(shared.http.get("/memories", headers=headers), 403)
    assert shared.files() == before
    assert shared.http.get("/stores", headers={"origin": "http://localhost:3000"}).status_code == 200
    assert shared.http.get("/stores", headers={"host": "localhost:8085"}).status_code == 200


def test_a_token_guards_every_route_but_health(template: Path, tmp_path: Path) -> None:
    with serving(copy_of(template, tmp_path / "stores"), token=TOKEN) as s:
        assert s.http.get("/health").status_code == 200
        for path in ("/stores", "/s/team/health", "/memories", "/openapi.json", "/mcp"):
            said = s.http.get(path)
            assert said.status_code == 401 and said.headers["www-authenticate"] == 'Bearer realm="kura"', path
        error(s.http.get("/stores", headers={"authorization": "Bearer wrong"}), 401)
        error(s.http.get("/stores", headers={"authorization": TOKEN}), 401)
        error(s.http.post("/remember", json={"slug": "x", "description": "y"}), 401)
        good = {"authorization": f"Bearer {TOKEN}"}
        assert s.http.get("/stores", headers=good).status_code == 200
        assert (
            s.http.get("/s/vault/memories", headers={"authorization": f"bearer {TOKEN}"}).status_code == 200
        )
        schema = s.http.get("/openapi.json", headers=good).json()
        assert schema["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
        assert schema["paths"]["/health"]["get"]["security"] == []
        assert not (s.root() / "x.md").exists()


def test_only_loopback_is_served_without_a_token(template: Path, tmp_path: Path, cli: Cli) -> None:
    for host in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"):
        assert is_loopback(host) and check_bind(host, None) is None
    for host in ("0.0.0.0", "::", "192.168.1.5", "example.com", ""):
        with pytest.raises(ConfigError, match=r"refusing to listen on .*KURA_TOKEN"):
            check_bind(host, None)
        check_bind(host, TOKEN)
    config = copy_of(template, tmp_path / "stores")
    assert resolve_token(config, {}) is None
    assert resolve_token(config, {"KURA_TOKEN": TOKEN}) == TOKEN
    assert resolve_token(config, {"MY_TOKEN": "abc"}, "MY_TOKEN") == "abc"
    with_token = parse_config({**config.raw, "server": {"token": "from-config"}})
    assert resolve_token(with_token, {}) == "from-config"
    assert resolve_token(with_token, {"KURA_TOKEN": TOKEN}) == TOKEN
    refused = cli("-s", str(tmp_path / "stores" / "team"), "serve", "--host", "0.0.0.0", "--port", "1")
    assert refused.code == 1 and "refusing to listen on 0.0.0.0" in refused.err
    helped = cli("serve", "--help")
    assert helped.code == 0 and "curl -s -X POST localhost:8085/recall" in helped.out


# -- schema, mount, warm state -----------------------------------------------------------------


def test_the_openapi_schema_lists_every_route(shared: Served) -> None:
    schema = shared.http.get("/openapi.json").json()
    routes = {
        "/health": "get", "/stores": "get", "/doctor": "get", "/index": "get", "/prefill": "get",
        "/profile": "get", "/memory/{slug}": "get", "/memories": "get", "/recall": "post", "/remember": "post",
    }  # fmt: skip
    for path, method in routes.items():
        assert method in schema["paths"][path], path
        prefixed = schema["paths"][f"/s/{{name}}{path}"][method]
        assert ("name", "path") in {(p["name"], p["in"]) for p in prefixed["parameters"]}, path
    recall = schema["components"]["schemas"]["RecallIn"]["properties"]
    assert recall["top"]["maximum"] == MAX_TOP and recall["top"]["minimum"] == 1
    remember = schema["paths"]["/remember"]["post"]["responses"]
    assert remember["403"]["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorOut")
    assert "304" in schema["paths"]["/prefill"]["get"]["responses"]
    params = {p["name"] for p in schema["paths"]["/memories"]["get"]["parameters"]}
    assert params == {"store", "mode", "type", "all"}
    # every error is described as the one shape the server sends, text routes included
    error_ref = {"schema": {"$ref": "#/components/schemas/ErrorOut"}}
    assert schema["paths"]["/index"]["get"]["responses"]["404"]["content"] == {"application/json": error_ref}
    assert schema["paths"]["/recall"]["post"]["responses"]["422"]["content"] == {
        "application/json": error_ref
    }
    assert "404" in schema["paths"]["/s/{name}/health"]["get"]["responses"]
    assert "HTTPValidationError" not in schema["components"]["schemas"]


def test_mcp_is_mounted_with_its_lifespan(template: Path, tmp_path: Path) -> None:
    seen: list[str] = []

    async def mcp_app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["path"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"mcp"})

    @asynccontextmanager
    async def lifespan() -> Any:
        seen.append("started")
        yield
        seen.append("stopped")

    with serving(copy_of(template, tmp_path / "stores"), token=TOKEN, mcp=(mcp_app, lifespan)) as s:
        assert seen == ["started"]
        good = {"authorization": f"Bearer {TOKEN}"}
        assert s.http.post("/mcp", json={}, headers=good).text == "mcp"
        assert s.http.post("/mcp/", json={}, headers=good).text == "mcp"
        assert s.http.post("/mcp", json={}).status_code == 401
    assert seen == ["started", "/mcp/", "/mcp/", "stopped"]


def test_a_hand_edit_reaches_warm_recall_through_the_watcher(
    served: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    told: list[tuple[set[str], str | None]] = []
    real = served.service.changed
    monkeypatch.setattr(
        served.service,
        "changed",
        lambda rels, selector=None: (told.append((rels, selector)), real(rels, selector)),
    )
    served.http.post("/recall", json={"question": "backups", "hops": 0})  # the index is warm now
    write_memory(served.root(), "espresso", "user", "the espresso machine is descaled every Monday")
    poll(lambda: any("espresso.md" in rels and store == "team" for rels, store in told))
    found = served.http.post("/recall", json={"question": "coffee maker maintenance", "top": 1, "hops": 0})
    assert found.json()["picked"][0]["slug"] == "espresso"


def poll(ok: Callable[[], bool], deadline: float = 10.0) -> None:
    end = time.monotonic() + deadline
    while not ok():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)


# -- many writers at once ----------------------------------------------------------------------

WRITERS, EACH, CLI_EACH = 8, 50, 10


def test_concurrent_writers_and_hand_edits_lose_nothing(served: Served) -> None:
    """8 HTTP clients x 50 remembers, a CLI-style writer in the same store, a hand edit of a
    memory while they run and of MEMORY.md's prose half way: everything survives."""
    root = served.root()
    gate = threading.Barrier(WRITERS + 2)  # the writers, the CLI writer and the person
    failures: list[str] = []

    def http_writer(n: int) -> None:
        with httpx.Client(base_url=served.url, timeout=60) as client:
            for i in range(EACH):
                if i == EACH // 2:
                    gate.wait(120)
                    gate.wait(120)
                body = {"slug": f"w{n}-m{i:02d}", "description": f"writer {n} memory {i}: sent over HTTP"}
                response = client.post("/remember", json={**body, "type": "project"})
                if response.status_code != 200:
                    failures.append(response.text)

    def cli_writer() -> None:
        store = Store(root, name="team")  # another Store object, as another process has
        for i in range(2 * CLI_EACH):
            if i == CLI_EACH:
                gate.wait(120)
                gate.wait(120)
            store.remember(f"cli-{i:02d}", f"written from the command line, number {i}", type="user")

    threads = [threading.Thread(target=http_writer, args=(n,)) for n in range(WRITERS)]
    threads.append(threading.Thread(target=cli_writer))
    for thread in threads:
        thread.start()
    edited = (root / "backup-schedule.md").read_text().replace("02:30 UTC nightly", "03:15 UTC nightly")
    _editor_save(root / "backup-schedule.md", edited)  # while the writers run
    gate.wait(120)
    prose = "<!-- Hand-edited: ask Mika before removing anything here. -->"
    index_text = (root / "MEMORY.md").read_text()
    _editor_save(root / "MEMORY.md", index_text.replace(index_text.splitlines()[2], prose))
    gate.wait(120)
    for thread in threads:
        thread.join(60)
    assert failures == []

    written = {f"w{n}-m{i:02d}" for n in range(WRITERS) for i in range(EACH)}
    written |= {f"cli-{i:02d}" for i in range(2 * CLI_EACH)}
    slugs = set(Store(root).slugs())
    assert written <= slugs and len(slugs) == 40 + len(written)
    index = parse_index((root / "MEMORY.md").read_text())
    entries = [line.slugs[0] for line in index.entries()]
    assert sorted(entries) == sorted(slugs)  # exactly one line per memory
    assert prose in (root / "MEMORY.md").read_text()
    assert (root / "backup-schedule.md").read_text() == edited
    report = served.service.doctor("team")
    assert [f for f in report["findings"] if f["check"] == "index"] == []
    assert report["memories"] == len(slugs)
    assert not list(root.glob(".*.tmp"))


def _editor_save(path: Path, text: str) -> None:
    """Save the way VS Code does: write a temporary file, rename it over the original."""
    tmp = path.with_name(f".{path.name}.tmp-editor")
    tmp.write_text(text)
    tmp.replace(path)


# -- the serving edges -------------------------------------------------------------------------


def _through_guard(scope: dict[str, Any], messages: list[dict[str, Any]]) -> tuple[list[str], list[Any]]:
    """Run the Guard alone on ``messages``: what reached the app, and what was sent back."""
    import asyncio

    from kura.serve.access import Guard

    reached: list[str] = []
    sent: list[Any] = []
    incoming = iter(messages)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(scope["type"])

    async def receive() -> dict[str, Any]:
        return next(incoming)

    async def send(message: Any) -> None:
        sent.append(message)

    asyncio.run(Guard(app, token=None)(scope, receive, send))
    return reached, sent


HTTP_SCOPE = {
    "type": "http", "method": "POST", "path": "/remember", "raw_path": b"/remember",
    "headers": [(b"host", b"127.0.0.1"), (b"transfer-encoding", b"chunked"), (b"content-type", b"application/json")],
}  # fmt: skip


def test_a_body_cut_short_never_reaches_the_app() -> None:
    part = {"type": "http.request", "body": b'{"slug": "cut", "description": "x"}', "more_body": True}
    for messages in ([part, {"type": "http.disconnect"}], [{"type": "http.disconnect"}]):
        assert _through_guard(HTTP_SCOPE, messages) == ([], [])  # chunked, no last chunk: nothing runs
    whole = {**part, "more_body": False}
    assert _through_guard(HTTP_SCOPE, [whole])[0] == ["http"]


def test_a_client_that_leaves_mid_body_writes_nothing(served: Served) -> None:
    before = served.files()
    body = b'{"slug": "cut-short", "description": "half a request"}'
    host, port = served.url.removeprefix("http://").split(":")
    for head in (
        f"content-length: {len(body) + 100}\r\n",  # claims more than it sends
        "transfer-encoding: chunked\r\n",  # no terminating chunk
    ):
        sent = body if "length" in head else f"{len(body):x}\r\n".encode() + body + b"\r\n"
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(
                f"POST /remember HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n{head}\r\n".encode()
                + sent
            )
            time.sleep(0.3)
    time.sleep(0.5)
    assert served.http.get("/health").status_code == 200
    assert not (served.root() / "cut-short.md").exists() and served.files() == before


def test_websockets_are_refused_and_the_lifespan_passes() -> None:
    ws = {"type": "websocket", "path": "/mcp", "headers": [(b"origin", b"https://evil.example")]}
    reached, sent = _through_guard(ws, [{"type": "websocket.connect"}])
    assert reached == [] and sent == [{"type": "websocket.close", "code": 1008}]
    reached, sent = _through_guard({"type": "lifespan"}, [])
    assert reached == ["lifespan"]


def test_a_secret_or_a_flood_in_a_field_name_is_not_echoed(shared: Served) -> None:
    before = shared.files()
    body = {"slug": "ok", "description": "x", SECRET: 1}
    response = shared.http.post("/remember", json=body)
    assert response.status_code == 422 and SECRET not in response.text and SECRET[:20] not in response.text
    assert "details" not in response.json()["error"]
    long_key = "k" * 5000
    said = error(shared.http.post("/remember", json={"slug": "ok", "description": "x", long_key: 1}), 422)
    assert said["details"] and len(json.dumps(said)) < 2000
    assert shared.files() == before


def test_a_404_repeats_only_the_start_of_a_long_slug(shared: Served) -> None:
    slug = "a" * 10_000
    said = error(shared.http.get(f"/memory/{slug}"), 404)
    assert len(said["message"]) < 1100 and "a" * 200 in said["message"]


def test_a_repeated_query_selector_is_two_selectors(shared: Served) -> None:
    said = error(shared.http.get("/profile?store=team&store=vault"), 422)["message"]
    assert "names two stores" in said and "'team'" in said and "'vault'" in said
    error(shared.http.get("/profile?mode=build&mode=archive"), 422)
    error(shared.http.post("/recall?store=vault&store=team", json={"question": "x"}), 422)
    assert shared.http.get("/profile?store=vault&mode=archive").json()["store"] == "vault"


def test_a_crash_keeps_the_connection_usable(shared: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(shared.service, "health", broken)
    host, port = shared.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        answers = []
        for path in ("/health", "/stores"):  # one keep-alive connection, two requests
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            data = b""
            while b"\r\n\r\n" not in data:
                got = sock.recv(65536)
                assert got, f"the server closed the connection before answering {path}"
                data += got
            head, _, rest = data.partition(b"\r\n\r\n")
            length = int(
                next(h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")).split(b":")[1]
            )
            while len(rest) < length:
                rest += sock.recv(65536)
            answers.append((int(head.split()[1]), json.loads(rest)))
    assert answers[0][0] == 500 and "RuntimeError" in answers[0][1]["error"]["message"]
    assert answers[1][0] == 200 and len(answers[1][1]) == 3


def test_recall_documents_no_503(shared: Served) -> None:
    schema = shared.http.get("/openapi.json").json()
    assert "503" not in schema["paths"]["/recall"]["post"]["responses"]


def test_the_servers_watchers_write_no_heartbeat(served: Served) -> None:
    """Only `kura watch` re-weaves; the server's watchers must not look like it to doctor."""
    time.sleep(0.5)  # a heartbeating watcher beats on its first turn
    for name in ("team", "vault"):
        assert not (served.root(name) / ".kura" / "watch.json").exists(), name
