"""kura.toml: which stores this machine has, which mode maps to which, and the models.

The key names are distill-kura's, so a kura.toml written for it loads unchanged. The file
is checked whole at load, and anything that cannot mean what it says is refused with the
key named: an unknown key (a typo looks exactly like a working setting until the day it
matters; your own extensions take an ``x_`` prefix), a wrong type, two stores in one folder
or one inside another (they would share data and write policy), a mode that names no store,
and a store bound to a model profile that is not defined (never a quiet fall back to the
shared endpoint).

Found via ``--config``, ``$KURA_CONFIG``, ``./kura.toml``, then ``$KURA_HOME``, else
``$XDG_CONFIG_HOME/kura``, else ``~/.config/kura``; with none, ``main`` at ``$KURA_DIR`` or ``./memory``.

Inside a project, the project's store (``kura.store.project``: the nearest ``memory/``
with a ``MEMORY.md`` from here up to the git root) is the default, whatever a personal
config (``$KURA_CONFIG`` or the user-level file) names, because the memory a project's
agent needs is the project's own; the personal default is then *the person's store*,
read beside it (``Config.person``). A config chosen for this place — ``--config``, or a
``./kura.toml`` here — keeps its own default; ``-s``/``$KURA_STORE`` win over everything.

A store is chosen for work in one place, ``Config.store_config``, and only a store whose
folder is there is handed out: with no kura.toml and no ``./memory``, with ``-s`` naming a
folder that is not there, or with a configured store's folder deleted, every command gets
one ``NoStore`` that says where kura looked and how to make one. Reads would otherwise
conjure a store out of nothing (a ``.kura/`` cache under a folder nobody made, an empty
recall that reads as "nothing is remembered"); only ``kura init`` makes a store.

Models: roles thinker, brain, scribe. A role that is not declared is the role above it
(brain is the thinker, scribe is the brain) — whole, never merged key by key, so a key
meant for one endpoint is never sent to another. ``[models.embedder]`` optionally names an
OpenAI-compatible ``/embeddings`` endpoint for recall; it inherits nothing. Their tables are
read by ``kura.files.model_table``.
"""

from __future__ import annotations

import itertools
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kura.store.store import Store

from kura.errors import ConfigError, NoStore, UnknownStore
from kura.files import kura_compat
from kura.files import toml_shape as shape
from kura.files.model_table import ModelConfig as ModelConfig  # re-exported: callers import it from here
from kura.files.model_table import roles, with_embedder
from kura.files.slugs import INDEX_NAME, STATE_DIR, is_memory_name
from kura.map_settings import MapSettings, checked
from kura.store.policy import POLICIES
from kura.store.project import ProjectStore, find_project_store

_NUM = (int, float)
_TOP = {
    "server", "models", "model_profiles", "stores", "modes", "prefill", "distill", "fastpath", "payforward",
    "embedder",
}  # fmt: skip
_SERVER = {
    "host": str,
    "port": int,
    "default": str,
    "token": str,
    "allow_path_overlap": bool,
    "auto_store_root": str,
}
_STORE = {
    "path": str,
    "label": str,
    "readonly": bool,
    "write_policy": str,
    "persona": str,
    "charter": str,
    "model_profile": str,
    "prefill": dict,
    "distill": dict,
    "fastpath": dict,
}
_PREFILL = {
    "window_tokens": int,
    "budget_fraction": _NUM,
    "hard_fraction": _NUM,
    "fresh_days": _NUM,
    "pinned_types": list,
    "trigger_tokens": int,
    "verbatim_after": str,
    "cloth_path": str,
    "header": str,
    "sector_header": str,
    "trail_tokens": int,
    "adaptive_triggers": bool,
    "adaptive_apply": bool,
    "trigger_steps": list,
    "resident_mode": str,
    "max_chars": int,  # and kura.map_settings.checked: 0, or room for the smallest block
}
_DISTILL = {
    "language": str,
    "scribe_slots": int,
    "chunk_chars": int,
    "max_items": int,
    "coverage_passes": int,
    "idle_min": _NUM,
    "backoff_min": _NUM,
    "yield_on_return": bool,
    "journals": dict,
    "inherit_global_journals": bool,
}
_FASTPATH = {"enabled": bool, "gate": _NUM, "cues": bool}


@dataclass(frozen=True, slots=True)
class StoreConfig:
    name: str
    path: Path
    label: str = ""
    write_policy: str = "direct-allowed"
    persona: str = ""
    charter: str = ""
    model_profile: str = ""
    prefill: dict[str, Any] = field(default_factory=dict)
    distill: dict[str, Any] = field(default_factory=dict)

    def open(self) -> Store:
        from kura.store.store import Store

        return Store(
            self.path,
            name=self.name,
            label=self.label,
            write_policy=self.write_policy,
            charter=self.charter,
            persona=self.persona,
        )


@dataclass(kw_only=True, frozen=True, slots=True)
class Config:
    source: Path | None
    stores: dict[str, StoreConfig]
    modes: dict[str, str] = field(default_factory=dict)
    server: dict[str, Any] = field(default_factory=dict)
    models: dict[str, ModelConfig | None] = field(default_factory=dict)
    model_profiles: dict[str, dict[str, ModelConfig | None]] = field(default_factory=dict)
    prefill: dict[str, Any] = field(default_factory=dict)
    distill: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] = field(default_factory=dict)
    looked: str = ""  # with no kura.toml: where kura looked, for when the default folder is missing
    project: str = ""  # the project's store (a name in ``stores``), when it is the default
    person: str = ""  # the person's own store, read beside the project's (a name in ``stores``)
    why: str = ""  # why the default store is the default, as ``kura stores`` says it

    @property
    def default_store(self) -> str:
        if self.project:
            return self.project
        return str(self.server.get("default") or self.modes.get("default") or next(iter(self.stores)))

    def beside(self, chosen: StoreConfig) -> StoreConfig | None:
        """The person's store to read beside ``chosen``: only when ``chosen`` is the
        project's store (however it was named) and the person's folder is there."""
        if not self.project or not self.person or chosen != self.stores.get(self.project):
            return None
        person = self.stores[self.person]
        return person if person.path.is_dir() else None

    def store_config(self, selector: str | None = None) -> StoreConfig:
        """The store to work on, by name, mode or folder path — only if its folder is
        there; else ``NoStore``, which says where kura looked and how to make one."""
        chosen = self.named(selector)
        if not chosen.path.is_dir():
            raise self._no_store(chosen)
        if chosen not in self.stores.values() and not _holds_a_store(chosen.path):
            raise NoStore(
                f"store {selector!r}: {chosen.path} is not a kura store (it has no {INDEX_NAME}) — make it "
                f"one with `kura init {chosen.name} --path {chosen.path}` (or `kura remember` a first "
                "memory there), or pass -s a store folder",
                selector or chosen.name,
            )
        return chosen

    def creatable(self, selector: str | None = None) -> StoreConfig | None:
        """The store ``kura remember`` may make when there is none yet: the default one when
        no kura.toml names any (./memory or $KURA_DIR), or a folder -s names; never a
        configured store whose folder is gone (a disk not mounted, a wrong path)."""
        if self.looked and selector is None:
            return self.stores[self.default_store]
        if selector is None or selector in self.stores or selector in self.modes:
            return None
        if not _looks_like_path(selector) and not Path(selector).expanduser().is_dir():
            return None
        path = Path(selector).expanduser().absolute()
        configured = {os.path.realpath(store.path) for store in self.stores.values()}
        return None if os.path.realpath(path) in configured else StoreConfig(name=path.name, path=path)

    def named(self, selector: str | None = None) -> StoreConfig:
        """The store a selector names, whether or not its folder is there (for listings)."""
        key = selector or self.default_store
        if key in self.stores:
            return self.stores[key]
        if key in self.modes:
            return self.stores[self.modes[key]]
        path = Path(key).expanduser().absolute()
        if selector and (path.is_dir() or _looks_like_path(selector)):
            real = os.path.realpath(path)
            for store in self.stores.values():  # a configured store keeps its name and policy
                if os.path.realpath(store.path) == real:
                    return store
            if not path.is_dir():
                there = f"{path} is not a folder" if path.exists() else f"there is no folder {path}"
                raise NoStore(
                    f"store {selector!r}: {there} — create a store there with `kura init NAME "
                    f"--path {path}`, or pass -s an existing store folder",
                    selector,
                )
            return StoreConfig(name=path.name, path=path)
        known = ", ".join(sorted(self.stores)) or "none"
        modes = ", ".join(sorted(self.modes)) or "none"
        raise UnknownStore(
            f"no store or mode named {key!r} (stores: {known}; modes: {modes}); "
            f"add [stores.{key}] to {self.source or 'kura.toml'} or pass a folder path"
        )

    def _no_store(self, store: StoreConfig) -> NoStore:
        make = f"`kura init {store.name} --path {store.path}`"
        if self.looked:
            said = f"no store here: {self.looked} ({store.path}) — create a store with {make}"
            return NoStore(f"{said}, or pass -s DIR to use a store folder", store.name)
        there = "is not a folder" if store.path.exists() else "is not there"
        where = f"configured in {self.source or 'kura.toml'}"
        said = f"store '{store.name}': its folder {store.path} {there} ({where})"
        return NoStore(f"{said} — restore it, or create it with {make}", store.name)

    def open(self, selector: str | None = None) -> Store:
        return self.store_config(selector).open()

    def map_settings(self, store: StoreConfig) -> MapSettings:
        """[prefill] with the store's own [stores.NAME.prefill] on top."""
        return MapSettings.from_tables(self.prefill, store.prefill)

    def scribe_for(self, store: StoreConfig) -> ModelConfig | None:
        return self.roles_for(store).get("scribe")

    def brain_for(self, store: StoreConfig) -> ModelConfig | None:
        return self.roles_for(store).get("brain")

    def thinker_for(self, store: StoreConfig) -> ModelConfig | None:
        return self.roles_for(store).get("thinker")

    def embedder_for(self, store: StoreConfig) -> ModelConfig | None:
        """An OpenAI-compatible /embeddings endpoint, when one is configured."""
        return self.roles_for(store).get("embedder")

    def roles_for(self, store: StoreConfig) -> dict[str, ModelConfig | None]:
        return self.model_profiles[store.model_profile] if store.model_profile else self.models

    def models_for(self, store: str) -> dict[str, ModelConfig | None]:
        """The role → model map a store uses: its own profile if it names one."""
        profile = self.stores[store].model_profile
        return self.model_profiles[profile] if profile else self.models


def find_config(
    explicit: str | None = None, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> Path | None:
    env = os.environ if env is None else env
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise ConfigError(f"{path}: no such config file (from --config)")
        return path
    if env.get("KURA_CONFIG"):
        path = Path(env["KURA_CONFIG"]).expanduser()
        if not path.is_file():
            raise ConfigError(f"{path}: no such config file (from $KURA_CONFIG)")
        return path
    local = (cwd or Path.cwd()) / "kura.toml"
    if local.is_file():
        return local
    user = user_config_path(env)
    return user if user.is_file() else None


def user_config_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("KURA_HOME"):
        return Path(env["KURA_HOME"]).expanduser() / "kura.toml"
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    return base / "kura" / "kura.toml"


def load_config(
    explicit: str | None = None, env: Mapping[str, str] | None = None, cwd: Path | None = None
) -> Config:
    """Find and load the config; with none, the single default store."""
    env = os.environ if env is None else env
    path = find_config(explicit, env, cwd)
    here = cwd or Path.cwd()
    if path is None:
        return _with_project(_no_config(env, here), find_project_store(here))
    try:
        text = path.read_text(encoding="utf-8-sig")
        raw = tomllib.loads(text)
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: cannot read ({err})") from err
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML ({err}); fix that line") from err
    config = parse_config(raw, path, text)
    if explicit or path == here / "kura.toml":  # a config chosen for this place keeps its default
        return replace(config, why=f"the default in {path}")
    return _with_project(config, find_project_store(here))


def _no_config(env: Mapping[str, str], here: Path) -> Config:
    root = Path(env.get("KURA_DIR") or here / "memory").expanduser().absolute()
    folder = "there is no ./memory folder"
    if env.get("KURA_DIR"):
        folder = "$KURA_DIR names a folder that is not there"
    files = f"{here / 'kura.toml'} and {user_config_path(env)}"
    looked = f"no kura.toml was found (looked for {files}) and {folder}"
    why = f"no kura.toml: {'$KURA_DIR' if env.get('KURA_DIR') else './memory'} ({root})"
    return Config(source=None, stores={"main": StoreConfig(name="main", path=root)}, looked=looked, why=why)


def _with_project(config: Config, found: ProjectStore | None) -> Config:
    """``config`` with the project's store as its default, and its own default as the
    person's store beside it. With no kura.toml the one store, ``main``, is the project's;
    a configured store in that very folder keeps its name and write policy; a folder that
    one of the configured stores is inside of (or holds) is left alone, as two nested
    stores would read each other's memories."""
    if config.source is not None:
        config = replace(config, why=f"the default in {config.source}")
    if found is None:
        return config
    if config.source is None:
        main = StoreConfig(name="main", path=found.path.absolute())
        return replace(config, stores={"main": main}, project="main", why=found.why())
    real = Path(os.path.realpath(found.path))
    name = next((n for n, sc in config.stores.items() if os.path.realpath(sc.path) == str(real)), "")
    if not name:
        nested = [n for n, sc in config.stores.items() if _nested(real, Path(os.path.realpath(sc.path)))]
        if nested and not config.server.get("allow_path_overlap"):
            return config
        name = _free_name(found.project.name, config)
        added = StoreConfig(name=name, path=found.path.absolute())
        config = replace(config, stores={**config.stores, name: added})
    own = config.named()  # the personal default, read beside the project's store
    person = "" if _nested(real, Path(os.path.realpath(own.path))) else own.name
    return replace(config, project=name, person=person, why=found.why())


def _nested(a: Path, b: Path) -> bool:
    return a == b or a.is_relative_to(b) or b.is_relative_to(a)


def _free_name(folder: str, config: Config) -> str:
    """A name for the project's store that no configured store or mode holds: the
    project folder's name (as a name kura accepts), else ``project``, ``project-2``…"""
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", folder).strip("-.") or "project"
    taken = set(config.stores) | set(config.modes)
    numbered = (f"project-{i}" for i in itertools.count(2))
    return next(name for name in itertools.chain((base, "project"), numbered) if name not in taken)


def parse_config(raw: dict[str, Any], source: Path | None = None, text: str = "") -> Config:
    try:
        return _parse(raw, source)
    except ConfigError as err:  # named by its file, and its line when ``text`` shows which
        from kura.files.toml_lines import located

        at = located(str(source or "kura.toml"), text, err.table, err.key)
        raise ConfigError(f"{at}: {err}", table=err.table, key=err.key) from None


def _parse(raw: dict[str, Any], source: Path | None) -> Config:
    shape.keys("", raw, dict.fromkeys(_TOP, dict))
    base = source.parent if source else Path.cwd()
    server = shape.table("server", raw.get("server", {}), _SERVER)
    prefill = shape.table("prefill", raw.get("prefill", {}), _PREFILL)
    checked(prefill.get("max_chars", 0), "[prefill] max_chars")
    distill = shape.table("distill", raw.get("distill", {}), _DISTILL)
    shape.table("fastpath", raw.get("fastpath", {}), _FASTPATH)
    models = with_embedder(roles("models", raw.get("models", {})), raw.get("embedder"), base)
    profiles = {
        name: roles(f"model_profiles.{name}", table)
        for name, table in shape.table("model_profiles", raw.get("model_profiles", {})).items()
    }
    stores = {
        name: _store(name, table, base, profiles)
        for name, table in shape.table("stores", raw.get("stores", {})).items()
    }
    if not stores:
        raise ConfigError('no [stores.NAME] table; add one with path = "…"')
    modes = shape.table("modes", raw.get("modes", {}))
    for mode, target in modes.items():
        if mode in stores and target != mode:
            raise ConfigError(
                f"[modes] {mode} = {target!r} reuses the name of [stores.{mode}]; a "
                "name must mean one store — rename the mode"
            )
        if not isinstance(target, str) or target not in stores:
            raise ConfigError(
                f"[modes] {mode} = {target!r} names no store (stores: {', '.join(sorted(stores))})",
                table="modes",
                key=mode,
            )
    default = server.get("default")
    if default is not None and default not in stores and default not in modes:
        said = f"[server] default = {default!r} names no store or mode"
        raise ConfigError(said, table="server", key="default")
    if not server.get("allow_path_overlap"):
        _check_paths(stores)
    kura_compat.check(raw)  # a distill-kura key kura would keep and ignore is refused
    return Config(
        source=source,
        stores=stores,
        modes=dict(modes),
        server=server,
        models=models,
        model_profiles=profiles,
        prefill=prefill,
        distill=distill,
        raw=raw,
    )


def _store(name: str, table: Any, base: Path, profiles: dict[str, Any]) -> StoreConfig:
    where = f"stores.{name}"
    table = shape.table(where, table, _STORE)
    if not str(table.get("path", "")).strip():
        raise ConfigError(f'[{where}] has no path; add path = "~/kura/{name}"', table=where)
    if "readonly" in table and "write_policy" in table:
        raise ConfigError(f"[{where}] sets both readonly and write_policy; keep write_policy only")
    for nested, types in (("prefill", _PREFILL), ("distill", _DISTILL), ("fastpath", _FASTPATH)):
        shape.table(f"{where}.{nested}", table.get(nested, {}), types)
    checked(table.get("prefill", {}).get("max_chars", 0), f"[{where}.prefill] max_chars")
    policy = table.get("write_policy", "distiller-only" if table.get("readonly") else "direct-allowed")
    if policy not in POLICIES:
        said = f"[{where}] write_policy must be one of {', '.join(POLICIES)}, got {policy!r}"
        raise ConfigError(said, table=where, key="write_policy")
    profile = table.get("model_profile", "")
    if profile and profile not in profiles:
        raise ConfigError(
            f"[{where}] model_profile = {profile!r} is not defined; add "
            f"[model_profiles.{profile}.thinker] or remove the key",
            table=where,
            key="model_profile",
        )
    path = Path(table["path"]).expanduser()
    return StoreConfig(
        name=name,
        path=(path if path.is_absolute() else base / path).absolute(),
        label=table.get("label", ""),
        write_policy=policy,
        persona=table.get("persona", ""),
        charter=table.get("charter", ""),
        model_profile=profile,
        prefill=dict(table.get("prefill", {})),
        distill=dict(table.get("distill", {})),
    )


def _check_paths(stores: dict[str, StoreConfig]) -> None:
    real = {name: Path(os.path.realpath(sc.path)) for name, sc in stores.items()}
    names = sorted(real)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            if real[a] == real[b]:
                raise ConfigError(
                    f"[stores.{a}] and [stores.{b}] are the same folder "
                    f"({real[a]}); two names for one store share its data and "
                    "write policy — give each its own path"
                )
            if real[a].is_relative_to(real[b]) or real[b].is_relative_to(real[a]):
                raise ConfigError(
                    f"[stores.{a}] ({real[a]}) and [stores.{b}] ({real[b]}) are "
                    "nested; one store's walk would read the other's memories — "
                    "move one outside the other"
                )


def _holds_a_store(path: Path) -> bool:
    """A folder set up as a store, kura has worked in, or holding memories: MEMORY.md,
    .kura, or a memory file at its top."""
    if (path / INDEX_NAME).exists() or (path / STATE_DIR).is_dir():
        return True
    try:
        return any(is_memory_name(entry.name) and entry.is_file() for entry in os.scandir(path))
    except OSError:
        return False


def _looks_like_path(selector: str) -> bool:
    """A selector meant as a folder (``./x``, ``~/x``, ``/x``, ``a/b``), not a store's name."""
    return "/" in selector or os.sep in selector or selector.startswith(("~", "."))
