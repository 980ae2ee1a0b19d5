"""Direct writes that correct a memory: what ``remember --supersedes`` records, and what a
write that only looks like a correction is told.

The distiller reads a sentence that revises a live memory as a correction and supersedes the
old memory (``kura.text.claim_match``, ``kura.life.lifecycle.supersede``). A person or an agent writing
directly gets the same record when they name what they replace — and a word when they do
not, because two live memories that disagree are both served as current fact, and only the
writer knows which one holds. ``kura doctor`` lists the pairs that are live anyway.

A supersession is three locked writes (the new memory, the old one, the index), ordered so
that what lies between them misleads nobody: everything that would refuse is checked before
anything is written; the new memory is written already naming the old one in
``supersedes``, so a later failure leaves a record of what was meant, and running the same
write again finishes it; only then is the old memory marked and taken off the index.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from kura.errors import KuraError, NotFound, StoreError
from kura.files import memory_file as nt
from kura.files.memory import WriteResult
from kura.files.slugs import new_slug
from kura.life import lifecycle
from kura.store import catalog, write_checks
from kura.store.store import Store
from kura.text import claim_match as rules
from kura.text import triggers as stop_words
from kura.text.claim_match import FAMILY, negated, pairs, relate, words
from kura.text.moves import moved
from kura.text.secrets import refuse_secrets
from kura.version import __version__

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Remembered:
    """What a direct write did, and what its writer should know about it."""

    result: WriteResult
    superseded: str = ""  # the memory this write replaced
    marked: bool = False  # whether recording that replacement changed anything
    revises: str = ""  # a live memory the new claim appears to revise, left current
    revised_claim: str = ""  # that memory's description
    until: str = ""  # the replaced memory's valid_until

    @property
    def did_work(self) -> bool:
        return self.result.did_work or self.marked


def remember(
    store: Store,
    slug: str,
    description: str,
    body: str | None = None,
    *,
    type: str | None = None,
    title: str | None = None,
    supersedes: str | None = None,
    amend: Callable[[nt.MemoryFile], nt.MemoryFile] | None = None,
    actor: str = "direct",
) -> Remembered:
    """``Store.remember``, and with ``supersedes`` the old memory replaced as the distiller
    replaces one; without it, the live memory the write appears to revise, if any."""
    if not supersedes:
        result = store.remember(slug, description, body, type=type, title=title, amend=amend, actor=actor)
        found = _advice(lambda: revision(store, result.slug, description))
        return Remembered(result, revises=found[0], revised_claim=found[1]) if found else Remembered(result)
    store.check_write(actor)  # a store that takes no write says so first
    refuse_secrets(f"store '{store.name}', the slug", slug, supersedes)  # names are echoed below
    old = replaceable(store, supersedes, new_slug(slug))

    def naming(note: nt.MemoryFile) -> nt.MemoryFile:
        note = lifecycle.naming(note, old)
        return amend(note) if amend is not None else note

    result = store.remember(slug, description, body, type=type, title=title, amend=naming, actor=actor)
    try:
        marked = lifecycle.supersede(store, old, result.slug, actor=actor)
    except (KuraError, OSError) as err:
        done = "created" if result.created else "written"
        raise StoreError(
            f"{store.name}/{result.slug}: {done}, and it names {old} in supersedes, but {old} was not "
            f"marked as replaced ({err}): both are current until it is — repeat this write to finish"
        ) from err
    until = _advice(lambda: str(store.show(old).note.meta.get("valid_until") or ""))
    return Remembered(result, superseded=old, marked=marked, until=until or "")


def replaceable(store: Store, old: str, new: str) -> str:
    """The slug of the memory ``new`` may supersede, or a refusal made before anything is
    written: no such memory, the memory itself, one already replaced by another, a file kura
    could only mangle, or ``new`` itself replaced (nothing would be current)."""
    where = f"{store.name}/{new}"

    def refused(why: str) -> StoreError:
        return StoreError(f"{where}: cannot supersede {old!r}: {why}; nothing was written")

    try:
        data, was = store.read(old)
    except NotFound:
        raise StoreError(
            f"{where}: cannot supersede {old!r}: no memory {old!r} in store '{store.name}'; nothing was "
            "written — `kura list` shows what there is"
        ) from None
    if was.slug == new:
        raise StoreError(f"{where}: a memory cannot supersede itself; nothing was written")
    if not data and was.findings:  # a file that must not be read (a link out, a FIFO, too big)
        raise refused("; ".join(f.message for f in was.findings))
    try:
        write_checks.check_rewritable(was.path, was.note)
    except StoreError as err:
        raise refused(str(err)) from None
    taken = str(was.note.meta.get("superseded_by") or "")
    if taken and taken != new:
        raise refused(f"it is already superseded by {taken} — supersede that one instead")
    try:
        replaced_by = str(store.show(new).note.meta.get("superseded_by") or "")
    except NotFound:
        replaced_by = ""  # a new memory
    if replaced_by:
        raise refused(f"{new} is itself superseded by {replaced_by}, so neither would be current")
    return was.slug


def revision(store: Store, slug: str, description: str) -> tuple[str, str] | None:
    """The live memory (slug, description) other than ``slug`` whose claim ``description``
    revises (``kura.text.claim_match``: same subject, new value; or ``kura.text.moves``: a move
    away from what it says), if there is one — and none when it revises more than ``FAMILY``: a
    pattern many memories share, not one fact corrected."""
    entries = catalog.entries(store)
    claim = (words(description), negated(description))
    live = [(s, e.description) for s, e in sorted(entries.items()) if s != slug and not e.retired]
    found = [s for s, text in live if relate(claim, (words(text), negated(text))) == "revision"]
    found = found or [s for s in (moved(description, live),) if s]  # "moved the app off Heroku to …"
    return (found[0], entries[found[0]].description) if 0 < len(found) <= FAMILY else None


def conflicts(
    store: str, entries: dict[str, catalog.Entry], *, remembered: Store | None = None
) -> Iterator[nt.Finding]:
    """One warning per pair of live memories where one revises the other: both are served
    as current fact. The newer one (by written date, then by file time) is named first.
    ``remembered``: the store whose catalog keeps the pairs of its current claims
    (``live_pairs``), so a doctor of an unchanged store does not pair them again."""
    live = {slug: e.description for slug, e in entries.items() if not e.retired and e.description}
    for a, b in pairs(live) if remembered is None else live_pairs(remembered, live):
        old, new = sorted((entries[a], entries[b]), key=_age)
        command = f"kura remember {new.slug} {shlex.quote(new.description)} --supersedes {old.slug}"
        yield nt.Finding(
            f"{store}/{new.rel}", 1,
            f'{new.slug} and {old.slug} revise one another ("{new.description}" / "{old.description}") '
            f"and both are served as current — if {new.slug} replaces {old.slug}: {command} (or the "
            "other way round); if both hold, say in their descriptions what tells them apart",
            "warning",
        )  # fmt: skip


_PAIRS_KEY = "claim-pairs"
_PAIRS_CAP = 1 << 22  # characters of a remembered answer past which it is not read


def live_pairs(store: Store, live: dict[str, str]) -> list[tuple[str, str]]:
    """``pairs(live)``, remembered in the store's catalog under a digest of every claim and
    of the code that pairs them (``kura.text.claim_match``, its stop words, kura's version):
    at 20,000 memories pairing takes a third of a doctor, and most doctors see the claims
    the last one saw. The state folder is untrusted: an answer is used only when it is the
    shape this code writes, for this digest, naming live claims in ``pairs``' order; else
    the claims are paired again (and that answer kept). A state folder that cannot be
    written only means pairing every time."""
    try:
        digest = _claims_digest(live)
        db = catalog.connect(store)
    except (OSError, sqlite3.Error):  # the code's own files unreadable (a frozen install)
        return pairs(live)
    try:
        kept = _remembered(catalog.kv_get(db, _PAIRS_KEY), digest, live)
        if kept is not None:
            return kept
        found = pairs(live)
        catalog.kv_put(db, _PAIRS_KEY, json.dumps({"digest": digest, "pairs": found}))
        return found
    except sqlite3.Error:
        return pairs(live)
    finally:
        db.close()


def _claims_digest(live: dict[str, str]) -> str:
    code = b"".join(Path(module.__file__ or "").read_bytes() for module in (rules, stop_words))
    digest = hashlib.sha256(code + __version__.encode() + b"\0" + str(FAMILY).encode() + b"\0")
    digest.update(json.dumps(sorted(live.items())).encode())  # ASCII: any text, one way
    return digest.hexdigest()


def _remembered(text: str | None, digest: str, live: dict[str, str]) -> list[tuple[str, str]] | None:
    if text is None or len(text) > _PAIRS_CAP:
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("digest") != digest or not isinstance(data.get("pairs"), list):
        return None
    found = [tuple(pair) for pair in data["pairs"] if isinstance(pair, list) and len(pair) == 2]
    if len(found) != len(data["pairs"]) or not all(
        isinstance(a, str) and isinstance(b, str) and a in live and b in live and a < b for a, b in found
    ):
        return None
    return found if found == sorted(set(found)) else None


def _advice(call: Callable[[], T]) -> T | None:
    """What is said after a write that succeeded: a store that cannot be read for it now (a
    catalog locked or gone, a file removed meanwhile) leaves it unsaid, never fails the write."""
    try:
        return call()
    except (KuraError, OSError, sqlite3.Error):
        return None


def _age(entry: catalog.Entry) -> tuple[str, int, str]:
    return (entry.written_text, entry.mtime_ns, entry.slug)
