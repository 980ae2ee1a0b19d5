"""The shape of a kura.toml table: known keys and their types, refused with the key named.

Unknown keys are refused (a typo must not silently change nothing) except those a person
marks as their own with an ``x_`` prefix; a value of the wrong type names what it should be.
"""

from __future__ import annotations

from typing import Any

from kura.errors import ConfigError


def table(where: str, value: Any, types: dict[str, Any] | None = None) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"[{where}] must be a table, got {type(value).__name__}")
    if types is not None:
        keys(where, value, types)
    return value


def keys(where: str, table: dict[str, Any], types: dict[str, Any]) -> None:
    for key, value in table.items():
        if key.startswith("x_"):
            continue
        if key not in types:
            raise ConfigError(
                f"{label(where)} has unknown key {key!r} (known: "
                f"{', '.join(sorted(types))}); use an x_ prefix for your own"
            )
        want = types[key]
        wrong_bool = isinstance(value, bool) and want is not bool
        if wrong_bool or not isinstance(value, want):
            names = " or ".join(t.__name__ for t in want) if isinstance(want, tuple) else want.__name__
            got = f"{type(value).__name__} ({value!r})"
            raise ConfigError(f"{label(where)} {key} must be {names}, got {got}")


def label(where: str) -> str:
    return f"[{where}]" if where else "the top level"
