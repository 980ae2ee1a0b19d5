"""The ``kura`` command line: the typer app, its commands by topic, and the fast path."""
