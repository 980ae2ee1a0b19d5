"""MCP resources and prompts: real ``kura mcp`` processes driven by the SDK's own stdio client.

The store's map and each memory as ``kura://`` resources (listed a page at a time, read,
the template), ``notifications/resources/list_changed`` when a file is edited on disk during
a live session, and the ``recall`` and ``remember`` prompts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import write_memory
from mcp import types
from mcp.shared.exceptions import MCPError
from test_mcp import Client as McpClient

from kura.recall.recall import FRAME

SAMPLE_MEMORIES = 40  # the sample store's current memories


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory, sample_copy: Callable[[Path], Path]) -> Path:
    base = tmp_path_factory.mktemp("resources")
    sample_copy(base / "team")
    write_memory(base / "vault", "archive-disk", "project", "the archive lives on the slow disk")
    (base / "vault" / "MEMORY.md").write_text("# Index\n\n- [Archive](archive-disk.md) — slow disk\n")
    (base / "kura.toml").write_text(
        '[stores.team]\npath = "team"\n\n[stores.vault]\npath = "vault"\nwrite_policy = "frozen"\n\n'
        '[modes]\nbuild = "team"\n'
    )
    (base / "home").mkdir()
    return base


class Client(McpClient):
    """``test_mcp``'s ``kura mcp`` process and SDK session, with resources and prompts."""

    def __init__(self, root: Path, *args: str, **env: str) -> None:
        super().__init__(root, "mcp", *args, **env)

    def resources(self, cursor: str | None = None) -> types.ListResourcesResult:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
        return self.portal.call(lambda: self.session.list_resources(params=params))

    def read(self, uri: str) -> str:
        result = self.portal.call(self.session.read_resource, uri)
        (content,) = result.contents
        assert isinstance(content, types.TextResourceContents) and content.uri == uri
        assert content.mime_type == "text/markdown"
        return content.text

    def refused(self, call: Callable[[], Any]) -> MCPError:
        with pytest.raises(MCPError) as caught:
            self.portal.call(call)
        return caught.value

    def prompts(self) -> dict[str, types.Prompt]:
        return {p.name: p for p in self.portal.call(self.session.list_prompts).prompts}

    def prompt(self, name: str, **arguments: str) -> str:
        result = self.portal.call(self.session.get_prompt, name, arguments)
        (message,) = result.messages
        assert message.role == "user" and isinstance(message.content, types.TextContent)
        return message.content.text


@pytest.fixture(scope="module")
def bound(root: Path) -> Iterator[Client]:
    """Bound to the team store (by its mode), writable."""
    started = Client(root, "--store", "build", "--writable")
    yield started
    started.close()


@pytest.fixture(scope="module")
def readonly(root: Path) -> Iterator[Client]:
    """Free (both stores), read-only."""
    started = Client(root)
    yield started
    started.close()


def test_initialize_announces_resources_and_prompts(bound: Client) -> None:
    able = bound.init.capabilities
    assert able.resources is not None and able.resources.list_changed and not able.resources.subscribe
    assert able.prompts is not None and able.tools is not None


def test_the_map_and_every_current_memory_are_resources(bound: Client, root: Path) -> None:
    listed = bound.resources()
    assert listed.next_cursor is None
    uris = [r.uri for r in listed.resources]
    assert uris[0] == "kura://team/map"
    assert len(uris) == 1 + SAMPLE_MEMORIES and all(u.startswith("kura://team/memory/") for u in uris[1:])
    deploy = next(r for r in listed.resources if r.uri == "kura://team/memory/deploy-commands")
    assert deploy.name == "deploy-commands" and deploy.mime_type == "text/markdown"
    assert deploy.description and deploy.description in (root / "team" / "deploy-commands.md").read_text()
    assert (
        bound.read("kura://team/memory/deploy-commands") == (root / "team" / "deploy-commands.md").read_text()
    )
    assert bound.read("kura://team/map").startswith("<<<KURA-MAP store=team>>>\n")  # as kura_map gives it
    (template,) = bound.portal.call(bound.session.list_resource_templates).resource_templates
    assert template.uri_template == "kura://{store}/memory/{slug}"


def test_a_bound_server_reads_only_its_own_store_and_says_what_uris_look_like(bound: Client) -> None:
    other = bound.refused(lambda: bound.session.read_resource("kura://vault/memory/archive-disk"))
    assert other.code == -32002 and "only store 'team'" in other.message and "slow disk" not in other.message
    missing = bound.refused(lambda: bound.session.read_resource("kura://team/memory/no-such-thing"))
    assert missing.code == -32002 and "no-such-thing" in missing.message
    wrong = bound.refused(lambda: bound.session.read_resource("https://example.com/x"))
    assert "kura://STORE/map" in wrong.message


def test_a_free_server_lists_every_store_and_leaves_retired_memories_out(readonly: Client) -> None:
    uris = [r.uri for r in readonly.resources().resources]
    assert "kura://team/map" in uris and "kura://vault/map" in uris
    assert "kura://vault/memory/archive-disk" in uris
    assert readonly.read("kura://vault/memory/archive-disk").startswith("---\nname: archive-disk")


def test_resources_come_a_page_at_a_time(tmp_path: Path) -> None:
    for n in range(520):
        write_memory(tmp_path / "big", f"fact-{n:04d}", "project", f"fact number {n}")
    write_memory(tmp_path / "big", "gone", "project", "an archived one").write_text(
        "---\nname: gone\ndescription: an archived one\ntype: project\narchived: 2026-01-01\n---\n\nold\n"
    )
    (tmp_path / "big" / "MEMORY.md").write_text("# Index\n")
    (tmp_path / "kura.toml").write_text('[stores.big]\npath = "big"\n')
    (tmp_path / "home").mkdir(exist_ok=True)
    started = Client(tmp_path, "--store", "big")
    try:
        first = started.resources()
        assert len(first.resources) == 500 and first.next_cursor is not None
        second = started.resources(first.next_cursor)
        assert second.next_cursor is None
        uris = [r.uri for r in first.resources + second.resources]
        assert len(uris) == len(set(uris)) == 1 + 520
        assert "kura://big/memory/gone" not in uris
        bad = started.refused(
            lambda: started.session.list_resources(params=types.PaginatedRequestParams(cursor="x"))
        )
        assert "cursor" in bad.message
    finally:
        started.close()


def _live_store(tmp_path: Path) -> None:
    """A store ``live`` of one memory, indexed, configured in ``tmp_path/kura.toml``."""
    write_memory(tmp_path / "live", "first", "project", "the first fact")
    (tmp_path / "live" / "MEMORY.md").write_text("# Index\n\n- [first](first.md) — the first fact\n")
    (tmp_path / "kura.toml").write_text('[stores.live]\npath = "live"\n')
    (tmp_path / "home").mkdir(exist_ok=True)


def test_a_file_edited_during_a_live_session_is_told_as_a_list_change(tmp_path: Path) -> None:
    _live_store(tmp_path)
    started = Client(tmp_path, "--store", "live")
    try:
        assert [r.uri for r in started.resources().resources] == [
            "kura://live/map",
            "kura://live/memory/first",
        ]
        changed = _told(
            started, lambda n: write_memory(tmp_path / "live", "second", "user", f"a second fact {n}")
        )
        assert changed, "no notifications/resources/list_changed within 30 s of the edit"
        uris = [r.uri for r in started.resources().resources]
        assert uris == ["kura://live/map", "kura://live/memory/first", "kura://live/memory/second"]
        edited = _told(started, lambda n: (tmp_path / "live" / "first.md").write_text(
            f"---\nname: first\ndescription: the first fact, edited\ntype: project\n---\n\nnew body {n}\n"
        ))  # fmt: skip
        assert edited
        first = next(r for r in started.resources().resources if r.name == "first")
        assert first.description == "the first fact, edited"
        assert started.read("kura://live/memory/first").startswith(
            "---\nname: first\ndescription: the first fact, edited"
        )
    finally:
        started.close()


def test_a_proxy_tells_its_sessions_what_its_server_saw_change(tmp_path: Path) -> None:
    """``kura mcp`` with ``KURA_URL`` has no store of its own to watch: it said
    ``listChanged`` yet told nothing, so a host kept a stale list while the served store
    changed. It now asks the server (``GET /stores``: each store's count of changes its
    watchers took in) every 2 s and tells its sessions when a count moved."""
    from conftest import uvicorn_app

    from kura.config import load_config
    from kura.serve.http import create_app
    from kura.serve.pool import StorePool

    _live_store(tmp_path)
    service = StorePool(load_config(str(tmp_path / "kura.toml")))
    try:
        with uvicorn_app(create_app(service, token="t0ken")) as url:  # its watcher on the store
            proxy = Client(tmp_path, "--store", "live", KURA_URL=url, KURA_TOKEN="t0ken")
            try:
                assert [r.uri for r in proxy.resources().resources] == [
                    "kura://live/map",
                    "kura://live/memory/first",
                ]
                changed = _told(
                    proxy, lambda n: write_memory(tmp_path / "live", "second", "user", f"second {n}")
                )
                assert changed, "no notifications/resources/list_changed within 30 s of the edit"
                uris = [r.uri for r in proxy.resources().resources]
                assert uris == ["kura://live/map", "kura://live/memory/first", "kura://live/memory/second"]
            finally:
                proxy.close()
    finally:
        service.close()


def _told(client: Client, edit: Callable[[int], Any]) -> bool:
    """Whether a list change is told after ``edit(n)``, within a deadline. The watcher starts
    in the background once the SDK has loaded, so until one is heard the edit is made again
    each second, with other bytes (``n``): an edit made before the watcher hashed the files
    is, to it, what was there."""
    before = sum(isinstance(n, types.ResourceListChangedNotification) for n in client.notes)
    deadline, attempt, again = time.monotonic() + 30, 0, 0.0
    while time.monotonic() < deadline:
        if time.monotonic() >= again:
            edit(attempt)
            attempt, again = attempt + 1, time.monotonic() + 1.0
        if sum(isinstance(n, types.ResourceListChangedNotification) for n in client.notes) > before:
            return True
        time.sleep(0.05)
    return False


# -- prompts -----------------------------------------------------------------------------------


def test_prompts_match_what_the_session_may_do(bound: Client, readonly: Client) -> None:
    offered = bound.prompts()
    assert sorted(offered) == ["recall", "remember"]
    assert [(a.name, a.required) for a in offered["recall"].arguments or ()] == [("question", True)]
    assert [(a.name, a.required) for a in offered["remember"].arguments or ()] == [
        ("fact", True),
        ("type", False),
    ]
    free = readonly.prompts()
    assert sorted(free) == ["recall"]  # read-only: no remember, as no kura_remember
    assert [a.name for a in free["recall"].arguments or ()] == ["question", "store"]


def test_the_recall_prompt_brings_the_memories_before_the_question(bound: Client) -> None:
    text = bound.prompt("recall", question="where are the runbooks kept")
    assert "information, not instructions" in text
    assert "runbooks-location" in text and FRAME.split("\n")[0][:20] in text
    assert text.endswith("Question: where are the runbooks kept")


def test_the_remember_prompt_asks_for_kura_remember_and_is_refused_where_nothing_is_written(
    bound: Client, readonly: Client
) -> None:
    text = bound.prompt("remember", fact="staging lives in eu-west-3", type="project")
    assert text.startswith(
        "Remember this with kura_remember as a project memory:\n\nstaging lives in eu-west-3"
    )
    refused = readonly.refused(lambda: readonly.session.get_prompt("remember", {"fact": "x"}))
    assert "read-only" in refused.message and "--writable" in refused.message
    missing = bound.refused(lambda: bound.session.get_prompt("recall", {}))
    assert "needs question" in missing.message
    unknown = bound.refused(lambda: bound.session.get_prompt("recall", {"question": "x", "store": "vault"}))
    assert "does not take 'store'" in unknown.message
    assert "no prompt" in bound.refused(lambda: bound.session.get_prompt("nope", {})).message
