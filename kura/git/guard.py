"""The options kura gives every git it runs: none of the programs a repository's own config
may name runs when kura only reads.

A store may come with its repository's ``.git/`` (an archive carries its config and hooks;
a clone does not). ``core.fsmonitor`` there names a program ``git status`` runs to learn
what changed, and ``log.showSignature`` makes ``git log`` run ``gpg.program``; kura asks
git for every memory's age on each weave, and the prompt hook weaves before every prompt,
so such a program would run on each prompt. Command-line ``-c`` settings win over every
config file. ``git status`` does two more things of the kind: it writes back the index it
refreshed, which runs the ``post-index-change`` hook (``--no-optional-locks``: it writes
nothing), and it reads a file whose stat data is stale through the clean filter its
attributes name (``filter.NAME.clean`` or ``.process``: any program). The names of those
filters are the config's own, so they are listed first (``FILTERS``) and switched off by
name (``unfiltered``).
"""

from __future__ import annotations

SAFE = ("--no-optional-locks", "-c", "core.fsmonitor=false", "-c", "log.showSignature=false")
FILTERS = ("config", "-z", "--name-only", "--get-regexp", r"^filter\.")
"""The arguments that list every ``filter.NAME.KEY`` the repository's config sets (its
includes followed), NUL-separated: what ``unfiltered`` reads."""
STATUS = ("--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=all")
"""How kura asks ``git status`` what is uncommitted: never inside a submodule, whose own config
(``.git/modules/NAME/config``) names filters of its own (a memory in a submodule has no age in
the superproject's log either, so nothing is lost)."""
_OFF = (".clean=", ".smudge=", ".process=", ".required=false")


def unfiltered(listed: str) -> tuple[str, ...] | None:
    """The ``-c`` options that switch off every filter driver ``listed`` names (git's output
    for ``FILTERS``), so no program of the repository's runs while git reads a file; None
    when a name cannot be said on git's command line (one holding ``=``: the caller then
    does not run the command at all)."""
    names = {
        key[7 : key.rindex(".")]
        for key in listed.split("\0")
        if key.startswith("filter.") and key.count(".") > 1
    }
    if any("=" in name for name in names):
        return None
    return tuple(part for name in sorted(names) for off in _OFF for part in ("-c", f"filter.{name}{off}"))
