"""The `fleet` section: which GPU instances run the workload, and how many."""

from __future__ import annotations

from pydantic import Field, model_validator

from .base import StrictModel

InstanceType = str
"""An ECS instance type such as ecs.gn7i-c8g1.2xlarge."""
INSTANCE_TYPE_PATTERN = r"^ecs\.[a-z0-9-]+\.[a-z0-9]+$"


class TrainingFleet(StrictModel):
    """Fixed GPU nodes for training."""

    instance_type: InstanceType = Field(pattern=INSTANCE_TYPE_PATTERN)
    """ECS GPU instance type of every node, e.g. ecs.gn8v-8x.48xlarge. Required."""
    nodes: int = Field(default=1, ge=1, le=2000)
    """Number of nodes. Default 1."""


class ScalingFleet(StrictModel):
    """An auto-scaling GPU fleet (inference, rendering)."""

    instance_types: list[InstanceType] = Field(min_length=1, max_length=10)
    """Instance types the group may launch, in order of preference (each one is a spot
    pool). Required; at most 10 (ESS limit)."""
    min_size: int = Field(default=0, ge=0, le=2000)
    """Fewest instances. Default 0."""
    max_size: int = Field(default=4, ge=0, le=2000)
    """Most instances. Default 4."""

    @model_validator(mode="after")
    def _check_sizes(self) -> ScalingFleet:
        if self.min_size > self.max_size:
            raise ValueError(f"min_size {self.min_size} is above max_size {self.max_size}")
        return self
