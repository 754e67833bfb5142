"""Validation at both edges: JSON schemas (fast path first), continuity references and ASIF
semantic rules, and embedded files. Document-level entry points live in the pipeline."""
