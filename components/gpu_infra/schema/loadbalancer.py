"""The `load_balancer` section of an inference stack: what fronts the scaling fleet."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpu_infra.schema.base import StrictModel

HEALTH_CHECK_PATH_PATTERN = r"^/[A-Za-z0-9\-/.%?#&=_;~!()*\[\]@$^:',+]{0,79}$"
"""nlb/alb health check path: 1-80 characters from this set, starting with `/`."""


class LoadBalancerConfig(StrictModel):
    """A load balancer across the fleet's zones, one listener per `security.service_ports`,
    reachable only from `security.client_cidrs`."""

    kind: Literal["nlb", "alb"] = "nlb"
    """nlb (TCP, Network Load Balancer) or alb (HTTP, Application Load Balancer).
    Default nlb."""
    internet_facing: bool = False
    """Give the load balancer a public address. Default false (intranet only)."""
    health_check_path: str | None = Field(default=None, pattern=HEALTH_CHECK_PATH_PATTERN)
    """HTTP path checked on each backend, e.g. /v2/health/ready: 1-80 URL characters
    starting with `/`. Default none: a TCP connect check on the service port."""
