"""The component provider's components, for Pulumi programs in any language: the training,
inference and rendering layouts and the two GPU fleet blocks, each taking the typed
arguments of args.py (the gpu_infra.schema models as TypedDicts) and building the Python
component of the same name as its child. provider/ hosts them (`pulumi package add
./provider`); tokens are `gpu-infra:index:<Name>`.

Arguments are plain values (the schema marks them plain) except the fleet blocks' wiring
(ids of resources the calling program has), which may be outputs. Invalid settings fail the
construction with one line per problem, as `gpu-infra validate` prints them.
"""

# No `from __future__ import annotations`: the provider's schema analyzer reads these
# annotations at run time.
from collections.abc import Mapping
from typing import Any, TypeVar

import pulumi
from pydantic import BaseModel, ValidationError
from typing_extensions import NotRequired, TypedDict

from gpu_infra.blocks.compute import nodes, scaling
from gpu_infra.blocks.conventions import Conventions
from gpu_infra.layouts import inference, rendering, training
from gpu_infra.layouts.base import LayoutBase
from gpu_infra.schema import (
    CLUSTER_KEY,
    REGION_KEY,
    ConfigError,
    FleetCluster,
    ScalingFleet,
    TrainingFleet,
    parse_cluster_config,
)
from gpu_infra.schema.loader import format_validation_error
from gpu_infra.schema.registry import LAYOUT_MODELS
from gpu_infra_provider.args import (
    InferenceConfigArgs,
    RenderingConfigArgs,
    ScalingFleetArgs,
    TrainingConfigArgs,
    TrainingFleetArgs,
)

PACKAGE = "gpu-infra"
"""The provider's package name: tokens are `gpu-infra:index:<component>`."""
Model = TypeVar("Model", bound=BaseModel)


def token(component: str) -> str:
    """`gpu-infra:index:<component>`."""
    return f"{PACKAGE}:index:{component}"


def _cluster(layout: str, args: Mapping[str, object]) -> FleetCluster:
    """The validated cluster config of a layout component's arguments (ValueError with one
    line per problem)."""
    settings = {key: value for key, value in args.items() if key != "region"}
    try:
        cluster = parse_cluster_config(
            {REGION_KEY: args.get("region"), CLUSTER_KEY: {**settings, "layout": layout}},
            source=f"{layout} arguments")
    except ConfigError as error:
        raise ValueError("\n".join(error.problems)) from None
    assert isinstance(cluster, FleetCluster), "the layout components are fleet layouts"
    return cluster


def _model(model: type[Model], value: object, field: str) -> Model:
    try:
        return model.model_validate(value)
    except ValidationError as error:
        raise ValueError("\n".join(f"{field}.{line}" for line in
                                   format_validation_error(error))) from None


class _LayoutComponent(pulumi.ComponentResource):
    """What the three layout components share: the layout child and its common outputs."""

    vpc_id: pulumi.Output[str]
    """The VPC the cluster runs in."""
    vswitch_ids: pulumi.Output[dict[str, str]]
    """vSwitch id per zone."""
    security_group_id: pulumi.Output[str]
    """The cluster's security group."""
    role_name: pulumi.Output[str]
    """The RAM role of the nodes."""
    bucket_names: pulumi.Output[dict[str, str]]
    """OSS bucket name per purpose."""

    def _build(self, name: str, layout: type[LayoutBase], args: Mapping[str, object],
               opts: pulumi.ResourceOptions | None) -> dict[str, pulumi.Input[Any]]:
        """Register this component, build `layout` as its child from `args`; the layout's
        exports (the common ones set as outputs here)."""
        super().__init__(token(type(self).__name__), name, {}, opts)
        layout_name = next(name for name, model in LAYOUT_MODELS.items()
                           if model is vars(layout)["CONFIG"])
        config = _cluster(layout_name, args)
        exports = layout(name, config=config, stack_name=pulumi.get_stack(),
                         project=pulumi.get_project(),
                         opts=pulumi.ResourceOptions(parent=self)).exports
        for key in ("vpc_id", "vswitch_ids", "security_group_id", "role_name", "bucket_names"):
            setattr(self, key, pulumi.Output.from_input(exports[key]))
        return exports


class TrainingCluster(_LayoutComponent):
    """A training cluster (gpu_infra.layouts.training.TrainingCluster): fixed GPU nodes
    close together in one zone, scratch disks, a shared file system, buckets, alarms."""

    node_private_ips: pulumi.Output[list[str]]
    """Private IPs of the nodes, in rank order."""
    instance_ids: pulumi.Output[list[str]]
    """ECS instance ids of the nodes, in rank order."""

    def __init__(self, name: str, args: TrainingConfigArgs,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        exports = self._build(name, training.TrainingCluster, args, opts)
        self.node_private_ips = pulumi.Output.from_input(exports["node_private_ips"])
        self.instance_ids = pulumi.Output.from_input(exports["instance_ids"])
        self.register_outputs(exports)


class InferenceService(_LayoutComponent):
    """An inference service (gpu_infra.layouts.inference.InferenceService): an auto-scaling
    GPU fleet across zones behind a load balancer, a model bucket, alarms."""

    scaling_group_id: pulumi.Output[str]
    """The fleet's ESS scaling group."""

    def __init__(self, name: str, args: InferenceConfigArgs,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        exports = self._build(name, inference.InferenceService, args, opts)
        self.scaling_group_id = pulumi.Output.from_input(exports["scaling_group_id"])
        self.register_outputs(exports)


class RenderFarm(_LayoutComponent):
    """A render farm (gpu_infra.layouts.rendering.RenderFarm): a spot-heavy fleet of
    graphics instances scaled on queue length down to zero, NAS for assets, buckets."""

    scaling_group_id: pulumi.Output[str]
    """The fleet's ESS scaling group."""

    def __init__(self, name: str, args: RenderingConfigArgs,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        exports = self._build(name, rendering.RenderFarm, args, opts)
        self.scaling_group_id = pulumi.Output.from_input(exports["scaling_group_id"])
        self.register_outputs(exports)


class FleetWiring(TypedDict):
    """Where a GPU fleet block runs: the calling program's ids."""

    region: str
    """Alibaba Cloud region of the vSwitches."""
    security_group_ids: list[pulumi.Input[str]]
    """Security groups of the instances."""
    image_id: pulumi.Input[str]
    """The image the instances boot."""
    tags: NotRequired[dict[str, str]]
    """Tags on every taggable child. Default none."""
    key_name: NotRequired[pulumi.Input[str]]
    """Key pair for SSH. Default none."""
    role_name: NotRequired[pulumi.Input[str]]
    """RAM role of the instances. Default none."""
    user_data: NotRequired[pulumi.Input[str]]
    """cloud-init user data. Default none."""


def _conventions(args: FleetWiring) -> Conventions:
    return Conventions(tags=args.get("tags", {}), region=args["region"])


class GpuNodesArgs(FleetWiring):
    """Arguments of GpuNodes."""

    fleet: TrainingFleetArgs
    """The nodes: instance type, count, capacity, image and driver."""
    vswitch_id: pulumi.Input[str]
    """The vSwitch (one zone) the nodes run in."""


class GpuNodes(pulumi.ComponentResource):
    """Fixed GPU nodes (gpu_infra.blocks.compute.nodes.GpuNodes): N ECS instances in one
    vSwitch, placed by deployment sets, eRDMA where the family has it."""

    instance_ids: pulumi.Output[list[str]]
    """ECS instance ids, in rank order."""
    private_ips: pulumi.Output[list[str]]
    """Private IPs, in rank order."""

    def __init__(self, name: str, args: GpuNodesArgs,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(token("GpuNodes"), name, {}, opts)
        block = nodes.GpuNodes(
            name, config=_model(TrainingFleet, args["fleet"], "fleet"),
            vswitch_id=args["vswitch_id"], security_group_ids=args["security_group_ids"],
            image_id=args["image_id"], conventions=_conventions(args),
            key_name=args.get("key_name"), role_name=args.get("role_name"),
            user_data=args.get("user_data"), opts=pulumi.ResourceOptions(parent=self))
        self.instance_ids = pulumi.Output.all(*block.instance_ids)
        self.private_ips = pulumi.Output.all(*block.private_ips)
        self.register_outputs({"instance_ids": self.instance_ids,
                               "private_ips": self.private_ips})


class GpuScalingGroupArgs(FleetWiring):
    """Arguments of GpuScalingGroup."""

    fleet: ScalingFleetArgs
    """The fleet: instance types, sizes, on-demand base and spot, scaling."""
    vswitch_ids: list[pulumi.Input[str]]
    """The vSwitches (zones) the fleet spreads over."""


class GpuScalingGroup(pulumi.ComponentResource):
    """An auto-scaling GPU fleet (gpu_infra.blocks.compute.scaling.GpuScalingGroup): an ESS
    scaling group across zones, on-demand base and spot above it, scaling rules."""

    scaling_group_id: pulumi.Output[str]
    """The ESS scaling group."""
    scaling_configuration_id: pulumi.Output[str]
    """Its scaling configuration."""

    def __init__(self, name: str, args: GpuScalingGroupArgs,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(token("GpuScalingGroup"), name, {}, opts)
        block = scaling.GpuScalingGroup(
            name, config=_model(ScalingFleet, args["fleet"], "fleet"),
            vswitch_ids=args["vswitch_ids"], security_group_ids=args["security_group_ids"],
            image_id=args["image_id"], conventions=_conventions(args),
            key_name=args.get("key_name"), role_name=args.get("role_name"),
            user_data=args.get("user_data"), opts=pulumi.ResourceOptions(parent=self))
        self.scaling_group_id = block.scaling_group_id
        self.scaling_configuration_id = block.scaling_configuration_id
        self.register_outputs({"scaling_group_id": self.scaling_group_id,
                               "scaling_configuration_id": self.scaling_configuration_id})


COMPONENTS: list[type[pulumi.ComponentResource]] = [
    TrainingCluster, InferenceService, RenderFarm, GpuNodes, GpuScalingGroup]
"""What the provider hosts."""

__all__ = ["COMPONENTS", "PACKAGE", "GpuNodes", "GpuNodesArgs", "GpuScalingGroup",
           "GpuScalingGroupArgs", "InferenceService", "RenderFarm", "TrainingCluster", "token"]
