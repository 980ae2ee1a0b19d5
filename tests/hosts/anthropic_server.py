"""A scripted Anthropic Messages endpoint on 127.0.0.1, for driving a real Claude Code CLI.

Claude Code talks to ``ANTHROPIC_BASE_URL`` as it talks to Anthropic: ``POST
/v1/messages?beta=true`` with ``"stream": true`` (server-sent events), and now and then
``/v1/messages/count_tokens`` or a side request for a title. This server answers all of
them from a script, in the shapes and the order the real API uses, and keeps every request
for the test to read. It is a real HTTP server (the CLI is a separate process), like the
OpenAI-compatible ``ModelServer`` in ``tests/conftest.py``.

A script is a list of replies, taken in order (the last one repeats), or a function of the
request body that returns a reply. A reply is a list of content blocks (``text(...)``,
``tool_use(...)``); the stop reason follows from it (``tool_use`` when it calls a tool).
"""

from __future__ import annotations

import http.server
import itertools
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

Block = dict[str, Any]
Reply = list[Block]
Script = Callable[[dict[str, Any]], Reply]

_ids = itertools.count(1)


def text(words: str) -> Block:
    return {"type": "text", "text": words}


def tool_use(name: str, arguments: dict[str, Any]) -> Block:
    return {"type": "tool_use", "id": f"toolu_{next(_ids):04d}", "name": name, "input": arguments}


@dataclass(frozen=True, slots=True)
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def _usage(body: dict[str, Any], reply: Reply) -> dict[str, int]:
    """Rough token counts (4 characters a token), so a client's bookkeeping has numbers."""
    return {
        "input_tokens": max(1, len(json.dumps(body)) // 4),
        "output_tokens": max(1, len(json.dumps(reply)) // 4),
    }


def _message(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    stop = "tool_use" if any(block["type"] == "tool_use" for block in reply) else "end_turn"
    return {
        "id": f"msg_{next(_ids):04d}", "type": "message", "role": "assistant", "model": body.get("model", "claude"),
        "content": reply, "stop_reason": stop, "stop_sequence": None, "usage": _usage(body, reply),
    }  # fmt: skip


def _events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The server-sent events of one message, in the order the Messages API sends them; text
    and tool input arrive in pieces, as they do from the real endpoint."""
    usage = message["usage"]
    start = dict(
        message,
        content=[],
        stop_reason=None,
        usage={"input_tokens": usage["input_tokens"], "output_tokens": 1},
    )
    yield "message_start", {"type": "message_start", "message": start}
    yield "ping", {"type": "ping"}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            opening, kind, key, whole = dict(block, text=""), "text_delta", "text", block["text"]
        else:
            opening, kind, key, whole = (
                dict(block, input={}),
                "input_json_delta",
                "partial_json",
                json.dumps(block["input"]),
            )
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": opening}
        for at in range(0, len(whole), 24):
            delta = {"type": kind, key: whole[at : at + 24]}
            yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    yield (
        "message_delta",
        {"type": "message_delta", "delta": delta, "usage": {"output_tokens": usage["output_tokens"]}},
    )
    yield "message_stop", {"type": "message_stop"}


def _error(status: int, kind: str, said: str) -> tuple[int, dict[str, Any]]:
    return status, {"type": "error", "error": {"type": kind, "message": said}}


class AnthropicServer:
    """``POST /v1/messages`` answered by ``script`` (JSON, or server-sent events when the
    request says ``stream``); ``/v1/messages/count_tokens`` with a rough count; anything
    else with the API's 404. A request that offers no tools (a side request for a title or
    a summary) is answered by ``side`` instead, so a script only sees the agent's turns;
    past ``limit`` turns it answers with text, which ends a session whose script loops.
    ``requests`` holds every request received, in order."""

    def __init__(self, script: Script | list[Reply] | None = None) -> None:
        self.requests: list[Seen] = []
        self.script: Script = _playing(script or [[text("ok")]])
        self.side: Script = lambda body: [text("Scripted session")]
        self.limit = 24
        self.lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append(Seen("GET", self.path, dict(self.headers), {}))
                self.answer(*_error(404, "not_found_error", f"no {self.path} here"))

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append(Seen("POST", self.path, dict(self.headers), body))
                route = self.path.split("?")[0]
                if route == "/v1/messages/count_tokens":
                    self.answer(200, {"input_tokens": max(1, len(json.dumps(body)) // 4)})
                elif route == "/v1/messages":
                    with server.lock:
                        reply = server.reply(body)
                    message = _message(body, reply)
                    if body.get("stream"):
                        self.stream(message)
                    else:
                        self.answer(200, message)
                else:
                    self.answer(*_error(404, "not_found_error", f"no {self.path} here"))

            def answer(self, status: int, data: dict[str, Any]) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def stream(self, message: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()  # HTTP/1.0: the stream ends when the connection closes
                for event, data in _events(message):
                    self.wfile.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    def reply(self, body: dict[str, Any]) -> Reply:
        if not body.get("tools"):
            return self.side(body)
        if len(self.turns()) > self.limit:  # a script that never ends its turn ends here
            return [text(f"(the scripted endpoint stops after {self.limit} turns)")]
        return self.script(body)

    def turns(self) -> list[dict[str, Any]]:
        """The bodies of the agent's requests to the model (those that offer tools), in order."""
        asked = [seen for seen in self.requests if seen.path.split("?")[0] == "/v1/messages"]
        return [seen.body for seen in asked if seen.body.get("tools")]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _playing(script: Script | list[Reply]) -> Script:
    if callable(script):
        return script
    replies = list(script)

    def play(body: dict[str, Any]) -> Reply:
        return replies.pop(0) if len(replies) > 1 else replies[0]

    return play


# Reading a request: where Claude Code puts what the model is told.


def said(body: dict[str, Any]) -> str:
    """Everything the model is told in one request — system prompt, messages and tool
    results — as one text, for a test that looks for a line in it."""
    return json.dumps({"system": body.get("system"), "messages": body.get("messages")}, ensure_ascii=False)


def tool_results(body: dict[str, Any]) -> list[Block]:
    """The ``tool_result`` blocks of a request's messages, oldest first."""
    found = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            found += [block for block in content if block.get("type") == "tool_result"]
    return found


def result_text(block: Block) -> str:
    """The text a ``tool_result`` block carries (a string, or a list of text blocks)."""
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [] if isinstance(part, dict))
