"""Generate the people-facing docs from the mapping tables: ``python -m asif_convert.docs``."""

from __future__ import annotations

from pathlib import Path

from .mapping import MappingTable, load_table


def render_markdown(table: MappingTable) -> str:
    """docs/mapping-<name>.md: the table for people (regenerate with ``python -m asif_convert.docs``)."""
    cell = lambda s: str(s).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    lines = [
        f"# Mapping: {table.meta.get('from', '?')} → {table.meta.get('to', '?')}",
        "",
        f"Generated from `mappings/{table.name}.toml`; do not edit by hand.",
        "",
        "## Fields",
        "",
        "| source field | target | rule | loss kind | explanation |",
        "|---|---|---|---|---|",
    ]
    for path, e in table.fields.items():
        lines.append(f"| `{path}` | {cell(e['target'])} | {e['rule']} | {e.get('loss', '')} | "
                     f"{cell(e.get('explanation', ''))} |")
    lines += ["", "## Records synthesized on the target side", "",
              "| record | target | loss kind | explanation |", "|---|---|---|---|"]
    for key, e in table.derived.items():
        lines.append(f"| `+{key}` | {cell(e['target'])} | {e['loss']} | {cell(e['explanation'])} |")
    lines += ["", "## Loss kinds", "", "| kind | meaning |", "|---|---|"]
    lines += [f"| `{k}` | {cell(v)} |" for k, v in table.kinds.items()]
    return "\n".join(lines) + "\n"


TABLES = ("continuity-to-asif",)

def main() -> None:
    docs = Path(__file__).resolve().parents[2] / "docs"
    for name in TABLES:
        (docs / f"mapping-{name}.md").write_text(render_markdown(load_table(name)), encoding="utf-8")


if __name__ == "__main__":
    main()
