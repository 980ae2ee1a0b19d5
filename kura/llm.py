"""Model endpoints: the only code that talks to one.

Every endpoint is OpenAI-compatible ``/chat/completions`` over httpx. A model makes kura
better and its absence must never make kura fail, so a call that times out, is refused
or answers nonsense comes back as ``None`` (a refused or dropped call is tried
once more; a timeout is not) — the caller falls back to its mechanical path
and says so — rather than as an exception in the middle of a weave. The API key is read
from the environment variable the config names, at call time, and never stored.

Reasoning-effort dialects differ between model families and an unknown field is usually
ignored, while a model left on deep thinking can spend its whole budget reasoning and
return nothing; so the low-effort switches of every dialect are sent at once (except to a
strict ``dialect = "openai"`` service).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kura.config import ModelConfig


@dataclass(slots=True)
class Usage:
    """Tokens sent to and received from models over a run, for its metrics line. A server
    that reports ``usage`` is believed; one that does not is estimated (4 characters a
    token) and ``estimated`` says so."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    estimated: bool = False

    def add(self, data: Any, sent: str, reply: str) -> None:
        self.calls += 1
        usage = data.get("usage") if isinstance(data, dict) else None
        counted = isinstance(usage, dict) and all(
            isinstance(usage.get(k), int) for k in ("prompt_tokens", "completion_tokens")
        )
        if counted:
            assert isinstance(usage, dict)
            self.tokens_in += usage["prompt_tokens"]
            self.tokens_out += usage["completion_tokens"]
        else:
            self.tokens_in += (len(sent) + 3) // 4
            self.tokens_out += (len(reply) + 3) // 4
            self.estimated = True

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "estimated": self.estimated}  # fmt: skip

    def line(self) -> str:
        approx = "~" if self.estimated else ""
        return f"model calls {self.calls}, tokens in {approx}{self.tokens_in} out {approx}{self.tokens_out}"


def complete(
    model: ModelConfig, system: str, user: str, *, max_tokens: int = 256, usage: Usage | None = None
) -> str | None:
    """The model's reply text, or None when it could not give one; ``usage`` counts the
    tokens of every call that got an answer."""
    import httpx

    body: dict[str, Any] = {
        "model": model.model,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        "max_tokens": max_tokens,
        "stream": False,
    }
    if model.temperature is not None:
        body["temperature"] = model.temperature
    effort = model.effort or "low"
    if model.dialect != "openai":
        body["reasoning_effort"] = effort
        body["thinking_effort"] = effort
        body["chat_template_kwargs"] = {"enable_thinking": effort != "low"}
    body.update(model.extra)
    headers = {"content-type": "application/json"}
    key = os.environ.get(model.api_key_env) if model.api_key_env else None
    if key:
        headers["authorization"] = f"Bearer {key}"
    for _attempt in range(2):
        try:
            response = httpx.post(
                model.url.rstrip("/") + "/chat/completions", json=body, headers=headers, timeout=model.timeout
            )
            if response.status_code >= 500:
                continue
            response.raise_for_status()
            data = response.json()
            content = data["choices"][0]["message"]["content"]
        except httpx.TimeoutException:
            return None  # a model that ran out of time once will again; the caller has a fallback
        except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError):
            continue
        if usage is not None:
            usage.add(data, system + user, content if isinstance(content, str) else "")
        return content if isinstance(content, str) and content.strip() else None
    return None


def with_charter(charter: str, instructions: str) -> str:
    """A role's system prompt: the store's charter first, byte-identical for every role, so
    the roles share one cached prefix on a model server."""
    head = f"{charter.rstrip()}\n\n" if charter.strip() else ""
    return f"{head}{instructions}"


def last_json_object(reply: str, key: str) -> dict[str, Any] | None:
    """The last decodable JSON object in ``reply`` that has ``key``: models reason (or fence
    their answer) before they give it."""
    decoder = json.JSONDecoder()
    found: dict[str, Any] | None = None
    end = -1
    start = reply.find("{")
    while start != -1:
        if start >= end:
            try:
                value, stop = decoder.raw_decode(reply, start)
            except ValueError:
                value, stop = None, -1
            if isinstance(value, dict) and key in value:
                found, end = value, stop
        start = reply.find("{", start + 1)
    return found


def clip(text: str, limit: int = 80) -> str:
    """A model's reply folded onto one line and cut, for a message."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
