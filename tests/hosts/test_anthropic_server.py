"""The scripted Anthropic endpoint answers as the Messages API does, streamed or not."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from anthropic_server import AnthropicServer, text, tool_use

TOOLS = [{"name": "look", "description": "Look", "input_schema": {"type": "object"}}]


@pytest.fixture
def server() -> Iterator[AnthropicServer]:
    running = AnthropicServer([[text("calling"), tool_use("look", {"for": "the staging cluster's region"})]])
    yield running
    running.close()


def post(url: str, body: dict[str, Any]) -> tuple[str, bytes]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.headers["content-type"], answer.read()


def test_a_plain_request_gets_one_message(server: AnthropicServer) -> None:
    kind, raw = post(server.url + "/v1/messages", {"model": "m", "messages": [], "tools": TOOLS})
    message = json.loads(raw)
    assert kind == "application/json" and message["stop_reason"] == "tool_use"
    assert [block["type"] for block in message["content"]] == ["text", "tool_use"]
    assert server.requests[0].body["tools"] == TOOLS


def test_a_streamed_request_gets_the_events_in_the_apis_order(server: AnthropicServer) -> None:
    kind, raw = post(server.url + "/v1/messages?beta=true", {"model": "m", "stream": True, "tools": TOOLS})
    events = [chunk.split("\n") for chunk in raw.decode().strip().split("\n\n")]
    names = [lines[0].removeprefix("event: ") for lines in events]
    data = [json.loads(lines[1].removeprefix("data: ")) for lines in events]
    assert kind == "text/event-stream"
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert names[-2:] == ["message_delta", "message_stop"] and data[-2]["delta"]["stop_reason"] == "tool_use"
    assert [d["type"] for d in data] == names
    pieces = [
        d["delta"]["partial_json"] for d in data if d["type"] == "content_block_delta" and d["index"] == 1
    ]
    assert len(pieces) > 1 and json.loads("".join(pieces)) == {"for": "the staging cluster's region"}


def test_counting_side_requests_and_unknown_paths(server: AnthropicServer) -> None:
    _, counted = post(server.url + "/v1/messages/count_tokens", {"model": "m", "messages": []})
    _, side = post(server.url + "/v1/messages", {"model": "small", "messages": []})
    assert json.loads(counted)["input_tokens"] > 0
    assert json.loads(side)["content"] == [text("Scripted session")]  # no tools: not the script's turn
    with pytest.raises(urllib.error.HTTPError) as missing:
        post(server.url + "/v1/elsewhere", {})
    assert missing.value.code == 404 and json.loads(missing.value.read())["type"] == "error"
    assert server.turns() == []


def test_a_script_that_never_ends_its_turn_is_ended(server: AnthropicServer) -> None:
    server.limit = 2
    stops = [
        json.loads(post(server.url + "/v1/messages", {"tools": TOOLS})[1])["stop_reason"] for _ in range(4)
    ]
    assert stops == ["tool_use", "tool_use", "end_turn", "end_turn"]
