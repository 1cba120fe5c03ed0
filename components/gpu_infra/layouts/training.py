"""A training cluster: fixed GPU nodes close together in one zone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi

from gpu_infra.blocks.bootstrap.permissions import grant_bootstrap
from gpu_infra.blocks.compute.fleet_ops import account_id
from gpu_infra.blocks.compute.images import image_id_for
from gpu_infra.blocks.compute.nodes import GpuNodes, NodeDiskArgs
from gpu_infra.blocks.compute.reserved import ReservedCapacity
from gpu_infra.knowhow.placement import erdma_for
from gpu_infra.layouts.base import LayoutBase, gpu_fleet_name
from gpu_infra.schema import FleetCluster, TrainingConfig
from gpu_infra.schema.compute import TrainingFleet

SESSION_COMMAND = "ali-instance-cli session --instance "
"""Cloud Assistant session (no public IP, no open SSH port): Alibaba's session manager CLI."""


class TrainingCluster(LayoutBase):
    """N GPU nodes in the first zone of `network.zones`: a LowLatency deployment set and
    eRDMA where the family supports them, ESSD AutoPL data disks, the shared file system
    and buckets from LayoutBase, optional reserved capacity, GPU alarms per instance.

    Extra outputs: `node_private_ips`, `instance_ids`, `deployment_set_ids`.
    """

    TYPE = "gpu-infra:layouts:TrainingCluster"
    CONFIG = TrainingConfig
    FIXED_NODES = True
    cluster: TrainingConfig
    nodes: GpuNodes
    reserved: ReservedCapacity | None

    def fleet_zones(self) -> list[str]:
        """Training nodes share one zone: the first of `network.zones`."""
        return self.cluster.network.zones[:1]

    def instance_type(self) -> str:
        """The nodes' instance type."""
        return self.cluster.fleet.instance_type

    def build_fleet(self, name: str) -> tuple[str, pulumi.Input[Sequence[str]]]:
        """GpuNodes (and reserved capacity) in the first zone."""
        fleet = self.cluster.fleet
        zone = self.fleet_zones()[0]
        self.nodes = GpuNodes(
            gpu_fleet_name(name), config=fleet, vswitch_id=self.network.vswitch_ids[zone],
            security_group_ids=[self.security.security_group_id],
            image_id=image_id_for(fleet.image),
            conventions=self.conventions, key_name=self.security.key_pair_name,
            role_name=self.role_name, user_data=self.node_user_data(gpu_fleet_name(name)),
            config_command=self.node_config_command(gpu_fleet_name(name)),
            kms_key_id=self.kms_key_id, gpu_types=self.cluster.gpu_types, opts=self.child,
            **self._disk_args(zone))
        self.reserved = ReservedCapacity(
            f"{name}-reserved", config=fleet.reserved, instance_type=fleet.instance_type,
            zone_id=zone, conventions=self.conventions,
            opts=self.child) if fleet.reserved else None
        self.bootstrap_grant = grant_bootstrap(
            gpu_fleet_name(name), role_name=self.role_name, account=account_id(self),
            conventions=self.conventions, parent=self.nodes, peers=True)
        return gpu_fleet_name(name), pulumi.Output.all(*self.nodes.instance_ids)

    def _disk_args(self, zone: str) -> NodeDiskArgs:
        """GpuNodes' disk arguments: separate disks in the nodes' zone, or inline ones
        (`storage.inline_disks`) whose nodes are protected with the stack's data (prod)
        when a disk is kept."""
        if self.cluster.storage.inline_disks:
            return {"data_disks": self.disks.instance_disks(),
                    "protect": self.conventions.protect_data and self.disks.holds_data}
        return {"attached_disks": self.disks.node_disks(), "zone_id": zone}

    def fleet_instance_names(self) -> pulumi.Input[Sequence[str]]:
        """The nodes' instance names."""
        return pulumi.Output.all(*[node.instance_name for node in self.nodes.instances])

    @classmethod
    def uses_erdma(cls, cluster: FleetCluster) -> bool:
        """eRDMA as the fleet asks (auto: where the family has it)."""
        return isinstance(cluster.fleet, TrainingFleet) and erdma_for(cluster.fleet,
                                                                       cluster.gpu_types)

    @classmethod
    def uses_jumbo_frames(cls, cluster: FleetCluster) -> bool:
        """`fleet.jumbo_frames` (the nodes have them enabled)."""
        return isinstance(cluster.fleet, TrainingFleet) and cluster.fleet.jumbo_frames

    @classmethod
    def wires_cluster(cls) -> bool:
        """Training nodes learn each other at boot and at job start."""
        return True

    def fleet_exports(self) -> dict[str, pulumi.Input[Any]]:
        """Node addresses and placement, and the command that opens a shell on node 0."""
        return {"node_private_ips": self.nodes.private_ips,
                "instance_ids": self.nodes.instance_ids,
                "deployment_set_ids": self.nodes.deployment_set_ids,
                "node0_shell": pulumi.Output.concat(SESSION_COMMAND,
                                                    self.nodes.instance_ids[0])}


__all__ = ["TrainingCluster"]
