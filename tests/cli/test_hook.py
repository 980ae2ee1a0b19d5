"""``kura hook …`` run as a host or git runs it: a real ``kura`` process, the host's JSON on stdin."""

from __future__ import annotations

import datetime as dt
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Cli, make_store
from test_hooks import KURA, git
from test_prefill_cap import ENTRY, generate

from kura.distill import drafts as dr
from kura.map.ceiling import length
from kura.store.store import Store
from kura.transcripts.segments import Segment

START = {"session_id": "s1", "transcript_path": "/nowhere/t.jsonl", "hook_event_name": "SessionStart",
         "source": "startup"}  # fmt: skip
DRAFTS = (
    "kura: 2 drafts wait for review in store 'main' — list them with `kura distill drafts`, "
    "or open /ui/drafts in `kura serve`.\n"
)


def hook(*args: str, cwd: Path, stdin: str | int | None = "", **env: str) -> subprocess.CompletedProcess[str]:
    """``kura ARGS`` with ``stdin`` (text, or a file descriptor) as a host would start it."""
    text = stdin if isinstance(stdin, str) else None
    handle = stdin if isinstance(stdin, int) else None
    return subprocess.run([KURA, *args], cwd=cwd, input=text, stdin=handle, env={**os.environ, **env},
                          capture_output=True, text=True, check=False, timeout=60)  # fmt: skip


def start(
    cwd: Path, payload_cwd: Path, *before: str, options: tuple[str, ...] = (), **env: str
) -> subprocess.CompletedProcess[str]:
    """``kura BEFORE… hook session-start OPTIONS…`` with Claude Code's JSON naming ``payload_cwd``."""
    payload = json.dumps({**START, "cwd": str(payload_cwd)})
    return hook(*before, "hook", "session-start", *options, cwd=cwd, stdin=payload, **env)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder holding its store in ./memory, and a folder elsewhere to start from."""
    make_store(tmp_path / "project" / "memory", [("deploy", "project", "deploys go out on Tuesday", None)])
    (tmp_path / "elsewhere").mkdir()
    return tmp_path / "project"


def test_the_store_is_chosen_from_the_folder_the_hosts_json_names(project: Path, tmp_path: Path) -> None:
    done = start(tmp_path / "elsewhere", project)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("<<<KURA-MAP store=main>>>")
    assert "[deploy](deploy.md) — deploys go out on Tuesday" in done.stdout
    assert done.stdout.endswith("<<<END KURA-MAP>>>\n")


def test_kura_store_and_dash_s_still_win_over_the_hosts_folder(project: Path, tmp_path: Path) -> None:
    other = make_store(tmp_path / "other", [("lisbon", "user", "Mika is in Lisbon", None)]).root
    by_env = start(tmp_path / "elsewhere", project, KURA_STORE=str(other))
    by_option = start(tmp_path / "elsewhere", project, "-s", str(other))
    for done in (by_env, by_option):
        assert done.returncode == 0 and done.stdout.startswith("<<<KURA-MAP store=other>>>"), done
        assert "Mika is in Lisbon" in done.stdout and "Tuesday" not in done.stdout


@pytest.mark.parametrize(
    "stdin", ["", "not json", "[1, 2]", '{"cwd": 7}', '{"cwd": "relative/x"}', "\x00\xff"]
)
def test_whatever_comes_on_stdin_the_hook_answers_from_its_own_folder(project: Path, stdin: str) -> None:
    done = hook("hook", "session-start", cwd=project, stdin=stdin)
    assert done.returncode == 0 and done.stdout.startswith("<<<KURA-MAP store=main>>>"), done
    assert "deploys go out on Tuesday" in done.stdout


def test_a_host_folder_that_is_gone_is_said_and_the_hook_still_answers(project: Path, tmp_path: Path) -> None:
    done = start(project, tmp_path / "gone")
    assert done.returncode == 0 and "deploys go out on Tuesday" in done.stdout
    assert f"kura: hook session-start: the host's cwd '{tmp_path / 'gone'}' cannot be used" in done.stderr


def test_a_terminal_on_stdin_is_never_read(project: Path) -> None:
    """A person trying the hook by hand gets the map at once, not a wait for JSON."""
    ours, theirs = pty.openpty()
    try:
        done = hook("hook", "session-start", cwd=project, stdin=theirs)
    finally:
        os.close(ours)
        os.close(theirs)
    assert done.returncode == 0 and "deploys go out on Tuesday" in done.stdout
    assert "no JSON" not in done.stderr


def test_a_host_that_never_closes_stdin_does_not_hang_the_hook(project: Path) -> None:
    with subprocess.Popen([KURA, "hook", "session-start"], cwd=project, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:  # fmt: skip
        out, err = _wait_open(proc)  # communicate() would close stdin
    assert proc.returncode == 0 and "deploys go out on Tuesday" in out
    assert "kura: hook session-start: no JSON from the host within 2 s; went without it" in err


def _wait_open(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """The output of a process whose stdin is kept open (never written, never closed)."""
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()  # returns when the process exits, however long that takes
    err = proc.stderr.read()
    proc.wait(timeout=60)
    return out, err


def test_no_store_gives_the_missing_block_and_exit_0(tmp_path: Path) -> None:
    done = start(tmp_path, tmp_path)
    assert done.returncode == 0
    assert done.stdout.startswith("<<<KURA-MAP store=main>>>\nThe memory map is MISSING, not empty")
    assert "no store here" in done.stderr


def _stage(store: Store, slug: str) -> None:
    dr.stage(store, slug=slug, kind="feedback", title=f"SECRET TITLE {slug}", description=f"draft {slug}",
             body="Never shown at session start.\n", evidence=[Segment("USER", f"remember {slug}")],
             source="/journals/session.jsonl")  # fmt: skip


def test_waiting_drafts_are_counted_after_the_map_never_shown(project: Path, tmp_path: Path) -> None:
    store = Store(project / "memory", name="main")
    _stage(store, "one")
    _stage(store, "two")
    done = start(tmp_path / "elsewhere", project)
    assert done.returncode == 0
    assert done.stdout.endswith("<<<END KURA-MAP>>>\n" + DRAFTS)
    assert "SECRET TITLE" not in done.stdout and "Never shown" not in done.stdout


def test_map_and_drafts_line_together_stay_within_the_ceiling(tmp_path: Path) -> None:
    root = tmp_path / "big" / "memory"
    slugs = generate(root, 300, today=dt.date.today())
    _stage(Store(root, name="main"), "one")
    _stage(Store(root, name="main"), "two")
    for cap, options in ((9500, ()), (4000, ("--max-chars", "4000"))):
        done = start(tmp_path, root.parent, options=options)
        assert done.returncode == 0 and done.stdout.endswith(DRAFTS), done.stderr
        assert length(done.stdout) <= cap
        listed = ENTRY.findall(done.stdout)
        assert not listed or listed == slugs[: len(listed)] or len(listed) == len(slugs)


def test_the_full_command_line_prints_what_the_fast_path_prints(
    project: Path, cli: Cli, tmp_path: Path
) -> None:
    """The typer command (any option the front door does not take goes there) is the same hook."""
    _stage(Store(project / "memory", name="main"), "one")
    _stage(Store(project / "memory", name="main"), "two")
    payload = json.dumps({**START, "cwd": str(project)})
    fast = hook("hook", "session-start", cwd=tmp_path / "elsewhere", stdin=payload)
    full = cli("hook", "session-start", input=payload)
    assert (full.code, full.out) == (fast.returncode, fast.stdout) == (0, fast.stdout)
    assert fast.stdout.endswith(DRAFTS)


# -- the git hooks ---------------------------------------------------------------------------------


def test_pre_commit_checks_the_store_kura_store_names_and_post_checkout_weaves(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    store = make_store(repo / "memory", [("a", "project", "fine", "2026-03-01")])
    git(repo, "init", "-q")
    git(repo, "add", ".")
    env = {"KURA_STORE": str(store.root)}
    assert hook("hook", "pre-commit", cwd=repo, **env).returncode == 0
    (store.root / "broken.md").write_text("---\nname: b\ndescription: 'Chose X' fast\ntype: project\n---\n")
    git(repo, "add", ".")
    refused = hook("hook", "pre-commit", cwd=repo, **env)
    assert refused.returncode == 1 and "broken.md:3: frontmatter is not valid YAML" in refused.stdout
    assert refused.stderr.endswith("kura pre-commit: fix the findings above (or commit with --no-verify)\n")
    woven = store.root / ".kura" / "map.md"
    assert not woven.exists()
    done = hook("hook", "post-checkout", "0" * 40, "1" * 40, "1", cwd=repo, **env)  # git's three arguments
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "") and woven.is_file()


def test_the_git_hooks_take_the_repositorys_top_as_the_store(tmp_path: Path) -> None:
    store = make_store(tmp_path / "repo", [("a", "project", "fine", "2026-03-01")])
    git(store.root, "init", "-q")
    (store.root / "sub").mkdir()
    done = hook("hook", "post-merge", "0", cwd=store.root / "sub")
    assert done.returncode == 0 and (store.root / ".kura" / "map.md").is_file()


def test_post_merge_outside_a_repository_never_fails(tmp_path: Path) -> None:
    done = hook("hook", "post-merge", "0", cwd=tmp_path, GIT_CEILING_DIRECTORIES=str(tmp_path))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_relative_config_or_store_is_read_from_where_the_hook_started(
    project: Path, tmp_path: Path
) -> None:
    """The hook moves to the host's folder to choose the store; what its own command line named
    relative to where it was started still means that."""
    other = make_store(tmp_path / "elsewhere" / "notes", [("lisbon", "user", "Mika is in Lisbon", None)]).root
    (tmp_path / "elsewhere" / "k.toml").write_text(f'[stores.notes]\npath = "{other}"\n')
    by_store = start(tmp_path / "elsewhere", project, "-s", "notes/")
    by_config = start(tmp_path / "elsewhere", project, "-c", "k.toml", "-s", "notes")
    for done in (by_store, by_config):
        assert done.returncode == 0 and "Mika is in Lisbon" in done.stdout, done
        assert "Tuesday" not in done.stdout


def test_a_current_map_is_answered_without_typer_or_anything_heavy(project: Path, tmp_path: Path) -> None:
    """The host waits for this hook: the front door answers it, as it answers `kura prefill`."""
    assert subprocess.run([KURA, "-s", str(project / "memory"), "weave"], capture_output=True).returncode == 0
    payload = json.dumps({**START, "cwd": str(project)})
    code = (
        "import sys, runpy\n"
        "sys.argv = ['kura', 'hook', 'session-start']\n"
        "try:\n    runpy.run_module('kura', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "heavy = {'yaml', 'typer', 'click', 'sqlite3', 'frontmatter', 'filelock', 'httpx', 'numpy', 'networkx'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, input=payload, capture_output=True,
                          text=True, check=True)  # fmt: skip
    assert "deploys go out on Tuesday" in done.stdout and done.stderr.strip() == "[]"
