"""Layouts: ComponentResources that compose the building blocks for one kind of cluster.

A layout knows nothing of YAML: it takes a validated ClusterConfig and judges it with the
named validators before it builds anything (layouts.judgement). Each layout is a Layout
subclass (LayoutBase for the fleet layouts) in a module of this package that names its config
model as CONFIG and its PLATFORM (ecs unless it says ack); nothing here lists them
(schema.registry is the one registry of layouts).
"""

from __future__ import annotations

import importlib
import pkgutil

import pulumi

from gpu_infra.layouts.ack import AckInferenceService, AckTrainingCluster
from gpu_infra.layouts.base import Layout, LayoutBase
from gpu_infra.layouts.image import ImageBakery
from gpu_infra.layouts.inference import InferenceService
from gpu_infra.layouts.judgement import LayoutConfigError
from gpu_infra.layouts.rendering import RenderFarm
from gpu_infra.layouts.training import TrainingCluster
from gpu_infra.schema import ClusterCommon, ClusterConfig


def _subclasses(base: type[Layout]) -> list[type[Layout]]:
    return [found for child in base.__subclasses__() for found in (child, *_subclasses(child))]


LayoutKey = tuple[type[ClusterCommon], str]
"""(config model, platform) a layout class builds."""


def find_layout_classes() -> dict[LayoutKey, list[type[Layout]]]:
    """(Config model, platform) -> the Layout subclasses of this package's modules that
    declare them as their CONFIG and PLATFORM (each module imported first)."""
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    found: dict[LayoutKey, list[type[Layout]]] = {}
    for layout in _subclasses(Layout):
        config = vars(layout).get("CONFIG")
        if config is not None:
            found.setdefault((config, layout.PLATFORM), []).append(layout)
    return found


LAYOUT_CLASSES: dict[LayoutKey, type[Layout]] = {
    key: classes[0] for key, classes in find_layout_classes().items()}
"""(Config model, platform) -> its layout (tests/test_layout_registry.py: exactly one per
registered layout and platform)."""


def layout_class(cluster: ClusterCommon) -> type[Layout]:
    """The layout that builds `cluster` on its platform (ecs unless it says ack)."""
    return LAYOUT_CLASSES[(type(cluster), getattr(cluster, "platform", "ecs"))]


def build_layout(cluster: ClusterConfig, stack_name: str) -> Layout:
    """Build the layout the cluster's `layout` and `platform` name, named after the
    cluster."""
    return layout_class(cluster)(cluster.name, config=cluster, stack_name=stack_name,
                                 project=pulumi.get_project())


__all__ = ["LAYOUT_CLASSES", "AckInferenceService", "AckTrainingCluster", "ImageBakery",
           "InferenceService", "Layout", "LayoutBase", "LayoutConfigError", "RenderFarm",
           "TrainingCluster", "build_layout", "find_layout_classes", "layout_class"]
