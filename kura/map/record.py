"""The weave's record in ``.kura/map.json``, and what of it a prefill may believe.

The record says which cloth the last weave wrote, for which files and settings, and what
it cost. It is derived state that may arrive in a cloned folder, so every field is checked
for its type before use, the cloth must be the one the settings name and hash to what the
record says, and the fingerprint binds it all to this disk (inodes and times, which a
clone cannot reproduce); anything else is woven again, and stderr says why once.
This module is on the shell-hook path: it imports nothing heavy.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kura.errors import KuraError
from kura.files.slugs import Stats, identity, stamp_files
from kura.map_settings import MapSettings
from kura.store import state as st
from kura.text.triggers import VERSION

if TYPE_CHECKING:
    from kura.config import ModelConfig

REWEAVE = "the map is woven again"
SECTORS = "sectors.md"  # the sector map the last weave stored beside the cloth, in .kura
_META: dict[str, type | tuple[type, ...]] = {
    "fingerprint": str, "scribe": str, "cloth": str, "settings": str, "cloth_sha": str,
    "index_stamp": str, "floor": int, "store": str, "tokens": int, "budget": int,
    "fresh_days": (int, float), "over_budget": bool, "weight": dict, "layers": dict, "notes": list,
}  # fmt: skip


def stored_map(
    root: Path, stamp: str, *, scribes: tuple[str, ...], cloth: Path
) -> tuple[dict[str, Any], str] | None:
    """The last weave's summary and cloth, if its stamp is ``stamp``, its triggers came
    from one of ``scribes``, the cloth at ``cloth`` (where the settings put it) is the one
    that weave wrote, and it recorded the cloth's folds (a map.json from before folds were
    recorded is woven again, once)."""
    try:  # the record says whether it is current: the cloth is read only when it is
        meta = map_meta(root)
    except KuraError:
        return None
    if meta is None or meta["fingerprint"] != stamp or meta["scribe"] not in scribes:
        return None
    found = last_map(root, cloth, meta)
    return found if found is not None and isinstance(found[0].get("folds"), list) else None


def pinned_lines(meta: dict[str, Any], text: str) -> list[int] | None:
    """The cloth's pinned lines map.json records (0-based, ascending, each a line of
    ``text``); None when it records none that can be believed (a map.json from before they
    were recorded, or one a clone carried with anything else in that field)."""
    raw = meta.get("pinned")
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if not isinstance(raw, list) or not all(type(n) is int and 0 <= n < lines for n in raw):
        return None
    return raw if raw == sorted(set(raw)) else None


def last_map(
    root: Path, cloth: Path, meta: dict[str, Any] | None = None
) -> tuple[dict[str, Any], str] | None:
    """The last map woven — whatever has changed since — when its record is whole and the
    cloth at ``cloth`` is exactly the one that weave wrote (``meta``: the record, when the
    caller has just read it)."""
    try:
        meta = map_meta(root) if meta is None else meta
    except KuraError:  # a .kura that is a link or a file: nothing stored is read through it
        return None
    if meta is None:
        return None
    if cloth_file(root, meta["cloth"]) != cloth:
        st.damaged(st.folder(root) / "map.json", f"names {meta['cloth']} as the map, not {cloth}", REWEAVE)
        return None
    text = st.read_text(cloth, then=REWEAVE)
    if text is None:
        return None
    if hashlib.sha256(text.encode("utf-8")).hexdigest() != meta["cloth_sha"]:
        st.damaged(cloth, "is not the map the last weave recorded in map.json", REWEAVE)
        return None
    return meta, text


def map_meta(root: Path) -> dict[str, Any] | None:
    """The last weave's record (``.kura/map.json``) if every field has its type, else None
    (said on stderr when there was a file). StoreError when .kura is a link or a file."""
    path = st.folder(root) / "map.json"
    meta: dict[str, Any] | None = st.read_json(path, then=REWEAVE)
    if meta is None:
        return None
    wrong = [key for key, kind in _META.items() if not _typed(meta.get(key), kind)]
    if not wrong:
        counts = [*meta["weight"].values(), *meta["layers"].values()]
        wrong = [] if all(type(n) is int for n in counts) else ["weight or layers"]
        wrong += [] if all(isinstance(n, str) for n in meta["notes"]) else ["notes"]
    if wrong:
        st.damaged(path, f"holds fields of the wrong type ({', '.join(wrong)})", REWEAVE)
        return None
    return meta


def fingerprint(root: Path, settings: MapSettings, *, today: dt.date, stats: Stats | None = None) -> str:
    """Changes whenever the woven map could: a memory file or the index changed (or moved),
    the settings changed, the day turned (freshness is counted in days), or git's HEAD
    moved (ages come from commits)."""
    files = stamp_files(root) if stats is None else identity(stats)
    parts = [files, settings.key(), today.isoformat(), str(VERSION), git_head(root)]
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


def scribe_id(scribe: ModelConfig | None) -> str:
    return f"{scribe.url}|{scribe.model}" if scribe is not None else ""


def summary_line(summary: dict[str, Any], *, written: bool, forced: bool = False) -> str:
    """``kura weave``'s one line, from a weave's summary (fresh or stored). ``forced``: woven
    again from the files (``--force``) whatever it came out as — work done, said as such."""
    layers = ", ".join(f"{k} {v}" for k, v in sorted(summary["layers"].items()))
    verb = "wove" if written else "rewove" if forced else "unchanged:"
    same = (
        " (forced; it came out the same, so the saved map was left as it was)"
        if forced and not written
        else ""
    )
    return (
        f"{verb} {summary['store']} map{same}, ~{summary['tokens']} of {summary['budget']} tokens ({layers}; "
        f"fresh window {float(summary['fresh_days']):g} days)"
    )


def _typed(value: Any, kind: type | tuple[type, ...]) -> bool:
    return isinstance(value, kind) and (kind is bool or not isinstance(value, bool))


def cloth_target(root: Path, settings: MapSettings) -> Path:
    """Where the woven map is kept: ``[prefill] cloth_path`` (relative to the store), else
    ``.kura/map.md`` (StoreError when .kura is a link or a file)."""
    if not settings.cloth_path:
        return st.folder(root) / "map.md"
    path = Path(settings.cloth_path).expanduser()
    return path if path.is_absolute() else root / path


def cloth_file(root: Path, recorded: str) -> Path:
    """Where map.json says the cloth is (relative paths are inside the store)."""
    path = Path(recorded)
    return path if path.is_absolute() else root / path


def git_head(root: Path) -> str:
    """The commit git's HEAD names for the work tree holding ``root`` ("" outside git),
    read from the files under .git, so a shell hook pays no subprocess for it."""
    for folder in (root, *root.parents):
        dotgit = folder / ".git"
        try:
            if dotgit.is_file():
                dotgit = (folder / dotgit.read_text().strip().removeprefix("gitdir:").strip()).resolve()
            elif not dotgit.is_dir():
                continue
            head = (dotgit / "HEAD").read_text().strip()
        except OSError:
            return ""
        if not head.startswith("ref: "):
            return head
        common = dotgit
        if (dotgit / "commondir").is_file():
            common = (dotgit / (dotgit / "commondir").read_text().strip()).resolve()
        ref = head[5:]
        for base in (dotgit, common):
            if (base / ref).is_file():
                return (base / ref).read_text().strip()
        packed = _text(common / "packed-refs")
        found = [line.split()[0] for line in packed.splitlines() if line.endswith(" " + ref)]
        return found[0] if found else head
    return ""


def index_stamp(index_path: Path) -> str:
    seen = index_path.stat()
    return f"{seen.st_ino}-{seen.st_size}-{seen.st_mtime_ns}-{seen.st_ctime_ns}"


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
