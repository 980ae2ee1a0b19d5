"""The command line holds a request to the same ranges as HTTP and MCP (``kura.request``).

An out-of-range number is refused with the range named and exit 1, on the typer path and
on the fast path alike; before, ``--chars 10`` printed a lone ``[…]`` and ``--budget
999999`` was taken, though the server refuses both.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Cli


def kura(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real executable's fast path (plain options, no --help)."""
    return subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(store), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("recall", "how do we deploy", "--chars", "10"), "chars must be between 200 and 200000, got 10"),
        (("recall", "how do we deploy", "--top", "51"), "top must be between 1 and 50, got 51"),
        (("recall", "how do we deploy", "--hops", "6"), "hops must be between 0 and 5, got 6"),
    ],
)
def test_recall_refuses_what_the_server_refuses_on_the_fast_path(
    args: tuple[str, ...], said: str, sample_copy: Callable[[Path], Path], tmp_path: Path
) -> None:
    ran = kura(sample_copy(tmp_path / "store"), *args)
    assert ran.returncode == 1, ran.stdout
    assert said in ran.stderr
    assert ran.stdout == ""


def test_recall_refuses_out_of_range_on_the_typer_path(
    cli: Cli, sample_copy: Callable[[Path], Path], tmp_path: Path
) -> None:
    ran = cli(
        "-s", str(sample_copy(tmp_path / "store")), "recall", "how do we deploy", "--chars", "10", "--explain"
    )
    assert ran.code == 1
    assert "chars must be between 200 and 200000, got 10" in ran.err


@pytest.mark.parametrize(
    ("budget", "said"),
    [
        ("999999", "budget must be between 50 and 200000, got 999999"),
        ("10", "budget must be between 50 and 200000, got 10"),
    ],
)
def test_context_refuses_a_budget_outside_the_range(
    cli: Cli, budget: str, said: str, sample_copy: Callable[[Path], Path], tmp_path: Path
) -> None:
    ran = cli(
        "-s",
        str(sample_copy(tmp_path / "store")),
        "context",
        "deploy the app",
        "--budget",
        budget,
        "--no-model",
    )
    assert ran.code == 1
    assert said in ran.err
