"""The environment profile: what each environment (dev, staging, prod) turns on.

One place for every decision taken by environment: the schema's defaults and refusals, the
layouts' protection, encryption, versioning and snapshots, the validators, the change
report's guard rails and what the policy rules demand (passed to gpu_infra_policies, which
cannot import this). Nothing else compares an environment's name. The documentation's
environments table is generated from PROFILES (tests/test_docs.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from gpu_infra_facts.workload import Demand

Environment = Literal["dev", "staging", "prod"]
"""Deployment environment of a stack; its profile decides what is turned on."""
DEFAULT_ENVIRONMENT: Environment = "dev"
"""A stack's environment when it names none."""


def _row(text: str) -> Any:
    """A required profile field, described by its row of the environments table."""
    return field(metadata={"row": text})


@dataclass(frozen=True)
class EnvironmentProfile:
    """What one environment turns on (and how long it keeps logs); each field is a row of
    the environments table (docs/environments.md)."""

    deletion_protection: bool = _row(
        "Deletion protection (instances, groups, NAT, EIP, LB, KMS)")
    protect_data: bool = _row(
        "Pulumi `protect` on data (buckets, file systems, kept disks; nodes with kept inline "
        "disks)")
    kms_encryption: bool = _row(
        "KMS key for disks and buckets (default of `security.kms_encryption`)")
    kms_required: bool = _row(
        "KMS key required (`security.kms_encryption: false` is the `prod-without-kms` ERROR; "
        "`disks-encrypted` demands the key)")
    version_every_bucket: bool = _row(
        "Every bucket versioned, the access-log bucket too (checkpoints and models always are)")
    snapshots: bool = _row("Auto-snapshot policy for kept disks")
    refuse_world_open: bool = _row(
        "World-open `admin_cidrs` / `client_cidrs` (more public space than a /8 together: "
        "0.0.0.0/0, its halves, a /1, a /4 ...) refused; off: the `world-open-cidrs` warning. "
        "ACK: `ack.public_api` refused (off: allowed, and `ack-private-api-endpoint` is "
        "advisory)")
    bucket_logging: bool = _row(
        "Bucket access logs to a `<prefix>-logs` bucket (default of "
        "`storage.buckets.logging`)")
    guard_changes: bool = _row(
        "Change report: destroying GPU nodes or data, or rebuying reserved capacity, is an "
        "ERROR, and so is reserving capacity only spot nodes would use "
        "(`reserved-capacity-unused`) (off: WARNINGs)")
    backup: bool = _row(
        "Cloud Backup (HBR) of the shared file system (default of `storage.backup.enabled`)")
    log_retention_days: int = _row(
        "Days the SLS log stores keep node logs (default of `logs.retention_days`)")
    control_plane_logs: bool = _row(
        "ACK: control-plane and audit logs to SLS (default of `ack.control_plane_logs`)")
    enterprise_registry: bool = _row(
        "An ACR Enterprise instance (default of `registry.edition`; off: a namespace "
        "on the personal edition)")

    @property
    def demands(self) -> frozenset[Demand]:
        """What the policy rules demand of this environment's resources."""
        wanted: dict[Demand, bool] = {
            "protected": self.protect_data, "versioned": self.version_every_bucket,
            "snapshots": self.snapshots, "access_logs": self.bucket_logging,
            "kms_key": self.kms_required, "deletion_protection": self.deletion_protection,
            "private_api": self.refuse_world_open}
        return frozenset(demand for demand, on in wanted.items() if on)


RELAXED = EnvironmentProfile(
    deletion_protection=False, protect_data=False, kms_encryption=False, kms_required=False,
    version_every_bucket=False, snapshots=False, refuse_world_open=False,
    bucket_logging=False, guard_changes=False, backup=False,
    log_retention_days=7, control_plane_logs=False, enterprise_registry=False)
"""Nothing beyond what every environment gets: room to build, break and rebuild."""
PRODUCTION = EnvironmentProfile(
    deletion_protection=True, protect_data=True, kms_encryption=True, kms_required=True,
    version_every_bucket=True, snapshots=True, refuse_world_open=True,
    bucket_logging=True, guard_changes=True, backup=True,
    log_retention_days=180, control_plane_logs=True, enterprise_registry=True)
"""Everything on: data and nodes are hard to lose and hard to reach."""

PROFILES: dict[str, EnvironmentProfile] = {"dev": RELAXED, "staging": RELAXED,
                                           "prod": PRODUCTION}
"""Environment -> its profile, one per value of Environment."""
UNKNOWN_PROFILE = PRODUCTION
"""What an environment not in PROFILES gets (the schema refuses one; a resource tagged with
another name, e.g. `production`, reaches the policy rules): everything on, so a misspelt
name never switches protection off."""


def profile_for(environment: str) -> EnvironmentProfile:
    """The profile of `environment` (UNKNOWN_PROFILE for a name PROFILES does not know)."""
    return PROFILES.get(environment, UNKNOWN_PROFILE)


def environments_where(setting: Callable[[EnvironmentProfile], bool]) -> list[str]:
    """The environments whose profile turns `setting` on (e.g.
    `lambda profile: profile.refuse_world_open`), in PROFILES order: what a message says
    the profile does."""
    return [name for name, profile in PROFILES.items() if setting(profile)]


def policy_demands(environment: str) -> frozenset[Demand]:
    """What the policy rules demand in `environment`: the lookup their Context takes."""
    return profile_for(environment).demands


def _cell(value: bool | int) -> str:
    """A switch as on/off, a number as itself."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def profile_table() -> str:
    """The environments table (docs/environments.md): one row per profile field, one column per
    environment."""
    names = list(PROFILES)
    lines = [f"| | {' | '.join(names)} |", f"|---{'|---' * len(names)}|"]
    for item in fields(EnvironmentProfile):
        row = item.metadata["row"]
        cells = [_cell(getattr(PROFILES[name], item.name)) for name in names]
        lines.append(f"| {row} | {' | '.join(cells)} |")
    return "\n".join(lines) + "\n"

