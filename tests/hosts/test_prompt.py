"""``kura hook prompt``: Claude Code's UserPromptSubmit JSON on stdin, a real ``kura`` process,
and on stdout the memories that bear on the prompt — within 1,500 characters, above recall's
relevance floor — or nothing at all. Always exit 0."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

KURA = [sys.executable, "-m", "kura"]


@pytest.fixture
def project(tmp_path: Path, sample_copy: Callable[[Path], Path]) -> Path:
    """A project whose store (./memory) is the sample store, its vectors already made."""
    sample_copy(tmp_path / "ferry" / "memory")
    return tmp_path / "ferry"


def ask(cwd: Path, prompt: object, *extra: str) -> subprocess.CompletedProcess[str]:
    body = {"session_id": "s1", "transcript_path": "/tmp/none.jsonl", "cwd": str(cwd),
            "hook_event_name": "UserPromptSubmit", "prompt": prompt}  # fmt: skip
    return subprocess.run([*KURA, "hook", "prompt", *extra], input=json.dumps(body), cwd=cwd,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_a_prompt_that_bears_on_memories_gets_them_within_the_cap(project: Path) -> None:
    done = ask(project, "Can I force-push my rebased branch to main?")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("<<<KURA-RECALL store=main>>>\n") and out.endswith("<<<END KURA-RECALL>>>\n")
    assert "=== no-force-push-main" in out
    assert len(out) <= 1500
    small = ask(project, "Can I force-push my rebased branch to main?", "--max-chars", "400")
    assert 0 < len(small.stdout) <= 400


@pytest.mark.parametrize("prompt", ["What is the airspeed velocity of an unladen swallow?", "ok", "", 42])
def test_a_prompt_nothing_bears_on_gets_nothing(project: Path, prompt: object) -> None:
    done = ask(project, prompt)
    assert (done.returncode, done.stdout) == (0, ""), done.stderr


def test_no_store_prints_nothing_and_one_line(tmp_path: Path) -> None:
    done = ask(tmp_path, "Can I force-push to main?")
    assert (done.returncode, done.stdout) == (0, "")
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("kura: hook prompt: ")


def test_input_that_is_not_json_is_said_as_capture_says_it(tmp_path: Path) -> None:
    """Not a bare parser message ("Expecting value: line 1 column 1 (char 0)"): the line says
    what was wrong, as ``kura hook capture`` says it, and the host still sees exit 0."""
    done = subprocess.run([*KURA, "hook", "prompt"], input="not json", cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "")
    assert (
        done.stderr
        == "kura: hook prompt: the hook's input is not JSON (Expecting value) (no memories added)\n"
    )
