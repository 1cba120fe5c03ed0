"""NLB and ALB limits the stack's load balancer must fit: zones and names.

Sources: pulumi-alicloud 4.x docstrings of nlb.LoadBalancer and alb.LoadBalancer
(`zone_mappings`); NLB "Performance and usage limits" (alibabacloud.com/help/en/slb/
network-load-balancer/product-overview/restrictions-on-use, updated 2026-02-12).
"""

from __future__ import annotations

import re

ZONES_RANGE = (2, 10)
"""An NLB or ALB takes at least two zone mappings, one vSwitch per zone; an NLB at most ten
(the ALB maximum is not documented in the SDK, ten is assumed)."""
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{1,127}$")
"""NLB, ALB and server group names: 2-128 characters, starting with a letter."""
