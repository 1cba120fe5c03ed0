"""Fixed GPU nodes: N ECS instances in one vSwitch, placed by deployment sets.

Representation: one ecs.Instance per node (plus one ecs.RamRoleAttachment each), not a
scaling group: training nodes are long-lived, individually addressable (host names, NCCL
ranks), need deployment sets and eRDMA on the primary interface, and must never be
replaced by a scaling activity.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra import catalog
from gpu_infra.blocks.conventions import FLEET_TAG_KEY, Conventions, child_name
from gpu_infra.knowhow.placement import Placement
from gpu_infra.schema.compute import TrainingFleet

DEPLOYMENT_SET_MAX_INSTANCES = catalog.LOW_LATENCY_MAX_INSTANCES
"""Instances per deployment set in one zone (20, for LowLatency and Availability alike)."""


@dataclass(frozen=True)
class NodeCapacity:
    """How the nodes are paid for.

    `spot_strategy` and `spot_price_limit` force replacement of existing instances when
    changed (ForceNew in the provider): changing them recreates every node.
    """

    kind: Literal["on_demand", "spot", "prepaid"] = "on_demand"
    """on_demand (PostPaid, NoSpot), spot (PostPaid + spot_strategy), prepaid (PrePaid)."""
    spot_strategy: Literal["SpotAsPriceGo", "SpotWithPriceLimit"] = "SpotAsPriceGo"
    """Spot bidding. Default SpotAsPriceGo."""
    spot_price_limit: float | None = None
    """Hourly price cap with SpotWithPriceLimit (at most 3 decimals). Default none."""
    period: int = 1
    """Prepaid term: 1-9, 12, 24, 36, 48, 60. Default 1."""
    period_unit: Literal["Week", "Month"] = "Month"
    """Prepaid term unit. Default Month."""

    @classmethod
    def from_fleet(cls, fleet: TrainingFleet) -> NodeCapacity:
        """The capacity a training fleet's config asks for."""
        return cls(fleet.capacity, fleet.spot_strategy, fleet.spot_price_limit,
                   fleet.prepaid_period, fleet.prepaid_period_unit)

    def instance_args(self) -> dict[str, object]:
        """ecs.Instance charging arguments."""
        if self.kind == "prepaid":
            return {"instance_charge_type": "PrePaid", "period": self.period,
                    "period_unit": self.period_unit}
        if self.kind == "spot":
            args: dict[str, object] = {"instance_charge_type": "PostPaid",
                                       "spot_strategy": self.spot_strategy}
            if self.spot_strategy == "SpotWithPriceLimit":
                args["spot_price_limit"] = self.spot_price_limit
            return args
        return {"instance_charge_type": "PostPaid", "spot_strategy": "NoSpot"}


class GpuNodes(pulumi.ComponentResource):
    """`count` GPU instances of one type in one vSwitch (one zone).

    Placement: a deployment set holds at most 20 instances in a zone, so ceil(count/20)
    sets are created (LowLatency or Availability) and nodes fill them in order; each
    LowLatency set is its own low-latency network domain. eRDMA sets the primary
    interface's traffic mode to HighPerformance. No public IP; ESSD system disk; the RAM
    role is attached with ecs.RamRoleAttachment; deletion protection follows
    `conventions.deletion_protection` except on spot (where it does not apply). Every
    instance is tagged `GpuFleet=<name>`.

    Outputs: `instance_ids`, `private_ips`, `deployment_set_ids`.
    """

    TYPE = "gpu-infra:compute:GpuNodes"
    instances: list[alicloud.ecs.Instance]
    deployment_sets: list[alicloud.ecs.EcsDeploymentSet]
    role_attachments: list[alicloud.ecs.RamRoleAttachment]

    def __init__(self, name: str, *, instance_type: str, count: int,
                 vswitch_id: pulumi.Input[str],
                 security_group_ids: Sequence[pulumi.Input[str]],
                 image_id: pulumi.Input[str], conventions: Conventions,
                 capacity: NodeCapacity = NodeCapacity(), erdma: bool = False,
                 placement: Placement | None = "Availability",
                 key_name: pulumi.Input[str] | None = None,
                 role_name: pulumi.Input[str] | None = None,
                 user_data: pulumi.Input[str] | None = None,
                 data_disks: Sequence[alicloud.ecs.InstanceDataDiskArgs] = (),
                 system_disk_size: int = 200,
                 system_disk_performance_level: str = "PL1",
                 kms_key_id: pulumi.Input[str] | None = None, protect: bool = False,
                 opts: pulumi.ResourceOptions | None = None):
        """`placement` None: no deployment set. The system disk is always encrypted, with
        `kms_key_id` when given (else the service key). `protect`: Pulumi-protect the
        instances (for nodes whose data disks are kept). Defaults: on-demand, no eRDMA,
        Availability, no key, no role, no user data, no data disks, 200 GiB PL1 ESSD system
        disk, not protected."""
        super().__init__(self.TYPE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        instance_options = pulumi.ResourceOptions(parent=self, protect=protect)
        set_count = math.ceil(count / DEPLOYMENT_SET_MAX_INSTANCES) if placement else 0
        self.deployment_sets = [
            alicloud.ecs.EcsDeploymentSet(
                child_name(name, f"ds-{i}"), deployment_set_name=child_name(name, f"ds-{i}"),
                strategy=placement, description=f"{placement} placement of {name}",
                opts=child)
            for i in range(set_count)]
        protect = conventions.deletion_protection and capacity.kind != "spot"
        fleet_tag = {FLEET_TAG_KEY: name}
        self.instances = []
        self.role_attachments = []
        for index in range(count):
            node = child_name(name, f"node-{index:03d}")
            deployment_set = (self.deployment_sets[index // DEPLOYMENT_SET_MAX_INSTANCES]
                              if self.deployment_sets else None)
            instance = alicloud.ecs.Instance(
                node, instance_name=node, host_name=node, instance_type=instance_type,
                image_id=image_id, vswitch_id=vswitch_id,
                security_groups=list(security_group_ids), key_name=key_name,
                user_data=user_data, internet_max_bandwidth_out=0,
                system_disk_category="cloud_essd", system_disk_size=system_disk_size,
                system_disk_performance_level=system_disk_performance_level,
                system_disk_encrypted=True, system_disk_kms_key_id=kms_key_id,
                data_disks=list(data_disks) or None,
                network_interface_traffic_mode="HighPerformance" if erdma else "Standard",
                deployment_set_id=deployment_set.id if deployment_set else None,
                deletion_protection=protect, **capacity.instance_args(),
                tags=conventions.tags_for(node, fleet_tag),
                volume_tags=conventions.tags_for(node, fleet_tag), opts=instance_options)
            self.instances.append(instance)
            if role_name is not None:
                self.role_attachments.append(alicloud.ecs.RamRoleAttachment(
                    child_name(node, "role"), instance_id=instance.id,
                    ram_role_name=role_name, opts=child))
        self.instance_ids: list[pulumi.Output[str]] = [i.id for i in self.instances]
        self.private_ips: list[pulumi.Output[str]] = [i.private_ip for i in self.instances]
        self.deployment_set_ids: list[pulumi.Output[str]] = [
            d.id for d in self.deployment_sets]
        self.register_outputs({"instance_ids": self.instance_ids,
                               "private_ips": self.private_ips,
                               "deployment_set_ids": self.deployment_set_ids})
