"""Evidence and lifecycle: confidence from witnesses, the two floors, supersession,
correction by contradiction, decay that previews, and the one real deletion."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Cli, write_memory
from test_distill_run import SID, cc, jsonl

from kura.distill import drafts as dr
from kura.files import memory_file as nt
from kura.files import witness as wt
from kura.life import lifecycle
from kura.store.store import Store, init_store
from kura.text.claim_match import relation

TODAY = dt.date(2026, 11, 30)
W = wt.Witness


def c(*witnesses: wt.Witness, **kw: bool) -> float:
    return round(wt.confidence(witnesses, TODAY, **kw).value, 2)


# -- the formula --------------------------------------------------------------------------


def test_reference_values() -> None:
    assert c(W("SAID", TODAY, "a")) == 0.50
    assert c(W("FIX", TODAY, "a")) == 0.46
    assert c(W("TIDE", TODAY, "a"), W("CALLUS", TODAY, "b")) == 0.48
    assert c(*[W("CALLUS", TODAY, "a")] * 3) == 0.28


def test_diversity_beats_volume_and_ten_copies_of_one_page_stay_below_the_floor() -> None:
    one_session = [W("TIDE", TODAY, "s1")] * 3
    three_sessions = [W("TIDE", TODAY, f"s{i}") for i in range(3)]
    assert c(*three_sessions) > c(*one_session)
    for kind in ("INFERRED", "TIDE"):
        page = [W(kind, TODAY, f"s{i}", domain="pastebin.example") for i in range(10)]
        found = wt.confidence(page, TODAY)
        assert found.value < wt.ASSERTED and not found.asserted and found.findable
        assert found.sessions == 10 and found.groups == 1
    # it saturates: a hundred sessions never reach 1
    assert c(*[W("FIX", TODAY, f"s{i}") for i in range(100)]) < 1.0


def test_recency_ages_evidence_but_never_below_a_quarter() -> None:
    fresh, old = W("FIX", TODAY, "a"), W("FIX", TODAY - dt.timedelta(days=400), "a")
    assert c(old) < c(fresh)
    ancient = W("FIX", TODAY - dt.timedelta(days=365 * 30), "a")
    assert ancient.value(TODAY) == pytest.approx(0.80 * 0.25, abs=1e-6)


def test_said_pins_supersession_and_contradiction_damp() -> None:
    old_said = W("SAID", TODAY - dt.timedelta(days=3000), "a")
    assert wt.confidence([old_said], TODAY).value < wt.ASSERTED
    assert wt.confidence([old_said], TODAY).asserted  # the person said to remember it
    superseded = wt.confidence([W("FIX", TODAY, "a")], TODAY, superseded=True)
    assert superseded.value < wt.ASSERTED / 2 and not superseded.asserted and superseded.findable
    assert c(W("FIX", TODAY, "a"), contradicted=True) < c(W("FIX", TODAY, "a"))


def test_claims_tell_a_rewording_from_a_replacement() -> None:
    assert relation("we run the tests with make test", "We run the tests with cargo test.") == "revision"
    assert relation("run the tests with cargo test", "We run the tests with cargo test.") == "same"
    assert relation("never deploy on Fridays", "always deploy on Fridays") == "revision"
    assert relation("Marta reviews the release notes", "Release notes go in docs/CHANGES.md") == "different"


# -- a store with evidence ------------------------------------------------------------------


def witnessed(root: Path, slug: str, description: str, witnesses: list[dict[str, str]], **extra: str) -> None:
    meta = {"name": slug.replace("-", " "), "description": description, "type": "project",
            "created": "2026-01-05", "witnesses": witnesses, **extra}  # fmt: skip
    (root / f"{slug}.md").write_text(nt.render(nt.new_note(meta, description + ".\n")))


@pytest.fixture
def ferry(tmp_path: Path) -> tuple[Store, Path]:
    store, _ = init_store(tmp_path / "store", name="test")
    write_memory(store.root, "deploy-window", "feedback", "Deploys go out before 14:00 on weekdays")
    witnessed(store.root, "cache-host", "The build cache lives on cache-01.internal",
              [{"kind": "TIDE", "when": "2026-11-20", "session": "s1"}])  # fmt: skip
    witnessed(store.root, "test-runner", "We run the tests with cargo test",
              [{"kind": "FIX", "when": "2026-11-01", "session": "s0", "quote": "use cargo test"}])  # fmt: skip
    lines = [
        "- [Deploy window](deploy-window.md) — Deploys go out before 14:00 on weekdays",
        "- [Build cache](cache-host.md) — The build cache lives on cache-01.internal",
        "- [Test runner](test-runner.md) — We run the tests with cargo test",
    ]
    store.index_path.write_text("# Memory index\n\n" + "\n".join(lines) + "\n")
    config = tmp_path / "kura.toml"
    config.write_text(
        f'[stores.test]\npath = "{store.root}"\n\n[stores.test.distill.journals]\nclaude = ["{tmp_path / "j"}"]\n'
    )
    return store, config


def test_the_floors_show_in_prefill_and_recall(ferry: tuple[Store, Path]) -> None:
    _, config = ferry
    cli = Cli()
    block = cli("-c", str(config), "-s", "test", "prefill")
    assert block.code == 0, block
    lines = {ln.split("](")[1].split(".md")[0]: ln for ln in block.out.splitlines() if "](" in ln}
    assert lines["cache-host"].endswith("(on record, may be stale)")  # one TIDE: 0.28
    assert "on record" not in lines["deploy-window"] and "on record" not in lines["test-runner"]
    found = cli(
        "-c", str(config), "-s", "test", "recall", "where is the build cache host", "--json", "--no-model"
    )
    report = json.loads(found.out)
    picked = {p["slug"]: p for p in report["picked"]}
    assert picked["cache-host"]["asserted"] is False and picked["cache-host"]["status"] == "on record"
    assert "=== cache-host (on record, may be stale" in report["context"]
    plain = cli("-c", str(config), "-s", "test", "recall", "where is the build cache host", "--no-model")
    assert "cache-host" in plain.out and "(on record, may be stale)" in plain.out.splitlines()[0]


def test_a_contradiction_is_read_as_a_correction_and_supersedes(
    ferry: tuple[Store, Path], tmp_path: Path
) -> None:
    store, config = ferry
    turn = "We run the tests with make test now."
    jsonl(tmp_path / "j" / "p" / f"{SID}.jsonl", [cc("user", turn, "u1")])
    cli = Cli()
    ran = cli("-c", str(config), "-s", "test", "distill", "run", "--json")
    assert ran.code == 0, ran
    [info] = dr.drafts(store)
    draft = dr.load(store, info.id)
    assert "witness:FIX" in draft.flags and "replaces:test-runner" in draft.flags
    assert cli("-c", str(config), "-s", "test", "distill", "pour", info.id).code == 0
    old, new = store.show("test-runner").note.meta, store.show(draft.slug).note.meta
    assert old["superseded_by"] == draft.slug and old["valid_until"] == dt.date.today().isoformat()
    assert new["supersedes"] == ["test-runner"] and new["witnesses"][0]["kind"] == "FIX"
    assert "test-runner" not in store.index().named() and draft.slug in store.index().named()
    assert store.root.joinpath("test-runner.md").is_file()  # both stay
    why_old = cli("-c", str(config), "-s", "test", "why", "test-runner").out
    assert f"withheld — superseded by {draft.slug}" in why_old and f"replaced by {draft.slug}" in why_old
    assert "replaced   test-runner" in cli("-c", str(config), "-s", "test", "why", draft.slug).out
    assert cli("-c", str(config), "-s", "test", "doctor").out.count("no line in the index") == 0


def test_supersede_and_archive_keep_other_bytes(ferry: tuple[Store, Path]) -> None:
    store, _ = ferry
    before = store.root.joinpath("deploy-window.md").read_bytes()
    lifecycle.supersede(store, "cache-host", "test-runner", today=TODAY)
    with pytest.raises(Exception, match="already superseded"):
        lifecycle.supersede(store, "cache-host", "deploy-window", today=TODAY)
    assert lifecycle.archive(store, "test-runner", "moved to another repo", today=TODAY)
    assert not lifecycle.archive(store, "test-runner", "again", today=TODAY)
    assert store.root.joinpath("deploy-window.md").read_bytes() == before
    assert store.index().named() == ("deploy-window",)


# -- why ------------------------------------------------------------------------------------

SAMPLE = Path(__file__).resolve().parents[2] / "sample-store"


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    import shutil

    target = tmp_path / "sample"
    shutil.copytree(SAMPLE, target, ignore=shutil.ignore_patterns(".kura"))
    return target


def test_why_on_a_hand_written_sample_memory(sample: Path) -> None:
    out = Cli()("-s", str(sample), "why", "test-command", "--at", "2026-11-30").out
    assert out == (
        "How to run the tests  (test-command · reference)\n"
        "claim      `make test` = uv run pytest -n auto with coverage (~3 min); `make test-fast` skips slow "
        "tests; both need `docker compose up -d db redis`\n"
        "\n"
        "asserted — stated as current truth (confidence ≥ 0.35)\n"
        "\n"
        "confidence 0.41  ████······\n"
        "strength   1.00  ██████████  high\n"
        "\n"
        "because its author wrote it by hand: no witnesses are recorded, so it counts as\n"
        "  stated by its author (SAID, which pins it)\n"
        "\n"
        "since      2026-03-06\n"
        "until      still current\n"
        "replaced   nothing\n"
        "replaced by nothing\n"
        "git        no git history (not a git repository)\n"
    )


def test_why_on_a_witnessed_sample_memory(sample: Path) -> None:
    out = Cli()("-s", str(sample), "why", "use-uv-not-pip", "--at", "2026-11-30").out
    assert out == EXPECTED_UV


EXPECTED_UV = (
    "Use uv, never pip  (use-uv-not-pip · feedback)\n"
    "claim      manage dependencies only with uv (`uv add`, `uv sync`, `uv run`); never `pip install` into .venv, it desyncs uv.lock\n"
    "\n"
    "asserted — stated as current truth (confidence ≥ 0.35)\n"
    "\n"
    "confidence 0.58  ██████····\n"
    "strength   0.90  █████████·  high\n"
    "\n"
    "because 3 witnesses across 2 sessions\n"
    '  SCAR     0.50 → 0.38  138 days ago  session 3f9a0c2e  "error: The lockfile at `uv.lock` needs to be updated, but `--frozen` wa…"\n'
    '  FIX      0.80 → 0.61  138 days ago  session 3f9a0c2e  "No, don\'t pip install into .venv. Use uv add, pip desyncs uv.lock."\n'
    "  CALLUS   0.25 → 0.22  69 days ago   session 8c41d7b0\n"
    "\n"
    "since      2026-07-15\n"
    "until      still current\n"
    "replaced   nothing\n"
    "replaced by nothing\n"
    "git        no git history (not a git repository)\n"
)  # by hand: FIX 0.80×(0.25+0.75·e^(−138/365)) = 0.61, ×1.125 for the SCAR in its session, + CALLUS 0.22 = 0.91; 0.91/1.41 × 0.91 = 0.58


def _kura(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kura", *args], capture_output=True, text=True, timeout=120)


def test_why_at_a_day_judges_the_memory_as_it_stood_that_day(tmp_path: Path) -> None:
    """``kura why SLUG --at DATE`` as ``recall --at`` reads the store: a memory not yet
    written that day is not "asserted"; one replaced or forgotten later was current then."""
    root = tmp_path / "st"
    init_store(root, name="st")
    (root / "old.md").write_text(
        "---\nname: old\ndescription: deploys go out on Tuesday\ntype: project\ncreated: 2025-01-10\n"
        "superseded_by: new\nvalid_until: 2025-06-01\n---\ndeploys go out on Tuesday\n"
    )
    (root / "new.md").write_text(
        "---\nname: new\ndescription: deploys go out on Wednesday\ntype: project\ncreated: 2025-06-01\n"
        "supersedes: [old]\n---\ndeploys go out on Wednesday\n"
    )
    before = _kura("-s", str(root), "why", "new", "--at", "2025-03-01")
    assert before.returncode == 2, before
    assert before.stdout == "" and "asserted" not in before.stderr
    assert "st/new: not yet written on 2025-03-01 (created 2025-06-01)" in before.stderr, before.stderr
    then = _kura("-s", str(root), "why", "old", "--at", "2025-03-01")
    assert then.returncode == 0, then
    assert "\nasserted — stated as current truth" in then.stdout, then.stdout
    assert "replaced by nothing" in then.stdout and "until      still current" in then.stdout
    now = _kura("-s", str(root), "why", "old")
    assert "withheld — superseded by new" in now.stdout, now.stdout


# -- decay ----------------------------------------------------------------------------------


def tree_bytes(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".kura" not in p.parts}  # fmt: skip


def test_decay_previews_without_a_byte_changed_then_archives(ferry: tuple[Store, Path]) -> None:
    store, config = ferry
    witnessed(store.root, "old-port", "The dev server listens on port 8081",
              [{"kind": "TIDE", "when": "2025-01-02", "session": "s9"}])  # fmt: skip
    cli = Cli()
    before = tree_bytes(store.root)
    preview = cli("-c", str(config), "-s", "test", "decay", "--at", "2026-11-30", "--json")
    assert preview.code == 0, preview
    fates = {f["slug"]: f["outcome"] for f in json.loads(preview.out)["fates"]}
    assert fates == {"old-port": "archive", "cache-host": "unasserted"}
    assert tree_bytes(store.root) == before
    applied = cli("-c", str(config), "-s", "test", "decay", "--at", "2026-11-30", "--apply")
    assert applied.code == 0 and "archived: 1" in applied.out
    meta = store.show("old-port").note.meta
    assert meta["archived"] == "2026-11-30" and meta["archived_reason"].startswith("decay: strength")
    hidden = cli("-c", str(config), "-s", "test", "recall", "which port does the dev server listen on",
                 "--json", "--no-model")  # fmt: skip
    assert "old-port" not in {p["slug"] for p in json.loads(hidden.out)["picked"]}
    shown = cli("-c", str(config), "-s", "test", "recall", "which port does the dev server listen on",
                "--json", "--no-model", "--all")  # fmt: skip
    assert "old-port" in {p["slug"] for p in json.loads(shown.out)["picked"]}


# -- forget and purge -------------------------------------------------------------------------

SECRET = "the vault token rotates every Monday at dawn"


def test_purge_leaves_nothing_derived_and_the_tombstone_stops_a_re_distil(
    ferry: tuple[Store, Path], tmp_path: Path
) -> None:
    store, config = ferry
    cli = Cli()
    jsonl(tmp_path / "j" / "p" / f"{SID}.jsonl", [cc("user", f"Remember that {SECRET}.", "u1")])
    ran = cli("-c", str(config), "-s", "test", "distill", "run", "--json")
    assert json.loads(ran.out)["poured"] == 1  # asked, in a direct-allowed store: a memory at once
    slug = next(
        p.stem
        for p in store.root.glob("*.md")
        if p.name != "MEMORY.md" and b"vault token" in p.read_bytes().lower()
    )
    assert cli("-c", str(config), "-s", "test", "index").code == 0
    assert cli("-c", str(config), "-s", "test", "prefill").code == 0
    assert (
        cli("-c", str(config), "-s", "test", "recall", "when does the vault token rotate", "--no-model").code
        == 0
    )
    assert cli("-c", str(config), "-s", "test", "weave").code in (0, 2)
    asked = cli("-c", str(config), "-s", "test", "forget", slug, "--purge", input="n\n")
    assert asked.code == 1 and store.root.joinpath(f"{slug}.md").is_file()
    assert "index line" in asked.out and "draft" in asked.out
    done = cli("-c", str(config), "-s", "test", "forget", slug, "--purge", "--yes")
    assert done.code == 0, done
    assert "its text remains in the source transcripts" in done.out  # not in git: no history to rewrite
    needle = b"vault token"
    leftovers = [p for p in store.root.rglob("*") if p.is_file() and needle in p.read_bytes().lower()]
    assert leftovers == []
    gone = cli(
        "-c", str(config), "-s", "test", "recall", "when does the vault token rotate", "--json", "--no-model"
    )
    assert slug not in gone.out
    # the same words in a new session are not learned again
    jsonl(tmp_path / "j" / "p" / "7a1c2a8e-3b7d-4e52-9a0c-1d2e3f4a5b6c.jsonl",
          [cc("user", f"Remember that {SECRET}.", "u9")])  # fmt: skip
    again = cli("-c", str(config), "-s", "test", "distill", "run", "--json")
    report = json.loads(again.out)
    assert report["dropped"] == {"purged before (a tombstone matches)": 1} and report["drafts"] == []
    assert not any(needle in p.read_bytes().lower() for p in store.root.rglob("*") if p.is_file())


def test_forget_archives_with_a_reason(ferry: tuple[Store, Path]) -> None:
    store, config = ferry
    cli = Cli()
    assert (
        cli("-c", str(config), "-s", "test", "forget", "cache-host", "--reason", "the cache moved").code == 0
    )
    meta = store.show("cache-host").note.meta
    assert meta["archived_reason"] == "the cache moved" and "cache-host" not in store.index().named()
    assert cli("-c", str(config), "-s", "test", "forget", "cache-host").code == 2
    out = cli("-c", str(config), "-s", "test", "why", "cache-host").out
    assert "withheld — archived on" in out and "the cache moved" in out
