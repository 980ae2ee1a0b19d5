"""Transcripts: journals in, classed segments out (who said each line, by its structure)."""
