"""``kura setup HOST``: merged into the host's own files, and out again, byte for byte.

Every case runs the real ``kura`` console script of this virtualenv in a real git project,
with HOME, KURA_HOME, CODEX_HOME and XDG folders in the test's temp dir. The person's
settings files are written first with keys kura knows nothing about, in layouts kura does
not write itself (four-space or tab indents, one-line arrays, comments, CRLF), and must
come back unchanged around kura's own entries.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

KURA = str(Path(sys.executable).parent / "kura")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "home" / ".codex"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "home" / ".local" / "state"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return root


def kura(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KURA, *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


def snapshot(*roots: Path) -> dict[str, bytes | None]:
    found: dict[str, bytes | None] = {}
    for root in roots:
        for here, dirs, files in os.walk(root):
            for name in dirs:
                found[os.path.join(here, name)] = None
            for name in files:
                found[os.path.join(here, name)] = Path(here, name).read_bytes()
    return found


# host, file (relative to the project), the person's own file, the key path to kura's server
PERSONS: list[tuple[str, str, str, tuple[str, ...]]] = [
    (
        "cursor",
        ".cursor/mcp.json",
        '{\n    "mcpServers": {\n        "github": {"command": "gh-mcp", "args": ["--x"]}\n    },\n'
        '    "zeta": [1, 2, 3]\n}\n',
        ("mcpServers", "kura"),
    ),
    (
        "gemini",
        ".gemini/settings.json",
        '{\n\t"theme": "GitHub",\n\t"mcpServers": {\n\t\t"fs": {"command": "fs-mcp"}\n\t},\n\t"a": true\n}',
        ("mcpServers", "kura"),
    ),
    (
        "vscode",
        ".vscode/mcp.json",
        '{\r\n  // servers for this workspace\r\n  "inputs": [],\r\n  "servers": {\r\n'
        '    /* keep */\r\n    "py": {"type": "stdio", "command": "py-mcp"},\r\n  },\r\n}\r\n',
        ("servers", "kura"),
    ),
    (
        "claude-code",
        ".mcp.json",
        '{\n  "mcpServers": {\n    "other": {\n      "command": "other-mcp"\n    }\n  },\n  "z": 1\n}\n',
        ("mcpServers", "kura"),
    ),
]


def loose_json(text: str) -> Any:
    """JSON with comments and trailing commas, as VS Code reads it (for the checks only)."""
    from kura.hosts.jsonc import parse

    return parse(text).value


def dig(value: Any, keys: tuple[str, ...]) -> Any:
    for key in keys:
        value = value[key]
    return value


@pytest.mark.parametrize(("host", "rel", "mine", "keys"), PERSONS, ids=[p[0] for p in PERSONS])
def test_merge_keeps_the_persons_file_then_remove_gives_it_back(
    project: Path, host: str, rel: str, mine: str, keys: tuple[str, ...]
) -> None:
    path = project / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(mine.encode())
    before = loose_json(mine)

    done = kura("setup", host, cwd=project / "src")
    assert done.returncode == 0, done.stderr
    text = path.read_bytes().decode()
    after = loose_json(text)
    server = dig(after, keys)
    assert server["command"] == KURA
    assert server["args"] == ["mcp", "--store", str(project / "memory"), "--writable"]
    for key, value in before.items():  # the person's keys: same values, same order, kura's added last
        assert after[key] == value or key == keys[0]
    assert list(after)[: len(before)] == list(before)
    assert list(dig(after, keys[:-1]))[-1] == "kura"
    assert ("\r\n" in text) == ("\r\n" in mine)
    assert str(path) in done.stdout and keys[-1] in done.stdout
    for line in mine.splitlines():  # every line of the person's file is still there, in order
        assert line.rstrip(",") in text

    removed = kura("setup", host, "--remove", cwd=project)
    assert removed.returncode == 0, removed.stderr
    assert path.read_bytes() == mine.encode()


@pytest.mark.parametrize("host", ["claude-code", "codex", "cursor", "gemini", "vscode"])
def test_second_run_changes_nothing_and_exits_2(project: Path, tmp_path: Path, host: str) -> None:
    first = kura("setup", host, cwd=project)
    assert first.returncode == 0, first.stderr
    seen = snapshot(project, tmp_path / "home")
    again = kura("setup", host, cwd=project)
    assert again.returncode == 2, again.stdout + again.stderr
    assert "already set up" in again.stdout
    assert snapshot(project, tmp_path / "home") == seen


@pytest.mark.parametrize("host", ["claude-code", "codex", "cursor", "gemini", "vscode"])
def test_dry_run_writes_nothing(project: Path, tmp_path: Path, host: str) -> None:
    seen = snapshot(project, tmp_path / "home")
    done = kura("setup", host, "--dry-run", cwd=project)
    assert done.returncode == 0, done.stderr
    assert "would add" in done.stdout and "dry run: nothing was written" in done.stdout
    assert snapshot(project, tmp_path / "home") == seen
    real = kura("setup", host, cwd=project)
    said = [line.replace("would add", "added") for line in done.stdout.splitlines() if "would add" in line]
    assert said and all(line in real.stdout.splitlines() for line in said)


@pytest.mark.parametrize("host", ["claude-code", "codex", "cursor", "gemini", "vscode"])
def test_remove_takes_out_only_kuras_files_and_keeps_the_store(project: Path, host: str) -> None:
    before = snapshot(project)
    assert kura("setup", host, cwd=project).returncode == 0
    removed = kura("setup", host, "--remove", cwd=project)
    assert removed.returncode == 0, removed.stderr
    now = snapshot(project)
    made = {p for p in now if p not in before}
    assert all(Path(p).is_relative_to(project / "memory") for p in made), made  # the store stays
    again = kura("setup", host, "--remove", cwd=project)
    assert again.returncode == 2
    assert "already set up" not in again.stdout, again.stdout  # it was just taken out
    assert "nothing of kura's to take out" in again.stdout, again.stdout


def test_remove_where_setup_never_ran_says_there_is_nothing_to_take_out(project: Path) -> None:
    done = kura("setup", "cursor", "--remove", cwd=project)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == f"{project / '.cursor' / 'mcp.json'}: nothing of kura's to take out\n"
    assert not (project / ".cursor").exists()


BROKEN = [
    ("cursor", ".cursor/mcp.json", '{\n  "mcpServers": {\n    "a": 1\n    "b": 2\n  }\n}\n', ":4:"),
    ("gemini", ".gemini/settings.json", '{"theme": "x",}\n}', ":2:"),
    ("vscode", ".vscode/mcp.json", '{\n  "servers": {} /* never closed\n}\n', ":2:"),
    ("claude-code", ".claude/settings.json", '[\n  "not an object"\n]\n', ":1:"),
    ("claude-code", ".mcp.json", '{\n  "mcpServers": ["kura"]\n}\n', ":2:"),
    ("gemini", ".gemini/settings.json", '{"a": "\\q"}', ":1:"),
]


@pytest.mark.parametrize(("host", "rel", "text", "where"), BROKEN)
def test_a_file_kura_cannot_read_is_refused_and_left_untouched(
    project: Path, host: str, rel: str, text: str, where: str
) -> None:
    path = project / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    seen = snapshot(project)
    done = kura("setup", host, cwd=project)
    assert done.returncode == 1
    assert f"{path}{where}" in done.stderr, done.stderr
    assert "left" in done.stderr
    assert snapshot(project) == seen  # no other file written either, and no store made


def test_codex_toml_is_merged_keeping_comments_and_removed_back_to_its_bytes(
    project: Path, tmp_path: Path
) -> None:
    config = tmp_path / "home" / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    mine = (
        '# my settings\nmodel = "o3"  # the one I like\n\n[mcp_servers.gh]\ncommand = "gh"\nargs = ["mcp"]\n'
    )
    config.write_text(mine)
    done = kura("setup", "codex", cwd=project)
    assert done.returncode == 0, done.stderr
    text = config.read_text()
    assert text.startswith(mine)
    parsed = tomllib.loads(text)
    assert parsed["mcp_servers"]["kura"] == {"command": KURA, "args": ["mcp", "--writable"]}
    assert parsed["mcp_servers"]["gh"] == {"command": "gh", "args": ["mcp"]}
    assert kura("setup", "codex", cwd=project).returncode == 2
    assert kura("setup", "codex", "--remove", cwd=project).returncode == 0
    assert config.read_text() == mine


def test_codex_bad_toml_is_refused_with_its_line(project: Path, tmp_path: Path) -> None:
    config = tmp_path / "home" / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_bytes(b'model = "o3"\n[mcp_servers\n')
    done = kura("setup", "codex", cwd=project)
    assert done.returncode == 1 and f"{config}:2:" in done.stderr
    assert config.read_bytes() == b'model = "o3"\n[mcp_servers\n'


def test_claude_code_project_files(project: Path) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "permissions": {"allow": ["Bash(ls)"]},\n  "hooks": {\n    "Stop": [\n'
                        '      {"hooks": [{"type": "command", "command": "say done"}]}\n    ]\n  }\n}\n')  # fmt: skip
    done = kura("setup", "claude-code", "--recall-on-prompt", cwd=project / "src")
    assert done.returncode == 0, done.stderr
    hooks = json.loads(settings.read_text())["hooks"]
    command = {event: [g["hooks"][0]["command"] for g in groups] for event, groups in hooks.items()}
    assert command == {
        "Stop": ["say done", f"{KURA} hook capture"],
        "SessionStart": [f"{KURA} hook session-start"],
        "SessionEnd": [f"{KURA} hook capture"],
        "PreCompact": [f"{KURA} hook capture"],
        "UserPromptSubmit": [f"{KURA} hook prompt"],
    }
    server = json.loads((project / ".mcp.json").read_text())["mcpServers"]["kura"]
    assert server == {
        "type": "stdio",
        "command": KURA,
        "args": ["mcp", "--store", str(project / "memory"), "--writable"],
    }
    local = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert local["enabledMcpjsonServers"] == ["kura"]
    assert local["autoMemoryDirectory"] == str(project / "memory" / ".kura" / "claude-memory")
    assert (project / "memory" / "MEMORY.md").is_file()
    assert (project / "memory" / ".gitignore").read_text() == ".kura/\n"


def test_an_older_kura_hook_is_updated_not_doubled(project: Path) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    old = {"hooks": [{"type": "command", "command": "/old/venv/bin/kura hook session-start"}]}
    settings.write_text(json.dumps({"hooks": {"SessionStart": [old]}}, indent=2) + "\n")
    done = kura("setup", "claude-code", cwd=project)
    assert done.returncode == 0 and "updated hooks.SessionStart[]" in done.stdout
    groups = json.loads(settings.read_text())["hooks"]["SessionStart"]
    assert [g["hooks"][0]["command"] for g in groups] == [f"{KURA} hook session-start"]


def test_remove_leaves_an_entry_the_person_changed(project: Path) -> None:
    assert kura("setup", "cursor", cwd=project).returncode == 0
    path = project / ".cursor" / "mcp.json"
    edited = path.read_text().replace('"--writable"', '"--readonly"')
    path.write_text(edited)
    done = kura("setup", "cursor", "--remove", cwd=project)
    assert done.returncode == 2
    assert "mcpServers.kura left as it is" in done.stderr
    assert path.read_text() == edited


def test_a_setting_the_person_chose_is_kept(project: Path) -> None:
    local = project / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text('{"autoMemoryDirectory": "~/notes/claude"}\n')
    done = kura("setup", "claude-code", cwd=project)
    assert done.returncode == 0
    assert json.loads(local.read_text())["autoMemoryDirectory"] == "~/notes/claude"
    assert "autoMemoryDirectory left as it is" in done.stderr


def test_backup_holds_the_file_as_it_was(project: Path, tmp_path: Path) -> None:
    path = project / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"theme": "x"}\n')
    done = kura("setup", "gemini", "--json", cwd=project)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    backup = Path(report["files"][0]["backup"])
    assert backup.is_relative_to(tmp_path / "home") and not backup.is_relative_to(project)
    assert backup.read_text() == '{"theme": "x"}\n'
    assert report["files"][0]["entries"][0]["verdict"] == "added"


def test_user_scope_binds_the_personal_store(project: Path, tmp_path: Path) -> None:
    refused = kura("setup", "claude-code", "--user", cwd=project)
    assert refused.returncode == 1 and "kura init" in refused.stderr
    assert not (tmp_path / "home" / ".claude").exists()
    personal = tmp_path / "home" / "notes"
    assert kura("init", "main", "--path", str(personal), cwd=project).returncode == 0
    done = kura("setup", "claude-code", "--user", cwd=project)
    assert done.returncode == 0, done.stderr
    user_mcp = json.loads((tmp_path / "home" / ".claude.json").read_text())
    assert user_mcp["mcpServers"]["kura"]["args"] == ["mcp", "--store", str(personal), "--writable"]
    hooks = json.loads((tmp_path / "home" / ".claude" / "settings.json").read_text())["hooks"]
    assert set(hooks) == {"SessionStart", "Stop", "SessionEnd", "PreCompact"}
    assert not (project / ".mcp.json").exists() and not (project / "memory").exists()


def test_unknown_host_and_two_places_are_refused(project: Path) -> None:
    assert kura("setup", "emacs", cwd=project).returncode == 1
    both = kura("setup", "cursor", "--user", "--project", str(project), cwd=project)
    assert both.returncode == 1 and "--user and --project" in both.stderr


def test_a_settings_file_that_is_a_link_is_refused(project: Path, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "mcp.json"
    real.parent.mkdir()
    real.write_text('{"mcpServers": {}}\n')
    (project / ".cursor").mkdir()
    (project / ".cursor" / "mcp.json").symlink_to(real)
    done = kura("setup", "cursor", cwd=project)
    assert done.returncode == 1 and "a link" in done.stderr
    assert real.read_text() == '{"mcpServers": {}}\n'
    assert not (project / "memory").exists()


def test_remove_takes_the_prompt_hook_out_too(project: Path) -> None:
    settings = project / ".claude" / "settings.json"
    assert kura("setup", "claude-code", "--recall-on-prompt", cwd=project).returncode == 0
    assert "UserPromptSubmit" in json.loads(settings.read_text())["hooks"]
    assert kura("setup", "claude-code", "--remove", cwd=project).returncode == 0
    assert not settings.exists() and not (project / ".mcp.json").exists()


def test_a_local_settings_file_git_would_share_is_pointed_out(project: Path) -> None:
    done = kura("setup", "claude-code", cwd=project)
    assert "note: .claude/settings.local.json holds this machine's paths; add it to .gitignore" in done.stdout
    subprocess.run(["git", "-C", str(project), "add", "-f", ".claude/settings.local.json"], check=True)
    again = kura("setup", "claude-code", cwd=project)
    assert again.returncode == 2  # a note is not work
    assert "note: git tracks .claude/settings.local.json, so Claude Code ignores its settings" in again.stdout
    (project / ".gitignore").write_text(".claude/settings.local.json\n")
    subprocess.run(
        ["git", "-C", str(project), "rm", "-q", "--cached", ".claude/settings.local.json"], check=True
    )
    assert "note:" not in kura("setup", "claude-code", cwd=project).stdout


def test_codex_table_of_the_wrong_kind_is_refused_with_its_line(project: Path, tmp_path: Path) -> None:
    config = tmp_path / "home" / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('model = "o3"\nmcp_servers = "none"\n')
    done = kura("setup", "codex", cwd=project)
    assert done.returncode == 1 and f"{config}:2: mcp_servers is a string" in done.stderr
    assert config.read_text() == 'model = "o3"\nmcp_servers = "none"\n'


def test_kuras_hooks_in_both_user_and_project_settings_are_pointed_out(project: Path, tmp_path: Path) -> None:
    assert kura("init", "main", "--path", str(tmp_path / "home" / "notes"), cwd=project).returncode == 0
    assert kura("setup", "claude-code", "--user", cwd=project).returncode == 0
    done = kura("setup", "claude-code", cwd=project)
    assert done.returncode == 0
    assert "runs kura's hooks too, so each would run twice" in done.stdout
