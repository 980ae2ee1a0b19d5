"""The frontmatter block as text: which lines belong to which key, read tolerantly.

Two jobs need the *lines* of a frontmatter block, not just its values. Writing: an edit
must give every unchanged key back exactly as the person wrote it (quotes, comments,
spacing), so each top-level key's lines are found — from the YAML parser's own marks when
the block parses, from a line-based reading when it does not — and only changed keys are
dumped afresh. Reading a broken block: when the YAML is invalid, each key is read on its
own, so one bad line costs one value, not the whole memory.

PyYAML (and python-frontmatter, ~12 ms to import together) is loaded on first use
(``_yaml``): most blocks are plain ``key: value`` lines, read without it, so a weave
after one edited memory need not load a parser it never calls.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from kura.files.finding import Finding
from kura.files.flat import FLAT_LAYOUT, UNPLAIN, YAML_WORDS, flat_value

KEY_LINE = re.compile(r"""^(["']?)([^\s"'#:\-][^:]*?)\1[ \t]*:(?:[ \t]+(.*)|[ \t]*)$""")
_ANCHOR = re.compile(r"(?:^|[\s:\[{,])&[^\s,\[\]{}]+")
# greedy, ending on a character that is not a space: the same value as the lazy
# ``[^\t\r]*?`` before ``[ \r]*$`` (without trying the end at every character)
_SIMPLE = re.compile(
    r"^([A-Za-z_][A-Za-z0-9_-]*):[ ]+((?:[^\W\d_]|_)(?:[^\t\r]*[^\t\r ])?|\d{4}-\d{2}-\d{2})[ \r]*$"
)
_BRACKET = re.compile(r"[\[\]{}]")
_COMPACT = re.compile(r"(?:[-?](?:[ \t]+|$))+")  # "- - x", "? - x": collections opened on one line
MAX_DEPTH = 64  # levels of nesting a frontmatter value may have
MAX_VALUES = 10_000  # values a frontmatter block may hold once its aliases are expanded


if TYPE_CHECKING:
    import yaml


@functools.cache
def _yaml() -> ModuleType:
    import yaml

    return yaml


def _loader() -> type:
    found: type = getattr(_yaml(), "CSafeLoader", _yaml().SafeLoader)
    return found


class HostileYAML(ValueError):
    """YAML that would exhaust the stack or memory if read: ``line`` is the top-level key it
    belongs to (1 = the block's first line), ``problem`` and ``todo`` what to say. (A
    ValueError, not a ``yaml.YAMLError``, so that defining it loads no parser: every
    ``except`` that catches YAML's errors here catches ValueError too.)"""

    def __init__(self, line: int, problem: str, todo: str) -> None:
        super().__init__(problem)
        self.line, self.problem, self.todo = line, problem, todo


@dataclass(frozen=True, slots=True)
class KeySpan:
    """Lines of the frontmatter that belong to one top-level key (``key`` None: comments)."""

    key: str | None
    lines: tuple[str, ...]


def dump_value(key: str, value: Any) -> str:
    """One top-level key as YAML that reads back as the same value (strings quoted where
    YAML would otherwise guess a boolean, a date or a nested structure)."""
    dumped: str = _yaml().safe_dump(
        {key: value}, sort_keys=False, allow_unicode=True, default_flow_style=False, width=10_000
    )
    return dumped


def render_front(meta: dict[str, Any], source_meta: dict[str, Any], front_lines: tuple[str, ...]) -> str:
    """Original lines for unchanged keys, fresh YAML for changed ones. A key written twice
    by hand keeps its earlier lines; only the last (the one YAML reads) is replaced. A
    frontmatter written as one flow mapping (``{a: 1}``) is written out again whole."""
    found = spans(list(front_lines))
    if found is None or _changes_an_anchor(meta, source_meta, found):
        whole: str = _yaml().safe_dump(meta, sort_keys=False, allow_unicode=True, width=10_000)
        return whole
    last = {span.key: i for i, span in enumerate(found) if span.key is not None}
    out: list[str] = []
    for i, span in enumerate(found):
        key = span.key
        if key is None or (last[key] != i and key in meta):
            out.extend(span.lines)
        elif key not in meta:
            continue
        elif key in source_meta and meta[key] == source_meta[key]:
            out.extend(span.lines)
        else:
            out.extend(dump_value(key, meta[key]).rstrip("\n").split("\n"))
    for key, value in meta.items():
        if key not in last:
            out.extend(dump_value(key, value).rstrip("\n").split("\n"))
    return "".join(line + "\n" for line in out)


def _changes_an_anchor(meta: dict[str, Any], source_meta: dict[str, Any], found: tuple[KeySpan, ...]) -> bool:
    """A changed key that defined a YAML anchor would leave its aliases dangling; then the
    whole block is written out again (values resolved) instead."""
    return any(
        span.key is not None
        and meta.get(span.key) != source_meta.get(span.key)
        and any(_ANCHOR.search(line) for line in span.lines)
        for span in found
    )


def spans(front_lines: list[str]) -> tuple[KeySpan, ...] | None:
    """The lines that belong to each top-level key. Where the block is valid YAML the
    parser's own marks decide (so a quoted value that runs onto a column-0 line, or a
    comment inside a nested block, stays with its key); elsewhere a line-based reading.
    None for a flow mapping, whose keys share lines."""
    text = "".join(line + "\n" for line in front_lines)
    try:
        node = None if too_deep(text) else _yaml().compose(text, Loader=_loader())
    except (_yaml().YAMLError, RecursionError):
        node = None
    if isinstance(node, _yaml().MappingNode):
        if node.flow_style:
            return None
        spans = _nodespans(node, front_lines)
        if spans is not None:
            return spans
    return _linespans(front_lines)


def _nodespans(node: yaml.MappingNode, front_lines: list[str]) -> tuple[KeySpan, ...] | None:
    spans: list[KeySpan] = []
    position = 0
    for key_node, value_node in node.value:
        if not isinstance(key_node, _yaml().ScalarNode):
            return None
        start = key_node.start_mark.line
        end_mark = value_node.end_mark
        end = max(end_mark.line + (1 if end_mark.column else 0), start + 1)
        if start < position:
            return None
        spans.extend(KeySpan(None, (line,)) for line in front_lines[position:start])
        spans.append(KeySpan(str(key_node.value), tuple(front_lines[start:end])))
        position = end
    spans.extend(KeySpan(None, (line,)) for line in front_lines[position:])
    return tuple(spans)


def _linespans(front_lines: list[str]) -> tuple[KeySpan, ...]:
    spans: list[KeySpan] = []
    key: str | None = None
    current: list[str] = []
    for index, line in enumerate(front_lines):
        match = KEY_LINE.match(line)
        if match is None and key is not None and _continues(front_lines, index):
            current.append(line)
            continue
        if current:
            spans.append(KeySpan(key, tuple(current)))
        if match is not None:
            key, current = match.group(2).strip(), [line]
        else:
            spans.append(KeySpan(None, (line,)))
            key, current = None, []
    if current:
        spans.append(KeySpan(key, tuple(current)))
    return tuple(spans)


def _continues(front_lines: list[str], index: int) -> bool:
    """Whether a line belongs to the key above it: indented, a ``- `` item, or a blank
    line inside a block that goes on indented below it."""
    line = front_lines[index]
    if line[:1] in (" ", "\t") or line.startswith("- "):
        return True
    if line.strip():
        return False
    rest = next((ln for ln in front_lines[index + 1 :] if ln.strip()), "")
    return rest[:1] in (" ", "\t")


def read_meta(front_lines: list[str], path: str) -> tuple[dict[str, Any], list[Finding]]:
    simple = _simple_meta(front_lines)
    if simple is not None:
        return simple, []
    shortcut = _flat_meta(front_lines, path)
    if shortcut is not None:
        return shortcut
    import frontmatter

    block = "".join(line + "\n" for line in front_lines)
    try:
        meta = guarded(lambda text: frontmatter.parse(f"---\n{text}---\n")[0], block)
    except HostileYAML as err:
        finding = Finding(
            path, err.line + 1, f"frontmatter {err.problem}; read it as flat key: value lines — {err.todo}"
        )
        flat, more, _ = _read_flat(front_lines, path)
        return flat, [finding, *more]
    except (_yaml().YAMLError, ValueError, TypeError, OverflowError) as err:  # 2026-02-30 is a ValueError
        mark = getattr(err, "problem_mark", None)
        line = 1 + (mark.line if mark is not None else 1)
        problem = getattr(err, "problem", None) or str(err).split("\n")[0]
        flat, more, layout = _read_flat(front_lines, path)
        if layout:  # distill-kura's flat layout: read as written, nothing lost
            return flat, [Finding(path, line, FLAT_LAYOUT, "note"), *more]
        finding = Finding(
            path,
            line,
            f"frontmatter is not valid YAML ({problem}); read it as "
            "flat key: value lines — quote the value (with ' or \") so YAML reads it",
        )
        return flat, [finding, *more]
    if not meta and any(ln.strip() and not ln.lstrip().startswith("#") for ln in front_lines):
        flat, more, _ = _read_flat(front_lines, path)
        return flat, [
            Finding(
                path,
                2,
                "frontmatter is not a key: value mapping; read it as "
                "flat key: value lines — fix the block or run kura doctor",
            ),
            *more,
        ]
    return restore_keys(meta, front_lines), []


def _simple_meta(front_lines: list[str]) -> dict[str, Any] | None:
    """The block's values without the YAML machinery, for the common case where every line
    is ``key: plain words`` or ``key: YYYY-MM-DD`` — a subset whose meaning YAML leaves no
    room to doubt (values start with a letter, hold no ``: `` or `` #``, and are none of
    YAML's boolean or null words). Anything else returns None and goes to YAML. A store of
    20,000 memories is read cold in about half the time this way."""
    meta: dict[str, Any] = {}
    for line in front_lines:
        if not line or line[0] == "#":
            continue
        match = _SIMPLE.match(line)
        if match is None:
            return None
        key, value = match.groups()
        if key in meta or key.lower() in YAML_WORDS:
            return None
        if value[0].isdigit():
            try:
                meta[key] = dt.date.fromisoformat(value)
            except ValueError:
                return None
        elif value.lower() in YAML_WORDS or ": " in value or " #" in value or value.endswith(":"):
            return None
        else:
            meta[key] = value
    return meta


def _flat_meta(front_lines: list[str], path: str) -> tuple[dict[str, Any], list[Finding]] | None:
    """distill-kura's blocks read without YAML, as YAML (or, where YAML refuses an unquoted
    ``": "``, the key-by-key reading) reads them: every key once, each read by ``flat_value``,
    and nothing else but blank and comment lines. None for anything else."""
    meta: dict[str, Any] = {}
    colon = None  # the first line YAML refuses
    number = 2  # the block's first line is the file's second
    for span in _linespans(front_lines):
        if span.key is None:
            text = span.lines[0]
            if (text.strip() and not text.lstrip().startswith("#")) or UNPLAIN.search(text.strip()):
                return None
        else:
            flat = flat_value(span.lines)
            if flat is None or span.key in meta:
                return None
            meta[span.key] = flat.value
            colon = number if colon is None and flat.colon else colon
        number += len(span.lines)
    return meta, [] if colon is None else [Finding(path, colon, FLAT_LAYOUT, "note")]


def restore_keys(meta: dict[Any, Any], front_lines: list[str]) -> dict[str, Any]:
    """YAML 1.1 turns a key like ``on`` or ``no`` into a boolean; give keys back as written."""
    if all(isinstance(key, str) for key in meta):
        return dict(meta)
    restored: dict[str, Any] = {}
    for span in spans(front_lines) or ():
        if span.key is None:
            continue
        try:
            guessed = guarded(_yaml().safe_load, span.key)
        except (_yaml().YAMLError, ValueError, TypeError, OverflowError):
            guessed = span.key
        for candidate in (span.key, guessed):
            if candidate in meta:
                restored[span.key] = meta.pop(candidate)
                break
    restored.update({str(key): value for key, value in meta.items()})
    return restored


def _read_flat(front_lines: list[str], path: str) -> tuple[dict[str, Any], list[Finding], bool]:
    """The fallback reader, one top-level key at a time: a key whose own lines are valid
    YAML keeps its value; otherwise its first line is taken as text, as written. The flag:
    the block is distill-kura's flat layout — every key read as ``flat_value`` reads it,
    and what YAML refused is only values with an unquoted ``": "`` (``quoted`` fixes it)."""
    meta: dict[str, Any] = {}
    findings: list[Finding] = []
    lineno = 2
    keys = flats = colons = 0
    for span in _linespans(front_lines):
        first = span.lines[0]
        if span.key is not None:
            flat = flat_value(span.lines)
            meta[span.key] = flat.value if flat is not None else _span_value(span)
            keys, flats, colons = (
                keys + 1,
                flats + (flat is not None),
                colons + (flat is not None and flat.colon),
            )
        elif first.strip() and not first.lstrip().startswith("#"):
            findings.append(Finding(path, lineno, f"frontmatter line not read: {first.strip()[:60]!r}"))
        lineno += len(span.lines)
    return meta, findings, colons > 0 and flats == keys == len(meta) and not findings


def quoted(front_lines: tuple[str, ...]) -> tuple[str, ...] | None:
    """The block with each value YAML refused for an unquoted ``": "`` quoted (every other
    line and character as it was), or None when there is none. Single quotes unless the
    value holds one and no double quote or backslash."""
    out: list[str] = []
    for span in _linespans(list(front_lines)):
        flat = flat_value(span.lines) if span.key is not None else None
        if flat is None or not flat.colon:
            out.extend(span.lines)
            continue
        line, value = span.lines[0], flat.value
        start = line.index(value, line.index(":"))
        end = start + len(value)
        if "'" in value and '"' not in value and "\\" not in value:
            text = f'"{value}"'
        else:
            text = "'" + value.replace("'", "''") + "'"
        out.append(line[:start] + text + line[end:])
    result = tuple(out)
    return result if result != front_lines else None


def _span_value(span: KeySpan) -> Any:
    try:
        loaded = guarded(_yaml().safe_load, "\n".join(span.lines))
    except (_yaml().YAMLError, ValueError, TypeError, OverflowError):
        loaded = None
    if isinstance(loaded, dict) and span.key in loaded:
        return loaded[span.key]
    match = KEY_LINE.match(span.lines[0])
    return _unquote(match.group(3) or "") if match is not None else ""


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in ("'", '"'):
        return value[1:-1]
    return value


def raw_values(front_lines: list[str]) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in front_lines:
        match = KEY_LINE.match(line)
        if match is not None:
            values.setdefault(match.group(2).strip(), _unquote(match.group(3) or ""))
    return values


def guarded(load: Callable[[str], Any], text: str) -> Any:
    """``load(text)`` — a YAML load — unless the text nests too deep to parse safely or its
    aliases expand too far; then HostileYAML, before anything walks the value."""
    deep = too_deep(text)
    if deep is None:
        try:
            value = load(text)
        except RecursionError:  # a parser deeper than the estimate thought: the same refusal
            deep = 1
    if deep is not None:
        raise HostileYAML(deep, f"nests more than {MAX_DEPTH} levels deep", "flatten that value")
    if "*" in text:  # only an alias can make a value larger than its text
        key, problem = _expansion(value)
        if problem:
            raise HostileYAML(_key_line(text, key), problem, "write the values out")
    return value


def too_deep(text: str) -> int | None:
    """The line of the top-level key under which YAML ``text`` may nest more than
    ``MAX_DEPTH`` levels, else None. An estimate from above, without parsing: block levels
    from the indentation (each level at most two: a sequence may sit at its key's
    indentation), compact ``- - x`` items, and flow brackets ``[ {`` still open."""
    indents: list[int] = []
    flow = 0
    top = 1
    for number, line in enumerate(text.split("\n"), start=1):
        body = line.lstrip(" ")
        if not body.strip() or body[0] == "#":
            continue
        indent = len(line) - len(body)
        compact = _COMPACT.match(body)
        if indent == 0 and flow == 0 and compact is None:
            top = number
        while indents and indents[-1] >= indent:
            indents.pop()
        indents.append(indent)
        deepest = flow
        if flow or "[" in body or "{" in body:
            for bracket in _BRACKET.finditer(body):
                flow = flow + 1 if bracket.group() in "[{" else max(0, flow - 1)
                deepest = max(deepest, flow)
        block = 2 * len(indents) + (len(compact.group().split()) if compact else 0)
        if block + deepest > MAX_DEPTH:
            return top
    return None


def _expansion(value: Any) -> tuple[Any, str | None]:
    """The first top-level key whose value, with its aliases expanded, holds more than
    ``MAX_VALUES`` values, nests deeper than ``MAX_DEPTH`` or contains itself; and what is
    wrong. Shared values are measured once, so this costs what the text does."""
    sizes: dict[int, tuple[int, int]] = {}  # id -> (values, depth) once measured
    items = value.items() if isinstance(value, dict) else [(None, value)]
    for key, item in items:
        problem = _measure(item, sizes)
        if problem:
            return key, problem
    return None, None


def _measure(root: Any, sizes: dict[int, tuple[int, int]]) -> str | None:
    open_now: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        if not isinstance(node, (dict, list)) or (not finished and id(node) in sizes):
            continue
        children = list(node.values()) if isinstance(node, dict) else node
        if not finished:
            if id(node) in open_now:
                return "holds a value that contains itself (an alias inside its anchor)"
            open_now.add(id(node))
            stack.append((node, True))
            stack.extend((child, False) for child in children)
            continue
        open_now.discard(id(node))
        measured = [sizes.get(id(child), (1, 0)) for child in children]
        count = 1 + sum(n for n, _ in measured)
        depth = 1 + max((d for _, d in measured), default=0)
        sizes[id(node)] = (count, depth)
        if count > MAX_VALUES:
            return f"aliases (*name) expand to more than {MAX_VALUES} values"
        if depth > MAX_DEPTH:
            return f"aliases (*name) nest more than {MAX_DEPTH} levels deep"
    return None


def _key_line(text: str, key: Any) -> int:
    for number, line in enumerate(text.split("\n"), start=1):
        match = KEY_LINE.match(line)
        if match is not None and match.group(2).strip() == str(key):
            return number
    return 1
