"""What the inference and rendering layouts share: an auto-scaling GPU fleet."""

from __future__ import annotations

from typing import Any

import pulumi

from gpu_infra.blocks.bootstrap.permissions import grant_bootstrap
from gpu_infra.blocks.compute.fleet_ops import account_id
from gpu_infra.blocks.compute.images import image_id_for
from gpu_infra.blocks.compute.reserved import ReservedCapacity
from gpu_infra.blocks.compute.scaling import GpuScalingGroup
from gpu_infra.blocks.logs import FUNCTION_STORE
from gpu_infra.knowhow.node_software import driver_plan
from gpu_infra.layouts.base import LayoutBase
from gpu_infra.nodeplan.plans import gpu_fleet_name
from gpu_infra.schema import InferenceConfig, RenderingConfig
from gpu_infra_facts.node_stack import readiness_timeout


class ScalingLayout(LayoutBase):
    """A GpuScalingGroup over every zone of the network, with ESSD PL1 data disks (ESS does
    not take AutoPL), alarms by fleet tag and optional reserved capacity.

    Extra outputs: `scaling_group_id`, `metric_group_id` (with queue scaling).
    """

    cluster: InferenceConfig | RenderingConfig
    fleet: GpuScalingGroup
    reserved: ReservedCapacity | None

    def instance_type(self) -> str:
        """The fleet's first (preferred) instance type."""
        return self.cluster.fleet.instance_types[0]

    def build_fleet(self, name: str) -> tuple[str, None]:
        """The scaling group; its alarms go by tag (its instances come and go)."""
        fleet = self.cluster.fleet
        route = driver_plan(fleet).route or "auto_install"
        self.fleet_component_name = gpu_fleet_name(name)
        self.fleet = GpuScalingGroup(
            self.fleet_component_name, config=fleet,
            vswitch_ids=[self.network.vswitch_ids[zone] for zone in self.fleet_zones()],
            security_group_ids=[self.security.security_group_id],
            image_id=image_id_for(fleet.image),
            conventions=self.conventions, key_name=self.security.key_pair_name,
            role_name=self.role_name,
            user_data=lambda group_id, hook_id: self.node_user_data(
                gpu_fleet_name(name), group_id, hook_id),
            readiness_seconds=readiness_timeout(
                route, self.node_plan.serving_unit() is not None),
            data_disks=self.disks.scaling_disks(), kms_key_id=self.kms_key_id,
            health_check_types=self.cluster.health_check_types,
            scale_in_percent=self.cluster.scale_in_percent,
            publishes_queue_metric=self.cluster.stack_publishes_queue_metric,
            publisher_logs=self.logs.store(FUNCTION_STORE)
            if self.logs and self.cluster.stack_publishes_queue_metric else None,
            drain_ports=self.drain_ports(), hands_back_jobs=self.node_plan.returns_jobs(),
            dead_letter_after=self.node_plan.dead_letter_after(),
            contact_group=self.alerting.contact_group_name if self.alerting else None,
            resource_group_id=self.alerting.resource_group_id if self.alerting else None,
            opts=self.child)
        self.reserved = ReservedCapacity(
            f"{name}-reserved", config=fleet.reserved, instance_type=self.instance_type(),
            zone_id=self.fleet_zones()[0], conventions=self.conventions,
            opts=self.child) if fleet.reserved else None
        self.bootstrap_grant = grant_bootstrap(
            gpu_fleet_name(name), role_name=self.role_name, account=account_id(self),
            conventions=self.conventions, parent=self.fleet,
            scaling_group_id=self.fleet.scaling_group_id,
            registry_scopes=self.registry.pull_scopes if self.registry else None)
        return gpu_fleet_name(name), None

    def drain_ports(self) -> list[int]:
        """The ports whose established connections are requests in flight when a node
        drains: the service ports behind a load balancer (inference); none (rendering,
        whose work in flight is its jobs)."""
        return list(self.cluster.security.service_ports) if self.cluster.layout == "inference" \
            else []

    def fleet_exports(self) -> dict[str, pulumi.Input[Any]]:
        """The scaling group, and the CloudMonitor group custom metrics go to."""
        exports: dict[str, pulumi.Input[Any]] = {"scaling_group_id": self.fleet.scaling_group_id,
                                            "fleet_name": self.fleet_component_name}
        if self.fleet.metric_group_id is not None:
            exports["metric_group_id"] = self.fleet.metric_group_id
        if self.fleet.job_queue_name is not None:
            exports["job_queue"] = self.fleet.job_queue_name
        return exports
