"""Journals: which transcripts a store drinks from, and how far it has drunk.

Settings live in ``[stores.NAME.distill.journals]`` (one store) or ``[distill.journals]``,
which a store reads only when it opts in with ``inherit_global_journals = true`` under
``[stores.NAME.distill]`` (its own table, when it has one, replaces the global table
whole). Journals do not cross stores by default: two stores drinking from one global root
would each record the other's conversations, so a store reads only the journals named for
it, and a store that reads none because it did not opt in is told so (a finding naming the
key), never left to guess why nothing was read. Keys: ``roots`` (folders or files), ``include`` and
``exclude`` (globs on the path below a root; a glob without ``/`` matches the file name at
any depth, ``**`` crosses folders). Any other key is distill-kura's spelling, an adapter
name for a root: ``claude = "~/.claude/projects/demo"`` reads that root as Claude Code.
Beside the roots, ``files`` names transcripts one by one, each with its adapter: those a
host's hook registered for the store (``kura.hosts.host_journals``), read whatever the
globs say, and passed over quietly once gone (a finished session's file may be cleaned up).

Discovery never reads a store's own files. A root may well contain the store (a home
folder, a project with its memory inside), so the store's folder is never entered, and a
file elsewhere that *is* one of the store's files — a hardlink, a symlink — is recognised by
its device and inode and skipped: otherwise the store would read its own memories back as
fresh evidence and re-record them forever.

Progress is one watermark per source file, in ``.kura/journals.json`` (derived state:
delete it and everything is simply read again). A watermark is a ``sources.Cursor`` — byte
offset, line count, head fingerprint — and it only moves forward: by bytes while the file
grows, by line count once the file was rewritten (see ``kura.transcripts.sources``).

Reading is reserve → read → commit. ``reserve`` takes the lock, takes the complete lines
after the watermark *and* records them as this reader's reservation, then lets go; so the
reservation is exactly the bytes in hand and never more than was read, and a partial last
line is never part of one. The caller parses and distils outside the lock, then ``commit``
moves the watermark to the reservation's end (only if the reservation is still its own), or
``release`` gives the stretch back. While a reservation lives, no other reader gets that
source, so two readers never read one stretch twice and, since the watermark is only ever
set to the end of a stretch someone read, never skip one. A reader that crashed leaves a
reservation that expires (``ttl``) or whose process is gone, and the stretch is read again:
a crash costs a re-read, never a loss. Two distillers that each wrote back their own
snapshot once erased each other's progress; that is why every change is made under the
lock, on the file's current contents.
"""

from __future__ import annotations

import json
import os
import re
import socket
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kura.errors import ConfigError
from kura.files.finding import Finding
from kura.files.folder_walk import walk
from kura.files.toml_shape import did_you_mean
from kura.store import state as st
from kura.store.atomic import locked, write_atomic
from kura.transcripts.sources import FORMATS, Cursor, Raw, Stretch, take

DEFAULT_INCLUDE = ("*.jsonl", "*.md", "*.txt")
STATE_NAME = "journals.json"
LOCK_NAME = "journals.lock"
TTL = 6 * 3600.0  # seconds a reservation lives without its reader committing
_ALIASES = {"claude": "claude", "codex": "codex", "chat": "chat", "evidence": "evidence", "text": "text"}


@dataclass(frozen=True, slots=True)
class Root:
    path: Path
    fmt: str = ""  # an adapter name, or "" to detect per file


@dataclass(frozen=True, slots=True)
class Journals:
    roots: tuple[Root, ...] = ()
    include: tuple[str, ...] = DEFAULT_INCLUDE
    exclude: tuple[str, ...] = ()
    notes: tuple[Finding, ...] = ()  # why a store reads no journals, when the config says
    files: tuple[Root, ...] = ()  # transcripts named one by one (a host's hook registered them)


@dataclass(frozen=True, slots=True)
class Source:
    path: Path
    fmt: str = ""
    root: Path | None = None  # the configured journal root it was found under

    @property
    def key(self) -> str:
        return str(self.path)

    @property
    def shared(self) -> str:
        """How a memory cites this journal (``cite``): never the absolute local path."""
        return cite(self.path, self.root)


def cite(path: Path, root: Path | None) -> str:
    """``path`` as a shared store may name it: relative to its journal's root (the file's
    name when it is the root or lies outside it), with a host's encoding of the home folder
    taken off the first part (Claude Code names a project's folder ``-home-ann-ferry``), so a
    witness tells a teammate which session it came from without the home folder or the user
    name of the machine it was read on."""
    try:
        rel = path.relative_to(root).as_posix() if root is not None and path != root else path.name
    except ValueError:
        rel = path.name
    home = re.sub(r"[^A-Za-z0-9]", "-", str(Path.home()))
    first, slash, rest = rel.partition("/")
    if slash and len(home) > 1 and first.startswith(home + "-"):
        first = first[len(home) + 1 :]
    return f"{first}{slash}{rest}" if first else rest


@dataclass(frozen=True, slots=True)
class Claim:
    """A reserved stretch of one source, with its bytes already read."""

    source: Source
    token: str
    raw: Raw = field(repr=False)

    def read(self) -> Stretch:
        return self.raw.parse()


def journal_settings(
    distill: Mapping[str, Any],
    store_distill: Mapping[str, Any],
    *,
    base: Path | None = None,
    store: str = "NAME",
    config: Path | None = None,
) -> Journals:
    """The journals a store reads: its own table, else the global one only when it opts in.
    Relative roots are taken from ``base`` (the config file's folder); ``config`` is the
    file named when a global table goes unread."""
    if "journals" in store_distill:
        return _parse(store_distill["journals"], f"stores.{store}.distill.journals", base or Path.cwd())
    if "journals" not in distill:
        return Journals()
    if store_distill.get("inherit_global_journals", False):
        return _parse(distill["journals"], "distill.journals", base or Path.cwd())
    note = (
        f"store {store} reads no journals: [distill.journals] is read only by a store that opts in — "
        f"set inherit_global_journals = true under [stores.{store}.distill], or give it its own "
        f"[stores.{store}.distill.journals]"
    )
    where = str(config) if config is not None else "kura.toml"
    return Journals(notes=(Finding(where, _line_of(config, "[distill.journals]"), note, "warning"),))


def _line_of(config: Path | None, header: str) -> int:
    """The line ``header`` opens in the config file (1 when it cannot be told)."""
    try:
        lines = config.read_text(encoding="utf-8").splitlines() if config is not None else []
    except (OSError, UnicodeDecodeError):
        return 1
    return next((n for n, line in enumerate(lines, start=1) if line.strip().startswith(header)), 1)


def _parse(table: Any, where: str, base: Path) -> Journals:
    if not isinstance(table, dict):
        raise ConfigError(f"[{where}] must be a table")
    roots = [Root(_path(p, base)) for p in _strings(table.get("roots", []), where, "roots")]
    for key, value in table.items():
        if key in ("roots", "include", "exclude") or key.startswith("x_"):
            continue
        if key not in _ALIASES:
            raise ConfigError(
                f"[{where}] has unknown key {key!r}{did_you_mean(key, _ALIASES)} (known: roots, include, "
                f"exclude and the adapter names {', '.join(FORMATS)})"
            )
        roots += [Root(_path(p, base), _ALIASES[key]) for p in _strings(value, where, key)]
    include = tuple(_strings(table.get("include", list(DEFAULT_INCLUDE)), where, "include"))
    return Journals(tuple(roots), include, tuple(_strings(table.get("exclude", []), where, "exclude")))


def _strings(value: Any, where: str, key: str) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise ConfigError(f"[{where}] {key} must be a string or a list of strings, got {value!r}")
    return list(items)


def _path(text: str, base: Path) -> Path:
    path = Path(text).expanduser()
    return (path if path.is_absolute() else base / path).absolute()


# -- discovery ----------------------------------------------------------------------------


def discover(journals: Journals, store_root: Path) -> tuple[list[Source], list[Finding]]:
    """Every journal file under the roots, sorted, minus anything that is the store's."""
    store_real = Path(os.path.realpath(store_root))
    own = _identities(store_real)
    found: list[Finding] = list(journals.notes)
    sources: dict[str, Source] = {}
    seen = set(own)
    for root in journals.roots:
        if not root.path.exists():
            found.append(Finding(str(root.path), 1, "journal root does not exist; nothing read", "warning"))
            continue
        if Path(os.path.realpath(root.path)).is_relative_to(store_real):
            note = f"journal root is inside the store {store_root}; a store never reads itself"
            found.append(Finding(str(root.path), 1, note, "warning"))
            continue
        for path in _walk(root.path, store_real):
            rel = path.name if path == root.path else path.relative_to(root.path).as_posix()
            identity = _identity(path)
            if not _wanted(rel, journals) or identity in seen:
                continue  # the store's own file, or one already found through another root
            if Path(os.path.realpath(path)).is_relative_to(store_real):
                continue
            seen.add(identity)
            sources[str(path)] = Source(path, root.fmt, root.path)
    for named in journals.files:  # no globs: each was named; one that is gone is passed over
        identity = _identity(named.path)
        if identity in seen or identity == (-1, -1) or not named.path.is_file():
            continue
        if Path(os.path.realpath(named.path)).is_relative_to(store_real):
            continue
        seen.add(identity)
        sources[str(named.path)] = Source(named.path, named.fmt)  # cited by its file name
    return [sources[key] for key in sorted(sources)], found


def _walk(root: Path, store_real: Path) -> Iterator[Path]:
    if root.is_file():
        yield root
        return
    for folder, dirs, files in walk(root):  # not os.walk: a deep tree would end it
        dirs[:] = sorted(d for d in dirs if os.path.realpath(Path(folder) / d) != str(store_real))
        for name in sorted(files):
            path = Path(folder) / name
            if path.is_file():
                yield path


def _identities(store_real: Path) -> set[tuple[int, int]]:
    seen: set[tuple[int, int]] = set()
    if store_real.is_dir():
        for folder, _dirs, files in walk(store_real):
            seen.update(_identity(Path(folder) / name) for name in files)
    seen.discard((-1, -1))
    return seen


def _identity(path: Path) -> tuple[int, int]:
    try:
        info = path.stat()
    except OSError:
        return (-1, -1)
    return (info.st_dev, info.st_ino)


def _wanted(rel: str, journals: Journals) -> bool:
    return any(_match(rel, g) for g in journals.include) and not any(_match(rel, g) for g in journals.exclude)


def _match(rel: str, pattern: str) -> bool:
    target = rel if "/" in pattern else rel.rsplit("/", 1)[-1]
    return re.fullmatch(_glob(pattern), target) is not None


def _glob(pattern: str) -> str:
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        else:
            char = pattern[i]
            out += "[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char)
            i += 1
    return out


# -- watermarks ---------------------------------------------------------------------------


def watermark(state_dir: Path, source: Source) -> Cursor:
    """How far ``source`` has been committed (not counting live reservations)."""
    entry = _load(state_dir).get(source.key, {})
    return Cursor(**{k: entry[k] for k in ("offset", "line", "head") if k in entry})


def reserve(state_dir: Path, source: Source, *, max_bytes: int = 0, ttl: float = TTL) -> Claim | None:
    """Reserve and read the next stretch of ``source``; None when there is nothing new or
    another live reader holds it. A claim with an empty ``token`` reserved nothing and only
    carries findings (a rewrite, a file of unknown format), so they are never lost."""
    with locked(state_dir / LOCK_NAME):
        state = _load(state_dir)
        entry = state.get(source.key, {})
        if _live(entry.get("reservation")):
            return None
        mark = Cursor(**{k: entry[k] for k in ("offset", "line", "head") if k in entry})
        raw = take(source.path, mark, fmt=source.fmt or None, max_bytes=max_bytes)
        if raw.rewritten and raw.start.line == mark.line:
            entry.update(asdict(raw.start))  # the same line, re-derived in the new file's bytes
        if raw.end.line == raw.start.line:
            entry.pop("reservation", None)
            state[source.key] = entry
            _save(state_dir, state)
            return Claim(source, "", raw) if raw.findings else None
        token = uuid.uuid4().hex
        entry["reservation"] = {
            "token": token,
            "end": asdict(raw.end),
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "expires": time.time() + ttl,
        }
        state[source.key] = entry
        _save(state_dir, state)
    return Claim(source, token, raw)


def commit(state_dir: Path, claim: Claim) -> bool:
    """Move the watermark to the end of a claim; False when the claim was no longer ours
    (it expired and was given back), in which case nothing moves."""
    if not claim.token:
        return True  # it reserved nothing
    with locked(state_dir / LOCK_NAME):
        state = _load(state_dir)
        entry = state.get(claim.source.key, {})
        if (entry.get("reservation") or {}).get("token") != claim.token:
            return False
        del entry["reservation"]
        if claim.raw.end.line >= int(entry.get("line", 0)):
            entry.update(asdict(claim.raw.end))
        state[claim.source.key] = entry
        _save(state_dir, state)
    return True


def adopt(state_dir: Path, source: Source, cursor: Cursor) -> bool:
    """Set ``source``'s watermark to ``cursor`` (another distiller's progress, carried over
    by an import) when that is further than it is: a watermark only moves forward. True
    when it moved."""
    with locked(state_dir / LOCK_NAME):
        state = _load(state_dir)
        entry = state.get(source.key, {})
        if int(entry.get("offset", 0)) >= cursor.offset:
            return False
        entry.update(asdict(cursor))
        state[source.key] = entry
        _save(state_dir, state)
    return True


def release(state_dir: Path, claim: Claim) -> None:
    """Give a claim back unread: the watermark stays, the stretch is read again later."""
    with locked(state_dir / LOCK_NAME):
        state = _load(state_dir)
        entry = state.get(claim.source.key, {})
        if (entry.get("reservation") or {}).get("token") == claim.token:
            del entry["reservation"]
            _save(state_dir, state)


def reset(state_dir: Path, source: Source) -> None:
    """Forget a source's watermark (an explicit act): it is read again from the start."""
    with locked(state_dir / LOCK_NAME):
        state = _load(state_dir)
        if state.pop(source.key, None) is not None:
            _save(state_dir, state)


def _live(reservation: Any) -> bool:
    if not isinstance(reservation, dict) or float(reservation.get("expires", 0)) <= time.time():
        return False
    if reservation.get("host") != socket.gethostname():
        return True
    try:
        os.kill(int(reservation.get("pid", 0)), 0)
    except ProcessLookupError:
        return False
    except (OSError, ValueError):
        return True
    return True


_THEN = "those journals are read again from the start"


def _load(state_dir: Path) -> dict[str, Any]:
    """Every source's entry; one that is not what ``_save`` writes is dropped (derived
    state: its journal is simply read again), and that is said on stderr."""
    path = state_dir / STATE_NAME
    data = st.read_json(path, then=_THEN)
    if data is None:
        return {}
    sources = data.get("sources")
    if not isinstance(sources, dict):
        st.damaged(path, "has no table of sources", _THEN)
        return {}
    kept = {key: entry for key, entry in sources.items() if _entry_ok(entry)}
    if len(kept) != len(sources):
        st.damaged(path, f"holds {len(sources) - len(kept)} entries of the wrong shape", _THEN)
    return kept


def _entry_ok(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    counts = [entry.get(k, 0) for k in ("offset", "line")]
    if not all(type(n) is int and n >= 0 for n in counts) or not isinstance(entry.get("head", ""), str):
        return False
    held = entry.get("reservation")
    if held is None:
        return True
    end = held.get("end") if isinstance(held, dict) else None
    if not isinstance(held, dict) or not isinstance(end, dict):
        return False
    return (
        isinstance(held.get("token"), str) and isinstance(held.get("host", ""), str)
        and type(held.get("pid", 0)) is int and type(held.get("expires", 0)) in (int, float)
        and _entry_ok({k: end[k] for k in ("offset", "line", "head") if k in end})
    )  # fmt: skip


def _save(state_dir: Path, sources: dict[str, Any]) -> None:
    data = json.dumps({"version": 1, "sources": sources}, indent=1, sort_keys=True)
    write_atomic(state_dir / STATE_NAME, (data + "\n").encode("utf-8"))
