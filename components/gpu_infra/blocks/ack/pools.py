"""ACK node pools (cs.NodePool): the CPU system pool and the GPU pools built from a stack's
`fleet` settings, the same ones that build ECS nodes and ESS groups."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import Conventions, child_name
from gpu_infra.blocks.storage.disks import AUTOPL_CATEGORY
from gpu_infra.schema.ack import SystemPoolConfig
from gpu_infra.schema.compute import ScalingFleet, TrainingFleet
from gpu_infra.schema.stack import FLEET_TAG_KEY
from gpu_infra.schema.storage import DataDiskConfig
from gpu_infra_facts.ack import GPU_TAINT, POOL_LABEL
from gpu_infra_facts.allowed import (
    ACK_POOL_SCALING_TYPE,
    DeploymentSetStrategy,
    MultiAzPolicy,
    NodePoolPrivatePoolMatch,
)

DEPLOYMENT_SET_MAX_NODES = 20
"""Instances a deployment set holds in one zone (as GpuNodes): a training fleet larger than
that gets one pool per deployment set."""
METADATA_HTTP_TOKENS = "required"
"""Instance metadata in hardened mode only (tokens), as on ECS nodes."""
SYSTEM_POOL_LABEL = "system"
"""`gpu-infra/pool` value of the system pool's nodes (the controllers' nodeSelector)."""
SPOT_MIX_POLICY: MultiAzPolicy = "COST_OPTIMIZED"
"""multi_az_policy of a spot training pool: ESS mixes on-demand and spot only under it."""
DATA_MOUNT_ROOT = "/mnt"
"""Pool data disk `name` is mounted at /mnt/<name> (as on ECS nodes)."""


@dataclass(frozen=True)
class GpuPoolSpec:
    """What a GPU pool needs beyond the fleet: resolved by the layout from the stack."""

    vswitch_ids: Sequence[pulumi.Input[str]]
    """The pool's zones (training: one; inference: at least two)."""
    labels: Mapping[str, str]
    """Node labels (the pool label, the driver pin, eRDMA)."""
    disks: Sequence[DataDiskConfig]
    gpu_count: int
    image_type: str
    placement: DeploymentSetStrategy | None = None
    """Deployment-set strategy of a training pool; None for none."""
    private_pool_id: pulumi.Input[str] | None = None
    """A capacity guarantee the nodes launch into."""
    private_pool_match: NodePoolPrivatePoolMatch = "Target"
    """Target: only into the guarantee (one zone, training); Open: into it when it matches,
    elsewhere otherwise (inference over several zones)."""
    kms_key_id: pulumi.Input[str] | None = None
    key_name: pulumi.Input[str] | None = None
    resource_group_id: pulumi.Input[str] | None = None
    """Resource group of the nodes (the alerting's `<cluster>-alerts-fleet`: the node
    events and the node application group follow it)."""
    extra: Mapping[str, Any] = field(default_factory=dict)


def data_disks(disks: Sequence[DataDiskConfig], gpu_count: int,
               kms_key_id: pulumi.Input[str] | None) -> list[alicloud.cs.NodePoolDataDiskArgs]:
    """The pool's data disks: encrypted ESSD AutoPL with the fleet's provisioned IOPS and
    bursting, formatted ext4 and mounted at /mnt/<name>."""
    return [alicloud.cs.NodePoolDataDiskArgs(
        name=disk.name, category=AUTOPL_CATEGORY, size=disk.size_for(gpu_count),
        provisioned_iops=disk.provisioned_iops or None, bursting_enabled=disk.bursting,
        encrypted="true", kms_key_id=kms_key_id, auto_format="true", file_system="ext4",
        mount_target=f"{DATA_MOUNT_ROOT}/{disk.name}") for disk in disks]


def _labels(labels: Mapping[str, str]) -> list[alicloud.cs.NodePoolLabelArgs]:
    return [alicloud.cs.NodePoolLabelArgs(key=key, value=value)
            for key, value in sorted(labels.items())]


def _managed() -> alicloud.cs.NodePoolManagementArgs:
    """Managed pool: ACK repairs failed nodes (node problem detector conditions), never
    upgrades them on its own, one node at a time."""
    return alicloud.cs.NodePoolManagementArgs(
        enable=True, auto_repair=True, auto_upgrade=False, auto_vul_fix=False,
        max_unavailable=1)


def _system_disk(size_gib: int, kms_key_id: pulumi.Input[str] | None) -> dict[str, Any]:
    return {"system_disk_category": AUTOPL_CATEGORY, "system_disk_size": size_gib,
            "system_disk_bursting_enabled": True, "system_disk_encrypted": True,
            "system_disk_kms_key": kms_key_id}


def charging(fleet: TrainingFleet | ScalingFleet) -> dict[str, Any]:
    """cs.NodePool charging and spot arguments from the fleet, as ECS nodes and ESS groups
    get them: a training fleet's capacity (on_demand; spot with an on-demand part of
    `on_demand_count` nodes; prepaid by the month), or a scaling fleet's on-demand base and
    percentage with spot above it."""
    limits = fleet.spot_price_limit
    if isinstance(fleet, TrainingFleet):
        if fleet.capacity == "prepaid":
            return {"instance_charge_type": "PrePaid", "period": fleet.prepaid_period,
                    "period_unit": "Month", "auto_renew": True, "auto_renew_period": 1}
        spot = fleet.capacity == "spot"
        types = [fleet.instance_type]
        args: dict[str, Any] = {"instance_charge_type": "PostPaid",
                                "spot_strategy": fleet.spot_strategy if spot else "NoSpot"}
        if spot:
            # the on-demand part of the pool (fleet.on_demand_count nodes) holds the job's
            # rendezvous: its Master pod selects node.alibabacloud.com/spot-strategy=NoSpot;
            # reclaimed spot nodes are replaced on the notice (remedy), by on-demand ones when
            # spot is out (compensation). ESS mixes capacity under COST_OPTIMIZED; that a
            # pool with a deployment set takes it is UNCONFIRMED.
            args.update(multi_az_policy=SPOT_MIX_POLICY,
                        on_demand_base_capacity=str(fleet.on_demand_count),
                        on_demand_percentage_above_base_capacity="0",
                        spot_instance_remedy=True, compensate_with_on_demand=True)
    else:
        spot = fleet.uses_spot
        types = list(fleet.instance_types)
        args = {"instance_charge_type": "PostPaid", "multi_az_policy": fleet.multi_az_policy,
                "on_demand_base_capacity": str(fleet.on_demand_base_capacity),
                "on_demand_percentage_above_base_capacity":
                    str(fleet.on_demand_percentage_above_base),
                "spot_strategy": fleet.spot_strategy if spot else "NoSpot"}
        if spot:
            args.update(spot_instance_pools=fleet.spot_instance_pools,
                        spot_instance_remedy=fleet.spot_instance_remedy,
                        compensate_with_on_demand=fleet.compensate_with_on_demand)
    if spot and fleet.spot_strategy == "SpotWithPriceLimit" and limits is not None:
        args["spot_price_limits"] = [alicloud.cs.NodePoolSpotPriceLimitArgs(
            instance_type=name, price_limit=f"{limits:g}") for name in types]
    return args


def sizing(fleet: TrainingFleet | ScalingFleet, nodes: int | None = None) -> dict[str, Any]:
    """desired_size or scaling_config, never both and never a zero-value scaling_config (a
    stored zero config re-enabled autoscaling and scaled managed pools to 0, TF #3821):
    fixed nodes (training, or a scaling fleet with desired_size) get desired_size; a scaling
    fleet without one gets the cluster autoscaler between min_size and max_size, which then
    owns the node count."""
    if isinstance(fleet, TrainingFleet):
        return {"desired_size": str(nodes if nodes is not None else fleet.nodes)}
    if fleet.desired_size is not None:
        return {"desired_size": str(fleet.desired_size)}
    return {"scaling_config": alicloud.cs.NodePoolScalingConfigArgs(
        enable=True, min_size=fleet.min_size, max_size=fleet.max_size,
        type=ACK_POOL_SCALING_TYPE)}


def autoscaled(fleet: TrainingFleet | ScalingFleet) -> bool:
    """Whether the cluster autoscaler owns the pool's size."""
    return isinstance(fleet, ScalingFleet) and fleet.desired_size is None


class SystemPool(pulumi.ComponentResource):
    """The CPU pool for add-ons and job controllers: `config.nodes` nodes of the first
    available type of `config.instance_types` over `vswitch_ids`, label
    `gpu-infra/pool=system`, no taint, encrypted AutoPL system disk, hardened metadata,
    CloudMonitor agent, managed auto-repair.

    Outputs: `node_pool_id`, `labels`."""

    TYPE = "gpu-infra:ack:SystemPool"

    def __init__(self, name: str, *, config: SystemPoolConfig, cluster_id: pulumi.Input[str],
                 vswitch_ids: Sequence[pulumi.Input[str]], image_type: str,
                 conventions: Conventions, kms_key_id: pulumi.Input[str] | None = None,
                 key_name: pulumi.Input[str] | None = None,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__(self.TYPE, name, None, opts)
        pool = child_name(name, "pool")
        self.labels = {POOL_LABEL: SYSTEM_POOL_LABEL}
        self.pool = alicloud.cs.NodePool(
            pool, node_pool_name=pool, cluster_id=cluster_id, vswitch_ids=list(vswitch_ids),
            instance_types=list(config.instance_types), desired_size=str(config.nodes),
            instance_charge_type="PostPaid", image_type=image_type, key_name=key_name,
            labels=_labels(self.labels), management=_managed(), update_nodes=True,
            install_cloud_monitor=True,
            instance_metadata_options=alicloud.cs.NodePoolInstanceMetadataOptionsArgs(
                http_tokens=METADATA_HTTP_TOKENS),
            tags=conventions.tags_for(pool), **_system_disk(config.system_disk_gib, kms_key_id),
            opts=pulumi.ResourceOptions(parent=self))
        self.node_pool_id = self.pool.node_pool_id
        self.register_outputs({"node_pool_id": self.node_pool_id, "labels": self.labels})


class GpuNodePools(pulumi.ComponentResource):
    """The GPU pools of one fleet, every node tagged `GpuFleet=<name>` (the GPU alarms
    follow the tag), labelled `spec.labels`, tainted `nvidia.com/gpu=true:NoSchedule`
    (only pods that tolerate it, GPU jobs, land there), hardened metadata, CloudMonitor
    agent, encrypted AutoPL system and data disks, managed auto-repair, labels and taints
    pushed to running nodes (`update_nodes`).

    A training fleet: its nodes in one zone, packed into deployment sets (ForceNew on the
    pool) of at most 20, one pool per set (`<name>-pool`, `<name>-pool-001`, ...), filled in
    order at fixed desired_sizes, so that growing the fleet adds nodes and pools and never
    shrinks or renames a running pool; a capacity guarantee, when the stack has one, as the
    pools' private_pool_options (Target). A scaling fleet: one pool over its zones with its
    instance types in fallback order, on-demand base and percentage, spot pools, remedy and
    on-demand compensation; sized by `sizing` (an autoscaled pool ignores desiredSize, which
    the provider reads back from the cloud: the autoscaler's count is not drift).

    Outputs: `node_pool_ids`, `labels`, `taint` (key, value, effect)."""

    TYPE = "gpu-infra:ack:GpuNodePools"

    def __init__(self, name: str, *, fleet: TrainingFleet | ScalingFleet,
                 cluster_id: pulumi.Input[str], spec: GpuPoolSpec, conventions: Conventions,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__(self.TYPE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.labels = dict(spec.labels)
        self.taint = GPU_TAINT
        key, value, effect = GPU_TAINT
        if isinstance(fleet, TrainingFleet):
            counts = _split(fleet.nodes, DEPLOYMENT_SET_MAX_NODES)
            types = [fleet.instance_type]
        else:
            counts = [0]
            types = list(fleet.instance_types)
        self.deployment_sets = [alicloud.ecs.EcsDeploymentSet(
            child_name(name, f"ds-{i}"), deployment_set_name=child_name(name, f"ds-{i}"),
            strategy=spec.placement, description=f"{spec.placement} placement of {name}",
            opts=child) for i in range(len(counts))] if spec.placement else []
        private_pool = alicloud.cs.NodePoolPrivatePoolOptionsArgs(
            private_pool_options_match_criteria=spec.private_pool_match,
            private_pool_options_id=spec.private_pool_id) if spec.private_pool_id else None
        pool_opts = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(
            ignore_changes=["desiredSize"])) if autoscaled(fleet) else child
        self.pools: list[alicloud.cs.NodePool] = []
        for index, count in enumerate(counts):
            pool = pool_name(name, index)
            self.pools.append(alicloud.cs.NodePool(
                pool, node_pool_name=pool, cluster_id=cluster_id,
                vswitch_ids=list(spec.vswitch_ids), instance_types=types,
                image_type=spec.image_type, key_name=spec.key_name,
                deployment_set_id=self.deployment_sets[index].id
                if self.deployment_sets else None,
                private_pool_options=private_pool, resource_group_id=spec.resource_group_id,
                labels=_labels(self.labels),
                taints=[alicloud.cs.NodePoolTaintArgs(key=key, value=value, effect=effect)],
                update_nodes=True, management=_managed(), install_cloud_monitor=True,
                instance_metadata_options=alicloud.cs.NodePoolInstanceMetadataOptionsArgs(
                    http_tokens=METADATA_HTTP_TOKENS),
                data_disks=data_disks(spec.disks, spec.gpu_count, spec.kms_key_id) or None,
                tags=conventions.tags_for(pool, {FLEET_TAG_KEY: name}),
                **_system_disk(fleet.system_disk_gib, spec.kms_key_id), **charging(fleet),
                **sizing(fleet, count or None), **spec.extra,
                opts=pool_opts))
        self.node_pool_ids = [pool.node_pool_id for pool in self.pools]
        self.register_outputs({"node_pool_ids": self.node_pool_ids, "labels": self.labels,
                               "taint": list(self.taint)})


def pool_name(fleet: str, index: int) -> str:
    """`<fleet>-pool` for the first pool (a fleet's only one keeps its name when the fleet
    grows past a deployment set), `<fleet>-pool-001` and on for the next."""
    return child_name(fleet, f"pool-{index:03d}" if index else "pool")


def _split(nodes: int, size: int) -> list[int]:
    """`nodes` in groups of at most `size`, filled in order: 45 by 20 -> 20, 20, 5 (growing
    the fleet never lowers a running pool's size)."""
    full, rest = divmod(nodes, size)
    return [size] * full + ([rest] if rest else [])
