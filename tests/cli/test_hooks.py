"""The shipped hooks, run as a harness or git would run them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import make_store

HOOKS = Path(__file__).resolve().parents[2] / "hooks"
KURA = shutil.which("kura") or str(Path(sys.executable).parent / "kura")


def run(hook: Path, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(hook)], cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, check=False
    )


def test_prefill_hook_prints_the_map(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s", [("a", "user", "Mika is in Lisbon", None)])
    result = run(HOOKS / "kura-prefill", tmp_path, KURA_BIN=KURA, KURA_STORE=str(store.root))
    assert result.returncode == 0
    assert (
        result.stdout.startswith("<<<KURA-MAP store=s>>>")
        and "[a](a.md) — Mika is in Lisbon" in result.stdout
    )


@pytest.mark.parametrize("hook", ["kura-prefill", "claude-code/session-start"])
def test_without_kura_the_hook_says_missing_and_never_fails(tmp_path: Path, hook: str) -> None:
    result = run(HOOKS / hook, tmp_path, KURA_BIN="/nonexistent/kura", KURA_STORE="eq")
    assert result.returncode == 0
    assert result.stdout.startswith("<<<KURA-MAP store=eq>>>\nThe memory map is MISSING, not empty")


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_pre_commit_blocks_a_broken_store_and_post_merge_weaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = make_store(tmp_path / "s", [("a", "project", "fine", "2026-03-01")])
    git(store.root, "init", "-q")
    for name in ("pre-commit", "post-merge"):
        shutil.copy(HOOKS / "git" / name, store.root / ".git" / "hooks" / name)
    monkeypatch.setenv("KURA_BIN", KURA)

    git(store.root, "add", ".")
    assert git(store.root, "commit", "-qm", "clean").returncode == 0
    (store.root / "broken.md").write_text("---\nname: b\ndescription: 'Chose X' fast\ntype: project\n---\n")
    git(store.root, "add", ".")
    blocked = git(store.root, "commit", "-qm", "broken")
    assert blocked.returncode == 1 and "broken.md:3: frontmatter is not valid YAML" in blocked.stderr
    assert "fix the findings above" in blocked.stderr
    (store.root / "broken.md").unlink()
    subprocess.run([str(store.root / ".git" / "hooks" / "post-merge")], cwd=store.root, check=True)
    assert (store.root / ".kura" / "map.md").is_file()


def test_the_claude_code_script_hands_the_hosts_json_to_kura_hook(tmp_path: Path) -> None:
    """Settings that name hooks/claude-code/session-start get what `kura hook session-start`
    gives: the store chosen from the folder in Claude Code's JSON."""
    make_store(tmp_path / "project" / "memory", [("a", "user", "Mika is in Lisbon", None)])
    payload = json.dumps(
        {"session_id": "s", "cwd": str(tmp_path / "project"), "hook_event_name": "SessionStart"}
    )
    result = subprocess.run([str(HOOKS / "claude-code" / "session-start")], cwd=tmp_path, input=payload,
                            env={**os.environ, "KURA_BIN": KURA}, capture_output=True, text=True, check=False)  # fmt: skip
    assert result.returncode == 0
    assert result.stdout.startswith("<<<KURA-MAP store=main>>>") and "Mika is in Lisbon" in result.stdout
