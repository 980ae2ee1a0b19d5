"""Recall and context: the memories that bear on a question, and what a model would be told."""
