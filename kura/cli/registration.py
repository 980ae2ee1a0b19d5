"""``kura init``'s one edit to kura.toml: add ``[stores.NAME]``.

The file is a person's, with their comments and their order, so the new table is appended
as text and every byte before it is kept; and the whole new file is parsed and checked
(``kura.config.parse_config``) before anything is written, so an edit that would make the
config invalid — a second name for one folder, a store nested in another — is refused
with nothing changed.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from kura.config import parse_config
from kura.errors import ConfigError
from kura.store.atomic import write_atomic


def register_store(
    config_path: Path,
    name: str,
    path: Path,
    *,
    label: str = "",
    write_policy: str = "",
    dry_run: bool = False,
) -> bool:
    """Add ``[stores.NAME]`` to a config file (created if missing), appending text so the
    rest of the file keeps its bytes. Returns False when it is already there. The new file
    is validated before anything is written; ``dry_run`` only validates."""
    before = config_path.read_bytes() if config_path.exists() else b""
    text = before.decode("utf-8-sig")
    try:
        existing = tomllib.loads(text).get("stores", {}).get(name)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{config_path}: not valid TOML ({err}); fix that line") from err
    if isinstance(existing, dict):
        current = parse_config(tomllib.loads(text), config_path).stores[name]
        if os.path.realpath(current.path) == os.path.realpath(path):
            return False
        raise ConfigError(
            f"{config_path}: [stores.{name}] already points at {current.path}; choose another name"
        )
    lines = [f"[stores.{_toml_key(name)}]", f"path = {_toml_str(str(path))}"]
    if label:
        lines.append(f"label = {_toml_str(label)}")
    if write_policy:
        lines.append(f"write_policy = {_toml_str(write_policy)}")
    sep = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
    new_text = text + sep + "\n".join(lines) + "\n"
    parse_config(tomllib.loads(new_text), config_path)
    if not dry_run:
        config_path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(config_path, new_text.encode("utf-8"))
    return True


def _toml_str(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    escaped = "".join(c if c >= " " or c == "\t" else f"\\u{ord(c):04x}" for c in escaped)
    return f'"{escaped}"'


def _toml_key(name: str) -> str:
    bare = name.replace("-", "").replace("_", "")
    return name if bare.isascii() and bare.isalnum() else _toml_str(name)
