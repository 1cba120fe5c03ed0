"""The `security` section: who may reach the nodes, login key, encryption key."""

from __future__ import annotations

from pydantic import Field

from .base import Cidr, Port, StrictModel


class SecurityConfig(StrictModel):
    """Least-privilege access. Members of the cluster's security group always reach each
    other (NCCL, eRDMA, NFS); nothing else is open unless listed here."""

    public_key: str | None = Field(
        default=None, pattern=r"^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)) \S+")
    """OpenSSH public key for the nodes' key pair. Default none: no SSH key, and password
    login is never configured."""
    admin_cidrs: list[Cidr] = []
    """CIDRs allowed to SSH (tcp/22) to the nodes. Default none. 0.0.0.0/0 is refused in
    prod."""
    service_ports: list[Port] = []
    """TCP ports the workload serves on, opened only to `client_cidrs`. Default none."""
    client_cidrs: list[Cidr] = []
    """CIDRs allowed to reach `service_ports`. Default none. 0.0.0.0/0 is refused in prod."""
    kms_encryption: bool | None = None
    """Create a KMS key (automatic rotation on) for disks and buckets. Default: on in prod,
    off elsewhere (service-managed keys are used then)."""
