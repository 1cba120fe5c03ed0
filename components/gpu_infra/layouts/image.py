"""An image-baking stack: the network for the build instance and an ECS Image Builder build
of the nodes' install steps."""

from __future__ import annotations

import pulumi

from gpu_infra import catalog
from gpu_infra.blocks.bootstrap import BootstrapSpec, bake_tasks
from gpu_infra.blocks.compute.image_build import GpuImageBuild, content_digest, pack_components
from gpu_infra.blocks.compute.images import (
    BAKED_IMAGE_OUTPUT,
    IMAGE_REGION_OUTPUT,
    image_id_for,
    newest_bake,
)
from gpu_infra.blocks.network import Network
from gpu_infra.knowhow.image import baked_driver, bakes_erdma, bakes_fabric_manager
from gpu_infra.layouts.base import Layout
from gpu_infra.schema import ImageConfig


def bake_spec(name: str, config: ImageConfig) -> BootstrapSpec:
    """The bootstrap of the image: the install steps a fleet of the build type's family
    runs, with the image's driver pins, and the log collector its fleets' nodes use."""
    build = config.image
    return BootstrapSpec(
        fleet=name, region=config.region,
        gpu_counts={build.instance_type: max(catalog.gpus_per_node(build.instance_type), 1)},
        route="auto_install", driver=baked_driver(build), erdma=bakes_erdma(build),
        fabric_manager=bakes_fabric_manager(build), log_collector=True)


def bake_digest(config: ImageConfig) -> str:
    """The digest naming the image stack's template and images (GpuImageBuild.digest): what
    changes exactly when its bake does."""
    spec = bake_spec(f"{config.name}-img", config)
    return content_digest(pack_components(bake_tasks(spec)), config.image)


class ImageBakery(Layout):
    """A VPC with one vSwitch per zone (and the NAT gateway the build's downloads need), and a
    GpuImageBuild whose intermediate instance runs in the first zone's vSwitch.

    Outputs: `vpc_id`, `vswitch_ids`, `image_name_prefix`, `image_template_id`,
    `image_build_id`, `image_id` (the newest finished build when this `pulumi up` ran, what
    fleets with `fleet.image.from_stack` boot; None before the first), `image_region`,
    `driver_version`
    (what fleets booting the image pin).
    """

    TYPE = "gpu-infra:layouts:ImageBakery"
    CONFIG = ImageConfig

    def __init__(self, name: str, *, config: ImageConfig, stack_name: str, project: str,
                 opts: pulumi.ResourceOptions | None = None):
        """`config`: the validated image stack; `stack_name` and `project`: for tags."""
        super().__init__(name, config=config, stack_name=stack_name, project=project,
                         opts=opts)
        self.cluster = config
        self.network = Network(f"{name}-net", config=config.network,
                               conventions=self.conventions, opts=self.child)
        spec = bake_spec(f"{name}-img", config)
        self.build = GpuImageBuild(
            f"{name}-img", config=config.image, tasks=bake_tasks(spec),
            base_image_id=image_id_for(config.image.base),
            vswitch_id=self.network.vswitch_ids[config.network.zones[0]],
            conventions=self.conventions, opts=self.child)
        self.exports = {
            "vpc_id": self.network.vpc_id, "vswitch_ids": self.network.vswitch_ids,
            "image_name_prefix": self.build.image_name_prefix,
            "image_template_id": self.build.pipeline_id,
            "image_build_id": self.build.execution_id,
            BAKED_IMAGE_OUTPUT: newest_bake(self.build.image_name_prefix),
            IMAGE_REGION_OUTPUT: config.region,
            "driver_version": spec.driver.driver}
        self.register_outputs(self.exports)


__all__ = ["ImageBakery", "bake_digest"]
