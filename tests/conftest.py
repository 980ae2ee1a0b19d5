"""Shared fixtures: every test runs with its own user state and no inherited settings."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import typer.testing
from filelock import FileLock
from typer.testing import CliRunner

from kura.cli.commands import app
from kura.store.store import Store, init_store

pytest_plugins = ["browsing"]  # tests/web/browsing.py: headless Chromium and a served sample store

SAMPLE = Path(__file__).resolve().parent.parent / "sample-store"
EVAL = Path(__file__).resolve().parent.parent / "bench" / "eval"


@pytest.fixture(scope="session")
def user_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache folder for the run (the embedder's integer model is made there once, not
    once per test's home), never the user's own."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user_cache: Path) -> Iterator[Path]:
    """Point all user state at a temp dir and strip KURA_*/OPENAI_* from the environment."""
    for key in list(os.environ):
        if key.startswith(("KURA_", "OPENAI_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("XDG_CACHE_HOME", str(user_cache))
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("KURA_HOME", str(home))
    monkeypatch.setenv("HOME", str(home))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    yield tmp_path


@pytest.fixture(scope="session")
def sample_vectors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A search database holding the vector of every sample memory and no entry, made once
    per run through kura itself: the sample store indexed (40 memories embedded, the
    costly part), then the same database updated in an empty store, which drops every entry
    and keeps the vectors (they are keyed by content hash, like a memory removed and put
    back). A copy's first update indexes all 40 memories as a fresh index does, and embeds
    nothing. Under pytest-xdist the first worker to need it makes it in the run's shared
    temp folder, under a lock, and the others wait for it and reuse it."""
    if "PYTEST_XDIST_WORKER" not in os.environ:  # not distributed: this process is the whole run
        return _make_sample_vectors(tmp_path_factory.mktemp("sample-vectors"))
    shared = tmp_path_factory.getbasetemp().parent / "sample-vectors"  # this run's, every worker's
    made = shared / "empty" / ".kura" / "search.db"
    with FileLock(str(shared) + ".lock"):
        if not (shared / "done").exists():
            shutil.rmtree(shared, ignore_errors=True)  # a worker that died half way
            _make_sample_vectors(shared)
            (shared / "done").touch()
    return made


def _make_sample_vectors(base: Path) -> Path:
    from kura.recall.search import SearchIndex

    base.mkdir(parents=True, exist_ok=True)
    with pytest.MonkeyPatch.context() as mp:
        for key in list(os.environ):
            if key.startswith(("KURA_", "OPENAI_")):
                mp.delenv(key)
        full, empty = base / "full", base / "empty"
        shutil.copytree(SAMPLE, full, ignore=shutil.ignore_patterns(".kura"))
        index = SearchIndex(Store(full))
        assert index.update() == 40
        index.close()
        (empty / ".kura").mkdir(parents=True)
        shutil.copy(full / ".kura" / "search.db", empty / ".kura" / "search.db")
        index = SearchIndex(Store(empty))
        assert index.update() == 40  # all gone: entries dropped, vectors kept
        assert index.db.execute("SELECT count(*) FROM vectors").fetchone() == (120,)  # headlines, sentences
        index.close()
    return empty / ".kura" / "search.db"


@pytest.fixture(scope="session")
def sample_copy(sample_vectors: Path) -> Callable[[Path], Path]:
    """``sample_copy(root)``: a private copy of the sample store at ``root`` whose search
    index needs no embedding (see ``sample_vectors``); returns ``root``."""

    def copy(root: Path) -> Path:
        shutil.copytree(SAMPLE, root, ignore=shutil.ignore_patterns(".kura"))
        (root / ".kura").mkdir()
        shutil.copy(sample_vectors, root / ".kura" / "search.db")
        return root

    return copy


@pytest.fixture
def store(tmp_path: Path) -> Store:
    made, _ = init_store(tmp_path / "store", name="test")
    return made


_built: dict[int, Any] = {}
_build = typer.testing._get_command


def _built_once(typer_app: Any) -> Any:
    """typer's CliRunner turns the app into its click command on every invoke (~0.05 s, a
    good share of the suite); the command is the same each time, so build it once."""
    if id(typer_app) not in _built:
        _built[id(typer_app)] = (typer_app, _build(typer_app))
    return _built[id(typer_app)][1]


typer.testing._get_command = _built_once  # type: ignore[attr-defined]


class Cli:
    """Runs the real typer app in-process and keeps stdout and stderr apart."""

    def __init__(self) -> None:
        self.runner = CliRunner()

    def __call__(self, *args: str, input: str | None = None) -> Result:
        result = self.runner.invoke(app, list(args), input=input, catch_exceptions=False)
        return Result(result.exit_code, result.stdout, result.stderr)


class Result:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def __repr__(self) -> str:
        return f"Result(code={self.code}, out={self.out!r}, err={self.err!r})"


@pytest.fixture
def cli() -> Cli:
    return Cli()


def write_memory(
    root: Path, slug: str, kind: str, description: str, *, date: str | None = None, body: str = ""
) -> Path:
    """A memory file as a person would write it (no index line)."""
    dated = f"created: {date}\n" if date else ""
    path = root / f"{slug}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nname: {slug}\ndescription: {json.dumps(description, ensure_ascii=False)}\ntype: {kind}\n{dated}---\n\n{body or description}\n"
    )
    return path


def make_store(
    root: Path, memories: list[tuple[str, str, str, str | None]], *, extra_index: str = ""
) -> Store:
    """A store with these (slug, type, description, created date) memories and an index."""
    store, _ = init_store(root, name=root.name)
    lines = []
    for slug, kind, description, date in memories:
        write_memory(root, slug, kind, description, date=date)
        lines.append(f"- [{slug}]({slug}.md) — {description}")
    (root / "MEMORY.md").write_text("# Memory index\n\n" + extra_index + "\n".join(lines) + "\n")
    return store


# The request fields every OpenAI chat-completions endpoint takes, whatever the model: the
# reasoning switches (reasoning_effort, which OpenAI refuses for a model that does not
# reason, thinking_effort, chat_template_kwargs) are not among them.
PLAIN_CHAT = frozenset({
    "model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p", "n", "stream",
    "stream_options", "stop", "presence_penalty", "frequency_penalty", "logit_bias", "logprobs",
    "top_logprobs", "user", "seed", "response_format", "tools", "tool_choice", "parallel_tool_calls",
})  # fmt: skip


def refusal(style: str, body: dict[str, Any], fields: list[str]) -> tuple[int, bytes]:
    """A strict server's answer to a request carrying ``fields`` it does not take (pydantic's
    echoes each value back, as a real one does)."""
    said = f"Unrecognized request argument supplied: {', '.join(fields)}"
    if style == "detail":
        detail = [{"type": "extra_forbidden", "loc": ["body", field], "msg": "Extra inputs are not permitted",
                   "input": body[field]} for field in fields]  # fmt: skip
        return 422, json.dumps({"detail": detail}).encode()
    if style == "message":
        return 400, json.dumps({"object": "error", "message": said, "type": "BadRequestError", "param": None,
                                "code": 400}).encode()  # fmt: skip
    said = f"Unrecognized request argument supplied: {fields[0]}"  # OpenAI names the first only
    error = {"message": said, "type": "invalid_request_error", "param": fields[0], "code": None}
    return 400, json.dumps({"error": error}).encode()


class ModelServer:
    """A scripted OpenAI-compatible endpoint on 127.0.0.1: replies are taken in order
    (the last one repeats), or chosen by ``respond(body)`` when that is set; every request
    body is kept. ``delay`` makes it slow, ``status`` makes it fail, ``usage`` is reported
    when set; ``/embeddings`` answers with ``embed(text)`` for each input.

    ``strict`` makes it behave like a hosted endpoint that validates its input: a chat
    request with any field outside ``PLAIN_CHAT`` is refused, naming the fields, in the
    body shape ``refusal`` picks (``openai``: 400 ``{"error": {"message", "param"}}``;
    ``detail``: 422 with pydantic's ``{"detail": [{"loc": ["body", field]}]}``; ``message``:
    400 ``{"message": ...}`` with the field only in the prose). ``hang`` makes it accept a
    request and never answer (until ``close``)."""

    def __init__(self) -> None:
        self.replies: list[str] = ["ok"]
        self.requests: list[dict[str, object]] = []
        self.delay = 0.0
        self.status = 200
        self.embed: Callable[[str], list[float]] = lambda text: [float(len(text)), 1.0]
        self.respond: Callable[[dict[str, Any]], str] | None = None
        self.usage: dict[str, int] | None = None
        self.strict = False
        self.refusal = "openai"
        self.hang = False
        self.released = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length))
                server.requests.append(body)
                if server.hang:
                    server.released.wait()
                    return
                time.sleep(server.delay)
                refused = sorted(set(body) - PLAIN_CHAT)
                if server.strict and refused and not self.path.endswith("/embeddings"):
                    self.answer(*refusal(server.refusal, body, refused))
                    return
                if self.path.endswith("/embeddings"):
                    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    rows = [{"index": i, "embedding": server.embed(text)} for i, text in enumerate(inputs)]
                    data = json.dumps({"data": rows[::-1], "model": body.get("model")}).encode()
                else:
                    if server.respond is not None:
                        reply = server.respond(body)
                    else:
                        reply = server.replies.pop(0) if len(server.replies) > 1 else server.replies[0]
                    answer: dict[str, Any] = {
                        "choices": [{"message": {"role": "assistant", "content": reply}}]
                    }
                    if server.usage is not None:
                        answer["usage"] = server.usage
                    data = json.dumps(answer).encode()
                self.answer(server.status, data)

            def answer(self, status: int, data: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        # a short poll: shutdown() waits for the loop's next look (0.5 s by default, per test)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that uses the scripted model server (directly or through a fixture) is
    marked ``model``: ``pytest -m model`` runs them alone, ``-m "not model"`` leaves them out."""
    for item in items:
        if "model_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.model)


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    server = ModelServer()
    yield server
    server.close()


@contextmanager
def uvicorn_app(app: Any, *, timeout: float = 15, deadlines: Any = None) -> Iterator[str]:
    """A real uvicorn server for ``app`` on a free loopback port, in a thread, configured as
    ``kura serve`` configures it (``deadlines``: a ``kura.serve.listener.Deadlines``); its base URL."""
    import uvicorn

    from kura.serve.listener import Deadlines, listen, uvicorn_config

    sockets = listen("127.0.0.1", 0)
    config = uvicorn_config(app, deadlines=deadlines or Deadlines(), log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": sockets}, daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=timeout)


@pytest.fixture(scope="module")
def bakery(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bench/eval's bakery store, indexed whole by a real ``kura index`` (a first recall on a
    loaded machine may answer before every vector is made)."""
    from kura.recall.embed import Unavailable, load_embedder

    if isinstance(load_embedder(), Unavailable):
        pytest.skip("the built-in embedder is not installed")
    root = tmp_path_factory.mktemp("bakery") / "store"
    shutil.copytree(EVAL / "store", root, ignore=shutil.ignore_patterns(".kura"))
    built = subprocess.run([sys.executable, "-m", "kura", "-s", str(root), "index"], capture_output=True, text=True,
                           check=False, timeout=600)  # fmt: skip
    assert built.returncode == 0, built.stderr
    return root
