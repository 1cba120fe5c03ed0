"""NLB and ALB limits the stack's load balancer must fit: zones, names, listeners, TLS.

Sources: pulumi-alicloud 4.x docstrings of nlb.LoadBalancer and alb.LoadBalancer
(`zone_mappings`), nlb.Listener and alb.Listener (`certificate_ids`, `security_policy_id`);
NLB "Performance and usage limits" (alibabacloud.com/help/en/slb/network-load-balancer/
product-overview/restrictions-on-use, updated 2026-02-12) and NLB quotas (quota
nlb_quota_loadbalancer_listeners_num, read 2026-12-01).
"""

from __future__ import annotations

import re
from typing import Literal, get_args

ZONES_RANGE = (2, 10)
"""An NLB or ALB takes at least two zone mappings, one vSwitch per zone; an NLB at most ten
(the ALB maximum is not documented in the SDK, ten is assumed)."""
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{1,127}$")
"""NLB, ALB and server group names: 2-128 characters, starting with a letter."""
MAX_LISTENERS = 50
"""Listeners one NLB takes by default (nlb_quota_loadbalancer_listeners_num, adjustable in
Quota Center); the same default is assumed for an ALB (UNCONFIRMED). One listener per
service port."""
TlsPolicy = Literal["tls_cipher_policy_1_0", "tls_cipher_policy_1_1", "tls_cipher_policy_1_2",
                    "tls_cipher_policy_1_2_strict", "tls_cipher_policy_1_2_strict_with_1_3"]
"""System TLS security policies of a listener (`security_policy_id`: the nlb.Listener
docstring's valid values; ALB's system policies have the same names)."""
TLS_POLICIES = get_args(TlsPolicy)
DEFAULT_TLS_POLICY: TlsPolicy = "tls_cipher_policy_1_2_strict_with_1_3"
"""TLS 1.2 and 1.3 with strong ciphers only (the provider's default is tls_cipher_policy_1_0)."""
CERTIFICATE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
"""A Certificate Management Service certificate id as listeners take it (nlb.Listener
`certificate_ids`, alb.Listener `certificates.certificate_id`), e.g. 12345678-cn-hangzhou."""
NLB_TLS_PROTOCOL = "TCPSSL"
ALB_TLS_PROTOCOL = "HTTPS"
"""Listener protocols that terminate TLS on the load balancer (nlb.Listener and alb.Listener
`listener_protocol`)."""
