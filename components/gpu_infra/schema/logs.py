"""The `logs` section: node logs in Simple Log Service (SLS); the provider's bounds are in
gpu_infra_facts.allowed (LOG_RETENTION_DAYS)."""

from __future__ import annotations

from pydantic import Field

from gpu_infra.schema.base import StrictModel
from gpu_infra_facts.allowed import LOG_RETENTION_DAYS


class LogsConfig(StrictModel):
    """Where the nodes' logs go: an SLS project of the stack with a `bootstrap` store (the
    bootstrap log) and a `system` store (the systemd journal, kernel messages included),
    shipped by LoongCollector on every node."""

    enabled: bool = True
    """Create the project and ship the nodes' logs. Default true."""
    retention_days: int | None = Field(default=None, ge=LOG_RETENTION_DAYS[0],
                                       le=LOG_RETENTION_DAYS[1])
    """Days the stores keep logs (1-3650; 3650 keeps them forever). Default: the
    environment's profile (7 in dev and staging, 180 in prod)."""
