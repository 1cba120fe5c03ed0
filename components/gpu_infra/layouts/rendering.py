"""A render farm: a spot-heavy auto-scaling fleet of graphics instances."""

from __future__ import annotations

from gpu_infra.layouts.scaling import ScalingLayout
from gpu_infra.schema import RenderingConfig


class RenderFarm(ScalingLayout):
    """A spot-heavy scaling fleet of graphics (vws) instances, scaled on a job-queue-length
    custom metric and down to zero when idle (`fleet.queue_scaling`, `fleet.min_size: 0`),
    NAS for assets and an output bucket with lifecycle tiers (LayoutBase)."""

    TYPE = "gpu-infra:layouts:RenderFarm"
    CONFIG = RenderingConfig
    cluster: RenderingConfig


__all__ = ["RenderFarm"]
