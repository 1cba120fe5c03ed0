"""A training cluster: fixed GPU nodes close together in one zone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi

from gpu_infra.blocks.bootstrap import trust_names
from gpu_infra.blocks.bootstrap.permissions import grant_bootstrap
from gpu_infra.blocks.compute.fleet_ops import account_id
from gpu_infra.blocks.compute.images import image_id_for
from gpu_infra.blocks.compute.nodes import GpuNodes, NodeDiskArgs
from gpu_infra.blocks.compute.reserved import ReservedCapacity
from gpu_infra.blocks.compute.trust import NodeTrust
from gpu_infra.layouts.base import LayoutBase
from gpu_infra.layouts.jobs import ready_job
from gpu_infra.nodeplan.plans import gpu_fleet_name, restore_command
from gpu_infra.schema import TrainingConfig

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
    cluster: TrainingConfig
    nodes: GpuNodes
    trust: NodeTrust
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
        names = trust_names(gpu_fleet_name(name), self.conventions.global_suffix)
        self.trust = NodeTrust(gpu_fleet_name(name), names=names, conventions=self.conventions,
                               kms_key_id=self.kms_key_id, opts=self.child)
        # the nodes' first boot reads the keys: their user data waits for them (a
        # component's depends_on does not reach its children), and for the node tools
        user_data = pulumi.Output.all(self.node_user_data(gpu_fleet_name(name)),
                                      *[key.id for key in self.trust.keys]).apply(
            lambda values: str(values[0]))
        self.nodes = GpuNodes(
            gpu_fleet_name(name), config=fleet, vswitch_id=self.network.vswitch_ids[zone],
            security_group_ids=[self.security.security_group_id],
            image_id=image_id_for(fleet.image),
            conventions=self.conventions, key_name=self.security.key_pair_name,
            role_name=self.role_name, user_data=user_data,
            config_command=self.node_config_command(gpu_fleet_name(name)),
            kms_key_id=self.kms_key_id, gpu_types=self.cluster.gpu_types,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.node_tools])
            if self.node_tools else self.child,
            **self._disk_args(zone))
        self.reserved = ReservedCapacity(
            f"{name}-reserved", config=fleet.reserved, instance_type=fleet.instance_type,
            zone_id=zone, conventions=self.conventions,
            opts=self.child) if fleet.reserved else None
        self.trust.publish_nodes(self.nodes.instance_ids)
        self.bootstrap_grant = grant_bootstrap(
            gpu_fleet_name(name), role_name=self.role_name, account=account_id(self),
            conventions=self.conventions, parent=self.nodes, trust=names,
            registry_scopes=self.registry.pull_scopes if self.registry else None)
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

    def fleet_exports(self) -> dict[str, pulumi.Input[Any]]:
        """Node addresses and placement, the command that opens a shell on node 0, the ready
        training job (`gpu-infra job`) and, on spot fleets, the command that restores a
        reclaimed node."""
        spot = {"restore_command": restore_command(self.stack_name)} \
            if self.cluster.fleet.capacity == "spot" else {}
        return {**spot, "training_job": ready_job(self.cluster, self.stack_name).text,
                "node_private_ips": self.nodes.private_ips,
                "instance_ids": self.nodes.instance_ids,
                "deployment_set_ids": self.nodes.deployment_set_ids,
                "node0_shell": pulumi.Output.concat(SESSION_COMMAND,
                                                    self.nodes.instance_ids[0])}


__all__ = ["TrainingCluster"]
