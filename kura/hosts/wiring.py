"""Which settings each host needs from kura, and where its files are.

One table says it all: for each host and scope, the files and the entries kura puts in them
(an MCP server that runs the ``kura`` that ran setup, Claude Code's hooks, the approval
that spares the person a prompt, Claude Code's auto-memory folder). ``kura.hosts.setup``
plans and writes them; this module only decides what they are.

Claude Code's facts come from its 2.1.332 bundle and CLI: ``enabledMcpjsonServers``
approves a ``.mcp.json`` server only once the folder is trusted, and is read from
``.claude/settings.local.json`` (unless git tracks that file), the user's settings and the
project's. kura writes the approval to the local file, beside ``autoMemoryDirectory``
(documented as ignored in a checked-in file, though a headless 2.1.332 session read it there
too): an approval is the person's, and both hold this machine's paths.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from kura.hosts.settings_file import Setting

HOSTS = ("claude-code", "codex", "cursor", "gemini", "vscode")
Scope = Literal["project", "user"]
Format = Literal["json", "toml"]
CAPTURE_EVENTS = ("Stop", "SessionEnd", "PreCompact")


@dataclass(frozen=True, slots=True)
class Target:
    """The settings kura keeps in one file."""

    path: Path
    format: Format
    settings: tuple[Setting, ...]
    why: str


@dataclass(frozen=True, slots=True)
class Wiring:
    """What setup asks of a host: where, with which ``kura``, for which store (None: the
    store of the folder the host runs in)."""

    host: str
    scope: Scope
    root: Path  # the project folder, or the home folder with --user
    kura: str
    store: Path | None
    recall_on_prompt: bool = False
    memory_inbox: Path | None = None


def targets(wiring: Wiring, env: Mapping[str, str] | None = None) -> list[Target]:
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    build = {
        "claude-code": _claude,
        "codex": _codex,
        "cursor": _cursor,
        "gemini": _gemini,
        "vscode": _vscode,
    }[wiring.host]
    return build(wiring, home, env)


def mcp_args(wiring: Wiring) -> list[str]:
    store = ["--store", str(wiring.store)] if wiring.store is not None else []
    return ["mcp", *store, "--writable"]


def _server(wiring: Wiring, **extra: Any) -> dict[str, Any]:
    return {**extra, "command": wiring.kura, "args": mcp_args(wiring)}


def hook_command(kura: str, name: str) -> str:
    return f"{shlex.quote(kura)} hook {name}"


def _hook_group(kura: str, name: str) -> dict[str, Any]:
    return {"hooks": [{"type": "command", "command": hook_command(kura, name)}]}


def is_kura_hook(name: str) -> Any:
    """Whether a hook group is kura's ``hook NAME`` run by some ``kura`` (an older install)."""

    def check(group: Any) -> bool:
        hooks = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(hooks, list) or len(hooks) != 1 or not isinstance(hooks[0], dict):
            return False
        try:
            words = shlex.split(str(hooks[0].get("command", "")))
        except ValueError:
            return False
        return len(words) == 3 and Path(words[0]).name == "kura" and words[1:] == ["hook", name]

    return check


def _hooks(wiring: Wiring) -> tuple[Setting, ...]:
    wanted = [("SessionStart", "session-start", "the map at the start of every session")]
    wanted += [(event, "capture", "what the session said reaches memory") for event in CAPTURE_EVENTS]
    if wiring.recall_on_prompt:
        wanted.append(("UserPromptSubmit", "prompt", "memories that bear on each prompt"))
    return tuple(
        Setting(("hooks", event), None, _hook_group(wiring.kura, name), why=why, ours=is_kura_hook(name))
        for event, name, why in wanted
    )


def claude_dir(home: Path, env: Mapping[str, str]) -> Path:
    return Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home / ".claude"


def _claude(wiring: Wiring, home: Path, env: Mapping[str, str]) -> list[Target]:
    server = Setting(
        ("mcpServers",), "kura", _server(wiring, type="stdio"), why="kura's tools: recall, remember"
    )
    if wiring.scope == "user":
        config = claude_dir(home, env)
        user_mcp = config / ".claude.json" if env.get("CLAUDE_CONFIG_DIR") else home / ".claude.json"
        return [
            Target(config / "settings.json", "json", _hooks(wiring), "hooks for every project"),
            Target(user_mcp, "json", (server,), "the MCP server for every project"),
        ]
    root = wiring.root
    local: list[Setting] = [
        Setting(("enabledMcpjsonServers",), None, "kura", why="approves .mcp.json's kura server")
    ]
    if wiring.memory_inbox is not None:
        local.append(
            Setting((), "autoMemoryDirectory", str(wiring.memory_inbox), replace=False,
                    why="Claude's auto memory goes to kura's inbox, filed into the store")
        )  # fmt: skip
    return [
        Target(root / ".claude" / "settings.json", "json", _hooks(wiring), "hooks for this project"),
        Target(root / ".mcp.json", "json", (server,), "the MCP server for this project"),
        Target(root / ".claude" / "settings.local.json", "json", tuple(local), "this machine's settings"),
    ]


def codex_home(home: Path, env: Mapping[str, str]) -> Path:
    return Path(env["CODEX_HOME"]) if env.get("CODEX_HOME") else home / ".codex"


def _codex(wiring: Wiring, home: Path, env: Mapping[str, str]) -> list[Target]:
    server = Setting(("mcp_servers",), "kura", _server(wiring), why="kura's tools in every Codex session")
    return [Target(codex_home(home, env) / "config.toml", "toml", (server,), "Codex's config")]


def _mcp_servers(wiring: Wiring, path: Path, why: str) -> list[Target]:
    return [Target(path, "json", (Setting(("mcpServers",), "kura", _server(wiring), why=why),), why)]


def _cursor(wiring: Wiring, home: Path, env: Mapping[str, str]) -> list[Target]:
    base = home if wiring.scope == "user" else wiring.root
    return _mcp_servers(wiring, base / ".cursor" / "mcp.json", "kura's tools in Cursor")


def _gemini(wiring: Wiring, home: Path, env: Mapping[str, str]) -> list[Target]:
    base = home if wiring.scope == "user" else wiring.root
    return _mcp_servers(wiring, base / ".gemini" / "settings.json", "kura's tools in Gemini CLI")


def _vscode(wiring: Wiring, home: Path, env: Mapping[str, str]) -> list[Target]:
    if wiring.scope == "user":
        config = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
        path = config / "Code" / "User" / "mcp.json"
    else:
        path = wiring.root / ".vscode" / "mcp.json"
    server = Setting(("servers",), "kura", _server(wiring, type="stdio"), why="kura's tools in VS Code")
    return [Target(path, "json", (server,), "kura's tools in VS Code")]
