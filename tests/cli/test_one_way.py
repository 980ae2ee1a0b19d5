"""One way through: every error carries its exit code and one function turns it into a
line and an exit; the command line behaves as its users expect (``--version``, a global
option given after the command, arguments shown as ``SLUG``); the README's Python snippet
runs after the quick start as written."""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

import kura
from kura import errors
from kura.cli.base import core
from kura.store.store import init_store

README = Path(__file__).resolve().parents[2] / "README.md"
SAMPLE = Path(__file__).resolve().parents[2] / "sample-store"


def run_kura(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kura", *args],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=60,
    )


# -- errors ---------------------------------------------------------------------------------


def test_each_error_class_carries_its_exit_code() -> None:
    codes = {
        name: getattr(errors, name).exit_code
        for name in (
            "KuraError", "StoreError", "NoteParseError", "NoStore", "NotFound", "UnknownStore",
            "ConfigError", "PolicyRefused", "ModelUnavailable", "GitError", "EmbedFailed", "InvalidRequest",
        )
    }  # fmt: skip
    assert codes == {
        "KuraError": 1,
        "StoreError": 1,
        "NoteParseError": 1,
        "NoStore": 1,
        "NotFound": 2,
        "UnknownStore": 1,
        "ConfigError": 1,
        "PolicyRefused": 1,
        "ModelUnavailable": 1,
        "GitError": 1,
        "EmbedFailed": 1,
        "InvalidRequest": 1,
    }


def test_embed_failed_and_invalid_request_join_the_tree_where_they_were() -> None:
    from kura.recall.remote_embed import EmbedFailed
    from kura.serve.pool import InvalidRequest

    assert EmbedFailed is errors.EmbedFailed and issubclass(EmbedFailed, errors.ModelUnavailable)
    assert InvalidRequest is errors.InvalidRequest
    assert issubclass(InvalidRequest, errors.KuraError) and issubclass(InvalidRequest, ValueError)


def test_value_errors_for_user_input_are_kura_errors_and_still_value_errors() -> None:
    from kura.evals import evaluate
    from kura.transcripts.sources import parse_lines

    with pytest.raises(errors.InvalidRequest, match="no adapter named 'nope'") as bad_format:
        parse_lines(b"x\n", "nope", name="t.jsonl")
    with pytest.raises(errors.InvalidRequest, match="--sessions 1: give between 2 and") as bad_sessions:
        evaluate(sessions=1)
    assert isinstance(bad_format.value, ValueError) and isinstance(bad_sessions.value, ValueError)


def test_one_mapping_reads_the_class_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    class Nothing(errors.KuraError):
        exit_code = 2

    def raising() -> None:
        raise Nothing("nothing here; look elsewhere")

    with pytest.raises(typer.Exit) as caught:
        core(raising)
    assert caught.value.exit_code == 2
    assert capsys.readouterr().err == "kura: error: nothing here; look elsewhere\n"


def test_weave_honours_kura_debug_like_every_other_command(tmp_path: Path) -> None:
    env = {**os.environ, "KURA_DEBUG": "1"}
    gone = str(tmp_path / "no-such-store")
    quiet = run_kura("-s", gone, "weave")
    loud = run_kura("-s", gone, "weave", env=env)
    assert (
        quiet.returncode == 1 and quiet.stderr.startswith("kura: error: ") and "Traceback" not in quiet.stderr
    )
    assert loud.returncode == 1 and "Traceback (most recent call last)" in loud.stderr
    assert "NoStore" in loud.stderr and "there is no folder" in loud.stderr


def test_unknown_store_and_missing_memory_keep_their_codes_on_every_path(tmp_path: Path) -> None:
    init_store(tmp_path / "main", name="main")
    (tmp_path / "kura.toml").write_text(f'[stores.main]\npath = "{tmp_path / "main"}"\n')
    toml = str(tmp_path / "kura.toml")
    for args in (["show", "nope"], ["recall", "anything"], ["weave"], ["list"]):
        unknown = run_kura("-c", toml, "-s", "mian", *args)
        assert (unknown.returncode, unknown.stderr.splitlines()[0][:40]) == (
            1,
            "kura: error: no store or mode named 'mia",
        ), args
    missing = run_kura("-c", toml, "-s", "main", "show", "nope")
    assert missing.returncode == 2 and missing.stderr.startswith("kura: error: "), missing.stderr


# -- the command line -------------------------------------------------------------------------


def test_version_prints_name_and_version() -> None:
    expected = f"kura {importlib.metadata.version('kura-memory')}\n"
    assert kura.__version__ == importlib.metadata.version("kura-memory")
    got = run_kura("--version")
    assert (got.returncode, got.stdout, got.stderr) == (0, expected, "")
    script = shutil.which("kura", path=str(Path(sys.executable).parent))
    assert script is not None
    direct = subprocess.run([script, "--version"], capture_output=True, text=True, check=False, timeout=60)
    assert (direct.returncode, direct.stdout, direct.stderr) == (0, expected, "")


def test_version_is_answered_on_the_fast_path() -> None:
    code = (
        "import sys\n"
        "sys.argv = ['kura', '--version']\n"
        "from kura.cli.entry import main\n"
        "try:\n    main()\nexcept SystemExit as done:\n"
        "    print(done.code, 'typer' in sys.modules, file=sys.stderr)\n"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert (got.stdout, got.stderr) == (f"kura {kura.__version__}\n", "0 False\n")


@pytest.mark.parametrize(
    ("args", "option", "corrected"),
    [
        (["list", "-s", "main"], "-s", "kura -s main list"),
        (["recall", "x", "--config", "k.toml"], "--config", "kura --config k.toml recall x"),
        (["list", "--store=main", "--json"], "--store", "kura --store=main list --json"),
        (["-c", "k.toml", "doctor", "-s", "my store"], "-s", "kura -c k.toml -s 'my store' doctor"),
    ],
)
def test_a_global_option_after_the_command_gets_a_hint(args: list[str], option: str, corrected: str) -> None:
    got = run_kura(*args)
    assert got.returncode == 1, got.stderr  # a usage mistake (2 would read as "nothing to do")
    hint = f"kura: {option} is a global option: it goes before the command: {corrected}\n"
    assert got.stderr.endswith(hint), got.stderr
    assert f"No such option: {option}" in got.stderr
    assert got.stdout == ""


def test_an_unknown_option_gets_no_global_hint() -> None:
    got = run_kura("list", "--bogus")
    assert got.returncode == 1 and "No such option: --bogus" in got.stderr
    assert "global option" not in got.stderr


def all_commands() -> list[list[str]]:
    from kura.cli.commands import app

    found: list[list[str]] = []

    def walk(command: Any, path: list[str]) -> None:
        if hasattr(command, "commands"):  # a group
            for name, sub in command.commands.items():
                walk(sub, [*path, name])
        else:
            found.append(path)

    walk(typer.main.get_command(app), [])
    return found


def test_help_shows_arguments_in_capitals(cli) -> None:  # type: ignore[no-untyped-def]
    commands = all_commands()
    assert ["show"] in commands and ["recall"] in commands and ["remember"] in commands
    for path in commands:
        shown = cli(*path, "--help")
        assert shown.code == 0, path
        usage, prefix = shown.out.split("\n", 1)[0], f"Usage: kura {' '.join(path)} "
        assert usage.startswith(prefix) and not re.search(r"[{}a-z]", usage[len(prefix) :]), usage
        listed = (
            shown.out.split("\nArguments:\n", 1)[1].split("\n\n", 1)[0] if "Arguments:" in shown.out else ""
        )
        names = re.findall(r"^  (\S+)", listed, flags=re.M)
        assert names == [name.upper() for name in names], (path, listed)
    show = cli("show", "--help").out
    assert show.startswith("Usage: kura show [OPTIONS] SLUG\n"), show
    assert "\n  SLUG " in show
    assert cli("recall", "--help").out.startswith("Usage: kura recall [OPTIONS] QUESTION\n")
    remember = cli("remember", "--help").out
    assert remember.startswith("Usage: kura remember [OPTIONS] SLUG DESCRIPTION [BODY]\n"), remember


# -- the README's Python snippet ----------------------------------------------------------------


def readme_block(after: str, lang: str) -> str:
    text = README.read_text(encoding="utf-8")
    rest = text[text.index(after) :]
    found = re.search(rf"^```{lang}\n(.*?)^```$", rest, flags=re.S | re.M)
    assert found is not None
    return found.group(1)


def test_the_readme_python_snippet_runs_after_the_quick_start(isolated: Path) -> None:
    work = isolated / "work"
    shutil.copytree(SAMPLE, work / "sample-store", ignore=shutil.ignore_patterns(".kura"))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    first_store = readme_block("<!-- ci:first-store -->", "sh")
    made = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", first_store],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    snippet = readme_block("## Python", "python")
    ran = subprocess.run(
        [sys.executable, "-c", snippet], cwd=work, env=env, capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip(), "the snippet prints what a model would be told"
    written = next((isolated / "home" / "kura").glob("*/x.md"))
    assert "description: a one-line trigger" in written.read_text()
