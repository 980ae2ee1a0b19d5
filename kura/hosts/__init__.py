"""Hosts: the agent programs kura plugs into (Claude Code, Codex, Cursor, Gemini CLI, VS Code).

What kura writes into a host's own configuration (``kura setup``), what it reads back from a
host's hooks (the JSON a hook gets on stdin, the transcript it points at) and how a host's own
memory folder is brought under a store. The host's files belong to the person: they are merged
into, never rewritten, and everything kura adds can be taken out again.
"""
