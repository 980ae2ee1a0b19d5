"""Store health: ``kura doctor`` and the link graph (with its picture)."""
