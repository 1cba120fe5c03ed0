"""Node data disks: ESSD AutoPL (cloud_auto) for instances, an ESSD PL1 twin for ESS fleets,
and the auto-snapshot policy for disks worth keeping.

Disks are declared inline on the instance (`data_disks`), so they are created, encrypted and
released with it. A kept disk sets `delete_with_instance=False`, so replacing or deleting an
instance leaves the disk (and its snapshots) behind; the instance that carries it should be
created with `conventions.data_options(...)` (see `DataDisks.holds_data`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import Conventions, child_name
from gpu_infra.limits.autopl import AutoPlPerformance, autopl_performance

AUTOPL_CATEGORY = "cloud_auto"
"""ESSD AutoPL: the category with provisioned IOPS and bursting (ecs.Instance data disks)."""
ESS_CATEGORY = "cloud_essd"
"""ESS scaling configurations reject cloud_auto (provider validation: all, cloud,
ephemeral_ssd, cloud_essd, cloud_efficiency, cloud_ssd, local_disk), so fleets get ESSD."""
ESS_PERFORMANCE_LEVEL = "PL1"
"""PL1 has AutoPL's baseline formula (min{1800 + 50 x GiB, 50000} IOPS) without bursting."""
ESS_ESSD_SIZE_RANGE = (20, 32768)
"""Sizes (GiB) ESS accepts for a cloud_essd data disk (PL1 needs at least 20)."""
WEEKDAYS = range(1, 8)
HOURS = range(0, 24)


@dataclass(frozen=True)
class DiskSpec:
    """One data disk of every node, as the caller's config describes it."""

    name: str
    size_gib: int
    per_gpu: bool = False
    """size_gib is per GPU: the disk is size_gib x the node's GPU count."""
    provisioned_iops: int = 0
    bursting: bool = True
    keep: bool = False
    """Data worth keeping: outlives the instance, snapshotted and protected in prod."""

    def size_for(self, gpu_count: int) -> int:
        """The disk's size on a node with `gpu_count` GPUs."""
        return self.size_gib * max(gpu_count, 1) if self.per_gpu else self.size_gib


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
    """The data disks every node of a fleet gets, and their snapshot policy.

    Creates an `ecs.AutoSnapshotPolicy` when `snapshots` is on and a disk has `keep`.
    Callers take `instance_disks(gpu_count)` (GpuNodes) or `scaling_disks(gpu_count)` (ESS).
    Outputs: `snapshot_policy_id` (or None), `performance` (disk name -> AutoPL figures).
    """

    snapshot_policy: alicloud.ecs.AutoSnapshotPolicy | None

    def __init__(self, name: str, *, disks: Sequence[DiskSpec], gpu_count: int,
                 conventions: Conventions, kms_key_id: pulumi.Input[str] | None = None,
                 snapshots: bool = False, time_points: Sequence[int] = (2,),
                 repeat_weekdays: Sequence[int] = tuple(WEEKDAYS), retention_days: int = 7,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-infra:storage:DataDisks", name, None, opts)
        self.disks = list(disks)
        self.gpu_count = gpu_count
        self.kms_key_id = kms_key_id
        self.performance: dict[str, AutoPlPerformance] = {
            disk.name: autopl_performance(disk.size_for(gpu_count), disk.provisioned_iops,
                                          disk.bursting) for disk in self.disks}
        self.holds_data = any(disk.keep for disk in self.disks)
        """A disk is kept: create the instances with `conventions.data_options(...)`."""
        self.snapshot_policy = None
        if snapshots and self.holds_data:
            _check_schedule(time_points, repeat_weekdays, retention_days)
            policy_name = child_name(name, "snapshots")
            self.snapshot_policy = alicloud.ecs.AutoSnapshotPolicy(
                policy_name, auto_snapshot_policy_name=policy_name,
                time_points=[str(hour) for hour in time_points],
                repeat_weekdays=[str(day) for day in repeat_weekdays],
                retention_days=retention_days, tags=conventions.tags_for(policy_name),
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

    def _policy_for(self, disk: DiskSpec) -> pulumi.Output[str] | None:
        return self.snapshot_policy_id if disk.keep else None


def _check_schedule(time_points: Sequence[int], repeat_weekdays: Sequence[int],
                    retention_days: int) -> None:
    problems = [f"time_points: {hour} is not 0-23" for hour in time_points if hour not in HOURS]
    problems += [f"repeat_weekdays: {day} is not 1-7" for day in repeat_weekdays
                 if day not in WEEKDAYS]
    if retention_days != -1 and not 1 <= retention_days <= 65536:
        problems.append(f"retention_days: {retention_days}; allowed 1 to 65536 or -1")
    if problems:
        raise ValueError("\n".join(problems))
