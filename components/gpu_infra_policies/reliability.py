"""Reliability rules: advisory by default."""

from __future__ import annotations

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
    number,
)


def _scratch(resource: Resource) -> bool:
    """A stand-alone disk released with its instance (deleteWithInstance true): scratch, like
    an inline data disk with the provider default, not data to keep."""
    return resource.type in t.DISKS and resource.props.get("deleteWithInstance") is True


def data_protected(resource: Resource, _: Mapping[str, Any], ctx: Context) -> Iterator[str]:
    """Buckets, file systems and disks (but scratch disks, deleted with their instance)
    carry the `protect` resource option where the environment demands it (prod)."""
    if resource.type not in t.DATA_TYPES or resource.protect or _scratch(resource):
        return
    environment = ctx.demanded_by(resource, "protected")
    if environment:
        yield f"{environment} data resource is not protected (ResourceOptions(protect=True))"


def _versioned(bucket: Resource, resources: Sequence[Resource]) -> bool:
    versioning = bucket.props.get("versioning")
    status = versioning.get("status") if isinstance(versioning, Mapping) else None
    if status == "Enabled" or is_unknown(status):
        return True
    return any(v.type == t.BUCKET_VERSIONING
               and (v.props.get("status") == "Enabled" or is_unknown(v.props.get("status")))
               and v.refers_to(bucket, v.props.get("bucket"), "bucket") for v in resources)


def _snapshotted(disk: Resource, resources: Sequence[Resource]) -> bool:
    return any(a.type == t.SNAPSHOT_POLICY_ATTACHMENT
               and a.refers_to(disk, a.props.get("diskId")) for a in resources)


def data_versioned(resources: Sequence[Resource], _: Mapping[str, Any],
                   ctx: Context) -> Iterator[tuple[Resource | None, str]]:
    """Where the environment demands it (prod): buckets have versioning Enabled (inline or
    oss.BucketVersioning); disks kept after their instance (deleteWithInstance false,
    stand-alone or inline; scratch is deleted with it) have an automatic snapshot policy."""
    for resource in resources:
        if resource.type == t.BUCKET:
            environment = ctx.demanded_by(resource, "versioned")
            if environment and not _versioned(resource, resources):
                yield resource, f"{environment} bucket has no versioning (status Enabled)"
            continue
        environment = ctx.demanded_by(resource, "snapshots")
        if not environment:
            continue
        if resource.type in t.DISKS and not _scratch(resource) \
                and not _snapshotted(resource, resources):
            yield resource, f"{environment} disk has no automatic snapshot policy"
        elif resource.type == t.INSTANCE:
            for index, disk in enumerate(as_list(resource.props.get("dataDisks"))):
                if isinstance(disk, Mapping) and disk.get("deleteWithInstance") is False \
                        and disk.get("autoSnapshotPolicyId") is None:
                    yield resource, (f"{environment} dataDisks[{index}] has no automatic "
                                     "snapshot policy (autoSnapshotPolicyId)")


def spread_fleets(resource: Resource, cfg: Mapping[str, Any], ctx: Context) -> Iterator[str]:
    """Scaling groups of a layout that spreads its nodes (Layout tag placing them `spread`,
    e.g. inference) span `minZones` vSwitches and keep `minOnDemandBase` on-demand instances
    (onDemandBaseCapacity, provider default 0)."""
    layout = ctx.placed(resource, "spread") if resource.type == t.SCALING_GROUP else None
    if not layout:
        return
    vswitches = resource.props.get("vswitchIds")
    if not is_unknown(vswitches) and len(as_list(vswitches)) < cfg["minZones"]:
        yield (f"{layout} fleet spans {len(as_list(vswitches))} vSwitch(es); use at least "
               f"{cfg['minZones']:g} in different zones")
    base = resource.props.get("onDemandBaseCapacity", 0)
    if not is_unknown(base) and (number(base) or 0) < cfg["minOnDemandBase"]:
        yield (f"onDemandBaseCapacity {number(base) or 0:g} is below "
               f"{cfg['minOnDemandBase']:g}: spot reclaims can take the whole service down")


RELIABILITY_RULES: tuple[Rule, ...] = (
    ResourceRule("prod-data-protected", "Prod data resources are protected from deletion",
                 "reliability", "high", "Create buckets, file systems and data disks with "
                 "Conventions.data_options (protect=True in prod).", data_protected,
                 concern="reliability",
                 reviews=t.DATA_TYPES),
    StackRule("prod-data-versioned", "Prod buckets are versioned and prod disks snapshotted",
              "reliability", "medium", "Enable bucket versioning (oss.BucketVersioning status "
              "Enabled) and attach an automatic snapshot policy to prod disks.", data_versioned,
                 concern="reliability",
                 reviews=frozenset({t.BUCKET, t.BUCKET_VERSIONING, *t.DISKS,
                                    t.SNAPSHOT_POLICY_ATTACHMENT, t.INSTANCE})),
    ResourceRule("inference-multi-zone", "Fleets spread out (inference) span zones with an "
                 "on-demand base", "reliability", "high", "List at least two zones for the "
                 "stack and keep an on-demand base capacity of at least one instance.",
                 spread_fleets, concern="reliability",
                 reviews=frozenset({t.SCALING_GROUP}),
                 schema={"minZones": {"type": "number", "minimum": 1,
                                      "description": "Fewest vSwitches (zones). Default 2."},
                         "minOnDemandBase": {"type": "number", "minimum": 0,
                                             "description": "Fewest on-demand instances. "
                                                            "Default 1."}},
                 defaults={"minZones": 2, "minOnDemandBase": 1}),
)
