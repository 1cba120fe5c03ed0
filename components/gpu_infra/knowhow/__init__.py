"""Named validators: GPU know-how applied to a valid cluster config before anything is built.

Each finding has a stable validator name and a level (findings.py); WARNING and INFO can be
silenced per stack under `suppress:`. The validators live by concern (general, compute); this
module is their one registry.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpu_infra.knowhow.compute import COMPUTE_VALIDATORS
from gpu_infra.knowhow.findings import Finding, Level, Validator
from gpu_infra.knowhow.general import GENERAL_VALIDATORS
from gpu_infra.schema import ClusterConfig

VALIDATORS: tuple[Validator, ...] = (*GENERAL_VALIDATORS, *COMPUTE_VALIDATORS)
"""Every validator, in the order findings are reported."""


def run_validators(stack: ClusterConfig,
                   validators: Iterable[Validator] = VALIDATORS) -> list[Finding]:
    """All findings for `stack`, minus suppressed WARNING/INFO ones (ERRORs always stay)."""
    suppressed = set(stack.suppress)
    return [finding for validator in validators for finding in validator(stack)
            if finding.level is Level.ERROR or finding.validator not in suppressed]


def errors_in(findings: Iterable[Finding]) -> list[Finding]:
    """The ERROR findings."""
    return [finding for finding in findings if finding.level is Level.ERROR]


__all__ = ["VALIDATORS", "Finding", "Level", "Validator", "errors_in", "run_validators"]
