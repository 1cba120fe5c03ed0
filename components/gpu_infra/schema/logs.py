"""The `logs` section: node logs in Simple Log Service (SLS).

Bounds from the provider: log.Store retention_period 1-3650 days (3650 keeps data forever;
SDK docstring of pulumi-alicloud 4.0.0)."""

from __future__ import annotations

from pydantic import Field

from gpu_infra.schema.base import StrictModel

RETENTION_DAYS = (1, 3650)
"""log.Store retention_period bounds (3650: kept forever)."""


class LogsConfig(StrictModel):
    """Where the nodes' logs go: an SLS project of the stack with a `bootstrap` store (the
    bootstrap log) and a `system` store (the systemd journal, kernel messages included),
    shipped by LoongCollector on every node."""

    enabled: bool = True
    """Create the project and ship the nodes' logs. Default true."""
    retention_days: int | None = Field(default=None, ge=RETENTION_DAYS[0],
                                       le=RETENTION_DAYS[1])
    """Days the stores keep logs (1-3650; 3650 keeps them forever). Default: the
    environment's profile (7 in dev and staging, 180 in prod)."""
