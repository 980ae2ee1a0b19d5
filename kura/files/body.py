"""A memory's body read as markdown: its ``[[links]]``, its headings, its ``**Why:**`` and
``**How to apply:**`` sections, and where its code sits.

A body is CommonMark plus one thing, the wiki link ``[[slug]]`` (``[[slug|label]]`` and
``[[slug#part]]`` name ``slug``; a link never crosses a line). Code is not prose:
``[[ -f x ]]`` in a bash snippet is a test, not a link to a memory called ``-f x``. So
links are looked for only in the text of inline content — never in a code span, a fenced
or indented code block, raw HTML (an HTML comment is how a person switches a line off),
or where a backslash or an entity stands for a bracket. The body is parsed by
markdown-it-py with the rules that could swallow a wiki link switched off: ``[[a]](url)``
still links ``a``, and ``[x]: [[a]]`` is text, not a reference definition. Every consumer
(the catalog, so doctor, the graph and the weave; recall's walk; purge; the distiller's
check of what it composed) reads links here.

Speed: markdown-it-py takes ~35 ms to import and ~0.1 ms a body, and a cold weave reads
20,000 bodies. Only a character that starts code, HTML, an escape or an entity — a
backtick, tilde, ``<``, backslash, ``&``, tab, four spaces in a row, NUL or CR — can hide
what follows it, never what comes before. So where every ``[[…]]`` ends before the first
such character (or there is none), the link pattern over the raw text finds exactly what
the parser would (a test checks that on random bodies), and the parser is loaded and run
only for a body that needs it; ``kura prefill`` with a current map never loads it. Inline
content is parsed only where it holds a link, a heading or a label. A body over
``PARSE_CAP`` characters is read with the pattern alone, as if it held no code: a memory
is one fact, and markdown-it-py spends seconds on a megabyte crafted to be slow, which a
store someone else wrote may hold.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

PARSE_CAP = 256 * 1024  # characters
# NUL (which markdown-it reads as U+FFFD) and U+FFFD are never in a link: no file has such a name
_LINK = re.compile(r"\[\[([^\[\]|#\n\x00\ufffd]+)(?:#[^\[\]|\n\x00\ufffd]*)?(?:\|[^\[\]\n\x00\ufffd]*)?\]\]")
_HIDING = re.compile(r"[`~<\\&\t\r\x00]| {4}")
_HIDING_CHAR = re.compile(r"[`~<\\&\t\r\x00]")
_INLINE_HIDING = re.compile(r"[`<\\&]")
_LABEL = re.compile(r"(why|how to apply)\s*:?", re.IGNORECASE)
_LABELS = re.compile(r"why|how to apply", re.IGNORECASE)  # inline content worth parsing for sections
_NEWLINE = re.compile(r"\r\n?|\n")
_GAP = "\x00"  # stands for what is not prose: no link can run across it


@dataclass(frozen=True, slots=True)
class Link:
    target: str
    line: int  # in the body, from 1


@dataclass(frozen=True, slots=True)
class Heading:
    level: int
    text: str
    line: int  # in the body, from 1


@dataclass(frozen=True, slots=True)
class Body:
    links: tuple[Link, ...] = ()  # every one, in order
    headings: tuple[Heading, ...] = ()
    why: str = ""  # the first **Why:** section's text, without its label
    how: str = ""  # the first **How to apply:** section's text
    verbatim: tuple[tuple[int, int], ...] = ()  # code blocks and raw HTML: lines [first, after), from 0

    @property
    def targets(self) -> tuple[str, ...]:
        """What the body links to, each once, in order of first appearance."""
        return tuple(dict.fromkeys(link.target for link in self.links))


def links(text: str) -> tuple[str, ...]:
    """What ``text`` links to, each once, in order; the parser only when it could differ."""
    if "[[" not in text:
        return ()
    found = list(_LINK.finditer(text))  # a link never crosses a line: as ``_found`` finds them
    last = found[-1].end() if found else 0
    if len(text) > PARSE_CAP or not _hides(text, last):
        targets = (match.group(1).strip().removesuffix(".md") for match in found)
        return tuple(dict.fromkeys(target for target in targets if target))
    return tuple(dict.fromkeys(link.target for link in _links_in(_parser().parse(text), text)))


def _hides(text: str, end: int) -> bool:
    """``_HIDING.search(text, 0, end) is not None``, with the characters and the four spaces
    looked for apart (each is a quick scan; the alternation is a slow one)."""
    return _HIDING_CHAR.search(text, 0, end) is not None or text.find("    ", 0, end) >= 0


def verbatim(text: str) -> tuple[tuple[int, int], ...]:
    """Where ``text`` holds code blocks and raw HTML (see ``Body.verbatim``)."""
    return read(text).verbatim if _HIDING.search(text) is not None else ()


@lru_cache(maxsize=64)
def read(text: str) -> Body:
    """The body's structure (see the module docstring)."""
    if len(text) > PARSE_CAP:
        return Body(links=tuple(link for link, _ in _found(text, 1)))
    tokens = _parser().parse(text)  # the blocks: inline content is parsed where it matters
    headings: list[Heading] = []
    sections: dict[str, str] = {}
    for i, token in enumerate(tokens[1:], start=1):
        if token.type == "inline" and tokens[i - 1].type == "heading_open" and token.map:
            level = int(tokens[i - 1].tag[1:])
            headings.append(Heading(level, _plain(_inline(token.content)), token.map[0] + 1))
        elif token.type == "inline" and _LABELS.search(token.content):
            for label, said in _sections(_inline(token.content)):
                sections.setdefault(label, said)
    verbatim = tuple(
        (t.map[0], t.map[1]) for t in tokens if t.type in ("fence", "code_block", "html_block") and t.map
    )
    return Body(tuple(_links_in(tokens, text)), tuple(headings), sections.get("why", ""),
                sections.get("how to apply", ""), verbatim)  # fmt: skip


def _links_in(tokens: Sequence[Token], text: str, *, quick: bool = True) -> Iterator[Link]:
    """The links in the inline content of ``tokens`` (parsed from ``text``). Inline, only a
    code span, HTML, an escape or an entity hides a link: content with none of them before
    its last link is read with the pattern alone (``quick``), as the parser would read it."""
    lines: list[str] = []
    for token in tokens:
        if token.type != "inline" or not token.map or "[[" not in token.content:
            continue
        content = token.content
        last = max((match.end() for match in _LINK.finditer(content)), default=0)
        if not quick or _INLINE_HIDING.search(content, 0, last) is not None:
            content = "".join(map(_source, _inline(content)))
        for link, written in _found(content, token.map[0] + 1):
            lines = lines or _NEWLINE.split(text)  # as markdown-it counts lines
            # a code span broken over lines hides a line break: the link may sit further
            # down than counted, on the first line from there that holds it as written
            last = min(token.map[1], len(lines))
            found = (n for n in range(link.line, last + 1) if written in lines[n - 1])
            yield Link(link.target, next(found, link.line))


def _inline(content: str) -> list[Token]:
    md = _parser()
    return md.inline.parse(content, md, {}, [])


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    rules = ["link", "image", "autolink", "reference", "text_join", "inline"]  # inline: by _inline
    return MarkdownIt("commonmark").disable(rules)


def _found(text: str, first: int) -> Iterator[tuple[Link, str]]:
    """The links in ``text`` (whose first line is line ``first`` of the body), each with
    the text that wrote it."""
    for number, line in enumerate(text.split("\n"), start=first):
        if "[[" not in line:
            continue
        for match in _LINK.finditer(line):
            target = match.group(1).strip().removesuffix(".md")
            if target:
                yield Link(target, number), match.group(0)


def _source(token: Token) -> str:
    """An inline token as the prose it was written as; code, HTML, escapes and entities
    as a gap (keeping their line breaks, so links after them keep their lines)."""
    if token.type == "text":
        return token.content
    if token.type in ("softbreak", "hardbreak"):
        return "\n"
    if token.type in ("em_open", "em_close", "strong_open", "strong_close"):
        return token.markup
    return _GAP + "\n" * token.content.count("\n")


def _plain(tokens: Sequence[Token]) -> str:
    """Inline tokens as plain text: markup gone, code spans by their content."""
    parts = [
        " " if t.type in ("softbreak", "hardbreak") else t.content
        for t in tokens
        if t.type in ("text", "text_special", "code_inline", "softbreak", "hardbreak")
    ]
    return " ".join("".join(parts).split())


def _sections(tokens: Sequence[Token]) -> Iterator[tuple[str, str]]:
    """(label, text) for each bold ``Why:`` / ``How to apply:`` that starts a line: its
    text runs to the next such label or the end of the paragraph."""
    tokens = [t for t in tokens if t.type != "text" or t.content]  # emphasis leaves empty ones
    starts = [
        i
        for i in range(len(tokens) - 2)
        if tokens[i].type == "strong_open"
        and tokens[i + 1].type == "text"
        and tokens[i + 2].type == "strong_close"
        and _LABEL.fullmatch(tokens[i + 1].content.strip())
        and (i == 0 or tokens[i - 1].type in ("softbreak", "hardbreak"))
    ]
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(tokens)
        label = " ".join(tokens[start + 1].content.lower().rstrip(": ").split())
        yield label, _plain(tokens[start + 3 : end]).lstrip(": ").strip()
