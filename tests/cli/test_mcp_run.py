"""``kura mcp``'s fast path: the options it reads itself, and those it leaves to typer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kura.cli.entry import _mcp_args

PLAIN = {"config": None, "store": None, "thread": None, "writable": None}


@pytest.mark.parametrize(
    ("argv", "parsed"),
    [
        (["mcp"], {}),
        (["mcp", "-s", "team"], {"store": "team"}),
        (["mcp", "--store=team", "--readonly"], {"store": "team", "writable": False}),
        (["-c", "k.toml", "-s", "vault", "mcp", "--store", "team"], {"config": "k.toml", "store": "team"}),
        (
            ["--store=vault", "mcp", "--writable", "--thread=t-1"],
            {"store": "vault", "writable": True, "thread": "t-1"},
        ),
        (["mcp", "--thread", "t-1", "-s", "./memory"], {"thread": "t-1", "store": "./memory"}),
    ],
)
def test_plain_options_are_read_without_typer(argv: list[str], parsed: dict[str, Any]) -> None:
    assert _mcp_args(argv) == {**PLAIN, **parsed}


@pytest.mark.parametrize(
    "argv",
    [
        ["mcp", "--help"],
        ["mcp", "-s"],  # no value: typer says so
        ["mcp", "-s=team"],  # click reads the value "=team"
        ["mcp", "--writable", "--readonly"],  # click lets the last win
        ["mcp", "--bogus"],
        ["mcp", "serve"],
        ["list", "-s", "team"],
    ],
)
def test_anything_else_goes_to_typer(argv: list[str]) -> None:
    assert _mcp_args(argv) is None


def test_help_comes_from_typer_and_names_the_short_form(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "200", "HOME": str(tmp_path)}
    got = subprocess.run(
        [sys.executable, "-m", "kura", "mcp", "--help"], capture_output=True, text=True, env=env, timeout=60
    )
    assert got.returncode == 0, got.stderr
    assert "--store" in got.stdout and "-s" in got.stdout and "Serve the memory to an MCP host" in got.stdout
