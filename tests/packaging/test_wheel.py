"""kura as a person installs it: a wheel built from this checkout, in a fresh virtualenv, run
from a folder outside the checkout — every hook and ``kura git install --hooks`` included.

The fresh virtualenv gets kura only from the wheel; its dependencies come from this test's own
environment through a ``.pth`` file naming that environment's site-packages (a path a ``.pth``
lists is put on ``sys.path``, but the ``.pth`` files inside it are not run, so the editable kura
of the checkout is not loaded there). Nothing is downloaded.
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import time
import tomllib
import zipfile
from pathlib import Path

import pytest
from wheel_env import Tool, build_tool

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
GOOD = "---\nname: Deploy day\ndescription: deploys go out on Tuesday\ntype: project\n---\n\nTuesdays.\n"
BROKEN = "---\nname: b\ndescription: 'Chose X' fast\ntype: project\n---\n"


@pytest.fixture(scope="module")
def tool(tmp_path_factory: pytest.TempPathFactory) -> Tool:
    have = importlib.metadata.version("setuptools")
    if int(have.split(".")[0]) < 77:
        pytest.fail(f"setuptools {have} cannot build kura's wheel (pyproject's licence fields need 77 or "
                    "later); `pip install -e '.[test]'` brings it")  # fmt: skip
    return build_tool(ROOT, tmp_path_factory.mktemp("wheel"))


def git(repo: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, env=env,
                          capture_output=True, text=True, check=False)  # fmt: skip


def test_the_wheel_carries_the_licence_and_every_data_file(tool: Tool) -> None:
    names = set(zipfile.ZipFile(tool.wheel).namelist())
    assert tool.wheel.name == f"kura_memory-{VERSION}-py3-none-any.whl"
    assert f"kura_memory-{VERSION}.dist-info/licenses/LICENSE" in names
    data = {f"kura/data/{p.name}" for p in (ROOT / "kura" / "data").iterdir() if p.is_file()}
    assert data and data <= names


def test_the_installed_kura_is_the_wheels_and_says_its_version(tool: Tool, tmp_path: Path) -> None:
    where = tool.run(["python", "-c", "import kura; print(kura.__file__)"], cwd=tmp_path)
    assert Path(where.stdout.strip()).is_relative_to(tool.venv), where
    assert not Path(where.stdout.strip()).is_relative_to(ROOT)
    done = tool.run(["kura", "--version"], cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, f"kura {VERSION}\n")


@pytest.fixture
def project(tool: Tool, tmp_path: Path) -> Path:
    """A git project holding its store in memory/ (one memory, committed, map woven)."""
    repo = tmp_path / "project"
    (repo / "memory").mkdir(parents=True)
    (repo / "memory" / "MEMORY.md").write_text(
        "# Memory index\n\n- [Deploy day](deploy.md) — deploys go out on Tuesday\n"
    )
    (repo / "memory" / "deploy.md").write_text(GOOD)
    (repo / "memory" / ".gitignore").write_text(".kura/\n")
    git(repo, "init", "-q", "-b", "main", env=tool.env)
    return repo


def test_the_session_start_hook_prints_the_map_of_the_store_its_json_names(
    tool: Tool, project: Path, tmp_path: Path
) -> None:
    payload = {"session_id": "s1", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(project),
               "hook_event_name": "SessionStart", "source": "startup"}  # fmt: skip
    done = tool.hook("session-start", payload, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("<<<KURA-MAP store=main>>>")
    assert "[Deploy day](deploy.md) — deploys go out on Tuesday" in done.stdout


def test_the_capture_and_prompt_hooks_from_the_wheel_keep_what_was_asked_and_recall_it(
    tool: Tool, project: Path, tmp_path: Path
) -> None:
    """Claude Code's Stop JSON names a real transcript: the wheel's ``kura hook capture``
    returns, its background pass writes the person's request into the project's store, and
    ``kura hook prompt`` then brings it back for a question that bears on it."""
    transcript = tmp_path / "home" / ".claude" / "projects" / "-project" / "s1.jsonl"
    transcript.parent.mkdir(parents=True)
    rows = [
        {"type": "user", "sessionId": "s1", "uuid": "u1", "cwd": str(project), "timestamp": "2026-12-01T09:30:00Z",
         "message": {"role": "user", "content": "remember that the staging cluster lives in eu-west-3"}},
        {"type": "assistant", "sessionId": "s1", "uuid": "a1", "cwd": str(project), "timestamp": "2026-12-01T09:30:05Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]}},
    ]  # fmt: skip
    transcript.write_text("".join(json.dumps(row) + "\n" for row in rows))
    payload = {
        "session_id": "s1",
        "transcript_path": str(transcript),
        "cwd": str(project),
        "hook_event_name": "Stop",
    }
    done = tool.hook("capture", payload, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 90
    while not any(
        "eu-west-3" in p.read_text() for p in (project / "memory").glob("*.md") if p.name != "MEMORY.md"
    ):
        assert time.monotonic() < deadline, (project / "memory" / ".kura" / "capture.log").read_text()
        time.sleep(0.2)
    asked = {"session_id": "s2", "cwd": str(project), "hook_event_name": "UserPromptSubmit",
             "prompt": "which region is the staging cluster in?"}  # fmt: skip
    told = tool.hook("prompt", asked, cwd=tmp_path)
    assert told.returncode == 0 and "eu-west-3" in told.stdout, told


def test_git_install_hooks_from_the_wheel_runs_each_git_hook(tool: Tool, project: Path) -> None:
    store = project / "memory"
    done = tool.run(["kura", "-s", str(store), "git", "install", "--hooks"], cwd=project)
    assert done.returncode == 0, done.stderr
    hooks = project / ".git" / "hooks"
    for name in ("pre-commit", "post-merge", "post-checkout"):
        assert str(tool.venv / "bin" / "kura") in (hooks / name).read_text()
    (store / "broken.md").write_text(BROKEN)
    git(project, "add", "-A", env=tool.env)
    refused = git(project, "commit", "-qm", "broken", env=tool.env)
    assert refused.returncode == 1 and "broken.md:3: frontmatter is not valid YAML" in refused.stderr
    (store / "broken.md").unlink()
    git(project, "add", "-A", env=tool.env)
    committed = git(project, "commit", "-qm", "the store", env=tool.env)
    assert committed.returncode == 0, committed.stderr
    woven = store / ".kura" / "map.md"
    woven.unlink(missing_ok=True)
    assert git(project, "checkout", "-q", "-b", "laptop", env=tool.env).returncode == 0
    assert woven.is_file()  # post-checkout wove the map
    (store / "deploy.md").write_text(GOOD + "Never on Fridays.\n")
    laptop = git(project, "commit", "-qam", "laptop", env=tool.env)
    assert laptop.returncode == 0, laptop.stderr
    git(project, "checkout", "-q", "main", env=tool.env)
    woven.unlink()
    merged = git(project, "merge", "-q", "laptop", env=tool.env)
    assert merged.returncode == 0 and woven.is_file(), merged.stderr  # post-merge wove it
