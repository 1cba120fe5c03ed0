"""Node data disks: ESSD AutoPL (cloud_auto) for instances, an ESSD PL1 twin for ESS fleets,
and the auto-snapshot policy for disks worth keeping.

Disks are declared inline on the instance (`data_disks`), so they are created, encrypted and
released with it. A kept disk sets `delete_with_instance=False`, so replacing or deleting an
instance leaves the disk (and its snapshots) behind; the instance that carries it should be
created with `conventions.data_options(...)` (see `DataDisks.holds_data`).
"""

from __future__ import annotations

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import Conventions, child_name
from gpu_infra.limits.autopl import AutoPlPerformance, autopl_performance
from gpu_infra.schema.storage import DataDiskConfig, StorageConfig

AUTOPL_CATEGORY = "cloud_auto"
"""ESSD AutoPL: the category with provisioned IOPS and bursting (ecs.Instance data disks)."""
ESS_CATEGORY = "cloud_essd"
"""ESS scaling configurations reject cloud_auto (provider validation: all, cloud,
ephemeral_ssd, cloud_essd, cloud_efficiency, cloud_ssd, local_disk), so fleets get ESSD."""
ESS_PERFORMANCE_LEVEL = "PL1"
"""PL1 has AutoPL's baseline formula (min{1800 + 50 x GiB, 50000} IOPS) without bursting."""
ESS_ESSD_SIZE_RANGE = (20, 32768)
"""Sizes (GiB) ESS accepts for a cloud_essd data disk (PL1 needs at least 20)."""


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
    only, so they are dropped. ValueError above ESS's 32768 GiB.
    """
    low, high = ESS_ESSD_SIZE_RANGE
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
    disk has `keep`. `gpu_count` sizes the per-GPU disks. Callers take `instance_disks()`
    (GpuNodes) or `scaling_disks()` (ESS).
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
        """A disk is kept: create the instances with `conventions.data_options(...)`."""
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

    def instance_disks(self) -> list[alicloud.ecs.InstanceDataDiskArgs]:
        """`data_disks` for each ecs.Instance: AutoPL, encrypted, kept disks snapshotted."""
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

