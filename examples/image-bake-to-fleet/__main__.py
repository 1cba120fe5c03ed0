"""Bake a GPU image, then run a rendering fleet that boots it, in one program.

The ImageBakery layout builds the image (driver, CUDA, eRDMA, CloudMonitor agent installed
by ECS Image Builder on a build instance) in its own network. The fleet, from the blocks,
runs in that network's vSwitch and boots the newest image whose name starts with the
bakery's prefix, looked up only after the build has finished.
"""

from __future__ import annotations

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.compute.scaling import GpuScalingGroup
from gpu_infra.blocks.security import ClusterSecurity
from gpu_infra.layouts.image import ImageBakery
from gpu_infra.schema import ImageConfig, ScalingFleet, SecurityConfig, parse_cluster_config

ZONE = "cn-hangzhou-i"

image_stack = parse_cluster_config({
    "alicloud:region": "cn-hangzhou",
    "gpu-infra:cluster": {
        "name": "a10-img", "layout": "image",
        "tags": {"Owner": "render-team", "CostCenter": "cc-7"},
        "network": {"vpc_cidr": "10.40.0.0/16", "zones": [ZONE]},
        "image": {"instance_type": "ecs.gn7i-c8g1.2xlarge"}}})
assert isinstance(image_stack, ImageConfig)
bakery = ImageBakery("a10-img", config=image_stack, stack_name=pulumi.get_stack(),
                     project=pulumi.get_project())

baked = alicloud.ecs.get_images_output(
    name_regex=f"^{bakery.build.image_name_prefix}", owners="self", most_recent=True,
    opts=pulumi.InvokeOutputOptions(depends_on=[bakery.build.execution]))

security = ClusterSecurity("render", config=SecurityConfig(),
                           vpc_id=bakery.network.vpc_id, conventions=bakery.conventions)
fleet = GpuScalingGroup(
    "render-gpu", config=ScalingFleet(instance_types=["ecs.gn7i-c8g1.2xlarge"], max_size=8),
    vswitch_ids=[bakery.network.vswitch_ids[ZONE]],
    security_group_ids=[security.security_group_id],
    image_id=baked.ids.apply(lambda ids: ids[0]), conventions=bakery.conventions)

pulumi.export("image_name_prefix", bakery.build.image_name_prefix)
pulumi.export("scaling_group_id", fleet.scaling_group_id)
