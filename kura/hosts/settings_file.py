"""What kura puts into one host settings file, and the edit that puts it there or takes it out.

A host's settings file belongs to the person: kura adds its own entries (a hook, an MCP
server, an approval) and nothing else changes. Every file is planned in full before any is
written, so a file kura cannot read refuses the whole setup and no file is half done. JSON is
spliced as text (``kura.hosts.jsonc``); TOML is read with ``tomlkit`` and kura's table is
added as a block of its own at the end, which ``--remove`` takes out again.

An entry is kura's only while it is exactly what setup writes; one a person changed is left
where it is and reported, on setup and on removal alike (an MCP server under kura's own
name is brought up to date, since the name is kura's).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import tomlkit
import tomlkit.exceptions

from kura.errors import ConfigError
from kura.hosts import jsonc

Verdict = Literal["added", "updated", "already", "left", "removed", "absent"]
MAX_BYTES = 16 << 20


@dataclass(frozen=True, slots=True)
class Setting:
    """A member ``key`` of the object at ``path`` set to ``value`` (``key`` None: ``value`` as
    an item of the list at ``path``). ``ours`` tells an older kura entry in that place, which
    setup replaces; ``replace`` False leaves a member the person set to something else."""

    path: tuple[str, ...]
    key: str | None
    value: Any
    why: str = ""
    replace: bool = True
    ours: Callable[[Any], bool] | None = None

    @property
    def where(self) -> str:
        return ".".join(self.path + ((self.key,) if self.key is not None else ())) + (
            "[]" if self.key is None else ""
        )


@dataclass(frozen=True, slots=True)
class Outcome:
    setting: Setting
    verdict: Verdict
    note: str = ""


@dataclass(frozen=True, slots=True)
class FilePlan:
    """One file before and after (None: no file), and what happened to each setting."""

    path: Path
    before: bytes | None
    after: bytes | None
    outcomes: tuple[Outcome, ...] = field(default_factory=tuple)

    @property
    def changed(self) -> bool:
        return self.before != self.after


def read(path: Path) -> bytes | None:
    """The file's bytes (None when there is none); refuses what is not a plain, small file."""
    try:
        if path.is_symlink():
            raise ConfigError(
                f"{path}: a link ({os.readlink(path)}); kura edits only plain files and left it as it "
                f"was — run setup against the file it points at, or edit it by hand (docs/hosts.md)"
            )
        if not path.exists():
            return None
        if not path.is_file():
            raise ConfigError(f"{path}: not a plain file; kura will not edit it — nothing was changed")
        if path.stat().st_size > MAX_BYTES:
            raise ConfigError(f"{path}: over {MAX_BYTES >> 20} MiB, not read — nothing was changed")
        return path.read_bytes()
    except OSError as err:
        raise ConfigError(f"{path}: cannot be read ({err.strerror}); nothing was changed") from None


def _decoded(path: Path, data: bytes | None) -> str:
    if data is None:
        return ""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 text; kura left the file as it was") from None


def plan_json(path: Path, settings: list[Setting], *, remove: bool) -> FilePlan:
    before = read(path)
    text = _decoded(path, before)
    if text.strip() == "":
        if remove:
            return FilePlan(path, before, before, tuple(Outcome(s, "absent") for s in settings))
        text = "{}\n"
    _json_root(path, text)
    outcomes = []
    for setting in settings:
        text, outcome = (_unset_json if remove else _set_json)(path, text, setting)
        outcomes.append(outcome)
    root = _json_root(path, text)
    if remove and not root.members and (before is None or text.strip() in ("{}", "")):
        return FilePlan(path, before, None, tuple(outcomes))  # nothing left but kura's own file
    after: bytes | None = text.encode("utf-8")
    if before is None and after == b"{}\n":
        after = None
    return FilePlan(path, before, after, tuple(outcomes))


def _json_root(path: Path, text: str) -> jsonc.Node:
    try:
        root = jsonc.parse(text)
    except jsonc.JsonTextError as err:
        raise ConfigError(
            f"{path}:{err}; kura cannot edit this file and left it as it was — fix that line "
            "and run setup again"
        ) from None
    if not root.is_object:
        line = text.count("\n", 0, root.start) + 1
        raise ConfigError(
            f"{path}:{line}: the file holds a {_kind(root.value)}, not an object; kura left it as it was"
        )
    return root


def _kind(value: Any) -> str:
    for kind, name in ((dict, "object"), (list, "list"), (str, "string"), (bool, "boolean")):
        if isinstance(value, kind):
            return name
    return "number" if isinstance(value, int | float) else "value"


def _walk(
    path: Path, text: str, keys: tuple[str, ...], *, list_at_end: bool = False
) -> tuple[jsonc.Node, tuple[str, ...]]:
    """The deepest container along ``keys`` and the keys still missing below it; each must be
    an object, but the last a list when ``list_at_end``."""
    node = _json_root(path, text)
    for i, key in enumerate(keys):
        member = node.member(key)
        if member is None:
            return node, keys[i:]
        want_list = list_at_end and i == len(keys) - 1
        if member.node.is_array != want_list or not (member.node.is_array or member.node.is_object):
            line = text.count("\n", 0, member.start) + 1
            raise ConfigError(
                f"{path}:{line}: {'.'.join(keys[: i + 1])} is a {_kind(member.node.value)} where kura "
                f"expects {'a list' if want_list else 'an object'}; the file was left as it was — fix it "
                "and run setup again"
            )
        node = member.node
    return node, ()


def _nested(keys: tuple[str, ...], leaf: Any) -> Any:
    for key in reversed(keys):
        leaf = {key: leaf}
    return leaf


def _set_json(path: Path, text: str, setting: Setting) -> tuple[str, Outcome]:
    style = jsonc.style_of(text, _json_root(path, text))
    holder, missing = _walk(path, text, setting.path, list_at_end=setting.key is None)
    if setting.key is None:
        if missing:
            return jsonc.insert_member(
                text, holder, missing[0], _nested(missing[1:], [setting.value]), style
            ), Outcome(setting, "added")
        if setting.value in holder.value:
            return text, Outcome(setting, "already")
        for item in holder.items:
            if setting.ours is not None and setting.ours(item.value):
                return jsonc.replace_value(text, item, setting.value, style), Outcome(setting, "updated")
        return jsonc.append_item(text, holder, setting.value, style), Outcome(setting, "added")
    if missing:
        value = _nested((*missing[1:], setting.key), setting.value)
        return jsonc.insert_member(text, holder, missing[0], value, style), Outcome(setting, "added")
    member = holder.member(setting.key)
    if member is None:
        return jsonc.insert_member(text, holder, setting.key, setting.value, style), Outcome(setting, "added")
    if member.node.value == setting.value:
        return text, Outcome(setting, "already")
    if not setting.replace:
        return text, Outcome(setting, "left", f"already set to {member.node.value!r}, which kura keeps")
    return jsonc.replace_value(text, member.node, setting.value, style), Outcome(setting, "updated")


def _unset_json(path: Path, text: str, setting: Setting) -> tuple[str, Outcome]:
    holder, missing = _walk(path, text, setting.path, list_at_end=setting.key is None)
    if missing:
        return text, Outcome(setting, "absent")
    if setting.key is None:
        index = next((i for i, v in enumerate(holder.value) if v == setting.value), None)
        if index is None:
            mine = setting.ours is not None and any(setting.ours(v) for v in holder.value)
            note = "a kura entry that differs from what setup writes (changed since); left" if mine else ""
            return text, Outcome(setting, "left" if mine else "absent", note)
        text = jsonc.delete_item(text, holder, index)
    else:
        member = holder.member(setting.key)
        if member is None:
            return text, Outcome(setting, "absent")
        if member.node.value != setting.value:
            return text, Outcome(setting, "left", "changed since setup wrote it; left as it is")
        text = jsonc.delete_member(text, holder, setting.key)
    return _prune(path, text, setting.path), Outcome(setting, "removed")


def _prune(path: Path, text: str, keys: tuple[str, ...]) -> str:
    """Take out the containers along ``keys`` that kura's removal left empty, deepest first."""
    for depth in range(len(keys), 0, -1):
        parent, missing = _walk(path, text, keys[: depth - 1])
        member = parent.member(keys[depth - 1]) if not missing else None
        if member is None or member.node.value not in ({}, []):
            return text
        text = jsonc.delete_member(text, parent, keys[depth - 1])
    return text


def plan_toml(path: Path, settings: list[Setting], *, remove: bool) -> FilePlan:
    """TOML settings: each a table ``[path.key]`` (Codex's ``[mcp_servers.kura]``)."""
    before = read(path)
    text = _decoded(path, before)
    outcomes = []
    for setting in settings:
        text, outcome = (_unset_toml if remove else _set_toml)(path, text, setting)
        outcomes.append(outcome)
    after = text.encode("utf-8") if (text or before is not None) else None
    if remove and before is not None and text.strip() == "" and before.strip() != b"":
        after = None
    return FilePlan(path, before, after, tuple(outcomes))


def _toml(path: Path, text: str) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as err:
        raise ConfigError(
            f"{path}:{err.line}: not valid TOML ({err}); kura cannot edit this file and left it as "
            "it was — fix that line and run setup again"
        ) from None


def _toml_current(path: Path, text: str, setting: Setting) -> tuple[tomlkit.TOMLDocument, Any]:
    doc = _toml(path, text)
    node: Any = doc
    for key in setting.path:
        node = node.get(key) if isinstance(node, dict) else None
        if node is None:
            return doc, None
        if not isinstance(node, dict):
            raise ConfigError(
                f"{path}:{_toml_line(text, key)}: {key} is a {_kind(node)}, not a table; kura left the "
                "file as it was — fix it and run setup again"
            )
    found = node.get(setting.key) if setting.key is not None else None
    unwrap = getattr(found, "unwrap", None)
    return doc, unwrap() if unwrap is not None else found


def _toml_line(text: str, key: str) -> int:
    """The line that sets ``key`` (1 when no line plainly does)."""
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().split("=")[0].strip().strip('"') == key:
            return number
    return 1


def _block(setting: Setting) -> str:
    return tomlkit.dumps(_nested(setting.path, {setting.key: setting.value}))


def _set_toml(path: Path, text: str, setting: Setting) -> tuple[str, Outcome]:
    doc, current = _toml_current(path, text, setting)
    if current == setting.value:
        return text, Outcome(setting, "already")
    if current is None and _appendable(doc, setting):
        sep = "" if text == "" else ("\n" if text.endswith("\n") else "\n\n")
        return text + sep + _block(setting), Outcome(setting, "added")
    node: Any = doc
    for key in setting.path:
        if key not in node:
            node[key] = tomlkit.table(is_super_table=True)
        node = node[key]
    node[setting.key] = setting.value
    return tomlkit.dumps(doc), Outcome(setting, "added" if current is None else "updated")


def _appendable(doc: tomlkit.TOMLDocument, setting: Setting) -> bool:
    """Whether ``[path.key]`` may simply follow the rest: no inline table on the way."""
    node: Any = doc
    for key in setting.path:
        node = node.get(key)
        if node is None:
            return True
        if isinstance(node, tomlkit.items.InlineTable):
            return False
    return True


def _unset_toml(path: Path, text: str, setting: Setting) -> tuple[str, Outcome]:
    doc, current = _toml_current(path, text, setting)
    if current is None:
        return text, Outcome(setting, "absent")
    if current != setting.value:
        return text, Outcome(setting, "left", "changed since setup wrote it; left as it is")
    block = _block(setting)
    at = text.rfind(block)
    if at >= 0:
        rest = text[:at] + text[at + len(block) :]
        if at == len(rest) and rest.endswith("\n\n"):
            rest = rest[:-1]  # the blank line setup put before its table
        return rest, Outcome(setting, "removed")
    node: Any = doc
    for key in setting.path:
        node = node[key]
    del node[setting.key]
    return tomlkit.dumps(doc), Outcome(setting, "removed")
