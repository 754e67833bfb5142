"""The portable-continuation profile (``asif.portable-continuation/0.2``): its single-document rules.

The profile's schema fixes each record's shape; these are the checks across records that it cannot
make: references inside the profile and into the core document, the dependency and workspace
graphs, the workspace trees, Git index records, and each plan's agreement with its checkpoint,
continuation context, configuration and selections. They follow CONTINUATION.md (profile 0.2)
and the reference validator's ``inspect_session``. The destination's assessment report is a
separate document and is not checked here.

Rule ids are ``ASIF-Cnnn``; every finding is an error, as it is for the reference. A plan whose
checkpoint, context or configuration does not resolve is reported once and its dependent checks
are skipped, rather than reported again as mismatches.
"""

from __future__ import annotations

from asif_convert._validation.semantic.continuation.plan import Plan
from asif_convert._validation.semantic.continuation.profile import Profile
from asif_convert._validation.semantic.continuation.workspaces import check_workspaces
from asif_convert._validation.semantic.index import Index, Report, as_dict

__all__ = ["check"]


def check(ix: Index, report: Report) -> None:
    profile = ix.doc.get("continuation")
    if not isinstance(profile, dict):
        return
    checked = Profile(ix, report, profile)
    checked.unique()
    checked.dependencies()
    check_workspaces(checked)
    checked.operation_records()
    for k, plan in enumerate(checked.lists["plans"]):
        Plan(checked, k, as_dict(plan)).check()
