"""kura.toml's model tables (``[models.ROLE]``, ``[model_profiles.NAME.ROLE]``): one endpoint
each, checked whole at load like every other table.

A request is plain OpenAI chat completions unless the table asks for more, because a
strict server (a hosted API, a gateway that validates its input) answers 400 to any field
it does not know — every call, for good. The reasoning switches some model families want
(``reasoning_effort``, ``thinking_effort``, vLLM's ``chat_template_kwargs``) are sent only
when named in ``effort_fields``; a table written before that key, which asked for them the
old way (``effort``, ``thinking``, or ``dialect = "vllm"``/``"generic"``), still gets all
three, and ``dialect = "openai"`` none, so no working config changes what it sends.

Recall waits for a thinker at most ``recall_timeout`` seconds (10 by default, never more
than ``timeout``): a question is asked while someone waits, and every second past that is
a stall before the fallback that would have answered anyway.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kura.errors import ConfigError
from kura.files import toml_shape as shape

ROLES = ("thinker", "brain", "scribe")
EFFORT_FIELDS = ("reasoning_effort", "thinking_effort", "chat_template_kwargs")
RECALL_TIMEOUT = 10.0
_NUM = (int, float)
_MODEL = {
    "url": str,
    "model": str,
    "api_key_env": str,
    "timeout": _NUM,
    "recall_timeout": _NUM,
    "temperature": _NUM,
    "effort": str,
    "effort_fields": list,
    "thinking": bool,
    "dialect": str,
    "extra": dict,
    "budget": int,
}


@dataclass(kw_only=True, frozen=True, slots=True)
class ModelConfig:
    role: str
    url: str
    model: str
    api_key_env: str = ""
    timeout: float = 120.0
    recall_timeout: float = RECALL_TIMEOUT  # seconds a recall waits for the thinker
    temperature: float | None = None
    effort: str = ""
    effort_fields: tuple[str, ...] = ()  # the reasoning switches sent, each carrying ``effort``
    thinking: bool | None = None  # chat_template_kwargs' enable_thinking; None: effort says
    dialect: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    budget: int = 0  # tokens of prompt this role may be sent (0: the caller's default)
    where: str = ""  # the table it came from, for messages: "models.thinker"

    @property
    def table(self) -> str:
        return f"[{self.where or 'models.' + self.role}]"


def roles(where: str, table: Any) -> dict[str, ModelConfig | None]:
    """The role → model map of ``[models]`` or one profile. A role that is not declared is
    the role above it, whole, never merged key by key."""
    table = shape.table(where, table, {**dict.fromkeys(ROLES, dict), "embedder": dict})
    if set(table) - {"embedder"} and "thinker" not in table:
        raise ConfigError(
            f"[{where}] declares {', '.join(sorted(table))} but no thinker; every other "
            f"role inherits from [{where}.thinker], so declare it"
        )
    out: dict[str, ModelConfig | None] = {}
    above: ModelConfig | None = None
    for role in ROLES:
        if role in table:
            above = model(f"{where}.{role}", role, table[role])
        out[role] = above
    # the embedder is no chat role: it inherits nothing and nothing inherits from it
    embedder = table.get("embedder")
    out["embedder"] = None if embedder is None else model(f"{where}.embedder", "embedder", embedder)
    return out


def model(where: str, role: str, table: Any) -> ModelConfig:
    table = shape.table(where, table, _MODEL)
    for key in ("url", "model"):
        if not table.get(key):
            raise ConfigError(f'[{where}] needs {key} = "…"')
    if table.get("dialect") not in (None, "vllm", "openai", "generic"):
        raise ConfigError(f"[{where}] dialect must be vllm, openai or generic, got {table['dialect']!r}")
    timeout = _seconds(where, "timeout", table.get("timeout", 120.0))
    recall_timeout = _seconds(where, "recall_timeout", table.get("recall_timeout", RECALL_TIMEOUT))
    return ModelConfig(
        role=role,
        url=table["url"],
        model=table["model"],
        api_key_env=table.get("api_key_env", ""),
        timeout=timeout,
        recall_timeout=min(recall_timeout, timeout),
        temperature=table.get("temperature"),
        effort=table.get("effort", ""),
        effort_fields=_effort_fields(where, table),
        thinking=table.get("thinking"),
        dialect=table.get("dialect", ""),
        extra=dict(table.get("extra", {})),
        budget=_positive(where, "budget", table.get("budget", 0)),
        where=where,
    )


def _effort_fields(where: str, table: dict[str, Any]) -> tuple[str, ...]:
    """What the table asks to send: ``effort_fields`` when it names them, else what a table
    written before that key was sent (all three when it set effort, thinking or a
    non-OpenAI dialect), else nothing."""
    if "effort_fields" in table:
        named = table["effort_fields"]
        wrong = [name for name in named if name not in EFFORT_FIELDS]
        if wrong:
            raise ConfigError(
                f"[{where}] effort_fields may name {', '.join(EFFORT_FIELDS)}, got {wrong[0]!r}; "
                "put any other request field in extra"
            )
        return tuple(dict.fromkeys(named))
    if table.get("dialect") == "openai":
        return ()
    asked = table.get("dialect") in ("vllm", "generic") or "effort" in table or "thinking" in table
    return EFFORT_FIELDS if asked else ()


def _seconds(where: str, key: str, value: float) -> float:
    if value <= 0:
        raise ConfigError(f"[{where}] {key} must be a positive number of seconds, got {value}")
    return float(value)


def _positive(where: str, key: str, value: int) -> int:
    if value < 0:
        raise ConfigError(f"[{where}] {key} must be a positive number of tokens, got {value}")
    return value
