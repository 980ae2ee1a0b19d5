"""A host's JSON settings file, edited as text so every byte kura did not mean to change stays.

Hosts keep their settings in JSON that people edit by hand (VS Code's and Gemini CLI's allow
``//`` comments and trailing commas). Loading such a file and dumping it again would reflow
arrays, drop comments and change escapes. So this module parses the text into a tree that
remembers where each value starts and ends, and every edit is a splice of that text: a member
inserted after the last one with the indentation its neighbours use, a member taken out
together with exactly the comma and line break its insertion added. Removing what was
inserted gives the original bytes back.

Parsing is strict where it matters (anything but comments, whitespace and one trailing comma
is an error with line and column) and bounded (nesting depth), since the file is untrusted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, NoReturn

from kura.errors import KuraError

MAX_DEPTH = 200
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}


class JsonTextError(KuraError):
    """The text is not JSON kura can edit; ``line`` and ``column`` count from 1."""

    def __init__(self, message: str, line: int, column: int) -> None:
        self.line = line
        self.column = column
        super().__init__(f"{line}:{column}: {message}")


@dataclass(frozen=True, slots=True)
class Node:
    """A value and where its text lies (``start``..``end``); members for an object, items for
    an array (empty tuples otherwise)."""

    start: int
    end: int
    value: Any
    members: tuple[Member, ...] = ()
    items: tuple[Node, ...] = ()

    @property
    def is_object(self) -> bool:
        return isinstance(self.value, dict)

    @property
    def is_array(self) -> bool:
        return isinstance(self.value, list)

    def member(self, key: str) -> Member | None:
        """The last member named ``key`` (JSON.parse keeps the last of duplicates)."""
        return next((m for m in reversed(self.members) if m.key == key), None)


@dataclass(frozen=True, slots=True)
class Member:
    key: str
    start: int  # the key's opening quote
    node: Node


def parse(text: str) -> Node:
    """The tree of ``text``; JsonTextError with line:column when it is not JSON (comments and
    trailing commas allowed)."""
    parser = _Parser(text)
    node = parser.value(0)
    parser.skip()
    if parser.pos != len(text):
        parser.fail("unexpected text after the top-level value")
    return node


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, message: str, at: int | None = None) -> NoReturn:
        where = self.pos if at is None else at
        line = self.text.count("\n", 0, where) + 1
        column = where - (self.text.rfind("\n", 0, where) + 1) + 1
        raise JsonTextError(message, line, column)

    def skip(self) -> None:
        """Past whitespace and comments."""
        text, n = self.text, len(self.text)
        while self.pos < n:
            ch = text[self.pos]
            if ch in " \t\r\n\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    self.fail("a /* comment that never ends")
                self.pos = end + 2
            else:
                return

    def value(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            self.fail(f"nested deeper than {MAX_DEPTH} levels")
        self.skip()
        if self.pos >= len(self.text):
            self.fail("the file ends where a value should be")
        ch = self.text[self.pos]
        if ch == "{":
            return self.object(depth)
        if ch == "[":
            return self.array(depth)
        if ch == '"':
            start = self.pos
            text = self.string()
            return Node(start, self.pos, text)
        return self.scalar()

    def string(self) -> str:
        try:
            found, self.pos = json.decoder.scanstring(self.text, self.pos + 1, True)  # type: ignore[attr-defined]
        except json.JSONDecodeError as err:
            self.fail(f"bad string ({err.msg})", err.pos)
        return str(found)

    def scalar(self) -> Node:
        start = self.pos
        for word, value in _LITERALS.items():
            if self.text.startswith(word, start):
                self.pos += len(word)
                return Node(start, self.pos, value)
        match = _NUMBER.match(self.text, start)
        if match is None:
            self.fail(f"unexpected {self.text[start]!r}")
        self.pos = match.end()
        raw = match.group()
        try:
            number = float(raw) if any(c in raw for c in ".eE") else int(raw)
        except ValueError:  # more digits than Python converts
            self.fail("a number too long to read", start)
        return Node(start, self.pos, number)

    def object(self, depth: int) -> Node:
        start = self.pos
        self.pos += 1
        members: list[Member] = []
        while True:
            self.skip()
            if self.text.startswith("}", self.pos):
                break
            if members:
                self.expect(",", "',' or '}' after a member")
                self.skip()
                if self.text.startswith("}", self.pos):
                    break  # a trailing comma
            if not self.text.startswith('"', self.pos):
                self.fail("expected a member name in double quotes")
            key_at = self.pos
            key = self.string()
            self.skip()
            self.expect(":", "':' after a member name")
            members.append(Member(key, key_at, self.value(depth + 1)))
        self.pos += 1
        value = {m.key: m.node.value for m in members}
        return Node(start, self.pos, value, members=tuple(members))

    def array(self, depth: int) -> Node:
        start = self.pos
        self.pos += 1
        items: list[Node] = []
        while True:
            self.skip()
            if self.text.startswith("]", self.pos):
                break
            if items:
                self.expect(",", "',' or ']' after an item")
                self.skip()
                if self.text.startswith("]", self.pos):
                    break
            items.append(self.value(depth + 1))
        self.pos += 1
        return Node(start, self.pos, [i.value for i in items], items=tuple(items))

    def expect(self, char: str, what: str) -> None:
        if not self.text.startswith(char, self.pos):
            self.fail(f"expected {what}")
        self.pos += 1


@dataclass(frozen=True, slots=True)
class Style:
    """How the file is laid out: one indentation step and its line break."""

    unit: str = "  "
    newline: str = "\n"


def style_of(text: str, root: Node) -> Style:
    newline = "\r\n" if "\r\n" in text else "\n"
    for member in root.members:
        indent = _indent_at(text, member.start)
        if indent is not None and indent:
            return Style(indent, newline)
    return Style("  ", newline)


def _indent_at(text: str, pos: int) -> str | None:
    """The whitespace that opens the line ``pos`` is on, or None when something else comes
    before ``pos`` on that line."""
    line_start = text.rfind("\n", 0, pos) + 1
    before = text[line_start:pos]
    return before if before.strip(" \t") == "" else None


def render(value: Any, indent: str, style: Style) -> str:
    """``value`` as JSON text placed at a line indented by ``indent``."""
    dumped = json.dumps(value, indent=style.unit, ensure_ascii=False)
    return dumped.replace("\n", style.newline + indent)


def _line_indent(text: str, pos: int) -> str:
    line_start = text.rfind("\n", 0, pos) + 1
    line = text[line_start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _has_comment(gap: str) -> bool:
    return "//" in gap or "/*" in gap


def insert_member(text: str, obj: Node, key: str, value: Any, style: Style) -> str:
    """``text`` with ``"key": value`` as the last member of ``obj``."""
    pair = json.dumps(key, ensure_ascii=False) + ": "
    if obj.members:
        last = obj.members[-1]
        indent = _indent_at(text, last.start)
        if indent is None:  # members share a line: stay on it
            addition = ", " + pair + json.dumps(value, ensure_ascii=False)
        else:
            addition = "," + style.newline + indent + pair + render(value, indent, style)
        return text[: last.node.end] + addition + text[last.node.end :]
    return _fill(text, obj, pair, value, style)


def append_item(text: str, array: Node, value: Any, style: Style) -> str:
    """``text`` with ``value`` as the last item of ``array``."""
    if array.items:
        last = array.items[-1]
        indent = _indent_at(text, last.start)
        if indent is None:
            addition = ", " + json.dumps(value, ensure_ascii=False)
        else:
            addition = "," + style.newline + indent + render(value, indent, style)
        return text[: last.end] + addition + text[last.end :]
    return _fill(text, array, "", value, style)


def _fill(text: str, container: Node, prefix: str, value: Any, style: Style) -> str:
    """An empty ``{}``/``[]`` given its first entry, on a line of its own."""
    outer = _line_indent(text, container.start)
    inner = outer + style.unit
    entry = style.newline + inner + prefix + render(value, inner, style)
    gap = text[container.start + 1 : container.end - 1]
    if gap.strip() == "":
        return text[: container.start + 1] + entry + style.newline + outer + text[container.end - 1 :]
    return text[: container.start + 1] + entry + "," + text[container.start + 1 :]


def replace_value(text: str, node: Node, value: Any, style: Style) -> str:
    """``text`` with ``node``'s value replaced by ``value``, laid out at its line's indent."""
    indent = _line_indent(text, node.start)
    return text[: node.start] + render(value, indent, style) + text[node.end :]


def delete_member(text: str, obj: Node, key: str) -> str:
    """``text`` without ``obj``'s member ``key`` (its last occurrence)."""
    index = max(i for i, m in enumerate(obj.members) if m.key == key)
    spans = [(m.start, m.node.end) for m in obj.members]
    return _delete(text, obj, spans, index)


def delete_item(text: str, array: Node, index: int) -> str:
    spans = [(item.start, item.end) for item in array.items]
    return _delete(text, array, spans, index)


def _delete(text: str, container: Node, spans: list[tuple[int, int]], index: int) -> str:
    """The entry ``spans[index]`` spliced out with the separator its insertion brought."""
    start, end = spans[index]
    if len(spans) == 1:
        gap = text[container.start + 1 : container.end - 1]
        if not _has_comment(gap):
            return text[: container.start + 1] + text[container.end - 1 :]
        after = _past_comma(text, end, container.end - 1)
        return text[:start] + text[after:]
    if index > 0:
        prev_end = spans[index - 1][1]
        gap = text[prev_end:start]
        if not _has_comment(gap):
            return text[:prev_end] + text[end:]
        comma = _separator(text, prev_end)
        return text[:comma] + text[comma + 1 : start] + text[end:]
    return text[:start] + text[spans[1][0] :]


def _separator(text: str, pos: int) -> int:
    """Where the comma after the entry ending at ``pos`` is (past whitespace and comments)."""
    scan = _Parser(text)
    scan.pos = pos
    scan.skip()
    return scan.pos


def _past_comma(text: str, pos: int, limit: int) -> int:
    """Just past a trailing comma after ``pos`` (through whitespace), else ``pos``."""
    probe = pos
    while probe < limit and text[probe] in " \t\r\n":
        probe += 1
    return probe + 1 if probe < limit and text[probe] == "," else pos
