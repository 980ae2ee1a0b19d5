"""A store on a read-only mount (a container's bind mount, a checkout someone else owns) is
still recalled: its search index is kept in memory for the process, as the catalog already
is, instead of ``kura recall`` failing with "cannot create the state folder (Read-only file
system)". A ``.kura`` that is a link is still refused (``test_search``'s own tests).

The mount is real: ``kura recall`` runs in a private mount namespace (``unshare``) where the
store folder is bound onto itself read-only, so nothing outside the test sees it and nothing
is left mounted. Skipped only where this machine cannot make a mount namespace."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DEPLOY = "---\nname: Deploy\ndescription: how prod is deployed\ntype: project\n---\nRun make deploy-prod.\n"
PORTS = "---\nname: Ports\ndescription: the local dev ports\ntype: reference\n---\nThe api listens on 8080.\n"


def read_only(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``kura -s ROOT ARGS`` with ``root`` mounted read-only for that process alone."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("no unshare/mount here to make a read-only mount")
    unshare = ["unshare", "--mount"] if os.geteuid() == 0 else ["unshare", "--mount", "--map-root-user"]
    kura = shlex.join([sys.executable, "-m", "kura", "-s", str(root), *args])
    script = f"mount --bind -o ro {shlex.quote(str(root))} {shlex.quote(str(root))} || exit 99; exec {kura}"
    done = subprocess.run([*unshare, "sh", "-c", script], capture_output=True, text=True, timeout=180,
                          env={**os.environ, "KURA_INDEX_BACKGROUND": "0"})  # fmt: skip
    if done.returncode == 99 or "unshare failed" in done.stderr:
        pytest.skip(f"cannot make a read-only mount here: {done.stderr.strip()[:200]}")
    return done


def test_a_store_on_a_read_only_mount_is_recalled(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "deploy.md").write_text(DEPLOY)
    (root / "ports.md").write_text(PORTS)
    (root / "MEMORY.md").write_text(
        "- [Deploy](deploy.md) — how prod is deployed\n- [Ports](ports.md) — ports\n"
    )
    done = read_only(root, "recall", "--json", "--no-model", "how do we deploy to prod")
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert said["picked"][0]["slug"] == "deploy" and "make deploy-prod" in said["context"]
    assert not (root / ".kura").exists()  # nothing was written: the mount was read-only
