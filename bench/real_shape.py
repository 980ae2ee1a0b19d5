"""Every row of the speed issue's table (issue 33), for both store generators, each beside its target.

    python bench/real_shape.py [--shape kura|distill-kura|both] [--keep DIR] [--skip-build] [--map-only]
                               [N ...]
    # default: both shapes, 500 and 20000 memories

For each shape and size a store is written by bench/map_scale.py's generator (``kura``: the
generator kura's other benches use; ``distill-kura``: flat ``key: value`` frontmatter with
unquoted ``": "``, ``metadata: type:``, Japanese and English, ~1.1 links a memory). Every figure
is one whole ``kura`` process, as a hook or an agent runs it, with its wall seconds, its CPU
seconds (user + system, from ``wait4``: the work, which a loaded machine stretches far less than
the wall) and its peak resident memory. The rows:

    weave cold         first ``kura weave --no-model`` of a copy with no ``.kura/`` (median of 3)
    weave unchanged    weave again, nothing changed (median of 3)
    weave one edit     weave after one memory's body was edited (median of 3 edits)
    doctor             ``kura doctor`` with the catalog current (median of 3)
    list               ``kura list`` with the catalog current (median of 3)
    first recall       ``kura recall Q --no-model`` on a copy no recall has indexed (the default
                       embedding budget; median of 3 copies)
    index build        ``kura index`` from nothing: memories/s of wall time, peak memory
    recall cold        ``kura recall Q --no-model`` with the index whole (median of 5 questions)
    recall warm serve  POST /recall to a running ``kura serve``: median of 50 after a warm-up

The targets are the issue's, stated for 20,000 memories on this 2-core machine at load ≤ 1
(recall cold has one at 500 too; doctor at 500 is held to distill-kura's 0.43 s). Each row says
"ok" or "over" by its wall time when the 1-minute load was ≤ 1.5 while it ran, else by CPU
seconds, and says which. The web pages at 10,000 memories have their own script
(bench/web_pages.py). ``--keep DIR`` keeps each built store and index in DIR/SHAPE-N and reuses
it: a 20,000-memory index build takes minutes. ``--skip-build`` leaves out the index build and
the two rows that need a whole index; ``--map-only`` leaves out every row that runs the model
(first recall too). KURA_HOME and HOME point at a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from first_recall import stop_build
from map_scale import ENV, generate, generate_distill

QUESTIONS = (
    "How do we restore the nightly postgres backup?",
    "what did we decide about the deploy token",
    "which runbook covers the grafana alerts",
    "where do the coverage reports go",
    "who reviews the lockfile changes",
)
CALM = 1.5  # a 1-minute load at or under this: the wall time is judged


@dataclass(frozen=True, slots=True)
class Run:
    wall: float
    cpu: float
    peak_mb: float
    load: float


@dataclass(frozen=True, slots=True)
class Row:
    label: str
    run: Run
    target: float | None  # seconds (for "index build": memories/s, higher is better)
    note: str = ""


def kura(home: Path, *args: str, check: bool = True) -> Run:
    """One whole ``kura`` process: wall, CPU and peak RSS from ``wait4``."""
    env = {**ENV, "KURA_HOME": str(home / "kura"), "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kura", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if check and proc.returncode not in (0, 2):
        sys.exit(f"kura {' '.join(args)} failed ({proc.returncode}): {err.decode()[-800:]}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.getloadavg()[0])


def middle(runs: list[Run]) -> Run:
    """The run with the median wall time (its CPU and peak with it), the load the highest seen."""
    ordered = sorted(runs, key=lambda run: run.wall)
    mid = ordered[len(ordered) // 2]
    return Run(mid.wall, statistics.median(r.cpu for r in runs), max(r.peak_mb for r in runs),
               max(r.load for r in runs))  # fmt: skip


def copy_of(template: Path, to: Path) -> Path:
    shutil.rmtree(to, ignore_errors=True)
    subprocess.run(["cp", "-a", str(template), str(to)], check=True)
    shutil.rmtree(to / ".kura", ignore_errors=True)
    return to


def map_rows(home: Path, template: Path, scratch: Path, n: int) -> list[Row]:
    store = copy_of(template, scratch / "map")
    s = str(store)
    colds = []
    for _ in range(3):
        shutil.rmtree(store / ".kura", ignore_errors=True)
        colds.append(kura(home, "-s", s, "weave", "--no-model"))
    unchanged = [kura(home, "-s", s, "weave", "--no-model") for _ in range(3)]
    edits = []
    memories = sorted(p for p in store.glob("m*.md"))
    for k in range(3):
        target = memories[(k * 7919) % len(memories)]
        target.write_bytes(target.read_bytes() + f"\nedited {k}\n".encode())
        edits.append(kura(home, "-s", s, "weave", "--no-model"))
    doctor = [kura(home, "-s", s, "doctor", check=False) for _ in range(3)]
    listed = [kura(home, "-s", s, "list") for _ in range(3)]
    return [
        Row("weave cold", middle(colds), 2.5),
        Row("weave unchanged", middle(unchanged), 0.3),
        Row("weave one edit", middle(edits), 0.5),
        Row("doctor", middle(doctor), 0.43 if n <= 500 else 2.0),
        Row("list", middle(listed), 0.5),
    ]


def first_recall(home: Path, template: Path, scratch: Path) -> Row:
    runs = []
    for run in range(3):
        store = copy_of(template, scratch / f"first-{run}")
        runs.append(kura(home, "-s", str(store), "recall", QUESTIONS[0], "--no-model"))
        stop_build(store)  # the background build it left would load the next figures
    return Row("first recall", middle(runs), 5.0, "no vectors yet, default embedding budget")


def built(
    home: Path, template: Path, keep: Path | None, name: str, scratch: Path, n: int
) -> tuple[Path, Row]:
    """A store with a whole index (kept in ``keep`` when given), and the build's row."""
    store = (keep / name) if keep else scratch / "built"
    if keep and (store / ".kura").is_dir():  # a kept index: finished if a build stopped, else current
        kura(home, "-s", str(store), "index")
        return store, Row("index build", Run(float("nan"), float("nan"), float("nan"), 0.0), 120.0, "reused")
    copy_of(template, store)
    run = kura(home, "-s", str(store), "index")
    rate = Run(n / run.wall, n / run.cpu if run.cpu else float("nan"), run.peak_mb, run.load)
    return store, Row("index build", rate, 120.0, "memories/s (wall, then per CPU s); peak ≤ 400 MB")


def recall_cold(home: Path, store: Path, n: int) -> Row:
    kura(home, "-s", str(store), "recall", QUESTIONS[0], "--no-model")  # the matrix saved once
    runs = [kura(home, "-s", str(store), "recall", q, "--no-model") for q in QUESTIONS]
    return Row("recall cold", middle(runs), 0.8 if n <= 500 else 0.9, "peak ≤ 200 MB")


def recall_warm(home: Path, store: Path, scratch: Path) -> Row:
    with served(home, store, scratch) as (http, pid):
        found = timed(http, pid, [QUESTIONS[i % len(QUESTIONS)] for i in range(50)])
    return Row("recall warm serve", found, 0.020, "median of 50 POST /recall; CPU: the server's, per request")


@contextmanager
def served(home: Path, store: Path, scratch: Path, **env: str) -> Iterator[tuple[Any, int]]:
    """A running ``kura serve`` of ``store`` (its config in ``scratch``), warmed up with
    QUESTIONS: an httpx client on it and the server's pid."""
    import httpx

    config = scratch / "kura.toml"
    config.write_text(f'[stores.bench]\npath = "{store}"\n')
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**ENV, "KURA_HOME": str(home / "kura"), "HOME": str(home), **env}
    args = [sys.executable, "-m", "kura", "--config", str(config), "serve", "--port", str(port)]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        with httpx.Client(base_url=url, timeout=120) as http:
            for q in QUESTIONS:  # warm-up: the model loaded, the matrix read
                http.post("/recall", json={"question": q}).raise_for_status()
            yield http, proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def timed(http: Any, pid: int, asked: list[str]) -> Run:
    """Each question POSTed to /recall in turn: the median wall and the server's CPU a request."""
    times, used = [], _cpu_of(pid)
    for question in asked:
        start = time.perf_counter()
        http.post("/recall", json={"question": question}).raise_for_status()
        times.append(time.perf_counter() - start)
    used = (_cpu_of(pid) - used) / len(asked)
    return Run(statistics.median(times), used, float("nan"), os.getloadavg()[0])


def _cpu_of(pid: int) -> float:
    """User + system CPU seconds of a running process (Linux: /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def verdict(row: Row) -> str:
    run, target = row.run, row.target
    if target is None or run.wall != run.wall:  # NaN: reused, nothing measured
        return ""
    if row.label == "index build":
        return "  ok" if run.wall >= target else f"  over (load {run.load:.1f})"
    by_wall = run.load <= CALM or run.cpu != run.cpu  # NaN: no CPU figure
    value = run.wall if by_wall else run.cpu
    judged = "wall" if by_wall else "CPU"
    return f"  {'ok' if value <= target else 'over'} by {judged}"


def show(shape: str, n: int, rows: list[Row]) -> None:
    print(f"\n{shape} shape, {n} memories")
    for row in rows:
        run = row.run
        if row.label == "index build":
            figure = f"{run.wall:7.1f} /s wall  {run.cpu:6.1f} /CPU s  {run.peak_mb:5.0f} MB"
            target = f"target ≥ {row.target:g}/s"
        elif row.label == "recall warm serve":
            figure = f"{run.wall * 1000:7.1f} ms wall  {run.cpu * 1000:6.1f} CPU ms"
            target = f"target ≤ {row.target * 1000:g} ms"  # type: ignore[operator]
        else:
            figure = f"{run.wall:7.2f} s wall  {run.cpu:6.2f} CPU s  {run.peak_mb:5.0f} MB"
            target = f"target ≤ {row.target:g} s"
        note = f"  ({row.note})" if row.note else ""
        print(f"  {row.label:<18} {figure:<44} {target:<16} load {run.load:4.1f}{verdict(row)}{note}")


def measure(shape: str, n: int, keep: Path | None, skip_build: bool, *, map_only: bool = False) -> None:
    with tempfile.TemporaryDirectory(prefix="kura-real-shape-") as tmp:
        scratch = Path(tmp)
        home = scratch / "home"
        home.mkdir()
        template = scratch / "template"
        (generate_distill if shape == "distill-kura" else generate)(template, n)
        kura(home, "--help")  # compile and cache the modules once
        rows = map_rows(home, template, scratch, n)
        if map_only:
            show(shape, n, rows)
            return
        rows.append(first_recall(home, template, scratch))
        if not skip_build:
            store, build = built(home, template, keep, f"{shape}-{n}", scratch, n)
            rows += [build, recall_cold(home, store, n), recall_warm(home, store, scratch)]
        show(shape, n, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[500, 20000])
    parser.add_argument("--shape", choices=("kura", "distill-kura", "both"), default="both")
    parser.add_argument("--keep", type=Path, help="keep (and reuse) each built store and index here")
    parser.add_argument(
        "--skip-build", action="store_true", help="leave out the index build and the rows needing it"
    )
    parser.add_argument(
        "--map-only", action="store_true", help="only the rows that need no model: weave, doctor and list"
    )
    args = parser.parse_args()
    shapes = ("kura", "distill-kura") if args.shape == "both" else (args.shape,)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    print(f"{os.cpu_count()} CPUs; load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for n in args.sizes:
        for shape in shapes:
            keep = args.keep.absolute() if args.keep else None
            measure(shape, n, keep, args.skip_build, map_only=args.map_only)


if __name__ == "__main__":
    main()
