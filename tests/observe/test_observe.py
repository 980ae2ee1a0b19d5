"""The observation log: appends grouped by day, hand edits kept to the byte, consolidation
that never loses an unresolved 🔴 (mechanical or by a scribe that is not trusted), the CLI."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, ModelServer

from kura.config import ModelConfig, load_config
from kura.errors import NotFound, PolicyRefused, StoreError
from kura.observe import observations as ob
from kura.observe.consolidate import consolidate
from kura.store.store import Store

D1, D2, D3 = dt.date(2026, 11, 28), dt.date(2026, 11, 29), dt.date(2026, 11, 30)
CHARTER = "This store belongs to the ferrydesk team."


def log_of(store: Store) -> Path:
    return store.root / "_observations.md"


def numbered(store: Store) -> list[str]:
    return [e.render() for e in ob.read_log(store).entries]


# -- appending ------------------------------------------------------------------------------


def test_append_creates_the_file_and_groups_entries_by_day(store: Store) -> None:
    first = ob.observe(store, "the deploy needs the VPN up", "high", today=D1)
    ob.observe(store, "staging db moved to port 5433", today=D1)
    last = ob.observe(store, "the linter\nruns in CI\r\n  too", "low", today=D2)
    assert log_of(store).read_text() == (
        "# Observations\n\n"
        "## 2026-11-28\n- 🔴 the deploy needs the VPN up\n- 🟡 staging db moved to port 5433\n\n"
        "## 2026-11-29\n- 🟢 the linter runs in CI too\n"
    )
    assert first == ob.Entry(1, D1, "high", "the deploy needs the VPN up", False, 4)
    assert last == ob.Entry(3, D2, "low", "the linter runs in CI too", False, 8)
    assert store.slugs() == ()  # a `_` file is no memory: list, index and doctor leave it alone


def test_an_append_lands_after_the_days_last_entry_and_changes_no_other_byte(store: Store) -> None:
    hand = (
        "\ufeff# Observations\r\n"
        "Notes the team keeps; edit freely.\r\n"
        "\r\n"
        "## 2026-11-28\r\n"
        "- 🔴 the deploy needs the VPN up — ask Marta for access\r\n"
        "- staging db moved to port 5433\r\n"
        "  (it was 5432 until the migration)\r\n"
        "<!-- a comment someone left -->\r\n"
        "\r\n"
        "## Links\r\n"
        "- https://wiki.example/deploy"
    ).encode()
    log_of(store).write_bytes(hand)
    entry = ob.observe(store, "the runbook is in docs/ops", "low", today=D1)
    head, tail = hand.split(b"<!--")
    assert (
        log_of(store).read_bytes() == head + "- 🟢 the runbook is in docs/ops\r\n".encode() + b"<!--" + tail
    )
    assert entry.number == 3 and entry.line == 8
    ob.observe(store, "ferry timetable changes in March", today=D2)
    assert log_of(store).read_bytes() == (
        head
        + "- 🟢 the runbook is in docs/ops\r\n".encode()
        + b"<!--"
        + tail
        + "\r\n\r\n## 2026-11-29\r\n- 🟡 ferry timetable changes in March\r\n".encode()
    )
    assert numbered(store) == [
        "#1 2026-11-28 🔴 the deploy needs the VPN up — ask Marta for access",
        "#2 2026-11-28 🟡 staging db moved to port 5433",
        "#3 2026-11-28 🟢 the runbook is in docs/ops",
        "#4 2026-11-29 🟡 ferry timetable changes in March",
    ]


def test_the_log_is_read_tolerantly_and_what_it_passed_over_is_a_finding(store: Store) -> None:
    log_of(store).write_text(
        "# Observations\n- 🔴 outside any day\n\n## 2026-02-30\n- 🟡 under a date that is not one\n\n"
        "## 2026-11-28\n- plain item counts as medium\n* 🟢 done already ✅\n- 🔴 fixed (Resolved 2026-11-29)\n"
        "  - a nested line travels with its entry\n- 🟡\n### morning\n- 🟢 still the same day\n"
        "## Reading list\n- 🟡 not an observation either\n"
    )
    log = ob.read_log(store)
    assert [e.render() for e in log.entries] == [
        "#1 2026-11-28 🟡 plain item counts as medium",
        "#2 2026-11-28 🟢 done already (resolved)",
        "#3 2026-11-28 🔴 fixed (resolved)",
        "#4 2026-11-28 🟢 still the same day",
    ]
    outside = "an observation outside a ## YYYY-MM-DD section is not read; move it under a date heading"
    assert [str(f) for f in log.findings] == [
        f"_observations.md:2: {outside}",
        "_observations.md:4: 2026-02-30 is not a date; its entries are not read",
        f"_observations.md:5: {outside}",
        "_observations.md:12: a 🟡 with nothing after it is not read; write what you noticed after it, "
        "or delete the line",
        f"_observations.md:16: {outside}",
    ]


@pytest.mark.parametrize(
    ("text", "priority", "message"),
    [
        ("  \n\t ", "medium", "the observation is empty"),
        ("✅", "high", "the observation is empty"),
        ("x" * 501, "medium", "the observation is 501 characters, over 500"),
        ("the deploy needs the VPN", "urgent", "priority 'urgent' is not one of high, medium, low"),
    ],
)
def test_a_bad_observation_is_refused_and_nothing_is_written(
    store: Store, text: str, priority: str, message: str
) -> None:
    with pytest.raises(StoreError, match=message):
        ob.observe(store, text, priority, today=D1)
    assert not log_of(store).exists()


def test_secrets_and_frozen_stores_are_refused(store: Store, tmp_path: Path) -> None:
    with pytest.raises(PolicyRefused, match=r"looks like it holds a secret \(AWS access key\)"):
        ob.observe(store, "the CI key is AKIAABCDEFGHIJKLMNOP", today=D1)
    frozen = Store(store.root, name="test", write_policy="frozen")
    with pytest.raises(PolicyRefused, match="is frozen"):
        ob.observe(frozen, "anything", today=D1)
    assert not log_of(store).exists()
    with pytest.raises(StoreError, match="is not a directory"):
        ob.observe(Store(tmp_path / "nowhere", name="gone"), "anything", today=D1)


def test_over_the_size_the_log_hints_at_consolidation(store: Store) -> None:
    assert ob.read_log(store).hint is None
    log_of(store).write_text("# Observations\n\n## 2026-11-28\n" + "- 🟡 a note\n" * (ob.MAX_ENTRIES + 1))
    assert ob.read_log(store).hint == (
        f"the log has {ob.MAX_ENTRIES + 1} entries, over {ob.MAX_ENTRIES}; run kura observe --consolidate"
    )
    log_of(store).write_text("# Observations\n\n## 2026-11-28\n" + f"- 🟡 {'y' * 400}\n" * 50)
    assert ob.read_log(store).hint == "the log is 19 KB, over 16 KB; run kura observe --consolidate"


# -- resolving and reading back -------------------------------------------------------------


def test_resolve_marks_the_numbered_entry_and_only_once(store: Store) -> None:
    ob.observe(store, "the deploy needs the VPN up", "high", today=D1)
    ob.observe(store, "staging db moved to port 5433", today=D1)
    entry, changed = ob.resolve(store, 1, today=D2)
    assert changed and entry.resolved and entry.text == "the deploy needs the VPN up"
    assert (
        log_of(store).read_text().splitlines()[3] == "- 🔴 the deploy needs the VPN up (resolved 2026-11-29)"
    )
    before = log_of(store).read_bytes()
    assert ob.resolve(store, 1, today=D3) == (entry, False)
    assert log_of(store).read_bytes() == before
    with pytest.raises(NotFound, match=r"has no entry #3 \(2 entries\)"):
        ob.resolve(store, 3)


def test_latest_carries_every_open_red_and_the_last_entries(store: Store) -> None:
    log_of(store).write_text(
        "## 2026-11-01\n- 🔴 never deploy from a laptop\n- 🔴 old outage ✅\n- 🟡 one\n"
        "## 2026-11-28\n- 🟡 two\n- 🟢 three\n- 🟡 four (resolved)\n- 🟡 five\n"
    )
    assert [e.text for e in ob.latest(store, 2)] == ["never deploy from a laptop", "five", "three"]
    assert [e.text for e in ob.latest(store, 0)] == ["never deploy from a laptop"]


# -- consolidation ----------------------------------------------------------------------------

CLUTTERED = (
    "# Observations\n"
    "Kept by hand as well as by agents.\n"
    "\n"
    "## 2026-11-20\n"
    "- 🔴 the deploy needs the VPN up\n"
    "- 🟡 staging db runs on port 5432\n"
    "  (set in ops/db.toml)\n"
    "- 🔴 rotate the signing key ✅\n"
    "\n"
    "## 2026-11-21\n"
    "- 🟢 the coffee machine is broken (resolved)\n"
    "\n"
    "## 2026-11-25\n"
    "- 🟡 Marta reviews the release notes\n"
    "- marta reviews the  release notes.\n"
    "\n"
    "## 2026-11-28\n"
    "- 🟢 the deploy no longer needs the VPN\n"
    "- 🟡 staging db runs on port 5433\n"
)


def test_the_mechanical_pass_keeps_every_red_and_drops_what_is_superseded(store: Store) -> None:
    log_of(store).write_text(CLUTTERED)
    report = consolidate(store, today=D3)
    assert report.method == "mechanical" and report.refused == () and report.notes == ()
    assert [(d.entry.number, d.reason) for d in report.dropped] == [
        (2, 'revised by #8 "staging db runs on port 5433"'),
        (4, "resolved"),
        (5, "repeated by #6"),
    ]
    assert log_of(store).read_text() == (
        "# Observations\n"
        "Kept by hand as well as by agents.\n"
        "\n"
        "## 2026-11-20\n"
        "- 🔴 the deploy needs the VPN up\n"
        "- 🔴 rotate the signing key ✅\n"
        "\n"
        "## 2026-11-25\n"
        "- marta reviews the  release notes.\n"
        "\n"
        "## 2026-11-28\n"
        "- 🟢 the deploy no longer needs the VPN\n"
        "- 🟡 staging db runs on port 5433\n"
    )
    assert report.archive == store.state_dir / "observations" / "dropped-2026-11-30.md"
    assert report.archive.read_text() == (
        "# Observations dropped from _observations.md\n"
        "\n## 2026-11-30, mechanical pass: 3 dropped\n"
        "\n### 2026-11-20\n- 🟡 staging db runs on port 5432\n  (set in ops/db.toml)\n"
        '  - why dropped: revised by #8 "staging db runs on port 5433"\n'
        "\n### 2026-11-21\n- 🟢 the coffee machine is broken (resolved)\n  - why dropped: resolved\n"
        "\n### 2026-11-25\n- 🟡 Marta reviews the release notes\n  - why dropped: repeated by #6\n"
    )
    again = consolidate(store, today=D3)
    assert again.dropped == () and len(again.kept) == 5
    assert report.archive.read_text().count("## 2026-11-30, mechanical pass") == 1


def test_dropping_the_last_days_only_entries_removes_its_heading(store: Store) -> None:
    log_of(store).write_bytes(
        b"# Observations\r\n\r\n## 2026-11-20\r\n- a b c\r\n\r\n## 2026-11-21\r\n- done ok \xe2\x9c\x85"
    )
    assert [d.reason for d in consolidate(store, today=D3).dropped] == ["resolved"]
    assert log_of(store).read_bytes() == b"# Observations\r\n\r\n## 2026-11-20\r\n- a b c\r\n"


def config_for(store: Store, tmp_path: Path, url: str) -> ModelConfig:
    path = tmp_path / "kura.toml"
    path.write_text(
        f'[stores.test]\npath = "{store.root}"\ncharter = {json.dumps(CHARTER)}\n\n'
        f'[models.thinker]\nurl = "{url}"\nmodel = "scribe-m"\ntimeout = 5\n'
    )
    loaded = load_config(str(path))
    model = loaded.scribe_for(loaded.stores["test"])
    assert model is not None
    return model


def test_the_scribe_chooses_but_is_refused_an_open_red(
    store: Store, tmp_path: Path, model_server: ModelServer
) -> None:
    log_of(store).write_text(CLUTTERED)
    scribe = config_for(store, tmp_path, model_server.url)
    store.charter = CHARTER
    model_server.replies = [
        'Dropping what is stale.\n{"drop": [1, 3, 6, 42], "reasons": {"1": "the VPN is gone", "6": "repeat"}}'
    ]
    frozen = Store(store.root, name="test", write_policy="frozen")
    with pytest.raises(PolicyRefused, match="is frozen"):
        consolidate(frozen, scribe=scribe, today=D3)
    assert model_server.requests == [] and log_of(store).read_text() == CLUTTERED
    report = consolidate(store, scribe=scribe, today=D3)
    assert report.method == "scribe"
    assert [(d.entry.number, d.reason) for d in report.refused] == [(1, "the VPN is gone")]
    assert [(d.entry.number, d.reason) for d in report.dropped] == [(3, "the scribe's choice"), (6, "repeat")]
    assert report.notes == (
        f"the scribe (scribe-m at {model_server.url}) named entries there are not: #42; ignored",
        "refused to drop #1: an unresolved 🔴 is never dropped",
    )
    text = log_of(store).read_text()
    assert "- 🔴 the deploy needs the VPN up\n" in text
    assert "rotate the signing key" not in text and "marta reviews the  release" not in text
    sent: Any = model_server.requests[0]["messages"]
    assert sent[0]["content"].startswith(CHARTER + "\n\nYou consolidate the observation log")
    assert sent[1]["content"].splitlines()[:3] == [
        "<observations>",
        "#1 2026-11-20 🔴 the deploy needs the VPN up",
        "#2 2026-11-20 🟡 staging db runs on port 5432",
    ]
    assert "#4 2026-11-21 🟢 the coffee machine is broken (resolved)" in sent[1]["content"]


def test_an_edit_made_while_the_scribe_thinks_survives(
    store: Store, tmp_path: Path, model_server: ModelServer
) -> None:
    log_of(store).write_text(CLUTTERED)
    scribe = config_for(store, tmp_path, model_server.url)

    def respond(body: dict[str, Any]) -> str:  # a person edits #2 and an agent adds one meanwhile
        log_of(store).write_text(CLUTTERED.replace("port 5432", "port 5432 (still used by the CI)"))
        ob.observe(store, "the CI runner moved to rack 4", today=D3)
        return '{"drop": [2, 4]}'

    model_server.respond = respond
    report = consolidate(store, scribe=scribe, today=D3)
    assert [d.entry.text for d in report.dropped] == ["the coffee machine is broken"]
    text = log_of(store).read_text()
    assert "- 🟡 staging db runs on port 5432 (still used by the CI)\n  (set in ops/db.toml)\n" in text
    assert text.endswith("\n## 2026-11-30\n- 🟡 the CI runner moved to rack 4\n")


@pytest.mark.parametrize(
    ("status", "reply", "note"),
    [(500, "ok", "gave no answer"), (200, "drop the old ones", "answered nonsense")],
)
def test_a_scribe_that_is_down_or_talks_nonsense_leaves_it_to_the_mechanical_pass(
    store: Store, tmp_path: Path, model_server: ModelServer, status: int, reply: str, note: str
) -> None:
    log_of(store).write_text(CLUTTERED)
    scribe = config_for(store, tmp_path, model_server.url)
    model_server.status, model_server.replies = status, [reply]
    report = consolidate(store, scribe=scribe, today=D3)
    assert report.method == "mechanical"
    assert [d.entry.number for d in report.dropped] == [2, 4, 5]
    assert (
        len(report.notes) == 1 and note in report.notes[0] and "used the mechanical pass" in report.notes[0]
    )
    assert "- 🔴 the deploy needs the VPN up\n" in log_of(store).read_text()


# -- the command line -------------------------------------------------------------------------


def test_cli_round_trip(store: Store, cli: Cli) -> None:
    s = ("-s", str(store.root))
    assert cli(*s, "observe", "--list").code == 2
    added = cli(*s, "observe", "staging db runs on port 5432", "--at", "2026-11-28", "--json")
    assert added.code == 0, added
    assert json.loads(added.out) == {
        "store": "store",
        "path": str(log_of(store)),
        "entry": {"number": 1, "day": "2026-11-28", "priority": "medium", "marker": "🟡",
                  "text": "staging db runs on port 5432", "resolved": False, "line": 4},
        "hint": None,
    }  # fmt: skip
    high = cli(*s, "observe", "-p", "high", "the deploy needs the VPN up", "--at", "2026-11-29")
    assert high.out == f"observed #2 2026-11-29 🔴 the deploy needs the VPN up in {log_of(store)}\n"
    cli(*s, "observe", "staging db runs on port 5433", "--priority", "low", "--at", "2026-11-29")
    listed = cli(*s, "observe", "--list")
    assert listed.code == 0 and listed.out == (
        "#1 2026-11-28 🟡 staging db runs on port 5432\n"
        "#2 2026-11-29 🔴 the deploy needs the VPN up\n"
        "#3 2026-11-29 🟢 staging db runs on port 5433\n"
    )
    assert [e["number"] for e in json.loads(cli(*s, "observe", "--list", "--json").out)["entries"]] == [
        1,
        2,
        3,
    ]
    done = cli(*s, "observe", "--resolve", "2", "--at", "2026-11-30")
    assert (done.code, done.out) == (0, "resolved #2 2026-11-29 🔴 the deploy needs the VPN up (resolved)\n")
    assert cli(*s, "observe", "--resolve", "2").code == 2
    merged = cli(*s, "observe", "--consolidate", "--json", "--at", "2026-11-30")
    assert merged.code == 0, merged
    report = json.loads(merged.out)
    assert report["method"] == "mechanical" and [d["number"] for d in report["dropped"]] == [1]
    assert report["archive"] == str(store.state_dir / "observations" / "dropped-2026-11-30.md")
    assert [e["text"] for e in report["kept"]] == [
        "the deploy needs the VPN up",
        "staging db runs on port 5433",
    ]
    nothing = cli(*s, "observe", "--consolidate")
    assert (nothing.code, nothing.out) == (2, "consolidate (mechanical): nothing to drop; 2 entries kept\n")


def test_cli_says_where_dropped_entries_went_and_refuses_a_muddle(store: Store, cli: Cli) -> None:
    log_of(store).write_text(CLUTTERED)
    s = ("-s", str(store.root))
    done = cli(*s, "observe", "--consolidate", "--at", "2026-11-30")
    assert done.code == 0
    assert done.out.splitlines()[-1] == (
        "consolidated (mechanical): kept 5, dropped 3; the dropped entries are in "
        f"{store.state_dir / 'observations' / 'dropped-2026-11-30.md'}"
    )
    muddle = cli(*s, "observe", "a note", "--list")
    assert muddle.code == 1 and "give one of TEXT, --list, --resolve N or --consolidate" in muddle.err
    empty = cli(*s, "observe", "   ")
    assert empty.code == 1 and "the observation is empty; nothing was written" in empty.err
    assert cli(*s, "observe", "x", "--at", "yesterday").code == 1


def test_cli_no_model_never_asks_the_scribe(
    store: Store, tmp_path: Path, cli: Cli, model_server: ModelServer
) -> None:
    log_of(store).write_text(CLUTTERED)
    config_for(store, tmp_path, model_server.url)
    model_server.replies = ['{"drop": []}']
    args = ("--config", str(tmp_path / "kura.toml"), "-s", "test", "observe", "--consolidate", "--json")
    kept = cli(*args)
    assert kept.code == 2 and json.loads(kept.out)["method"] == "scribe" and len(model_server.requests) == 1
    dropped = cli(*args, "--no-model")
    assert dropped.code == 0 and json.loads(dropped.out)["method"] == "mechanical"
    assert len(model_server.requests) == 1


# -- the adversarial review: what a log may hold, and what it may be ---------------------------

NESTED = "## 2026-11-30\n- 🟡 migrate the staging db ✅\n  - 🔴 the prod db still needs the same migration\n"


def test_a_nested_red_is_an_entry_of_its_own_and_outlives_its_resolved_parent(store: Store) -> None:
    log_of(store).write_text(NESTED)
    assert numbered(store) == [
        "#1 2026-11-30 🟡 migrate the staging db (resolved)",
        "#2 2026-11-30 🔴 the prod db still needs the same migration",
    ]
    assert [e.line for e in ob.latest(store, 0)] == [3]
    report = consolidate(store, today=D3)
    assert [d.entry.number for d in report.dropped] == [1] and report.refused == ()
    assert log_of(store).read_text() == "## 2026-11-30\n  - 🔴 the prod db still needs the same migration\n"
    assert ob.resolve(store, 1, today=D3)[0].text == "the prod db still needs the same migration"
    assert (
        log_of(store)
        .read_text()
        .endswith("  - 🔴 the prod db still needs the same migration (resolved 2026-11-30)\n")
    )


def test_a_scribe_that_drops_all_is_refused_a_nested_red(
    store: Store, tmp_path: Path, model_server: ModelServer
) -> None:
    log_of(store).write_text(NESTED)
    model_server.replies = ['{"drop": [1, 2]}']
    report = consolidate(store, scribe=config_for(store, tmp_path, model_server.url), today=D3)
    assert [d.entry.number for d in report.refused] == [2] and [d.entry.number for d in report.dropped] == [1]
    assert "  - 🔴 the prod db still needs the same migration\n" in log_of(store).read_text()


def test_consolidation_never_drops_a_block_that_holds_an_unresolved_red_line(store: Store) -> None:
    hand = (
        "## 2026-11-30\n- 🟡 migrate the staging db ✅\n    🔴 prod still needs it, see ops/db.md\n"
        "- 🟢 old note ✅\n    🔴 paged about it ✅\n"
    )
    log_of(store).write_text(hand)
    report = consolidate(store, today=D3)
    assert [(d.entry.number, d.reason) for d in report.refused] == [(1, "resolved")]
    assert [d.entry.number for d in report.dropped] == [2]
    assert report.notes == (
        "refused to drop #1: its line 3 holds an unresolved 🔴, and that is never dropped — resolve it, "
        'or give it a line of its own ("- 🔴 …")',
    )
    assert log_of(store).read_text() == hand.split("- 🟢")[0]


def test_cli_names_what_it_refused_to_drop(store: Store, cli: Cli) -> None:
    log_of(store).write_text("## 2026-11-30\n- 🟡 migrate the staging db ✅\n    🔴 prod still needs it\n")
    done = cli("-s", str(store.root), "observe", "--consolidate", "--no-model", "--at", "2026-11-30")
    assert done.code == 2 and done.out.splitlines() == [
        "  refused  #1 2026-11-30 🟡 migrate the staging db (resolved) — it would go as: resolved",
        "consolidate (mechanical): nothing to drop; 1 entries kept",
    ]


def test_numbered_items_are_entries_and_a_marker_that_is_not_read_is_a_finding(store: Store) -> None:
    log_of(store).write_text(
        "# Observations\nLegend: 🔴 high, 🟡 medium\n\n## 2026-11-30\n1. 🔴 the prod db needs the migration\n"
        "2) 🟢 the runbook moved\n10. plain numbered item\n### 🔴 an urgent heading\n"
        "> 🔴 quoted, not listed\n- [ ] 🔴 a task box before the marker\n  - see the 🟡 above\n- 🟢\n"
        "## 🔴 Urgent\n- the prod db migration\n"
    )
    log = ob.read_log(store)
    assert [e.render() for e in log.entries] == [
        "#1 2026-11-30 🔴 the prod db needs the migration",
        "#2 2026-11-30 🟢 the runbook moved",
        "#3 2026-11-30 🟡 plain numbered item",
        "#4 2026-11-30 🟡 [ ] 🔴 a task box before the marker",
    ]
    stray = 'is not read as an observation (only a list item that starts with one is); write it as "- {} …"'
    assert [str(f) for f in log.findings] == [
        f"_observations.md:2: this line has a 🔴 but {stray.format('🔴')} to make it one",
        f"_observations.md:8: this line has a 🔴 but {stray.format('🔴')} to make it one",
        f"_observations.md:9: this line has a 🔴 but {stray.format('🔴')} to make it one",
        "_observations.md:10: read as 🟡: the 🔴 in it is not right after the list mark, so it sets no "
        "priority; move it there if it should",
        f"_observations.md:11: this line has a 🟡 but {stray.format('🟡')} to make it one",
        "_observations.md:12: a 🟢 with nothing after it is not read; write what you noticed after it, "
        "or delete the line",
        "_observations.md:13: the 🔴 in a heading marks no entry and sets no priority (and items under a "
        'heading that is not ## YYYY-MM-DD are not read); mark each entry instead: "- 🔴 …"',
    ]
    ob.resolve(store, 1, today=D3)
    assert "1. 🔴 the prod db needs the migration (resolved 2026-11-30)\n" in log_of(store).read_text()


@pytest.mark.parametrize("target", ["outside", "dev-zero"])
def test_a_log_that_is_a_link_is_never_read_or_written(store: Store, tmp_path: Path, target: str) -> None:
    outside = tmp_path / "notes.md"
    outside.write_text("## 2026-11-30\n- 🔴 private notes from outside the store\n")
    log_of(store).symlink_to(outside if target == "outside" else Path("/dev/zero"))
    log = ob.read_log(store)
    assert log.entries == () and ob.latest(store) == []
    assert [str(f) for f in log.findings] == [
        "_observations.md:1: the log is a symlink; it was not read — kura reads and writes only the "
        "plain file at the store root: replace the link with the file itself"
    ]
    for write in (
        lambda: ob.observe(store, "note", today=D3),
        lambda: ob.resolve(store, 1, today=D3),
        lambda: consolidate(store, today=D3),
    ):
        with pytest.raises(
            StoreError, match=r"_observations.md: the log is a symlink; nothing was written — "
        ):
            write()
    assert outside.read_text() == "## 2026-11-30\n- 🔴 private notes from outside the store\n"


def test_a_fifo_for_a_log_does_not_hang_a_reader(store: Store, cli: Cli) -> None:
    import os
    import threading

    os.mkfifo(log_of(store))
    got: list[ob.Log] = []
    reader = threading.Thread(target=lambda: got.append(ob.read_log(store)), daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "read_log blocked on a FIFO"
    assert [str(f) for f in got[0].findings] == [
        "_observations.md:1: the log is not a regular file (a FIFO); it was not read — replace it with a "
        "plain file"
    ]
    assert ob.latest(store) == []
    with pytest.raises(StoreError, match=r"not a regular file \(a FIFO\); nothing was written"):
        ob.observe(store, "note", today=D3)
    listed = cli("-s", str(store.root), "observe", "--list")
    assert listed.code == 2 and "the log is not a regular file (a FIFO)" in listed.err


def test_a_log_over_the_read_cap_is_not_read_but_can_be_consolidated(store: Store) -> None:
    body = "## 2026-11-28\n" + f"- 🟡 {'x' * 90} ✅\n" * ((1 << 20) // 100) + "- 🔴 keep me\n"
    log_of(store).write_text(body)
    size = len(body.encode())
    assert size > 1 << 20
    log = ob.read_log(store)
    assert log.entries == () and ob.latest(store) == [] and log.size == size
    assert [str(f) for f in log.findings] == [
        f"_observations.md:1: the log is {size / 2**20:.1f} MiB, over the 1 MiB kura reads; it was not "
        "read — run kura observe --consolidate, or trim it by hand"
    ]
    with pytest.raises(
        StoreError, match=r"over the 1 MiB kura reads; nothing was written — run kura observe"
    ):
        ob.observe(store, "note", today=D3)
    assert log_of(store).read_text() == body
    report = consolidate(store, today=D3)
    assert len(report.dropped) == (1 << 20) // 100
    assert log_of(store).read_text() == "## 2026-11-28\n- 🔴 keep me\n"
    assert [e.text for e in ob.latest(store)] == ["keep me"]


def test_kura_context_does_not_carry_a_linked_log_from_outside_the_store(
    store: Store, tmp_path: Path, cli: Cli
) -> None:
    outside = tmp_path / "notes.md"
    outside.write_text("## 2026-11-30\n- 🔴 private notes from outside the store\n")
    args = ("-s", str(store.root), "context", "what is private", "--no-model")
    log_of(store).write_bytes(outside.read_bytes())  # the same notes as the store's own file are told
    assert "- 2026-11-30 🔴 private notes from outside the store" in cli(*args).out
    log_of(store).unlink()
    log_of(store).symlink_to(outside)
    told = cli(*args)
    assert told.code == 2 and "private notes" not in told.out
    assert log_of(store).is_symlink() and outside.read_text().endswith("outside the store\n")
