"""Hostile or broken files are findings, never outages.

Every case is a file someone could leave in a store — by accident (a crash, a merge, a
binary saved as ``.md``) or on purpose (a repository cloned from a stranger) — with what
kura must do about it: read the rest of the store as usual and name the one bad file, with
its path and line and what to do, instead of hanging, eating memory, crashing or reading
bytes from outside the store."""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import httpx
import pytest
from conftest import Cli, make_store, uvicorn_app, write_memory

from kura.config import parse_config
from kura.errors import NotFound
from kura.health.doctor import diagnose
from kura.serve.http import create_app
from kura.serve.pool import StorePool
from kura.store.store import Store, init_store

SECRET = "OUTSIDE-SECRET-7f3a9c"
MEMORY_CAP = 4 << 20  # kura.store.safe_read.MEMORY_CAP, as documented
INDEX_CAP = 16 << 20  # kura.store.safe_read.INDEX_CAP
HEALTHY = [
    ("deploy-day", "project", "deploys go out on tuesday after the standup", None),
    ("archive-disk", "project", "the archive lives on the slow disk", None),
    ("editor", "user", "the person edits memories in vim", None),
]
DEPTH = 1000
SHAPES = {
    "flow sequence": "x: " + "[" * DEPTH + "]" * DEPTH + "\n",
    "flow mapping": "x: " + "{a: " * DEPTH + "1" + "}" * DEPTH + "\n",
    "block mapping": "x:\n" + "".join(" " * i + "a:\n" for i in range(1, DEPTH)) + " " * DEPTH + "b\n",
    "block sequence": "x:\n" + "- " * DEPTH + "1\n",
}
TOO_DEEP = "frontmatter nests more than 64 levels deep; read it as flat key: value lines — flatten that value"


@pytest.fixture
def mem(tmp_path: Path) -> Store:
    """A healthy store of three memories (named ``mem``, on the command line too)."""
    return make_store(tmp_path / "mem", HEALTHY)


def hostile(root: Path, slug: str, front: str, body: str = "body\n") -> Path:
    path = root / f"{slug}.md"
    path.write_text(f"---\nname: {slug}\ndescription: the {slug} one\ntype: project\n{front}---\n{body}")
    return path


def messages(memory: Any) -> list[str]:
    return [str(f) for f in memory.findings]


# -- deeply nested YAML --------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_deeply_nested_frontmatter_is_one_finding(mem: Store, shape: str) -> None:
    hostile(mem.root, "deep", SHAPES[shape])
    found = {m.slug: m for m in mem.list()}
    assert sorted(found) == ["archive-disk", "deep", "deploy-day", "editor"]
    assert messages(found["deep"]) == [f"mem/deep.md:5: {TOO_DEEP}"]
    assert (found["deep"].name, found["deep"].description, found["deep"].type) == (
        "deep",
        "the deep one",
        "project",
    )
    assert all(not found[slug].findings for slug in ("archive-disk", "deploy-day", "editor"))


def test_the_flat_reader_reads_a_deep_value_as_its_text(mem: Store) -> None:
    """The flat reader reads each key on its own, with YAML where it can: a deep key must not
    take that reader down either, and every other key keeps what it can."""
    hostile(mem.root, "deep", "broken: a: b\n" + SHAPES["flow sequence"])
    deep = mem.show("deep")
    assert messages(deep) == [f"mem/deep.md:6: {TOO_DEEP}"]
    assert deep.note.meta["x"] == "[" * DEPTH + "]" * DEPTH
    assert deep.note.meta["broken"] == "a: b"


def laughs(levels: int = 9) -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("front", "problem"),
    [
        (laughs(), "mem/lol.md:9: frontmatter aliases (*name) expand to more than 10000 values"),
        ("x: &x [*x]\n", "mem/lol.md:5: frontmatter holds a value that contains itself (an alias inside its anchor)"),
        ("".join(f"a{i}: &a{i} [*a{i - 1}]\n" if i else "a0: &a0 [x]\n" for i in range(200)),
         "mem/lol.md:69: frontmatter aliases (*name) nest more than 64 levels deep"),
    ],
    ids=["billion laughs", "itself", "alias chain"],
)  # fmt: skip
def test_aliases_that_explode_or_loop_are_one_finding(mem: Store, cli: Cli, front: str, problem: str) -> None:
    hostile(mem.root, "lol", front)
    lol = mem.show("lol")
    assert messages(lol) == [f"{problem}; read it as flat key: value lines — write the values out"]
    shown = cli("-s", str(mem.root), "show", "lol", "--json")
    assert shown.code == 0
    assert json.loads(shown.out)["description"] == "the lol one"


def test_deep_frontmatter_leaves_every_command_working(mem: Store, cli: Cli) -> None:
    hostile(mem.root, "deep", SHAPES["flow sequence"])
    s = ("-s", str(mem.root))
    listed = cli(*s, "list")
    assert listed.code == 0
    assert [line.split()[0] for line in listed.out.splitlines()] == [
        "archive-disk",
        "deep",
        "deploy-day",
        "editor",
    ]
    assert cli(*s, "weave").code == 0
    doctor = cli(*s, "doctor")
    assert doctor.code == 1
    assert f"  mem/deep.md:5: {TOO_DEEP}  [files]" in doctor.out.splitlines()
    recall = cli(*s, "recall", "--no-model", "which disk holds the archive")
    assert recall.code == 0
    assert "=== archive-disk ===" in recall.out
    context = cli(*s, "context", "--json", "move the archive to another disk")
    assert context.code == 0
    assert "archive-disk" in context.out


def test_deep_frontmatter_over_http_is_a_finding_not_a_500(mem: Store) -> None:
    hostile(mem.root, "deep", SHAPES["block sequence"])
    service = StorePool(parse_config({"stores": {"mem": {"path": str(mem.root)}}}))
    with uvicorn_app(create_app(service, watch=False)) as url, httpx.Client(base_url=url, timeout=60) as http:
        listed = http.get("/memories")
        assert listed.status_code == 200
        assert [m["slug"] for m in listed.json()] == ["archive-disk", "deep", "deploy-day", "editor"]
        one = http.get("/memory/deep")
        assert one.status_code == 200
        assert one.json()["findings"] == [f"mem/deep.md:5: {TOO_DEEP}"]
        doctor = http.get("/doctor")
        assert doctor.status_code == 200
        assert {"check": "files", "severity": "error", "path": "mem/deep.md", "line": 5,
                "message": TOO_DEEP} in doctor.json()["findings"]  # fmt: skip
        recall = http.post("/recall", json={"question": "which disk holds the archive"})
        assert recall.status_code == 200
        assert "archive-disk" in [p["slug"] for p in recall.json()["picked"]]
        context = http.post("/context", json={"task": "move the archive to another disk"})
        assert context.status_code == 200
    service.close()


# -- special files: FIFOs, devices, sockets, links to /dev/zero --------------------------------


def kura(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """A real ``kura`` process; one that does not finish in ``timeout`` seconds has hung."""
    try:
        return subprocess.run(
            [sys.executable, "-m", "kura", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"kura {' '.join(args)} hung (no answer in {timeout:g} s)")


def specials(root: Path) -> None:
    os.mkfifo(root / "fifo.md")
    (root / "zero.md").symlink_to("/dev/zero")


FIFO_FINDING = (
    "mem/fifo.md:1: a FIFO, not a regular file; not read — replace it with a plain file or remove it"
)
ZERO_FINDING = ("mem/zero.md:1: symlink points outside the store (or at something that is not a memory); "
                "ignored — replace it with the file itself")  # fmt: skip


def test_special_files_named_like_memories_are_findings(mem: Store, tmp_path: Path) -> None:
    specials(mem.root)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(mem.root / "sock.md"))
    if os.geteuid() == 0:  # only root may make a device node
        os.mknod(mem.root / "dev.md", 0o600 | 0o020000, os.makedev(1, 5))  # a second /dev/zero
    try:
        for args in (("list",), ("weave",), ("prefill",), ("recall", "--no-model", "archive disk")):
            done = kura("-s", str(mem.root), *args)
            assert done.returncode == 0, (args, done.stderr)
        doctor = kura("-s", str(mem.root), "doctor")
    finally:
        sock.close()
    assert doctor.returncode == 1
    found = [
        line.strip().removesuffix("  [files]") for line in doctor.stdout.splitlines() if "[files]" in line
    ]
    expected = [FIFO_FINDING,
                "mem/sock.md:1: a socket, not a regular file; not read — replace it with a plain file or remove it",
                ZERO_FINDING]  # fmt: skip
    if os.geteuid() == 0:
        expected.insert(0, "mem/dev.md:1: a device, not a regular file; not read — replace it with a plain file "
                        "or remove it")  # fmt: skip
    assert sorted(found) == sorted(expected)


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_special_index_never_hangs_a_command(mem: Store, kind: str) -> None:
    index = mem.root / "MEMORY.md"
    index.unlink()
    if kind == "fifo":
        os.mkfifo(index)
    else:
        index.symlink_to("/dev/zero")
    s = ("-s", str(mem.root))
    listed = kura(*s, "list")
    assert listed.returncode == 0
    assert [line.split()[0] for line in listed.stdout.splitlines()] == [
        "archive-disk",
        "deploy-day",
        "editor",
    ]
    what = (
        "a FIFO, not a regular file; the index was not read — replace it with a plain file or remove it"
        if kind == "fifo"
        else "a symlink to somewhere outside the store; the index was not read — replace it with the file itself"
    )
    weave = kura(*s, "weave")
    assert weave.returncode == 1
    assert f"MEMORY.md: {what}" in weave.stderr
    doctor = kura(*s, "doctor")
    assert doctor.returncode == 1
    assert [line for line in doctor.stdout.splitlines()[2:] if "[graph" not in line] == [
        f"  MEMORY.md:1: {what}  [files]"
    ]
    fixed = kura(*s, "doctor", "--fix")  # repairs nothing it could not read
    assert (fixed.returncode, fixed.stderr) == (1, "")
    prefill = kura(*s, "prefill")
    assert prefill.returncode == 1
    assert "<<<END KURA-MAP>>>" in prefill.stdout
    recall = kura(*s, "recall", "--no-model", "which disk holds the archive")
    assert recall.returncode == 0
    assert "=== archive-disk ===" in recall.stdout
    context = kura(*s, "context", "move the archive to another disk")
    assert context.returncode == 0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def bounded(limit: int = 3 << 29) -> Callable[[], None]:
    """For a child process: at most ``limit`` bytes of address space, so a reader that never
    stops dies of MemoryError instead of taking the machine with it."""
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.fixture
def spawn() -> Iterator[Callable[..., subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []

    def start(*args: str) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "-m", "kura", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, preexec_fn=bounded(),
        )  # fmt: skip
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def poll(check: Callable[[], Any], *, within: float, what: str) -> Any:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.05)
    pytest.fail(f"{what} (waited {within:g} s)")


@pytest.mark.parametrize("index", ["plain", "fifo"])
def test_serve_starts_and_answers_beside_special_files(
    mem: Store, spawn: Callable[..., subprocess.Popen[str]], index: str
) -> None:
    specials(mem.root)
    if index == "fifo":
        (mem.root / "MEMORY.md").unlink()
        os.mkfifo(mem.root / "MEMORY.md")
    port = free_port()
    server = spawn("-s", str(mem.root), "serve", "--port", str(port))
    url = f"http://127.0.0.1:{port}"

    def health() -> bool:
        assert server.poll() is None, server.stdout.read() if server.stdout else ""
        try:
            return httpx.get(f"{url}/health", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    poll(health, within=30, what="kura serve never answered /health")
    assert rss_kib(server.pid) < 300_000
    listed = httpx.get(f"{url}/memories", timeout=30)
    assert listed.status_code == 200
    assert [m["slug"] for m in listed.json()] == ["archive-disk", "deploy-day", "editor"]
    doctor = httpx.get(f"{url}/doctor", timeout=30).json()
    assert {"check": "files", "severity": "error", "path": "mem/fifo.md", "line": 1,
            "message": FIFO_FINDING.split(":1: ", 1)[1]} in doctor["findings"]  # fmt: skip


def readline_until(stream: IO[str], wanted: str, *, within: float) -> list[str]:
    """Lines from a child's output up to one that contains ``wanted``."""
    import selectors

    seen: list[str] = []
    chooser = selectors.DefaultSelector()
    chooser.register(stream, selectors.EVENT_READ)
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if chooser.select(timeout=0.1):
            line = stream.readline()
            if not line:
                break
            seen.append(line)
            if wanted in line:
                return seen
    pytest.fail(f"never saw {wanted!r} in {seen!r} (waited {within:g} s)")


def test_watch_stays_small_and_responsive_beside_special_files(
    mem: Store, spawn: Callable[..., subprocess.Popen[str]]
) -> None:
    specials(mem.root)
    watcher = spawn("-s", str(mem.root), "watch", "--no-model", "--no-index", "--debounce", "0.05")
    assert watcher.stdout is not None
    readline_until(watcher.stdout, "watching", within=30)
    os.utime(mem.root / "zero.md", follow_symlinks=False)  # events on both special files
    (mem.root / "fifo.md").touch()
    write_memory(mem.root, "new-fact", "project", "a memory written while watching")
    with (mem.root / "MEMORY.md").open("a") as index:
        index.write("- [new-fact](new-fact.md) — a memory written while watching\n")
    readline_until(watcher.stdout, "wove mem map", within=30)
    assert watcher.poll() is None
    assert rss_kib(watcher.pid) < 300_000


# -- a memory swapped for a link between the check and the read --------------------------------


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "outside.md"
    path.write_text(f"---\nname: s\ndescription: {SECRET}\ntype: user\n---\n{SECRET} archive disk\n")
    return path


def swap_for_link(path: Path, target: Path) -> None:
    tmp = path.with_name(".swap")
    tmp.symlink_to(target)
    os.replace(tmp, path)


def test_a_memory_swapped_for_a_link_after_the_lookup_is_not_read_through_it(
    mem: Store, secret: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked = Store._contained

    def check_then_swap(self: Store, path: Path) -> Any:
        found = checked(self, path)
        if not (mem.root / "archive-disk.md").is_symlink():
            swap_for_link(mem.root / "archive-disk.md", secret)
        return found

    monkeypatch.setattr(Store, "_contained", check_then_swap)
    shown = mem.show("archive-disk")
    assert SECRET not in json.dumps(shown.to_dict())
    assert messages(shown) == [
        "mem/archive-disk.md:1: symlink points outside the store (or at something that is not a memory); "
        "not read — replace it with the file itself"
    ]
    with pytest.raises(NotFound, match="no memory 'archive-disk'"):
        mem.read("archive-disk")


def test_a_listed_memory_swapped_for_a_link_before_its_read_is_not_read_through_it(
    mem: Store, secret: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    walked = Store._entries

    def walk_then_swap(self: Store) -> Iterator[tuple[str, str]]:
        yield from walked(self)
        swap_for_link(mem.root / "archive-disk.md", secret)

    monkeypatch.setattr(Store, "_entries", walk_then_swap)
    listed = mem.list()
    assert [m.slug for m in listed] == ["archive-disk", "deploy-day", "editor"]
    assert SECRET not in json.dumps([m.to_dict() for m in listed])
    assert messages(listed[0]) == [
        "mem/archive-disk.md:1: symlink points outside the store (or at something that is not a memory); "
        "not read — replace it with the file itself"
    ]


def test_recall_never_returns_the_bytes_of_a_memory_swapped_for_a_link(
    mem: Store, secret: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Someone flips the file to a link and back: every lookup sees the memory, and every
    read right after a lookup of it would see the link."""
    looked_up = Store.resolve
    victim = mem.root / "archive-disk.md"
    kept = victim.read_bytes()

    def look_up_then_swap(self: Store, slug: str) -> Path:
        if victim.is_symlink():
            victim.unlink()
            victim.write_bytes(kept)
        found = looked_up(self, slug)
        if slug == "archive-disk":
            swap_for_link(found, secret)
        return found

    monkeypatch.setattr(Store, "resolve", look_up_then_swap)
    recall = cli("-s", str(mem.root), "recall", "--no-model", "--json", "which disk holds the archive")
    assert SECRET not in recall.out + recall.err
    # the index took the memory's words from the catalog's one read of the regular file (issue
    # 33), so the memory is found; every read of it after a lookup meets the link and is refused
    assert recall.code == 0
    answer = json.loads(recall.out)
    assert [hit["slug"] for hit in answer["picked"]] == ["archive-disk"]
    assert (
        "symlink points outside the store (or at something that is not a memory); not read"
        in answer["context"]
    )


@pytest.mark.parametrize("where", ["file", "folder", "link target"])
def test_the_reader_refuses_a_link_swapped_in_after_its_check(
    tmp_path: Path, secret: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """The last line of defence: whatever the checks before it saw, the open itself does not
    follow a link, and the opened file is checked again before a byte is read."""
    from kura.store import safe_read

    root = tmp_path / "store"
    (root / "team").mkdir(parents=True)
    (root / "team" / "a.md").write_text("inside\n")
    (root / "alias.md").symlink_to("team/a.md")
    rel = {"file": "team/a.md", "folder": "team/a.md", "link target": "alias.md"}[where]
    looked = safe_read._lstat

    def look_then_swap(name: str, dir_fd: int | None) -> os.stat_result:
        found = looked(name, dir_fd)
        if where == "folder" and name == "team":
            (root / "team").rename(root / "team-was")
            (root / "team").symlink_to(secret.parent)
            os.rename(secret, secret.parent / "a.md")
        elif where != "folder" and name == "a.md":
            swap_for_link(root / "team" / "a.md", secret)
        return found

    monkeypatch.setattr(safe_read, "_lstat", look_then_swap)
    got = safe_read.read_in(root, rel, cap=MEMORY_CAP)
    assert isinstance(got, safe_read.Refused)
    assert SECRET.encode() not in repr(got).encode()
    assert got.what == (
        "a folder on its path was replaced by a symlink or a file while kura read it"
        if where == "folder"
        else "was replaced by a symlink while kura read it"
    )


# -- doctor reports what it was silent on --------------------------------------------------------


def doctor_lines(cli: Cli, store: Store, *flags: str) -> tuple[int, list[str]]:
    done = cli("-s", str(store.root), "doctor", *flags)
    return done.code, [line.strip() for line in done.out.splitlines()[2:] if "[graph" not in line]


def test_doctor_reports_nul_bytes(mem: Store, cli: Cli) -> None:
    write_memory(mem.root, "binary", "project", "a memory with a NUL", body="one\ntwo\x00three\n")
    index = mem.root / "MEMORY.md"
    index.write_text(index.read_text().replace("\n\n", "\n\x00\n", 1) + "- [binary](binary.md) — nul\n")
    code, lines = doctor_lines(cli, mem)
    assert code == 1
    assert lines == [
        "MEMORY.md:2: holds NUL bytes (the first on this line): a binary file or a broken save — remove them  [files]",
        "mem/binary.md:8: holds NUL bytes (the first on this line): a binary file or a broken save — "
        "remove them  [files]",
    ]


def test_doctor_reports_oversized_files_without_reading_them_whole(mem: Store, cli: Cli) -> None:
    big = mem.root / "big.md"
    big.write_bytes(b"---\nname: big\ndescription: big\ntype: project\n---\n" + b"x" * MEMORY_CAP)
    size = big.stat().st_size
    listed = cli("-s", str(mem.root), "list")
    assert listed.code == 0
    assert [line.split()[0] for line in listed.out.splitlines()] == [
        "archive-disk",
        "big",
        "deploy-day",
        "editor",
    ]
    shown = cli("-s", str(mem.root), "show", "big")
    assert (shown.code, shown.out) == (1, "")
    assert shown.err == (f"kura: error: mem/big.md:1: {size} bytes, over the 4 MiB kura reads in a memory; not read "
                         "— split it into smaller memories or move it out of the store\n")  # fmt: skip
    code, lines = doctor_lines(cli, mem)
    assert code == 1
    assert f"mem/big.md:1: {size} bytes, over the 4 MiB kura reads in a memory; not read — split it into smaller " \
           "memories or move it out of the store  [files]" in lines  # fmt: skip
    index = mem.root / "MEMORY.md"
    with index.open("ab") as handle:
        handle.write(b"<!-- padding -->\n" * (INDEX_CAP // 17 + 1))
    code, lines = doctor_lines(cli, mem)
    assert code == 1
    assert f"MEMORY.md:1: {index.stat().st_size} bytes, over the 16 MiB kura reads in the index; the index was " \
           "not read — move what is not an index line out of it  [files]" in lines  # fmt: skip


def test_doctor_reports_stale_temporary_files(mem: Store, cli: Cli) -> None:
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_pid = int(gone.stdout)
    (mem.root / f".deploy-day.md.{dead_pid}.0a1b2c3d.tmp").write_text("half a save")
    old = mem.root / f".MEMORY.md.{os.getpid()}.deadbeef.tmp"
    old.write_text("an old one")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    (mem.root / f".editor.md.{os.getpid()}.12345678.tmp").write_text("being written right now")
    code, lines = doctor_lines(cli, mem)
    assert code == 0
    assert sorted(lines) == [
        f"mem/.MEMORY.md.{os.getpid()}.deadbeef.tmp:1: a temporary file left by a write that did not finish "
        "(written 120 minutes ago); MEMORY.md is as it was before that write — delete it  [files, warning]",
        f"mem/.deploy-day.md.{dead_pid}.0a1b2c3d.tmp:1: a temporary file left by a write that did not finish "
        f"(its process {dead_pid} is gone); deploy-day.md is as it was before that write — delete it  [files, warning]",
    ]
    assert doctor_lines(cli, mem, "--strict")[0] == 1


def test_doctor_reports_what_hides_the_rest_of_the_index(mem: Store, cli: Cli) -> None:
    index = mem.root / "MEMORY.md"
    lines = index.read_text().splitlines()
    index.write_text("\n".join([*lines[:2], "<!-- a note that never ends", *lines[2:]]) + "\n")
    code, found = doctor_lines(cli, mem)
    assert code == 1
    assert found[0] == (
        "MEMORY.md:3: an HTML comment opened here (<!--) is never closed, so the 3 lines after it are hidden "
        "from the map — close it with -->  [files]"
    )
    index.write_text("\n".join([*lines[:3], "```", *lines[3:]]) + "\n")
    code, found = doctor_lines(cli, mem)
    assert code == 1
    assert found[0] == (
        "MEMORY.md:4: a code fence opened here (```) is never closed, so the 2 lines after it are hidden "
        "from the map — close it with a ``` line  [files]"
    )


CONFLICT = "<<<<<<< HEAD\nthe archive lives on the slow disk\n=======\nthe archive lives on the fast disk\n>>>>>>> b\n"


def test_doctor_reports_git_conflict_markers_in_every_file_it_reads(mem: Store, cli: Cli) -> None:
    write_memory(mem.root, "archive-disk", "project", "the archive disk", body=CONFLICT)
    index = mem.root / "MEMORY.md"
    index.write_text(index.read_text() + "<<<<<<< HEAD\n- [x](editor.md) — ours\n=======\n>>>>>>> b\n")
    (mem.root / "_observations.md").write_text(f"# Observations\n\n## 2026-11-30\n- 🟡 a\n{CONFLICT}")
    code, lines = doctor_lines(cli, mem)
    assert code == 1
    marker = ("a git merge conflict left in the file at lines {} (<<<<<<<, =======, >>>>>>>): both sides are "
              "read as one — resolve it and remove the markers  [files]")  # fmt: skip
    assert f"MEMORY.md:6: {marker.format('6–9')}" in lines
    assert f"mem/archive-disk.md:7: {marker.format('7–11')}" in lines
    assert f"_observations.md:5: {marker.format('5–9').replace('[files]', '[observations]')}" in lines


def test_a_lone_setext_underline_is_no_conflict(mem: Store, cli: Cli) -> None:
    write_memory(mem.root, "archive-disk", "project", "the archive disk", body="Disks\n=======\n\nslow.\n")
    assert doctor_lines(cli, mem) == (0, [])


def test_a_comment_mark_kura_escaped_is_no_unclosed_comment(tmp_path: Path) -> None:
    """kura writes a ``<!--`` inside a description as ``\\<!--``: plain text to the index's
    parser, and so to doctor."""
    store, _ = init_store(tmp_path / "s", name="s")
    store.remember("a", "<!-- x")
    store.remember("b", "written after it")
    report = diagnose(Store(store.root))
    assert [f for _, f in report.findings if "never closed" in f.message] == []
