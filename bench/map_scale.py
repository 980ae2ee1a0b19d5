"""The resident map at scale: whole-process timings of weave and prefill.

    python bench/map_scale.py [N ...]          # default: 500 5000 20000
    python bench/map_scale.py --code [N ...]   # every body also holds code (read by markdown-it-py)
    python bench/map_scale.py --dead 233 [N ...]  # 233 memories also hold a dead, near-miss link
    python bench/map_scale.py --shape distill-kura [N ...]  # the stores distill-kura writes
    python bench/map_scale.py --shape distill-kura --write DIR N  # only write the store to DIR

For each N a generator writes a synthetic store (realistic lines, four types, sections,
dates spread over a year, some memories dated in their frontmatter and some not), then
copies it with ``cp -a`` so mtimes are kept, as a restore would. Each figure is the wall
time of a fresh ``kura`` process (best of 3 where the run can be repeated):

    weave cold        first weave of the copy (no .kura/ state at all)
    weave unchanged   weave again with nothing changed
    weave one edit    weave after one memory file was edited
    prefill           kura prefill with the map current
    doctor            kura doctor with the catalog current (its "did you mean" for every dead link)
    list              kura list with the catalog current

``--shape distill-kura`` writes the stores distill-kura writes (issue 33): flat ``key: value``
frontmatter read line by line, so about 40 % of the descriptions hold an unquoted ``": "``
(not valid YAML), the type under ``metadata:`` for about a third of the memories, mixed
Japanese and English text, about 1.1 ``[[links]]`` a memory and a MEMORY.md of about
185 bytes a line (3.7 MB at 20,000).

Weave cold, unchanged, doctor and list are the median of 3 runs; a second line gives their
CPU seconds (user + system, the process and its workers), which a loaded machine inflates
far less than the wall time. With ``--dead`` the script
also checks, in this process, that doctor's suggestions for the store's dead links are
difflib's (``get_close_matches``, n=1, cutoff 0.75: what doctor used before rapidfuzz) and
prints how many differ.

Targets (issues 3 and 19, 2-core machine): cold ≤ 1.5 s, unchanged ≤ 0.3 s, one edit ≤ 0.5 s,
prefill ≤ 0.1 s, doctor ≤ 1.5 s with hundreds of dead links, list ≤ 0.5 s at 20,000 memories;
on the distill-kura shape (issue 33) cold ≤ 2.5 s and doctor ≤ 2 s.
A "figures" block prints each measurement beside its target and the load average; at
20,000 it marks each ok or over (by CPU seconds where they are measured, else wall).
"""

from __future__ import annotations

import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TYPES = ("user", "feedback", "project", "project", "reference")
WORDS = (
    "deploy staging postgres redis caddy hetzner migration rollback incident runbook oncall "
    "pytest flaky fixture coverage ruff mypy uv lockfile docker compose nightly backup restore "
    "archive disk nvme latency queue worker retry timeout sla ticket routing webhook token"
).split()
NAMES = ("Mika", "Tomasz", "Aiko", "Sam", "Ferrydesk", "GitHub", "Grafana", "Sentry")


def line(rng: random.Random, i: int) -> str:
    words = rng.sample(WORDS, 9)
    return (
        f"{rng.choice(NAMES)} {words[0]} {words[1]} on port {8000 + i % 900} uses {words[2]} "
        f"({rng.randint(2, 64)} GB) because {words[3]} {words[4]} {words[5]}; {words[6]} stays {words[7]}"
    )


def near_miss(rng: random.Random, n: int) -> str:
    """A link a person could have meant for an existing slug, or one that matches nothing."""
    slug = f"m{rng.randrange(n):05d}"
    at = rng.randrange(1, len(slug))
    kind = rng.randrange(5)
    if kind == 0:
        return slug[:at] + slug[at + 1 :]  # a digit dropped
    if kind == 1:
        return slug[:at] + str(rng.randrange(10)) + slug[at:]  # a digit too many
    if kind == 2:
        return slug + rng.choice(("-old", "s", "-v2"))
    if kind == 3:
        return "-".join(rng.sample(WORDS, 2))
    return slug.upper()


def generate(root: Path, n: int, seed: int = 7, *, code: bool = False, dead: int = 0) -> None:
    """``dead``: that many memories (spread evenly) also hold a link that resolves to none."""
    rng = random.Random(seed)
    misses = random.Random(seed + 1)  # its own stream: without dead links the bytes are as before
    every = n // dead if dead else 0
    root.mkdir(parents=True)
    year = 365 * 86400
    now = time.time()
    index = ["# Memory index", ""]
    for section in range(max(1, n // 250)):
        index += ["", f"## Area {section}", ""]
        for i in range(section * 250, min(n, (section + 1) * 250)):
            slug = f"m{i:05d}"
            kind = TYPES[i % len(TYPES)]
            text = line(rng, i)
            dated = f"created: 2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}\n" if i % 3 == 0 else ""
            path = root / f"{slug}.md"
            deadly = every and i % every == 0 and i // every < dead
            path.write_text(
                f"---\nname: Memory {i}\ndescription: {text}\ntype: {kind}\n{dated}---\n\n{text}.\n\n"
                f"**Why:** it matters.\n\nRelated: [[m{(i + 1) % n:05d}]]\n"
                + (
                    f"\nIn bash: `[[ -f m{i}.lock ]]`.\n\n```sh\nif [[ -d /srv/{slug} ]]; then ls; fi\n```\n"
                    if code
                    else ""
                )
                + (f"See also: [[{near_miss(misses, n)}]]\n" if deadly else "")
            )
            stamp = now - rng.random() * year
            os.utime(path, (stamp, stamp))
            index.append(f"- [Memory {i}]({slug}.md) — {text}")
    (root / "MEMORY.md").write_text("\n".join(index) + "\n")


JA = (
    "デプロイ ステージング 本番 障害 対応 手順 確認 設定 変更 監視 バックアップ 復元 移行 検証 "
    "速度 遅い ディスク 鍵 証明書 更新 週次 夜間 担当 レビュー 方針 決定 理由 注意 必ず 禁止"
).split()
LABELS = ("Decided", "Rule", "Why", "Note", "方針", "決定", "Fix", "Gotcha", "理由", "Context")


def mixed(rng: random.Random, i: int) -> str:
    """A line of distill-kura's mixed Japanese and English."""
    ja = rng.sample(JA, 6)
    en = rng.sample(WORDS, 5)
    return (
        f"{ja[0]}{ja[1]}は {en[0]} {en[1]} で{ja[2]}する (KR-{i}); "
        f"{en[2]} の{ja[3]}{ja[4]}は{ja[5]}, {en[3]} {en[4]} を使う"
    )


def generate_distill(root: Path, n: int, seed: int = 11) -> None:
    """A store in distill-kura's shape (see the module's docstring); deterministic for a seed."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    index = ["# Memory index", ""]
    for i in range(n):
        slug, kind, text = f"m{i:05d}", TYPES[i % len(TYPES)], mixed(rng, i)
        described = f"{rng.choice(LABELS)}: {text}" if rng.random() < 0.4 else text  # not YAML
        typed = f"metadata:\n  type: {kind}\n" if rng.random() < 0.35 else f"type: {kind}\n"
        links = f"[[m{(i + 1) % n:05d}]]" + (f" [[m{rng.randrange(n):05d}]]" if rng.random() < 0.1 else "")
        (root / f"{slug}.md").write_text(
            f"---\nname: {slug}-{rng.choice(WORDS)}\ndescription: {described}\n{typed}---\n\n"
            f"{text}。\n\n**Why:** {mixed(rng, i + 1)}.\n"
            f"**How to apply:** {rng.choice(JA)}の前に確認する。\n\nRelated: {links}\n"
        )
        index.append(f"- [{slug}]({slug}.md) — {described} — {rng.choice(JA)}{rng.choice(JA)}")
    (root / "MEMORY.md").write_text("\n".join(index) + "\n")


# Measured as installed tools run: with bytecode caching on (some sandboxes switch it off,
# which makes every process recompile kura's modules and says nothing about kura).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


CPU: list[float] = []  # CPU seconds (user + system) of each process ``kura`` ran, in order


def kura(*args: str) -> float:
    """Wall seconds of one ``kura`` process; its CPU seconds go to ``CPU`` (on a shared,
    loaded machine the wall time is mostly waiting for a core, the CPU time is the work)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kura", *args], check=False, capture_output=True, env=ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall


def best(runs: int, *args: str) -> float:
    return min(kura(*args) for _ in range(runs))


def median(runs: int, *args: str) -> float:
    return statistics.median(kura(*args) for _ in range(runs))


def cpu(runs: int) -> float:
    """The median CPU seconds of the last ``runs`` processes."""
    return statistics.median(CPU[-runs:])


def compare_suggestions(root: Path) -> tuple[int, int]:
    """(dead links, how many of doctor's suggestions differ from difflib's)."""
    import difflib

    from kura.health.graph import analyse
    from kura.store import catalog
    from kura.store.store import Store

    links = {slug: entry.links for slug, entry in catalog.entries(Store(root)).items()}
    known = sorted(links)
    dead = analyse(links).dead
    differ = 0
    for link in dead:
        old = difflib.get_close_matches(link.target, known, n=1, cutoff=0.75)
        if (old[0] if old else None) != link.suggestion:
            differ += 1
            print(f"    differs: [[{link.target}]] difflib {old} rapidfuzz {link.suggestion!r}")
    return len(dead), differ


def figures(n: int, rows: list[tuple[str, float, float | None, float]]) -> None:
    """Each figure beside its target (targets hold at 20,000 memories); the load average
    said with them, since a loaded machine stretches the wall time."""
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{n:>6} memories  figures (load average {load}; median of 3 unless marked best)")
    for label, wall, used, target in rows:
        cpu_text = f"{used:6.2f} CPU s" if used is not None else " " * 12
        mark = "" if n != 20000 else ("  ok" if (used if used is not None else wall) <= target else "  over")
        print(f"        {label:<16} {wall:6.2f} s wall  {cpu_text}   target <= {target:g} s{mark}")


def measure(n: int, *, code: bool = False, dead: int = 0, shape: str = "kura") -> None:
    kura("--help")  # compile and cache the modules once
    with tempfile.TemporaryDirectory() as tmp:
        source, copy = Path(tmp) / "gen", Path(tmp) / "copy"
        flat = shape == "distill-kura"  # issue 33's targets for that shape: cold 2.5 s, doctor 2 s
        if flat:
            generate_distill(source, n)
            print(f"{n:>6} memories  shape distill-kura")
        else:
            generate(source, n, code=code, dead=dead)
        subprocess.run(["cp", "-a", str(source), str(copy)], check=True)
        s = str(copy)
        colds = []
        for _ in range(3):
            shutil.rmtree(copy / ".kura", ignore_errors=True)
            colds.append(kura("-s", s, "weave", "--no-model"))
        cold, cold_cpu = statistics.median(colds), cpu(3)
        unchanged = median(3, "-s", s, "weave", "--no-model")
        unchanged_cpu = cpu(3)
        edits = []
        for k in range(3):
            target = copy / f"m{(k * 7919) % n:05d}.md"
            target.write_text(target.read_text() + f"\nedit {k}\n")
            edits.append(kura("-s", s, "weave", "--no-model"))
        prefill = best(5, "-s", s, "prefill")
        doctor = median(3, "-s", s, "doctor")
        doctor_cpu = cpu(3)
        listed = median(3, "-s", s, "list")
        listed_cpu = cpu(3)
        print(
            f"{n:>6} memories  weave cold {cold:6.2f} s   unchanged {unchanged:5.2f} s   "
            f"one edit {min(edits):5.2f} s   prefill {prefill:5.3f} s   doctor {doctor:5.2f} s   "
            f"list {listed:5.2f} s"
        )
        print(f"{n:>6} memories  CPU s: weave cold {cold_cpu:6.2f}   unchanged {unchanged_cpu:5.2f}   "
              f"doctor {doctor_cpu:5.2f}   list {listed_cpu:5.2f}")  # fmt: skip
        figures(
            n,
            [
                ("weave cold", cold, cold_cpu, 2.5 if flat else 1.5),
                ("weave unchanged", unchanged, unchanged_cpu, 0.3),
                ("weave one edit", min(edits), None, 0.5),
                ("prefill", prefill, None, 0.1),
                ("doctor", doctor, doctor_cpu, 2.0 if flat else 1.5),
                ("list", listed, listed_cpu, 0.5),
            ],
        )
        if dead:
            links, differ = compare_suggestions(copy)
            print(f"{n:>6} memories  {links} dead links, {differ} suggestions differ from difflib's")
        shutil.rmtree(copy / ".kura")


def main(args: list[str]) -> None:
    dead = int(args[args.index("--dead") + 1]) if "--dead" in args else 0
    shape = args[args.index("--shape") + 1] if "--shape" in args else "kura"
    if shape not in ("kura", "distill-kura"):
        sys.exit(f"--shape is kura or distill-kura, not {shape!r}")
    sizes = [int(a) for i, a in enumerate(args) if a.isdigit() and (i == 0 or args[i - 1] != "--dead")]
    if "--write" in args:  # only write the store, for measuring by hand
        folder = Path(args[args.index("--write") + 1])
        (generate_distill(folder, sizes[0]) if shape == "distill-kura" else generate(folder, sizes[0]))
        return
    for size in sizes or [500, 5000, 20000]:
        measure(size, code="--code" in args, dead=dead, shape=shape)


if __name__ == "__main__":
    main(sys.argv[1:])
