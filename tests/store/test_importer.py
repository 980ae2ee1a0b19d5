"""Imports keep every byte and field, and a second run changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Cli

from kura.errors import PolicyRefused, StoreError
from kura.store.importer import import_folder
from kura.store.store import Store, init_store

CLAUDE_INDEX = "- [User role](user_role.md) — Mika leads Ferrydesk; backend-first\n- [Tests](feedback_tests.md) — real DB\n"
CLAUDE_FILES = {
    "user_role.md": "---\nname: User role\ndescription: Mika leads Ferrydesk; backend-first\ntype: user\n---\n\nMika leads.\n",
    "feedback_tests.md": "---\r\nname: Tests\r\ndescription: integration tests hit a real DB: no mocks\r\ntype: feedback\r\noriginSessionId: abc-123\r\n---\r\nReal DB.\r\n",
}
DISTILL_FILES = {
    "archive-on-slow-disk.md": (
        "---\nname: archive-on-slow-disk\ndescription: the archive lives on the slow disk\n"
        "metadata:\n  type: project\n  witness: said\n---\n\nThe archive goes on the slow disk.\n"
    ),
    "_still/index.woven.md": "derived state, not a memory\n",
}


def make(folder: Path, files: dict[str, str], index: str = "") -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    if index:
        (folder / "MEMORY.md").write_text(index)
    return folder


def test_claude_code_import_keeps_bytes_and_index_lines(store: Store, tmp_path: Path) -> None:
    source = make(tmp_path / "cc", CLAUDE_FILES, CLAUDE_INDEX)
    report = import_folder(store, source, kind="claude-code")
    assert sorted(report.imported) == ["feedback_tests", "user_role"]
    for name, text in CLAUDE_FILES.items():
        assert (store.root / name).read_bytes() == text.encode("utf-8")
    assert store.index().line_for("feedback_tests").text == "- [Tests](feedback_tests.md) — real DB"
    assert store.show("feedback_tests").note.meta["originSessionId"] == "abc-123"


def test_second_import_changes_nothing(store: Store, tmp_path: Path) -> None:
    source = make(tmp_path / "cc", CLAUDE_FILES, CLAUDE_INDEX)
    import_folder(store, source, kind="claude-code")
    index_path = store.root / "MEMORY.md"
    index_path.write_text(index_path.read_text().replace("real DB", "edited by hand"))
    snapshot = {p: p.read_bytes() for p in store.root.rglob("*") if p.is_file() and ".kura" not in p.parts}
    report = import_folder(store, source, kind="claude-code")
    assert (report.imported, sorted(report.unchanged)) == ([], ["feedback_tests", "user_role"])
    assert {p: p.read_bytes() for p in snapshot} == snapshot


def test_distill_kura_import_skips_state_and_keeps_nested_type(store: Store, tmp_path: Path) -> None:
    report = import_folder(store, make(tmp_path / "dk", DISTILL_FILES), kind="kura")
    assert report.imported == ["archive-on-slow-disk"]
    memory = store.show("archive-on-slow-disk")
    assert memory.type == "project" and memory.note.meta["metadata"]["witness"] == "said"
    assert store.index().line_for("archive-on-slow-disk").text == (
        "- [archive-on-slow-disk](archive-on-slow-disk.md) — the archive lives on the slow disk"
    )
    assert not (store.root / "_still").exists()


def test_conflicts_are_reported_and_both_sides_kept(store: Store, tmp_path: Path) -> None:
    store.remember("user_role", "a different memory already here", type="user")
    before = (store.root / "user_role.md").read_bytes()
    report = import_folder(store, make(tmp_path / "cc", CLAUDE_FILES, CLAUDE_INDEX), kind="claude-code")
    assert report.imported == ["feedback_tests"]
    assert len(report.conflicts) == 1 and report.conflicts[0].startswith("user_role: ")
    assert (store.root / "user_role.md").read_bytes() == before


def test_broken_source_files_come_in_with_findings(store: Store, tmp_path: Path) -> None:
    source = make(tmp_path / "cc", {"broken.md": "---\nname: x\ndescription: a: b\ntype: user\n---\n"})
    report = import_folder(store, source, kind="claude-code")
    assert report.imported == ["broken"] and [f.line for f in report.findings] == [3]
    assert store.show("broken").description == "a: b"


def test_refusals(store: Store, tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="not a folder"):
        import_folder(store, tmp_path / "absent", kind="claude-code")
    with pytest.raises(StoreError, match="overlap"):
        import_folder(store, store.root, kind="kura")
    frozen = Store(store.root, write_policy="frozen")
    with pytest.raises(PolicyRefused):
        import_folder(frozen, make(tmp_path / "cc", CLAUDE_FILES), kind="claude-code")


def test_import_cli_exit_codes(cli: Cli, tmp_path: Path) -> None:
    init_store(tmp_path / "s")
    source = make(tmp_path / "cc", CLAUDE_FILES, CLAUDE_INDEX)
    first = cli("-s", str(tmp_path / "s"), "import", "claude-code", str(source))
    assert first.code == 0 and first.out == "imported 2, unchanged 0, conflicts 0 into 's'\n"
    assert cli("-s", str(tmp_path / "s"), "import", "claude-code", str(source)).code == 2
