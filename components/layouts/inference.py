"""An online inference service: an auto-scaling GPU fleet across zones behind a load balancer."""

from __future__ import annotations

from .base import LayoutBase


class InferenceService(LayoutBase):
    """An online inference service: an auto-scaling GPU fleet behind a load balancer."""

    TYPE = "gpu-infra:layouts:InferenceService"
