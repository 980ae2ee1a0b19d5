"""The shape of a kura.toml table: known keys and their types, refused with the key named.

Unknown keys are refused (a typo must not silently change nothing) except those a person
marks as their own with an ``x_`` prefix; the refusal names the nearest known key
(``did you mean``), because a misspelt key is the common case. A value of the wrong type
names what it should be. Each refusal carries its table and key, so the loader can say
the line (``kura.files.toml_lines``).
"""

from __future__ import annotations

from typing import Any

from kura.errors import ConfigError


def table(where: str, value: Any, types: dict[str, Any] | None = None) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"[{where}] must be a table, got {type(value).__name__}", table=where)
    if types is not None:
        keys(where, value, types)
    return value


def keys(where: str, table: dict[str, Any], types: dict[str, Any]) -> None:
    for key, value in table.items():
        if key.startswith("x_"):
            continue
        if key not in types:
            raise ConfigError(
                f"{label(where)} has unknown key {key!r}{did_you_mean(key, types)} (known: "
                f"{', '.join(sorted(types))}); use an x_ prefix for your own",
                table=where,
                key=key,
            )
        want = types[key]
        wrong_bool = isinstance(value, bool) and want is not bool
        if wrong_bool or not isinstance(value, want):
            names = " or ".join(t.__name__ for t in want) if isinstance(want, tuple) else want.__name__
            got = f"{type(value).__name__} ({value!r})"
            raise ConfigError(f"{label(where)} {key} must be {names}, got {got}", table=where, key=key)


def did_you_mean(key: str, known: Any) -> str:
    """`` — did you mean 'x'?`` for the nearest known key, or "" when none is near."""
    import difflib

    near = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f" — did you mean {near[0]!r}?" if near else ""


def label(where: str) -> str:
    return f"[{where}]" if where else "the top level"
