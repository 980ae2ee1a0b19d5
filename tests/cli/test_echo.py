"""``kura list`` and ``kura doctor`` print without importing typer (``kura.cli.exit.echo``):
the bytes must be what ``typer.echo`` writes, to a pipe (ANSI codes stripped) and to a
terminal (kept), and any stream click would treat otherwise goes to typer itself."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import typer

from kura.cli.exit import plain_stream, write_plain

TEXTS = (
    "plain line",
    "two\nlines\n",
    "",
    "colour \x1b[31mred\x1b[0m and \x1b[1;4mbold\x1b[m, \x1b[?25l a cursor, \x1b]0;title\x07 an OSC",
    "caf\u00e9 \u2014 \u65e5\u672c \U0001f600 \x1b[",
    "\r\ncrlf\t tab \x00 nul",
)


def piped(write: object, text: str) -> bytes:
    buffer = io.BytesIO()
    stream = io.TextIOWrapper(buffer, encoding="utf-8", errors="strict", write_through=True)
    write(text, stream)  # type: ignore[operator]
    stream.flush()
    return buffer.getvalue()


def test_to_a_pipe_the_bytes_are_typers() -> None:
    for text in TEXTS:
        assert piped(write_plain, text) == piped(lambda t, s: typer.echo(t, file=s), text)
    assert piped(write_plain, TEXTS[3]) == b"colour red and bold,  a cursor, \x1b]0;title\x07 an OSC\n"


def test_to_a_terminal_the_bytes_are_typers() -> None:
    for text in TEXTS:
        said = []
        for write in (write_plain, lambda t, s: typer.echo(t, file=s)):
            main, side = os.openpty()
            with open(side, "w", encoding="utf-8", closefd=True) as stream:
                assert stream.isatty()
                write(text, stream)
            got = b""
            while chunk := _read(main):
                got += chunk
            os.close(main)
            said.append(got)
        assert said[0] == said[1] and (b"\x1b[31m" in said[0]) == ("\x1b[31m" in text)


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 65536)
    except OSError:  # the terminal's other side is closed: all was read
        return b""


def test_streams_click_would_rewrap_are_left_to_typer() -> None:
    assert plain_stream(io.TextIOWrapper(io.BytesIO(), encoding="utf-8"))
    assert not plain_stream(io.TextIOWrapper(io.BytesIO(), encoding="ascii"))
    assert not plain_stream(io.TextIOWrapper(io.BytesIO(), encoding="us-ascii"))
    assert not plain_stream(io.StringIO())
    assert not plain_stream(None)


def test_the_front_door_prints_typers_bytes_to_a_pipe(tmp_path: Path) -> None:
    root = tmp_path / "s"
    root.mkdir()
    (root / "colour.md").write_text(
        '---\nname: c\ndescription: "a \\e[31mred\\e[0m note"\ntype: user\n---\n\nb\n'
    )
    fast = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(root), "list"], capture_output=True, check=False
    )
    slow = subprocess.run(  # an option the front door does not take: typer answers
        [sys.executable, "-m", "kura", "-s", str(root), "list", "--type", "user"],
        capture_output=True,
        check=False,
    )
    assert fast.stdout == slow.stdout == b"colour  user       a red note\n"
    ascii_out = subprocess.run(
        [sys.executable, "-m", "kura", "-s", str(root), "list"],
        capture_output=True, check=False, env={**os.environ, "PYTHONIOENCODING": "ascii"},
    )  # fmt: skip
    assert ascii_out.stdout == b"colour  user       a red note\n"
