"""Secrets never reach disk from a direct write, and no message repeats one.

Written as attacks: each case is a way a person or an agent pastes a credential into a
write — a remember at the command line (as description, body, title or a witness's quote),
an observation, an import (in a file or its index line), a remember over HTTP to a real
server on a loopback port or over MCP from a real client to a real ``kura mcp`` process —
with the verdict it must get: refused, the kind of secret named, the value nowhere in what
was said or logged and nowhere under the store folder afterwards (``.kura/`` included).
Ordinary prose about secrets must still be accepted on the same paths; no usage error may
repeat a secret-shaped argument; and the distiller must not carry a secret key into a
memory's ``evidence:`` beside a redacted key id. All of it is one policy (kura.text.secrets).
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from anyio.from_thread import start_blocking_portal
from conftest import Cli, ModelServer
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from test_brain import Script

from kura.cli import entry
from kura.config import load_config
from kura.serve.http import create_app
from kura.serve.pool import StorePool
from kura.store.store import Store
from kura.text.secrets import find_secret, redact, redact_widely

# -- the attacks ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    text: str  # what is written
    secret: str  # the part that must never be seen again
    kind: str  # the kind the refusal names


SHAPES = {
    "aws-secret": Shape(
        "aws_secret_access_key=Zx8Kq2Lm9Pn4Rt7Vw1Yb3Cd6Fg0Hj5Kl8Mn2Qp4S",
        "Zx8Kq2Lm9Pn4Rt7Vw1Yb3Cd6Fg0Hj5Kl8Mn2Qp4S",
        "credential assignment",
    ),
    "db-password": Shape(
        "the app reads DB_PASSWORD=Tr0ub4dor-3xK at boot", "Tr0ub4dor-3xK", "credential assignment"
    ),
    "url-credentials": Shape(
        "connect with postgres://app:hunter2pw@db.internal:5432/prod", "hunter2pw", "URL credentials"
    ),
    "mysql-p": Shape("mysql -u root -pS3cretPw9 prod", "S3cretPw9", "password option"),
    "curl-u": Shape(
        "curl -u deploy:Hunter2pass https://ci.internal/api", "Hunter2pass", "user:password option"
    ),
    # round 3 (issue 29, item 4): shapes that passed every write path
    "prose-password": Shape(
        "the root password on db-main is Hx7kq2Lm9zP", "Hx7kq2Lm9zP", "password in prose"
    ),
    "slack-webhook": Shape(
        "alerts post to https://hooks.slack.com/services/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",
        "q7Rk2Lm9zPx4Vw8Yb3Cd6Fg0",
        "Slack Token",
    ),
    "sendgrid": Shape(
        "mail goes out with 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",
        "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr",
        "SendGrid API Key",
    ),
    "google-oauth": Shape(
        "the client secret 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", "1a2B3c4D5e6F7g8H9i0J1k2L3m4N", "token"
    ),
    "digitalocean": Shape("doctl uses dop_v1_" + "4f9a1c2e" * 8, "4f9a1c2e" * 8, "token"),
    "azure-account-key": Shape(
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=lJzRc1YdHaAA2KCNJJ1tkYwF/+mKK6Ygw0NGe170"
        "Xu592euJv2wYUtBlV8z+qnlcNQSnIYVTkLWntUO1F8j8rQ==;EndpointSuffix=core.windows.net",
        "lJzRc1YdHaAA2KCNJJ1tkYwF",
        "Azure Storage Account access key",
    ),
    "twilio": Shape("the twilio key SK" + "0a1b2c3d4e5f6a7b" * 2, "0a1b2c3d4e5f6a7b" * 2, "Twilio API Key"),
    "netrc": Shape("machine api.example.com login ann password Hx7kq2Lm9zP", "Hx7kq2Lm9zP", "netrc password"),
    "ghp-zero-width": Shape(
        "ci pushes with ghp_" + "A1b2C3d4E5" * 2 + "\u200b" + "F6g7H8i9J0" * 2,
        "A1b2C3d4E5" * 2,
        "GitHub token",
    ),
}

PROSE = {
    "password-policy": "the password policy asks for 12 characters and a rotation every 90 days",
    "plain-url": "the staging dashboard is https://grafana.internal.example.com/d/Ab3xYz/staging?orgId=1",
    "curl-u-sentence": "pass credentials to curl -u rather than in the URL, so they stay out of the shell history",
    "git-sha": "the fix landed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8 on main",
    "uuid": "the tenant id for staging is 123e4567-e89b-12d3-a456-426614174000",
    "password-length": "the password is at least 12 characters and is rotated by the vault",
    "token-lifetime": "the session token is valid for 15 minutes, then the client asks again",
    "key-location": "the API key is stored in Vault under kv/prod/payments, never in the repo",
    "zero-width-prose": "deploys go out on tues\u200bday after the stand\u00adup",
}


def leaked(root: Path, secret: str) -> list[str]:
    """Every file under ``root`` (``.kura/`` included) whose bytes hold ``secret``."""
    needle = secret.encode()
    return [str(p) for p in sorted(root.rglob("*")) if p.is_file() and needle in p.read_bytes()]


def refused_with_kind(said: str, shape: Shape) -> None:
    assert f"looks like it holds a secret ({shape.kind})" in said, said
    assert shape.secret not in said


# -- the command line ---------------------------------------------------------------------------


def cli_args(path: str, root: Path, text: str) -> list[str]:
    at = ["-s", str(root)]
    if path == "description":
        return [*at, "remember", "leak", text]
    if path == "body":
        return [*at, "remember", "leak", "where the key lives", text]
    if path == "title":
        return [*at, "remember", "leak", "where the key lives", "--title", text]
    if path == "witness-quote":
        return [*at, "remember", "leak", "where the key lives", "--witness", "SAID", "--quote", text]
    assert path == "observe"
    return [*at, "observe", text]


CLI_PATHS = ("description", "body", "title", "witness-quote", "observe")


@pytest.mark.parametrize("path", CLI_PATHS)
@pytest.mark.parametrize("name", SHAPES)
def test_the_cli_refuses_a_secret_and_never_writes_it(cli: Cli, store: Store, name: str, path: str) -> None:
    shape = SHAPES[name]
    done = cli(*cli_args(path, store.root, shape.text))
    assert done.code == 1, done
    refused_with_kind(done.err, shape)
    assert shape.secret not in done.out
    assert leaked(store.root, shape.secret) == []
    assert not (store.root / "leak.md").exists()


@pytest.mark.parametrize("path", CLI_PATHS)
@pytest.mark.parametrize("name", PROSE)
def test_the_cli_accepts_prose_about_secrets(cli: Cli, store: Store, name: str, path: str) -> None:
    done = cli(*cli_args(path, store.root, PROSE[name]))
    if path == "title":  # each is over 40 characters: past the secret check, refused for its length
        assert done.code == 1 and f"the title is {len(PROSE[name])} characters" in done.err, done
        assert "secret" not in done.err and not (store.root / "leak.md").exists()
        return
    assert done.code == 0, done
    assert leaked(store.root, PROSE[name])  # written where it belongs


@pytest.mark.parametrize("where", ["file", "index line"])
@pytest.mark.parametrize("name", SHAPES)
def test_an_import_refuses_a_secret_in_a_file_or_its_index_line(
    cli: Cli, store: Store, tmp_path: Path, name: str, where: str
) -> None:
    shape = SHAPES[name]
    source = tmp_path / "claude-memory"
    source.mkdir()
    said = shape.text if where == "file" else "where the key lives"
    (source / "keys.md").write_text(
        f"---\nname: keys\ndescription: where the key lives\ntype: reference\n---\n\n{said}\n"
    )
    line = shape.text if where == "index line" else "where the key lives"
    (source / "MEMORY.md").write_text(f"# Memory\n\n- [Keys](keys.md) — {line}\n")
    done = cli("-s", str(store.root), "import", "claude-code", str(source))
    assert done.code == 1, done
    refused_with_kind(done.out + done.err, shape)
    assert leaked(store.root, shape.secret) == []


# -- HTTP: a real server on a loopback port ------------------------------------------------------


@dataclass
class Served:
    root: Path
    http: httpx.Client
    heard: list[str]  # every line the server logged, at the level ``kura serve`` runs it


class Heard(logging.Handler):
    def __init__(self, lines: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(
            record.getMessage() + (self.formatException(record.exc_info) if record.exc_info else "")
        )


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, sample_copy: Callable[[Path], Path]) -> Iterator[Served]:
    """The service as ``kura serve`` runs it (info level, no access log), on a loopback port."""
    import threading

    import uvicorn

    base = tmp_path_factory.mktemp("http")
    sample_copy(base / "team")
    (base / "kura.toml").write_text(f'[stores.team]\npath = "{base / "team"}"\n')
    service = StorePool(load_config(str(base / "kura.toml")))
    config = uvicorn.Config(create_app(service), host="127.0.0.1", port=0, lifespan="on", access_log=False)
    server = uvicorn.Server(config)
    lines: list[str] = []
    loggers = [logging.getLogger(name) for name in ("", "uvicorn", "uvicorn.error", "kura")]
    handler = Heard(lines)
    for logger in loggers:
        logger.addHandler(handler)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            yield Served(base / "team", client, lines)
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        for logger in loggers:
            logger.removeHandler(handler)
        service.close()


@pytest.mark.parametrize("field", ["description", "body", "title"])
@pytest.mark.parametrize("name", SHAPES)
def test_http_remember_refuses_a_secret_with_422(served: Served, name: str, field: str) -> None:
    shape = SHAPES[name]
    fields = {"slug": f"leak-{name}-{field}", "description": "where the key lives", field: shape.text}
    response = served.http.post("/remember", json=fields)
    assert response.status_code == 422, response.text
    refused_with_kind(response.json()["error"]["message"], shape)
    assert shape.secret not in response.text
    assert any("Uvicorn running on" in line for line in served.heard)  # the log is heard
    assert not [line for line in served.heard if shape.secret in line]
    assert leaked(served.root, shape.secret) == []


@pytest.mark.parametrize("name", PROSE)
def test_http_remember_accepts_prose_about_secrets(served: Served, name: str) -> None:
    response = served.http.post("/remember", json={"slug": f"prose-{name}", "description": PROSE[name]})
    assert response.status_code == 200, response.text
    assert (served.root / f"prose-{name}.md").exists()


# -- MCP: a real client on a real ``kura mcp`` process ---------------------------------------------


class McpClient:
    def __init__(self, base: Path) -> None:
        self.stack = ExitStack()
        self.portal = self.stack.enter_context(start_blocking_portal())
        env = {
            "KURA_CONFIG": str(base / "kura.toml"),
            "KURA_HOME": str(base / "home"),
            "HOME": str(base / "home"),
        }
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "kura", "mcp"],
            env={**env, "KURA_READONLY": "0"},
            cwd=str(base),
        )
        self.errlog = self.stack.enter_context(tempfile.TemporaryFile("w+"))  # noqa: SIM115 - closed by the stack
        read, write = self.stack.enter_context(
            self.portal.wrap_async_context_manager(stdio_client(params, self.errlog))
        )
        self.session = self.stack.enter_context(
            self.portal.wrap_async_context_manager(ClientSession(read, write))
        )
        self.portal.call(self.session.initialize)

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        result = self.portal.call(self.session.call_tool, name, arguments)
        assert isinstance(result, types.CallToolResult)
        return result.content[0].text, result.is_error  # type: ignore[union-attr]

    def stderr(self) -> str:
        self.errlog.seek(0)
        return self.errlog.read()


@pytest.fixture(scope="module")
def mcp(
    tmp_path_factory: pytest.TempPathFactory, sample_copy: Callable[[Path], Path]
) -> Iterator[tuple[McpClient, Path]]:
    base = tmp_path_factory.mktemp("mcp")
    sample_copy(base / "team")
    (base / "home").mkdir()
    (base / "kura.toml").write_text('[stores.team]\npath = "team"\n')
    started = McpClient(base)
    try:
        yield started, base / "team"
    finally:
        started.stack.close()


@pytest.mark.parametrize("field", ["description", "body", "title"])
@pytest.mark.parametrize("name", SHAPES)
def test_mcp_remember_refuses_a_secret_with_an_error_result(
    mcp: tuple[McpClient, Path], name: str, field: str
) -> None:
    client, root = mcp
    shape = SHAPES[name]
    args = {"slug": f"leak-{name}-{field}", "description": "where the key lives", field: shape.text}
    said, failed = client.call("kura_remember", args)
    assert failed, said
    refused_with_kind(said, shape)
    assert shape.secret not in client.stderr()
    assert leaked(root, shape.secret) == []


@pytest.mark.parametrize("name", PROSE)
def test_mcp_remember_accepts_prose_about_secrets(mcp: tuple[McpClient, Path], name: str) -> None:
    client, root = mcp
    said, failed = client.call("kura_remember", {"slug": f"prose-{name}", "description": PROSE[name]})
    assert not failed, said
    assert (root / f"prose-{name}.md").exists()


# -- usage errors never repeat a secret ---------------------------------------------------------

KEY_HEADER = "-----BEGIN RSA PRIVATE KEY-----"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
GH = "ghp_" + "a1B2" * 9


def run_kura(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    """The console entry point (kura.cli.entry:main) as a shell would call it: exit code, output."""
    monkeypatch.setattr(sys, "argv", ["kura", *argv])
    with pytest.raises(SystemExit) as done:
        entry.main()
    said = capsys.readouterr()
    return int(done.value.code or 0), said.out + said.err


@pytest.mark.parametrize(
    ("argv", "secret"),
    [
        (["remember", "x", "d", KEY_HEADER], KEY_HEADER),
        (["remember", "x", "d", *KEY_HEADER.split()], "-----BEGIN"),  # pasted unquoted
        (
            ["remember", "x", "d", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n"],
            "b3BlbnNzaC1r",
        ),
        (["remember", "x", "d", f"--{AWS_ID}"], AWS_ID),
        (["remember", "x", "d", f"--token={GH}"], GH),
        (["remember", "x", "d", "-pS3cretPw9x"], "S3cretPw9x"),
        (["remember", "x", "d", "body", AWS_ID], AWS_ID),  # an extra argument
        (["remember", "x", "d", "body", "DB_PASSWORD=Tr0ub4dor-3xK"], "Tr0ub4dor-3xK"),
        (["observe", "-p", AWS_ID, "text"], AWS_ID),
        (["observe", "--at", GH, "text"], GH),
        (["--store", AWS_ID, "list"], AWS_ID),
        (["--store", AWS_ID, "weave"], AWS_ID),  # the fast front door's own error line
        (["--store", AWS_ID, "recall", "deploys"], AWS_ID),
        (["--store", AWS_ID, "prefill"], AWS_ID),  # the block a session hook hands the model
        (["recall", "--top", AWS_ID, "deploys"], AWS_ID),
    ],
)
def test_no_usage_error_repeats_a_secret(
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    secret: str,
) -> None:
    if argv[0] != "--store":
        argv = ["-s", str(store.root), *argv]
    code, said = run_kura(argv, monkeypatch, capsys)
    assert code == 1, said
    assert said.strip(), "a refusal says something"
    assert secret not in said
    assert leaked(store.root, secret) == []


def test_a_usage_error_still_names_an_ordinary_mistake(
    store: Store, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, said = run_kura(["-s", str(store.root), "remember", "x", "d", "--titel", "t"], monkeypatch, capsys)
    assert code == 1 and "No such option: --titel" in said and "--title" in said


# -- the distiller ------------------------------------------------------------------------------

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
KEYS_SAID = (
    f"the backup job runs with AWS_ACCESS_KEY_ID={AWS_ID} AWS_SECRET_ACCESS_KEY={AWS_SECRET} from cron"
)


def test_the_distiller_pours_no_secret_key_beside_a_redacted_key_id(
    cli: Cli, tmp_path: Path, store: Store, model_server: ModelServer
) -> None:
    row = {"type": "user", "sessionId": "s1", "uuid": "u1", "timestamp": "2026-09-02T08:14:03Z",
           "message": {"role": "user", "content": f"FYI {KEYS_SAID}."}}  # fmt: skip
    journals = tmp_path / "journals" / "ferry"
    journals.mkdir(parents=True)
    (journals / "s1.jsonl").write_text(json.dumps(row) + "\n")
    config = tmp_path / "kura.toml"
    config.write_text(
        f'[stores.test]\npath = "{store.root}"\n\n[stores.test.distill.journals]\nclaude = ["{journals.parent}"]\n\n'
        f'[models.thinker]\nurl = "{model_server.url}"\nmodel = "m"\ntimeout = 5\n'
    )
    candidate = {"topic": "The backup job authenticates with an access key pair from cron", "kind": "reference",
                 "why": "so nobody looks for an instance role", "quotes": [f"[USER] {KEYS_SAID}"]}  # fmt: skip
    written = {"title": "Backup job credentials", "description": "How the backup job authenticates",
               "body": "The backup job authenticates with an access key pair from cron.\n"}  # fmt: skip
    model_server.respond = Script({"candidates": [candidate]}, scribe=written)
    ran = cli("-c", str(config), "-s", "test", "distill", "run")
    assert ran.code == 0, ran
    poured = cli("-c", str(config), "-s", "test", "distill", "pour", "--all")
    assert poured.code == 0, poured
    [memory] = [p for p in store.root.glob("*.md") if p.name != "MEMORY.md"]
    evidence = memory.read_text().partition("evidence:")[2]
    assert "AWS_ACCESS_KEY_ID=[redacted: AWS access key]" in evidence
    assert "AWS_SECRET_ACCESS_KEY=[redacted: credential]" in evidence
    for secret in (AWS_SECRET, AWS_ID, "wJalrXUtnFEMI"):
        assert secret not in ran.out + ran.err + poured.out + poured.err
        assert leaked(store.root, secret) == []


# -- the one policy -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SHAPES)
def test_one_policy_finds_and_redacts_every_shape(name: str) -> None:
    shape = SHAPES[name]
    assert find_secret(shape.text) == shape.kind
    for redacted, kinds in (redact(shape.text), redact_widely(shape.text)):
        assert shape.secret not in redacted and kinds[0] == shape.kind
        assert redact(redacted) == (redacted, ())  # redacting twice changes nothing


@pytest.mark.parametrize(
    ("text", "secret", "kind"),
    [
        ('{"password": "Pq7wX2nV9kL4mZ8s", "user": "deploy"}', "Pq7wX2nV9kL4mZ8s", "credential assignment"),
        ("PGPASSWORD=abc123 psql -h db", "abc123", "credential assignment"),
        ("psql postgres://u:p@h/db", "u:p@", "URL credentials"),
        ("mysql -pPW app", "PW", "password option"),
        ("curl -u user:pw https://ci", "user:pw", "user:password option"),
        ("curl -u user:pass https://ci", "user:pass", "user:password option"),
        ("secret_key: abcdefghijklmnop1", "abcdefghijklmnop1", "credential assignment"),
        ("run psql --password hunter2xyzzy", "hunter2xyzzy", "password option"),
        ("mysqldump --password prodpass9 prod", "prodpass9", "password option"),
        ("sshpass -p 'S3cr3t!x' ssh deploy@host", "S3cr3t!x", "password option"),
        ("redis://:Sup3rS3cretRedis@cache:6379", "Sup3rS3cretRedis", "URL credentials"),
        ("http -a admin:Adm1nPass! POST https://api.internal", "Adm1nPass!", "user:password option"),
        ("Authorization: Bearer 9f8e7d6c5b4a392817064f", "9f8e7d6c5b4a392817064f", "bearer token"),
        ("hf_token is hf_aB3dE5gH7jK9mN1pQ3sT5vX7z", "aB3dE5gH7jK9mN1pQ3sT5vX7z", "token"),
        (
            "the blob Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1u ends here",
            "Zm9vYmFyYmF6cXV4",
            "long opaque value",
        ),
    ],
)
def test_one_policy_finds_more_shapes(text: str, secret: str, kind: str) -> None:
    assert find_secret(text) == kind
    redacted, _ = redact(text)
    assert secret not in redacted and redact(redacted) == (redacted, ())


@pytest.mark.parametrize(
    "text",
    [
        *PROSE.values(),
        "the password is in 1Password under Ferrydesk",
        "Password: rotated every quarter by the platform team",
        "Basic understanding of the token refresh flow is enough; Bearer authentication is next",
        "the token expiration-handling lives in auth/refresh.py",
        "compass: north-east of the harbour office",
        "bypass: allowed only for the release manager",
        "run mysql -p to be asked for the password",
        "curl -u with no value prompts for the password",
        "set DB_PASSWORD=$DB_PASSWORD from the vault, never inline",
        "postgres://USER:PASSWORD@HOST/DB is the shape of the URL",
        "the --password option reads from a prompt",
        "npm_lifecycle_script and npm_package_version are set by npm run",
        "the notes are in /home/alice/Projects/ferrydesk/Documentation/Deploy/Runbooks/Staging",
        "https://docs.google.com/document/d/1aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789abcdEFG/edit",
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "run the image with docker run -u 1000:1000 so files stay yours",
        "the local DATABASE_URL is postgresql+asyncpg://ferrydesk:ferrydesk@localhost:5433/ferrydesk_dev",
        "max_tokens: 4096 and the secretary: Jane Doe-Smith",
        "password: ${{ secrets.DB_PASSWORD }} in the workflow",
        "in markdown: `self.token = token`, `token=args.token` and `postgres://app:app@localhost/app`",
    ],
)
def test_one_policy_leaves_prose_alone(text: str) -> None:
    assert find_secret(text) is None
    assert redact(text) == (text, ()) and redact_widely(text) == (text, ())


# -- a secret a person already wrote ----------------------------------------------------------


def test_a_memory_that_already_holds_a_secret_can_be_archived_but_gains_none(cli: Cli, store: Store) -> None:
    """The policy refuses what a write adds: a hand-written secret is the person's to remove
    (doctor cannot judge it), and must not stop kura from archiving that memory."""
    path = store.root / "creds.md"
    path.write_text("---\nname: creds\ndescription: the staging database\ntype: reference\n---\n\n"
                    "DB_PASSWORD=hunter2horse9x\n")  # fmt: skip
    result = cli("-s", str(store.root), "forget", "creds", "--reason", "rotated")
    assert result.code == 0, result
    assert "archived:" in path.read_text() and "hunter2horse9x" not in result.out + result.err
    before = path.read_bytes()
    added = cli(
        "-s", str(store.root), "remember", "creds", "the staging database", "API_TOKEN=Zx8Kq2Lm9Pn4Rt7V"
    )
    assert added.code == 1 and "secret" in added.err and "Zx8Kq2Lm9Pn4Rt7V" not in added.out + added.err
    assert path.read_bytes() == before
