"""`plan --format mermaid`: an architecture picture of a plan. Each building block of the
layout is a box (with what it creates); an arrow A --> B means something in B waits for
something in A (an input or a depends_on), so arrows follow the data flow."""

from __future__ import annotations

from collections import Counter

from gpu_infra_tools.plan.engine import Plan, PlannedResource

BLOCK_ORDER = ("network", "security", "encryption", "identity", "storage", "compute",
               "monitoring")
"""Modules of the gpu-infra type tokens, in the order boxes are listed."""


def render_mermaid(plan: Plan) -> str:
    """A mermaid flowchart: the layout as a subgraph of its blocks, arrows between them."""
    by_urn = {r.urn: r for r in plan.resources}
    layout = next(r for r in plan.resources if r.parent not in by_urn)
    blocks = sorted((r for r in plan.resources if r.parent == layout.urn and not r.custom),
                    key=lambda r: (_module_rank(r.type), r.name))
    order = {block.urn: index for index, block in enumerate(blocks)}
    ids = {urn: f"b{index}" for urn, index in order.items()}
    owner = {r.urn: _block_of(r, by_urn, ids) for r in plan.resources}
    contents: dict[str, Counter[str]] = {block.urn: Counter() for block in blocks}
    for resource in plan.resources:
        block_urn = owner[resource.urn]
        if resource.custom and block_urn:
            contents[block_urn][resource.type.rsplit(":", 1)[-1]] += 1
    lines = ["flowchart LR",
             f'  subgraph layout["{_short_type(layout)} {layout.name}"]']
    for block in blocks:
        made = ", ".join(f"{count}× {kind}" if count > 1 else kind
                         for kind, count in sorted(contents[block.urn].items()))
        label = f"{_short_type(block)}<br/>{block.name}" + (f"<br/>{made}" if made else "")
        lines.append(f'    {ids[block.urn]}["{label}"]')
    lines.append("  end")
    edges = sorted({(source, target) for r in plan.resources if r.custom
                    for source, target in ((owner.get(dep), owner[r.urn])
                                           for dep in r.dependencies)
                    if source and target and source != target},
                   key=lambda edge: (order[edge[0]], order[edge[1]]))
    lines += [f"  {ids[source]} --> {ids[target]}" for source, target in edges]
    return "\n".join(lines) + "\n"


def _block_of(resource: PlannedResource, by_urn: dict[str, PlannedResource],
              ids: dict[str, str]) -> str | None:
    """The block (direct child of the layout) a resource sits under, if any."""
    urn: str | None = resource.urn
    while urn is not None and urn not in ids:
        urn = by_urn[urn].parent if urn in by_urn else None
    return urn


def _short_type(resource: PlannedResource) -> str:
    return resource.type.rsplit(":", 1)[-1]


def _module_rank(type_token: str) -> int:
    module = type_token.split(":")[1]
    return BLOCK_ORDER.index(module) if module in BLOCK_ORDER else len(BLOCK_ORDER)
