"""``kura setup HOST``: plan every file, then write them all, each backed up first.

The store comes first: the project's (``memory/`` at the project's root, made as ``kura
init`` makes it when there is none), the one ``--store`` names, or with ``--user`` the
person's default store from their own kura.toml. Then each host file is planned in full
(``kura.hosts.settings_file``); one that cannot be read refuses the whole run before
anything is written. A file about to change is copied first into the user's state folder
(``$KURA_HOME/setup-backups``, else ``$XDG_STATE_HOME/kura/setup-backups``, else
``~/.local/state/kura/setup-backups``), under the time of the run and the file's own path;
backups never land in the project, where git would show them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kura import config as cfg
from kura.errors import ConfigError, KuraError
from kura.git.guard import SAFE
from kura.hosts import claude_memory, host_journals, jsonc
from kura.hosts.settings_file import FilePlan, plan_json, plan_toml
from kura.hosts.wiring import Scope, Target, Wiring, claude_dir, codex_home, is_kura_hook, targets
from kura.store.atomic import replace_checked
from kura.store.importer import import_folder
from kura.store.store import Store, init_store


@dataclass(frozen=True, slots=True)
class Request:
    host: str
    kura: str
    scope: Scope = "project"
    project: Path | None = None
    store: str | None = None
    dry_run: bool = False
    remove: bool = False
    recall_on_prompt: bool = False


@dataclass(frozen=True, slots=True)
class Report:
    """What setup did (or with ``dry_run`` would do): each file's plan, where each changed
    file's backup went, and the other steps in plain words."""

    root: Path
    store: Path | None
    plans: tuple[FilePlan, ...]
    backups: dict[Path, Path] = field(default_factory=dict)
    steps: tuple[str, ...] = ()
    did_work: bool = False


def run(request: Request, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> Report:
    env = os.environ if env is None else env
    root = _root(request, env, cwd or Path.cwd())
    store = _store(request, root, env)
    inbox = None
    if request.host == "claude-code" and request.scope == "project" and store is not None:
        inbox = claude_memory.inbox(store)
    bound = store if (request.host != "codex" or request.store or request.scope == "user") else None
    prompt = request.recall_on_prompt or request.remove  # --remove takes the prompt hook out too
    wiring = Wiring(request.host, request.scope, root, request.kura, bound, prompt, inbox)
    plans = tuple(_plan(target, remove=request.remove) for target in targets(wiring, env))
    if request.remove:
        steps = [f"the store at {store} and Claude's memory inbox are kept"] if inbox is not None else []
        backups = {} if request.dry_run else _write(request, root, plans, env)
        return Report(root, store, plans, backups, tuple(steps), any(p.changed for p in plans))
    steps = _before(request, store)
    backups = {} if request.dry_run else _write(request, root, plans, env)
    steps += _after(request, root, store, inbox, env)
    did = any(p.changed for p in plans) or any(not s.startswith(("already", "note:")) for s in steps)
    return Report(root, store, plans, backups, tuple(steps), did)


def _plan(target: Target, *, remove: bool) -> FilePlan:
    planner = plan_toml if target.format == "toml" else plan_json
    return planner(target.path, list(target.settings), remove=remove)


def _root(request: Request, env: Mapping[str, str], cwd: Path) -> Path:
    if request.scope == "user":
        return Path(env.get("HOME") or Path.home())
    start = (request.project or cwd).expanduser().absolute()
    if not start.is_dir():
        raise ConfigError(f"--project {start}: not a folder; name the project's folder")
    if request.project is not None:
        return start
    return git_root(start) or start


def git_root(folder: Path) -> Path | None:
    try:
        done = subprocess.run(
            ["git", *SAFE, "-C", str(folder), "rev-parse", "--show-toplevel"],
            capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    top = done.stdout.strip()
    return Path(top) if done.returncode == 0 and top else None


def _store(request: Request, root: Path, env: Mapping[str, str]) -> Path | None:
    if request.store:
        config = cfg.load_config(env=env, cwd=root)
        return config.named(request.store).path.absolute()
    if request.scope == "project":
        return root / "memory"
    return personal_store(env)


def personal_store(env: Mapping[str, str]) -> Path:
    """The default store of the person's own kura.toml; a clear refusal when there is none."""
    path = cfg.user_config_path(env)
    if not path.is_file():
        raise ConfigError(
            f"--user binds the host to your personal store, and there is no {path} naming one — "
            f"make it with `kura init main --path ~/memory` (it is added to {path}), or pass --store DIR"
        )
    config = cfg.load_config(str(path), env=env)
    return config.store_config().path.absolute()


def _before(request: Request, store: Path | None) -> list[str]:
    """The store made when the project has none (said, or with --dry-run only said)."""
    if store is None or (store / "MEMORY.md").is_file() or request.scope == "user":
        return []
    if request.dry_run:
        return [f"would make the store {store} (MEMORY.md, .gitignore for .kura/)"]
    init_store(store, name=store.name)
    return [f"made the store {store} (MEMORY.md, .gitignore for .kura/)"]


def _after(
    request: Request, root: Path, store: Path | None, inbox: Path | None, env: Mapping[str, str]
) -> list[str]:
    steps: list[str] = []
    if inbox is not None and store is not None:
        steps += _adopt_claude_memory(request, root, store, inbox, env)
        steps += _local_settings_note(root) + _user_hooks_note(env)
    if request.host == "codex":
        sessions = codex_home(Path(env.get("HOME") or Path.home()), env) / "sessions"
        if request.dry_run:
            steps.append(f"would register Codex's rollouts in {sessions} as a journal")
        else:
            fresh = host_journals.register_codex(sessions)
            said = f"Codex's rollouts in {sessions}: registered as a journal"
            steps.append(said if fresh else f"already: {said}")
    return steps


def _local_settings_note(root: Path) -> list[str]:
    """A word when git would share ``.claude/settings.local.json``: Claude Code ignores the
    approval and the memory folder in a tracked one, and its paths are this machine's."""
    local = ".claude/settings.local.json"
    if git_root(root) is None:
        return []
    tracked = _git(root, "ls-files", "--error-unmatch", local) == 0
    if tracked:
        return [f"note: git tracks {local}, so Claude Code ignores its settings — `git rm --cached {local}`"]
    if _git(root, "check-ignore", "-q", local) != 0:
        return [f"note: {local} holds this machine's paths; add it to .gitignore"]
    return []


def _user_hooks_note(env: Mapping[str, str]) -> list[str]:
    """A word when the user's settings already run kura's map hook: with the project's too,
    the map would be given twice at every session start."""
    user = claude_dir(Path(env.get("HOME") or Path.home()), env) / "settings.json"
    try:
        groups = jsonc.parse(user.read_text(encoding="utf-8")).value.get("hooks", {}).get("SessionStart", [])
    except (OSError, UnicodeDecodeError, jsonc.JsonTextError, AttributeError):
        return []
    mine = is_kura_hook("session-start")
    if not isinstance(groups, list) or not any(mine(group) for group in groups):
        return []
    return [f"note: {user} runs kura's hooks too, so each would run twice — keep one: "
            "`kura setup claude-code --user --remove`, or this project's `--remove`"]  # fmt: skip


def _git(root: Path, *args: str) -> int:
    try:
        return subprocess.run(
            ["git", *SAFE, "-C", str(root), *args], capture_output=True, timeout=30, check=False
        ).returncode
    except (OSError, subprocess.TimeoutExpired):
        return -1


def _adopt_claude_memory(
    request: Request, root: Path, store: Path, inbox: Path, env: Mapping[str, str]
) -> list[str]:
    home = Path(env.get("HOME") or Path.home())
    old = claude_memory.default_folder(root, claude_dir(home, env))
    steps = []
    if request.dry_run:
        steps.append(f"would keep Claude's memory inbox at {inbox}")
    elif claude_memory.prepare(store):
        steps.append(f"made Claude's memory inbox {inbox} (its MEMORY.md says kura's map holds the memory)")
    if old is None or not any(old.glob("*.md")):
        return steps
    if request.dry_run:
        return [*steps, f"would import Claude's auto memory from {old}"]
    try:
        report = import_folder(Store(store, name=store.name), old, kind="claude-code")
    except KuraError as err:
        return [*steps, f"not imported: Claude's auto memory in {old}: {err}"]
    said = f"imported {len(report.imported)} memories of Claude's auto memory from {old}"
    if not report.imported:
        said = f"already: Claude's auto memory in {old} is in the store"
    return [*steps, said, *(f"not imported: {line}" for line in report.conflicts)]


def backup_root(env: Mapping[str, str]) -> Path:
    if env.get("KURA_HOME"):
        return Path(env["KURA_HOME"]) / "setup-backups"
    state = (
        Path(env["XDG_STATE_HOME"])
        if env.get("XDG_STATE_HOME")
        else Path(env.get("HOME") or Path.home()) / ".local" / "state"
    )
    return state / "kura" / "setup-backups"


def _write(
    request: Request, root: Path, plans: tuple[FilePlan, ...], env: Mapping[str, str]
) -> dict[Path, Path]:
    """Every changed file written (or removed) after its backup; the backups by file."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    backups: dict[Path, Path] = {}
    for plan in plans:
        if not plan.changed:
            continue
        if plan.before is not None:
            copy = backup_root(env) / stamp / str(plan.path.absolute()).lstrip("/")
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(plan.before)
            backups[plan.path] = copy
        if plan.after is None:
            plan.path.unlink()
            if request.scope == "project" and plan.path.parent.parent == root:
                with contextlib.suppress(OSError):  # the project's .cursor/ etc., left empty
                    plan.path.parent.rmdir()
            continue
        plan.path.parent.mkdir(parents=True, exist_ok=True)
        replace_checked(plan.path, plan.after, expect=plan.before)
    return backups
