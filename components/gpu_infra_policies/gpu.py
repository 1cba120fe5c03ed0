"""GPU rules: advisory by default."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gpu_infra_facts import types as t
from gpu_infra_policies.base import (
    Context,
    Resource,
    ResourceRule,
    Rule,
    StackRule,
    as_list,
    is_unknown,
)
from gpu_infra_policies.nodes import NODE_SHAPES

GPU_TYPE = re.compile(r"^ecs\.[a-z]*gn\d")
"""GPU instance types: families gn*, ebmgn*, sgn*, vgn*, sccgn*."""
PERFORMANCE_LEVELS = ("PL0", "PL1", "PL2", "PL3")
DEFAULT_DATA_DISK_CATEGORY = "cloud_efficiency"
"""Provider default of ecs.EcsDisk category and ecs.Instance dataDisks[].category."""


def _instance_types(props: Mapping[str, Any]) -> list[str]:
    found = [props.get("instanceType"), *as_list(props.get("instanceTypes")),
             *(o.get("instanceType") for o in as_list(props.get("instanceTypeOverrides"))
               if isinstance(o, Mapping))]
    return [kind for kind in found if isinstance(kind, str) and not is_unknown(kind)]


def catalog_fit(resource: Resource, _: Mapping[str, Any], ctx: Context) -> Iterator[str]:
    """GPU instance types of every node type (instances, scaling configurations, launch
    templates, ACK node pools) are in the catalog and suit the resource's Layout tag. Runs
    only when a catalog lookup is available."""
    if ctx.catalog is None or resource.type not in NODE_SHAPES:
        return
    layout = resource.tags().get("Layout")
    for kind in _instance_types(resource.props):
        if not GPU_TYPE.match(kind):
            continue
        suits = ctx.catalog(kind)
        if suits is None:
            yield f"{kind} is not in the GPU catalog"
        elif isinstance(layout, str) and layout not in suits:
            yield (f"{kind} is not meant for {layout} (suits: "
                   f"{', '.join(sorted(suits)) or 'no layout'})")


def _zone(instance: Resource, vswitches: Sequence[Resource]) -> str | None:
    zone = instance.props.get("availabilityZone")
    if isinstance(zone, str) and not is_unknown(zone):
        return zone
    for vswitch in vswitches:
        if instance.refers_to(vswitch, instance.props.get("vswitchId")):
            found = vswitch.props.get("zoneId")
            return found if isinstance(found, str) and not is_unknown(found) else None
    return None


def low_latency_fleets(resources: Sequence[Resource], cfg: Mapping[str, Any],
                       ctx: Context) -> Iterator[tuple[Resource | None, str]]:
    """Multi-node fleets of a layout that keeps its nodes together (ecs.Instance whose Layout
    places them `together`, e.g. training; grouped by GpuFleet tag) sit in one LowLatency
    deployment set and one zone."""
    fleets: dict[tuple[str, str], list[Resource]] = {}
    for resource in resources:
        layout = ctx.placed(resource, "together") if resource.type == t.INSTANCE else None
        if layout:
            key = (layout, str(resource.tags().get("GpuFleet", "")))
            fleets.setdefault(key, []).append(resource)
    sets = [r for r in resources if r.type == t.DEPLOYMENT_SET]
    vswitches = [r for r in resources if r.type == t.VSWITCH]
    for (layout, fleet), nodes in fleets.items():
        if len(nodes) < cfg["minNodes"]:
            continue
        label = f"{layout} fleet {fleet}".rstrip()
        for node in nodes:
            target = node.props.get("deploymentSetId")
            if is_unknown(target):
                continue
            chosen = [s for s in sets if node.refers_to(s, target)]
            if not chosen:
                yield node, f"{label}: node is in no deployment set; use a LowLatency one"
            elif not any(s.props.get("strategy") == "LowLatency"
                         or is_unknown(s.props.get("strategy")) for s in chosen):
                yield node, (f"{label}: deployment set strategy is "
                             f"{chosen[0].props.get('strategy', 'Availability')}, "
                             "not LowLatency")
        zones = {zone for zone in (_zone(node, vswitches) for node in nodes) if zone}
        if len(zones) > 1:
            yield nodes[0], f"{label} spans zones {', '.join(sorted(zones))}; use one zone"


def _disk_problem(where: str, disk: Mapping[str, Any], cfg: Mapping[str, Any]) -> str | None:
    category = disk.get("category", DEFAULT_DATA_DISK_CATEGORY)
    if is_unknown(category):
        return None
    if category not in cfg["allowedCategories"]:
        return (f"{where} category {category} is too slow for GPU scratch; use "
                f"{' or '.join(cfg['allowedCategories'])}")
    level = disk.get("performanceLevel", "PL1")
    if category == "cloud_essd" and level in PERFORMANCE_LEVELS and (
            PERFORMANCE_LEVELS.index(level) < PERFORMANCE_LEVELS.index(
                cfg["minPerformanceLevel"])):
        return f"{where} is an ESSD {level}; use {cfg['minPerformanceLevel']} or above"
    return None


def scratch_disks(resource: Resource, cfg: Mapping[str, Any], _: Context) -> Iterator[str]:
    """Data disks are ESSD (cloud_auto, or cloud_essd at PL1+); never cloud_efficiency, the
    provider default."""
    if resource.type in t.DISKS:
        disks = [("disk", resource.props)]
    elif resource.type in (t.INSTANCE, t.SCALING_CONFIGURATION):
        disks = [(f"dataDisks[{i}]", d) for i, d in enumerate(as_list(
            resource.props.get("dataDisks"))) if isinstance(d, Mapping)]
    else:
        return
    for where, disk in disks:
        problem = _disk_problem(where, disk, cfg)
        if problem:
            yield problem


GPU_RULES: tuple[Rule, ...] = (
    ResourceRule("gpu-type-in-catalog", "GPU instance types are in the catalog and suit the layout",
                 "gpu", "medium", "Pick a type from `gpu-infra catalog` whose uses include the "
                 "stack's layout.", catalog_fit, concern="gpu",
                 reviews=frozenset(NODE_SHAPES)),
    StackRule("training-low-latency", "Multi-node fleets kept together (training) use a "
              "LowLatency deployment set in one zone", "gpu", "medium", "Put the nodes in an "
              "ecs.EcsDeploymentSet with strategy LowLatency (gn8v, ebmgn8v, ebmgn7ex) and a "
              "single zone.", low_latency_fleets, concern="gpu",
                 reviews=frozenset({t.INSTANCE, t.SCALING_GROUP, t.DEPLOYMENT_SET, t.VSWITCH}),
              schema={"minNodes": {"type": "number", "minimum": 2,
                                   "description": "Fleet size from which the rule applies. "
                                                  "Default 2."}},
              defaults={"minNodes": 2}),
    ResourceRule("scratch-disks-essd", "Scratch disks are ESSD (AutoPL or PL1+), never "
                 "cloud_efficiency", "gpu", "medium", "Use category cloud_auto (ecs) or cloud_essd "
                 "with performanceLevel PL1 or above (ESS rejects cloud_auto).", scratch_disks,
                 concern="gpu",
                 reviews=frozenset({*t.DISKS, t.INSTANCE, t.SCALING_CONFIGURATION}),
                 schema={"allowedCategories": {"type": "array", "items": {"type": "string"},
                                               "description": "Data disk categories allowed. "
                                                              "Default cloud_auto, cloud_essd."},
                         "minPerformanceLevel": {"type": "string", "enum": list(PERFORMANCE_LEVELS),
                                                 "description": "Lowest ESSD level. Default PL1."}},
                 defaults={"allowedCategories": ["cloud_auto", "cloud_essd"],
                           "minPerformanceLevel": "PL1"}),
)
