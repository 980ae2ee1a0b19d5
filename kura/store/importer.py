"""Bringing an existing memory folder into a store without losing a field.

Claude Code's memory folders and distill-kura's stores already speak this format (one
file per memory, ``MEMORY.md`` beside them), so an import copies each memory file byte for
byte — every key, comment and quirk the source had — and carries over the source's own
index line for it. Running the same import twice changes nothing; a memory that already
exists with different content is reported and left alone on both sides, never merged or
overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kura.errors import StoreError
from kura.files.memory_file import Finding
from kura.store.store import Store

KINDS = ("claude-code", "kura")


@dataclass(frozen=True, slots=True)
class ImportReport:
    source: Path
    kind: str
    imported: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def did_work(self) -> bool:
        return bool(self.imported)


def import_folder(store: Store, source: str | Path, *, kind: str) -> ImportReport:
    """Copy every memory of ``source`` (a Claude Code memory folder or a distill-kura
    store) into ``store``."""
    if kind not in KINDS:
        raise StoreError(f"unknown import kind {kind!r}; use one of {', '.join(KINDS)}")
    folder = Path(source).expanduser().absolute()
    if not folder.is_dir():
        raise StoreError(
            f"{folder}: not a folder; point at the memory folder itself (the one holding MEMORY.md)"
        )
    real, target = folder.resolve(), store.root.resolve()
    if real == target or real.is_relative_to(target) or target.is_relative_to(real):
        raise StoreError(
            f"{folder} and store '{store.name}' ({store.root}) overlap; import "
            "from a folder outside the store"
        )
    store.check_write("direct")
    origin = Store(folder, name=folder.name, write_policy="frozen")
    lines = origin.index()
    report = ImportReport(source=folder, kind=kind)
    report.findings.extend(origin.findings())
    for slug, rel in sorted(origin.files()):
        data, memory = origin.read(slug, origin.root / rel)
        if not data and memory.note.raw is None:  # not read (a FIFO, over the cap): in the findings
            continue
        entry = lines.line_for(memory.slug)
        try:
            result = store.write_file(memory.slug, data, index_line=entry.text.strip() if entry else None)
        except StoreError as err:
            report.conflicts.append(f"{memory.slug}: {err}")
            continue
        (report.imported if result.did_work else report.unchanged).append(memory.slug)
    return report
