"""What every layout shares: network, security group and key pair, KMS key, instance role,
buckets, shared file system, data disks, alerting; the layout adds its GPU fleet."""

from __future__ import annotations

from collections.abc import Sequence
from ipaddress import IPv4Network
from typing import Any, ClassVar

import pulumi

from gpu_infra.blocks.bootstrap import (
    DATA_ROOT,
    BootstrapSpec,
    NodeRegistry,
    config_command,
    machine_group_id,
    user_data,
)
from gpu_infra.blocks.compute.node_tools import node_tools_object
from gpu_infra.blocks.conventions import Conventions, stack_tags
from gpu_infra.blocks.encryption import KmsKey
from gpu_infra.blocks.gpu_health import GpuHealthAlarm
from gpu_infra.blocks.identity import InstanceRole
from gpu_infra.blocks.logs import NodeLogs
from gpu_infra.blocks.monitoring import Alerting, FleetAlarms
from gpu_infra.blocks.network import Network
from gpu_infra.blocks.registry import Registry, images_to_mirror, mirror_command
from gpu_infra.blocks.security import ClusterSecurity
from gpu_infra.blocks.storage.backup import Backups
from gpu_infra.blocks.storage.buckets import Bucket, bucket_names, log_bucket_name
from gpu_infra.blocks.storage.disks import DataDisks
from gpu_infra.blocks.storage.filesystem import SharedFileSystem, mount_command
from gpu_infra.knowhow import Finding
from gpu_infra.layouts.judgement import judge_layout_config
from gpu_infra.nodeplan.plans import (
    NodePlan,
    gpu_fleet_name,
    gpu_health_name,
    grid_package,
    node_plan,
)
from gpu_infra.schema import ClusterCommon, FleetCluster
from gpu_infra.schema.ack import Platform
from gpu_infra.schema.monitoring import ALERTING_SUFFIX
from gpu_infra.schema.registry import layout_name
from gpu_infra.schema.storage import LOG_BUCKET_SUFFIX, VERSIONED_PURPOSES
from gpu_infra_facts import container_runtime, jobs
from gpu_infra_facts.acr import registry_component_name
from gpu_infra_facts.file_systems import EXPORT_PATHS, FS_TYPES

FLOW_LOG_STORE = "vpc-flow"
"""The store of the stack's log project the VPC's flow log writes to (`network.flow_logs`)."""
SHARED_FS_UNKNOWN = "(assigned by the cloud)"
"""Stands in for the shared file system's mount address where only its presence counts (the
node tools' spec)."""

class Layout(pulumi.ComponentResource):
    """What every layout is: a component built from one config model (CONFIG, one of
    schema.registry's), with the stack outputs a user needs next (`exports`)."""

    TYPE = "gpu-infra:layouts:Layout"
    CONFIG: ClassVar[type[ClusterCommon] | None] = None
    """The config model this layout builds; None on the shared bases. gpu_infra.layouts
    finds each layout by it and PLATFORM."""
    PLATFORM: ClassVar[Platform] = "ecs"
    """The `platform` of the stacks it builds (ecs, or ack)."""
    exports: dict[str, pulumi.Input[Any]]
    """Stack outputs: what a user needs next."""
    findings: list[Finding]
    """The WARNING and INFO findings of its config (logged when it was built)."""

    def __init__(self, name: str, *, config: ClusterCommon, stack_name: str, project: str,
                 global_suffix: str | None = None, opts: pulumi.ResourceOptions | None = None):
        """`config`: the validated stack; `stack_name` and `project`: the Pulumi stack and
        project (for tags); `global_suffix`: what ends names unique beyond the stack.

        The config is judged first (layouts.judgement: the validators `gpu-infra validate`
        runs, `suppress:` honoured): an ERROR raises LayoutConfigError before anything is
        registered; WARNING and INFO findings go to Pulumi's log (`findings` keeps them)."""
        self.findings = judge_layout_config(name, config, global_suffix)
        super().__init__(self.TYPE, name, None, opts)
        self.stack_name = stack_name
        self.conventions = Conventions(
            tags=stack_tags(project=project, stack_name=stack_name,
                            environment=config.environment,
                            layout=layout_name(type(config)), user_tags=config.tags),
            protect_data=config.profile.protect_data,
            deletion_protection=config.profile.deletion_protection,
            region=config.region, global_suffix=global_suffix)
        self.child = pulumi.ResourceOptions(parent=self)


class LayoutBase(Layout):
    """Base of the three layouts. The order of creation follows the data flow: network ->
    security -> storage -> compute -> monitoring. Subclasses set TYPE and implement
    `build_fleet`; they may override `build_entry` (what fronts the fleet) and
    `fleet_zones`.

    Attributes: `node_plan` (what the fleet's nodes get), `network`, `security`,
    `kms_key` (None unless kms_encryption), `role`, `registry` (the stack's ACR; on ACK the
    ACK layout builds it), `buckets` (purpose -> Bucket),
    `shared_fs` (or None), `disks`, `alerting` (or None), `fleet_alarms` and `gpu_health`
    (or None), `exports` (the stack outputs).
    """

    def __init__(self, name: str, *, config: FleetCluster, stack_name: str, project: str,
                 opts: pulumi.ResourceOptions | None = None):
        """`config`: the validated cluster config; `stack_name` and `project`: the Pulumi
        stack and project (for tags)."""
        super().__init__(name, config=config, stack_name=stack_name, project=project,
                         global_suffix=config.resolved_suffix(stack_name),
                         opts=opts)
        self.cluster = cluster = config
        plan = node_plan(config)
        if plan is None:
            raise TypeError(f"no node plan for a {type(config).__name__} stack")
        self.node_plan: NodePlan = plan
        self.network = Network(f"{name}-net", config=cluster.network,
                               conventions=self.conventions, opts=self.child)
        self.logs = NodeLogs(
            f"{name}-node-logs", machine_id=machine_group_id(gpu_fleet_name(name),
                                                        self.conventions.global_suffix),
            retention_days=cluster.log_retention_days,
            encrypt=cluster.kms_encryption,
            conventions=self.conventions, opts=self.child) if cluster.logs.enabled else None
        if cluster.network.flow_logs and self.logs:
            self.network.flow_log(self.logs.store(FLOW_LOG_STORE))
        self._build_security(name)
        self._build_storage(name)
        self.registry: Registry | None = self._build_registry(name) \
            if self.node_plan.BOOTSTRAPS else None
        self.alerting = Alerting(f"{name}-{ALERTING_SUFFIX}", config=cluster.monitoring,
                                 fixed_nodes=self.node_plan.FIXED_NODES,
                                 conventions=self.conventions,
                                 opts=self.child) if cluster.monitoring.active else None
        self.node_tools = self._build_node_tools(name) if self.node_plan.BOOTSTRAPS else None
        fleet_name, instance_ids = self.build_fleet(name)
        self.fleet_alarms = FleetAlarms(
            f"{name}-alarms", config=cluster.monitoring, fleet_name=fleet_name,
            contact_group=self.alerting.contact_group_name, conventions=self.conventions,
            instance_ids=instance_ids, instance_names=self.fleet_instance_names(),
            node_group_id=self.alerting.node_group_id, opts=self.child) \
            if self.alerting else None
        self.gpu_health = GpuHealthAlarm(
            gpu_health_name(name), fleet=fleet_name,
            contact_group=self.alerting.contact_group_name, conventions=self.conventions,
            role_name=self.role_name, opts=self.child) \
            if self.alerting and self.runs_gpu_health_check() else None
        self.exports = {**self._base_exports(), **self.fleet_exports()}
        self.register_outputs(self.exports)

    # Hooks for the layouts

    def build_entry(self, name: str) -> Sequence[pulumi.Input[str]]:
        """Create what fronts the fleet (e.g. a load balancer) once the network exists;
        return security groups that may reach the service ports. Default: nothing."""
        return ()

    def build_fleet(self, name: str) -> tuple[str, pulumi.Input[Sequence[str]] | None]:
        """Create the GPU fleet; return its fleet name (the GpuFleet tag value) and its
        instance ids (None for scaling groups, whose alarms go by tag)."""
        raise NotImplementedError

    def fleet_exports(self) -> dict[str, pulumi.Input[Any]]:
        """Layout-specific stack outputs."""
        return {}

    def fleet_instance_names(self) -> pulumi.Input[Sequence[str]] | None:
        """Names of the fixed nodes (None for scaling groups)."""
        return None

    def fleet_zones(self) -> list[str]:
        """Zones with GPU nodes (they get file-system mount targets). Default: all."""
        return list(self.cluster.network.zones)

    def gpu_count(self) -> int:
        """GPUs per node, from the catalog (a fractional vGPU counts as one)."""
        return self.cluster.gpu_types.gpus_per_node(self.instance_type())

    def instance_type(self) -> str:
        """The fleet's (first) instance type."""
        raise NotImplementedError

    # Shared building

    def _build_security(self, name: str) -> None:
        security = self.cluster.security
        source_groups = self.build_entry(name)
        self.security = ClusterSecurity(
            f"{name}-sec", config=security, vpc_id=self.network.vpc_id,
            service_source_group_ids=source_groups, conventions=self.conventions,
            opts=self.child)
        self.kms_key = KmsKey(
            f"{name}-kms", config=security, conventions=self.conventions,
            opts=self.child) if self.cluster.kms_encryption else None
        self.kms_key_id = self.kms_key.key_id if self.kms_key else None
        names = bucket_names(self.cluster, self.conventions)
        driver = self.cluster.fleet.driver
        grid = grid_package(driver) if driver.grid_package_grant else None
        self.role = InstanceRole(
            f"{name}-node", bucket_names=list(names.values()),
            read_objects=[(grid.bucket, grid.key)] if grid else [],
            kms_key_arn=self.kms_key.key_arn if self.kms_key else None,
            conventions=self.conventions,
            opts=self.child) if self.node_plan.BOOTSTRAPS else None

    @property
    def role_name(self) -> pulumi.Output[str]:
        """The nodes' instance role (fleets whose nodes boot our bootstrap: NodePlan
        BOOTSTRAPS)."""
        if self.role is None:
            raise ValueError("this layout's nodes have no instance role")
        return self.role.role_name

    def _build_storage(self, name: str) -> None:
        storage = self.cluster.storage
        log_name = log_bucket_name(self.cluster, self.conventions)
        lifecycle = storage.buckets.lifecycle
        self.log_bucket = Bucket(
            f"{name}-{LOG_BUCKET_SUFFIX}", config=lifecycle, bucket_name=log_name,
            conventions=self.conventions, kms_key_id=self.kms_key_id,
            versioning=self.cluster.profile.version_every_bucket,
            opts=self.child) if log_name else None
        self.buckets = {
            purpose: Bucket(
                f"{name}-{purpose}", config=lifecycle, bucket_name=bucket_name,
                conventions=self.conventions, purpose=purpose,
                versioning=(purpose in VERSIONED_PURPOSES
                            or self.cluster.profile.version_every_bucket),
                kms_key_id=self.kms_key_id,
                log_bucket=self.log_bucket.bucket_name if self.log_bucket else None,
                opts=self.child)
            for purpose, bucket_name in bucket_names(self.cluster, self.conventions).items()}
        shared = storage.shared_fs
        zones = self.fleet_zones()
        self.shared_fs = SharedFileSystem(
            f"{name}-fs", config=shared, vpc_id=self.network.vpc_id,
            vswitch_ids={zone: self.network.vswitch_ids[zone] for zone in zones},
            client_cidrs=self._node_cidrs(zones), conventions=self.conventions,
            kms_key_id=self.kms_key_id, opts=self.child) if shared.enabled else None
        self.backups = self._build_backups(name)
        self.disks = DataDisks(
            f"{name}-disks", config=storage, gpu_count=self.gpu_count(),
            conventions=self.conventions, take_snapshots=self.cluster.profile.snapshots,
            kms_key_id=self.kms_key_id, opts=self.child)
        mount_address = self.shared_fs.mount_address if self.shared_fs else None
        fs_type = FS_TYPES[shared.kind].file_system_type
        self.mount_command: pulumi.Output[str] | None = None
        self.shared_fs_source: pulumi.Output[str] | None = None
        if mount_address is not None:
            self.mount_command = pulumi.Output.from_input(mount_address).apply(
                lambda address: mount_command(address, file_system_type=fs_type))
            self.shared_fs_source = pulumi.Output.from_input(mount_address).apply(
                lambda address: f"{address}:{EXPORT_PATHS[fs_type]}")

    def _build_backups(self, name: str) -> Backups | None:
        """Cloud Backup of the shared file system (not CPFS) and the chosen buckets, where
        the stack backs up and has any of them."""
        backup = self.cluster.storage.backup
        shared = self.cluster.storage.shared_fs
        file_system_id = self.shared_fs.file_system_id \
            if self.shared_fs and shared.kind != "cpfs" else None
        buckets: dict[str, pulumi.Input[str]] = {
            purpose: self.buckets[purpose].bucket_name
            for purpose in backup.buckets if purpose in self.buckets}
        if not self.cluster.backup_enabled or (file_system_id is None and not buckets):
            return None
        return Backups(f"{name}-backup", config=backup, file_system_id=file_system_id,
                       buckets=buckets, conventions=self.conventions,
                       kms_key_id=self.kms_key_id
                       if self.cluster.backup_vault_key == "stack" else None,
                       opts=self.child)

    def _build_registry(self, name: str) -> Registry:
        """The stack's registry (blocks.registry), linked to the VPC in the fleet's first
        zone, with the mirror repositories of mirrored_images."""
        cluster = self.cluster
        settings = cluster.registry_settings
        return Registry(
            registry_component_name(name), config=settings, edition=cluster.registry_edition,
            namespace=cluster.registry_namespace, region=cluster.region,
            vpc_id=self.network.vpc_id,
            vswitch_id=self.network.vswitch_ids[self.fleet_zones()[0]],
            conventions=self.conventions,
            required_mirrors=[image.repository for image in self.mirrored_images()],
            opts=self.child)

    def mirrored_images(self) -> tuple[jobs.UpstreamImage, ...]:
        """The upstream images the stack's own code runs, which must be copied into the
        registry's mirror namespace before the nodes need them: on ECS the node images
        (gpu_infra_facts.container_runtime.NODE_IMAGES, where a workload adds its default
        image)."""
        return container_runtime.NODE_IMAGES

    def mirror_prefix(self) -> str:
        """`<registry address>/<mirror namespace>`: where the mirrored images are."""
        if self.registry is None:
            raise ValueError("the stack has no registry")
        return f"{self.registry.address}/{self.registry.mirror_namespace}"

    def registry_exports(self) -> dict[str, pulumi.Input[Any]]:
        """The registry's address and repositories, and the images to mirror into it with the
        command that copies them (where there are any)."""
        if self.registry is None:
            return {}
        images = self.mirrored_images()
        return {"registry_address": self.registry.address,
                "registry_repositories": self.registry.repositories,
                **({"images_to_mirror": images_to_mirror(self.mirror_prefix(), images),
                    "mirror_command": mirror_command(self.mirror_prefix(), images)}
                   if images else {})}

    def node_registry(self) -> pulumi.Output[NodeRegistry] | None:
        """The registry as the nodes see it (None without one)."""
        registry = self.registry
        if registry is None:
            return None
        instance_id = registry.instance.id if registry.instance else None
        return pulumi.Output.from_input(instance_id).apply(lambda found: NodeRegistry(
            registry.address, found, self.mirror_prefix()))

    def runs_gpu_health_check(self) -> bool:
        """Whether the nodes run the GPU health check: the stack alarms on it and the node
        tools deliver it."""
        return self.node_tools is not None and self.node_plan.gpu_health_check() is not None

    def node_tools_home(self) -> Bucket | None:
        """The bucket holding the node tools: the checkpoints bucket, else the first of the
        stack's buckets; None without buckets (the nodes then get no node tools)."""
        return self.buckets.get("checkpoints") or next(iter(self.buckets.values()), None)

    def node_tools_bucket(self) -> pulumi.Output[str] | None:
        """The name of node_tools_home (None without one)."""
        home = self.node_tools_home()
        return home.bucket_name if home else None

    def _build_node_tools(self, name: str, plan: NodePlan | None = None,
                          part: str = "") -> pulumi.CustomResource | None:
        """The fleet's node tools object in node_tools_home (blocks.compute.node_tools),
        from the nodes' spec (`plan`, default the fleet's; `part`: the name's suffix for a
        second part of the fleet with its own tools): the tools read none of the values the
        cloud assigns, nor their own bucket's name (the models bucket's, which the model
        server reads, is the stack's own choice), so they are known before anything exists."""
        home = self.node_tools_home()
        if home is None:
            return None
        spec = (plan or self.node_plan).bootstrap_spec(
            gpu_fleet_name(name),
            shared_fs_source=None if self.shared_fs is None else SHARED_FS_UNKNOWN,
            global_suffix=self.conventions.global_suffix, node_tools_bucket="")
        purpose = next(p for p, bucket in self.buckets.items() if bucket is home)
        return node_tools_object(f"{name}-{purpose}{part}-node-tools", spec=spec, home=home)

    def node_bootstrap_spec(self, fleet_name: str,
                            scaling_group_id: pulumi.Input[str] | None = None,
                            lifecycle_hook_id: pulumi.Input[str] | None = None,
                            plan: NodePlan | None = None) -> pulumi.Output[BootstrapSpec]:
        """bootstrap_spec of `plan` (default the fleet's) with the values the cloud assigns
        (the shared file system's address, the scaling group and hook, the node tools'
        bucket)."""
        tools_bucket = self.node_tools_bucket() if self.node_tools else None
        return pulumi.Output.all(self.shared_fs_source, scaling_group_id,
                                 lifecycle_hook_id, tools_bucket, self.node_registry()).apply(
            lambda values: (plan or self.node_plan).bootstrap_spec(
                fleet_name, shared_fs_source=values[0],
                scaling_group_id=values[1], lifecycle_hook_id=values[2],
                global_suffix=self.conventions.global_suffix,
                node_tools_bucket=values[3], registry=values[4]))

    def node_user_data(self, fleet_name: str, scaling_group_id: pulumi.Input[str] | None = None,
                       lifecycle_hook_id: pulumi.Input[str] | None = None,
                       plan: NodePlan | None = None,
                       tools: pulumi.CustomResource | None = None) -> pulumi.Output[str]:
        """The user data of every node of the fleet (blocks.bootstrap; `plan` default the
        fleet's), once the node tools object (`tools`, default the fleet's) exists (the
        nodes fetch it at their first boot)."""
        text = self.node_bootstrap_spec(fleet_name, scaling_group_id,
                                        lifecycle_hook_id, plan).apply(user_data)
        tools = tools or self.node_tools
        if tools is None:
            return text
        return pulumi.Output.all(text, tools.id).apply(lambda values: str(values[0]))

    def node_config_command(self, fleet_name: str) -> pulumi.Output[str]:
        """The configuration channel's script for running nodes (blocks.bootstrap): the
        same configuration as the user data, so a re-run keeps the log id and node tools."""
        return self.node_bootstrap_spec(fleet_name).apply(config_command)

    def _node_cidrs(self, zones: list[str]) -> list[IPv4Network]:
        """CIDRs of the nodes' vSwitches (the VPC's CIDR with bring-your-own vSwitches)."""
        network = self.cluster.network
        if network.existing_vpc_id:
            return [network.vpc_cidr]
        return [network.vswitch_cidr(zone) for zone in zones]

    def _base_exports(self) -> dict[str, pulumi.Input[Any]]:
        exports: dict[str, pulumi.Input[Any]] = {
            "vpc_id": self.network.vpc_id, "vswitch_ids": self.network.vswitch_ids,
            "security_group_id": self.security.security_group_id,
            **({"role_name": self.role.role_name} if self.role else {}),
            "bucket_names": {purpose: bucket.bucket_name
                             for purpose, bucket in self.buckets.items()},
            "data_disks": {disk.name: f"{DATA_ROOT}/{disk.name}"
                           for disk in self.cluster.storage.disks}}
        optional = {"nat_eip": self.network.nat_eip,
                    "key_pair_name": self.security.key_pair_name,
                    "kms_key_id": self.kms_key_id,
                    "mount_command": self.mount_command,
                    "alert_contact_group": self.alerting.contact_group_name
                    if self.alerting else None,
                    "log_project": self.logs.project_name if self.logs else None,
                    "backup_vault_id": self.backups.vault_id if self.backups else None,
                    "gpu_health_group_id": self.gpu_health.group_id if self.gpu_health
                    else None}
        exports.update({key: value for key, value in optional.items() if value is not None})
        return {**exports, **self.registry_exports()}
