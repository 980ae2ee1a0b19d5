"""kura mcp's front: ``initialize`` and ``tools/list`` answered before the SDK is loaded,
exactly as the SDK answers them, and the stream handed to the SDK for everything else.

Real ``kura mcp`` processes spoken to in raw JSON-RPC over pipes, so the test sees the very
bytes a host reads.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
PING = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
# Claude Code 2.1.332's opening, as it sent it: server/discover, then tools/list, each with this envelope
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {
        "name": "claude-code",
        "title": "Claude Code",
        "version": "2.1.332",
        "description": "Anthropic's agentic coding tool",
        "websiteUrl": "https://claude.com/claude-code",
    },
    "io.modelcontextprotocol/clientCapabilities": {
        "roots": {"listChanged": True},
        "elicitation": {"form": {}, "url": {}},
    },
}
DISCOVER = {"jsonrpc": "2.0", "id": "probe", "method": "server/discover", "params": {"_meta": META}}
MODERN_LIST = {"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {"_meta": META}}
MODERN_CALL = {"jsonrpc": "2.0", "id": 4, "method": "nope", "params": {"_meta": META}}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory, sample_copy: Callable[[Path], Path]) -> Path:
    base = tmp_path_factory.mktemp("front")
    sample_copy(base / "team")
    (base / "kura.toml").write_text('[stores.team]\npath = "team"\n\n[modes]\nbuild = "team"\n')
    (base / "home").mkdir()
    return base


def exchange(root: Path, messages: list[dict[str, Any]], *args: str) -> tuple[list[str], str]:
    """The answer lines of a ``kura mcp`` process sent ``messages`` at once, then its stderr
    once stdin is closed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KURA_")}
    env.update(KURA_CONFIG=str(root / "kura.toml"), KURA_HOME=str(root / "home"), HOME=str(root / "home"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "kura", "mcp", *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=root,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    proc.stdin.flush()
    wanted = sum(1 for m in messages if "id" in m)
    got, deadline = b"", time.monotonic() + 60
    while got.count(b"\n") < wanted and time.monotonic() < deadline:
        if select.select([proc.stdout], [], [], 0.5)[0]:
            chunk = os.read(proc.stdout.fileno(), 65536)
            got += chunk
            if not chunk:
                break
    proc.stdin.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0, err
    return got.decode().splitlines(), err


def by_id(lines: list[str]) -> dict[int | str, str]:
    return {json.loads(line)["id"]: line for line in lines}


@pytest.mark.parametrize("args", [(), ("--store", "build", "--writable"), ("--thread", "t-1")])
def test_the_answers_given_before_the_sdk_loads_are_the_sdks_to_the_byte(
    root: Path, args: tuple[str, ...]
) -> None:
    early, quiet = exchange(root, [INITIALIZE, INITIALIZED, LIST, PING], *args)
    # a ping first is the SDK's to answer, so it answers all three itself
    sdk, _ = exchange(root, [{**PING, "id": 0}, INITIALIZE, INITIALIZED, LIST], *args)
    assert [json.loads(line)["id"] for line in early] == [1, 2, 3]  # once each, in order
    assert by_id(early)[1] == by_id(sdk)[1]
    assert by_id(early)[2] == by_id(sdk)[2]
    assert by_id(early)[3] == '{"jsonrpc":"2.0","id":3,"result":{}}'
    assert quiet == ""  # the SDK's answers, read again, matched those sent: nothing logged


@pytest.mark.parametrize("args", [(), ("--store", "build", "--writable"), ("--thread", "t-1")])
def test_the_answers_to_claude_codes_discover_opening_are_the_sdks_to_the_byte(
    root: Path, args: tuple[str, ...]
) -> None:
    early, quiet = exchange(root, [DISCOVER, MODERN_LIST, MODERN_CALL], *args)
    # a request only the SDK answers first: it answers the discover and the list itself
    sdk, _ = exchange(root, [{**MODERN_CALL, "id": 9}, DISCOVER, MODERN_LIST], *args)
    assert [json.loads(line)["id"] for line in early] == ["probe", 0, 4]  # once each, in order
    assert by_id(early)["probe"] == by_id(sdk)["probe"]
    assert by_id(early)[0] == by_id(sdk)[0]
    assert json.loads(by_id(early)[4])["error"]["code"] == -32601
    assert quiet == ""  # the SDK's answers, read again, matched those sent: nothing logged


def test_a_request_of_the_other_era_after_the_opening_is_the_sdks_to_refuse(root: Path) -> None:
    plain_list = {**LIST, "id": 5}
    lines, err = exchange(root, [DISCOVER, plain_list, {**INITIALIZE, "id": 6}])
    answers = {json.loads(line)["id"]: json.loads(line) for line in lines}
    assert answers["probe"]["result"]["supportedVersions"] == ["2026-07-28"]
    assert answers[5]["error"]["code"] == -32602  # no envelope on a 2026-07-28 connection
    assert "error" in answers[6]
    lines, err = exchange(root, [INITIALIZE, INITIALIZED, {**MODERN_LIST, "id": 7}])
    answers = {json.loads(line)["id"]: json.loads(line) for line in lines}
    assert answers[7]["error"]["code"] == -32600  # an envelope on a handshake connection
    assert err == ""


def test_a_host_that_closes_after_initialize_gets_its_answer_and_an_exit(root: Path) -> None:
    lines, err = exchange(root, [INITIALIZE], "--store", "team")
    result = json.loads(lines[0])["result"]
    assert (result["protocolVersion"], result["serverInfo"]["name"], err) == ("2025-06-18", "kura", "")
    assert "This server is read-only" in result["instructions"]


def test_what_the_front_cannot_answer_exactly_the_sdk_answers(root: Path) -> None:
    newer = {**INITIALIZE, "params": {**HELLO, "protocolVersion": "2099-01-01"}}
    lines, err = exchange(root, [newer, INITIALIZED, LIST, {"jsonrpc": "2.0", "id": 7, "method": "nope"}])
    answers = {json.loads(line)["id"]: json.loads(line) for line in lines}
    assert answers[1]["result"]["protocolVersion"] == "2025-11-25"  # the SDK's counter-offer
    assert "kura_recall" in [tool["name"] for tool in answers[2]["result"]["tools"]]
    assert answers[7]["error"]["code"] == -32601
    assert err == ""
