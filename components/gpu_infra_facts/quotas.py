"""Default quotas of the account the stacks must fit (adjustable in Quota Center, so a stack
that needs more says so instead of failing halfway through `pulumi up`).

Sources (read 2026-12-01): ECS "Security group limits" (alibabacloud.com/help/en/ecs/
user-guide/limits, security group rules per security group, default 200; an older FAQ still
says 100); the listener quota of a load balancer is in gpu_infra_facts.load_balancers.
"""

from __future__ import annotations

SECURITY_GROUP_RULES = 200
"""Rules (ingress and egress together) one security group takes by default."""
