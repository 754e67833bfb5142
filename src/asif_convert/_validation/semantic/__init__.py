"""ASIF 0.4 semantic validation: the checks the JSON Schema cannot express.

``check_semantics(doc)`` takes a document that already passed the session schema and returns every
problem found (not only the first), each with a rule id ``ASIF-Rnnn`` (the rule number of section 5
of ``asif-0.4-rules.md``), a JSON pointer and a message. ``RULES`` maps each checked rule id to a
one-line description. Everything runs from one shared :class:`Index` built in a single pass per
collection; selected-history rules walk each branch once. A problem is reported once per (rule,
JSON pointer), so a fault in a prefix that several branches share appears once.

Rule families (one module each): identity (3, 8-10, 12, 13), references (5, 14-17, 28-32, 57),
events (20-22, 24, 25), tools (33-38, 40, 44), decisions (45, 46, 48), tasks (50, 51, 53, 55), branches
(23, 58-63), history (19, 39-42, 46, 47, 49, 52-54, 56, 63, 64), contexts (66-69), resources
(72, 73, 75-77), streams (79-84); and the continuation profile (ASIF-C001 to C020).

Where two rules of section 5 name the same reference, it is reported once under the generic
rule: resource parts anywhere (instructions, external prompts) under R032, provenance inputs and
sources anywhere (instructions, resources, usage) under R028/R029, and a local call or request
reusing an external binding's id under R034/R045 at the local event.

R009 (a required feature this validator does not support) is a warning, not an error: the
document stays valid, but a consumer must not claim the capability the feature gates.

Rules not checked here:

======  ======================================================================================
Rule    Why it is skipped
======  ======================================================================================
1       parse level: duplicate keys and NaN are gone once the JSON is a dict (the reader checks)
2       schema: ``asif_version`` is const "0.4"
4       needs the session's other captures
6       schema: dependentRequired pairs session_id with capture_id
7       schema: if/then pairs continuation/streams/external_bindings with required_features
11      prose: evidence of absence is not machine-checkable; ``detail`` is schema-required
18      prose: "agree at the boundary" is not defined precisely enough to check
26      schema: task_update forbids supersedes
27      schema: derived/synthetic provenance requires method and inputs
43      schema: ``terminal: false`` requires ``outcome: unknown``
65      prose: no field records the evidence behind a ``pending`` state
70      needs the runtime's exact tool set; the configuration reference is checked by R066
71      prose: whether an input was transformed is not visible in the document
74      a secret value cannot be told apart from a handle
78      needs earlier captures to see that content changed
85      prose: disclosure in coverage text and synthesized events are not machine-checkable
======  ======================================================================================

Rule 13 is schema-enforced except for "a fork has a new session.id", which is checked (R013).
Embedded resources given by ``path`` are checked for path syntax only (R076); their bytes and
digest need an explicit base directory and are out of scope here.

A document that carries ``continuation`` is also checked against the single-document rules of the
portable-continuation profile 0.2 (module ``continuation``, rule ids ``ASIF-Cnnn`` listed in
``PROFILE_RULES``): the profile's own references, its dependency and workspace graphs, workspace
trees and Git records, and each plan's agreement with its checkpoint, context and configuration.
The destination's assessment report is another document and is not checked.

Three checks go beyond section 5 and the reference validator (module ``advisories``, ids
``ASIF-Wnnn`` in ``WARNING_RULES``): a local fork whose parent branch is missing, a fork point
not on its parent branch, and an event ``extensions`` key that is not namespaced. They are
warnings, so a document's validity verdict agrees with the reference's.
"""

from __future__ import annotations

from typing import Any

from asif_convert._errors import Problem
from asif_convert._validation.semantic import (
    advisories,
    branches,
    contexts,
    continuation,
    decisions,
    events,
    history,
    identity,
    references,
    resources,
    streams,
    tasks,
    tools,
)
from asif_convert._validation.semantic.catalog import PROFILE_RULES, RULES, WARNING_RULES
from asif_convert._validation.semantic.index import Index, Report

__all__ = ["PROFILE_RULES", "RULES", "WARNING_RULES", "check_semantics"]

_FAMILIES = (
    identity,
    references,
    events,
    tools,
    decisions,
    tasks,
    branches,
    history,
    contexts,
    resources,
    streams,
    continuation,
    advisories,
)


def check_semantics(doc: dict[str, Any]) -> list[Problem]:
    """Every semantic problem of a schema-valid ASIF 0.4 document; empty when it conforms."""
    ix = Index(doc)
    report = Report()
    for family in _FAMILIES:
        family.check(ix, report)
    return report.problems()
