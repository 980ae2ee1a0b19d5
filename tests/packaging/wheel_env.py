"""A wheel of this checkout installed in a fresh virtualenv, for tests that run kura as a
person who installed it would (see test_wheel.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SOURCES = ("pyproject.toml", "README.md", "LICENSE", "kura")


@dataclass(frozen=True, slots=True)
class Tool:
    wheel: Path
    venv: Path
    env: dict[str, str]  # PATH without this checkout's kura; HOME and KURA_HOME in tmp

    def run(
        self, argv: list[str], *, cwd: Path, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``argv[0]`` from the virtualenv's bin/ (``python``, ``kura``)."""
        command = [str(self.venv / "bin" / argv[0]), *argv[1:]]
        return subprocess.run(command, cwd=cwd, env=self.env, input=stdin, capture_output=True, text=True,
                              check=False, timeout=60)  # fmt: skip

    def hook(self, name: str, payload: dict[str, Any], *, cwd: Path) -> subprocess.CompletedProcess[str]:
        """``kura hook NAME`` with the host's JSON on stdin."""
        return self.run(["kura", "hook", name], cwd=cwd, stdin=json.dumps(payload))


def build_tool(root: Path, tmp: Path) -> Tool:
    """Build the wheel from a copy of the checkout's sources (no build/ left in the checkout),
    make a virtualenv in ``tmp`` and install the wheel into it, without its dependencies."""
    source = tmp / "source"
    source.mkdir()
    for name in SOURCES:
        if (root / name).is_dir():
            shutil.copytree(root / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif (root / name).exists():
            shutil.copy2(root / name, source / name)
    dist = tmp / "dist"
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(dist), str(source)],
                   cwd=tmp, check=True, capture_output=True)  # fmt: skip
    (wheel,) = dist.glob("*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    subprocess.run([*pip, "--python", str(venv / "bin" / "python"), "install", "--no-deps", "--no-index",
                    str(wheel)], cwd=tmp, check=True, capture_output=True)  # fmt: skip
    inner = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                           check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip
    (Path(inner) / "outer-environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    home = tmp / "home"
    home.mkdir()
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("KURA_", "PYTHON", "VIRTUAL_ENV", "GIT_"))
    }
    env.update(PATH=os.pathsep.join(p for p in ("/usr/local/bin", "/usr/bin", "/bin") if Path(p).is_dir()),
               HOME=str(home), KURA_HOME=str(home / "kura"), XDG_CONFIG_HOME=str(home / ".config"))  # fmt: skip
    return Tool(wheel=wheel, venv=venv, env=env)
