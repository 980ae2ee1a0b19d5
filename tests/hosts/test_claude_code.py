"""The whole loop through the real Claude Code CLI: in a fresh git project after ``kura setup
claude-code``, a headless session starts with kura's map, is offered kura's tools, gets the store's answer
from a recall, and what the person asked to remember in one session is in the next one's map.

The model is the scripted endpoint (``anthropic_server``); everything else is real: the
``claude`` binary, the hooks and ``kura mcp`` it starts, the store on disk. One session
serves the first three tests (each ``claude -p`` start costs a second or more).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from anthropic_server import AnthropicServer, Reply, result_text, said, text, tool_results, tool_use
from claude_cli import Session, claude_binary, git_project, run_claude, setup
from conftest import make_store

RECALL = "mcp__kura__kura_recall"
DEPLOYS = "Deploys go out from the Frankfurt bastion host, never from laptops"
BODY = "bastion-fra-2"  # only in the memory's body: the map does not carry it, recall does


@pytest.fixture(scope="module", autouse=True)
def claude() -> str:
    """Every test here needs the CLI: without it they skip (or fail, when required) at once."""
    return claude_binary()


def offered(body: dict[str, Any]) -> list[str]:
    """The names of the tools a request offers the model with their schemas."""
    return [tool["name"] for tool in body.get("tools", [])]


def recalling(question: str) -> Any:
    """A model that recalls before it answers: it loads kura's tools through ``ToolSearch``
    when Claude Code defers them (it does by default, and names a server that is still
    starting as "still connecting"), calls the recall tool, then answers with what came back."""

    def play(body: dict[str, Any]) -> Reply:
        results = tool_results(body)
        if not results:
            return [tool_use("ToolSearch", {"query": "+kura recall read map remember", "max_results": 20})]
        last = results[-1]
        loaded = isinstance(last.get("content"), list) and any(
            part.get("type") == "tool_reference" for part in last["content"]
        )
        if loaded and RECALL in offered(body):
            return [tool_use(RECALL, {"question": question})]
        return [text("From memory: " + result_text(last))]

    return play


def remembered(store: Path) -> None:
    """The store remembers where deploys run from (its body says more than its index line)."""
    make_store(store, [("deploy-region", "project", DEPLOYS, None)])
    memory = store / "deploy-region.md"
    memory.write_text(memory.read_text().replace(DEPLOYS + "\n", f"{DEPLOYS} ({BODY}).\n"))


@dataclass(frozen=True, slots=True)
class Recalled:
    """The recall session: what the model was sent, turn by turn, and how it ended."""

    turns: list[dict[str, Any]]
    session: Session


@pytest.fixture(scope="module")
def recalled(tmp_path_factory: pytest.TempPathFactory, user_cache: Path) -> Iterator[Recalled]:
    base = tmp_path_factory.mktemp("claude")
    project = git_project(base / "project")
    setup(project, base / "home")
    remembered(project / "memory")
    server = AnthropicServer(recalling("where do deploys run from?"))
    try:
        session = run_claude(project, base / "home", server, "Where do deploys run from?", cache=user_cache)
        yield Recalled(server.turns(), session)
    finally:
        server.close()


def kura_map(told: str) -> str:
    """The map block in what the model was told ("" when there is none)."""
    if "<<<KURA-MAP" not in told:
        return ""
    return told.split("<<<KURA-MAP", 1)[1].split("<<<END KURA-MAP", 1)[0]


def test_the_first_request_carries_kuras_map(recalled: Recalled) -> None:
    first = said(recalled.turns[0])
    assert f"[deploy-region](deploy-region.md) — {DEPLOYS}" in kura_map(first)
    assert BODY not in first  # the map, not the memory


def test_the_index_is_given_once(recalled: Recalled) -> None:
    """Claude Code's own auto memory loads its MEMORY.md too: setup points it at kura's inbox,
    never at the store, so the model does not read the index twice."""
    assert said(recalled.turns[0]).count(DEPLOYS) == 1


def test_kuras_tools_are_offered(recalled: Recalled) -> None:
    loaded = [offered(turn) for turn in recalled.turns if RECALL in offered(turn)]
    assert loaded, f"no request offered {RECALL}"
    kura = {name for name in loaded[0] if name.startswith("mcp__kura__")}
    assert {RECALL, "mcp__kura__kura_read", "mcp__kura__kura_map", "mcp__kura__kura_remember"} <= kura


def test_a_recall_comes_back_with_the_stores_answer(recalled: Recalled) -> None:
    answered = [result_text(block) for turn in recalled.turns for block in tool_results(turn)]
    assert any(BODY in answer and "deploy-region" in answer for answer in answered)
    assert BODY in recalled.session.result["result"]  # the scripted answer quoted it back


def test_with_recall_on_prompt_the_prompt_comes_with_what_bears_on_it(
    tmp_path: Path, user_cache: Path
) -> None:
    project = git_project(tmp_path / "project")
    setup(project, tmp_path / "home", "--recall-on-prompt")
    remembered(project / "memory")
    server = AnthropicServer([[text("ok")]])
    try:
        run_claude(project, tmp_path / "home", server, "Where do deploys run from?", cache=user_cache)
    finally:
        server.close()
    assert BODY in said(server.turns()[0])  # the map does not carry it: the prompt hook did


def test_what_session_one_asked_to_remember_is_in_session_twos_map(tmp_path: Path, user_cache: Path) -> None:
    project = git_project(tmp_path / "project")
    setup(project, tmp_path / "home")
    server = AnthropicServer([[text("Noted.")]])  # the fact is only in the person's words
    try:
        said_once = "Remember that the staging cluster lives in eu-west-3."
        run_claude(project, tmp_path / "home", server, said_once, cache=user_cache)
        remembered = wait_for_memory(project / "memory", "eu-west-3", seconds=60)
        assert remembered, "no memory in the store says eu-west-3 a minute after session 1 ended"
        before = len(server.turns())
        run_claude(
            project, tmp_path / "home", server, "Where does the staging cluster live?", cache=user_cache
        )
        first = said(server.turns()[before])
    finally:
        server.close()
    assert "eu-west-3" in kura_map(first)


def wait_for_memory(store: Path, words: str, *, seconds: float) -> list[Path]:
    """The memory files that say ``words`` and have a line in MEMORY.md, polled until some
    appear or the deadline passes (the capture pass runs after the session has ended)."""
    deadline = time.monotonic() + seconds
    while True:
        index = (store / "MEMORY.md").read_text()
        found = [
            path for path in store.glob("*.md") if f"({path.name})" in index and words in path.read_text()
        ]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)
