"""Fixed GPU nodes: N ECS instances in one vSwitch, placed by deployment sets.

Representation: one ecs.Instance per node (plus one ecs.RamRoleAttachment each), not a
scaling group: training nodes are long-lived, individually addressable (host names, NCCL
ranks), need deployment sets and eRDMA on the primary interface, and must never be
replaced by a scaling activity.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence
from typing import TypedDict

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra import catalog
from gpu_infra.blocks.bootstrap import CONFIG_RUN_SECONDS, NODE_WRITTEN_TAGS
from gpu_infra.blocks.conventions import FLEET_TAG_KEY, Conventions, child_name
from gpu_infra.blocks.storage.disks import NodeDisk, attach_disks
from gpu_infra.knowhow.placement import erdma_for, placement_for
from gpu_infra.schema.compute import TrainingFleet

METADATA_HTTP_TOKENS = "required"
"""ecs.Instance http_tokens (optional|required, provider default optional): metadata only in
hardened mode (IMDSv2 tokens), so a request forged through a workload cannot read the
node's RAM role credentials. Updatable in place (ModifyInstanceMetadataOptions)."""
DEPLOYMENT_SET_MAX_INSTANCES = catalog.LOW_LATENCY_MAX_INSTANCES
"""Instances per deployment set in one zone (20, for LowLatency and Availability alike)."""
PREPAID_RENEW_PERIODS = 1
"""Periods a PrePaid node renews by (valid for Month and Week units alike)."""
IGNORED_ON_RUNNING_NODES = ["userData"]
"""Inputs an update does not push to existing nodes unless `fleet.push_user_data`:
cloud-init runs user data on the first boot only, and changing it stops and starts the
instance (the provider's update), so a new bootstrap reaches new nodes only (a replaced
node keeps the recorded value too: Pulumi substitutes it for ignored inputs)."""
IGNORED_NODE_TAGS = [f'tags["{key}"]' for key in NODE_WRITTEN_TAGS]
"""The tags the nodes write themselves (health, public keys): not in the stack's tags, so
without this an update after `pulumi refresh` would remove them and peers would lose the
node."""
CONFIG_DISPATCH_SECONDS = 300
PER_NODE_SECONDS = 1
"""What the configuration invocation may take beyond its command's own timeout
(blocks.bootstrap.CONFIG_RUN_SECONDS): Cloud Assistant's delivery, and a second per node of
the fleet (UNCONFIRMED: the API reference gives no delivery rate). The provider waits for
the invocation's Success for its create timeout, 1 minute unless set
(resource_alicloud_ecs_invocation.go), and fails `pulumi up` when it passes."""


def invocation_timeout(nodes: int) -> str:
    """The configuration invocation's create timeout for a fleet of `nodes`, in minutes."""
    seconds = CONFIG_RUN_SECONDS + CONFIG_DISPATCH_SECONDS + PER_NODE_SECONDS * nodes
    return f"{math.ceil(seconds / 60)}m"
IGNORED_INLINE_DISKS = "dataDisks"
"""Also ignored on nodes with inline data disks: every field of ecs.Instance data_disks is
ForceNew, so a disk edit would replace the node; it reaches new nodes only."""


class ChargingArgs(TypedDict, total=False):
    """The ecs.Instance arguments that say how a node is paid for."""

    instance_charge_type: str
    spot_strategy: str
    spot_price_limit: float | None
    period: int
    period_unit: str
    renewal_status: str
    auto_renew_period: int
    force_delete: bool


class NodeDiskArgs(TypedDict, total=False):
    """The GpuNodes arguments that say how the nodes get their data disks."""

    data_disks: Sequence[alicloud.ecs.InstanceDataDiskArgs]
    attached_disks: Sequence[NodeDisk]
    zone_id: pulumi.Input[str]
    protect: bool


def charging_args(fleet: TrainingFleet, index: int = 0) -> ChargingArgs:
    """ecs.Instance charging arguments of node `index` under `fleet.capacity`: on_demand
    (PostPaid, NoSpot), spot (PostPaid + spot_strategy, and spot_price_limit with
    SpotWithPriceLimit; the first `fleet.on_demand_count` nodes on demand) or prepaid
    (PrePaid for prepaid_period prepaid_period_unit, renewed automatically one period at a
    time so nodes never expire mid-run, and force_delete so that removing a node works: the
    provider refuses to delete a PrePaid instance without it). spot_strategy and
    spot_price_limit force the replacement of existing instances when changed (ForceNew)."""
    if fleet.capacity == "prepaid":
        return {"instance_charge_type": "PrePaid", "period": fleet.prepaid_period,
                "period_unit": fleet.prepaid_period_unit, "renewal_status": "AutoRenewal",
                "auto_renew_period": PREPAID_RENEW_PERIODS, "force_delete": True}
    if fleet.capacity == "spot" and index >= fleet.on_demand_count:
        args: ChargingArgs = {"instance_charge_type": "PostPaid",
                              "spot_strategy": fleet.spot_strategy}
        if fleet.spot_strategy == "SpotWithPriceLimit":
            args["spot_price_limit"] = fleet.spot_price_limit
        return args
    return {"instance_charge_type": "PostPaid", "spot_strategy": "NoSpot"}


class GpuNodes(pulumi.ComponentResource):
    """`config.nodes` GPU instances of `config.instance_type` in one vSwitch (one zone),
    paid for as `config.capacity` says (charging_args).

    Placement: a deployment set holds at most 20 instances in a zone, so ceil(nodes/20)
    sets are created (LowLatency or Availability, knowhow.placement_for) and nodes fill
    them in order; each LowLatency set is its own low-latency network domain. eRDMA
    (knowhow.erdma_for) sets the primary interface's traffic mode to HighPerformance. No
    public IP; ESSD system disk of `config.system_disk_gib` at
    `config.system_disk_performance_level`, always encrypted (with `kms_key_id` when given,
    else the service key); the RAM role is attached with ecs.RamRoleAttachment; deletion
    protection follows `conventions.deletion_protection` except on spot (where it does not
    apply) and is off from node `config.scale_in_from` on (so lowering `nodes` can delete
    them). User data is not pushed to existing nodes (IGNORED_ON_RUNNING_NODES). Every
    instance is tagged `GpuFleet=<name>`. Data disks: `attached_disks`, separate disks in
    `zone_id` (storage.disks.attach_disks, changed in place), or `data_disks`, inline
    (ForceNew; ignored on running nodes, IGNORED_INLINE_DISKS).

    Outputs: `instance_ids`, `private_ips`, `deployment_set_ids`.
    """

    TYPE = "gpu-infra:compute:GpuNodes"
    instances: list[alicloud.ecs.Instance]
    deployment_sets: list[alicloud.ecs.EcsDeploymentSet]
    role_attachments: list[alicloud.ecs.RamRoleAttachment]

    def __init__(self, name: str, *, config: TrainingFleet, vswitch_id: pulumi.Input[str],
                 security_group_ids: Sequence[pulumi.Input[str]],
                 image_id: pulumi.Input[str], conventions: Conventions,
                 key_name: pulumi.Input[str] | None = None,
                 role_name: pulumi.Input[str] | None = None,
                 user_data: pulumi.Input[str] | None = None,
                 config_command: pulumi.Input[str] | None = None,
                 data_disks: Sequence[alicloud.ecs.InstanceDataDiskArgs] = (),
                 attached_disks: Sequence[NodeDisk] = (),
                 zone_id: pulumi.Input[str] | None = None,
                 kms_key_id: pulumi.Input[str] | None = None, protect: bool = False,
                 gpu_types: catalog.Lookup = catalog.CATALOG_ONLY,
                 opts: pulumi.ResourceOptions | None = None):
        """`gpu_types`: where the type's eRDMA and LowLatency support are looked up
        (default the catalog; a layout passes the stack's, with its declared types).
        `protect`: Pulumi-protect the instances (for nodes whose inline data disks are
        kept). `zone_id`: the vSwitch's zone, where `attached_disks` are created.
        `config_command`: the configuration channel's script (blocks.bootstrap
        config_command), run on every node by Cloud Assistant whenever it changes.
        Defaults: no key, no role, no user data, no channel, no data disks, not protected.
        Instance metadata is always in hardened mode only."""
        if attached_disks and (data_disks or zone_id is None):
            raise ValueError("attached_disks: need zone_id and no inline data_disks")
        super().__init__(self.TYPE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        placement = placement_for(config, gpu_types)
        set_count = math.ceil(config.nodes / DEPLOYMENT_SET_MAX_INSTANCES)
        self.deployment_sets = [
            alicloud.ecs.EcsDeploymentSet(
                child_name(name, f"ds-{i}"), deployment_set_name=child_name(name, f"ds-{i}"),
                strategy=placement, description=f"{placement} placement of {name}",
                opts=child)
            for i in range(set_count)]
        deletion_protection = conventions.deletion_protection and config.capacity != "spot"
        traffic_mode = "HighPerformance" if erdma_for(config, gpu_types) else "Standard"
        fleet_tag = {FLEET_TAG_KEY: name}
        ignored = ([] if config.push_user_data else IGNORED_ON_RUNNING_NODES) + (
            [IGNORED_INLINE_DISKS] if data_disks else []) + IGNORED_NODE_TAGS
        self.instances = []
        self.role_attachments = []
        retiring = config.nodes if config.scale_in_from is None else config.scale_in_from
        for index in range(config.nodes):
            node = child_name(name, f"node-{index:03d}")
            keep = index < retiring
            deployment_set = self.deployment_sets[index // DEPLOYMENT_SET_MAX_INSTANCES]
            instance = alicloud.ecs.Instance(
                node, instance_name=node, host_name=node, instance_type=config.instance_type,
                image_id=image_id, vswitch_id=vswitch_id,
                security_groups=list(security_group_ids), key_name=key_name,
                user_data=user_data, internet_max_bandwidth_out=0,
                http_tokens=METADATA_HTTP_TOKENS,
                system_disk_category="cloud_essd", system_disk_size=config.system_disk_gib,
                system_disk_performance_level=config.system_disk_performance_level,
                system_disk_encrypted=True, system_disk_kms_key_id=kms_key_id,
                data_disks=list(data_disks) or None,
                network_interface_traffic_mode=traffic_mode,
                enable_jumbo_frame=True if config.jumbo_frames else None,
                deployment_set_id=deployment_set.id,
                deletion_protection=deletion_protection and keep, **charging_args(config, index),
                tags=conventions.tags_for(node, fleet_tag),
                volume_tags=conventions.tags_for(node, fleet_tag),
                opts=pulumi.ResourceOptions(parent=self, protect=protect and keep,
                                            ignore_changes=ignored))
            self.instances.append(instance)
            if attached_disks and zone_id is not None:
                attach_disks(node, instance=instance, zone_id=zone_id, disks=attached_disks,
                             conventions=conventions, tags=fleet_tag, parent=self)
            if role_name is not None:
                self.role_attachments.append(alicloud.ecs.RamRoleAttachment(
                    child_name(node, "role"), instance_id=instance.id,
                    ram_role_name=role_name, opts=child))
        self.instance_ids: list[pulumi.Output[str]] = [i.id for i in self.instances]
        self.config_run = self._config_channel(name, config_command) \
            if config_command is not None and self.instances else None
        self.private_ips: list[pulumi.Output[str]] = [i.private_ip for i in self.instances]
        self.deployment_set_ids: list[pulumi.Output[str]] = [
            d.id for d in self.deployment_sets]
        self.register_outputs({"instance_ids": self.instance_ids,
                               "config_invocation_id": self.config_run.id
                               if self.config_run else None,
                               "private_ips": self.private_ips,
                               "deployment_set_ids": self.deployment_set_ids})

    def _config_channel(self, name: str, script: pulumi.Input[str]) -> alicloud.ecs.EcsInvocation:
        """The configuration channel: a Cloud Assistant command holding `script` (this plan's
        config.sh and a bootstrap re-run), invoked once on every node. Every input of both is
        ForceNew, so a changed configuration replaces the command and with it the invocation,
        which runs again on the running nodes (user data never does)."""
        command = alicloud.ecs.Command(
            child_name(name, "config"), name=child_name(name, "config"),
            command_content=pulumi.Output.from_input(script).apply(
                lambda text: base64.b64encode(text.encode()).decode()),
            type="RunShellScript", timeout=CONFIG_RUN_SECONDS,
            description=f"gpu-infra: the configuration of fleet {name} to its running nodes",
            opts=pulumi.ResourceOptions(parent=self))
        return alicloud.ecs.EcsInvocation(
            child_name(name, "config-run"), command_id=command.id,
            instance_ids=self.instance_ids, repeat_mode="Once",
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=self.role_attachments,
                custom_timeouts=pulumi.CustomTimeouts(
                    create=invocation_timeout(len(self.instance_ids)))))


__all__ = ["GpuNodes"]
