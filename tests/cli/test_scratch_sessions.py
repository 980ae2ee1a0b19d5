"""``kura scratch`` and ``kura sessions`` at the command line: what they list, their exit
codes (2 when nothing), their JSON and their help, after real distiller passes over real
transcripts on disk."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Cli
from test_ladder import AGAIN, FACT, cc, session, write

from kura.store.store import init_store


def configured(tmp_path: Path) -> tuple[Path, Path]:
    store, _ = init_store(tmp_path / "store", name="test")
    journals = tmp_path / "journals"
    journals.mkdir()
    config = tmp_path / "kura.toml"
    config.write_text(
        f'[prefill]\nwindow_tokens = 300\n\n[stores.test]\npath = "{store.root}"\n\n'
        f'[stores.test.distill.journals]\nclaude = ["{journals}"]\n'
    )
    return journals, config


def test_nothing_read_yet_is_exit_2_for_both(tmp_path: Path, cli: Cli) -> None:
    _, config = configured(tmp_path)
    for command in ("scratch", "sessions"):
        shown = cli("-c", str(config), "-s", "test", command)
        assert shown.code == 2, shown
        assert "nothing waits" in shown.out or "none read yet" in shown.out
        as_json = cli("-c", str(config), "-s", "test", command, "--json")
        assert (
            as_json.code == 2
            and json.loads(as_json.out)[{"scratch": "items", "sessions": "sessions"}[command]] == []
        )


def test_sessions_lists_every_session_read_and_what_it_witnessed(tmp_path: Path, cli: Cli) -> None:
    journals, config = configured(tmp_path)
    write(journals, "sess-one", session("sess-one", [FACT]))
    two_blocks = [{"type": "text", "text": "Listing it."}, {"type": "tool_use", "id": "t1", "name": "Bash",
                                                           "input": {"command": "ls"}}]  # fmt: skip
    quiet = [
        *session("sess-quiet", ["Hello there, nice weather."], tail=1),
        cc("assistant", two_blocks, "b", "sess-quiet"),
    ]
    write(journals, "sess-quiet", quiet)
    assert cli("-c", str(config), "distill", "run", "--store", "test", "--no-model").code == 0
    found = json.loads(cli("-c", str(config), "-s", "test", "sessions", "--json").out)["sessions"]
    rows = {row["id"]: row for row in found}
    assert sorted(rows) == ["sess-one", "sess-quiet"]
    assert rows["sess-one"]["segments"] == 13 and rows["sess-quiet"]["segments"] == 5
    assert rows["sess-one"]["first"] == "2026-11-30T08:14:03.112Z" and rows["sess-one"]["source"].endswith(
        "sess-one.jsonl"
    )
    [waiting] = json.loads(cli("-c", str(config), "-s", "test", "scratch", "--json").out)["items"]
    assert rows["sess-one"]["scratch"] == [waiting["id"]] and rows["sess-quiet"]["scratch"] == []
    assert rows["sess-one"]["memories"] == []

    write(journals, "sess-two", session("sess-two", [AGAIN], tail=0))
    assert cli("-c", str(config), "distill", "run", "--store", "test", "--no-model").code == 0
    rows = {
        r["id"]: r
        for r in json.loads(cli("-c", str(config), "-s", "test", "sessions", "--json").out)["sessions"]
    }
    assert (
        len(rows["sess-one"]["memories"]) == 1
        and rows["sess-one"]["memories"] == rows["sess-two"]["memories"]
    )
    assert rows["sess-one"]["scratch"] == []
    text = cli("-c", str(config), "-s", "test", "sessions")
    assert text.code == 0 and "sessions: 3 read" in text.out and "1 memories" in text.out


def test_a_second_pass_over_the_same_lines_counts_nothing_twice(tmp_path: Path, cli: Cli) -> None:
    journals, config = configured(tmp_path)
    write(journals, "sess-one", session("sess-one", [FACT]))
    assert cli("-c", str(config), "distill", "run", "--store", "test", "--no-model").code == 0
    (tmp_path / "store" / ".kura" / "journals.json").unlink()  # read it all again
    assert cli("-c", str(config), "distill", "run", "--store", "test", "--no-model").code == 0
    [row] = json.loads(cli("-c", str(config), "-s", "test", "sessions", "--json").out)["sessions"]
    assert row["segments"] == 13
    [item] = json.loads(cli("-c", str(config), "-s", "test", "scratch", "--json").out)["items"]
    assert item["confidence"] == 0.3 and len(item["witnesses"]) == 1


def test_the_help_teaches_the_ladder(cli: Cli) -> None:
    shown = cli("scratch", "--help")
    assert shown.code == 0
    for words in ("TIDE", "CALLUS", "0.50", "window_tokens", "kura why", "--purge", "Examples"):
        assert words in shown.out, words
    sessions = cli("sessions", "--help")
    assert sessions.code == 0 and "segments read" in sessions.out and "kura distill run" in sessions.out


def test_a_planted_escape_sequence_never_reaches_the_terminal(tmp_path: Path, cli: Cli) -> None:
    _, config = configured(tmp_path)
    state = tmp_path / "store" / ".kura"
    state.mkdir(exist_ok=True)
    said = {"session": "s1\x1b[2J", "source": "x.jsonl", "quote": "port 5433 \x1b]0;owned\x07 on db-1", "cls": "USER",
            "out": True}  # fmt: skip
    item = {"id": "a" * 12, "claim": "The db-1 host \x1b[31mlistens\x1b[0m on port 5433.", "kind": "project",
            "mentions": [said]}  # fmt: skip
    sessions = {"s1\x1b[2J": {"source": "x\x1b[1m.jsonl", "first": "2026", "segments": 3}}
    (state / "scratch.json").write_text(json.dumps({"version": 1, "items": [item], "sessions": sessions}))
    for command in ("scratch", "sessions"):
        shown = cli("-c", str(config), "-s", "test", command)
        assert shown.code == 0, shown
        assert "\x1b" not in shown.out and "\x07" not in shown.out


def test_the_json_of_a_planted_file_carries_no_raw_control_or_bidi_character(
    tmp_path: Path, cli: Cli
) -> None:
    """Found in review: the text output was cleaned, but --json printed C1 controls (8-bit
    CSI), DEL and bidi overrides from a planted scratch file raw; JSON escapes them now."""
    _, config = configured(tmp_path)
    state = tmp_path / "store" / ".kura"
    state.mkdir(exist_ok=True)
    odd = "\x9b2J\x7f\u202e"
    said = {
        "session": "s1" + odd,
        "source": "x.jsonl",
        "quote": "port 5433 on db-1" + odd,
        "cls": "USER",
        "out": True,
    }
    item = {
        "id": "a" * 12,
        "claim": "The db-1 host listens on port 5433." + odd,
        "kind": "project",
        "mentions": [said],
    }
    sessions = {"s1" + odd: {"source": "x.jsonl" + odd, "first": "2026", "segments": 3}}
    (state / "scratch.json").write_text(json.dumps({"version": 1, "items": [item], "sessions": sessions}))
    for command in ("scratch", "sessions"):
        shown = cli("-c", str(config), "-s", "test", command, "--json")
        assert shown.code == 0, shown
        assert not any(c in shown.out for c in "\x9b\x7f\u202e"), command
        assert "\\u202e" in shown.out and json.loads(shown.out)
