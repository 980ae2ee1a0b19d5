"""What a ``kura weave`` after one edited memory loads: only what weaving reads. The secret
patterns, the model client, the YAML parser (for a memory whose frontmatter is plain
``key: value`` lines), and ``subprocess`` (outside git) each cost a
few milliseconds of every such weave, and a scheduler runs it often. Checked on real
``kura`` processes with ``python -X importtime``, which names every module a process loads."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

NOT_NEEDED = (
    "kura.text.secrets",  # the secret patterns: only a write checks them
    "kura.llm",  # the scribe's client: only with a model
    "yaml",  # plain `key: value` frontmatter is read without YAML
    "frontmatter",
    "subprocess",  # git's log, only for a store in git
    "filelock",  # the lock is the kernel's flock: filelock (and logging) only where there is none
)


def _store(root: Path) -> None:
    root.mkdir()
    lines = ["# Memory index", ""]
    for i, kind in enumerate(("user", "feedback", "project", "reference") * 5):
        (root / f"m{i:02d}.md").write_text(
            f"---\nname: Memory {i}\ndescription: the staging deploy step {i}\ntype: {kind}\n---\n\n"
            f"The staging deploy step {i}.\n"
        )
        lines.append(f"- [Memory {i}](m{i:02d}.md) — the staging deploy step {i}")
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n")
    for n, path in enumerate(sorted(root.glob("m*.md"))):  # a day each: no shared-date note to print
        os.utime(path, (time.time() - 86400 * (n + 1),) * 2)


def _weave(root: Path, env: dict[str, str]) -> set[str]:
    """The modules one ``kura weave --no-model`` process imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "kura", "-s", str(root), "weave", "--no-model"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode in (0, 2), done.stderr
    rows = [
        line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")
    ]
    return set(rows)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "weave-home"
    home.mkdir()
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "KURA_"))}
    return {**keep, "HOME": str(home), "KURA_HOME": str(home / "kura"), "PYTHONDONTWRITEBYTECODE": "1"}


def test_a_weave_after_one_edit_loads_only_what_weaving_reads(tmp_path: Path, env: dict[str, str]) -> None:
    root = tmp_path / "store"
    _store(root)
    first = _weave(root, env)
    assert "kura.map.weave" in first  # the first weave wove
    edited = root / "m05.md"
    edited.write_text(edited.read_text() + "\nOne more line.\n")
    loaded = _weave(root, env)
    assert "kura.map.weave" in loaded and "kura.store.catalog" in loaded  # it wove again, from the catalog
    assert sorted(loaded & set(NOT_NEEDED)) == []
    assert "m05" in (root / ".kura" / "map.md").read_text()


def test_the_frontmatter_yaml_reads_is_still_read_with_yaml(tmp_path: Path) -> None:
    """The parser loaded on first use reads what it read before: nested values, a quoted
    ``": "``, a flow list, and a block that nests too deep (refused, never parsed)."""
    from kura.files.frontmatter import HostileYAML, read_meta

    meta, findings = read_meta(
        ["name: x", "tags: [a, b]", "metadata:", "  type: user", "when: 'a: b'"], "m.md"
    )
    assert meta == {"name": "x", "tags": ["a", "b"], "metadata": {"type": "user"}, "when": "a: b"}
    assert findings == []
    deep = ["name: x", "v: " + "[" * 200 + "]" * 200]
    meta, findings = read_meta(deep, "m.md")
    assert meta["name"] == "x" and findings and "nests more than" in findings[0].message
    assert issubclass(HostileYAML, ValueError)
