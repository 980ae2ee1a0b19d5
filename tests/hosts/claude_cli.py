"""The real Claude Code CLI, run headless in a project against the scripted endpoint.

``claude -p PROMPT --output-format json`` runs one session to its end and prints one JSON
result. It reads the project's ``.mcp.json`` and ``.claude/settings.json`` (hooks) with no
trust dialog, and starts the MCP servers and hooks they name as a person's session would.
Every run gets a home of its own in tmp (``HOME``, ``XDG_*``), the scripted endpoint as
``ANTHROPIC_BASE_URL`` with a dummy key, and the switches that keep it from phoning out
(with them, its only connection is to the endpoint). Nothing of the caller's environment
reaches it but ``PATH``.

Without ``claude`` on PATH the tests skip and say how to install it, unless
``KURA_HOST_TESTS=required`` (``.ci/run`` sets it after installing the CLI), where they fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from anthropic_server import AnthropicServer

VERSION = "2.1.332"  # the version .ci/run installs; tests/hosts was written against it
INSTALL = f"npm install -g @anthropic-ai/claude-code@{VERSION}"
KURA = shutil.which("kura", path=str(Path(sys.executable).parent)) or shutil.which("kura") or "kura"

# What keeps a headless run to the endpoint alone: no update check, no telemetry, no error
# reports, none of the "nonessential" calls (without these it looks up Anthropic's hosts).
QUIET = {
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


def claude_binary() -> str:
    """The ``claude`` command; skips the test (fails it under ``KURA_HOST_TESTS=required``)
    when there is none."""
    found = shutil.which("claude")
    if found is None:
        message = f"no `claude` on PATH: `{INSTALL}` to run the Claude Code tests"
        if os.environ.get("KURA_HOST_TESTS") == "required":
            pytest.fail(message)
        pytest.skip(message)
    return found


def home_env(home: Path) -> dict[str, str]:
    """A person's environment whose home is ``home``: ``PATH`` and nothing else of the caller's."""
    return {
        "PATH": os.environ["PATH"],
        "LANG": "C.UTF-8",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }


def claude_env(home: Path, url: str, cache: Path) -> dict[str, str]:
    """The whole environment of a run: a tmp home, the endpoint, the quiet switches. ``cache``
    is kura's (its embedding model, made once per test run), seen by the kura processes
    Claude Code starts."""
    return {
        **home_env(home),
        "XDG_CACHE_HOME": str(cache),
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "dummy",
        **QUIET,
    }


@dataclass(frozen=True, slots=True)
class Session:
    """One finished ``claude -p`` run: its exit code, its JSON result, its stderr."""

    code: int
    result: dict[str, Any]
    stderr: str


def run_claude(project: Path, home: Path, server: AnthropicServer, prompt: str, *, cache: Path) -> Session:
    """Run one headless session in ``project``; kura's tools are allowed, as a person who
    set kura up would allow them (a headless run cannot ask)."""
    home.mkdir(parents=True, exist_ok=True)
    command = [claude_binary(), "-p", prompt, "--output-format", "json", "--allowedTools", "mcp__kura"]
    done = subprocess.run(
        command,
        cwd=project,
        env=claude_env(home, server.url, cache),
        capture_output=True,
        text=True,
        timeout=180,
    )
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        result = {}
    assert done.returncode == 0 and result, (
        f"claude exited {done.returncode}: {done.stdout[-800:]}{done.stderr[-1500:]}"
    )
    return Session(done.returncode, result, done.stderr)


def git_project(root: Path) -> Path:
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def setup(project: Path, home: Path, *options: str) -> str:
    """``kura setup claude-code`` in ``project``, as its person would run it; what it printed."""
    home.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [KURA, "setup", "claude-code", *options],
        cwd=project,
        env=home_env(home),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, (
        f"kura setup claude-code exited {done.returncode}: {done.stdout}{done.stderr}"
    )
    return done.stdout
