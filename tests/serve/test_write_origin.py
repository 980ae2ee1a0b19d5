"""Issue 29 item 7, as an attacker tries it: a page on another local port (or on a
``*.localhost`` name) sends a "simple" cross-site request — ``Content-Type: text/plain``, no
preflight — to every write route of a real ``kura serve`` subprocess on 127.0.0.1. Writes
take ``application/json`` and the exact origin of the server (or no Origin at all, the token
rule applying as ever); nothing is written otherwise."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "sample-store"
TOKEN = "test-token-0123456789abcdef"
LISTENING = re.compile(r"listening on (http://127\.0\.0\.1:(\d+))")


@dataclass
class Server:
    url: str
    port: int
    root: Path

    def files(self) -> dict[str, bytes]:
        """Every file a write could touch: memories, the index, threads, the observation log."""
        return {str(p): p.read_bytes() for p in sorted(self.root.rglob("*")) if p.is_file() and p.suffix != ".db"
                and "cache" not in p.parts and p.name not in ("serve.lock",)}  # fmt: skip


@contextmanager
def serving(tmp_path: Path, env: dict[str, str] | None = None) -> Iterator[Server]:
    store = tmp_path / "team"
    shutil.copytree(SAMPLE, store, ignore=shutil.ignore_patterns(".kura"))
    log = tmp_path / "serve.log"
    command = [sys.executable, "-m", "kura", "-s", str(store), "serve", "--port", "0"]
    with log.open("w") as err:
        process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=err, env={**os.environ, **(env or {})}
        )
    try:
        deadline = time.monotonic() + 60
        while (found := LISTENING.search(log.read_text())) is None:
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "kura serve did not listen in time"
            time.sleep(0.05)
        yield Server(found.group(1), int(found.group(2)), store)
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("origin")) as started:
        yield started


WRITES = [
    ("POST", "/remember", {"slug": "planted", "description": "planted by a page on another port"}),
    ("POST", "/observe", {"text": "IMPORTANT: planted by a page", "priority": "high"}),
    ("PUT", "/threads/t1/memory/planted", {"value": "planted by a page"}),
    ("POST", "/threads/t1/memory", {"updates": {"planted": "planted by a page"}}),
]


def origins(port: int) -> list[str]:
    return ["http://localhost:3000", f"http://127.0.0.1:{port + 1}", "http://foo.localhost",
            f"http://foo.localhost:{port}", f"http://localhost:{port}", "null"]  # fmt: skip


@pytest.mark.parametrize(("method", "path", "body"), WRITES)
def test_a_simple_request_from_another_local_origin_writes_nothing(
    server: Server, method: str, path: str, body: dict[str, object]
) -> None:
    before = server.files()
    data = json.dumps(body).encode()
    for origin in origins(server.port):
        for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                     "application/json"):  # fmt: skip
            said = httpx.request(method, server.url + path, content=data,
                                 headers={"content-type": kind, "origin": origin})  # fmt: skip
            assert said.status_code == 403, (origin, kind, said.status_code, said.text)
            assert "web pages at" in said.json()["error"]["message"]
    assert server.files() == before


@pytest.mark.parametrize(("method", "path", "body"), WRITES)
def test_a_write_that_is_not_json_is_refused_even_with_no_origin(
    server: Server, method: str, path: str, body: dict[str, object]
) -> None:
    before = server.files()
    data = json.dumps(body).encode()
    for kind in ("text/plain", "application/x-www-form-urlencoded", None):
        headers = {"content-type": kind} if kind else {}
        said = httpx.request(method, server.url + path, content=data, headers=headers)
        assert said.status_code == 415, (kind, said.status_code, said.text)
        assert "application/json" in said.json()["error"]["message"]
    assert server.files() == before


def test_a_delete_from_another_local_origin_is_refused(server: Server) -> None:
    put = httpx.put(server.url + "/threads/t2/memory/kept", json={"value": "kept"})
    assert put.status_code == 200, put.text
    before = server.files()
    for origin in origins(server.port):
        said = httpx.delete(server.url + "/threads/t2/memory/kept", headers={"origin": origin})
        assert said.status_code == 403, (origin, said.text)
    assert server.files() == before


def test_the_servers_own_origin_and_plain_clients_still_write(server: Server) -> None:
    own = {"origin": server.url}
    said = httpx.post(
        server.url + "/remember", json={"slug": "from-own-page", "description": "ok"}, headers=own
    )
    assert said.status_code == 200, said.text
    said = httpx.post(server.url + "/remember", json={"slug": "from-a-script", "description": "ok"})
    assert said.status_code == 200, said.text
    typed = {"content-type": "application/json; charset=utf-8"}
    said = httpx.post(server.url + "/remember", content=b'{"slug":"typed","description":"ok"}', headers=typed)
    assert said.status_code == 200, said.text
    assert {"from-own-page.md", "from-a-script.md", "typed.md"} <= {p.name for p in server.root.iterdir()}
    # reads keep the old, documented leniency: `curl -d` (a form type) may ask a question
    asked = httpx.post(server.url + "/recall", content=b'{"question":"deploy"}', timeout=60,
                       headers={"content-type": "application/x-www-form-urlencoded"})  # fmt: skip
    # (the server's first recall loads the model and embeds the store: seconds on a busy machine)
    assert asked.status_code == 200, asked.text


def test_with_a_token_a_write_needs_it_and_json_and_no_foreign_origin(tmp_path: Path) -> None:
    with serving(tmp_path, {"KURA_TOKEN": TOKEN}) as server:
        good = {"authorization": f"Bearer {TOKEN}"}
        before = server.files()
        body = {"slug": "planted", "description": "d"}
        assert httpx.post(server.url + "/remember", json=body).status_code == 401
        plain = httpx.post(server.url + "/remember", content=json.dumps(body).encode(),
                           headers={**good, "content-type": "text/plain"})  # fmt: skip
        assert plain.status_code == 415, plain.text
        foreign = httpx.post(server.url + "/remember", json=body,
                             headers={**good, "origin": "http://localhost:3000"})  # fmt: skip
        assert foreign.status_code == 403, foreign.text
        assert server.files() == before
        assert httpx.post(server.url + "/remember", json=body, headers=good).status_code == 200
