"""The creation order a plan implies: the longest chain of resources that must be created
one after another (each level waits for the one before)."""

from __future__ import annotations

from functools import cache

from gpu_infra_tools.plan.engine import Plan


def custom_dependencies(plan: Plan) -> dict[str, frozenset[str]]:
    """For every custom resource, the custom resources it waits for. A dependency on a
    component stands for every custom resource below that component."""
    custom = {r.urn: r for r in plan.resources if r.custom}
    children: dict[str, list[str]] = {}
    for resource in plan.resources:
        if resource.parent:
            children.setdefault(resource.parent, []).append(resource.urn)

    @cache
    def custom_below(urn: str) -> frozenset[str]:
        if urn in custom:
            return frozenset({urn})
        return frozenset().union(*(custom_below(child) for child in children.get(urn, [])))

    return {urn: frozenset().union(*(custom_below(dep) for dep in r.dependencies)) - {urn}
            for urn, r in custom.items()}


def creation_levels(plan: Plan) -> dict[str, int]:
    """Level of every custom resource: 1 + the highest level among what it waits for."""
    needs = custom_dependencies(plan)

    @cache
    def level(urn: str) -> int:
        return 1 + max((level(dep) for dep in needs[urn]), default=0)

    return {urn: level(urn) for urn in needs}


def longest_chain(plan: Plan) -> list[str]:
    """Type tokens along one longest chain, first created first."""
    needs = custom_dependencies(plan)
    levels = creation_levels(plan)
    if not levels:
        return []
    urn = max(levels, key=levels.get)
    chain = [urn]
    while levels[urn] > 1:
        urn = next(dep for dep in needs[urn] if levels[dep] == levels[urn] - 1)
        chain.append(urn)
    types = {r.urn: r.type for r in plan.resources}
    return [types[u] for u in reversed(chain)]
