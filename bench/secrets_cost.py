"""What the secret check costs on every write, and what detect-secrets adds.

    python bench/secrets_cost.py [--lines N]

Prints, each in a fresh process (best of 3):

    import kura.text.secrets     what every write and prefill's missing path pay to load the rules
    import detect_secrets        what the first text with a token-like run pays, once per process
    find_secret, prose           one ordinary 120-character sentence (no token-like run: no import)
    find_secret, token-like      one sentence with a git SHA in it (the vendor plugins run)
    redact, transcript           N transcript lines (one in ten with a SHA or a UUID), per line
"""

from __future__ import annotations

import argparse
import subprocess
import sys

SNIPPETS = {
    "import kura.text.secrets": ("", "import kura.text.secrets"),
    "import detect_secrets": (
        "import kura.text.secrets",
        "from kura.text.detectors import _plugins; _plugins()",
    ),
}


def fresh(setup: str, stmt: str) -> float:
    code = f"import time\n{setup}\nt = time.perf_counter()\n{stmt}\nprint(time.perf_counter() - t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True).stdout) for _ in range(3)]  # fmt: skip
    return min(runs)


def warm(stmt: str, n: int) -> float:
    setup = (
        "from kura.text.secrets import find_secret, redact\n"
        "from kura.text.detectors import _plugins\n_plugins()\n"
        "PROSE = 'the nightly backup of the archive disk runs at two and copies everything to cold storage, "
        "then checks it'\nSHA = PROSE + ' (fixed in 9fceb02d0ae598e95dc970b74767f19372d61af8)'\n"
        f"LINES = '\\n'.join(SHA if i % 10 == 0 else PROSE for i in range({n}))\n"
    )
    code = f"import time\n{setup}\nt = time.perf_counter()\n{stmt}\nprint(time.perf_counter() - t)"
    return float(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=10_000)
    n = parser.parse_args().lines
    for name, (setup, stmt) in SNIPPETS.items():
        print(f"{name:<28} {fresh(setup, stmt) * 1000:8.1f} ms")
    for name, text in (("find_secret, prose", "PROSE"), ("find_secret, token-like", "SHA")):
        per_call = warm(f"for _ in range(1000): find_secret({text})", 0) * 1000
        print(f"{name:<28} {per_call:8.1f} µs/call")
    total = warm("redact(LINES)", n)
    print(f"{'redact, transcript':<28} {total * 1e6 / n:8.1f} µs/line ({n} lines, {total:.2f} s)")


if __name__ == "__main__":
    main()
