"""Layouts: ComponentResources that compose the building blocks for one kind of cluster.

A layout knows nothing of YAML: it takes a validated ClusterConfig.
"""

from __future__ import annotations

import pulumi

from gpu_infra.layouts.base import LayoutBase
from gpu_infra.layouts.inference import InferenceService
from gpu_infra.layouts.rendering import RenderFarm
from gpu_infra.layouts.training import TrainingCluster
from gpu_infra.schema import ClusterConfig, InferenceConfig, RenderingConfig, TrainingConfig

LAYOUT_CLASSES: dict[type, type[LayoutBase]] = {
    TrainingConfig: TrainingCluster, InferenceConfig: InferenceService, RenderingConfig: RenderFarm}


def build_layout(cluster: ClusterConfig, stack_name: str) -> LayoutBase:
    """Build the layout the cluster's `layout` names, named after the cluster."""
    return LAYOUT_CLASSES[type(cluster)](cluster.name, config=cluster, stack_name=stack_name,
                                         project=pulumi.get_project())


__all__ = ["InferenceService", "LayoutBase", "RenderFarm", "TrainingCluster", "build_layout"]
