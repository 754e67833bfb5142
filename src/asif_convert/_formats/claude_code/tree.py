"""The branches of a transcript's parentUuid tree.

Many children of one record are normal (parallel tool results, progress records, a response's
pieces); a second user prompt under one parent is an edit or a rewind: a fork. The branch
``claude --resume`` continues ends at the last ``last-prompt`` record's leaf, or, without one,
at the last message record of the file. Each fork continues to its latest record; each
sidechain (an inline subagent's records) is a branch of its own."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Node:
    uuid: str
    parent: str | None
    ordinal: int
    prompt: bool  # a user prompt (not a tool result, not the client's own text)
    sidechain: bool
    children: list[str] = field(default_factory=list)


@dataclass
class Tree:
    nodes: dict[str, Node] = field(default_factory=dict)

    def add(self, node: Node) -> None:
        if node.uuid not in self.nodes:  # (a uuid twice: the first one is the node)
            self.nodes[node.uuid] = node

    def link(self) -> None:
        for node in self.nodes.values():
            if node.parent is not None and node.parent in self.nodes:
                self.nodes[node.parent].children.append(node.uuid)

    def path(self, leaf: str) -> list[str]:
        """The records from the root down to ``leaf`` (a parent cycle ends the walk)."""
        out, seen = [], set()
        current: str | None = leaf
        while current is not None and current in self.nodes and current not in seen:
            seen.add(current)
            out.append(current)
            current = self.nodes[current].parent
        out.reverse()
        return out

    def latest_leaf(self, top: str) -> str:
        """The record of ``top``'s subtree that comes last in the file."""
        best, stack, seen = top, [top], set()
        while stack:
            uuid = stack.pop()
            if uuid in seen:
                continue
            seen.add(uuid)
            if self.nodes[uuid].ordinal > self.nodes[best].ordinal:
                best = uuid
            stack.extend(self.nodes[uuid].children)
        return best


def branches(tree: Tree, active: str | None) -> list[tuple[str, list[str]]]:
    """(branch id, records from root to head) for the active branch (``main``), each fork off it
    (``fork:<first record>``) and each sidechain (``sidechain:<root>``)."""
    tree.link()
    main = tree.path(active) if active is not None and active in tree.nodes else []
    out = [("main", main)]
    on_main = set(main)
    for uuid in main:
        for child in tree.nodes[uuid].children:
            node = tree.nodes[child]
            if child not in on_main and node.prompt and not node.sidechain:
                out.append((f"fork:{child}", tree.path(tree.latest_leaf(child))))
    roots = [n for n in tree.nodes.values() if n.sidechain and (n.parent is None or n.parent not in tree.nodes
                                                                 or not tree.nodes[n.parent].sidechain)]
    for root in sorted(roots, key=lambda n: n.ordinal):
        out.append((f"sidechain:{root.uuid}", tree.path(tree.latest_leaf(root.uuid))))
    return out
