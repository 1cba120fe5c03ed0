"""An online inference service: an auto-scaling GPU fleet behind a load balancer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi

from gpu_infra.blocks.loadbalancer import ServiceLoadBalancer
from gpu_infra.layouts.scaling import ScalingLayout
from gpu_infra.schema import InferenceConfig

ALB_ACCESS_STORE = "alb-access"
"""The store of the stack's log project the ALB writes its access logs to."""


class InferenceService(ScalingLayout):
    """A scaling GPU fleet across at least two zones (on-demand base, spot above it) behind
    an NLB or ALB with one listener and health check per service port (HTTP on the model
    server's readiness path where the stack runs one, `serving`); the fleet's service
    ports open only to the client CIDRs and the load balancer's security group. An ALB
    writes its access logs to ALB_ACCESS_STORE where `alb_access_logs` (prod by default).

    Extra outputs: `load_balancer_dns`.
    """

    TYPE = "gpu-infra:layouts:InferenceService"
    CONFIG = InferenceConfig
    cluster: InferenceConfig
    load_balancer: ServiceLoadBalancer

    def build_entry(self, name: str) -> Sequence[pulumi.Input[str]]:
        """The load balancer; its security group may reach the service ports."""
        security = self.cluster.security
        access_log = self.logs.store(ALB_ACCESS_STORE) \
            if self.logs and self.cluster.alb_access_logs else None
        config = self.cluster.load_balancer.model_copy(
            update={"health_check_path": self.cluster.health_check_path})
        self.load_balancer = ServiceLoadBalancer(
            f"{name}-lb", config=config, vpc_id=self.network.vpc_id,
            vswitch_ids=self.network.vswitch_ids, ports=security.service_ports,
            client_cidrs=security.client_cidrs, conventions=self.conventions,
            access_log=access_log, opts=self.child)
        return [self.load_balancer.security_group_id]

    def build_fleet(self, name: str) -> tuple[str, None]:
        """The scaling group, registered with the load balancer's server groups."""
        fleet = super().build_fleet(name)
        self.load_balancer.attach(self.fleet.scaling_group_id)
        return fleet

    def fleet_exports(self) -> dict[str, pulumi.Input[Any]]:
        """The load balancer's address, plus the scaling outputs."""
        return {**super().fleet_exports(), "load_balancer_dns": self.load_balancer.dns_name}


__all__ = ["InferenceService"]
