"""The `load_balancer` section of an inference stack: what fronts the scaling fleet."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpu_infra.schema.base import StrictModel
from gpu_infra_facts.load_balancers import CERTIFICATE_ID, DEFAULT_TLS_POLICY, TlsPolicy

HEALTH_CHECK_PATH_PATTERN = r"^/[A-Za-z0-9\-/.%?#&=_;~!()*\[\]@$^:',+]{0,79}$"
"""nlb/alb health check path: 1-80 characters from this set, starting with `/`."""


class ListenerTls(StrictModel):
    """TLS on the load balancer's listeners: an NLB listens TCPSSL, an ALB HTTPS, with the
    certificate and TLS policy given; the fleet behind still gets plain TCP/HTTP."""

    certificate_id: str = Field(pattern=CERTIFICATE_ID.pattern)
    """The server certificate's id in Certificate Management Service (e.g.
    12345678-cn-hangzhou). Required."""
    policy: TlsPolicy = DEFAULT_TLS_POLICY
    """The listener's TLS security policy. Default tls_cipher_policy_1_2_strict_with_1_3
    (TLS 1.2 and 1.3, strong ciphers); the provider's default would be
    tls_cipher_policy_1_0."""


class LoadBalancerConfig(StrictModel):
    """A load balancer across the fleet's zones, one listener per `security.service_ports`,
    reachable only from `security.client_cidrs`."""

    kind: Literal["nlb", "alb"] = "nlb"
    """nlb (TCP, Network Load Balancer) or alb (HTTP, Application Load Balancer).
    Default nlb."""
    internet_facing: bool = False
    """Give the load balancer a public address. Default false (intranet only). Public
    listeners need `tls` to pass the policy pack's tls-on-public-listeners rule."""
    tls: ListenerTls | None = None
    """Terminate TLS on every listener with this certificate. Default none (plain TCP for an
    NLB, HTTP for an ALB)."""
    access_logs: bool | None = None
    """ALB only: write the load balancer's access logs to an `alb-access` store of the
    stack's log project (`logs`). Default: where the environment keeps access logs (prod,
    whose `prod-access-logs` policy rule demands them), else off."""
    health_check_path: str | None = Field(default=None, pattern=HEALTH_CHECK_PATH_PATTERN)
    """HTTP path checked on each backend, e.g. /v2/health/ready: 1-80 URL characters
    starting with `/`. Default none: a TCP connect check on the service port."""
