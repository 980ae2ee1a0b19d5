"""Store health: what a person should fix, each with where it is and what to do.

The store reads every file tolerantly and keeps going, which is only safe if what it
tolerated is shown somewhere. Doctor is that place. Each check is a small function from a
snapshot of the store to findings:

* files — broken frontmatter and YAML guesses (path:line), unreadable folders, symlinks
  that leave the store, hardlinks (an edit through the other name changes the memory),
  FIFOs, devices and sockets named like memories, files over the size cap, NUL bytes, git
  conflict markers, and temporary files a crashed write left behind; in MEMORY.md also an
  unclosed ``<!--`` or code fence, which hides every line after it from the map;
* index — a current memory with no line in MEMORY.md (archived and superseded ones have
  none by design), a line naming no memory, two lines for one, and a line still offering
  an archived or superseded memory as current;
* observations — what the observation log's reader tolerated, and conflict markers in it;
* links — ``[[links]]`` naming no memory by slug, title or alias, with a "did you mean";
* graph — islands (nothing links in or out) and dead ends (links nowhere), as warnings;
* descriptions — two memories with the same description cannot both be recognised;
* titles — two current memories answering to one title or alias: a link by that name
  reaches neither (``kura.health.titles``);
* claims — two live memories where one revises the other (``kura.life.corrections``): both are
  served as current fact, so one should supersede the other, or say what tells them apart;
* size — the index against the prefill budget.

Errors make ``kura doctor`` exit 1; warnings do too under ``--strict`` (pre-commit);
notes (islands, dead ends, an index over the map budget) are observations and never fail —
a store written without links is not broken, only harder to walk.
The snapshot comes from the catalog, findings included, so no file is read again: a
store of 20,000 memories is checked without parsing 20,000 files (nor the thousands with a
finding). distill-kura's flat frontmatter (a value with an unquoted ``": "``) is a note,
counted on one line; ``fix_flat`` quotes those values when asked (``kura doctor --fix``).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kura.errors import KuraError, StoreError
from kura.files import memory_index as ix
from kura.files.body import read as read_body
from kura.files.checks import conflict_markers, hidden_in_index, hidden_in_parsed, nul_bytes
from kura.files.flat import FLAT_LAYOUT
from kura.files.folder_walk import walk
from kura.files.frontmatter import quoted
from kura.files.link_names import Names
from kura.files.link_names import names as names_of
from kura.files.memory_file import Finding, from_bytes, render
from kura.files.slugs import INDEX_NAME
from kura.health.graph import GraphReport, analyse
from kura.health.titles import ambiguous_link, ambiguous_titles
from kura.life.corrections import conflicts
from kura.observe.log_read import MAX_READ, snapshot
from kura.observe.observations import log_path, read_log
from kura.recall.index_job import Progress, progress
from kura.store import catalog
from kura.store import state as st
from kura.store.listing import Retired, retirement
from kura.store.safe_read import INDEX_CAP, Refused, read_in
from kura.store.store import Store
from kura.text.tokens import estimate_tokens

if TYPE_CHECKING:
    from kura.map_settings import MapSettings


@dataclass(kw_only=True, frozen=True, slots=True)
class Snapshot:
    store: Store
    entries: dict[str, catalog.Entry]
    index: ix.Index
    graph: GraphReport
    settings: MapSettings | None
    index_findings: tuple[Finding, ...] = ()  # MEMORY.md's own text, or why it was not read
    index_read: bool = True
    index_tokens: int  # ``_index_tokens(index)``, counted once for the report and the size check
    names: Names = field(default_factory=lambda: names_of(()))  # who answers to each title and alias


@dataclass(kw_only=True, frozen=True, slots=True)
class Report:
    store: str
    memories: int
    counts: dict[str, int]
    findings: tuple[tuple[str, Finding], ...]
    watcher: dict[str, Any] | None = None
    building: Progress | None = None  # the store's background index build (kura.recall.index_job)
    graph: GraphReport | None = None
    index_tokens: int = 0

    @property
    def healthy(self) -> bool:
        return not self.problems

    @property
    def errors(self) -> int:
        return sum(1 for _, f in self.findings if f.severity == "error")

    @property
    def problems(self) -> int:
        """Errors and warnings (what ``--strict`` fails on); notes are observations."""
        return sum(1 for _, f in self.findings if f.severity != "note")

    def to_dict(self) -> dict[str, object]:
        return {
            "store": self.store,
            "memories": self.memories,
            "types": self.counts,
            "healthy": self.healthy,
            "watcher": self.watcher,
            "index_build": None if self.building is None else self.building.to_dict(),
            "index_tokens": self.index_tokens,
            "graph": self.graph.to_dict() if self.graph else None,
            "findings": [
                {"check": check, "severity": f.severity, "path": f.path, "line": f.line, "message": f.message}
                for check, f in self.findings
            ],
        }


def check_files(snap: Snapshot) -> Iterator[Finding]:
    """What reading each file found, as the catalog kept it when the scan read the file
    (never read and parsed again here), then what the walk and the folder hold."""
    yield from snap.index_findings
    for entry in snap.entries.values():
        if entry.found:
            yield from (Finding(*found) for found in json.loads(entry.found))
    yield from snap.store.walk_findings()
    root = os.fspath(snap.store.root)
    for entry in snap.entries.values():
        try:
            names = os.stat(f"{root}/{entry.rel}").st_nlink  # a str path: 20,000 of these per run
        except OSError:
            continue
        if names > 1:
            why = "an edit through another name changes this memory too — make it a plain copy"
            yield Finding(
                f"{snap.store.name}/{entry.rel}", 1, f"hardlinked ({names} names): {why}", "warning"
            )
    yield from stale_temporaries(snap.store)


def stale_temporaries(store: Store, *, now: float | None = None) -> Iterator[Finding]:
    """Temporary files of ``kura.store.atomic.write_atomic`` (``.NAME.PID.HEX.tmp``) that no write
    will finish: their process is gone, or they are older than ``STALE_AFTER`` seconds."""
    now = time.time() if now is None else now
    for folder, dirs, files in walk(store.root):  # not os.walk: it recurses a level, a deep tree ends it
        dirs[:] = [d for d in dirs if d != ".git"]  # no walk enters linked folders
        for name in files:
            temp = _TEMP.match(name)
            if temp is None or (why := _stale(os.path.join(folder, name), int(temp.group(2)), now)) is None:
                continue
            rel = Path(folder, name).relative_to(store.root).as_posix()
            left = f"a temporary file left by a write that did not finish ({why})"
            yield Finding(f"{store.name}/{rel}", 1, f"{left}; {temp.group(1)} is as it was before that write "
                          "— delete it", "warning")  # fmt: skip


def _stale(path: str, pid: int, now: float) -> str | None:
    """Why a temporary file is stale, or None while its write may still be running."""
    if not _alive(pid):
        return f"its process {pid} is gone"
    try:
        age = now - os.lstat(path).st_mtime
    except OSError:
        return None
    return f"written {int(age // 60)} minutes ago" if age >= STALE_AFTER else None


STALE_AFTER = 600.0  # seconds: no write of kura's takes this long
_TEMP = re.compile(r"^\.(.+)\.(\d{1,9})\.[0-9a-f]{8}\.tmp$")


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, as another user's
        return True
    return True


def check_index(snap: Snapshot) -> Iterator[Finding]:
    if not snap.index_read:  # one finding says why; a line per memory would only bury it
        return
    named = set(snap.index.named())
    for slug, entry in snap.entries.items():
        if slug not in named and not entry.retired:  # superseded and archived are off the index by design
            fix = "run kura doctor --fix, `kura remember` it again or add the line by hand"
            yield Finding(INDEX_NAME, 1, f"{slug}: no line in the index, so no agent will see it — {fix}")
    own = Counter(line.slugs[0] for line in snap.index.entries())
    for number, line in enumerate(snap.index.lines, start=1):
        for slug in line.slugs:
            if slug not in snap.entries:
                yield Finding(INDEX_NAME, number, f"names {slug!r}, which is not a memory in this store "
                              "— fix the link, remove the line or run kura doctor --fix")  # fmt: skip
        gone = _retired(snap.store, snap.entries, line)
        if gone is not None:
            slug, rel = line.slugs[0], snap.entries[line.slugs[0]].rel
            fix = (
                "run kura doctor --fix to remove the line, "
                f"or take `{gone.key}` out of {rel} to bring it back"
            )
            yield Finding(
                INDEX_NAME, number, f"{slug}: {gone.said()}, yet this line still offers it as current — {fix}"
            )
        if line.kind == "entry" and own[line.slugs[0]] > 1:
            yield Finding(
                INDEX_NAME, number, f"{line.slugs[0]}: has {own[line.slugs[0]]} lines of its own — keep one"
            )


def check_links(snap: Snapshot) -> Iterator[Finding]:
    for dead in snap.graph.dead:
        entry = snap.entries[dead.source]
        shared = ambiguous_link(snap.names, snap.entries, dead.target)
        hint = (
            f" by slug, and more than one memory by title or alias ({shared}) — link by slug"
            if shared
            else f" — did you mean [[{dead.suggestion}]]?"
            if dead.suggestion
            else " — fix the slug or write that memory"
        )
        line = _line_of(snap.store, entry, dead.target)
        yield Finding(f"{snap.store.name}/{entry.rel}", line, f"[[{dead.target}]] names no memory{hint}")


ISLAND = "an island: nothing links to it and it links nowhere — add [[links]] so recall can walk to it"
DEAD_END = "a dead end: it links nowhere — add [[links]] to related memories"
_COUNTED = {  # a graph note's message → how many of them read on one line
    ISLAND: "islands: nothing links to them and they link nowhere — add [[links]] so recall can walk to them",
    DEAD_END: "dead ends: they link nowhere — add [[links]] to related memories",
    FLAT_LAYOUT: "files hold distill-kura's flat frontmatter (a value with an unquoted ': ', read as is)",
}


def check_graph(snap: Snapshot) -> Iterator[Finding]:
    """Islands and dead ends among current memories: an archived or superseded one is
    history, not a gap in the links to fix."""
    for slugs, message in ((snap.graph.islands, ISLAND), (snap.graph.dead_ends, DEAD_END)):
        for slug in slugs:
            if not snap.entries[slug].retired:
                yield Finding(f"{snap.store.name}/{snap.entries[slug].rel}", 1, message, "note")


def in_proportion(
    findings: Iterable[tuple[str, Finding]], *, each: bool = False
) -> list[tuple[str, str, str]]:
    """The findings as doctor prints them. In a store written without links every memory
    is an island, and a line each would bury the one line that matters; so islands and
    dead ends (notes: they never fail a run, ``--strict`` included) are one line per kind
    with their count, and ``each`` (``kura doctor --islands`` or ``--strict``) lists them. Everything that
    can fail a run is listed one by one; the JSON report always holds every finding.
    Returns (check, severity, text) per line."""
    found = list(findings)
    counts = Counter(f.message for _, f in found if f.message in _COUNTED)
    out: list[tuple[str, str, str]] = []
    said: set[str] = set()
    for check, finding in found:
        if each or finding.message not in _COUNTED or counts[finding.message] < 2:
            out.append((check, finding.severity, str(finding)))
        elif finding.message == FLAT_LAYOUT and finding.message not in said:
            said.add(finding.message)
            paths = [f.path for _, f in found if f.message == FLAT_LAYOUT]
            shown = ", ".join(paths[:3]) + (", …" if len(paths) > 3 else "")
            fix = "`kura doctor --fix` quotes them as YAML; `--islands` lists each"
            out.append((check, finding.severity, f"{len(paths)} {_COUNTED[FLAT_LAYOUT]}: {shown} — {fix}"))
        elif finding.message not in said:
            said.add(finding.message)
            count = f"{counts[finding.message]} {_COUNTED[finding.message]}"
            out.append((check, finding.severity, f"{count}; `kura doctor --islands` lists each"))
    return out


def check_descriptions(snap: Snapshot) -> Iterator[Finding]:
    same: dict[str, list[str]] = defaultdict(list)
    for slug, entry in snap.entries.items():
        if entry.description:
            same[entry.description.casefold()].append(slug)
    for slugs in same.values():
        if len(slugs) > 1:
            yield Finding(f"{snap.store.name}/{snap.entries[slugs[1]].rel}", 1, f"same description as "
                          f"{', '.join(slugs[:1] + slugs[2:])}: an index line must tell memories apart — "
                          "say what makes this one different", "warning")  # fmt: skip


def check_size(snap: Snapshot) -> Iterator[Finding]:
    if snap.settings is None:
        return
    tokens = snap.index_tokens
    if tokens > snap.settings.budget:
        over = f"the index is ~{tokens} tokens, over the map budget of {snap.settings.budget}"
        yield Finding(
            INDEX_NAME, 1, f"{over}; kura weave folds it to fit — run it to see what it keeps", "note"
        )


def check_observations(snap: Snapshot) -> Iterator[Finding]:
    path = log_path(snap.store)
    if not path.exists() and not path.is_symlink():
        return
    yield from read_log(snap.store).findings
    data = snapshot(path, snap.store.root, cap=MAX_READ).data
    yield from nul_bytes(data, path.name)
    yield from conflict_markers(data.decode("utf-8", errors="replace"), path.name)


def check_state(snap: Snapshot) -> Iterator[Finding]:
    """The state folder: a ``.kura`` that is a link or a file stops every command that needs it."""
    try:
        st.folder(snap.store.root, store=snap.store.name)
    except StoreError as err:
        yield Finding(".kura", 1, str(err))


CHECKS: dict[str, Callable[[Snapshot], Iterator[Finding]]] = {
    "state": check_state,
    "files": check_files,
    "index": check_index,
    "observations": check_observations,
    "links": check_links,
    "graph": check_graph,
    "descriptions": check_descriptions,
    "titles": lambda snap: ambiguous_titles(
        snap.store.name, snap.entries, snap.names, {s: e.links for s, e in snap.entries.items()}
    ),
    "claims": lambda snap: conflicts(snap.store.name, snap.entries, remembered=snap.store),
    "size": check_size,
}


def diagnose(store: Store, settings: MapSettings | None = None) -> Report:
    """Run every check over one store."""
    entries = catalog.entries(store)
    names = names_of(entries.values())
    graph = analyse({slug: names.linked(entry.links) for slug, entry in entries.items()})
    current = {slug for slug, entry in entries.items() if not entry.retired}  # history is no gap in the links
    graph = replace(graph, islands=tuple(s for s in graph.islands if s in current),
                    dead_ends=tuple(s for s in graph.dead_ends if s in current))  # fmt: skip
    index, index_findings, index_read = _read_index(store)
    snap = Snapshot(store=store, entries=entries, index=index, graph=graph, settings=settings,
                    index_findings=index_findings, index_read=index_read,
                    index_tokens=_index_tokens(index), names=names)  # fmt: skip
    findings = tuple((name, f) for name, check in CHECKS.items() for f in check(snap))
    counts = dict(sorted(Counter(e.type or "untyped" for e in entries.values()).items()))
    return Report(
        store=store.name,
        memories=len(entries),
        counts=counts,
        findings=findings,
        watcher=heartbeat(store.root),
        building=progress(store.root),
        graph=graph,
        index_tokens=snap.index_tokens,
    )


def fix_index(store: Store) -> list[str]:
    """Repair index drift only: add a line for each current memory the index does not name,
    remove the entry line of each archived or superseded one (the index names current
    memories only: a forget stays done), and comment out each entry line that names no
    memory (kept, so nothing is lost). Returns what changed, one line each; nothing when
    the index must not be read."""
    if not _read_index(store)[2]:  # a FIFO, a link out, over the cap: diagnose says so
        return []
    entries = catalog.entries(store)
    changes: list[str] = []

    def repair(index: ix.Index) -> ix.Index:
        if index.unclosed is not None:
            raise StoreError(
                f"{index.hidden()}; doctor --fix adds no line it would hide — nothing was changed"
            )
        changes.clear()
        named = set(index.named())
        for line in index.entries():
            gone = _retired(store, entries, line)
            if gone is not None:
                index = ix.remove(index, line.slugs[0])
                changes.append(f"removed {line.text} ({gone.state})")
        for slug, entry in entries.items():
            if slug not in named and not entry.retired:
                added = ix.entry_text(
                    slug, ix.title_for(entry.name, entry.description, slug), entry.description
                )
                index = ix.upsert(index, slug, added)
                changes.append(f"added {added}")
        lines = list(index.lines)
        for position, line in enumerate(lines):
            if line.kind == "entry" and line.slugs[0] not in entries:
                text = line.text.replace("--", "- -")
                lines[position] = ix.IndexLine(
                    f"<!-- kura doctor --fix: no memory {line.slugs[0]!r}: {text} -->", "comment"
                )
                changes.append(f"commented out {line.text}")
        return ix.Index(tuple(lines), index.newline, index.bom, index.final_newline) if changes else index

    store.edit_index(repair)
    return list(changes)


def fix_flat(store: Store) -> list[str]:
    """Quote the values YAML refuses in distill-kura's flat frontmatter (``frontmatter.quoted``),
    in the files that hold them: every other byte kept, written only when the quoted block
    reads as YAML to the same values. Returns what changed, one line each."""
    changes: list[str] = []
    flat = [
        slug
        for slug, entry in catalog.entries(store).items()
        if entry.found and any(found[2] == FLAT_LAYOUT for found in json.loads(entry.found))
    ]
    for slug in flat:

        def requote(memory: Any) -> Any:
            note = memory.note
            lines = quoted(note.front_lines) if note.raw is not None else None
            if lines is None:
                return None
            fixed = replace(note, raw=None, front_lines=lines)
            reread = from_bytes(render(fixed).encode(), "check")
            return fixed if reread.meta == note.meta and not reread.findings else None

        result = store.update(slug, requote)
        if result.changed:
            changes.append(f"quoted the values YAML refused in {store.name}/{slug}.md")
    return changes


def heartbeat(root: Path, *, fresh_within: float = 15.0) -> dict[str, Any] | None:
    """The last beat of a ``kura watch`` on this store, if that watcher is alive: its
    process exists and it beat within ``fresh_within`` seconds."""
    try:
        path = st.folder(root) / "watch.json"
    except StoreError:
        return None
    data = st.read_json(path, then="doctor reports no watcher")
    if data is None:
        return None
    beat, pid = data.get("beat"), data.get("pid")
    if type(beat) not in (int, float) or type(pid) is not int or not 0 < pid < 1 << 31:
        st.damaged(path, "holds fields of the wrong type", "doctor reports no watcher")
        return None
    return data if _alive(pid) and time.time() - beat <= fresh_within else None


def _read_index(store: Store) -> tuple[ix.Index, tuple[Finding, ...], bool]:
    """MEMORY.md parsed, what is wrong in its text, and whether it was read at all."""
    got = read_in(store.root, INDEX_NAME, cap=INDEX_CAP, what="the index")
    if isinstance(got, Refused):
        return (
            ix.Index(),
            (Finding(INDEX_NAME, 1, f"{got.what}; the index was not read — {got.todo}"),),
            False,
        )
    data = got or b""
    raw = data.decode("utf-8", errors="replace")
    text = ix.normalize(raw)[0]
    index = ix.parse_index(raw)
    # the same lines as parsing ``text`` again, unless normalizing it again would change it
    hidden = (
        hidden_in_parsed(index, INDEX_NAME)
        if ix.normalize(text)[0] == text
        else hidden_in_index(text, INDEX_NAME)
    )
    found = nul_bytes(data, INDEX_NAME) + conflict_markers(text, INDEX_NAME, examples=False) + hidden
    return index, tuple(found), True


def _retired(store: Store, entries: dict[str, catalog.Entry], line: ix.IndexLine) -> Retired | None:
    """Why the memory an entry line is the own line of is off the index, if it is: the
    catalog answers quickly for most, the file itself has the last word for the few."""
    entry = entries.get(line.slugs[0]) if line.kind == "entry" else None
    if entry is None or not entry.retired:
        return None
    try:
        return retirement(store.show(entry.slug).note.meta)
    except KuraError:  # gone or unreadable since the walk: other checks say so
        return None


def _index_tokens(index: ix.Index) -> int:
    return sum(map(estimate_tokens, [line.text for line in index.lines])) + len(index.lines)


def _line_of(store: Store, entry: catalog.Entry, target: str) -> int:
    """The file's line of the first link to ``target`` (the body is the end of the text)."""
    data, memory = store.read(entry.slug, store.root / entry.rel)
    text, body = ix.normalize(data.decode("utf-8", errors="replace"))[0], memory.note.body
    lines = [link.line for link in read_body(body).links if link.target == target]
    return text.count("\n") - body.count("\n") + lines[0] if lines else 1
