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

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
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
# an embedder's table: an /embeddings endpoint (url, model) or a model folder (path)
_EMBEDDER = {**_MODEL, "path": str, "multilingual": bool, "max_tokens": int}


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
    path: str = ""  # an embedder: a local model folder instead of an endpoint (kura.recall.model_folder)
    multilingual: bool = False  # an embedder: it reads more than English (kura.recall.script)
    max_tokens: int = 0  # a model folder: tokens of a text it reads at most (0: the folder's own cap)

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
    out["embedder"] = None if embedder is None else embedder_model(f"{where}.embedder", embedder)
    return out


def embedder_model(where: str, table: Any, base: str = "") -> ModelConfig:
    """An embedder's table: ``path`` (a model folder, relative to ``base``: the config's
    folder) or ``url`` and ``model`` (an endpoint), never both."""
    table = dict(shape.table(where, table, _EMBEDDER))  # a copy: the raw config stays as read
    multilingual, cap = (
        table.pop("multilingual", False),
        _positive(where, "max_tokens", table.pop("max_tokens", 0)),
    )
    path = str(table.pop("path", "")).strip()
    if not path and not {"url", "model"} & set(table):
        raise ConfigError(f'[{where}] needs path = "DIR" (a model folder) or url and model (an endpoint)')
    if not path:
        return replace(model(where, "embedder", table), multilingual=multilingual)
    endpoint = sorted(set(table) & {"url", "model", "api_key_env"})
    if endpoint:
        raise ConfigError(
            f"[{where}] has path and {', '.join(endpoint)}: a model folder or an endpoint, "
            "not both — keep one"
        )
    if base and not os.path.isabs(os.path.expanduser(path)):
        path = os.path.join(base, path)
    return ModelConfig(
        role="embedder", url="", model="", path=path, multilingual=multilingual, max_tokens=cap, where=where
    )


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


def with_embedder(
    models: dict[str, ModelConfig | None], table: Any, base: Path
) -> dict[str, ModelConfig | None]:
    """``[models]`` with the top-level ``[embedder]`` table (a model folder, usually) as its
    embedder; declaring both is refused, since only one can be used."""
    if table is None:
        return models
    if models.get("embedder") is not None:
        raise ConfigError("[embedder] and [models.embedder] both name an embedder — keep one")
    return {**models, "embedder": embedder_model("embedder", table, str(base))}
