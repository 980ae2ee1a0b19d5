"""Sentences that look like facts and are not: a tool's word on its own work, a task set.

The ladder (``kura.distill.ladder``) keeps specific, declarative sentences said in passing,
and two kinds pass every test it has while saying nothing about the project:

- **a tool's acknowledgement** — "File created successfully at: src/main.rs", "The file
  src/lib.rs has been updated successfully.", "Todos have been modified successfully": a
  path and a verb, specific and declarative, true for a moment and useless after;
- **the task a person set** — "Port this project to Rust", "Add a retry to the uploader":
  a verb of work, then what it works on. An order to the agent at work, done or not by the
  end of the session, never a standing fact (a standing rule comes as "from now on …",
  which the spotter reads).

Both are recognised by their shape, with precision before recall: a sentence that only
might be one of them stays a candidate (the ladder still needs a second session to say
it before anything crosses).
"""

from __future__ import annotations

import re

_TASK = re.compile(
    r"^(?:(?:now|then|so|ok(?:ay)?|also|and|next|first|just|please)[,\s]+)*"
    r"(?:port|add|create|convert|migrate|rewrite|update|upgrade|rename|remove|delete|drop|install|set|run"
    r"|deploy|ship|release|change|replace|translate|generate|make|use|switch|turn|enable|disable|configure"
    r"|setup|design|plan|start|stop|publish|document|restructure|optimi[sz]e|improve|support|handle)"
    r"\s+(?:up\s+)?(?:this|the|that|these|those|it|them|all|our|my|a|an|every|each|some|everything)\b",
    re.I,
)
_BOILERPLATE = re.compile(
    r"^(?:file created successfully at\b|the file \S.* has been (?:updated|created|written)\b"
    r"|todos have been (?:modified|updated) successfully\b|applied \d+ edits? to\b"
    r"|\S.* has been (?:updated|created|written|modified|deleted|saved) successfully\b"
    r"|(?:successfully )?(?:wrote|edited|created|updated) (?:\d+ lines? (?:to|in) )?\S+$)",
    re.I,
)


def task(sentence: str) -> bool:
    """An imperative task statement: a verb of work, then a determiner ("Port this …")."""
    return _TASK.match(sentence.strip()) is not None


def acknowledgement(text: str) -> bool:
    """A tool's acknowledgement of its own work ("File created successfully at: …")."""
    return _BOILERPLATE.match(text.strip()) is not None


def not_a_fact(text: str) -> bool:
    """Either of the above: never a claim to keep."""
    return task(text) or acknowledgement(text)
