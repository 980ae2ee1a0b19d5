"""Secrets never get copied into memories, nor anywhere else kura writes or says.

A memory is read into every prompt, synced through git and shown to whoever opens the
store, so a pasted key in one would leak everywhere at once. There is **one** policy, the
table below, and every path uses it: a direct write (remember over the CLI, HTTP or MCP,
save, import, observe) is refused when it finds anything (``refuse_secrets``); text kept
without a person reading it first (transcript spans, the distiller's evidence, drafts and
seeds) has what it finds replaced by ``[redacted: …]`` (``redact``); and a message that
quotes what it was given (a usage error, an HTTP or MCP error) is redacted before it is
shown. One table, because two nets drift: a narrow one guarding writes let
``AWS_SECRET_ACCESS_KEY=…`` through while the spans' wide one caught it.

The net is wide — token shapes, key blocks, any ``…PASSWORD…=value`` or ``"secret": "…"``
pair, credentials in a URL, ``--password``/``mysql -p…``/``curl -u user:pass``, bearer
tokens, 40 or more base64 characters — yet it looks at the value, not only at the word
before it, because a false alarm on ordinary prose ("the password policy", "Password:
rotated every quarter", ``curl -u`` in a sentence) would teach people to work around it:
placeholders (``$VAR``, ``<token>``, ``USER:PASSWORD``, ``****``) are not secrets, a plain
word after ``password:`` is prose, and a git SHA, a UUID, a path or a URL without
credentials is none of these shapes. What it finds is named by kind, never echoed back.

Breadth comes from a maintained detector (``kura.text.detectors``: detect-secrets' vendor
plugins — Slack webhooks, SendGrid, Azure storage keys, Twilio, …), asked after the table
and under the same policy; the table keeps what it judges more strictly or that the
detector lacks (``GOCSPX-``, ``dop_v1_``, a password said in prose — "the root password on
db-main is Hx7kq2Lm9zP" — or in a netrc line). Text is matched as it reads, not as it is
spelled: invisible characters (zero-width spaces and joiners, bidi controls, soft hyphens:
Unicode's format characters) are dropped and compatibility forms folded (NFKC) before any
rule runs, so a ``ghp_`` token split by a zero-width space is still a token.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from kura.errors import PolicyRefused
from kura.text import detectors


def _always(match: re.Match[str]) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str  # named in a refusal and in a gate's note
    pattern: re.Pattern[str]  # the secret is the group "value" when there is one, else the match
    label: str  # what stands in its place: [redacted: label]
    holds: Callable[[re.Match[str]], bool] = _always  # is this match a secret, not prose?
    words: tuple[str, ...] = ()  # one of these (lower case) must be in the text: a cheap test first


_PLACEHOLDER = re.compile(r"^(?:[$<{%\[*…]|\.\.\.|(?:env|file|fd|stdin):)|^[A-Z][A-Z_]{3,}$|^(.)\1{2,}$")


def _bare(value: str) -> str:
    """The value without what markdown or a sentence closes it with (`` `x` ``, ``(x)``)."""
    return value.rstrip("`)].,") or value


def _real(value: str) -> bool:
    """Not empty and not a placeholder: ``$VAR``, ``<token>``, ``{{ x }}``, ``env:NAME``,
    an upper-case name (``PASSWORD``), ``xxxx``, ``[redacted: …]``."""
    value = _bare(value).strip("\"'")
    return bool(value) and not _PLACEHOLDER.search(value)


def _random(value: str) -> bool:
    """Looks generated rather than written: a digit or a symbol (not brackets, which are
    code: ``Optional[str]``)."""
    return bool(re.search(r"[\d!@#$%^&*+=?|~\\]", value))


def _quoted(value: str) -> bool:
    return len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'"


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def _code(match: re.Match[str]) -> bool:
    """``token = env.get(name)``, ``self.token = token``, ``password = user_password``,
    ``token=args.token``: code that names a secret without holding one."""
    value = _bare(match["value"])
    if "(" in value or value.lower() == match["name"].lower():
        return True
    if _IDENTIFIER.fullmatch(value) is None:
        return False
    spaced = match["op"] == "=" and bool(match["before"] or match["after"])
    return "." in value or (spaced and not any(c.isdigit() for c in value))


def _assigned(match: re.Match[str]) -> bool:
    """``KEY=value`` holds one unless the value is code; after ``key:`` only a quoted or
    generated-looking value does ("Password: rotated every quarter" is prose)."""
    value = match["value"]
    if not _real(value):
        return False
    if _quoted(value):
        return True
    if _code(match):
        return False
    return match["op"] == "=" or (len(value) >= 6 and _random(value))


def _option(match: re.Match[str]) -> bool:
    """``--password=x`` holds one; ``--password x`` only when x looks generated (not
    "the --password option")."""
    value = match["value"]
    if not _real(value):
        return False
    return match["op"] == "=" or _quoted(value) or _random(value)


def _paired(match: re.Match[str]) -> bool:
    """A password after a user name (a URL, ``curl -u``); one equal to the name is a
    well-known default (``postgres:postgres``), not a secret."""
    return _real(match["value"]) and _bare(match["value"]) != match["user"]


def _user_pass(match: re.Match[str]) -> bool:
    """``-u user:pass`` off a curl line: only a generated-looking password (not docker's
    ``-u 1000:1000`` or ``-u app:staff``)."""
    return _paired(match) and _random(match["value"]) and not match["value"].isdigit()


def _bearer(match: re.Match[str]) -> bool:
    """``token`` then a value with a digit; ``Bearer``/``Basic`` then one that also may be
    plain base64 (``dXNlcjpwYXNz``), but not a word ("Bearer authentication")."""
    value = match["value"]
    if match["word"].lower() == "token":
        return any(c.isdigit() for c in value)
    return _random(value) or re.search(r"[a-z][A-Z]", value) is not None or value.endswith("=")


def _value(match: re.Match[str]) -> bool:
    return _real(match["value"])


def _said(match: re.Match[str]) -> bool:
    """A password said in prose ("… is Hx7kq2Lm9zP"): a value with a letter and a digit or
    a symbol, not a path or a link ("the password policy is strict" is prose)."""
    value = _bare(match["value"]).strip("\"'")
    return (
        len(value) >= 6
        and _real(value)
        and _random(value)
        and any(c.isalpha() for c in value)
        and "/" not in value
    )


_I = re.IGNORECASE
_KEY = r"[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?"
_ASSIGNED_NAME = (  # the lookahead only makes the search quick: every name starts with one of these
    r"(?=[spatc])(?:secret(?:[_-]?key)?|password|passwd|passphrase|token|api[_-]?key|access[_-]?key|private[_-]?key"
    r"|signing[_-]?key|credentials?|(?<![a-z0-9])(?:pass|pwd|pw))"
)
_VALUE = r"(?P<value>\"[^\"\n]{4,}\"|'[^'\n]{4,}'|[^\s\"',;}{&]{4,})"
_CLI_VALUE = r"(?P<value>\"[^\"\n]+\"|'[^'\n]+'|[^\s\"']+)"
_USER_PASS = r"(?<!\S)(?:-u|--user|-a|--auth)(?:[ \t]+|=)?[\"']?(?P<user>[^\s:\"']+):(?P<value>[^\s\"']+)"

_RULES: tuple[_Rule, ...] = (
    _Rule(
        "private key block",
        re.compile(
            rf"(?s)-----BEGIN {_KEY}(?:-----)?.*?(?:-----END {_KEY}-----|\Z)|\A.*?-----END {_KEY}-----"
        ),
        "private key block",
    ),
    _Rule("AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), "AWS access key"),
    _Rule(
        "GitHub token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"),
        "GitHub token",
    ),
    _Rule("API key (sk-…)", re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}"), "API key (sk-…)"),
    _Rule("Stripe key", re.compile(r"\b[sr]k_live_[A-Za-z0-9]{16,}"), "Stripe key"),
    _Rule("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"), "Slack token"),
    _Rule("Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"), "Google API key"),
    _Rule(
        "JSON web token",
        re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"),
        "JSON web token",
    ),
    _Rule(
        "token",
        re.compile(
            r"\b(?:glpat-|npm_|hf_|pypi-|xox[a-z]-|ghs_|shpat_|GOCSPX-|do[opr]_v1_)"
            r"(?=[A-Za-z0-9_\-]*\d)[A-Za-z0-9_\-]{16,}"
        ),
        "token",
    ),
    _Rule(
        "credential assignment",
        re.compile(
            rf"(?P<name>{_ASSIGNED_NAME})[\"']?(?P<before>[ \t]*)(?P<op>[:=])(?P<after>[ \t]*)"
            rf"(?!\[redacted){_VALUE}",
            _I,
        ),
        "credential",
        _assigned,
    ),
    _Rule(
        "password in prose",
        re.compile(
            r"\b(?:password|passwd|passphrase|passcode|secret|api[ _-]?key|access[ _-]?key)s?\b"
            r"[^.!?\n]{0,48}?\b(?:is|was|are|=|reads|becomes|set to|changed to)[ \t]+(?P<value>[^\s]{6,})",
            _I,
        ),
        "credential",
        _said,
        ("pass", "secret", "key"),
    ),
    _Rule(
        "netrc password",
        re.compile(
            r"(?:\b(?:machine|login|default)\b[^\n]*?|^[ \t]*)\bpassword[ \t]+(?P<value>[^\s\"']+)", _I | re.M
        ),
        "credential",
        _said,
        ("password",),
    ),
    _Rule(
        "password option",
        re.compile(rf"(?<![\w-])--?(?:password|passwd|passphrase|pass)(?P<op>=|[ \t]+)(?!-){_CLI_VALUE}", _I),
        "credential",
        _option,
    ),
    _Rule(
        "password option",
        re.compile(
            r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mariadb(?:-dump|-admin)?)\b"
            r"[^\n|;&]*?[ \t]-p(?P<value>[^\s-]\S*)"
        ),
        "credential",
        _value,
    ),
    _Rule(
        "password option",
        re.compile(
            r"\b(?:sshpass[^\n|;&]*?[ \t]-p[ \t]*|redis-cli[^\n|;&]*?[ \t]-a[ \t]+)(?P<value>[^\s-]\S*)"
        ),
        "credential",
        _value,
    ),
    _Rule(
        "user:password option",
        re.compile(rf"\b(?:curl|xh|https?)\b[^\n|;&]*?{_USER_PASS}"),
        "credential",
        _paired,
    ),
    _Rule("user:password option", re.compile(_USER_PASS), "credential", _user_pass),
    _Rule(
        "URL credentials",
        re.compile(r"://(?P<user>[^/\s:@]*):(?P<value>[^@\s/]+)@"),
        "URL credentials",
        _paired,
    ),
    _Rule(
        "bearer token",
        re.compile(r"\b(?P<word>bearer|basic|token)[ \t]+(?P<value>[A-Za-z0-9._~+/=-]{12,})", _I),
        "token",
        _bearer,
    ),
    _Rule(
        "long opaque value",
        re.compile(
            r"(?<![\w/+=.-])(?!/)(?=[A-Za-z0-9+/]*\d)(?=[A-Za-z0-9+/]*[a-z])(?=[A-Za-z0-9+/]*[A-Z])"
            r"[A-Za-z0-9+/]{40,}={0,2}(?![\w/+=])"
        ),
        "opaque value",
    ),
)


def redact(text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` with every secret replaced by ``[redacted: …]``, and the kinds found, in
    the policy's order. A private key is cut from its BEGIN line to its END line (or to
    the end of the text when the END was cut off), so no key material survives; for a
    ``name=value`` pair, an option or a URL only the value goes. Redacting twice changes
    nothing more. Text that holds no secret comes back as given; text that does comes back
    as it reads (``visible``), with the secrets replaced."""
    seen = visible(text)
    out, found = _by_table(seen)
    for kind, value in detectors.found(out):
        if value in out:
            out = out.replace(value, f"[redacted: {kind}]")
            found.extend([kind] if kind not in found else [])
    return (out, tuple(found)) if found else (text, ())


def _by_table(text: str) -> tuple[str, list[str]]:
    found: list[str] = []
    lowered = text.lower()
    for rule in _RULES:
        if rule.words and not any(word in lowered for word in rule.words):
            continue

        def replace(match: re.Match[str], rule: _Rule = rule) -> str:
            if not rule.holds(match):
                return match.group(0)
            if rule.kind not in found:
                found.append(rule.kind)
            whole = match.group(0)
            if "value" not in rule.pattern.groupindex:
                return f"[redacted: {rule.label}]"
            start, end = (i - match.start() for i in match.span("value"))
            return f"{whole[:start]}[redacted: {rule.label}]{whole[end:]}"

        text = rule.pattern.sub(replace, text)
    return text, found


# Unicode's format characters a text can hide inside a token: soft hyphen, Arabic letter mark,
# Mongolian vowel separator, zero-width space/joiners and direction marks, bidi embeddings,
# overrides and isolates, word joiner and invisible operators, BOM, annotation marks, tags.
_INVISIBLE = re.compile(
    "[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f"
    "\ufeff\ufff9-\ufffb\U000e0001\U000e0020-\U000e007f]"
)


def visible(text: str) -> str:
    """``text`` as a reader sees it: format characters (zero-width, bidi, soft hyphen)
    dropped, compatibility forms folded (NFKC). Plain ASCII is returned at once."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", _INVISIBLE.sub("", text))


redact_widely = redact  # the name the spans used when theirs was the wider of two nets


def find_secret(text: str) -> str | None:
    """The kind of the first secret-looking thing in ``text``, or None."""
    kinds = redact(text)[1]
    return kinds[0] if kinds else None


def refuse_added_secrets(where: str, old: bytes, new: bytes) -> None:
    """``refuse_secrets`` for what ``new`` adds to ``old``, line by line: a secret a person
    already wrote into a file is theirs to remove (doctor cannot judge it), and must not
    stop kura from archiving or annotating that memory; a secret kura would add, must."""
    before = set(old.decode("utf-8", "replace").splitlines())
    added = [line for line in new.decode("utf-8", "replace").splitlines() if line not in before]
    refuse_secrets(where, "\n".join(added))


def refuse_secrets(where: str, *texts: str) -> None:
    """Raise PolicyRefused, naming the kind of secret but never the secret, if any text holds one."""
    for text in texts:
        found = find_secret(text)
        if found is not None:
            raise PolicyRefused(
                f"{where}: the text looks like it holds a secret ({found}); memories are read "
                "into prompts — store where the secret lives, not the secret itself"
            )
