"""Secrets never get copied into memories.

A memory is read into every prompt, synced through git and shown to whoever opens the
store, so a pasted key in one would leak everywhere at once. The check is deliberately
narrow — well-known token shapes and ``key = <long opaque value>`` assignments — because a
false alarm on ordinary prose ("the password is in 1Password") would teach people to work
around it. What it finds is named by kind, never echoed back.
"""

from __future__ import annotations

import re

from kura.errors import PolicyRefused

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private key block", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("API key (sk-…)", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}")),
    ("Stripe key", re.compile(r"\b[sr]k_live_[A-Za-z0-9]{16,}")),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b")),
    ("JSON web token", re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}")),
    (
        "credential assignment",
        re.compile(
            r"(?i)\b(?:api[_-]?key|secret(?:[_-]?key)?|access[_-]?token|auth[_-]?token|password|passwd)"
            r"\s*[:=]\s*['\"]?(?=[A-Za-z0-9/+_\-]*\d)(?=[A-Za-z0-9/+_\-]*[A-Za-z])[A-Za-z0-9/+_\-]{16,}"
        ),
    ),
)


def find_secret(text: str) -> str | None:
    """The kind of the first secret-looking thing in ``text``, or None."""
    for kind, pattern in _PATTERNS:
        if pattern.search(text):
            return kind
    return None


_KEY_BLOCK = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?:.*?-----END [A-Z ]*PRIVATE KEY-----|.*)", re.S)


def redact(text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` with every secret-looking span replaced by ``[redacted: kind]``, and the kinds.

    A private key is cut from its BEGIN line to its END line (or to the end of the text when
    the END was cut off), not just its header, so no key material survives the redaction.
    """
    kinds: list[str] = []
    if _KEY_BLOCK.search(text):
        kinds.append("private key block")
        text = _KEY_BLOCK.sub("[redacted: private key block]", text)
    for kind, pattern in _PATTERNS:
        if kind != "private key block" and pattern.search(text):
            kinds.append(kind)
            text = pattern.sub(f"[redacted: {kind}]", text)
    return text, tuple(kinds)


def refuse_secrets(where: str, *texts: str) -> None:
    """Raise PolicyRefused, naming the kind of secret but never the secret, if any text holds one."""
    for text in texts:
        found = find_secret(text)
        if found is not None:
            raise PolicyRefused(
                f"{where}: the text looks like it holds a secret ({found}); memories are read "
                "into prompts — store where the secret lives, not the secret itself"
            )


# Wider nets for text that is kept but never reviewed (transcript spans): a false alarm
# there costs a few characters of evidence, a miss puts a password in every later prompt.
_WIDE: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "private key",
        re.compile(
            r"(?s)-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|$)"
            r"|^.*?-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----"
        ),
        "[redacted: private key]",
    ),
    (
        "token",
        re.compile(r"\b(?:glpat-|npm_|hf_|pypi-|xox[a-z]-|ghs_|shpat_)[A-Za-z0-9_\-]{16,}"),
        "[redacted: token]",
    ),
    (
        "long opaque value",
        re.compile(r"(?<![\w/+=])(?=[A-Za-z0-9+/]*[G-Zg-z+/])[A-Za-z0-9+/]{40,}={0,2}(?![\w/+=])"),
        "[redacted: opaque value]",
    ),
    (
        "bearer token",
        re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{12,}"),
        r"\1 [redacted: token]",
    ),
    (
        "credential",
        re.compile(
            r"(?i)(\b[\w.-]*(?:secret|password|passwd|pwd|pass|pw|token|api[_-]?key|access[_-]?key|private[_-]?key"
            r"|credentials?)[\"']?\s*[:=]\s*)(?!\[redacted)(\"[^\"\n]{4,}\"|'[^'\n]{4,}'|[^\s\"',;}{]{6,})"
        ),
        r"\1[redacted: credential]",
    ),
    (
        "password option",
        re.compile(r"(?i)(--?(?:password|passwd|pass)[= ]\s*)(?!\[redacted)\S{4,}"),
        r"\1[redacted: credential]",
    ),
    ("user:password option", re.compile(r"(\s-u\s+[^\s:]+:)\S{4,}"), r"\1[redacted: credential]"),
    ("URL credentials", re.compile(r"(://[^/\s:@]*:)[^@\s/]+(@)"), r"\1[redacted: URL credentials]\2"),
)


def redact_widely(text: str) -> tuple[str, tuple[str, ...]]:
    """``redact``, then also any ``…SECRET…=value``/``"password": "…"`` pair, credentials in
    a URL and bearer tokens — for text kept without a person reading it first."""
    text, kinds = redact(text)
    found = list(kinds)
    for kind, pattern, replacement in _WIDE:
        if pattern.search(text):
            found.append(kind)
            text = pattern.sub(replacement, text)
    return text, tuple(found)
