"""distill-kura's ``[prefill] verbatim_after``, honoured: from that heading of the index on,
every line goes into the map as written, never squeezed to a trigger — checked on what a
real `kura prefill` prints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_memory

from kura.store.store import init_store

LONG = "the archive lives on the slow disk (hdd0, 8 TB) because the fast NVMe burns write endurance; the fast one stays scratch for builds"
OLD = "2026-03-01"


def prefill(tmp_path: Path, setting: str) -> str:
    root = tmp_path / "store"
    if not root.exists():
        init_store(root, name="main")
        for slug in ("above", "below"):
            write_memory(root, slug, "project", LONG.replace("archive", slug), date=OLD)
        (root / "MEMORY.md").write_text(
            "# Memory index\n\n"
            f"- [above](above.md) — {LONG.replace('archive', 'above')}\n\n"
            "## Appendix\n\n"
            f"- [below](below.md) — {LONG.replace('archive', 'below')}\n"
        )
    config = tmp_path / "kura.toml"
    config.write_text(f'[stores.main]\npath = "{root}"\n\n[prefill]\n{setting}\n')
    result = subprocess.run(
        [sys.executable, "-m", "kura", "-c", str(config), "prefill"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result
    return result.stdout


def line(block: str, slug: str) -> str:
    return next(text for text in block.splitlines() if text.startswith(f"- [{slug}]"))


@pytest.mark.parametrize("where", ["prefill", "stores.main.prefill"])
def test_lines_from_the_heading_on_stay_as_written(tmp_path: Path, where: str) -> None:
    full = {slug: f"- [{slug}]({slug}.md) — {LONG.replace('archive', slug)}" for slug in ("above", "below")}
    squeezed = prefill(tmp_path, "")
    assert line(squeezed, "above") != full["above"] and line(squeezed, "below") != full["below"]
    setting = '[prefill]\nverbatim_after = "## Appendix"' if where == "prefill" else ""
    own = '\n[stores.main.prefill]\nverbatim_after = "## Appendix"' if where != "prefill" else ""
    kept = prefill(tmp_path, setting.removeprefix("[prefill]\n") + own)
    assert line(kept, "above") == line(squeezed, "above")  # above the heading: a trigger, as before
    assert line(kept, "below") == full["below"]  # from the heading on: the line as written
    gone = prefill(tmp_path, 'verbatim_after = "## No such heading"')
    assert gone == squeezed
