"""The `security` section: who may reach the nodes, login key, encryption key."""

from __future__ import annotations

import re
from collections import Counter

from pydantic import Field, field_validator, model_validator

from gpu_infra.schema.base import Cidr, Port, StrictModel
from gpu_infra_facts.addresses import world_open
from gpu_infra_facts.allowed import (
    KMS_DEFAULT_KEY_ROTATION_DAYS,
    KMS_PENDING_WINDOW_DAYS,
    KMS_ROTATION_DAYS,
)

PUBLIC_KEY_TYPES = ("ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384",
                    "ecdsa-sha2-nistp521")
"""OpenSSH key types ECS key pairs import."""
BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
WORLD_CHECKED_FIELDS = ("admin_cidrs", "client_cidrs")
"""The source CIDR lists judged for world-open access."""


class SecurityConfig(StrictModel):
    """Least-privilege access. Members of the cluster's security group always reach each
    other (NCCL, eRDMA, NFS); nothing else is open unless listed here."""

    public_key: str | None = None
    """OpenSSH public key for the nodes' key pair. Default none: no key pair, and password
    login is never configured."""
    admin_cidrs: list[Cidr] = []
    """CIDRs allowed to SSH (tcp/22) to the nodes, each listed once. Default none. In prod,
    refused if together they cover more public address space than a /8 (0.0.0.0/0, its
    two halves, a /1, a /4, ...)."""
    service_ports: list[Port] = []
    """TCP ports the workload serves on, each listed once, opened only to `client_cidrs`
    (and to the load balancer of layouts that have one). Default none."""
    client_cidrs: list[Cidr] = []
    """CIDRs allowed to reach `service_ports`, each listed once. Default none. In prod,
    refused if together they cover more public address space than a /8."""
    kms_encryption: bool | None = None
    """Create a KMS key (automatic rotation on) for disks and buckets. Default: on in prod,
    off elsewhere (service-managed keys are used then)."""
    kms_instance_id: str | None = Field(default=None, pattern=r"^kst-[a-z0-9]+$")
    """A software key management instance (kst-...) to create the key in. Default none: a
    default key of the region, which rotates every 365 days."""
    kms_rotation_days: int = Field(default=KMS_DEFAULT_KEY_ROTATION_DAYS,
                                   ge=KMS_ROTATION_DAYS[0], le=KMS_ROTATION_DAYS[1])
    """Automatic rotation period of the KMS key in days. Default 365; 7 to 365 with
    `kms_instance_id`, only 365 without it."""
    kms_pending_window_days: int = Field(default=30, ge=KMS_PENDING_WINDOW_DAYS[0],
                                         le=KMS_PENDING_WINDOW_DAYS[1])
    """Days a deleted KMS key can still be recovered. Default 30; 7 to 366."""

    def world_open_fields(self) -> list[tuple[str, str]]:
        """(field, why) for each CIDR list that is open to the world, judged by address
        space (gpu_infra_facts.addresses.world_open, the policy pack's judgement)."""
        found = []
        for field in WORLD_CHECKED_FIELDS:
            cidrs = getattr(self, field)
            reason = world_open(cidrs)
            if reason:
                found.append((field, f"{', '.join(map(str, cidrs))} {reason}"))
        return found

    @field_validator("public_key")
    @classmethod
    def _openssh_key(cls, key: str | None) -> str | None:
        if key is None:
            return key
        kind, _, rest = key.strip().partition(" ")
        body = rest.split(" ")[0]
        if kind not in PUBLIC_KEY_TYPES or not body:
            raise ValueError("not an OpenSSH public key; expected `<type> <base64> [comment]`"
                             f" with type one of {', '.join(PUBLIC_KEY_TYPES)}")
        if not BASE64.match(body):
            raise ValueError("the key body after the type is not base64")
        return key.strip()

    @model_validator(mode="after")
    def _check_across_fields(self) -> SecurityConfig:
        problems = [f"{field}: {value} is listed {count} times; list it once"
                    for field in ("admin_cidrs", "service_ports", "client_cidrs")
                    for value, count in Counter(getattr(self, field)).items() if count > 1]
        if (self.kms_rotation_days != KMS_DEFAULT_KEY_ROTATION_DAYS
                and self.kms_instance_id is None):
            problems.append(f"kms_rotation_days: {self.kms_rotation_days} needs kms_instance_id;"
                            " a default KMS key rotates every "
                            f"{KMS_DEFAULT_KEY_ROTATION_DAYS} days only")
        if problems:
            raise ValueError("\n".join(problems))
        return self
