"""The one exception tree kura raises.

Every failure a person can act on is a ``KuraError``; the edges (CLI, HTTP, MCP) catch
exactly this base and turn it into a message and an exit code, so a new subclass never
needs a new ``except`` anywhere. Each class carries its ``exit_code`` (1 failure or
refusal, 2 nothing found); the command line reads it in one place
(``kura.cli.exit.error_exit``). Expected outcomes (nothing found, nothing changed, a gate
verdict) are return values, not exceptions.

    KuraError               exit 1
    ├── StoreError          a store cannot be opened, read or written
    │   ├── NoteParseError  a memory file cannot be read at all (path, line)
    │   └── NoStore         no store where one was looked for (none configured, or its folder is gone)
    ├── NotFound            no such memory (nothing found: exit 2)
    │   └── UnknownStore    no such store or mode (a setup mistake: exit 1)
    ├── ConfigError         kura.toml is invalid (names the key)
    ├── PolicyRefused       the store's write policy (or a secret check) refuses a write
    ├── InvalidRequest      a value given that cannot be served (also a ValueError)
    ├── ModelUnavailable    a model endpoint could not answer
    │   └── EmbedFailed     an /embeddings endpoint gave no usable vectors
    └── GitError            git is missing, the store is in no repository, or git refused or failed

A message says what went wrong, where (path:line, slug, store) and what to do next.
"""

from __future__ import annotations


class KuraError(Exception):
    """Base of every error kura raises on purpose."""

    exit_code = 1


class StoreError(KuraError):
    """A store cannot be opened, read or written."""


class NoteParseError(StoreError):
    """A memory file cannot be read at all (not even as plain text)."""

    def __init__(self, path: str, line: int, message: str) -> None:
        self.path = path
        self.line = line
        super().__init__(f"{path}:{line}: {message}")


class NoStore(StoreError):
    """No store folder where one was looked for: no kura.toml and no ``./memory``, a path
    that is not there, or a configured store whose folder is gone. ``store`` names it."""

    def __init__(self, message: str, store: str = "") -> None:
        self.store = store
        super().__init__(message)


class NotFound(KuraError):
    """No such memory, store or mode."""

    exit_code = 2


class UnknownStore(NotFound):
    """No store or mode by that name: a setup mistake, not an empty answer."""

    exit_code = 1


class ConfigError(KuraError):
    """The configuration is invalid; the message names the key. ``table`` and ``key`` (a
    dotted table path, "" for the top level) say where, so the loader can add the line."""

    def __init__(self, message: str, *, table: str | None = None, key: str = "") -> None:
        self.table = table
        self.key = key
        super().__init__(message)


class PolicyRefused(KuraError):
    """A write the store's policy does not allow."""


class InvalidRequest(KuraError, ValueError):
    """A value given that cannot be served (out of range, wrong kind, unknown name). Also a
    ``ValueError``, so a caller that checks input that way still catches it."""


class ModelUnavailable(KuraError):
    """A model endpoint could not answer."""


class EmbedFailed(ModelUnavailable):
    """An embeddings endpoint could not give vectors; the message says why."""


class GitError(KuraError):
    """git is not installed, the folder is in no git repository, or a git command failed or
    refused. ``next_step`` is the one command the person should run next, when there is one."""

    def __init__(self, message: str, next_step: str = "") -> None:
        self.next_step = next_step
        super().__init__(message)
