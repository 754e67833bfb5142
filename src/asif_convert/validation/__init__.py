"""Validation at both edges: JSON schemas (fast path first) and ASIF semantic rules."""
