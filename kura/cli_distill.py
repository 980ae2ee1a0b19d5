"""``kura distill …``: the distiller's commands."""

from __future__ import annotations
