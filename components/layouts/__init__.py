"""Layouts: ComponentResources that compose the building blocks for one kind of cluster.

A layout knows nothing of YAML: it takes a validated StackConfig.
"""

from __future__ import annotations

import pulumi

from ..config import InferenceStack, RenderingStack, StackConfig, TrainingStack
from .base import LayoutBase
from .inference import InferenceService
from .rendering import RenderFarm
from .training import TrainingCluster

LAYOUT_CLASSES: dict[type, type[LayoutBase]] = {
    TrainingStack: TrainingCluster, InferenceStack: InferenceService, RenderingStack: RenderFarm}


def build_layout(stack: StackConfig, stack_name: str) -> LayoutBase:
    """Build the layout the stack's `layout` names."""
    return LAYOUT_CLASSES[type(stack)](stack.name, stack=stack, stack_name=stack_name,
                                       project=pulumi.get_project())


__all__ = ["InferenceService", "LayoutBase", "RenderFarm", "TrainingCluster", "build_layout"]
