"""A render farm: a spot-heavy auto-scaling fleet of graphics instances scaled on queue length."""

from __future__ import annotations

from .base import LayoutBase


class RenderFarm(LayoutBase):
    """A render farm: a spot-heavy auto-scaling fleet of graphics instances."""

    TYPE = "gpu-infra:layouts:RenderFarm"
