"""Named validators: GPU know-how applied to a valid stack config before anything is built.

Modelled on AWS ParallelCluster: each finding has a stable validator name and a level.
ERROR stops `validate`, `plan` and `pulumi up`; WARNING and INFO are printed and can be
silenced per stack by listing the validator's name under `suppress:`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum

from .compute.validators import COMPUTE_VALIDATORS
from .config import StackConfig


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


Validator = Callable[[StackConfig], Iterable[Finding]]


def no_internet_egress(stack: StackConfig) -> Iterable[Finding]:
    """Nodes have no public IP: without a NAT gateway they cannot pull images, drivers,
    packages or datasets from the internet."""
    if not stack.network.nat_gateway and not stack.network.existing_vpc_id:
        yield Finding("no-internet-egress", Level.WARNING, "network.nat_gateway",
                      "nodes get no public IP and no NAT gateway: they cannot reach the "
                      "internet (drivers, images, packages); fine only with private mirrors")


def prod_without_kms(stack: StackConfig) -> Iterable[Finding]:
    """Prod data should be encrypted with a customer key."""
    if stack.is_prod and not stack.kms_encryption:
        yield Finding("prod-without-kms", Level.WARNING, "security.kms_encryption",
                      "prod disks and buckets fall back to service-managed keys; "
                      "leave kms_encryption unset or true")


VALIDATORS: tuple[Validator, ...] = (no_internet_egress, prod_without_kms,
                                     *COMPUTE_VALIDATORS)
"""Every validator, in the order findings are reported."""


def run_validators(stack: StackConfig,
                   validators: Iterable[Validator] = VALIDATORS) -> list[Finding]:
    """All findings for `stack`, minus suppressed WARNING/INFO ones (ERRORs always stay)."""
    suppressed = set(stack.suppress)
    return [finding for validator in validators for finding in validator(stack)
            if finding.level is Level.ERROR or finding.validator not in suppressed]


def errors_in(findings: Iterable[Finding]) -> list[Finding]:
    """The ERROR findings."""
    return [finding for finding in findings if finding.level is Level.ERROR]
