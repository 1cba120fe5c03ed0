"""A training cluster that reads your own dataset bucket and alerts your own on-call group.

The bucket and the CloudMonitor contact group are the program's own resources. gpu-infra
adds a network, a security group, a RAM role that may read and write that bucket and
nothing else, four GPU nodes placed close together (a LowLatency deployment set where the
family has one), and the GPU alarms (idle, memory, temperature, ...) for those nodes,
sent to the program's contact group.
"""

from __future__ import annotations

from ipaddress import IPv4Network

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.compute.images import image_id_for
from gpu_infra.blocks.compute.nodes import GpuNodes
from gpu_infra.blocks.conventions import Conventions
from gpu_infra.blocks.identity import InstanceRole
from gpu_infra.blocks.monitoring import FleetAlarms
from gpu_infra.blocks.network import Network
from gpu_infra.blocks.security import ClusterSecurity
from gpu_infra.schema import MonitoringConfig, NetworkConfig, SecurityConfig, TrainingFleet

DATASET_BUCKET = "acme-llm-datasets"
ZONE = "cn-hangzhou-i"
VPC_CIDR = IPv4Network("10.30.0.0/16")

datasets = alicloud.oss.Bucket("datasets", bucket=DATASET_BUCKET)
on_call = alicloud.cms.AlarmContactGroup("ml-on-call", alarm_contact_group_name="ml-on-call")

conventions = Conventions(
    tags={"Project": "llm-pretrain", "Environment": "dev", "Owner": "ml-platform",
          "CostCenter": "cc-42"},
    region="cn-hangzhou")

network = Network("llm", config=NetworkConfig(vpc_cidr=VPC_CIDR, zones=[ZONE]),
                  conventions=conventions)
security = ClusterSecurity("llm", config=SecurityConfig(admin_cidrs=[VPC_CIDR]),
                           vpc_id=network.vpc_id, conventions=conventions)
role = InstanceRole("llm", bucket_names=[DATASET_BUCKET], conventions=conventions,
                    opts=pulumi.ResourceOptions(depends_on=[datasets]))

fleet_config = TrainingFleet(instance_type="ecs.gn7i-c32g1.8xlarge", nodes=4)
nodes = GpuNodes("llm-gpu", config=fleet_config, vswitch_id=network.vswitch_ids[ZONE],
                 security_group_ids=[security.security_group_id],
                 image_id=image_id_for(fleet_config.image), role_name=role.role_name,
                 conventions=conventions)

alarms = FleetAlarms("llm-gpu", config=MonitoringConfig(), fleet_name="llm-gpu",
                     contact_group=on_call.alarm_contact_group_name,
                     instance_ids=pulumi.Output.all(*nodes.instance_ids), conventions=conventions)

pulumi.export("node_private_ips", nodes.private_ips)
pulumi.export("alarm_ids", alarms.alarm_ids)
