"""Task revision identity and dependencies (document-level; revision order per branch lives in history)."""

from __future__ import annotations

from asif_convert._errors import pointer
from asif_convert._validation.semantic.index import Index, Report, as_dict, as_list, whole


def check(ix: Index, report: Report) -> None:
    updates = ix.by_kind.get("task_update", [])
    revisions: set[tuple[str, int]] = set()
    for i in updates:
        data = as_dict(ix.events[i].get("data"))
        key = (data.get("task_id"), data.get("revision"))
        if key in revisions:
            report.add(
                50,
                pointer("events", i, "data", "revision"),
                f"task_update '{ix.events[i].get('id')}' repeats revision {key[1]} of task "
                f"'{key[0]}'; each revision of a task is recorded once",
            )
        revisions.add(key)
    task_ids = {task for task, _ in revisions}
    partial = ix.coverage.get("tasks") == "partial"
    for i in updates:
        event = ix.events[i]
        eid, data = event.get("id"), as_dict(event.get("data"))
        task_id, revision = data.get("task_id"), data.get("revision")
        if "previous_revision" in data:
            previous = data["previous_revision"]
            where = pointer("events", i, "data", "previous_revision")
            if whole(revision) is not None and whole(previous) is not None and previous >= revision:
                report.add(
                    51,
                    where,
                    f"task_update '{eid}' has previous_revision {previous}, not smaller than revision {revision}",
                )
            if (task_id, previous) not in revisions and not partial:
                report.add(
                    53,
                    where,
                    f"task_update '{eid}' names revision {previous} of task '{task_id}', which is "
                    "not in this capture; declare tasks coverage partial",
                )
        seen: set[str] = set()
        for j, dependency in enumerate(as_list(data.get("dependencies"))):
            if dependency == task_id:
                problem = "depends on itself"
            elif dependency in seen:
                problem = f"lists dependency '{dependency}' twice"
            elif dependency not in task_ids:
                problem = f"depends on task '{dependency}', which has no task_update in this capture"
            else:
                seen.add(dependency)
                continue
            report.add(55, pointer("events", i, "data", "dependencies", j), f"task_update '{eid}' {problem}")
