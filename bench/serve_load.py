"""Load on a running ``kura serve``: requests per second, p50/p99 latency, peak memory.

    python bench/serve_load.py [N] [--requests R] [--seconds S] [--keep DIR]
    # default: 5000 memories, 200 requests per figure, at most 20 s per figure

Generates a store of N memories (bench/map_scale.py's generator), builds its search index
with ``kura -s DIR index`` (1–2 minutes at 5,000 on 2 cores; ``--keep DIR`` keeps the store
and its index there and reuses them next time — /remember makes it grow a little each run),
writes a kura.toml for it and starts ``kura serve`` as a subprocess on a free loopback port.
This process is the load generator: threads, each with its own httpx client, send

    GET /prefill 200   the map, no If-None-Match (a full body every time)
    GET /prefill 304   the map with the current ETag (the cheap "has it changed?" call)
    POST /recall       questions from a fixed list, hops 1, top 3
    POST /remember     a new memory each time (fresh slugs, so every call writes)

at 1 and at 8 concurrent clients, R requests per figure or S seconds, whichever ends first.
After a warm-up (model loaded, map woven, index matrix read) each figure is: completed
requests / wall time, and the 50th and 99th percentile of the per-request latency. The
server's memory is VmRSS after the warm-up and its peak, VmHWM, at the end (from
/proc/PID/status, so Linux only). Loopback only; every count and wait is bounded.

The load generator runs on the same machine: on 2 cores, the 8-client figures measure the
server and its client competing for the CPU, so read them as a floor.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from map_scale import ENV, generate

QUESTIONS = (
    "which port does the redis worker use?",
    "what did Mika say about the nightly backup restore?",
    "how do we roll back a failed postgres migration?",
    "who owns the caddy webhook timeout?",
    "where do the flaky pytest fixtures live?",
    "what is the retry policy of the queue worker?",
    "how big is the archive disk on the nvme?",
    "what does Grafana alert on for latency?",
)
CLIENTS = (1, 8)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def kura(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "kura", *args], check=True, env=ENV, capture_output=True)


def prepare(root: Path, n: int) -> None:
    if (root / "MEMORY.md").exists():
        print(f"reusing the store at {root}")
        return
    start = time.perf_counter()
    generate(root, n)
    print(f"generated {n} memories in {time.perf_counter() - start:.1f} s")
    start = time.perf_counter()
    kura("-s", str(root), "index")
    print(f"built the search index in {time.perf_counter() - start:.1f} s")


def proc_status(pid: int, key: str) -> float:
    """A ``kB`` field of /proc/PID/status, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start_server(config: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    args = [sys.executable, "-m", "kura", "--config", str(config), "serve", "--port", str(port)]
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=ENV)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"kura serve exited ({proc.returncode}):\n{log.read_text()}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.05)
    proc.terminate()
    raise SystemExit("kura serve did not answer /health within 60 s")


Call = Callable[[httpx.Client, int, int], httpx.Response]  # client, thread number, request number


def run(
    url: str, call: Call, expected: int, *, clients: int, requests: int, seconds: float
) -> dict[str, float]:
    """``requests`` calls shared by ``clients`` threads (or ``seconds``, whichever ends first)."""
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds
    gate = threading.Barrier(clients)

    def client(t: int) -> None:
        mine: list[float] = []
        with httpx.Client(base_url=url, timeout=60) as http:
            gate.wait()
            for i in range(t, requests, clients):
                if time.monotonic() > deadline:
                    break
                start = time.perf_counter()
                response = call(http, t, i)
                mine.append(time.perf_counter() - start)
                if response.status_code != expected:
                    failures.append(f"{response.status_code} {response.text[:200]}")
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(t,)) for t in range(clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - start
    if failures:
        raise SystemExit(f"{len(failures)} requests failed, e.g. {failures[0]}")
    latencies.sort()
    return {
        "requests": len(latencies),
        "rps": len(latencies) / wall,
        "p50": statistics.median(latencies) * 1000,
        "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000,
    }


def figures(
    url: str, etag: str, run_id: str, requests: int, seconds: float
) -> list[tuple[str, int, dict[str, float]]]:
    fresh = itertools.count()  # a new slug for every remember, across figures and threads
    calls: dict[str, tuple[Call, int]] = {
        "GET /prefill 200": (lambda http, t, i: http.get("/prefill?format=text"), 200),
        "GET /prefill 304": (
            lambda http, t, i: http.get("/prefill?format=text", headers={"if-none-match": etag}),
            304,
        ),
        "POST /recall": (
            lambda http, t, i: http.post(
                "/recall", json={"question": QUESTIONS[i % len(QUESTIONS)], "hops": 1}
            ),
            200,
        ),
        "POST /remember": (
            lambda http, t, i: http.post(
                "/remember",
                json={
                    "slug": f"load-{run_id}-{next(fresh)}",
                    "description": f"load test memory {i} from client {t}",
                },
            ),
            200,
        ),
    }
    rows = []
    for name, (call, expected) in calls.items():
        for clients in CLIENTS:
            rows.append(
                (name, clients, run(url, call, expected, clients=clients, requests=requests, seconds=seconds))
            )
            print(f"  {name:<17} {clients} clients: done", file=sys.stderr)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("n", nargs="?", type=int, default=5000, help="memories in the generated store")
    parser.add_argument("--requests", type=int, default=200, help="requests per figure")
    parser.add_argument("--seconds", type=float, default=20.0, help="at most this long per figure")
    parser.add_argument("--keep", type=Path, help="keep (and reuse) the store and its index here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kura-serve-load-"))
    root = args.keep.absolute() if args.keep else work / "store"
    try:
        prepare(root, args.n)
        config = work / "kura.toml"
        config.write_text(f'[stores.load]\npath = "{root}"\n')
        port = free_port()
        start = time.perf_counter()
        proc = start_server(config, port, work / "serve.log")
        started = time.perf_counter() - start
        url = f"http://127.0.0.1:{port}"
        try:
            warm = time.perf_counter()
            etag = httpx.get(f"{url}/prefill?format=text", timeout=120).headers["etag"]
            httpx.post(f"{url}/recall", json={"question": QUESTIONS[0]}, timeout=120).raise_for_status()
            warmed = time.perf_counter() - warm
            rss = proc_status(proc.pid, "VmRSS")
            rows = figures(url, etag, str(int(time.time())), args.requests, args.seconds)
            peak = proc_status(proc.pid, "VmHWM")
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        memories = len(list(root.glob("*.md"))) - 1
        print(f"\nkura serve under load: {memories} memories, {os.cpu_count()} CPUs, client in this process")
        print(f"server up in {started:.1f} s; first /prefill + first /recall (warm-up) {warmed:.1f} s\n")
        print(f"{'route':<18} {'clients':>7} {'requests':>9} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8}")
        for name, clients, row in rows:
            print(
                f"{name:<18} {clients:>7} {row['requests']:>9.0f} {row['rps']:>8.1f} "
                f"{row['p50']:>8.1f} {row['p99']:>8.1f}"
            )
        print(f"\nserver memory: {rss:.0f} MiB resident after warm-up, {peak:.0f} MiB peak (VmHWM)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
