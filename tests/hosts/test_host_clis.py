"""The hosts themselves read what ``kura setup`` wrote: ``codex mcp list``, ``gemini mcp list``
and ``claude mcp get``/``list`` see the ``kura`` server, and no longer after ``--remove``.

The CLIs come from the npm registry (``npm install -g @openai/codex@0.171.0
@google/gemini-cli@0.61.0 @anthropic-ai/claude-code@2.1.332``; ``.ci/run`` installs them).
They run offline here, with HOME, CODEX_HOME and the XDG folders in the test's temp dir.
A missing CLI skips its test with that hint, or fails it when ``KURA_HOST_TESTS=required``.
One headless Claude Code session, against a scripted Messages endpoint on 127.0.0.1, shows
which auto memory the model is given.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

KURA = str(Path(sys.executable).parent / "kura")
REQUIRED = os.environ.get("KURA_HOST_TESTS") == "required"  # read before the autouse fixture strips KURA_*
PACKAGES = {
    "codex": "@openai/codex@0.171.0",
    "gemini": "@google/gemini-cli@0.61.0",
    "claude": "@anthropic-ai/claude-code@2.1.332",
}


def host_cli(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    hint = f"{name} is not on PATH: npm install -g {PACKAGES[name]}"
    if REQUIRED:
        pytest.fail(hint + " (KURA_HOST_TESTS=required)")
    pytest.skip(hint)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    home = tmp_path / "home"
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    for name, rel in (("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share"),
                      ("XDG_STATE_HOME", ".local/state")):  # fmt: skip
        monkeypatch.setenv(name, str(home / rel))
    for name in ("CLAUDE_CONFIG_DIR", "GEMINI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_BROWSER", "1")
    return root


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def test_codex_lists_the_server_setup_wrote(project: Path, tmp_path: Path) -> None:
    codex = host_cli("codex")
    (tmp_path / "home" / ".codex").mkdir(parents=True)
    assert run(KURA, "setup", "codex", cwd=project).returncode == 0
    listed = run(codex, "mcp", "list", "--json", cwd=project)
    assert listed.returncode == 0, listed.stderr
    servers = {s["name"]: s for s in json.loads(listed.stdout)}
    assert servers["kura"]["transport"]["command"] == KURA
    assert servers["kura"]["transport"]["args"] == ["mcp", "--writable"]
    assert servers["kura"]["enabled"] is True
    assert run(KURA, "setup", "codex", "--remove", cwd=project).returncode == 0
    after = run(codex, "mcp", "list", "--json", cwd=project)
    assert after.returncode == 0 and "kura" not in {s["name"] for s in json.loads(after.stdout)}


def test_gemini_lists_the_server_setup_wrote(project: Path) -> None:
    gemini = host_cli("gemini")
    assert run(KURA, "setup", "gemini", cwd=project).returncode == 0
    listed = run(gemini, "mcp", "list", cwd=project)
    shown = listed.stdout + listed.stderr
    assert listed.returncode == 0, shown
    assert f"kura: {KURA} mcp --store {project / 'memory'} --writable (stdio)" in shown
    assert run(KURA, "setup", "gemini", "--remove", cwd=project).returncode == 0
    after = run(gemini, "mcp", "list", cwd=project)
    assert "kura:" not in after.stdout + after.stderr


def test_claude_sees_the_project_server_and_its_approval(project: Path, tmp_path: Path) -> None:
    claude = host_cli("claude")
    assert run(KURA, "setup", "claude-code", cwd=project).returncode == 0
    got = run(claude, "mcp", "get", "kura", cwd=project)
    assert got.returncode == 0, got.stdout + got.stderr
    assert "Scope: Project config (shared via .mcp.json)" in got.stdout
    assert f"Command: {KURA}" in got.stdout
    assert f"Args: mcp --store {project / 'memory'} --writable" in got.stdout
    # the person trusts the folder once (as Claude Code's first prompt records it); from then
    # on kura's server is approved by settings.local.json and never asked about again
    state = tmp_path / "home" / ".claude.json"
    data = json.loads(state.read_text()) if state.is_file() else {}
    data["projects"] = {str(project): {"hasTrustDialogAccepted": True}}
    state.write_text(json.dumps(data))
    trusted = run(claude, "mcp", "get", "kura", cwd=project)
    assert "Pending approval" not in trusted.stdout, trusted.stdout
    assert run(KURA, "setup", "claude-code", "--remove", cwd=project).returncode == 0
    listed = run(claude, "mcp", "list", cwd=project)
    assert "kura:" not in listed.stdout


def test_claude_sees_the_user_server(project: Path, tmp_path: Path) -> None:
    claude = host_cli("claude")
    personal = tmp_path / "home" / "notes"
    assert run(KURA, "init", "main", "--path", str(personal), cwd=project).returncode == 0
    assert run(KURA, "setup", "claude-code", "--user", cwd=project).returncode == 0
    got = run(claude, "mcp", "get", "kura", cwd=project)
    assert "Scope: User config (available in all your projects)" in got.stdout, got.stdout + got.stderr
    assert f"Args: mcp --store {personal} --writable" in got.stdout
    assert run(KURA, "setup", "claude-code", "--user", "--remove", cwd=project).returncode == 0
    assert "kura:" not in run(claude, "mcp", "list", cwd=project).stdout


class _Messages(http.server.BaseHTTPRequestHandler):
    """A scripted Anthropic Messages endpoint: records each request and answers "ok" — or,
    when ``write`` is set and the model has not yet used a tool, a ``Write`` tool use of
    ``write`` = (path, content)."""

    seen: ClassVar[list[dict[str, Any]]] = []
    write: ClassVar[tuple[str, str] | None] = None

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
            self._send("application/json", b'{"input_tokens": 1}')
            return
        self.seen.append(body)
        usage = {"input_tokens": 1, "output_tokens": 1}
        message = {"id": "msg_1", "type": "message", "role": "assistant", "model": body.get("model", "m"),
                   "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}  # fmt: skip
        used = "tool_result" in json.dumps(body.get("messages", []))
        tools = {tool.get("name") for tool in body.get("tools", [])}
        if self.write is not None and not used and "Write" in tools:
            block = {"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {}}
            delta = {"type": "input_json_delta",
                     "partial_json": json.dumps({"file_path": self.write[0], "content": self.write[1]})}  # fmt: skip
            stop = "tool_use"
        else:
            block, delta, stop = (
                {"type": "text", "text": ""},
                {"type": "text_delta", "text": "ok"},
                "end_turn",
            )
        events = [
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 1},
                               "delta": {"stop_reason": stop, "stop_sequence": None}}),
            ("message_stop", {"type": "message_stop"}),
        ]  # fmt: skip
        self._send(
            "text/event-stream",
            b"".join(f"event: {e}\ndata: {json.dumps(d)}\n\n".encode() for e, d in events),
        )

    def _send(self, kind: str, data: bytes) -> None:
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def messages() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    _Messages.seen = []
    _Messages.write = None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Messages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _Messages.seen
    server.shutdown()
    server.server_close()


def test_claude_reads_kuras_note_not_a_second_index(
    project: Path, tmp_path: Path, messages: tuple[str, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A headless session after setup is given the inbox's short note as its auto memory, not
    the index Claude kept before (imported into the store); after --remove, Claude's own again."""
    claude = host_cli("claude")
    from kura.hosts.claude_memory import NOTE, sanitised

    old = tmp_path / "home" / ".claude" / "projects" / sanitised(project) / "memory"
    old.mkdir(parents=True)
    (old / "staging.md").write_text(
        "---\nname: Staging\ndescription: Where staging lives\ntype: project\n---\n\neu-west-3\n"
    )
    (old / "MEMORY.md").write_text("- [Staging](staging.md) — OLD-INDEX where staging lives\n")
    url, seen = messages
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    assert run(KURA, "setup", "claude-code", cwd=project).returncode == 0

    def asked() -> str:
        seen.clear()
        done = run(claude, "-p", "hello", "--output-format", "json", cwd=project)
        assert done.returncode == 0, done.stdout + done.stderr
        return json.dumps(seen)

    first = asked()
    box = project / "memory" / ".kura" / "claude-memory"
    assert f"Contents of {box / 'MEMORY.md'}" in first and f"Contents of {old / 'MEMORY.md'}" not in first
    assert json.dumps(NOTE.splitlines()[2])[1:-1] in first
    assert first.count("OLD-INDEX") == 1  # the imported line, once: in kura's map (the SessionStart hook)
    assert run(KURA, "setup", "claude-code", "--remove", cwd=project).returncode == 0
    after = asked()
    assert f"Contents of {old / 'MEMORY.md'}" in after and after.count("OLD-INDEX") == 1


def test_what_claude_saves_to_its_auto_memory_lands_in_the_store(
    project: Path, messages: tuple[str, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model saves a fact the way Claude Code's auto memory does (a Write into its memory
    folder, which setup pointed at kura's inbox); the capture hook files it into the store
    with no other command run, and keeps what Claude wrote aside."""
    claude = host_cli("claude")
    from kura.hosts.claude_memory import FILED, inbox
    from kura.store.store import Store

    url, _ = messages
    monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
    assert run(KURA, "setup", "claude-code", cwd=project).returncode == 0
    fact = (
        "---\nname: Staging\ndescription: Where the staging cluster lives\ntype: project\n---\n\neu-west-3\n"
    )
    box = inbox(project / "memory")
    _Messages.write = (str(box / "project_staging.md"), fact)
    done = run(claude, "-p", "the staging cluster lives in eu-west-3", "--output-format", "json", cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    filed = project / "memory" / "project_staging.md"
    index = project / "memory" / "MEMORY.md"

    def settled() -> bool:  # the hook's background pass: the memory, its index line, the inbox emptied
        listed = index.exists() and "project_staging" in index.read_text()
        return filed.exists() and listed and not (box / "project_staging.md").exists()

    deadline = time.monotonic() + 90
    while not settled() and time.monotonic() < deadline:
        time.sleep(0.2)
    store = Store(project / "memory")
    assert "eu-west-3" in store.show("project_staging").note.body
    assert "project_staging" in (project / "memory" / "MEMORY.md").read_text()
    kept = [p.read_text() for p in (box / FILED).glob("*project_staging.md")]
    assert len(kept) == 1 and "description: Where the staging cluster lives" in kept[0]  # as Claude wrote it
    assert not (box / "project_staging.md").exists()
