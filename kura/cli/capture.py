"""``kura hook capture`` and ``kura hook prompt``: what a session said reaches memory by itself."""

from __future__ import annotations
