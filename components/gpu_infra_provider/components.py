"""The component provider's components, for Pulumi programs in any language: the training,
inference and rendering layouts, the image bakery and the two GPU fleet blocks, each taking
the typed arguments of args.py (the gpu_infra.schema models as TypedDicts) and building the
Python component of the same name as its child, whose outputs (a layout's exports) it
exposes under the same names. provider/ hosts them (`pulumi package add ./provider`);
tokens are `gpu-infra:index:<Name>`.

Arguments are plain values (the schema marks them plain) except the fleet blocks' wiring
(ids of resources the calling program has), which may be outputs. Invalid settings fail the
construction with one line per problem, as `gpu-infra validate` prints them; a layout's
ERROR findings fail it as invalid properties (field paths camelCased as in the schema).
"""

# No `from __future__ import annotations`: the provider's schema analyzer reads these
# annotations at run time.
from collections.abc import Mapping
from typing import TypeVar

import pulumi
from pulumi.provider.experimental.util import camel_case
from pydantic import BaseModel, ValidationError
from typing_extensions import NotRequired, TypedDict

from gpu_infra.blocks.compute import nodes, scaling
from gpu_infra.blocks.conventions import Conventions
from gpu_infra.layouts import image, inference, layout_class, rendering, training
from gpu_infra.layouts.base import Layout
from gpu_infra.layouts.judgement import LayoutConfigError
from gpu_infra.schema import (
    CLUSTER_KEY,
    REGION_KEY,
    ClusterCommon,
    ConfigError,
    ScalingFleet,
    TrainingFleet,
    parse_cluster_config,
)
from gpu_infra.schema.loader import format_validation_error
from gpu_infra.schema.registry import LAYOUT_MODELS
from gpu_infra_provider import args as args_types

PACKAGE = "gpu-infra"
"""The provider's package name: tokens are `gpu-infra:index:<component>`."""
Model = TypeVar("Model", bound=BaseModel)


def token(component: str) -> str:
    """`gpu-infra:index:<component>`."""
    return f"{PACKAGE}:index:{component}"


def _cluster(layout: str, args: Mapping[str, object]) -> ClusterCommon:
    """The validated cluster config of a layout component's arguments (ValueError with one
    line per problem)."""
    settings = {key: value for key, value in args.items() if key != "region"}
    try:
        return parse_cluster_config(
            {REGION_KEY: args.get("region"), CLUSTER_KEY: {**settings, "layout": layout}},
            source=f"{layout} arguments")
    except ConfigError as error:
        raise ValueError("\n".join(error.problems)) from None


def _model(model: type[Model], value: object, field: str) -> Model:
    try:
        return model.model_validate(value)
    except ValidationError as error:
        raise ValueError("\n".join(f"{field}.{line}" for line in
                                   format_validation_error(error))) from None


def _property_path(path: str) -> str:
    """A finding's field path as the schema spells it: `fleet.instance_type` ->
    `fleet.instanceType`."""
    return ".".join(camel_case(part) for part in path.split("."))


def declared_outputs(component: type[pulumi.ComponentResource]) -> list[str]:
    """The outputs a component class declares (its `pulumi.Output` annotations, inherited
    ones included), which the provider's schema lists."""
    return [name for klass in reversed(component.__mro__)
            for name, annotation in vars(klass).get("__annotations__", {}).items()
            if "Output[" in str(annotation)]


class _Layout(pulumi.ComponentResource):
    """A layout as a component: the Python layout is its child, and each of the layout's
    exports is the output of the same name (None where this config exports none)."""

    vpc_id: pulumi.Output[str]
    """The VPC the layout runs in."""
    vswitch_ids: pulumi.Output[dict[str, str]]
    """vSwitch id per zone."""

    def _build(self, name: str, layout: type[Layout], args: Mapping[str, object],
               opts: pulumi.ResourceOptions | None) -> None:
        """Register this component, build `layout` (for the config's platform) as its child
        from `args`, set every declared output from its exports and register them."""
        super().__init__(token(type(self).__name__), name, {}, opts)
        layout_name = next(name for name, model in LAYOUT_MODELS.items()
                           if model is vars(layout)["CONFIG"])
        config = _cluster(layout_name, args)
        try:
            exports = layout_class(config)(
                name, config=config, stack_name=pulumi.get_stack(),
                project=pulumi.get_project(), opts=pulumi.ResourceOptions(parent=self)).exports
        except LayoutConfigError as error:
            raise pulumi.InputPropertiesError(str(error), [
                {"property_path": _property_path(finding.path),
                 "reason": f"{finding.validator}: {finding.message}"}
                for finding in error.findings]) from None
        for key in declared_outputs(type(self)):
            value = exports.get(key)
            setattr(self, key, None if value is None else pulumi.Output.from_input(value))
        self.register_outputs(exports)


class _FleetLayout(_Layout):
    """What the three fleet layouts export on both platforms."""

    security_group_id: pulumi.Output[str]
    """The cluster's security group."""
    bucket_names: pulumi.Output[dict[str, str]]
    """OSS bucket name per purpose."""
    data_disks: pulumi.Output[dict[str, str]]
    """Mount point per data disk name."""
    role_name: pulumi.Output[str] | None
    """The RAM role of the nodes (ECS fleets)."""
    nat_eip: pulumi.Output[str] | None
    """The NAT gateway's public address (when the stack creates NAT egress)."""
    key_pair_name: pulumi.Output[str] | None
    """The SSH key pair (with security.public_key)."""
    kms_key_id: pulumi.Output[str] | None
    """The stack's KMS key (with security.kms_encryption)."""
    mount_command: pulumi.Output[str] | None
    """The command that mounts the shared file system."""
    alert_contact_group: pulumi.Output[str] | None
    """The CloudMonitor contact group alarms go to."""
    log_project: pulumi.Output[str] | None
    """The SLS project of the node logs."""
    backup_vault_id: pulumi.Output[str] | None
    """The Cloud Backup vault."""
    gpu_health_group_id: pulumi.Output[str] | None
    """The CloudMonitor group of the GPU health check."""
    registry_address: pulumi.Output[str] | None
    """The private registry's VPC address."""
    registry_repositories: pulumi.Output[dict[str, str]] | None
    """Repository address per name."""
    images_to_mirror: pulumi.Output[list[dict[str, str]]] | None
    """Images to copy into the private registry (source, target, why)."""
    mirror_command: pulumi.Output[str] | None
    """The command that copies them."""


class _AckOutputs(_FleetLayout):
    """What a fleet layout exports with `platform: ack`."""

    cluster_id: pulumi.Output[str] | None
    """The ACK cluster."""
    kubeconfig_command: pulumi.Output[str] | None
    """The command that fetches a kubeconfig (never the credential itself)."""
    kubernetes_version: pulumi.Output[str] | None
    """The cluster's Kubernetes version."""
    gpu_node_pool_ids: pulumi.Output[list[str]] | None
    """The GPU node pools."""
    gpu_node_labels: pulumi.Output[dict[str, str]] | None
    """The labels of the GPU nodes."""
    gpu_node_taint: pulumi.Output[str] | None
    """The taint of the GPU nodes (key=value:effect)."""
    system_node_labels: pulumi.Output[dict[str, str]] | None
    """The labels of the system pool's nodes."""
    gpu_fault_alarm_id: pulumi.Output[str] | None
    """The alarm on GPU faults ACK reports."""
    jobs_namespace: pulumi.Output[str] | None
    """The namespace of the jobs and volumes."""
    scratch_storage_class: pulumi.Output[str] | None
    """The storage class of scratch volumes."""
    shared_volume_claim: pulumi.Output[str] | None
    """The claim of the shared file system."""
    bucket_volume_claims: pulumi.Output[dict[str, str]] | None
    """The claim per bucket purpose."""


class _ScalingOutputs(_FleetLayout):
    """What a scaling fleet exports."""

    scaling_group_id: pulumi.Output[str] | None
    """The fleet's ESS scaling group (ECS)."""
    fleet_name: pulumi.Output[str] | None
    """The fleet's name (its GpuFleet tag)."""
    metric_group_id: pulumi.Output[str] | None
    """The CloudMonitor group the fleet's custom metrics go to."""
    job_queue: pulumi.Output[str] | None
    """The job queue the fleet scales on."""


class TrainingCluster(_AckOutputs):
    """A training cluster (gpu_infra.layouts.TrainingCluster, or AckTrainingCluster with
    `platform: ack`): GPU nodes close together in one zone (on spot capacity, spot workers in
    a scaling group behind the on-demand ones), scratch disks, a shared file system, buckets,
    alarms."""

    node_private_ips: pulumi.Output[list[str]] | None
    """Private IPs of the nodes, in rank order (ECS)."""
    instance_ids: pulumi.Output[list[str]] | None
    """ECS instance ids of the nodes, in rank order (ECS)."""
    deployment_set_ids: pulumi.Output[list[str]] | None
    """The deployment sets placing the nodes (ECS)."""
    node0_shell: pulumi.Output[str] | None
    """The command that opens a shell on node 0 (ECS, fixed nodes)."""
    spot_scaling_group_id: pulumi.Output[str] | None
    """The scaling group of the spot workers, which replaces a reclaimed one (ECS, spot
    capacity)."""
    training_job: pulumi.Output[str] | None
    """The ready training job (`gpu-infra job`)."""

    def __init__(self, name: str, args: args_types.TrainingConfig,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        self._build(name, training.TrainingCluster, args, opts)


class InferenceService(_AckOutputs, _ScalingOutputs):
    """An inference service (gpu_infra.layouts.InferenceService, or AckInferenceService with
    `platform: ack`): an auto-scaling GPU fleet across zones behind a load balancer, a model
    bucket, alarms."""

    load_balancer_dns: pulumi.Output[str] | None
    """The load balancer's address (ECS)."""
    serving_address_command: pulumi.Output[str] | None
    """The command that prints the serving address (ACK)."""

    def __init__(self, name: str, args: args_types.InferenceConfig,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        self._build(name, inference.InferenceService, args, opts)


class RenderFarm(_ScalingOutputs):
    """A render farm (gpu_infra.layouts.RenderFarm): a spot-heavy fleet of graphics
    instances scaled on queue length down to zero, NAS for assets, buckets."""

    def __init__(self, name: str, args: args_types.RenderingConfig,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        self._build(name, rendering.RenderFarm, args, opts)


class ImageBakery(_Layout):
    """An image bakery (gpu_infra.layouts.ImageBakery): a network and an ECS Image Builder
    build of the nodes' install steps, for fleets that boot the preinstalled driver."""

    image_name_prefix: pulumi.Output[str]
    """What the names of the baked images start with."""
    image_template_id: pulumi.Output[str]
    """The Image Builder template."""
    image_build_id: pulumi.Output[str]
    """The Image Builder build this run started."""
    image_id: pulumi.Output[str] | None
    """The newest finished bake (none before the first)."""
    image_region: pulumi.Output[str]
    """The region the images are in."""
    driver_version: pulumi.Output[str]
    """The NVIDIA driver the images hold (what fleets booting them pin)."""

    def __init__(self, name: str, args: args_types.ImageConfig,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        self._build(name, image.ImageBakery, args, opts)


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

    fleet: args_types.TrainingFleet
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

    fleet: args_types.ScalingFleet
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
    TrainingCluster, InferenceService, RenderFarm, ImageBakery, GpuNodes, GpuScalingGroup]
"""What the provider hosts."""

__all__ = ["COMPONENTS", "PACKAGE", "GpuNodes", "GpuNodesArgs", "GpuScalingGroup",
           "GpuScalingGroupArgs", "ImageBakery", "InferenceService", "RenderFarm",
           "TrainingCluster", "declared_outputs", "token"]
