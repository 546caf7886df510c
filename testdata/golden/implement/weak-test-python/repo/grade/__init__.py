"""Scores out of 100."""
