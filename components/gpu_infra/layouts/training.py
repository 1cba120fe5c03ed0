"""A training cluster: GPU nodes close together in one zone (fixed nodes, and spot workers
in a scaling group)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi

from gpu_infra.blocks.bootstrap import NodeTrustNames, trust_names
from gpu_infra.blocks.bootstrap.permissions import grant_bootstrap
from gpu_infra.blocks.compute.fleet_ops import account_id
from gpu_infra.blocks.compute.images import image_id_for
from gpu_infra.blocks.compute.nodes import GpuNodes, NodeDiskArgs
from gpu_infra.blocks.compute.reserved import ReservedCapacity
from gpu_infra.blocks.compute.scaling import GpuScalingGroup
from gpu_infra.blocks.compute.trust import NodeTrust
from gpu_infra.knowhow.node_software import driver_plan
from gpu_infra.layouts.base import LayoutBase
from gpu_infra.layouts.jobs import ready_job
from gpu_infra.nodeplan.plans import SpotWorkers, gpu_fleet_name
from gpu_infra.schema import TrainingConfig
from gpu_infra_facts import jobs
from gpu_infra_facts.jobs import UpstreamImage
from gpu_infra_facts.node_stack import READINESS_TIMEOUT_SECONDS

SPOT_WORKERS_SUFFIX = "spot"
"""The spot workers' scaling group is `<cluster>-gpu-spot` beside fixed nodes (`<cluster>-gpu`),
else `<cluster>-gpu` itself."""
SESSION_COMMAND = "ali-instance-cli session --instance "
"""Cloud Assistant session (no public IP, no open SSH port): Alibaba's session manager CLI."""


class TrainingCluster(LayoutBase):
    """N GPU nodes in the first zone of `network.zones`: fixed nodes (GpuNodes: a
    LowLatency deployment set and eRDMA where the family supports them, ESSD AutoPL data
    disks, GPU alarms per instance) and, on spot capacity, the spot workers behind the
    on-demand ones (GpuScalingGroup, SPOT_WORKERS_SUFFIX: ESS replaces a reclaimed worker,
    which joins the running job), the shared file system and buckets from LayoutBase,
    optional reserved capacity.

    Extra outputs: `node_private_ips`, `instance_ids`, `deployment_set_ids` and `node0_shell`
    (the fixed nodes), `spot_scaling_group_id` (spot workers).
    """

    TYPE = "gpu-infra:layouts:TrainingCluster"
    CONFIG = TrainingConfig
    cluster: TrainingConfig
    nodes: GpuNodes | None
    workers: GpuScalingGroup | None
    trust: NodeTrust | None
    reserved: ReservedCapacity | None

    def fleet_zones(self) -> list[str]:
        """Training nodes share one zone: the first of `network.zones`."""
        return self.cluster.network.zones[:1]

    def instance_type(self) -> str:
        """The nodes' instance type."""
        return self.cluster.fleet.instance_type

    def mirrored_images(self) -> tuple[UpstreamImage, ...]:
        """The node images and the training job's default image (jobs.TRAINING_IMAGE)."""
        return (*super().mirrored_images(), jobs.TRAINING_IMAGE)

    def build_fleet(self, name: str) -> tuple[str, pulumi.Input[Sequence[str]] | None]:
        """The fixed nodes, the spot workers and reserved capacity in the first zone; the
        fleet's alarms go by instance id with fixed nodes only, else by tag."""
        fleet = self.cluster.fleet
        zone = self.fleet_zones()[0]
        fleet_name = gpu_fleet_name(name)
        names = trust_names(fleet_name, self.conventions.global_suffix)
        self.nodes, self.trust = None, None
        if fleet.fixed_nodes:
            self._build_nodes(name, zone, names)
        self.workers = self._build_workers(name, zone) if fleet.spot_workers else None
        self.reserved = ReservedCapacity(
            f"{name}-reserved", config=fleet.reserved, instance_type=fleet.instance_type,
            zone_id=zone, conventions=self.conventions,
            opts=self.child) if fleet.reserved else None
        self.bootstrap_grant = grant_bootstrap(
            fleet_name, role_name=self.role_name, account=account_id(self),
            conventions=self.conventions, parent=self.nodes or self.workers or self,
            scaling_group_id=self.workers.scaling_group_id if self.workers else None,
            trust=names if self.nodes else None,
            registry_scopes=self.registry.pull_scopes if self.registry else None)
        if self.nodes is None or self.workers is not None:
            return fleet_name, None
        return fleet_name, pulumi.Output.all(*self.nodes.instance_ids)

    def _build_nodes(self, name: str, zone: str, names: NodeTrustNames) -> None:
        """The fixed nodes (every node but the spot workers) and their trust."""
        fleet = self.cluster.fleet
        fleet_name = gpu_fleet_name(name)
        self.trust = NodeTrust(fleet_name, names=names, conventions=self.conventions,
                               kms_key_id=self.kms_key_id, opts=self.child)
        # the nodes' first boot reads the keys: their user data waits for them (a
        # component's depends_on does not reach its children), and for the node tools
        user_data = pulumi.Output.all(self.node_user_data(fleet_name),
                                      *[key.id for key in self.trust.keys]).apply(
            lambda values: str(values[0]))
        # on a spot fleet the fixed nodes are its on-demand ones
        fixed = fleet.model_copy(update={"nodes": fleet.fixed_nodes, "capacity": "on_demand",
                                         "on_demand_nodes": None}) \
            if fleet.capacity == "spot" else fleet
        self.nodes = GpuNodes(
            fleet_name, config=fixed,
            vswitch_id=self.network.vswitch_ids[zone],
            security_group_ids=[self.security.security_group_id],
            image_id=image_id_for(fleet.image),
            conventions=self.conventions, key_name=self.security.key_pair_name,
            role_name=self.role_name, user_data=user_data,
            config_command=self.node_config_command(fleet_name),
            kms_key_id=self.kms_key_id, gpu_types=self.cluster.gpu_types,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.node_tools])
            if self.node_tools else self.child,
            **self._disk_args(zone))
        self.trust.publish_nodes(self.nodes.instance_ids)

    def _build_workers(self, name: str, zone: str) -> GpuScalingGroup:
        """The spot workers: a scaling group in the nodes' zone, tagged as the fleet, booting
        the workers' bootstrap (SpotWorkers: no wiring, the spot watcher) with their own
        node tools, eRDMA as the fixed nodes have it, ESSD data disks (ESS takes no AutoPL)."""
        fleet = self.cluster.fleet
        fleet_name = gpu_fleet_name(name)
        plan, tools = self.node_plan, self.node_tools
        if fleet.fixed_nodes:  # the fleet's plan and tools are the fixed nodes'
            plan = SpotWorkers(self.cluster)
            tools = self._build_node_tools(name, plan, part="-spot") if tools else None
        route = driver_plan(fleet).route or "auto_install"
        return GpuScalingGroup(
            f"{fleet_name}-{SPOT_WORKERS_SUFFIX}" if fleet.fixed_nodes else fleet_name,
            config=fleet.spot_group(),
            vswitch_ids=[self.network.vswitch_ids[zone]],
            security_group_ids=[self.security.security_group_id],
            image_id=image_id_for(fleet.image), conventions=self.conventions,
            key_name=self.security.key_pair_name, role_name=self.role_name,
            user_data=lambda group_id, hook_id: self.node_user_data(
                fleet_name, group_id, hook_id, plan=plan, tools=tools),
            readiness_seconds=READINESS_TIMEOUT_SECONDS[route],
            data_disks=self.disks.scaling_disks(), kms_key_id=self.kms_key_id,
            health_check_types=["ECS"], fleet_tag=fleet_name, erdma=plan.uses_erdma(),
            resource_group_id=self.alerting.resource_group_id if self.alerting else None,
            opts=self.child)

    def _disk_args(self, zone: str) -> NodeDiskArgs:
        """GpuNodes' disk arguments: separate disks in the nodes' zone, or inline ones
        (`storage.inline_disks`) whose nodes are protected with the stack's data (prod)
        when a disk is kept."""
        if self.cluster.storage.inline_disks:
            return {"data_disks": self.disks.instance_disks(),
                    "protect": self.conventions.protect_data and self.disks.holds_data}
        return {"attached_disks": self.disks.node_disks(), "zone_id": zone}

    def fleet_instance_names(self) -> pulumi.Input[Sequence[str]] | None:
        """The fixed nodes' instance names (None with spot workers: alarms go by tag)."""
        if self.nodes is None or self.workers is not None:
            return None
        return pulumi.Output.all(*[node.instance_name for node in self.nodes.instances])

    def fleet_exports(self) -> dict[str, pulumi.Input[Any]]:
        """Node addresses and placement and the command that opens a shell on node 0 (fixed
        nodes), the spot workers' scaling group, and the ready training job (`gpu-infra
        job`)."""
        exports: dict[str, pulumi.Input[Any]] = {
            "training_job": ready_job(self.cluster, self.stack_name).text}
        if self.workers is not None:
            exports["spot_scaling_group_id"] = self.workers.scaling_group_id
        if self.nodes is not None:
            exports.update({
                "node_private_ips": self.nodes.private_ips,
                "instance_ids": self.nodes.instance_ids,
                "deployment_set_ids": self.nodes.deployment_set_ids,
                "node0_shell": pulumi.Output.concat(SESSION_COMMAND,
                                                    self.nodes.instance_ids[0])})
        return exports


__all__ = ["SPOT_WORKERS_SUFFIX", "TrainingCluster"]
