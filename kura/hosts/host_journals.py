"""Transcripts a host keeps, registered as journals without editing kura.toml.

A host hands its hooks the transcript of the session (Claude Code's ``transcript_path``);
Codex keeps every rollout under ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``. Asking a
person to list those in ``[stores.NAME.distill.journals]`` is the step nobody takes, so
they are registered instead, in two places:

- **per store**: ``STORE/.kura/host-journals.json`` names each transcript a hook saw for
  that store, with its host (the adapter that reads it) and the sizes the transcript had
  when the host said it was about to compact (``compact_at``, settled once the ladder has
  marked what fell out of the window);
- **per person**: ``host-journals.json`` beside the user's kura.toml (``$KURA_HOME``)
  names Codex session folders. A rollout's first record (``session_meta``) carries the
  folder the session ran in; a pass sends a rollout to a store only when a command run in
  that folder would work on that store (``store_for``), so one project's sessions never
  reach another project's store. The folder read from each rollout is kept beside it
  (``codex-cwds.json``), so a pass reads a rollout's first record once, not every time.

These files are derived state and untrusted on read (a cloned repository may carry a
``.kura/``): an entry that is not what ``register`` writes is left out, and a file that is
not this JSON is started afresh. The store's registry is signed, each entry with the
distiller's key (``kura.distill.signature``), so one planted there — naming another
project's transcripts — is not read. Every write is atomic under a lock. A registered path
is only ever read, as the adapter its host names, never by guessing, and a store never
reads its own files through one (``kura.transcripts.journals.discover``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kura import config as cfg
from kura.distill import signature
from kura.errors import InvalidRequest, KuraError
from kura.files.folder_walk import walk
from kura.store import state as st
from kura.store.atomic import locked, write_atomic
from kura.transcripts import journals as jr

if TYPE_CHECKING:
    from kura.store.store import Store

REGISTRY = "host-journals.json"
LOCK = "host-journals.lock"
HOSTS = ("claude", "codex")  # adapter names (kura.transcripts.adapters)
MAX_TRANSCRIPTS = 2000  # the most recent ones are kept; an older one's watermark stays
MAX_MARKS = 50  # compaction marks kept per transcript
META_BYTES = 1 << 20  # how much of a rollout's first line is read for its folder
_THEN = "the transcripts hooks registered are registered again as the hooks fire"


@dataclass(frozen=True, slots=True)
class Registered:
    """A transcript a hook registered: its path, its host's adapter, its session, and the
    sizes it had at each compaction not yet settled."""

    path: Path
    host: str
    session: str = ""
    compact_at: tuple[int, ...] = ()


def register(state_dir: Path, transcript: Path, *, host: str = "claude", session: str = "",
             compact: bool = False) -> bool:  # fmt: skip
    """Name ``transcript`` as a journal of the store whose state folder is ``state_dir``;
    ``compact``: the host is about to compact it, so what it holds now falls out of the
    window. True when the registry changed."""
    if host not in HOSTS:
        raise InvalidRequest(f"unknown host adapter {host!r} (known: {', '.join(HOSTS)})")
    path = Path(os.path.abspath(transcript))
    size = _size(path) if compact else -1
    with locked(state_dir / LOCK):
        entries = _load(state_dir)
        old = next((e for e in entries if e.path == path), None)
        before = old.compact_at if old is not None else ()
        marks = before + ((size,) if size > 0 and size not in before else ())
        new = Registered(path, host, session or (old.session if old else ""), marks[-MAX_MARKS:])
        if new == old:
            return False
        kept = [e for e in entries if e.path != path] + [new]  # the newest last: the oldest go first
        _save(state_dir, kept[-MAX_TRANSCRIPTS:])
    return True


def registered(state_dir: Path) -> list[Registered]:
    """The transcripts registered for the store (validated; none when there is no registry)."""
    return _load(state_dir)


def settle(state_dir: Path, done: dict[Path, tuple[int, ...]]) -> None:
    """Forget the compaction marks in ``done`` (the ladder has applied them)."""
    with locked(state_dir / LOCK):
        entries = _load(state_dir)
        kept = [replace(e, compact_at=tuple(s for s in e.compact_at if s not in done.get(e.path, ())))
                for e in entries]  # fmt: skip
        if kept != entries:
            _save(state_dir, kept)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def _load(state_dir: Path) -> list[Registered]:
    data = st.read_json(state_dir / REGISTRY, then=_THEN)
    rows = data.get("transcripts") if isinstance(data, dict) else None
    if data is None:
        return []
    if not isinstance(rows, list):
        st.damaged(state_dir / REGISTRY, "has no list of transcripts", _THEN)
        return []
    entries = [e for e in (_entry(state_dir, row) for row in rows) if e is not None]
    if len(entries) != len(rows):
        st.damaged(
            state_dir / REGISTRY, f"holds {len(rows) - len(entries)} entries of the wrong shape", _THEN
        )
    return entries


def _entry(state_dir: Path, row: Any) -> Registered | None:
    """The entry a row is, if it is one ``_save`` wrote: its shape, and its mark under the
    store's distiller key (``kura.distill.signature``), so a registry that came with a clone
    — naming another project's transcripts — reads as empty."""
    if not isinstance(row, dict) or not isinstance(row.get("mark"), str):
        return None
    if not signature.matches(state_dir, {k: v for k, v in row.items() if k != "mark"}, row["mark"]):
        return None
    path, host, session, marks = (
        row.get("path"),
        row.get("host"),
        row.get("session", ""),
        row.get("compact_at", []),
    )
    if not isinstance(path, str) or not os.path.isabs(path) or "\x00" in path or not path.endswith(".jsonl"):
        return None
    if host not in HOSTS or not isinstance(session, str) or len(session) > 200 or not isinstance(marks, list):
        return None
    if not all(type(m) is int and m > 0 for m in marks):
        return None
    return Registered(Path(path), str(host), session, tuple(marks[-MAX_MARKS:]))


def _save(state_dir: Path, entries: list[Registered]) -> None:
    rows = [{"path": str(e.path), "host": e.host, "session": e.session, "compact_at": list(e.compact_at)}
            for e in entries]  # fmt: skip
    rows = [{**row, "mark": signature.sign(state_dir, row)} for row in rows]
    data = json.dumps({"version": 1, "transcripts": rows}, indent=1)
    write_atomic(state_dir / REGISTRY, (data + "\n").encode("utf-8"))


# -- the store a folder works on --------------------------------------------------------------


def store_for(cwd: Path, selector: str | None = None) -> cfg.StoreConfig:
    """The store a command run in ``cwd`` works on (``selector``: one named, as ``-s`` would);
    NoStore (a KuraError) when there is none."""
    return cfg.load_config(cwd=cwd).store_config(selector)


def with_hosts(journals: jr.Journals, store: Store) -> jr.Journals:
    """``journals`` plus every transcript a hook registered for ``store`` and every Codex
    rollout that ran in a folder whose store is ``store``."""
    own = [jr.Root(e.path, e.host) for e in registered(store.state_dir)]
    codex = [jr.Root(p, "codex") for p in codex_rollouts(store.root)]
    return replace(journals, files=(*journals.files, *own, *codex))


# -- Codex ------------------------------------------------------------------------------------


def user_registry() -> Path:
    """``host-journals.json`` beside the user's kura.toml (``$KURA_HOME``, else the config dir)."""
    return cfg.user_config_path().parent / REGISTRY


def register_codex(sessions: Path) -> bool:
    """Register Codex's rollout folder (``~/.codex/sessions``) as a journal whose sessions go
    to the store of the project each ran in; True when it was not registered before."""
    folder = os.path.abspath(sessions.expanduser())
    path = user_registry()
    with locked(path.parent / LOCK):
        known = codex_folders()
        if Path(folder) in known:
            return False
        rows = [str(p) for p in (*known, Path(folder))]
        write_atomic(path, (json.dumps({"version": 1, "codex": rows}, indent=1) + "\n").encode("utf-8"))
    return True


def codex_folders() -> list[Path]:
    """The Codex session folders the person registered (validated)."""
    data = st.read_json(
        user_registry(), then="no Codex sessions are read until `kura setup codex` runs again"
    )
    rows = data.get("codex") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        return []
    return [Path(r) for r in rows if isinstance(r, str) and os.path.isabs(r) and "\x00" not in r]


def codex_rollouts(store_root: Path) -> list[Path]:
    """Every registered rollout whose session ran in a folder whose store is ``store_root``."""
    target = os.path.realpath(store_root)
    owners: dict[str, str | None] = {}
    known = _seen_cwds()
    found, learned = [], {}
    for folder in codex_folders():
        for rollout in _rollouts(folder):
            cwd = known.get(str(rollout)) or rollout_cwd(rollout)
            if cwd is None:
                continue
            learned[str(rollout)] = cwd
            if cwd not in owners:
                owners[cwd] = _owner(Path(cwd))
            if owners[cwd] == target:
                found.append(rollout)
    if learned != known:
        _remember_cwds(learned)
    return found


CWDS = "codex-cwds.json"  # rollout → the folder its session ran in (a session_meta never changes)


def _seen_cwds() -> dict[str, str]:
    """The folders already read from rollouts' first records (the person's own state)."""
    data = st.read_json(user_registry().parent / CWDS, then="the rollouts' first records are read again")
    rows = data.get("cwds") if isinstance(data, dict) else None
    if not isinstance(rows, dict):
        return {}
    return {k: v for k, v in rows.items() if isinstance(v, str) and os.path.isabs(k) and os.path.isabs(v)}


def _remember_cwds(cwds: dict[str, str]) -> None:
    path = user_registry().parent / CWDS
    try:
        with locked(path.parent / LOCK):
            write_atomic(path, (json.dumps({"version": 1, "cwds": cwds}, indent=0) + "\n").encode("utf-8"))
    except KuraError:
        pass  # a cache: the first records are read again next time


def _rollouts(folder: Path) -> Iterator[Path]:
    if not folder.is_dir():
        return
    for parent, dirs, files in walk(folder):  # not os.walk: a deep tree would end it
        dirs.sort()
        for name in sorted(files):
            if name.startswith("rollout-") and name.endswith(".jsonl"):
                yield Path(parent) / name


def rollout_cwd(rollout: Path) -> str | None:
    """The folder a Codex session ran in, from its first ``session_meta`` record; None when
    the first line is not one (or the folder is not an absolute path)."""
    try:
        with open(rollout, "rb") as handle:
            first = handle.readline(META_BYTES)
        obj = json.loads(first)
    except (OSError, ValueError, RecursionError):
        return None
    payload = obj.get("payload") if isinstance(obj, dict) and obj.get("type") == "session_meta" else None
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    if not isinstance(cwd, str) or not os.path.isabs(cwd) or "\x00" in cwd:
        return None
    return cwd


def _owner(cwd: Path) -> str | None:
    """The real folder of the store a command run in ``cwd`` works on, if any."""
    if not cwd.is_dir():
        return None
    try:
        return os.path.realpath(store_for(cwd).path)
    except KuraError:
        return None
