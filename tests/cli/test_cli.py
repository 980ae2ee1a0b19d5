"""The kura command: thin, with exit codes a scheduler can trust (0 did, 2 nothing, 1 failed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import SAMPLE, Cli

from kura.config import load_config, user_config_path


def test_init_creates_and_registers(cli: Cli, tmp_path: Path) -> None:
    result = cli("init", "main", "--path", str(tmp_path / "kura-main"), "--label", "main memory")
    assert result.code == 0, result
    assert result.out == f"store 'main' ready at {tmp_path / 'kura-main'} (added to {user_config_path()})\n"
    assert load_config().stores["main"].label == "main memory"
    again = cli("init", "main", "--path", str(tmp_path / "kura-main"))
    assert again.code == 2 and "already set up" in again.out


def test_init_refuses_bad_names_and_policies(cli: Cli, tmp_path: Path) -> None:
    assert cli("init", "Bad Name", "--path", str(tmp_path / "x")).code == 1
    bad = cli("init", "ok", "--path", str(tmp_path / "x"), "--write-policy", "open")
    assert bad.code == 1 and "--write-policy must be one of" in bad.err
    assert not (tmp_path / "x").exists()


def test_remember_show_list_roundtrip(cli: Cli, tmp_path: Path) -> None:
    cli("init", "main", "--path", str(tmp_path / "m"))
    made = cli(
        "remember", "deploy-day", "deploys go out Tuesday 10:00 CET", "Never Friday.", "--type", "project"
    )
    assert made.code == 0 and made.out.startswith("created deploy-day (")
    same = cli("remember", "deploy-day", "deploys go out Tuesday 10:00 CET", "Never Friday.")
    assert same.code == 2 and same.out.startswith("unchanged deploy-day")
    shown = cli("show", "deploy-day")
    assert shown.code == 0 and "description: deploys go out Tuesday 10:00 CET\n" in shown.out
    assert shown.out.endswith("---\nNever Friday.\n")
    listed = cli("list")
    assert listed.out == "deploy-day  project    deploys go out Tuesday 10:00 CET\n"
    assert cli("list", "--type", "user").code == 2
    as_json = json.loads(cli("show", "deploy-day", "--json").out)
    assert (as_json["slug"], as_json["type"], as_json["body"]) == ("deploy-day", "project", "Never Friday.\n")


def test_body_from_stdin(cli: Cli, tmp_path: Path) -> None:
    cli("init", "main", "--path", str(tmp_path / "m"))
    result = cli("remember", "notes", "from a pipe", "-", "--type", "reference", input="line one\nline two\n")
    assert result.code == 0
    assert json.loads(cli("show", "notes", "--json").out)["body"] == "line one\nline two\n"


def test_global_options_before_the_command(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "k.toml"
    config.write_text(
        f'[stores.eq]\npath = "{tmp_path / "eq"}"\n[stores.maker]\npath = "{tmp_path / "mk"}"\n'
    )
    for folder in ("eq", "mk"):
        cli("init", folder, "--path", str(tmp_path / folder))
    assert cli("--config", str(config), "-s", "eq", "remember", "a", "only in eq").code == 0
    assert cli("--config", str(config), "-s", "maker", "list").code == 2
    assert cli("--config", str(config), "--store", "eq", "list").out.startswith("a  project")


def test_errors_are_one_line_with_the_right_code(cli: Cli, tmp_path: Path) -> None:
    missing = cli("-s", str(SAMPLE), "show", "no-such-memory")
    assert missing.code == 2
    assert missing.err.startswith("kura: error: no memory 'no-such-memory' in store 'sample-store'")
    unknown = cli("-s", "nowhere", "list")
    assert unknown.code == 1 and "no store or mode named 'nowhere'" in unknown.err
    (tmp_path / "bad.toml").write_text("[stores.a]\npath = 1\n")
    bad = cli("--config", str(tmp_path / "bad.toml"), "list")
    assert bad.code == 1 and "[stores.a] path must be str, got int" in bad.err
    assert cli("list", "--type", "fact").code == 1


def test_policy_refusal_exits_1(cli: Cli, tmp_path: Path) -> None:
    cli("init", "archive", "--path", str(tmp_path / "a"), "--write-policy", "frozen")
    refused = cli("-s", "archive", "remember", "x", "y")
    assert refused.code == 1 and "is frozen" in refused.err
    assert cli("-s", "archive", "list").code == 2


def test_stores_lists_modes_and_default(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "k.toml"
    config.write_text(
        f'[stores.eq]\npath = "{tmp_path / "eq"}"\nlabel = "EQ"\n'
        f'[stores.maker]\npath = "{tmp_path / "mk"}"\n[modes]\ntalk = "eq"\ndefault = "maker"\n'
    )
    data = json.loads(cli("--config", str(config), "stores", "--json").out)
    rows = {row["name"]: row for row in data["stores"]}
    assert rows["eq"]["modes"] == ["talk"] and rows["maker"]["default"] is True
    assert rows["eq"]["exists"] is False
    text = cli("--config", str(config), "stores").out
    assert f"* maker  {tmp_path / 'mk'}  [direct-allowed]  modes: default  (folder missing)" in text


def test_sample_store_quick_start_command(cli: Cli) -> None:
    result = cli("-s", str(SAMPLE), "list", "--type", "feedback")
    assert result.code == 0 and len(result.out.splitlines()) == 10


def test_help_teaches(cli: Cli) -> None:
    top = cli("--help").out
    for command in ("init", "remember", "show", "list", "stores", "import"):
        assert command in top
    assert "--store" in top and "--config" in top
    assert "recognition trigger" in cli("remember", "--help").out


def test_console_script_and_module_entry_point(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(SAMPLE), "show", "test-command", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["type"] == "reference"


def run_kura(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "kura", *args], input=stdin, capture_output=True, check=False
    )


def test_global_options_show_what_they_take_not_a_python_type() -> None:
    """``kura --help`` is a newcomer's first page: ``-s`` takes one store, not a ``list[str]``."""
    top = run_kura("--help")
    assert top.returncode == 0
    said = top.stdout.decode()
    assert "-s, --store STORE" in said and "-c, --config FILE" in said, said
    assert "list[str]" not in said


def test_an_empty_listing_says_so_on_stderr_and_prints_nothing(tmp_path: Path) -> None:
    """``kura list`` on a new store: nothing on stdout (a script reads no rows), exit 2, and a
    line on stderr so a person does not stare at a blank screen."""
    store = tmp_path / "s"
    assert run_kura("init", "s", "--path", str(store)).returncode == 0
    empty = run_kura("-s", str(store), "list")
    assert (empty.returncode, empty.stdout) == (2, b""), empty
    said = empty.stderr.decode()
    assert said == "kura: store 's' has no current memories; `kura remember SLUG DESCRIPTION` writes one\n"
    typed = run_kura("-s", str(store), "list", "--type", "user")
    assert (typed.returncode, typed.stdout) == (2, b"")
    assert (
        typed.stderr.decode() == "kura: store 's' has no current user memories (kura list shows every type)\n"
    )
    as_json = run_kura("-s", str(store), "list", "--json")
    assert (as_json.returncode, as_json.stdout, as_json.stderr) == (2, b"[]\n", b"")


def test_usage_mistakes_exit_1_not_2() -> None:
    wrong = run_kura("list", "--bogus")
    assert wrong.returncode == 1 and b"No such option: --bogus" in wrong.stderr
    assert run_kura().returncode == 2  # no command: help, nothing done


def test_stdin_that_is_not_utf8_is_refused_cleanly(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    result = run_kura("-s", str(tmp_path / "s"), "remember", "x", "y", "-", stdin=b"\xff\xfe")
    assert result.returncode == 1
    assert result.stderr.decode().startswith("kura: error: standard input is not UTF-8")
    assert not (tmp_path / "s" / "x.md").exists()


def test_show_prints_the_bytes_on_disk(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "raw.md").write_bytes(b"no frontmatter \xe9 here\r\n")
    result = run_kura("-s", str(tmp_path / "s"), "show", "raw")
    assert result.returncode == 0 and result.stdout == b"no frontmatter \xe9 here\r\n"


def test_a_refused_init_leaves_no_folder(cli: Cli, tmp_path: Path) -> None:
    assert cli("init", "outer", "--path", str(tmp_path / "outer")).code == 0
    refused = cli("init", "inner", "--path", str(tmp_path / "outer" / "inner"))
    assert refused.code == 1 and "nested" in refused.err
    assert not (tmp_path / "outer" / "inner").exists()


def test_a_path_selector_cannot_dodge_the_write_policy(cli: Cli, tmp_path: Path) -> None:
    cli("init", "arch", "--path", str(tmp_path / "arch"), "--write-policy", "frozen")
    refused = cli("-s", str(tmp_path / "arch"), "remember", "x", "t")
    assert refused.code == 1 and "is frozen" in refused.err


def test_short_options_with_equals_mean_the_same_on_both_paths(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "MEMORY.md").write_text("# I\n")
    fast = run_kura(f"-s={tmp_path / 's'}", "prefill")
    slow = run_kura(f"-s={tmp_path / 's'}", "list")
    assert fast.returncode == slow.returncode == 1
    assert b"no store or mode named '=" in fast.stderr or b"MISSING" in fast.stdout
    assert run_kura(f"--store={tmp_path / 's'}", "prefill").returncode == 0
