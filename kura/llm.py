"""Model endpoints: the only code that talks to one.

Every endpoint is OpenAI-compatible ``/chat/completions`` over httpx, and a request is
plain OpenAI chat completions unless the model's config names reasoning switches in
``effort_fields`` (see ``kura.files.model_table``): a strict server refuses any field it
does not know, on every call, so an extra nobody asked for turns a working model into a
dead one.

A model makes kura better and its absence must never make kura fail, so a call that times
out, is refused or answers nonsense comes back as ``NoAnswer`` with the reason (``complete``
folds it to ``None``) — the caller falls back to its mechanical path and says why — rather
than as an exception in the middle of a weave. A dropped call or a 5xx is tried once more;
a timeout is not (a model that ran out of time once will again), nor a 400/422 (the same
request would be refused again): that reason names the fields the server refused and the
key to change, with anything secret in the server's words redacted. The API key is read
from the environment variable the config names, at call time, and never stored.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from kura.text.secrets import redact
from kura.text.tokens import estimate_tokens

if TYPE_CHECKING:
    import httpx

    from kura.config import ModelConfig

Failure = Literal["timeout", "refused", "unreachable", "unread"]
_REFUSED_FIELDS = (400, 422)  # the server read the request and will not take its fields


@dataclass(slots=True)
class Usage:
    """Tokens sent to and received from models over a run, for its metrics line. A server
    that reports ``usage`` is believed; one that does not is estimated (``estimate_tokens``:
    4 characters of English a token, a CJK character one) and ``estimated`` says so."""

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
            self.tokens_in += estimate_tokens(sent)
            self.tokens_out += estimate_tokens(reply)
            self.estimated = True

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "estimated": self.estimated}  # fmt: skip

    def line(self) -> str:
        approx = "~" if self.estimated else ""
        return f"model calls {self.calls}, tokens in {approx}{self.tokens_in} out {approx}{self.tokens_out}"


@dataclass(frozen=True, slots=True)
class NoAnswer:
    """Why a model gave no reply, for a person: what happened, and what to change."""

    kind: Failure
    reason: str


def complete(
    model: ModelConfig, system: str, user: str, *, max_tokens: int = 256, usage: Usage | None = None
) -> str | None:
    """The model's reply text, or None when it could not give one; ``usage`` counts the
    tokens of every call that got an answer."""
    reply = chat(model, system, user, max_tokens=max_tokens, usage=usage)
    return reply if isinstance(reply, str) else None


def chat(
    model: ModelConfig,
    system: str,
    user: str,
    *,
    max_tokens: int = 256,
    usage: Usage | None = None,
    timeout: float | None = None,
) -> str | NoAnswer:
    """The model's reply text, or why there is none; ``timeout`` (seconds) overrides the
    model's own for a caller someone is waiting on."""
    import httpx

    body = request_body(model, system, user, max_tokens)
    headers = {"content-type": "application/json"}
    key = os.environ.get(model.api_key_env) if model.api_key_env else None
    if key:
        headers["authorization"] = f"Bearer {key}"
    seconds = model.timeout if timeout is None else timeout
    url = model.url.rstrip("/") + "/chat/completions"
    failed = NoAnswer("unreachable", "could not be reached")
    for _attempt in range(2):
        try:
            response = httpx.post(url, json=body, headers=headers, timeout=seconds)
        except httpx.TimeoutException:
            return NoAnswer("timeout", f"did not answer within {seconds:g} s")
        except httpx.HTTPError as err:
            failed = NoAnswer("unreachable", f"could not be reached ({type(err).__name__})")
            continue
        if response.status_code in _REFUSED_FIELDS:
            return NoAnswer("refused", refusal(model, body, response))
        if response.status_code >= 300:
            failed = NoAnswer("refused", f"answered HTTP {response.status_code}{_said(response)}")
            continue
        try:
            data = response.json()
            content = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            failed = NoAnswer("unread", "answered something that is not a chat completion")
            continue
        if usage is not None:
            usage.add(data, system + user, content if isinstance(content, str) else "")
        if isinstance(content, str) and content.strip():
            return content
        return NoAnswer("unread", "answered with an empty reply")
    return failed


def request_body(model: ModelConfig, system: str, user: str, max_tokens: int) -> dict[str, Any]:
    """Plain chat completions, plus the reasoning switches the config names (each carrying
    its ``effort``) and its ``extra`` fields."""
    body: dict[str, Any] = {
        "model": model.model,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        "max_tokens": max_tokens,
        "stream": False,
    }
    if model.temperature is not None:
        body["temperature"] = model.temperature
    effort = model.effort or "low"
    thinking = effort != "low" if model.thinking is None else model.thinking
    switches = {"reasoning_effort": effort, "thinking_effort": effort,
                "chat_template_kwargs": {"enable_thinking": thinking}}  # fmt: skip
    body.update((name, switches[name]) for name in model.effort_fields if name in switches)
    body.update(model.extra)
    return body


def refusal(model: ModelConfig, body: dict[str, Any], response: httpx.Response) -> str:
    """A 400/422 said for a person: the fields of ``body`` the server named, and what in the
    config sends each; the server's own words, redacted, when it named none."""
    message, named = _error_of(_json_or_none(response))
    message = message or response.text
    sent = [key for key in body if key not in ("model", "messages")]
    named += [key for key in sent if re.search(rf"(?<![\w.]){re.escape(key)}(?!\w)", message)]
    fields = sorted({name for name in named if name in body})
    said = _said(response, message)
    if not fields:
        return f"the server refused the request (HTTP {response.status_code}{said})"
    listed = ", ".join(f"`{name}`" for name in fields)
    return f"the server refused {listed} (HTTP {response.status_code}{said}); {_advice(model, fields)}"


def _advice(model: ModelConfig, fields: list[str]) -> str:
    """What to change in kura.toml so the fields are no longer sent."""
    extra = [name for name in fields if name in model.extra]
    switches = [name for name in fields if name in model.effort_fields and name not in extra]
    steps = []
    if switches:
        left = [name for name in model.effort_fields if name not in switches]
        keep = "" if not left else " (or [] if it refuses those too)"
        steps.append(f"set effort_fields = {json.dumps(left)} in {model.table}{keep}")
    if extra:
        steps.append(f"remove {', '.join(extra)} from extra in {model.table}")
    if "temperature" in fields and "temperature" not in extra:
        steps.append(f"remove temperature from {model.table}")
    needed = [name for name in fields if name not in (*extra, *switches, "temperature")]
    if needed:
        steps.append(f"kura sends {', '.join(needed)} on every call: is {model.url} an OpenAI chat endpoint?")
    return "; ".join(steps)


def _error_of(data: Any) -> tuple[str, list[str]]:
    """The message and named fields of an error body: OpenAI's ``{"error": {"message",
    "param"}}``, a bare ``{"message", "param"}`` (vLLM, llama.cpp), or pydantic's
    ``{"detail": [{"loc", "msg"}]}`` (FastAPI servers)."""
    if not isinstance(data, dict):
        return "", []
    error = data.get("error", data)
    if isinstance(error, str):
        return error, []
    detail = data.get("detail")
    if isinstance(detail, list):
        items = [item for item in detail if isinstance(item, dict)]
        names = [_field_of(next((p for p in item.get("loc", []) if p != "body"), "")) for item in items]
        return "; ".join(dict.fromkeys(str(item.get("msg", "")) for item in items)), [n for n in names if n]
    if isinstance(detail, str):
        return detail, []
    if not isinstance(error, dict):
        return "", []
    message = error.get("message")
    param = _field_of(error.get("param"))
    return (message if isinstance(message, str) else ""), [param] if param else []


def _field_of(param: Any) -> str:
    """The top-level field a server's ``param`` or ``loc`` names (``messages[0].content``:
    ``messages``)."""
    found = re.match(r"[A-Za-z_]\w*", param) if isinstance(param, str) else None
    return found.group() if found else ""


def _json_or_none(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _said(response: httpx.Response, message: str | None = None) -> str:
    """``: what the server said``, on one line, cut, with any secret in it redacted."""
    if message is None:
        message = _error_of(_json_or_none(response))[0] or response.text
    text = clip(redact(message)[0], 120)
    return f": {text}" if text else ""


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
