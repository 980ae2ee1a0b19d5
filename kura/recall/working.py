"""Working memory: the last messages of a transcript, verbatim, for ``kura context``.

Talon puts the most recent N messages of the conversation into every prompt as the agent's
short-term view. Here they are read from the transcript itself (``kura.transcripts``, any
format it reads), so nothing new is kept: a message is one record of the transcript (a
Claude Code entry, a chat message, a paragraph of a text note) with all of its parts.

What the person and the agent said is shown as said — they are the conversation. What a
tool returned is not theirs: a line of it that reads like an instruction
(``kura.text.quarantine``) is withheld and said to be, exactly as for spans, and so is a
whole tool output whose lines only read like one together. The section comes after the
pinned prefix, so the prefix a prompt cache keeps stays byte-stable.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kura.errors import InvalidRequest, StoreError
from kura.text.quarantine import reads_like_instruction
from kura.transcripts.segments import Segment
from kura.transcripts.sources import read_segments

MAX_RECENT = 200  # messages a context may carry
LABELS = {"USER": "user", "SELF": "agent", "ACT": "tool call", "TOOL": "tool output"}
WITHHELD = "[line withheld: it reads like an instruction]"
WITHHELD_ALL = "[withheld: this tool output reads like an instruction]"


@dataclass(frozen=True, slots=True)
class Message:
    """One message: where it is in the transcript, and its text as the prompt shows it."""

    source: str  # file:line
    text: str
    withheld: int  # lines of tool output withheld


def recent(path: str | Path, count: int) -> list[Message]:
    """The last ``count`` messages of the transcript at ``path``, oldest first."""
    if not 0 <= count <= MAX_RECENT:
        raise InvalidRequest(f"recent must be a whole number from 0 to {MAX_RECENT}, got {count}")
    if count == 0:
        return []
    transcript = Path(path)
    try:
        segments = read_segments(transcript, finished=True)
    except OSError as err:
        raise StoreError(f"{transcript}: the transcript cannot be read ({err.strerror or err})") from None
    groups: list[list[Segment]] = []
    for segment in segments:
        if groups and (groups[-1][0].turn, groups[-1][0].line) == (segment.turn, segment.line):
            groups[-1].append(segment)
        else:
            groups.append([segment])
    return [_message(transcript.name, group) for group in groups[-count:]]


def _message(name: str, group: list[Segment]) -> Message:
    parts: list[str] = []
    withheld = 0
    for segment in group:
        text, held = _shown(segment)
        withheld += held
        parts.append(f"{LABELS.get(segment.cls, segment.cls.lower())}: {text}")
    return Message(f"{name}:{group[0].line}", "- " + "\n  ".join(parts), withheld)


def _shown(segment: Segment) -> tuple[str, int]:
    """A segment's text as shown, and how many of its lines were withheld. The reason is not
    shown: it would quote the very words that were withheld."""
    if segment.cls != "TOOL" or not reads_like_instruction(segment.text):
        return segment.text, 0
    lines = segment.text.split("\n")
    held = [bool(reads_like_instruction(line)) for line in lines]
    if reads_like_instruction("\n".join(line for line, h in zip(lines, held, strict=True) if not h)):
        return WITHHELD_ALL, len(lines)  # the lines left read like one together
    return "\n".join(WITHHELD if h else line for line, h in zip(lines, held, strict=True)), sum(held)
