"""kura's version, in a module of its own so any layer may name it without importing the public API."""

__version__ = "0.1.0"
