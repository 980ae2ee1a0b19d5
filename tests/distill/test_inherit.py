"""`kura import kura DIR` from a distill-kura store holding staged drafts, journal watermarks
and seeds, laid out as distill-kura lays them out (``_still/drafts/*.md`` with the evidence
comment and ``_evidence/<sha256>.json``, ``_still/watermark.json``, ``_still/seeds.jsonl``).
Real `kura` processes throughout: the import, then a real `kura distill run` that must read
none of the transcripts distill-kura had already read."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import write_memory
from test_distill_run import SESSION, SID, cc, jsonl

from kura.distill import drafts as dr
from kura.distill import seeds
from kura.store.store import Store, init_store

NOTES = "The release notes go in docs/CHANGES.md and Marta reviews them before a tag."
BACKUP = "the archive disk is also copied to the NAS every night"


def kura(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kura", "-c", str(config), *args], capture_output=True, text=True, check=False
    )


def manifest(folder: Path, quotes: list[dict[str, str]]) -> str:
    """An evidence manifest as distill-kura writes it: content-addressed JSON."""
    blob = json.dumps({"gate_version": 7, "kind": "project", "quotes": quotes}, ensure_ascii=False,
                      sort_keys=True, indent=1)  # fmt: skip
    digest = hashlib.sha256(blob.encode("utf-8")).hexdigest()
    (folder / "_evidence").mkdir(exist_ok=True)
    (folder / "_evidence" / f"{digest}.json").write_text(blob, encoding="utf-8")
    return digest


def draft(
    folder: Path, name: str, kind: str, quotes: list[tuple[str, str]], text: str, *, flags: str = ""
) -> None:
    """A staged draft as distill-kura's stage() writes it (quotes clipped to 300 in the comment)."""
    digest = manifest(folder, [{"class": c, "text": t} for c, t in quotes])
    evidence = "\n".join(f"  [{c}] {t[:300]}" for c, t in quotes)
    classes = ",".join(dict.fromkeys(c for c, _ in quotes))
    (folder / "_still" / "drafts" / f"{name}.md").write_text(
        f"<!-- distilled 2026-11-30T07:58:00Z\n     source: {SID}.jsonl\n"
        f"     kind: {kind}   evidence classes: {classes}{flags}\n     gate: {'ab' * 16}\n"
        f"     evidence_manifest: sha256:{digest}\n     evidence:\n{evidence}\n-->\n{text}\n",
        encoding="utf-8",
    )


def distill_kura_store(folder: Path, transcript: Path) -> None:
    write_memory(folder, "archive", "project", "The archive disk is mounted read-only")
    (folder / "MEMORY.md").write_text(
        "# Memory\n\n- [archive](archive.md) — The archive disk is mounted read-only\n"
    )
    (folder / "_still" / "drafts").mkdir(parents=True)
    draft(folder, "release-notes", "project", [("USER", NOTES)],
          "TITLE: Release notes go in docs/CHANGES.md\nDESC: Marta reviews the release notes in docs/CHANGES.md "
          f"before a tag\nTAGS: [\"release\"]\n\n{NOTES}")  # fmt: skip
    draft(folder, "archive", "project", [("USER", f"and {BACKUP}, since October")],
          "EXTENDS: archive\n\nThe archive disk is also copied to the NAS every night.")  # fmt: skip
    draft(folder, "deploy-days", "project", [("USER", "we deploy on Tuesdays after the standup")],
          "TITLE: Deploys on Tuesdays\nDESC: Deploys go out Tuesdays\n\nDeploys go out to 3 servers every "
          "Tuesday at 14:00.")  # fmt: skip
    draft(folder, "tests-pass", "project", [("SELF", "All 42 tests pass on the main branch now.")],
          "TITLE: Tests pass\nDESC: The suite is green\n\nAll 42 tests pass on the main branch now.")  # fmt: skip
    (folder / "_still" / "drafts" / "old.md.poured").write_text("<!-- poured long ago -->\nTITLE: x\n")
    size = transcript.stat().st_size
    marks = {f"claude:{SID}.jsonl": size, "dsh:2026-11-30-session": 41, "claude:gone.jsonl": 1200}
    (folder / "_still" / "watermark.json").write_text(json.dumps(marks, indent=1))
    rows = [
        {"kind": "IDEA", "text": "cache the wheel builds between CI runs to save minutes", "from": "SELF",
         "topic": "Cache wheel builds between CI runs", "at": "2026-11-29T10:00:00", "confirmed": None},
        {"kind": "IDEA", "text": "move the docs to the wiki", "from": "SELF", "topic": "Move the docs to the wiki",
         "at": "2026-11-20T10:00:00", "confirmed": {"how": "it was done", "memory": "docs-wiki", "at": "x"}},
    ]  # fmt: skip
    (folder / "_still" / "seeds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def setup(tmp_path: Path) -> tuple[Path, Path, Path, Store]:
    journals = tmp_path / "journals"
    transcript = jsonl(journals / "ferry" / f"{SID}.jsonl", [*SESSION, cc("user", NOTES, "u9")])
    source = tmp_path / "distill-kura-main"
    distill_kura_store(source, transcript)
    store, _ = init_store(tmp_path / "store", name="main")
    config = tmp_path / "kura.toml"
    config.write_text(
        f'[stores.main]\npath = "{store.root}"\n\n[stores.main.distill.journals]\nclaude = ["{journals}"]\n'
    )
    return config, source, transcript, store


def test_import_carries_drafts_watermarks_and_seeds_and_says_what_it_could_not(tmp_path: Path) -> None:
    config, source, transcript, store = setup(tmp_path)
    result = kura(config, "import", "kura", str(source), "--json")
    assert result.returncode == 0, result
    report: dict[str, Any] = json.loads(result.stdout)
    assert report["imported"] == ["archive"]
    # drafts: the sound ones staged again as kura's own, signed with kura's key
    tags = " (its TAGS not carried: kura's drafts have no such field)"  # and said so
    assert sorted(report["drafts"]) == [
        "draft archive.md: staged as archive",
        f"draft release-notes.md: staged as release-notes{tags}",
    ]
    staged = {d.slug: d for d in dr.staged(store)}
    assert sorted(staged) == ["archive", "release-notes"]
    assert not any(d.tampered for d in staged.values())
    assert staged["release-notes"].evidence[0].text == NOTES  # whole, from the evidence manifest
    assert staged["archive"].extends == "archive"
    # what could not come, each with why: the floor, the gate, a DSH mark, a transcript not configured
    missing = "\n".join(report["not_brought"])
    assert "draft deploy-days.md: refused by kura's final-surface floor" in missing
    assert "draft tests-pass.md: refused by kura's gate (only the agent's own words (SELF)" in missing
    assert "watermark dsh:2026-11-30-session: a DeepSeek Harness archive" in missing
    assert "watermark claude:gone.jsonl: names no transcript among this store's journals" in missing
    assert "seed 'Move the docs to the wiki': already confirmed in distill-kura" in missing
    read = transcript.read_bytes().count(b"\n")
    assert report["watermarks"] == [f"watermark claude:{SID}.jsonl: read up to line {read} of {transcript}"]
    assert report["seeds"] == ["Cache wheel builds between CI runs"]
    assert [s.topic for s in seeds.seeds(store)] == ["Cache wheel builds between CI runs"]
    # the drafts kura refused stay in the distill-kura store, untouched
    assert (source / "_still" / "drafts" / "deploy-days.md").is_file()
    # no transcript is read twice: the pass that follows reads nothing distill-kura read
    run = kura(config, "distill", "run", "--json")
    assert run.returncode == 2, run
    assert json.loads(run.stdout)["nothing"] is True
    # what is said after the import is read, and only that
    jsonl(transcript, [cc("user", "Remember that the nightly build runs on ci-3, not ci-1.", "u10")])
    run = kura(config, "distill", "run", "--json")
    assert run.returncode == 0, run
    assert json.loads(run.stdout)["segments"]["USER"] == 1
    # kura's drafts pour through kura's door (the mark is kura's)
    poured = kura(config, "distill", "pour", "release-notes")
    assert poured.returncode == 0, poured
    assert "docs/CHANGES.md" in (store.root / "release-notes.md").read_text()


def test_importing_again_brings_nothing_twice(tmp_path: Path) -> None:
    config, source, _, store = setup(tmp_path)
    assert kura(config, "import", "kura", str(source)).returncode == 0
    again = kura(config, "import", "kura", str(source), "--json")
    assert again.returncode == 2, again
    report = json.loads(again.stdout)
    assert (report["drafts"], report["watermarks"], report["seeds"]) == ([], [], [])
    assert len(dr.staged(store)) == 2
    assert "not brought: draft deploy-days.md" not in again.stderr  # --json: said in the JSON only


def test_the_answer_says_what_it_brought_and_what_not(tmp_path: Path) -> None:
    config, source, _, _ = setup(tmp_path)
    result = kura(config, "import", "kura", str(source))
    assert result.returncode == 0, result
    assert result.stdout.startswith(
        "imported 1, unchanged 0, conflicts 0 into 'main'; brought 2 draft(s), 1 watermark(s), 1 seed(s); "
        "5 thing(s) not brought"
    )
    assert "  brought draft release-notes.md: staged as release-notes (its TAGS not carried" in result.stdout
    assert "not brought: draft deploy-days.md: refused by kura's final-surface floor" in result.stderr
