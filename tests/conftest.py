"""Shared fixtures: every test runs with its own user state and no inherited settings."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kura.cli import app
from kura.store import Store, init_store

SAMPLE = Path(__file__).resolve().parent.parent / "sample-store"


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point all user state at a temp dir and strip KURA_*/OPENAI_* from the environment."""
    for key in list(os.environ):
        if key.startswith(("KURA_", "OPENAI_")):
            monkeypatch.delenv(key)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("KURA_HOME", str(home))
    monkeypatch.setenv("HOME", str(home))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    yield tmp_path


@pytest.fixture
def store(tmp_path: Path) -> Store:
    made, _ = init_store(tmp_path / "store", name="test")
    return made


class Cli:
    """Runs the real typer app in-process and keeps stdout and stderr apart."""

    def __init__(self) -> None:
        self.runner = CliRunner()

    def __call__(self, *args: str, input: str | None = None) -> Result:
        result = self.runner.invoke(app, list(args), input=input, catch_exceptions=False)
        return Result(result.exit_code, result.stdout, result.stderr)


class Result:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def __repr__(self) -> str:
        return f"Result(code={self.code}, out={self.out!r}, err={self.err!r})"


@pytest.fixture
def cli() -> Cli:
    return Cli()
