"""``POST /edit`` and ``GET /history/{slug}`` on a real uvicorn server on 127.0.0.1: every op,
and every refusal with its status — a read-only server, a store's policy, a secret, a phrase
found nowhere or twice, no such memory, a purge without its confirmation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import uvicorn_app, write_memory

from kura.config import parse_config
from kura.serve.http import create_app
from kura.serve.pool import StorePool
from kura.store.store import Store, init_store

KEY = "AKIA" + "IOSFODNN7EXAMPLE"


def stores(base: Path) -> dict[str, object]:
    for name in ("team", "desk", "vault"):
        init_store(base / name, name=name)
        write_memory(base / name, "deploy", "project", "deploys go out on Tuesday",
                     body="Deploys go out Tuesday.\n\n## Steps\n\n1. build\n")  # fmt: skip
        write_memory(base / name, "oncall", "project", "who is on call", body="Ask [[deploy]].")
        (base / name / "MEMORY.md").write_text(
            "# Index\n\n- [deploy](deploy.md) — deploys go out on Tuesday\n- [oncall](oncall.md) — who is on call\n"
        )
    policies = {"team": "direct-allowed", "desk": "distiller-only", "vault": "frozen"}
    return {
        "stores": {n: {"path": str(base / n), "write_policy": p} for n, p in policies.items()}
    }  # team first


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def http(base: Path) -> Iterator[httpx.Client]:
    service = StorePool(parse_config(stores(base)))
    try:
        with (
            uvicorn_app(create_app(service, watch=False)) as url,
            httpx.Client(base_url=url, timeout=120) as c,
        ):
            yield c
    finally:
        service.close()


def test_each_text_op_over_http(http: httpx.Client, base: Path) -> None:
    for body in ({"op": "section", "heading": "Steps", "text": "1. build\n2. ship"},
                 {"op": "append", "text": "Not on holidays."}, {"op": "prepend", "text": "Read first."},
                 {"op": "replace", "find": "Tuesday.", "text": "Wednesday."}):  # fmt: skip
        done = http.post("/edit", json={"slug": "deploy", **body})
        assert done.status_code == 200, done.text
        assert done.json()["changed"] is True and done.json()["op"] == body["op"]
    text = Store(base / "team").show("deploy").note.body
    assert (
        text
        == "\nRead first.\n\nDeploys go out Wednesday.\n\n## Steps\n\n1. build\n2. ship\n\nNot on holidays.\n"
    )
    meta = Store(base / "team").show("deploy").note.meta
    assert {w["source"] for w in meta["witnesses"]} == {
        f"HTTP edit {op}" for op in ("append", "prepend", "replace", "section")
    }


def test_rename_forget_and_purge_over_http(http: httpx.Client, base: Path) -> None:
    moved = http.post("/s/team/edit", json={"slug": "deploy", "op": "rename", "to": "deploy-day"})
    assert moved.status_code == 200, moved.text
    assert (moved.json()["was"], moved.json()["slug"], moved.json()["relinked"]) == (
        "deploy",
        "deploy-day",
        ["oncall"],
    )
    assert "Ask [[deploy-day]]." in (base / "team" / "oncall.md").read_text()
    gone = http.post("/edit", json={"slug": "oncall", "op": "forget", "reason": "rota moved"})
    assert gone.status_code == 200 and gone.json()["detail"] == "rota moved (HTTP)"
    refused = http.post("/edit", json={"slug": "deploy-day", "op": "purge"})
    assert refused.status_code == 422 and "send confirm equal to the slug" in refused.text
    purged = http.post("/edit", json={"slug": "deploy-day", "op": "purge", "confirm": "deploy-day"})
    assert purged.status_code == 200, purged.text
    assert purged.json()["purged"]["files"] == ["deploy-day.md"]
    assert not (base / "team" / "deploy-day.md").exists()


@pytest.mark.parametrize(
    ("body", "status", "said"),
    [
        ({"slug": "deploy", "op": "replace", "find": "Friday", "text": "x"}, 422, "'Friday' is not in"),
        ({"slug": "deploy", "op": "replace", "find": "Tuesday", "text": "x"}, 422, "occurs 2 times"),
        ({"slug": "deploy", "op": "append", "text": f"key {KEY}"}, 422, "looks like it holds a secret"),
        ({"slug": "nope", "op": "append", "text": "x"}, 404, "no memory 'nope' in store 'team'"),
        ({"slug": "deploy", "op": "rename", "to": "oncall"}, 422, "a memory oncall exists"),
        ({"slug": "deploy", "op": "twist"}, 422, "op"),
        ({"slug": "deploy", "op": "append", "text": "x", "store": "vault"}, 403, "is frozen"),
        ({"slug": "deploy", "op": "append", "text": "x", "store": "desk"}, 403, "is distiller-only"),
        ({"slug": "deploy", "op": "purge", "confirm": "deploy", "store": "vault"}, 403, "is frozen"),
    ],
)
def test_refusals_keep_their_status_and_touch_nothing(
    http: httpx.Client, base: Path, body: dict[str, str], status: int, said: str
) -> None:
    before = {p: p.read_bytes() for p in base.rglob("*.md")}
    refused = http.post("/edit", json=body)
    assert refused.status_code == status, refused.text
    assert said in refused.json()["error"]["message"]
    assert KEY not in refused.text and str(base) not in refused.text
    assert {p: p.read_bytes() for p in base.rglob("*.md")} == before


def test_a_distiller_only_store_lets_a_person_purge(http: httpx.Client, base: Path) -> None:
    done = http.post("/edit?store=desk", json={"slug": "deploy", "op": "purge", "confirm": "deploy"})
    assert done.status_code == 200, done.text
    assert not (base / "desk" / "deploy.md").exists()


def test_a_read_only_server_refuses_every_edit(base: Path) -> None:
    service = StorePool(parse_config(stores(base)), readonly=True)
    try:
        with uvicorn_app(create_app(service, watch=False)) as url, httpx.Client(base_url=url) as http:
            for body in ({"op": "append", "text": "x"}, {"op": "rename", "to": "d2"},
                         {"op": "purge", "confirm": "deploy"}):  # fmt: skip
                refused = http.post("/edit", json={"slug": "deploy", **body})
                assert refused.status_code == 403 and "read-only" in refused.text, refused.text
            assert http.get("/history/deploy").status_code == 200
    finally:
        service.close()
    assert (base / "team" / "deploy.md").exists()


def test_history_over_http(http: httpx.Client) -> None:
    http.post("/edit", json={"slug": "deploy", "op": "append", "text": "Later."})
    found = http.get("/history/deploy")
    assert found.status_code == 200, found.text
    body = found.json()
    assert (body["slug"], body["in_git"], body["chain"]) == ("deploy", False, [])
    assert [v["what"] for v in body["versions"]][:2] == ["changed", "witnessed"]
    assert body["versions"][1]["who"] == "agent"
    assert http.get("/history/missing").status_code == 404


def test_edits_arriving_together_all_land(http: httpx.Client, base: Path) -> None:
    """Eight clients append at once, on the server's worker threads: the store lock takes
    them in turn and each one edits the file as the one before left it."""
    from concurrent.futures import ThreadPoolExecutor

    def append(n: int) -> int:
        with httpx.Client(base_url=str(http.base_url), timeout=120) as own:
            return own.post(
                "/edit", json={"slug": "oncall", "op": "append", "text": f"- line {n}"}
            ).status_code

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(append, range(8))) == [200] * 8
    body = Store(base / "team").show("oncall").note.body
    assert sorted(line for line in body.splitlines() if line.startswith("- line")) == [
        f"- line {n}" for n in range(8)
    ]


def test_an_edit_from_a_web_page_or_not_as_json_is_refused(http: httpx.Client, base: Path) -> None:
    """``POST /edit`` is a write to the guard: JSON only, and no other page's origin."""
    before = {p: p.read_bytes() for p in base.rglob("*.md")}
    body = b'{"slug": "deploy", "op": "purge", "confirm": "deploy"}'
    plain = http.post("/edit", content=body, headers={"content-type": "text/plain"})
    assert plain.status_code == 415, plain.text
    foreign = http.post("/edit", content=body, headers={"content-type": "application/json",
                                                        "origin": "http://localhost:3000"})  # fmt: skip
    assert foreign.status_code == 403 and "writes from web pages" in foreign.text
    assert {p: p.read_bytes() for p in base.rglob("*.md")} == before
