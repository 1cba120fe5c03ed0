"""Suggest instance types for a workload: best fit first, then cheapest."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gpu_infra.catalog import InstanceType, Use, entries
from gpu_infra_facts.workload import Placement

OVERSIZED_FACTOR = 2.0
"""GPU memory above this multiple of the need counts as oversized."""
PURCHASE_NOTES = {"sales_only": "sold through Alibaba Cloud sales, in specific regions only",
                  "by_ticket": "sold on application (submit a ticket)",
                  "preview": "in invitational preview: apply by ticket"}
"""The reason a family that is not simply on sale shows (catalog availability)."""
HARD_TO_GET = frozenset({"by_ticket", "preview"})
"""Availabilities that rank a type one step lower: an application may be refused."""


@dataclass(frozen=True)
class Workload:
    """What a kind of cluster asks of an instance type (each layout declares one)."""

    uses: tuple[Use, ...]
    """Catalog uses that serve it: a type fits when it lists one of them."""
    gpus_talk: bool = False
    """The GPUs of a node exchange data (multi-GPU training): without NVLink a type with
    more than one GPU ranks lower. Default false."""
    placement: Placement | None = None
    """How the layout places its nodes: `together` (one zone, a LowLatency deployment set),
    `spread` (several zones, an on-demand base), or None (either). The policy rules
    training-low-latency and inference-multi-zone follow it. Default None."""

    def suits(self, entry: InstanceType) -> bool:
        """Whether `entry` serves this workload (shares a use with it)."""
        return bool(set(entry.uses) & set(self.uses))


@dataclass(frozen=True)
class Recommendation:
    """One suggested instance type for the workload."""

    entry: InstanceType
    nodes: int
    """Instances needed for the GPUs asked for."""
    penalty: int
    """Fit: 0 is a full fit; each shortcoming adds to it."""
    hourly_cny: float | None
    """nodes x indicative price; None when the price is unknown."""
    reasons: list[str] = field(default_factory=list)


def recommend(workload: Workload, gpu_memory_gib_per_gpu: float, total_gpus: int,
              multi_node: bool, region: str) -> list[Recommendation]:
    """Instance types that fit the workload, ranked by fit, then hourly cost (unknown last),
    then fewer nodes.

    A type fits when it serves `workload`, has at least `gpu_memory_gib_per_gpu` per GPU, is
    not known to be missing from `region`, and (unless `multi_node`) holds all GPUs in one
    node. Shortcomings that rank a type lower: multi-node without eRDMA, multi-GPU training
    without NVLink (when the workload's GPUs talk), GPUs left idle, GPU memory above twice the need.
    """
    if gpu_memory_gib_per_gpu <= 0 or total_gpus < 1:
        raise ValueError("gpu memory must be above 0 and total GPUs at least 1")
    found = [_assess(entry, workload, gpu_memory_gib_per_gpu, total_gpus, multi_node, region)
             for entry in entries()
             if workload.suits(entry)
             and entry.gpu_memory_gib >= gpu_memory_gib_per_gpu
             and entry.offered_in(region) is not False
             and (multi_node or entry.gpu_count >= total_gpus)]
    return sorted(found, key=lambda r: (r.penalty, r.hourly_cny is None,
                                        r.hourly_cny or 0.0, r.nodes, r.entry.type))


def _assess(entry: InstanceType, workload: Workload, need_gib: float, total_gpus: int,
            multi_node: bool, region: str) -> Recommendation:
    nodes = math.ceil(total_gpus / entry.gpu_count - 1e-9)
    reasons = [f"{entry.gpu_count_label} x {entry.gpu_model}, {entry.gpu_memory_gib:g} GiB "
               f"per GPU (need {need_gib:g})", f"{nodes} node(s) for {total_gpus} GPU(s)"]
    penalty = 0
    if multi_node and nodes > 1:
        if entry.erdma:
            reasons.append("eRDMA between nodes")
        else:
            penalty += 2
            reasons.append("no eRDMA: traffic between nodes uses TCP")
        if entry.low_latency:
            reasons.append("LowLatency deployment set")
    if workload.gpus_talk and total_gpus > 1:
        if entry.nvlink:
            reasons.append("NVLink between GPUs")
        else:
            penalty += 2
            reasons.append("no NVLink: GPUs talk over PCIe")
    idle = nodes * entry.gpu_count - total_gpus
    if idle > 1e-9:
        penalty += 1
        reasons.append(f"{idle:g} GPU(s) left idle")
    if entry.gpu_memory_gib > OVERSIZED_FACTOR * need_gib:
        penalty += 1
        reasons.append("GPU memory well above the need")
    hourly = None
    if entry.price is None:
        reasons.append("price unknown")
    else:
        hourly = round(nodes * entry.price.cny_per_hour, 2)
        where = "" if entry.price.region == region else f", price from {entry.price.region}"
        reasons.append(f"~{hourly:.2f} CNY/h ({entry.price.date} {entry.price.source}{where})")
    if entry.offered_in(region) is None:
        reasons.append(f"availability in {region} unknown")
    if entry.availability != "open":
        penalty += entry.availability in HARD_TO_GET
        reasons.append(PURCHASE_NOTES[entry.availability])
    if not entry.recommended:
        penalty += 1
        reasons.append("an older family Alibaba no longer recommends")
    if entry.unconfirmed:
        reasons.append(f"UNCONFIRMED: {', '.join(entry.unconfirmed)}")
    return Recommendation(entry, nodes, penalty, hourly, reasons)
