"""The resident map: MEMORY.md woven to fit a prompt budget, and the prefill block that carries it."""
