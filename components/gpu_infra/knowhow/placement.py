"""Where and how training nodes talk: eRDMA and deployment-set strategy from the catalog."""

from __future__ import annotations

from gpu_infra import catalog
from gpu_infra.schema.compute import TrainingFleet
from gpu_infra_facts.allowed import DeploymentSetStrategy


def erdma_for(fleet: TrainingFleet, gpu_types: catalog.Lookup) -> bool:
    """eRDMA on: `on`, or `auto` on a type `gpu_types` says supports it."""
    entry = gpu_types.get(fleet.instance_type)
    return fleet.erdma == "on" or (fleet.erdma == "auto" and bool(entry and entry.erdma))


def placement_for(fleet: TrainingFleet, gpu_types: catalog.Lookup) -> DeploymentSetStrategy:
    """LowLatency for several nodes of a type that supports it (or when asked),
    Availability otherwise."""
    if fleet.placement != "auto":
        return fleet.placement
    entry = gpu_types.get(fleet.instance_type)
    return "LowLatency" if fleet.nodes > 1 and entry and entry.low_latency else "Availability"
