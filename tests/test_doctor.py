"""Doctor shows what the tolerant reader put up with, with file:line and a next step."""

from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import SAMPLE, Cli

from kura.doctor import diagnose
from kura.store import Store


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
            "test/broken.md:3: frontmatter is not valid YAML (mapping values are not allowed in this context)",
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
    ]


def test_doctor_cli_exit_codes_and_json(cli: Cli, tmp_path: Path) -> None:
    healthy = cli("-s", str(SAMPLE), "doctor")
    assert healthy.code == 0
    assert (
        healthy.out == "sample-store: 40 memories (feedback 10, project 14, reference 8, user 8) — healthy\n"
    )
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "x.md").write_text("no frontmatter here\n")
    sick = cli("-s", str(tmp_path / "s"), "doctor", "--json")
    assert sick.code == 1
    data = json.loads(sick.out)
    assert data["healthy"] is False
    assert [(f["check"], f["path"], f["line"]) for f in data["findings"]] == [
        ("files", "s/x.md", 1),
        ("index", "MEMORY.md", 1),
    ]
