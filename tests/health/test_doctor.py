"""Doctor shows what the tolerant reader put up with, with file:line and a next step."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SAMPLE, Cli

from kura.health.doctor import diagnose, fix_flat, fix_index
from kura.store import catalog
from kura.store.store import Store


def test_sample_store_is_healthy() -> None:
    report = diagnose(Store(SAMPLE))
    assert report.healthy and report.memories == 40
    assert report.counts == {"feedback": 10, "project": 14, "reference": 8, "user": 8}


def test_every_kind_of_problem_is_named(store: Store, tmp_path: Path) -> None:
    store.remember("good", "a fine memory", "See [[ghost]] and [[also-good]].", type="user")
    store.remember("also-good", "another one", "Back to [[good]].", type="user")
    (store.root / "broken.md").write_text("---\nname: b\ndescription: Chose X: fast\ntype: project\n---\n")
    (store.root / "unindexed.md").write_text("---\nname: u\ndescription: not in the index\ntype: user\n---\n")
    (tmp_path / "far.md").write_text("far away")
    os.symlink(tmp_path / "far.md", store.root / "escape.md")
    index = (store.root / "MEMORY.md").read_text()
    (store.root / "MEMORY.md").write_text(
        index + "- [Gone](gone.md) — deleted by hand\n- [Again](good.md) — twice\n"
    )
    report = diagnose(store)
    got = [(check, str(f).split(" — ")[0].split("; ")[0]) for check, f in report.findings]
    assert got == [
        (
            "files",
            "test/broken.md:3: distill-kura's flat frontmatter: a value holds an unquoted ': ', which YAML refuses",
        ),
        (
            "files",
            "test/escape.md:1: symlink points outside the store (or at something that is not a memory)",
        ),
        ("index", "MEMORY.md:1: broken: no line in the index, so no agent will see it"),
        ("index", "MEMORY.md:1: unindexed: no line in the index, so no agent will see it"),
        ("index", "MEMORY.md:5: good: has 2 lines of its own"),
        ("index", "MEMORY.md:7: names 'gone', which is not a memory in this store"),
        ("index", "MEMORY.md:8: good: has 2 lines of its own"),
        ("links", "test/good.md:7: [[ghost]] names no memory"),
        ("graph", "test/broken.md:1: an island: nothing links to it and it links nowhere"),
        ("graph", "test/unindexed.md:1: an island: nothing links to it and it links nowhere"),
    ]
    assert report.errors == 7 and report.problems == 7  # the two islands and the flat layout are notes


def test_doctor_cli_exit_codes_and_json(cli: Cli, tmp_path: Path) -> None:
    healthy = cli("-s", str(SAMPLE), "doctor")
    assert healthy.code == 0
    assert (
        healthy.out == "sample-store: 40 memories (feedback 10, project 14, reference 8, user 8) — healthy\n"
        "  links: 108 resolved, 0 dead; islands 0, dead ends 0; 1 cluster(s), largest 40; "
        "hubs: backup-schedule (5), ci-workflow (5), deploy-topology (5)\n"
    )
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "x.md").write_text("no frontmatter here\n")
    sick = cli("-s", str(tmp_path / "s"), "doctor", "--json")
    assert sick.code == 1
    data = json.loads(sick.out)
    assert data["healthy"] is False
    assert [(f["check"], f["severity"], f["path"], f["line"]) for f in data["findings"]] == [
        ("files", "error", "s/x.md", 1),
        ("index", "error", "MEMORY.md", 1),
        ("graph", "note", "s/x.md", 1),
    ]


def test_planted_defects_in_a_fixture_store(store: Store, tmp_path: Path) -> None:
    store.remember(
        "deploy-day", "deploys go out Tuesday", "See [[deploy-comands]] and [[oncall]].", type="project"
    )
    store.remember(
        "deploy-commands", "make deploy runs the playbook", "Back to [[deploy-day]].", type="reference"
    )
    store.remember("oncall", "Tomasz is on call in odd weeks", "See [[deploy-day]].", type="user")
    store.remember("twin", "Tomasz is on call in odd weeks", "A copy. [[oncall]]", type="user")
    os.link(store.root / "oncall.md", tmp_path / "elsewhere.md")
    report = diagnose(store)
    messages = [(check, f.severity, str(f).split(" — ")[0]) for check, f in report.findings]
    assert ("links", "error", "test/deploy-day.md:7: [[deploy-comands]] names no memory") in messages
    assert "did you mean [[deploy-commands]]?" in str(
        report.findings[[m[0] for m in messages].index("links")][1]
    )
    assert (
        "files",
        "warning",
        "test/oncall.md:1: hardlinked (2 names): an edit through another name changes this memory too",
    ) in messages
    assert (
        "descriptions",
        "warning",
        "test/twin.md:1: same description as oncall: an index line must tell memories apart",
    ) in messages
    assert report.graph is not None and report.graph.hubs[0] == ("deploy-day", 2)


def test_fix_repairs_only_index_drift(store: Store) -> None:
    store.remember("a", "first", "[[b]]", type="user")
    store.remember("b", "second", "[[a]]", type="user")
    (store.root / "c.md").write_text(
        "---\nname: c\ndescription: third -- hand made\ntype: user\n---\n[[a]]\n"
    )
    index = store.root / "MEMORY.md"
    index.write_text(index.read_text() + "- [Gone](gone.md) — deleted -- by hand\n")
    changes = fix_index(store)
    assert changes == [
        "added - [c](c.md) — third -- hand made",
        "commented out - [Gone](gone.md) — deleted -- by hand",
    ]
    text = index.read_text()
    assert "<!-- kura doctor --fix: no memory 'gone': - [Gone](gone.md) — deleted - - by hand -->" in text
    assert diagnose(store).errors == 0
    assert fix_index(store) == []


def test_doctor_fix_from_the_command_line(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "a.md").write_text("---\nname: a\ndescription: alpha\ntype: user\n---\nbody\n")
    before = cli("-s", str(tmp_path / "s"), "doctor")
    assert before.code == 1
    fixed = cli("-s", str(tmp_path / "s"), "doctor", "--fix")
    assert fixed.code == 0 and fixed.err == "kura: fixed: added - [a](a.md) — alpha\n"
    assert (tmp_path / "s" / "MEMORY.md").read_text() == "- [a](a.md) — alpha\n"


UV = "---\nname: uv\ndescription: Decided: use uv, not pip\nmetadata:\n  type: feedback\n---\n\nDecided [[ci-workflow]].\n"


def _kura(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kura", *args], capture_output=True, text=True, timeout=120)


def test_distill_kuras_flat_frontmatter_is_no_problem_and_fix_quotes_it(tmp_path: Path) -> None:
    """The repro of issue 33: a value with an unquoted ': ' is distill-kura's layout, read as
    written — a note counted on one line, not a problem; ``kura doctor --fix`` quotes it."""
    shutil.copytree(SAMPLE, tmp_path / "s", ignore=shutil.ignore_patterns(".kura"))
    s = tmp_path / "s"
    (s / "uv.md").write_text(UV)
    (s / "ja.md").write_bytes(
        UV.replace("uv", "ja").replace("Decided: use", "決定: ステージングは kobo-8: use").encode()
    )
    with (s / "MEMORY.md").open("a") as index:
        index.write("- [uv](uv.md) — use uv, not pip\n- [ja](ja.md) — kobo-8\n")
    others = {path.name: path.read_bytes() for path in s.glob("*.md") if path.name not in ("uv.md", "ja.md")}
    before = _kura("-s", str(s), "doctor")
    assert before.returncode == 0, before.stdout
    assert "— healthy" in before.stdout and "not valid YAML" not in before.stdout
    flat = [line for line in before.stdout.splitlines() if "flat frontmatter" in line]
    assert flat == [
        "  2 files hold distill-kura's flat frontmatter (a value with an unquoted ': ', read as is): "
        "s/ja.md, s/uv.md — `kura doctor --fix` quotes them as YAML; `--islands` lists each  [files, note]"
    ]
    fixed = _kura("-s", str(s), "doctor", "--fix")
    assert fixed.returncode == 0 and "quoted the values YAML refused in s/uv.md" in fixed.stderr
    assert (s / "uv.md").read_text() == UV.replace("Decided: use uv, not pip", "'Decided: use uv, not pip'")
    assert "description: '決定: ステージングは kobo-8: use ja, not pip'\n" in (s / "ja.md").read_text()
    assert {
        path.name: path.read_bytes() for path in s.glob("*.md") if path.name not in ("uv.md", "ja.md")
    } == others
    after = _kura("-s", str(s), "doctor")
    assert after.returncode == 0 and "flat frontmatter" not in after.stdout
    assert Store(s).show("uv").note.meta == {"name": "uv", "description": "Decided: use uv, not pip",
                                             "metadata": {"type": "feedback"}}  # fmt: skip


def test_doctor_shows_the_findings_the_scan_kept_without_reading_files_again(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    (store.root / "broken.md").write_text("---\nname: b\ndescription: [open\ntype: project\n---\n")
    catalog.entries(store)  # the scan reads each file once

    def read_again(*args: object, **kwargs: object) -> None:
        raise AssertionError("a file read again")

    monkeypatch.setattr(Store, "read", read_again)
    files = [str(f) for check, f in diagnose(store).findings if check == "files"]
    assert len(files) == 1 and files[0].startswith("test/broken.md:4: frontmatter is not valid YAML")


def test_fix_quotes_flat_values_keeping_the_bom_crlf_and_spacing(store: Store) -> None:
    path = store.root / "c.md"
    path.write_bytes(
        b"\xef\xbb\xbf---\r\nname: c\r\ndescription: A: it's b   # x\r\ntype: user\r\n---\r\nbody\r\n"
    )
    assert fix_flat(store) == ["quoted the values YAML refused in test/c.md"]
    assert path.read_bytes() == (
        b'\xef\xbb\xbf---\r\nname: c\r\ndescription: "A: it\'s b   # x"\r\ntype: user\r\n---\r\nbody\r\n'
    )
    assert store.show("c").description == "A: it's b   # x" and fix_flat(store) == []
