"""The options kura gives every git it runs: none of the programs a repository's own config
may name runs when kura only reads.

A store may come with its repository's ``.git/config`` (an archive carries it; a clone does
not). ``core.fsmonitor`` there names a program ``git status`` runs to learn what changed,
and ``log.showSignature`` makes ``git log`` run ``gpg.program``; kura asks git for every
memory's age on each weave, and the prompt hook weaves before every prompt, so such a
program would run on each prompt. Command-line ``-c`` settings win over every config file.
"""

from __future__ import annotations

SAFE = ("-c", "core.fsmonitor=false", "-c", "log.showSignature=false")
