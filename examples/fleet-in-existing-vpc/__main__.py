"""A GPU inference fleet in a VPC your program already manages.

The VPC and its two vSwitches are the program's own resources (here created inline; in
your program they may come from a StackReference). gpu-infra adds a least-privilege security
group and an auto-scaling GPU fleet across both zones: one on-demand instance as the base,
spot above it, scaled on GPU utilisation.
"""

from __future__ import annotations

from ipaddress import IPv4Network

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.compute.images import image_id_for
from gpu_infra.blocks.compute.scaling import GpuScalingGroup
from gpu_infra.blocks.conventions import Conventions
from gpu_infra.blocks.security import ClusterSecurity
from gpu_infra.schema import ScalingFleet, SecurityConfig

ZONES = ("cn-hangzhou-i", "cn-hangzhou-j")

vpc = alicloud.vpc.Network("app-vpc", vpc_name="app-vpc", cidr_block="10.20.0.0/16")
vswitches = [
    alicloud.vpc.Switch(f"app-{zone}", vpc_id=vpc.id, zone_id=zone,
                        cidr_block=f"10.20.{index * 16}.0/20", vswitch_name=f"app-{zone}")
    for index, zone in enumerate(ZONES)]

conventions = Conventions(
    tags={"Project": "chat-api", "Environment": "staging", "Owner": "ml-platform",
          "CostCenter": "cc-42"},
    region="cn-hangzhou")

security = ClusterSecurity(
    "chat", config=SecurityConfig(service_ports=[8000], client_cidrs=[IPv4Network("10.20.0.0/16")]),
    vpc_id=vpc.id, conventions=conventions)

fleet_config = ScalingFleet(
    instance_types=["ecs.gn7i-c8g1.2xlarge", "ecs.gn7i-c16g1.4xlarge"],
    min_size=1, max_size=6, on_demand_base_capacity=1, on_demand_percentage_above_base=0)
fleet = GpuScalingGroup(
    "chat-gpu", config=fleet_config, vswitch_ids=[vswitch.id for vswitch in vswitches],
    security_group_ids=[security.security_group_id],
    image_id=image_id_for(fleet_config.image), conventions=conventions)

pulumi.export("scaling_group_id", fleet.scaling_group_id)
pulumi.export("security_group_id", security.security_group_id)
