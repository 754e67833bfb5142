"""Generate the people-facing docs from the mapping tables: ``python -m asif_convert.docs``."""

from __future__ import annotations

from pathlib import Path

from .mapping import MappingTable, load_table

# meta keys that name where a table's unexpressed fields and losses travel (asif-to-continuity)
_DESTINATIONS = {"residual": "Residual fields travel in", "losses": "ASIF losses travel in"}


def render_markdown(table: MappingTable) -> str:
    """docs/mapping-<name>.md: the table for people (regenerate with ``python -m asif_convert.docs``).

    A table whose entries carry no ``loss`` key gets no loss column, and one without ``[derived]``
    records gets no section for them."""
    cell = lambda s: str(s).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    with_loss = any("loss" in e for e in table.fields.values())
    lines = [
        f"# Mapping: {table.meta.get('from', '?')} → {table.meta.get('to', '?')}",
        "",
        f"Generated from `mappings/{table.name}.toml`; do not edit by hand.",
        "",
    ]
    destinations = [f"- {label}: {cell(table.meta[key])}." for key, label in _DESTINATIONS.items()
                    if key in table.meta]
    if destinations:
        lines += [*destinations, ""]
    lines += ["## Fields", ""]
    if with_loss:
        lines += ["| source field | target | rule | loss kind | explanation |", "|---|---|---|---|---|"]
    else:
        lines += ["| source field | target | rule | explanation |", "|---|---|---|---|"]
    for path, e in table.fields.items():
        loss = f" {e.get('loss', '')} |" if with_loss else ""
        lines.append(f"| `{path}` | {cell(e['target'])} | {e['rule']} |{loss} {cell(e.get('explanation', ''))} |")
    if table.derived:
        lines += ["", "## Records synthesized on the target side", "",
                  "| record | target | loss kind | explanation |", "|---|---|---|---|"]
        for key, e in table.derived.items():
            lines.append(f"| `+{key}` | {cell(e['target'])} | {e['loss']} | {cell(e['explanation'])} |")
    lines += ["", "## Loss kinds", "", "| kind | meaning |", "|---|---|"]
    lines += [f"| `{k}` | {cell(v)} |" for k, v in table.kinds.items()]
    return "\n".join(lines) + "\n"


TABLES = ("continuity-to-asif", "asif-to-continuity")

def main() -> None:
    docs = Path(__file__).resolve().parents[2] / "docs"
    for name in TABLES:
        (docs / f"mapping-{name}.md").write_text(render_markdown(load_table(name)), encoding="utf-8")


if __name__ == "__main__":
    main()
