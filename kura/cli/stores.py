"""``kura stores``: the configured stores, and which one this folder works on and why.

The store a command uses depends on where it runs (the project's ``memory/`` up to the git
root), on ``-s``/``$KURA_STORE`` and on which kura.toml was found; a person who wonders why
a map or a recall came from one store and not another asks here, so the answer names the
rule that chose it and the paths it looked at, and the person's store read beside it.
"""

from __future__ import annotations

from typing import Any

from kura.config import Config, StoreConfig
from kura.recall.index_job import progress


def stores_report(config: Config, selector: str | None, origin: str) -> dict[str, Any]:
    """What ``kura stores --json`` prints: the config, the stores, and the choice."""
    chosen = config.store_config(selector) if selector else config.named()
    rows = [_row(config, name, sc, chosen) for name, sc in config.stores.items()]
    person = config.beside(chosen) if chosen.path.is_dir() else None
    why = (f"-s {selector}" if origin == "-s" else f"$KURA_STORE={selector}") if selector else config.why
    return {
        "config": str(config.source) if config.source else None,
        "chosen": {"store": chosen.name, "path": str(chosen.path), "why": why},
        "beside": None
        if person is None
        else {
            "store": person.name,
            "path": str(person.path),
            "why": f"the person's store: the default in {config.source}, read beside the project's",
        },
        "stores": rows,
    }


def _row(config: Config, name: str, sc: StoreConfig, chosen: StoreConfig) -> dict[str, Any]:
    scope = "project" if name == config.project else "person" if name == config.person else ""
    return {
        "name": name,
        "path": str(sc.path),
        "label": sc.label,
        "write_policy": sc.write_policy,
        "modes": sorted(m for m, s in config.modes.items() if s == name),
        "default": sc == chosen,
        "scope": scope,
        "exists": sc.path.is_dir(),
        "index_build": _built(sc),
    }


def _built(sc: StoreConfig) -> dict[str, Any] | None:
    """The store's background index build, as its progress file says (None: none ran)."""
    found = progress(sc.path) if sc.path.is_dir() else None
    return None if found is None else {**found.to_dict(), "line": found.line()}


def stores_lines(report: dict[str, Any]) -> list[str]:
    """``kura stores`` as text: one line a store (``*`` the chosen one), then why."""
    lines = []
    for row in report["stores"]:
        mark = "*" if row["default"] else " "
        modes = f"  modes: {', '.join(row['modes'])}" if row["modes"] else ""
        scope = f"  ({row['scope']}'s store)" if row["scope"] else ""
        missing = "" if row["exists"] else "  (folder missing)"
        lines.append(f"{mark} {row['name']}  {row['path']}  [{row['write_policy']}]{modes}{scope}{missing}")
        if row["index_build"] and row["index_build"]["state"] != "done":
            lines.append(f"    {row['index_build']['line']}")
    chosen = report["chosen"]
    lines.append(f"this folder uses '{chosen['store']}': {chosen['why']}")
    if report["beside"]:
        beside = report["beside"]
        lines.append(f"read beside it: '{beside['store']}' ({beside['path']}), {beside['why']}")
    return lines
