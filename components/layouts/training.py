"""A training cluster: fixed GPU nodes close together in one zone."""

from __future__ import annotations

from .base import LayoutBase


class TrainingCluster(LayoutBase):
    """A training cluster: fixed GPU nodes close together in one zone."""

    TYPE = "gpu-infra:layouts:TrainingCluster"
