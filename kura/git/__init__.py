"""Git: the repository that holds a store, merges of MEMORY.md, and ``kura sync``."""
