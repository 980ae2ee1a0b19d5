"""``kura forget SLUG --purge``: the single real deletion, and the tombstone it leaves.

Everything else in kura archives; this exists so that "delete the key I pasted" can be
answered with yes. The closure is computed first and shown before anything is removed:

- the memory file and every index line naming it;
- drafts (staged, poured, tossed, quarantined) for it or quoting its text;
- memories derived from it (``derived_from`` names it) — purged with it — and pointers
  to it in other memories (``supersedes``, ``superseded_by``, ``contradicted_by``), which
  are removed from those memories' frontmatter — a memory it had replaced is archived
  (what replaced it is gone, which does not make the replaced fact current again);
- derived state: its search-index rows and vectors, the catalog row and the trigger
  ledger, the woven map and its backups, its use marks;
- transcript spans (``kura.recall.spans``) that carry its words — a quote, its claim, a
  paragraph of its body — so ``kura context`` cannot offer it back as "said before";
- scratch items (``kura.life.scratch``) that say it, so it cannot wait there and cross again.
  ``purge_waiting`` purges one scratch item alone (``kura scratch --purge ID``): it, its
  spans, and a tombstone of its words.

SQLite keeps deleted text in free pages, its write-ahead log and, for full-text tables,
old index segments, so the databases are compacted (secure delete, FTS optimise, VACUUM,
WAL truncated) rather than trusted to forget. A tombstone is left in the state folder —
hashes of the memory's normalised claim, its quotes and its content-word signature, never
the text — and the distiller drops any candidate that matches it, so the same transcript
does not teach it again. The text remains in git history (and in the source transcripts):
the command says so, and how to rewrite history.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from kura.errors import NotFound
from kura.files import memory_file as nt
from kura.files import memory_index as ix
from kura.files import witness as wt
from kura.files.folder_walk import walk
from kura.files.link_names import names as names_of
from kura.life import scratch as sc
from kura.life.usage import forget
from kura.recall.search import open_index
from kura.recall.spans import carrying
from kura.recall.spans import forget as forget_spans
from kura.store import catalog
from kura.store import state as st
from kura.store.atomic import write_atomic
from kura.store.store import Memory, Store
from kura.text.claim_match import words

TOMBSTONES = "tombstones.json"
# layers.pickle: an older kura's cache, never read now, but it may hold the memory's text
_MAP_FILES = ("map.md", "map.json", "sectors.md", "layers.json", "layers.pickle")
_ASIDE = tuple(f"{name}{st.ASIDE}" for name in ("search.db", "state.db", "spans.db"))  # set-aside copies
_POINTERS = ("supersedes", "superseded_by", "contradicted_by", "derived_from")


@dataclass(kw_only=True, frozen=True, slots=True)
class Closure:
    slug: str
    files: tuple[Path, ...]  # memory files: the one purged and those derived from it
    derived: tuple[str, ...]
    index_lines: tuple[str, ...]
    drafts: tuple[Path, ...]
    pointers: tuple[str, ...]  # other memories whose frontmatter points to it
    state: tuple[Path, ...] = field(default=())  # derived files that hold its text
    spans: tuple[int, ...] = field(default=())  # transcript spans that carry its words
    linked_from: tuple[str, ...] = field(default=())  # other memories whose [[links]] name it: kept
    scratch: tuple[str, ...] = field(default=())  # scratch items that say it

    def to_dict(self) -> dict[str, Any]:
        return {"slug": self.slug, "files": [str(p) for p in self.files], "derived": list(self.derived),
                "index_lines": list(self.index_lines), "drafts": [str(p) for p in self.drafts],
                "pointers": list(self.pointers), "state": [str(p) for p in self.state],
                "spans": len(self.spans), "linked_from": list(self.linked_from),
                "scratch": list(self.scratch)}  # fmt: skip


def closure(store: Store, slug: str) -> Closure:
    """What purging ``slug`` removes (see the module docstring); nothing is changed."""
    memory = store.show(slug)
    memories = store.list()
    derived = [m for m in memories if memory.slug in _named(m.note.meta.get("derived_from"))]
    gone = {memory.slug, *(m.slug for m in derived)}
    pointers = [
        m.slug for m in memories
        if m.slug not in gone and any(gone & set(_named(m.note.meta.get(k))) for k in _POINTERS)
    ]  # fmt: skip
    names = names_of(catalog.entries(store).values())  # [[Title]] links name it too
    linked = [m.slug for m in memories if m.slug not in gone and gone & set(names.linked(m.note.links))]
    lines = [ln.text for ln in store.index().lines if gone & set(ln.slugs)]
    texts = [t for m in (memory, *derived) for t in _texts(m) if len(t) >= 12]
    drafts = [p for p in _draft_files(store) if _mentions(p, gone, texts)]
    state = [store.state_dir / name for name in ("search.db", "state.db", "uses.json", *_MAP_FILES, *_ASIDE)]
    state += sorted(store.state_dir.glob("map.md.*"))
    said = carrying(store, [*texts, *(p for m in (memory, *derived) for p in m.note.body.split("\n\n"))])
    return Closure(slug=memory.slug, files=(memory.path, *(m.path for m in derived)),
                   derived=tuple(m.slug for m in derived), index_lines=tuple(lines), drafts=tuple(drafts),
                   pointers=tuple(pointers), state=tuple(p for p in state if p.exists()), spans=tuple(said),
                   linked_from=tuple(linked), scratch=tuple(sc.carrying(store, texts)))  # fmt: skip


def purge(store: Store, found: Closure, *, actor: str = "purge") -> Closure:
    """Remove everything in ``found``; the tombstone is written first, so a crash midway
    still keeps the distiller from learning it again. Every write goes as a ``purge``
    (``kura.store.policy``): a ``distiller-only`` store lets a person delete, ``frozen`` does not."""
    store.check_write(actor)
    gone = {found.slug, *found.derived}
    bury(store, [store.show(s) for s in gone])
    for slug in found.pointers:
        store.update(slug, partial(_unpointed, gone=gone), actor=actor)
    store.edit_index(lambda index: _drop_lines(index, gone), actor=actor)
    for path in (*found.files, *found.drafts):
        path.unlink(missing_ok=True)
    forget_spans(store, found.spans)
    sc.forget(store, found.scratch)
    _scrub_state(store, gone)
    return found


def waiting(store: Store, item_id: str) -> sc.Item:
    """The scratch item ``item_id``, or ``NotFound`` naming the command that lists them."""
    found = sc.load(store).items.get(item_id)
    if found is None:
        raise NotFound(f"no scratch item {item_id!r} in store '{store.name}'; `kura scratch` lists them")
    return found


def purge_waiting(store: Store, item_id: str, *, actor: str = "purge") -> sc.Item:
    """Delete one scratch item, the spans that carry its words, and leave a tombstone of
    them (written first), so reading the same journals again does not bring it back."""
    store.check_write(actor)
    found = waiting(store, item_id)
    texts = [found.claim, *(m.quote for m in found.mentions)]
    bury_texts(store, texts)
    sc.forget(store, [item_id])
    forget_spans(store, carrying(store, texts))
    return found


def _unpointed(memory: Memory, *, gone: set[str]) -> nt.MemoryFile:
    """The memory with every pointer to a purged memory taken out (read under the lock)."""
    meta = memory.note.meta
    changes = {k: _without(meta[k], gone) for k in _POINTERS if k in meta and gone & set(_named(meta[k]))}
    if "superseded_by" in changes and not changes["superseded_by"] and not meta.get("archived"):
        # what replaced it is gone, not proven wrong: the replaced fact stays history (archived,
        # found by recall --all), never current again with no line in the index
        changes |= {
            "archived": _dt.date.today().isoformat(),
            "archived_reason": "what replaced it was purged",
        }
    return memory.note.with_meta(**changes)


def _drop_lines(index: ix.Index, gone: set[str]) -> ix.Index:
    kept = tuple(ln for ln in index.lines if not gone & set(ln.slugs))
    return index if len(kept) == len(index.lines) else replace(index, lines=kept)


def _scrub_state(store: Store, gone: set[str]) -> None:
    state = store.state_dir
    search = state / "search.db"
    if search.exists():
        index = open_index(store)
        try:
            index.refresh(sorted(gone))
        finally:
            index.close()
        _compact(search, ["INSERT INTO docs_fts(docs_fts) VALUES('optimize')",
                          "DELETE FROM vectors WHERE sha NOT IN (SELECT sha FROM docs)"])  # fmt: skip
    if (state / "state.db").exists():
        marks = ",".join("?" * len(gone))
        _compact(state / "state.db", [("DELETE FROM notes WHERE slug IN (" + marks + ")", sorted(gone)),
                                      "DELETE FROM ledger", "DELETE FROM kv"])  # fmt: skip
    for name in (*_MAP_FILES, *_ASIDE):
        (state / name).unlink(missing_ok=True)
    for backup in state.glob("map.md.*"):
        backup.unlink()
    for slug in gone:
        forget(state, slug)


def _compact(path: Path, statements: Iterable[str | tuple[str, list[str]]]) -> None:
    """Delete and compact; a file that is no usable database (or not a plain file) holds
    derived text nobody can read back safely, so it is removed instead."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        st.clear(path.with_name(path.name + suffix), then="nothing is compacted through it")
    if not path.is_file():
        return
    db = sqlite3.connect(path, timeout=30)
    try:
        db.execute("PRAGMA trusted_schema = OFF")
        db.execute("PRAGMA secure_delete=ON")
        with db:
            for statement in statements:
                sql, args = statement if isinstance(statement, tuple) else (statement, [])
                try:
                    db.execute(sql, args)
                except sqlite3.OperationalError:
                    continue  # a table this version of the file does not have
        db.execute("VACUUM")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.DatabaseError as err:
        if isinstance(err, sqlite3.OperationalError) and "locked" in str(err):
            raise
        db.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)
        st.damaged(path, f"is not a usable database ({err})", "removed it instead of compacting it")
    finally:
        db.close()


# -- tombstones ---------------------------------------------------------------------------


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normal(text: str) -> str:
    return " ".join(text.lower().split()).strip(" .!?")


def signature(text: str) -> str:
    """The content words of a claim, sorted: a rewording with the same words matches."""
    found = sorted(words(text))
    return " ".join(found) if len(found) >= 3 else ""


def bury(store: Store, memories: Iterable[Memory]) -> None:
    """Add the memories' tombstones: hashes of their quotes, claims and signatures."""
    bury_texts(store, [text for memory in memories for text in _texts(memory)])


def bury_texts(store: Store, texts: Iterable[str]) -> None:
    """Add tombstones for ``texts``: hashes of each, and of its content-word signature."""
    hashes = set(tombstones(store))
    for text in texts:
        hashes.add(_digest(normal(text)))
        if signature(text):
            hashes.add(_digest("sig:" + signature(text)))
    path = st.folder(store.root, store=store.name, create=True) / TOMBSTONES
    if path.exists() and not _readable(path):  # not derived: keep what cannot be read, beside it
        path.replace(path.with_name(TOMBSTONES + st.ASIDE))
    write_atomic(path, (json.dumps(sorted(hashes), indent=0) + "\n").encode("utf-8"))


_LOST = "memories purged before may be learned again; restore it from a backup if there is one"


def tombstones(store: Store) -> frozenset[str]:
    path = store.state_dir / TOMBSTONES
    data = st.read_json(path, then=_LOST, shape=list, derived=False)
    found = frozenset(h for h in data or () if isinstance(h, str) and len(h) == 64)
    if data is not None and len(found) != len(set(map(str, data))):
        st.damaged(path, "holds entries that are not tombstone hashes", _LOST, derived=False)
    return found


def _readable(path: Path) -> bool:
    data, _ = st.plain(path)
    try:
        return isinstance(json.loads(data or b""), list)
    except (ValueError, RecursionError):
        return False


def buried(texts: Iterable[str], hashes: frozenset[str]) -> bool:
    """Whether any of ``texts`` (a candidate's quotes and statement) matches a tombstone."""
    if not hashes:
        return False
    for text in texts:
        if _digest(normal(text)) in hashes or (
            signature(text) and _digest("sig:" + signature(text)) in hashes
        ):
            return True
    return False


# -- helpers ------------------------------------------------------------------------------


def _texts(memory: Memory) -> list[str]:
    """The memory's claim, its quotes and evidence lines (the words a distiller would meet)."""
    meta = memory.note.meta
    out = [memory.description, memory.name]
    found, _ = wt.read(meta)
    out += [w.quote for w in found if w.quote]
    evidence = meta.get("evidence")
    if isinstance(evidence, list):
        out += [str(e).split("] ", 1)[-1] for e in evidence]
    return [t for t in out if t and t.strip()]


def _named(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)] if value not in (None, "") else []


def _without(value: Any, gone: set[str]) -> Any:
    if isinstance(value, list):
        return [v for v in value if str(v) not in gone]
    return None if str(value) in gone else value


def _draft_files(store: Store) -> list[Path]:
    folder = st.folder(store.root, "drafts", store=store.name)
    if not folder.is_dir():
        return []
    found = (Path(at, name) for at, _, names in walk(folder) for name in names if name.endswith(".md"))
    return sorted(p for p in found if p.is_file() and not p.is_symlink())  # not rglob: it recurses a level


def _mentions(path: Path, slugs: set[str], texts: list[str]) -> bool:
    if path.stem in slugs or path.stem.rsplit("-", 1)[0] in slugs:
        return True
    data, _ = st.plain(path)
    if data is None:
        return False
    text = " ".join(data.decode("utf-8", errors="replace").split()).lower()
    return any(" ".join(t.split()).lower() in text for t in texts) or any(
        f"extends: {s}" in text or f"extends:{s}" in text for s in slugs
    )
