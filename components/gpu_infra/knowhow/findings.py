"""Findings: what a named validator says about one field, at a level.

Modelled on AWS ParallelCluster: each finding has a stable validator name and a level.
ERROR stops `validate`, `plan` and `pulumi up`; WARNING and INFO are printed and can be
silenced per stack by listing the validator's name under `suppress:`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum

from gpu_infra.schema import FleetCluster, ImageConfig


class Level(str, Enum):
    """How serious a finding is."""

    ERROR = "ERROR"
    WARNING = "WARNING"
    INFO = "INFO"


@dataclass(frozen=True)
class Finding:
    """One validator's verdict on one field."""

    validator: str
    level: Level
    path: str
    """Dotted field path under gpu-infra:cluster, e.g. fleet.instance_type."""
    message: str

    def line(self) -> str:
        """`LEVEL name: path: message`."""
        return f"{self.level.value} {self.validator}: {self.path}: {self.message}"


Validator = Callable[[FleetCluster], Iterable[Finding]]
"""A validator of a fleet stack."""
ImageValidator = Callable[[ImageConfig], Iterable[Finding]]
"""A validator of an image-baking stack."""
"""A named validator: a function of the cluster config that yields findings."""
