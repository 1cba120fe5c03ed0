"""Node data disks: ESSD AutoPL (cloud_auto) for fixed nodes, an ESSD PL1 twin for ESS
fleets, and the auto-snapshot policy for disks worth keeping.

Fixed nodes get each disk as a separate ecs.EcsDisk attached by ecs.EcsDiskAttachment
(`attach_disks`): the provider changes a disk's size (grow only), IOPS and bursting in place
(ResizeDisk online, ModifyDiskSpec) and its `delete_with_instance` (`keep`) with
ModifyDiskAttribute, while every inline `data_disks` field of ecs.Instance is ForceNew (a
disk edit would replace the node). A kept disk outlives its node (delete_with_instance
false) and is protected in prod itself, so its node need not be. Stacks whose nodes were
created with inline disks keep them (`storage.inline_disks`, `instance_data_disk_args`).
ESS scaling configurations have no separate attachment: their disks stay inline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import Conventions, child_name
from gpu_infra.schema.storage import DataDiskConfig, StorageConfig
from gpu_infra_facts.allowed import ESS_DATA_DISK_GIB
from gpu_infra_facts.autopl import AutoPlPerformance, autopl_performance

AUTOPL_CATEGORY = "cloud_auto"
"""ESSD AutoPL: the category with provisioned IOPS and bursting (ecs.Instance data disks)."""
ESS_CATEGORY = "cloud_essd"
"""ESS scaling configurations reject cloud_auto (provider validation: all, cloud,
ephemeral_ssd, cloud_essd, cloud_efficiency, cloud_ssd, local_disk), so fleets get ESSD."""
ESS_PERFORMANCE_LEVEL = "PL1"
"""PL1 has AutoPL's baseline formula (min{1800 + 50 x GiB, 50000} IOPS) without bursting."""
RESIZE_ONLINE = "online"
"""ecs.EcsDisk `type` (online|offline, provider default offline): how ResizeDisk grows an
attached disk; offline takes effect only after the instance restarts."""


@dataclass(frozen=True)
class NodeDisk:
    """One data disk each fixed node gets as a separate ecs.EcsDisk (`attach_disks`)."""

    name: str
    """The ECS disk name: the node's bootstrap finds the disk by it (instance metadata)."""
    size_gib: int
    provisioned_iops: int = 0
    bursting: bool = True
    keep: bool = False
    """Outlives its node (delete_with_instance false) and is protected in prod."""
    kms_key_id: pulumi.Input[str] | None = None
    snapshot_policy_id: pulumi.Input[str] | None = None


def attach_disks(node: str, *, instance: alicloud.ecs.Instance, zone_id: pulumi.Input[str],
                 disks: Sequence[NodeDisk], conventions: Conventions,
                 tags: Mapping[str, str] | None = None,
                 parent: pulumi.Resource) -> list[alicloud.ecs.EcsDisk]:
    """Create `node`'s disks in `zone_id` (encrypted ESSD AutoPL, `<node>-<disk>`), attach
    them to `instance` (`<node>-<disk>-attachment`) and, with a snapshot policy, apply it
    (`<node>-<disk>-snapshots`). `tags`: extra tags (e.g. the fleet's).

    An attachment is replaced delete-first: a disk is attached to one instance at a time, so
    when the node is replaced the disk is detached before it is attached to the new one (and
    a scratch disk, deleted only with an instance it is attached to, survives the swap).
    ValueError if a size or provisioned IOPS are beyond the AutoPL limits.
    """
    child = pulumi.ResourceOptions(parent=parent)
    created = []
    for spec in disks:
        autopl_performance(spec.size_gib, spec.provisioned_iops, spec.bursting)
        disk_name = child_name(node, spec.name)
        disk = alicloud.ecs.EcsDisk(
            disk_name, disk_name=spec.name, zone_id=zone_id, category=AUTOPL_CATEGORY,
            size=spec.size_gib, provisioned_iops=spec.provisioned_iops or None,
            bursting_enabled=spec.bursting, encrypted=True, kms_key_id=spec.kms_key_id,
            delete_with_instance=not spec.keep, type=RESIZE_ONLINE,
            tags=conventions.tags_for(disk_name, tags),
            opts=conventions.data_options(parent) if spec.keep else child)
        alicloud.ecs.EcsDiskAttachment(
            child_name(disk_name, "attachment"), disk_id=disk.id, instance_id=instance.id,
            delete_with_instance=not spec.keep,
            opts=pulumi.ResourceOptions(parent=parent, delete_before_replace=True))
        if spec.snapshot_policy_id is not None:
            alicloud.ecs.EcsAutoSnapshotPolicyAttachment(
                child_name(disk_name, "snapshots"), disk_id=disk.id,
                auto_snapshot_policy_id=spec.snapshot_policy_id, opts=child)
        created.append(disk)
    return created


def instance_data_disk_args(*, name: str, size_gib: int, provisioned_iops: int = 0,
                            bursting: bool = True, kms_key_id: pulumi.Input[str] | None = None,
                            delete_with_instance: bool = True,
                            auto_snapshot_policy_id: pulumi.Input[str] | None = None,
                            ) -> alicloud.ecs.InstanceDataDiskArgs:
    """An encrypted ESSD AutoPL data disk for `ecs.Instance(data_disks=[...])`.

    ValueError if the size or provisioned IOPS are beyond the AutoPL limits.
    """
    autopl_performance(size_gib, provisioned_iops, bursting)
    return alicloud.ecs.InstanceDataDiskArgs(
        name=name, size=size_gib, category=AUTOPL_CATEGORY,
        provisioned_iops=provisioned_iops or None, bursting_enabled=bursting,
        encrypted=True, kms_key_id=kms_key_id, delete_with_instance=delete_with_instance,
        auto_snapshot_policy_id=auto_snapshot_policy_id)


def scaling_data_disk_args(*, name: str, size_gib: int,
                           kms_key_id: pulumi.Input[str] | None = None,
                           auto_snapshot_policy_id: pulumi.Input[str] | None = None,
                           ) -> alicloud.ess.ScalingConfigurationDataDiskArgs:
    """The ESS twin of an AutoPL disk: encrypted ESSD PL1 of the same size (raised to PL1's
    20 GiB minimum), always deleted with the instance (scaled-in nodes are disposable).

    ESS rejects cloud_auto and has no bursting field, and provisioned IOPS apply to AutoPL
    only, so they are dropped. ValueError above ESS's 32768 GiB (the schema refuses such a
    stack first: ClusterBase's ESS disk check).
    """
    low, high = ESS_DATA_DISK_GIB
    if size_gib > high:
        raise ValueError(f"size_gib: {size_gib} GiB is above ESS's cloud_essd limit; "
                         f"allowed up to {high} GiB")
    return alicloud.ess.ScalingConfigurationDataDiskArgs(
        name=name, size=max(size_gib, low), category=ESS_CATEGORY,
        performance_level=ESS_PERFORMANCE_LEVEL, encrypted=True, kms_key_id=kms_key_id,
        delete_with_instance=True, auto_snapshot_policy_id=auto_snapshot_policy_id)


class DataDisks(pulumi.ComponentResource):
    """The data disks every node of a fleet gets (`config.disks`), and their snapshot
    policy (`config.snapshots`).

    Creates an `ecs.AutoSnapshotPolicy` when `take_snapshots` is on (default off) and a
    disk has `keep`. `gpu_count` sizes the per-GPU disks. Callers take `node_disks()`
    (GpuNodes, separate disks), `instance_disks()` (GpuNodes with `storage.inline_disks`) or
    `scaling_disks()` (ESS).
    Outputs: `snapshot_policy_id` (or None), `performance` (disk name -> AutoPL figures).
    """

    snapshot_policy: alicloud.ecs.AutoSnapshotPolicy | None

    def __init__(self, name: str, *, config: StorageConfig, gpu_count: int,
                 conventions: Conventions, take_snapshots: bool = False,
                 kms_key_id: pulumi.Input[str] | None = None,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-infra:storage:DataDisks", name, None, opts)
        self.disks = list(config.disks)
        self.gpu_count = gpu_count
        self.kms_key_id = kms_key_id
        self.performance: dict[str, AutoPlPerformance] = {
            disk.name: autopl_performance(disk.size_for(gpu_count), disk.provisioned_iops,
                                          disk.bursting) for disk in self.disks}
        self.holds_data = any(disk.keep for disk in self.disks)
        """A disk is kept: inline, protect its instances (`conventions.data_options(...)`)."""
        self.snapshot_policy = None
        if take_snapshots and self.holds_data:
            schedule = config.snapshots
            policy_name = child_name(name, "snapshots")
            self.snapshot_policy = alicloud.ecs.AutoSnapshotPolicy(
                policy_name, auto_snapshot_policy_name=policy_name,
                time_points=[str(hour) for hour in schedule.time_points],
                repeat_weekdays=[str(day) for day in schedule.repeat_weekdays],
                retention_days=schedule.retention_days, tags=conventions.tags_for(policy_name),
                opts=pulumi.ResourceOptions(parent=self))
        self.snapshot_policy_id: pulumi.Output[str] | None = (
            self.snapshot_policy.id if self.snapshot_policy else None)
        self.register_outputs({
            "snapshot_policy_id": self.snapshot_policy_id,
            "performance": {disk: vars(perf) for disk, perf in self.performance.items()}})

    def node_disks(self) -> list[NodeDisk]:
        """The separate disks of each fixed node (`attach_disks`): kept ones snapshotted."""
        return [NodeDisk(name=disk.name, size_gib=disk.size_for(self.gpu_count),
                         provisioned_iops=disk.provisioned_iops, bursting=disk.bursting,
                         keep=disk.keep, kms_key_id=self.kms_key_id,
                         snapshot_policy_id=self._policy_for(disk)) for disk in self.disks]

    def instance_disks(self) -> list[alicloud.ecs.InstanceDataDiskArgs]:
        """Inline `data_disks` for each ecs.Instance (`storage.inline_disks`): AutoPL,
        encrypted, kept disks snapshotted."""
        return [instance_data_disk_args(
            name=disk.name, size_gib=disk.size_for(self.gpu_count),
            provisioned_iops=disk.provisioned_iops, bursting=disk.bursting,
            kms_key_id=self.kms_key_id, delete_with_instance=not disk.keep,
            auto_snapshot_policy_id=self._policy_for(disk)) for disk in self.disks]

    def scaling_disks(self) -> list[alicloud.ess.ScalingConfigurationDataDiskArgs]:
        """`data_disks` for an ESS scaling configuration (ESSD PL1; see scaling_data_disk_args)."""
        return [scaling_data_disk_args(
            name=disk.name, size_gib=disk.size_for(self.gpu_count), kms_key_id=self.kms_key_id,
            auto_snapshot_policy_id=self._policy_for(disk)) for disk in self.disks]

    def _policy_for(self, disk: DataDiskConfig) -> pulumi.Output[str] | None:
        return self.snapshot_policy_id if disk.keep else None


__all__ = ["DataDisks", "NodeDisk"]
