"""``kura setup HOST``: wire kura into an agent host with one command."""

from __future__ import annotations
