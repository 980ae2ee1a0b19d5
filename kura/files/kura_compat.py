"""The distill-kura keys kura does not do, refused at load with what to do instead.

A kura.toml written for distill-kura loads here, and every key in it must then mean what
it meant there. Most do (the stores, modes, models, the map's budget, the journals,
``chunk_chars`` and ``max_items``, ``verbatim_after``). The rest name behaviour kura
does not have: a second scribe working at once, a hot trail beside the map, adaptive
trigger lengths, a tier-zero recognizer before the thinker, a llama.cpp slot the map is
baked into. A key like that, accepted and ignored, would tell the person their setting
took effect; so it is refused, in one line that names it and says what kura does instead.

A value that already says what kura does (``scribe_slots = 1``, ``yield_on_return =
false``, ``[fastpath] enabled = false``) is accepted: it is true here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kura.errors import ConfigError
from kura.files.toml_shape import did_you_mean


@dataclass(frozen=True, slots=True)
class Unsupported:
    """A distill-kura key kura refuses unless its value is one of ``true_here``."""

    instead: str  # what kura does, and what to do with the key
    true_here: tuple[Any, ...] = ()


_ONE_SCRIBE = "kura's distiller asks the scribe for one draft at a time"
_DISTILL = {
    "scribe_slots": Unsupported(f"{_ONE_SCRIBE}; set scribe_slots = 1 or remove the key", (1,)),
    "coverage_passes": Unsupported(
        "kura's brain reads each stretch once, with no second look for what it walked past; "
        "set coverage_passes = 1 or remove the key",
        (1,),
    ),
    "yield_on_return": Unsupported(
        "`kura distill night` never stops a pass it has started (it starts one only after "
        "idle_min of quiet); set yield_on_return = false or remove the key",
        (False,),
    ),
}
_NO_ADAPTIVE = "kura does not re-tune trigger lengths from use (a trigger gets trigger_tokens)"
_PREFILL = {
    "trail_tokens": Unsupported(
        "kura wears no hot-trail block beside the map (recent memories keep their whole "
        "line in the map, see fresh_days); remove the key"
    ),
    "adaptive_triggers": Unsupported(f"{_NO_ADAPTIVE}; set it to false or remove the key", (False,)),
    "adaptive_apply": Unsupported(f"{_NO_ADAPTIVE}; set it to false or remove the key", (False,)),
    "trigger_steps": Unsupported(f"{_NO_ADAPTIVE}; remove the key"),
    "resident_mode": Unsupported(
        "kura's resident block is always the woven map (`kura prefill`); remove the key"
    ),
}
_NO_FAST = (
    "kura's recall has no tier-zero recognizer: with a thinker every question goes to it, "
    "without one the word and vector index answers"
)
_FASTPATH = {
    "enabled": Unsupported(f"{_NO_FAST}; set enabled = false or remove [fastpath]", (False,)),
    "gate": Unsupported(f"{_NO_FAST}; remove [fastpath]"),
    "cues": Unsupported(f"{_NO_FAST}; remove [fastpath]"),
}
_SERVER = {
    "auto_store_root": Unsupported(
        "kura makes a store only with `kura init` (or the first `kura remember` in ./memory); "
        "remove the key and create each store"
    ),
}
_PAYFORWARD = (
    "kura does not bake the map into a llama.cpp slot; the map is plain text for the host to "
    "send (`kura prefill`, GET /prefill) — remove the [payforward] table"
)
_TABLES = {"distill": _DISTILL, "prefill": _PREFILL, "fastpath": _FASTPATH, "server": _SERVER}
# ``[distill.journals]``: kura's keys and its adapters (``kura.transcripts.journals``)
JOURNAL_KEYS = ("roots", "include", "exclude", "claude", "codex", "chat", "evidence", "text")
_DSH = (
    "kura does not read DeepSeek Harness archives (session.jsonl.zstd); remove the key, or name a "
    "folder of transcripts kura reads (claude, codex, chat, evidence, text)"
)


def check(raw: dict[str, Any]) -> None:
    """Refuse the first distill-kura key in ``raw`` (a whole kura.toml, shapes already
    checked) that kura would otherwise keep and ignore."""
    if "payforward" in raw:
        raise ConfigError(f"[payforward]: {_PAYFORWARD}", table="payforward")
    for name, rules in _TABLES.items():
        _table(name, raw.get(name, {}), rules)
    _journals("distill.journals", raw.get("distill", {}).get("journals", {}))
    for store, table in raw.get("stores", {}).items():
        for name in ("distill", "prefill", "fastpath"):
            _table(f"stores.{store}.{name}", table.get(name, {}), _TABLES[name])
        _journals(f"stores.{store}.distill.journals", table.get("distill", {}).get("journals", {}))


def _table(where: str, table: dict[str, Any], rules: dict[str, Unsupported]) -> None:
    for key, rule in rules.items():
        if key not in table:
            continue
        value = table[key]
        if any(type(value) is type(ok) and value == ok for ok in rule.true_here):
            continue
        shown = str(value).lower() if isinstance(value, bool) else repr(value).replace("'", '"')
        raise ConfigError(f"[{where}] {key} = {shown}: {rule.instead}", table=where, key=key)


def _journals(where: str, table: dict[str, Any]) -> None:
    """A journals table's keys, at load: not only when a pass first reads it."""
    for key, value in table.items():
        if key.startswith("x_"):
            continue
        if key == "dsh":
            raise ConfigError(f"[{where}] dsh: {_DSH}", table=where, key=key)
        if key not in JOURNAL_KEYS:
            raise ConfigError(
                f"[{where}] has unknown key {key!r}{did_you_mean(key, JOURNAL_KEYS)} (known: roots, include, "
                "exclude and the adapter names claude, codex, chat, evidence, text)",
                table=where,
                key=key,
            )
        if isinstance(value, dict):
            raise ConfigError(
                f"[{where}] {key} is a table (distill-kura's root/exclude_glob form); kura takes a folder "
                f'or a list of folders: set {key} = "…", with exclude = ["**/scratch/**"] beside it',
                table=where,
                key=key,
            )
