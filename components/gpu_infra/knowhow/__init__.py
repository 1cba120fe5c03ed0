"""Named validators: GPU know-how applied to a valid cluster config before anything is built.

Each finding has a stable validator name and a level (findings.py); WARNING and INFO can be
silenced per stack under `suppress:`. The validators live by concern (general, compute,
node_software); this module is their one registry.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpu_infra.knowhow.compute import COMPUTE_VALIDATORS
from gpu_infra.knowhow.findings import Finding, ImageValidator, Level, Validator
from gpu_infra.knowhow.general import GENERAL_VALIDATORS
from gpu_infra.knowhow.image import IMAGE_VALIDATORS
from gpu_infra.knowhow.node_software import NODE_SOFTWARE_VALIDATORS
from gpu_infra.schema import ClusterConfig, ImageConfig

VALIDATORS: tuple[Validator, ...] = (*GENERAL_VALIDATORS, *COMPUTE_VALIDATORS,
                                     *NODE_SOFTWARE_VALIDATORS)
"""Every validator of a fleet stack, in the order findings are reported."""


ECS_ONLY: frozenset[str] = frozenset({"no-rolling-refresh", "preinstalled-on-public-image"})
"""Validators about what gpu-infra's own nodes do (ESS refreshes, the driver on the image),
which ACK does itself: not run for `platform: ack`."""


def validator_name(validator: Validator | ImageValidator) -> str:
    """The name findings carry and `suppress:` lists: the function's, with hyphens."""
    return validator.__name__.replace("_", "-")


VALIDATOR_NAMES: frozenset[str] = frozenset(
    [validator_name(v) for v in VALIDATORS] + [validator_name(v) for v in IMAGE_VALIDATORS])


def unknown_suppress(cluster: ClusterConfig) -> Iterable[Finding]:
    """ERROR: a name under `suppress:` that is no validator (a typo would silence nothing)."""
    for index, name in enumerate(cluster.suppress):
        if name not in VALIDATOR_NAMES:
            yield Finding("unknown-suppress", Level.ERROR, f"suppress[{index}]",
                          f"{name!r} is not a validator name; known: "
                          f"{', '.join(sorted(VALIDATOR_NAMES))}")


def judge(cluster: ClusterConfig) -> list[Finding]:
    """Every finding of the validators for `cluster`'s kind: an image-baking stack has no
    fleet, so IMAGE_VALIDATORS judge it."""
    if isinstance(cluster, ImageConfig):
        return [finding for validator in IMAGE_VALIDATORS for finding in validator(cluster)]
    on_ack = getattr(cluster, "platform", "ecs") == "ack"
    return [finding for validator in VALIDATORS
            if not (on_ack and validator_name(validator) in ECS_ONLY)
            for finding in validator(cluster)]


def run_validators(cluster: ClusterConfig) -> list[Finding]:
    """All findings for `cluster`, minus suppressed WARNING/INFO ones (ERRORs always stay),
    plus an ERROR for every unknown name under `suppress:`."""
    suppressed = set(cluster.suppress)
    found = [finding for finding in judge(cluster)
             if finding.level is Level.ERROR or finding.validator not in suppressed]
    return [*unknown_suppress(cluster), *found]


def errors_in(findings: Iterable[Finding]) -> list[Finding]:
    """The ERROR findings."""
    return [finding for finding in findings if finding.level is Level.ERROR]


__all__ = ["VALIDATORS", "VALIDATOR_NAMES", "Finding", "Level", "Validator", "errors_in",
           "run_validators", "validator_name"]
