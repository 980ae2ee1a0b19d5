"""The resident block: the map a shell hook puts at the front of every system prompt.

A prefix cache is lost from the first changed byte on, and the map is the largest stable
block in the prompt, so the block contains nothing that ticks — no date, clock, counter or
session id — and a header that does is refused when the block is built, not discovered
three weeks later as mysteriously slow turns. Unchanged memories give byte-identical
output, with an ETag so callers can tell cheaply.

It never hands over half a map. A truncated list looks complete and makes every memory
below the cut seem not to exist, so:

* within ``budget_fraction`` of the window: the map;
* over it: still the whole map, with a warning in the JSON only (a banner in the text
  would itself be volatile);
* over ``hard_fraction``: no list at all but a *sector map* — the index's sections with
  counts and a few titles — marked as not the full map, telling the agent to recall;
* store unreadable: a block saying the map is MISSING, not empty.

What the last weave left in the state folder is trusted only as far as this disk vouches
for it: the stored map is served when ``map.json`` — every field checked for its type —
carries the fingerprint of the files as they are now (inodes and times no clone can
reproduce) and the cloth's digest, and the stored sector map only beside the index it
was made from. Anything else is woven again (``kura.state`` says so on stderr).

This module is on the shell-hook path, so it imports only what a current map needs; the
weave (YAML, SQLite, git) is loaded only when the woven map is stale.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kura import state as st
from kura.errors import ConfigError, KuraError
from kura.index import Index, parse_index
from kura.slugs import Stats, identity, index_file, stamp_files
from kura.tokens import estimate_tokens

if TYPE_CHECKING:
    from kura.config import ModelConfig

OPEN = "<<<KURA-MAP store={name}>>>"
CLOSE = "<<<END KURA-MAP>>>"
DEFAULT_HEADER = (
    "This is the map of what you remember (kura store '{name}'), one line per memory. "
    "If a topic is on this list, it is remembered: open that memory (kura show SLUG, or the "
    "kura_read tool) before you answer about it. If a topic is not on this list, it is not "
    "remembered: say so instead of guessing."
)
MAX_QUICK_PARSE = 2000
SECTORS = "sectors.md"
_VOLATILE = (
    (re.compile(r"\b\d{4}-\d{2}-\d{2}\b"), "a date"),
    (re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b"), "a time of day"),
    (
        re.compile(r"(?i)\b(?:today|tonight|yesterday|tomorrow|now|current(?:ly)? time)\b"),
        "a moving time word",
    ),
    (re.compile(r"(?i)\b(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*day\b"), "a weekday"),
    (re.compile(r"\{\{?\s*\w+\s*\}?\}|%[a-zA-Z]|\$\(|\$\{?[A-Z_]{2,}"), "a placeholder that expands"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-|\b[0-9a-f]{16,}\b", re.I), "an id"),
    (re.compile(r"(?i)\b(?:session|turn|run|request|build)\s*(?:id|#|no\.?|number)"), "a session or turn id"),
    (re.compile(r"(?i)\b\d+\s+(?:memories|lines|entries|items|tokens)\b"), "a counter"),
)


@dataclass(frozen=True, slots=True)
class MapSettings:
    """``[prefill]`` (and ``[stores.NAME.prefill]``): the same keys as distill-kura."""

    window_tokens: int = 131072
    budget_fraction: float = 0.05
    hard_fraction: float = 0.20
    fresh_days: float = 14
    pinned_types: tuple[str, ...] = ("feedback", "user")
    trigger_tokens: int = 24
    header: str = ""
    cloth_path: str = ""

    @classmethod
    def from_tables(cls, *tables: dict[str, Any]) -> MapSettings:
        merged: dict[str, Any] = {}
        for table in tables:
            merged.update(table)
        known = {k: merged[k] for k in cls.__dataclass_fields__ if k in merged}
        if "pinned_types" in known:
            known["pinned_types"] = tuple(known["pinned_types"])
        return cls(**known)

    @property
    def budget(self) -> int:
        return int(self.window_tokens * self.budget_fraction)

    @property
    def hard_limit(self) -> int:
        return int(self.window_tokens * self.hard_fraction)

    def key(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


@dataclass(frozen=True, slots=True)
class Block:
    store: str
    text: str
    state: str  # current | rewoven | over-budget | sectors | stale | missing
    tokens: int
    budget: int
    hard_limit: int
    warning: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def etag(self) -> str:
        return '"' + hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:32] + '"'

    @property
    def exit_code(self) -> int:
        return {"stale": 2, "missing": 1}.get(self.state, 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "store": self.store, "state": self.state, "etag": self.etag, "tokens": self.tokens,
            "budget": self.budget, "hard_limit": self.hard_limit, "warning": self.warning,
            "text": self.text, **self.extra,
        }  # fmt: skip


def header_text(settings: MapSettings, name: str) -> str:
    """The block's fixed header; a header of your own is refused if anything in it would
    change between builds (the default names only the store, which does not change)."""
    if not settings.header:
        return DEFAULT_HEADER.format(name=name)
    for pattern, what in _VOLATILE:
        found = pattern.search(settings.header)
        if found is not None:
            raise ConfigError(
                f"[prefill] header contains {what} ({found.group(0)!r}); the map must not change "
                "between turns or every turn pays a cold prompt cache — remove it from the header"
            )
    return settings.header


def wrap(name: str, header: str, body: str) -> str:
    return f"{OPEN.format(name=name)}\n{header}\n\n{body.rstrip()}\n{CLOSE}\n"


def fingerprint(root: Path, settings: MapSettings, *, today: dt.date, stats: Stats | None = None) -> str:
    """Changes whenever the woven map could: a memory file or the index changed (or moved),
    the settings changed, the day turned (freshness is counted in days), or git's HEAD
    moved (ages come from commits)."""
    from kura.trim import VERSION

    files = stamp_files(root) if stats is None else identity(stats)
    parts = [files, settings.key(), today.isoformat(), str(VERSION), git_head(root)]
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


def scribe_id(scribe: ModelConfig | None) -> str:
    return f"{scribe.url}|{scribe.model}" if scribe is not None else ""


_REWEAVE = "the map is woven again"
_META: dict[str, type | tuple[type, ...]] = {
    "fingerprint": str, "scribe": str, "cloth": str, "settings": str, "cloth_sha": str,
    "index_stamp": str, "floor": int, "store": str, "tokens": int, "budget": int,
    "fresh_days": (int, float), "over_budget": bool, "weight": dict, "layers": dict, "notes": list,
}  # fmt: skip


def stored_map(
    root: Path, stamp: str, *, scribes: tuple[str, ...], cloth: Path
) -> tuple[dict[str, Any], str] | None:
    """The last weave's summary and cloth, if its stamp is ``stamp``, its triggers came
    from one of ``scribes`` and the cloth at ``cloth`` (where the settings put it) is the
    one that weave wrote."""
    try:
        meta = map_meta(root)
    except KuraError:  # a .kura that is a link or a file: nothing stored is read through it
        return None
    if meta is None or meta["fingerprint"] != stamp or meta["scribe"] not in scribes:
        return None
    if cloth_file(root, meta["cloth"]) != cloth:
        st.damaged(st.folder(root) / "map.json", f"names {meta['cloth']} as the map, not {cloth}", _REWEAVE)
        return None
    text = st.read_text(cloth, then=_REWEAVE)
    if text is None:
        return None
    if hashlib.sha256(text.encode("utf-8")).hexdigest() != meta["cloth_sha"]:
        st.damaged(cloth, "is not the map the last weave recorded in map.json", _REWEAVE)
        return None
    return meta, text


def map_meta(root: Path) -> dict[str, Any] | None:
    """The last weave's record (``.kura/map.json``) if every field has its type, else None
    (said on stderr when there was a file). StoreError when .kura is a link or a file."""
    path = st.folder(root) / "map.json"
    meta: dict[str, Any] | None = st.read_json(path, then=_REWEAVE)
    if meta is None:
        return None
    wrong = [key for key, kind in _META.items() if not _typed(meta.get(key), kind)]
    if not wrong:
        counts = [*meta["weight"].values(), *meta["layers"].values()]
        wrong = [] if all(type(n) is int for n in counts) else ["weight or layers"]
        wrong += [] if all(isinstance(n, str) for n in meta["notes"]) else ["notes"]
    if wrong:
        st.damaged(path, f"holds fields of the wrong type ({', '.join(wrong)})", _REWEAVE)
        return None
    return meta


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
        packed = _read_text(common / "packed-refs") or ""
        found = [line.split()[0] for line in packed.splitlines() if line.endswith(" " + ref)]
        return found[0] if found else head
    return ""


def summary_line(summary: dict[str, Any], *, written: bool) -> str:
    """``kura weave``'s one line, from a weave's summary (fresh or stored)."""
    layers = ", ".join(f"{k} {v}" for k, v in sorted(summary["layers"].items()))
    verb = "wove" if written else "unchanged:"
    return (
        f"{verb} {summary['store']} map, ~{summary['tokens']} of {summary['budget']} tokens ({layers}; "
        f"fresh window {float(summary['fresh_days']):g} days)"
    )


def build(
    root: Path,
    name: str,
    settings: MapSettings,
    *,
    today: dt.date | None = None,
    reweave: bool = True,
    scribe: ModelConfig | None = None,
) -> Block:
    """The block for one store: from the woven map when it is current, re-woven (without
    any model call) when that is quick, else the canonical index marked as such."""
    header = header_text(settings, name)
    today = today or dt.date.today()
    try:
        index_path = index_file(root)
        st.folder(root, store=name)
    except KuraError as err:
        return missing(name, str(err))
    if not index_path.is_file():
        return missing(name, f"{index_path} is not there")
    meta = map_meta(root)
    if _always_over(meta, settings, index_path):
        text = wrap(name, header, _sectors(root, index_path, _read_text(index_path, errors="replace") or ""))
        warning = f"the map is over the hard limit of {settings.hard_limit} tokens; sent the sector map"
        return Block(
            name, text, "sectors", estimate_tokens(text), settings.budget, settings.hard_limit, warning
        )
    wanted = scribe_id(scribe)
    scribes = (wanted, f"partial:{wanted}") if wanted else ("",)
    stamp = fingerprint(root, settings, today=today)
    found = stored_map(root, stamp, scribes=scribes, cloth=cloth_target(root, settings))
    cloth, state, reason = (found[1], "current", "") if found is not None else (None, "stale", "")
    if found is None and reweave:
        cloth, state, reason = _reweave(root, name, settings, today, scribe)
    index = _read_text(index_path, errors="replace") or ""
    if cloth is None:
        note = "(This map was not re-woven: it is MEMORY.md as written.)"
        stale = _sized(name, header, f"{note}\n{index}", settings, lambda: sector_map(index), state="stale")
        return replace(stale, warning=reason or "the woven map is stale; run kura weave")
    return _sized(name, header, cloth, settings, lambda: _sectors(root, index_path, index), state=state)


def index_stamp(index_path: Path) -> str:
    st = index_path.stat()
    return f"{st.st_ino}-{st.st_size}-{st.st_mtime_ns}-{st.st_ctime_ns}"


def _always_over(meta: dict[str, Any] | None, settings: MapSettings, index_path: Path) -> bool:
    """Whether, with this very index, no edit to a memory file could bring the map under
    the hard limit: the last weave recorded a floor (every entry folded to its bare link)
    above it. Then the answer is the sector map, which depends on the index alone, and the
    memory files need not even be looked at."""
    if meta is None:
        return False
    try:
        same = meta["index_stamp"] == index_stamp(index_path) and meta["settings"] == settings.key()
    except OSError:
        return False
    return bool(same and meta["floor"] > settings.hard_limit)


def _sectors(root: Path, index_path: Path, index: str) -> str:
    """The sector map the last weave stored beside the cloth, when map.json vouches for it
    and for this very index file; else made now."""
    try:
        meta = map_meta(root)
        seen = index_stamp(index_path)
        digest = hashlib.sha256(index_path.read_bytes()).hexdigest()
    except (KuraError, OSError):
        return sector_map(index)
    if meta is None or meta["index_stamp"] != seen or not isinstance(meta.get("sectors_sha"), str):
        return sector_map(index)
    stored = st.read_text(st.folder(root) / SECTORS, then="the sector map is made again")
    if stored is None or hashlib.sha256(stored.encode("utf-8")).hexdigest() != meta["sectors_sha"]:
        return sector_map(index)
    if stored.startswith(f"<!-- {digest} -->\n"):
        return stored.split("\n", 1)[1]
    return sector_map(index)


def build_for(config_path: str | None, selector: str | None) -> Block:
    """The block for a configured store (or mode, or folder), as ``kura prefill`` prints
    it. Whatever goes wrong — no such store, a broken config, a header that ticks — the
    answer is still a block, one that says the map is missing and why."""
    from kura.config import load_config

    name = selector or "default"
    try:
        config = load_config(config_path)
        store = config.store_config(selector)
        name = store.name
        settings = config.map_settings(store)
        return build(store.path, store.name, settings, scribe=config.scribe_for(store))
    except (KuraError, OSError) as err:
        return missing(name, str(err))


def missing(name: str, reason: str) -> Block:
    text = wrap(
        name,
        f"The memory map is MISSING, not empty: kura could not read store '{name}' ({reason}).",
        "Do not assume nothing is remembered. Say that memory is unavailable right now.",
    )
    return Block(name, text, "missing", estimate_tokens(text), 0, 0, warning=reason)


def sector_map(index: Index | str) -> str:
    """The index's ``##`` sections with how many memories each names and a few titles."""
    sections: list[tuple[str, list[str]]] = [("(before any heading)", [])]
    total = 0
    for line in (parse_index(index) if isinstance(index, str) else index).lines:
        if line.kind == "heading" and line.text.lstrip().startswith("##"):
            sections.append((line.text.strip("# ").strip(), []))
        elif line.slugs:
            sections[-1][1].extend([line.title] if line.kind == "entry" else list(line.slugs))
            total += len(line.slugs)
    out = [
        f"This is NOT the full map: the index names {total} memories, more than this prompt can "
        "carry. Only its sections are listed, with a few titles each. Before answering about "
        'anything that might be remembered, recall it (kura recall "QUESTION", or the kura_recall tool).',
        "",
    ]
    for title, names in sections:
        if names:
            shown = "; ".join(names[:3]) + ("; …" if len(names) > 3 else "")
            out.append(f"- {title} ({len(names)}): {shown}")
    return "\n".join(out)


def _sized(
    name: str,
    header: str,
    body: str,
    settings: MapSettings,
    sectors_of: Callable[[], str],
    *,
    state: str,
) -> Block:
    text = wrap(name, header, body)
    tokens = estimate_tokens(text)
    if tokens > settings.hard_limit:
        sectors = wrap(name, header, sectors_of())
        warning = (
            f"the map is ~{tokens} tokens, over the hard limit of {settings.hard_limit}; sent the sector map"
        )
        return Block(
            name, sectors, "sectors", estimate_tokens(sectors), settings.budget, settings.hard_limit, warning
        )
    warning = ""
    if tokens > settings.budget:
        warning = (
            f"the map is ~{tokens} tokens, over the budget of {settings.budget}; run kura weave to see where"
        )
        state = "over-budget" if state in ("current", "rewoven") else state
    return Block(name, text, state, tokens, settings.budget, settings.hard_limit, warning)


def _reweave(
    root: Path, name: str, settings: MapSettings, today: dt.date, scribe: ModelConfig | None
) -> tuple[str | None, str, str]:
    """(cloth, state, why not) from a quick weave that calls no model."""
    from kura.store import Store
    from kura.weave import weave

    try:
        woven = weave(
            Store(root, name=name), settings, today=today, scribe=scribe, max_model_calls=0,
            max_parse=MAX_QUICK_PARSE,
        )  # fmt: skip
    except KuraError as err:
        return None, "stale", f"the map could not be re-woven: {err}"
    if woven is None:
        return None, "stale", "the woven map is stale and re-weaving would be slow; run kura weave"
    return woven.text, "rewoven", ""


def _read_text(path: Path, *, errors: str = "strict") -> str | None:
    try:
        return path.read_text(encoding="utf-8-sig", errors=errors)
    except (OSError, UnicodeDecodeError):
        return None
