"""With no store, nothing is created by a read.

In a folder with no kura.toml (and none in the user's config dir), the only store is the
default folder ``./memory``; when that is not there either, every command that needs a
store says so in one line — what is missing, where kura looked, how to make one — exits 1
and leaves the disk exactly as it was. The same holds for ``-s PATH`` naming a folder that
is not there and for a configured store whose folder was deleted. ``kura prefill`` still
prints a block (it says the map is MISSING, and why), because a hook prints what it gets.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Cli, write_memory

from kura.config import parse_config
from kura.errors import NoStore
from kura.serve.pool import StorePool

KURA = str(Path(sys.executable).parent / "kura")
HOOK = Path(__file__).resolve().parents[2] / "hooks" / "kura-prefill"


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for a folder), recursively."""
    found: dict[str, bytes | None] = {}
    for here, dirs, files in os.walk(root):
        for name in dirs:
            found[os.path.relpath(os.path.join(here, name), root)] = None
        for name in files:
            path = os.path.join(here, name)
            found[os.path.relpath(path, root)] = Path(path).read_bytes()
    return found


@pytest.fixture
def empty(isolated: Path) -> Iterator[Path]:
    """The working folder, empty, with an empty user config dir; both still byte-for-byte
    as they were (the inputs some commands read sit beside them, untouched) afterwards."""
    inputs = isolated / "input"
    (inputs / "claude").mkdir(parents=True)
    (inputs / "claude" / "MEMORY.md").write_text("# Memory\n")
    (inputs / "talk.txt").write_text("we deploy on Tuesdays\n")
    assert tree(isolated / "work") == {} and tree(isolated / "home") == {}
    before = tree(isolated)
    yield isolated / "work"
    assert tree(isolated) == before
    assert tree(isolated / "work") == {} and tree(isolated / "home") == {}


def no_store_here(work: Path) -> str:
    home = work.parent / "home"
    return (
        f"no store here: no kura.toml was found (looked for {work}/kura.toml and "
        f"{home}/kura.toml) and there is no ./memory folder ({work}/memory) — create a store "
        f"with `kura init main --path {work}/memory`, or pass -s DIR to use a store folder"
    )


NO_STORE = "no store was found: none is configured, or its folder is gone"


def missing_block(name: str, why: str = NO_STORE) -> str:
    """The block quotes nothing read from a file or a path: kura's own phrase for the kind
    of failure, and the store's name only when it is a plain one (issue 29, item 12)."""
    return (
        f"<<<KURA-MAP store={name}>>>\n"
        f"The memory map is MISSING, not empty: kura could not read store '{name}' "
        f"({why}; `kura doctor` in a shell says more).\n\n"
        "Do not assume nothing is remembered. Say that memory is unavailable right now.\n"
        "<<<END KURA-MAP>>>\n"
    )


# Every command in `kura --help` that needs a store. Reads first; then the writes that work
# on what a store holds (forget, pour, observe…): with no store they have nothing to work on
# either. Only `init` creates a store. (`eval` needs none; `distill check` without --store
# judges against an empty store; `serve`, `mcp`, `watch`, `distill night` run as real
# processes below.)
READS = [
    ["list"],
    ["show", "deploy"],
    ["recall", "when do we deploy"],
    ["recall", "--no-model", "--json", "when do we deploy"],
    ["context", "deploy the app"],
    ["weave"],
    ["weave", "--force", "--no-model"],
    ["prefill", "--json"],
    ["doctor"],
    ["doctor", "--fix"],
    ["graph"],
    ["why", "deploy"],
    ["decay"],
    ["index"],
    ["index", "--rebuild"],
    ["stores"],
    ["observe", "--list"],
    ["distill", "drafts"],
    ["distill", "run", "--no-model"],
    ["distill", "tidy", "--dry-run"],
    ["distill", "drain"],
]
WRITES = [
    ["forget", "deploy"],
    ["decay", "--apply"],
    ["observe", "the disk is nearly full"],
    ["observe", "--resolve", "1"],
    ["observe", "--consolidate", "--no-model"],
    ["distill", "pour", "--all"],
    ["ingest", "{input}/talk.txt"],
    ["import", "claude-code", "{input}/claude"],
]


@pytest.mark.parametrize("args", READS + WRITES, ids=" ".join)
def test_every_command_says_there_is_no_store_and_creates_nothing(
    cli: Cli, empty: Path, args: list[str]
) -> None:
    got = cli(*[a.format(input=empty.parent / "input") for a in args])
    if args[0] == "prefill":
        assert got.code == 1 and got.err == f"kura: {no_store_here(empty)}\n"
        block = json.loads(got.out)
        assert block["state"] == "missing" and block["warning"] == no_store_here(empty)
        assert block["text"] == missing_block("main")
        return
    assert (got.code, got.out, got.err) == (1, "", f"kura: error: {no_store_here(empty)}\n")


def test_prefill_still_prints_a_block_that_says_the_map_is_missing_and_why(cli: Cli, empty: Path) -> None:
    got = cli("prefill")
    assert got.out == missing_block("main")
    assert (got.code, got.err) == (1, f"kura: {no_store_here(empty)}\n")


def kura(*args: str, cwd: Path, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    """The real ``kura`` executable (its fast paths for prefill, weave and recall included)."""
    return subprocess.run(
        [KURA, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


@pytest.mark.parametrize(
    "args",
    [["weave"], ["weave", "--no-model"], ["recall", "when do we deploy"], ["context", "deploy"], ["list"]],
    ids=" ".join,
)
def test_as_a_real_process(empty: Path, args: list[str]) -> None:
    got = kura(*args, cwd=empty)
    assert (got.returncode, got.stdout, got.stderr) == (1, "", f"kura: error: {no_store_here(empty)}\n")


def test_prefill_as_a_real_process_and_through_the_hook(empty: Path) -> None:
    got = kura("prefill", cwd=empty)
    block = missing_block("main")
    assert (got.returncode, got.stdout, got.stderr) == (1, block, f"kura: {no_store_here(empty)}\n")
    hook = subprocess.run(
        [str(HOOK)],
        cwd=empty,
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "KURA_BIN": KURA},
    )
    assert (hook.returncode, hook.stdout, hook.stderr) == (0, block, "")


@pytest.mark.parametrize(
    "args",
    [["watch"], ["serve", "--port", "0"], ["mcp"], ["mcp", "--writable"], ["distill", "night", "--once"]],
    ids=" ".join,
)
def test_servers_and_the_watcher_refuse_to_start(empty: Path, args: list[str]) -> None:
    got = kura(*args, cwd=empty)
    assert (got.returncode, got.stdout, got.stderr) == (1, "", f"kura: error: {no_store_here(empty)}\n")


@pytest.mark.parametrize("given", ["./nope", "{tmp}/nope", "~/nope"])
@pytest.mark.parametrize(
    "args", [["list"], ["weave"], ["context", "deploy"], ["recall", "deploy"]], ids=" ".join
)  # fmt: skip
def test_a_store_path_that_is_not_there(cli: Cli, empty: Path, given: str, args: list[str]) -> None:
    selector = given.format(tmp=empty.parent)
    where = {"./nope": empty / "nope", "~/nope": empty.parent / "home" / "nope"}.get(
        given, empty.parent / "nope"
    )
    said = (
        f"store {selector!r}: there is no folder {where} — create a store there with "
        f"`kura init NAME --path {where}`, or pass -s an existing store folder"
    )
    got = cli("-s", selector, *args)
    assert (got.code, got.out, got.err) == (1, "", f"kura: error: {said}\n")
    got = cli("-s", selector, "prefill")
    assert (got.code, got.out) == (1, missing_block("nope"))


@pytest.fixture
def deleted(isolated: Path) -> Iterator[Path]:
    """A kura.toml naming store 'maker' in a folder that was deleted; nothing brings it back."""
    gone = isolated / "gone"
    (isolated / "home" / "kura.toml").write_text(f'[stores.maker]\npath = "{gone}"\n')
    before = tree(isolated)
    yield gone
    assert tree(isolated) == before and not gone.exists()


DELETED_READS = [["list"], ["weave"], ["context", "deploy"], ["recall", "deploy"], ["doctor"], ["index"]]


@pytest.mark.parametrize("args", [*DELETED_READS, ["remember", "a", "b"]], ids=" ".join)
def test_a_configured_store_whose_folder_was_deleted(cli: Cli, deleted: Path, args: list[str]) -> None:
    config = deleted.parent / "home" / "kura.toml"
    said = (
        f"store 'maker': its folder {deleted} is not there (configured in {config}) — restore it, "
        f"or create it with `kura init maker --path {deleted}`"
    )
    got = cli(*args)
    assert (got.code, got.out, got.err) == (1, "", f"kura: error: {said}\n")
    got = cli("prefill")
    assert (got.code, got.out) == (1, missing_block("maker"))


@pytest.mark.parametrize(
    "args", [["weave"], ["recall", "deploy"], ["serve", "--port", "0"], ["mcp"]], ids=" ".join
)
def test_deleted_store_as_a_real_process(deleted: Path, args: list[str]) -> None:
    got = kura(*args, cwd=deleted.parent / "work")
    config = deleted.parent / "home" / "kura.toml"
    said = (
        f"store 'maker': its folder {deleted} is not there (configured in {config}) — restore it, "
        f"or create it with `kura init maker --path {deleted}`"
    )
    assert (got.returncode, got.stdout, got.stderr) == (1, "", f"kura: error: {said}\n")


def test_the_command_the_message_names_makes_a_store_that_then_works(cli: Cli, isolated: Path) -> None:
    work = isolated / "work"
    said = cli("list").err
    command = said.split("`")[1]
    assert command == f"kura init main --path {work}/memory"
    assert cli(*command.split()[1:]).code == 0
    assert cli("list").code == 2  # a store, with nothing in it yet
    assert cli("remember", "deploy", "we deploy on Tuesdays").code == 0
    assert cli("list").out == "deploy  project    we deploy on Tuesdays\n"


def test_kura_dir_that_is_not_there(cli: Cli, empty: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gone = empty.parent / "input" / "nowhere"
    monkeypatch.setenv("KURA_DIR", str(gone))
    home = empty.parent / "home"
    said = (
        f"no store here: no kura.toml was found (looked for {empty}/kura.toml and {home}/kura.toml) "
        f"and $KURA_DIR names a folder that is not there ({gone}) — create a store with "
        f"`kura init main --path {gone}`, or pass -s DIR to use a store folder"
    )
    got = cli("context", "deploy")
    assert (got.code, got.out, got.err) == (1, "", f"kura: error: {said}\n")


def test_a_served_store_whose_folder_is_deleted_is_not_made_again(tmp_path: Path) -> None:
    for name in ("team", "gone"):
        write_memory(tmp_path / name, "deploy", "project", "we deploy on Tuesdays")
        (tmp_path / name / "MEMORY.md").write_text("# Memory\n\n- [Deploy](deploy.md) — Tuesdays\n")
    stores = {name: {"path": str(tmp_path / name)} for name in ("team", "gone")}
    service = StorePool(parse_config({"stores": stores}))
    try:
        assert service.recall("when do we deploy", selector="gone")["picked"]
        shutil.rmtree(tmp_path / "gone")
        said = (
            "store 'gone': its folder <store gone> is not there (configured in kura.toml) — restore it, "
            "or create it with `kura init gone --path <store gone>`"
        )
        calls = [
            lambda: service.recall("when do we deploy", selector="gone"),
            lambda: service.context("deploy", selector="gone"),
            lambda: service.memories(selector="gone"),
            lambda: service.prefill("gone"),
            lambda: service.index_text("gone"),
            lambda: service.remember("x", "a new one", selector="gone"),
        ]
        for call in calls:
            with pytest.raises(NoStore) as raised:
                call()
            assert str(raised.value) == said
        report = service.doctor("gone")
        assert (report["healthy"], report["findings"][0]["message"]) == (False, said)
        assert service.recall("when do we deploy", selector="team")["picked"]
    finally:
        service.close()
    assert not (tmp_path / "gone").exists()


def test_a_service_with_no_default_store_does_not_start(tmp_path: Path) -> None:
    config = parse_config({"stores": {"main": {"path": str(tmp_path / "never")}}})
    with pytest.raises(NoStore, match=r"^store 'main': its folder .*/never is not there"):
        StorePool(config)
    assert not (tmp_path / "never").exists()


def test_remember_makes_the_default_store_and_says_so(cli: Cli, isolated: Path) -> None:
    """Only ``init`` and ``remember`` create: a first memory with no store makes ./memory."""
    work = isolated / "work"
    got = cli("remember", "deploy", "we deploy on Tuesdays")
    assert got.code == 0 and got.out == f"created deploy ({work}/memory/deploy.md)\n"
    assert got.err == f"kura: made store 'main' at {work}/memory (MEMORY.md, and a .gitignore for .kura/)\n"
    assert sorted(p.name for p in (work / "memory").iterdir()) == [
        ".gitignore",
        ".kura",
        "MEMORY.md",
        "deploy.md",
    ]
    assert cli("list").out == "deploy  project    we deploy on Tuesdays\n"


@pytest.mark.parametrize("given", ["./nope", "{tmp}/nope"])
def test_remember_makes_the_store_a_path_names(cli: Cli, empty: Path, given: str) -> None:
    selector = given.format(tmp=empty.parent)
    where = empty / "nope" if given == "./nope" else empty.parent / "nope"
    got = cli("-s", selector, "remember", "a", "a first fact")
    assert got.code == 0 and f"made store 'nope' at {where}" in got.err
    assert (where / "MEMORY.md").is_file() and (where / "a.md").is_file()
    shutil.rmtree(where)  # the empty fixture checks that nothing else was made


def test_remember_never_remakes_a_configured_store_whose_folder_is_gone(cli: Cli, deleted: Path) -> None:
    got = cli("remember", "a", "b")
    assert got.code == 1 and "is not there (configured in" in got.err and not deleted.exists()


@pytest.mark.parametrize(
    "args", [["list"], ["weave"], ["context", "deploy"], ["doctor"], ["index"]], ids=" ".join
)
def test_a_folder_that_is_not_a_store_is_not_made_one_by_a_read(
    cli: Cli, isolated: Path, args: list[str]
) -> None:
    folder = isolated / "work" / "notes"
    folder.mkdir()
    (folder / "todo.txt").write_text("a note, and no memory file\n")
    got = cli("-s", str(folder), *args)
    assert got.code == 1 and "is not a kura store (it has no MEMORY.md)" in got.err
    assert sorted(p.name for p in folder.iterdir()) == ["todo.txt"]


@pytest.mark.parametrize("args", [["remember", "a", "b"], ["list"]], ids=" ".join)
def test_an_unknown_store_name_is_one_clear_line_for_writes_as_for_reads(
    cli: Cli, deleted: Path, args: list[str]
) -> None:
    """A name that is neither a configured store nor a folder: the same one line and exit 1
    from ``remember`` as from a read (it was an "unexpected error" with a class name)."""
    got = cli("-s", "nope", *args)
    assert got.code == 1
    assert got.err.startswith("kura: error: no store or mode named 'nope' (stores: maker; modes: none)")
    assert "unexpected" not in got.err and "UnknownStore" not in got.err
