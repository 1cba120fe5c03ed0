"""GPU compute validators: the fleet judged against the catalog before anything is built.

Names are stable; WARNINGs can be silenced by listing the name under `suppress:`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from gpu_infra import catalog
from gpu_infra.catalog.recommend import PURCHASE_NOTES
from gpu_infra.knowhow.findings import Finding, Level
from gpu_infra.knowhow.placement import erdma_for, placement_for
from gpu_infra.schema import FleetCluster
from gpu_infra.schema.compute import ScalingFleet, TrainingFleet
from gpu_infra_facts.autopl import autopl_problems

MIN_VCPU_PER_GPU = 4
"""Fewer vCPUs per GPU than this starve data loading and preprocessing."""


def _finding(validator: str, level: str, path: str, message: str) -> Finding:
    return Finding(validator, Level(level), path, message)


def _fleet_types(cluster: FleetCluster) -> Iterator[tuple[str, str]]:
    """(field path, instance type) of every type the fleet uses."""
    fleet = cluster.fleet
    if isinstance(fleet, TrainingFleet):
        yield "fleet.instance_type", fleet.instance_type
    else:
        for index, instance_type in enumerate(fleet.instance_types):
            yield f"fleet.instance_types[{index}]", instance_type


def unknown_instance_type(cluster: FleetCluster) -> Iterable[Finding]:
    """ERROR: a type neither the catalog nor the stack's `instance_types` knows."""
    for path, instance_type in _fleet_types(cluster):
        if cluster.gpu_types.get(instance_type) is None:
            family = catalog.family_of(instance_type)
            known = sorted({entry.family for entry in catalog.entries()})
            yield _finding("unknown-instance-type", "ERROR", path,
                           f"{instance_type} is not a GPU instance type in the catalog "
                           f"(family {family}); GPU families: {', '.join(known)} "
                           "(see `gpu-infra catalog`); for a type the catalog lacks, declare "
                           f"it under instance_types.{instance_type} with gpu_model, "
                           "gpu_count, gpu_memory_gib, vcpu and memory_gib")


def erdma_unsupported(cluster: FleetCluster) -> Iterable[Finding]:
    """ERROR: eRDMA asked for on a family without it."""
    fleet = cluster.fleet
    if isinstance(fleet, TrainingFleet) and fleet.erdma == "on":
        entry = cluster.gpu_types.get(fleet.instance_type)
        if entry is not None and not entry.erdma:
            with_erdma = sorted({e.family for e in catalog.entries() if e.erdma})
            yield _finding("erdma-unsupported", "ERROR", "fleet.erdma",
                           f"family {entry.family} has no eRDMA; use auto or off, or a "
                           f"family with eRDMA: {', '.join(with_erdma)}")


def low_latency_placement(cluster: FleetCluster) -> Iterable[Finding]:
    """ERROR: LowLatency asked for on a family deployment sets do not support.

    The model avoids the other LowLatency traps: nodes all go in one zone (the first of
    network.zones) and more than 20 nodes are split over ceil(N/20) sets (INFO)."""
    fleet = cluster.fleet
    if not isinstance(fleet, TrainingFleet):
        return
    entry = cluster.gpu_types.get(fleet.instance_type)
    if fleet.placement == "LowLatency" and entry is not None and not entry.low_latency:
        supported = sorted({e.family for e in catalog.entries() if e.low_latency})
        yield _finding("low-latency-placement", "ERROR", "fleet.placement",
                       f"LowLatency deployment sets do not support family {entry.family}; "
                       f"supported: {', '.join(supported)}; use auto or Availability")
    limit = catalog.LOW_LATENCY_MAX_INSTANCES
    if (placement_for(fleet, cluster.gpu_types) == "LowLatency" and fleet.nodes > limit
            and entry is not None and entry.low_latency):
        groups = -(-fleet.nodes // limit)
        yield _finding("low-latency-placement", "INFO", "fleet.nodes",
                       f"{fleet.nodes} nodes are split over {groups} LowLatency deployment "
                       f"sets of at most {limit}; traffic between sets is not low-latency")


def multi_node_interconnect(cluster: FleetCluster) -> Iterable[Finding]:
    """WARNING: multi-node training on a family with neither NVLink nor eRDMA."""
    fleet = cluster.fleet
    if isinstance(fleet, TrainingFleet) and fleet.nodes > 1:
        entry = cluster.gpu_types.get(fleet.instance_type)
        if entry is not None and not entry.nvlink and not entry.erdma:
            yield _finding("multi-node-interconnect", "WARNING", "fleet.instance_type",
                           f"{fleet.nodes} nodes of {entry.family} have neither NVLink nor "
                           "eRDMA: gradients cross PCIe and TCP; prefer gn8v or ebmgn8v")


def low_vcpu_per_gpu(cluster: FleetCluster) -> Iterable[Finding]:
    """WARNING: fewer than MIN_VCPU_PER_GPU vCPUs per GPU."""
    for path, instance_type in _fleet_types(cluster):
        entry = cluster.gpu_types.get(instance_type)
        per_gpu = entry.vcpu_per_gpu if entry else None
        if per_gpu is not None and per_gpu < MIN_VCPU_PER_GPU:
            yield _finding("low-vcpu-per-gpu", "WARNING", path,
                           f"{instance_type} has {per_gpu:g} vCPUs per GPU (below "
                           f"{MIN_VCPU_PER_GPU}): data loading may starve the GPUs")


def spot_non_interruptible(cluster: FleetCluster) -> Iterable[Finding]:
    """ERROR: spot capacity for a fleet marked non-interruptible."""
    fleet = cluster.fleet
    if fleet.interruptible:
        return
    if isinstance(fleet, TrainingFleet) and fleet.capacity == "spot":
        yield _finding("spot-non-interruptible", "ERROR", "fleet.capacity",
                       "spot nodes can be reclaimed at 5 minutes' notice but the fleet is "
                       "interruptible: false; use on_demand or prepaid, or set "
                       "interruptible: true")
    elif isinstance(fleet, ScalingFleet) and fleet.uses_spot:
        yield _finding("spot-non-interruptible", "ERROR", "fleet.on_demand_percentage_above_base",
                       f"{100 - fleet.on_demand_percentage_above_base}% spot above the base but "
                       "the fleet is interruptible: false; set it to 100, or set "
                       "interruptible: true")


def not_offered_in_region(cluster: FleetCluster) -> Iterable[Finding]:
    """WARNING: a type whose regions are known (catalog or declaration) is not offered in
    the stack's region."""
    for path, instance_type in _fleet_types(cluster):
        entry = cluster.gpu_types.get(instance_type)
        if entry is not None and entry.offered_in(cluster.region) is False:
            where = ("its instance_types declaration" if instance_type in cluster.instance_types
                     else "the catalog")
            yield _finding("not-offered-in-region", "WARNING", path,
                           f"{instance_type} is not offered in {cluster.region} per {where} "
                           f"(offered in: {', '.join(entry.regions or ())})")


def restricted_family(cluster: FleetCluster) -> Iterable[Finding]:
    """WARNING: a type of a family not on open sale (catalog `availability`: through sales,
    by ticket, in preview), which needs that arrangement before `pulumi up`; INFO: a family
    Alibaba no longer recommends."""
    for path, instance_type in _fleet_types(cluster):
        entry = cluster.gpu_types.get(instance_type)
        if entry is None:
            continue
        if entry.availability != "open":
            yield _finding("restricted-family", "WARNING", path,
                           f"{instance_type}: family {entry.family} is "
                           f"{PURCHASE_NOTES[entry.availability]} (Alibaba's instance-family "
                           "page): arrange that before `pulumi up`, or the nodes may not be "
                           "created; suppress this once it is")
        if not entry.recommended:
            yield _finding("restricted-family", "INFO", path,
                           f"{instance_type}: Alibaba no longer recommends family "
                           f"{entry.family} (its page: use the other families when it is sold "
                           "out); see `gpu-infra catalog`")


def disk_too_large(cluster: FleetCluster) -> Iterable[Finding]:
    """ERROR: a disk sized per GPU whose size on the fleet's nodes (size_gib x GPUs per node
    of the first instance type) is outside the ESSD AutoPL range."""
    _, instance_type = next(_fleet_types(cluster))
    gpus = cluster.gpu_types.gpus_per_node(instance_type)
    for index, disk in enumerate(cluster.storage.disks):
        size = disk.size_for(gpus)
        problems = autopl_problems(size, 0) if disk.per == "gpu" else []
        if problems:
            yield _finding("disk-too-large", "ERROR", f"storage.disks[{index}].size_gib",
                           f"{disk.size_gib} GiB per GPU x {gpus} GPUs of {instance_type} = "
                           f"{size} GiB; {problems[0].partition(': ')[2]}")


def no_rolling_refresh(cluster: FleetCluster) -> Iterable[Finding]:
    """INFO: a long-lived scaling fleet ESS cannot refresh, with nothing renewing it."""
    fleet = cluster.fleet
    if (isinstance(fleet, ScalingFleet) and not fleet.refreshes and fleet.min_size >= 1
            and fleet.max_instance_lifetime_days is None):
        why = ("scale_in_mode recycle" if fleet.scale_in_mode == "recycle"
               else f"multi_az_policy {fleet.multi_az_policy}")
        yield _finding("no-rolling-refresh", "INFO", "fleet.max_instance_lifetime_days",
                       f"ESS cannot refresh this group ({why}; refresh needs PRIORITY and "
                       "release): a new image or user data reaches only instances launched "
                       "after it; set max_instance_lifetime_days (e.g. 7) to renew them")


def jumbo_frames_without_erdma(cluster: FleetCluster) -> Iterable[Finding]:
    """ERROR: jumbo frames on a fleet without eRDMA: the MTU rule they come with (8500) is
    applied by the eRDMA step only, so the nodes would run jumbo frames at the image's MTU."""
    fleet = cluster.fleet
    if isinstance(fleet, TrainingFleet) and fleet.jumbo_frames and not erdma_for(
            fleet, cluster.gpu_types):
        yield _finding("jumbo-frames-without-erdma", "ERROR", "fleet.jumbo_frames",
                       "jumbo frames set the eRDMA MTU (8500), but this fleet has no eRDMA "
                       f"(fleet.erdma {fleet.erdma} on {fleet.instance_type}); turn eRDMA on "
                       "or jumbo_frames off")


def reserved_capacity_unused(cluster: FleetCluster) -> Iterable[Finding]:
    """Reserved capacity the fleet cannot use: reserved instances and capacity guarantees
    cover on-demand instances of the fleet's type, so spot nodes never draw on them (ERROR in
    prod, the guarded environments; WARNING elsewhere), and more than the fleet runs is paid
    for idle (WARNING here, which cannot tell a reservation bought now from one a scale-in
    left too large; the plan's `reserved-capacity-excess` policy rule, which knows the base,
    refuses buying or growing it)."""
    fleet = cluster.fleet
    reserved = fleet.reserved
    if reserved is None:
        return
    if isinstance(fleet, TrainingFleet):
        runs, on_demand = fleet.nodes, 0 if fleet.capacity == "spot" else fleet.nodes
        what = f"{fleet.nodes} {fleet.capacity} node(s)"
    else:
        runs = fleet.max_size
        on_demand = runs if not fleet.uses_spot else fleet.on_demand_base_capacity
        what = (f"at most {fleet.max_size} node(s), {fleet.on_demand_base_capacity} on-demand "
                "base")
    for path, entry in (("fleet.reserved.reserved_instances", reserved.reserved_instances),
                        ("fleet.reserved.guarantee", reserved.guarantee)):
        if entry is None:
            continue
        if entry.count > on_demand:
            spot = entry.count <= runs
            why = (f"{entry.count} reserved for {what}: spot nodes never use it" if spot else
                   f"{entry.count} reserved, more than the {runs} node(s) the fleet runs")
            level = "ERROR" if spot and cluster.profile.guard_changes else "WARNING"
            yield _finding("reserved-capacity-unused", level, f"{path}.count",
                           f"{why}; the unused part is paid for its whole term (reserved "
                           "instances and elasticity assurances are non-refundable); reserve "
                           "at most the on-demand nodes, or drop the section")


COMPUTE_VALIDATORS = (unknown_instance_type, erdma_unsupported, jumbo_frames_without_erdma,
                      low_latency_placement, multi_node_interconnect, low_vcpu_per_gpu,
                      spot_non_interruptible, not_offered_in_region, restricted_family,
                      disk_too_large, no_rolling_refresh, reserved_capacity_unused)
"""The compute validators, in report order."""
