"""Tidy: ragged index lines found mechanically, rewritten by a scripted scribe on a real
loopback socket — and every way a rewrite could do harm refused: an invented number or
name, a line a person edited meanwhile, a dead endpoint, a frozen store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SAMPLE, Cli, ModelServer, write_memory

from kura.config import ModelConfig, load_config
from kura.distill import tidy as td
from kura.files.memory_index import parse_index
from kura.store.store import Store, init_store

CHARTER = "You keep the memory of the ferry project."
LONG = (
    "Backups run nightly from the Hetzner VM to the Storage Box with restic; the retention keeps "
    "7 daily, 4 weekly and 12 monthly snapshots, and a restore drill is due every quarter"
)
PRINTER = "The Kyoto office printer needs driver 4.2 from the vendor site; the bundled one jams."
HEAD = "# Memory index\n\n"
MISC = "- [Odds and ends](misc.md) — misc notes and stuff\n"
GOOD = "- [Summer sailings](ferry-timetable.md) — Ferry timetable changes on 1 May; Lisbon adds a 07:10 sailing\n"
RAGGED = (
    HEAD
    + "- [Deploy notes](deploy-notes.md) — deploys go through Caddy on the Hetzner VM after 18:00\n"
    + f"- [Nightly restic backups](backups.md) — {LONG}\n"
    + MISC
    + "- [Staging DB host](staging-db.md) — the staging database lives on db-staging.internal port 5433\n"
    + "- [Staging DB again](staging-database.md) — the staging database lives on db-staging.internal port 5433 too\n"
    + GOOD
)
REWRITE = {
    "title": "Kyoto printer driver",
    "trigger": "the Kyoto office printer needs driver 4.2 from the vendor site",
}


def tidy_store(
    tmp_path: Path, index: str, *, policy: str = "direct-allowed", url: str = ""
) -> tuple[Store, Path]:
    """A store with a memory behind every line of ``index``, and a config naming it."""
    store, _ = init_store(tmp_path / "store", name="test")
    for slug in ("deploy-notes", "backups", "staging-db", "staging-database", "ferry-timetable"):
        write_memory(store.root, slug, "project", f"about {slug}")
    write_memory(store.root, "misc", "reference", "printer", body=PRINTER)
    store.index_path.write_text(index)
    config = tmp_path / "kura.toml"
    text = (
        f'[stores.test]\npath = "{store.root}"\ncharter = {json.dumps(CHARTER)}\nwrite_policy = "{policy}"\n'
    )
    if url:
        text += f'\n[models.thinker]\nurl = "{url}"\nmodel = "scribe-m"\ntimeout = 5\n'
    config.write_text(text)
    return load_config(str(config)).open("test"), config


def scribe(config: Path) -> ModelConfig:
    loaded = load_config(str(config))
    model = loaded.scribe_for(loaded.stores["test"])
    assert model is not None
    return model


def test_each_kind_of_ragged_line_is_found_with_its_line_and_reason() -> None:
    found = {f.line: f.reasons for f in td.find(parse_index(RAGGED))}
    assert found == {
        3: ("the title only restates the slug",),
        4: (f"the trigger is too long ({len(LONG)} > 160 chars)",),
        5: ("the trigger is vague (no name, number or identifier; 0 content words)",),
        6: ("interchangeable with line 7 (Jaccard 1.00)",),
        7: ("interchangeable with line 6 (Jaccard 1.00)",),
    }


def test_title_restating_the_trigger_and_a_bare_line_are_ragged() -> None:
    index = parse_index("- [Use uv](uv.md) — use uv\n- [Dev ports](ports.md)\n")
    assert [(f.line, f.kinds) for f in td.find(index)] == [(1, ("restated", "vague")), (2, ("vague",))]


def test_the_sample_stores_lines_are_mostly_well_formed() -> None:
    found = td.find(parse_index((SAMPLE / "MEMORY.md").read_text()))
    assert [(f.slug, f.kinds) for f in found] == [
        ("short-paragraphs-no-tables", ("restated",)),
        ("no-friday-afternoon-deploys", ("restated",)),
        ("local-dev-ports", ("restated",)),
        ("grafana-dashboards", ("restated",)),
    ]


def test_dry_run_reports_and_writes_nothing(tmp_path: Path, cli: Cli) -> None:
    store, config = tidy_store(tmp_path, RAGGED)
    result = cli("-c", str(config), "-s", "test", "distill", "tidy", "--dry-run", "--json")
    assert result.code == 0
    report = json.loads(result.out)
    assert [f["line"] for f in report["findings"]] == [3, 4, 5, 6, 7]
    assert report["rewritten"] == 0 and report["dry_run"] is True
    assert store.index_path.read_text() == RAGGED


def test_no_scribe_reports_and_exits_2(tmp_path: Path, cli: Cli) -> None:
    store, config = tidy_store(tmp_path, RAGGED)
    result = cli("-c", str(config), "-s", "test", "distill", "tidy")
    assert result.code == 2
    assert result.out.startswith("tidy: ragged lines 5 (1 restated, 1 too long, 1 vague, 2 interchangeable)")
    assert "tidy needs a model" in result.err
    assert store.index_path.read_text() == RAGGED


def test_nothing_ragged_exits_2(tmp_path: Path, cli: Cli, model_server: ModelServer) -> None:
    _, config = tidy_store(tmp_path, HEAD + GOOD, url=model_server.url)
    assert cli("-c", str(config), "-s", "test", "distill", "tidy").code == 2
    assert model_server.requests == []


def test_a_rewrite_changes_only_its_own_line(tmp_path: Path, cli: Cli, model_server: ModelServer) -> None:
    store, config = tidy_store(tmp_path, HEAD + MISC + GOOD, url=model_server.url)
    model_server.replies = ["Reading the body first.\n```json\n" + json.dumps(REWRITE) + "\n```"]
    result = cli("-c", str(config), "-s", "test", "distill", "tidy")
    assert result.code == 0, result
    assert store.index_path.read_text() == (
        HEAD
        + "- [Kyoto printer driver](misc.md) — the Kyoto office printer needs driver 4.2 from the vendor site\n"
        + GOOD
    )
    system, user = (m["content"] for m in model_server.requests[0]["messages"])  # type: ignore[index]
    assert system.startswith(CHARTER + "\n\n")
    assert PRINTER in user and MISC.strip() in user and "vague" in user


@pytest.mark.parametrize(
    ("trigger", "why"),
    [
        ("the Kyoto office printer needs driver 5.0", "adds the number 5.0"),
        ("the Osaka office printer needs a new driver", "adds the name 'Osaka'"),
        ("the Kyoto printer [[jams]] often", "contains '[['"),
        ("the Kyoto printer <<<map>>> driver", "contains '<<<'"),
        ("x" * 161, "the trigger must be 1–160 characters (got 161)"),
    ],
)
def test_a_rewrite_that_adds_anything_is_refused(
    tmp_path: Path, cli: Cli, model_server: ModelServer, trigger: str, why: str
) -> None:
    store, config = tidy_store(tmp_path, HEAD + MISC + GOOD, url=model_server.url)
    model_server.replies = [json.dumps({"title": "Kyoto printer", "trigger": trigger})]
    result = cli("-c", str(config), "-s", "test", "distill", "tidy", "--json")
    assert result.code == 1
    (outcome,) = json.loads(result.out)["outcomes"]
    assert outcome["result"] == "left" and why in outcome["reason"]
    assert store.index_path.read_text() == HEAD + MISC + GOOD


def test_a_line_edited_meanwhile_is_skipped(tmp_path: Path, model_server: ModelServer) -> None:
    store, _ = tidy_store(tmp_path, HEAD + MISC + GOOD, url=model_server.url)
    model_server.replies = [json.dumps(REWRITE)]
    findings = td.find(store.index())
    model = scribe(tmp_path / "kura.toml")
    proposals, left = td.propose(store, findings, model)
    assert left == [] and len(proposals) == 1
    edited = HEAD + "- [Misc](misc.md) — the office printer, by hand\n" + GOOD
    store.index_path.write_text(edited)
    (outcome,) = td.apply(store, proposals)
    assert outcome.result == "skipped"
    assert store.index_path.read_text() == edited


def test_a_line_moved_down_unchanged_is_still_rewritten(tmp_path: Path, model_server: ModelServer) -> None:
    store, config = tidy_store(tmp_path, HEAD + MISC + GOOD, url=model_server.url)
    model_server.replies = [json.dumps(REWRITE)]
    model = scribe(config)
    proposals, _ = td.propose(store, td.find(store.index()), model)
    store.index_path.write_text(HEAD + "A note a person added.\n\n" + MISC + GOOD)
    (outcome,) = td.apply(store, proposals)
    assert (outcome.result, outcome.line) == ("rewritten", 5)
    assert store.index_path.read_text().splitlines()[4].startswith("- [Kyoto printer driver](misc.md) — ")


def test_an_outage_leaves_everything_as_is(tmp_path: Path, cli: Cli, model_server: ModelServer) -> None:
    store, config = tidy_store(tmp_path, RAGGED, url=model_server.url)
    model_server.status = 500
    result = cli("-c", str(config), "-s", "test", "distill", "tidy", "--json")
    assert result.code == 1
    report = json.loads(result.out)
    assert report["left"] == 5 and report["rewritten"] == 0
    assert len(model_server.requests) == 2  # one call and its retry; the other lines are not asked
    assert store.index_path.read_text() == RAGGED


def test_an_unreadable_reply_leaves_the_line(tmp_path: Path, cli: Cli, model_server: ModelServer) -> None:
    store, config = tidy_store(tmp_path, HEAD + MISC + GOOD, url=model_server.url)
    model_server.replies = ["I would call it the printer memory."]
    assert cli("-c", str(config), "-s", "test", "distill", "tidy").code == 1
    assert store.index_path.read_text() == HEAD + MISC + GOOD


def test_a_frozen_store_is_refused_before_any_model_call(
    tmp_path: Path, cli: Cli, model_server: ModelServer
) -> None:
    store, config = tidy_store(tmp_path, RAGGED, policy="frozen", url=model_server.url)
    result = cli("-c", str(config), "-s", "test", "distill", "tidy")
    assert result.code == 1
    assert "is frozen" in result.err
    assert model_server.requests == []
    assert store.index_path.read_text() == RAGGED


def test_a_crlf_index_keeps_its_line_endings(tmp_path: Path, cli: Cli, model_server: ModelServer) -> None:
    crlf = (HEAD + MISC + GOOD).replace("\n", "\r\n")
    store, config = tidy_store(tmp_path, "", url=model_server.url)
    store.index_path.write_bytes(crlf.encode())
    model_server.replies = [json.dumps(REWRITE)]
    assert cli("-c", str(config), "-s", "test", "distill", "tidy").code == 0
    rewritten = (
        "- [Kyoto printer driver](misc.md) — the Kyoto office printer needs driver 4.2 from the vendor site"
    )
    assert store.index_path.read_bytes() == crlf.replace(MISC.rstrip("\n"), rewritten).encode()


def test_a_rewrite_that_changes_nothing_is_not_a_change(tmp_path: Path) -> None:
    store, _ = tidy_store(tmp_path, HEAD + MISC + GOOD)
    (finding,) = td.find(store.index())
    (outcome,) = td.apply(store, [td.Proposal(finding, "Odds and ends", "misc notes and stuff")])
    assert (outcome.result, outcome.reason) == ("left", "the scribe's rewrite is the line as it was")
    assert store.index_path.read_text() == HEAD + MISC + GOOD
