"""Shared file system block: general-purpose NAS, Extreme NAS or CPFS, reachable only from
the cluster's vSwitches, encrypted, and protected from deletion in prod.

Protection uses Pulumi `protect` (through `Conventions.data_options`), not
`retain_on_delete`: protect makes `pulumi destroy` and any replacement (a ForceNew change
such as storage_type) stop with an error until a human unprotects the resource, so data is
never lost by accident. retain_on_delete would silently drop the file system from the stack
and leave an unmanaged, still-billed copy behind.

Mounting: NAS and Extreme NAS get one `nas.MountTarget` per vSwitch and are mounted over
NFSv3 (`mount_command`). CPFS has no NAS mount target or access group; it gets an NFS
protocol service (`nas.ProtocolService`) with one export (`nas.ProtocolMountTarget`) per
vSwitch. The provider exports no domain for those exports, so `mount_address` is None for
CPFS: nodes mount it with the CPFS client or the export's address from the console.
"""

from __future__ import annotations

from collections.abc import Mapping
from ipaddress import IPv4Network

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import Conventions, child_name, fixed_name
from gpu_infra.schema.storage import CAPACITY_KINDS, SharedFileSystemConfig
from gpu_infra_facts.addresses import world_open
from gpu_infra_facts.file_systems import EXPORT_PATHS, FS_TYPES, NFS_OPTIONS, FsType
from gpu_infra_facts.types import NAS_ACCESS_GROUP


def mount_command(address: str, *, file_system_type: str = "standard",
                  mount_point: str = "/mnt/shared") -> str:
    """Shell lines for the nodes' user data: install the NFS client, mount now and at boot."""
    source = f"{address}:{EXPORT_PATHS[file_system_type]}"
    return "\n".join([
        "command -v mount.nfs >/dev/null || (yum install -y nfs-utils || "
        "apt-get install -y nfs-common)",
        f"mkdir -p {mount_point}",
        f"grep -q ' {mount_point} ' /etc/fstab || "
        f"echo '{source} {mount_point} nfs {NFS_OPTIONS},_netdev 0 0' >> /etc/fstab",
        f"mountpoint -q {mount_point} || mount -t nfs -o {NFS_OPTIONS} {source} {mount_point}",
    ])


class SharedFileSystem(pulumi.ComponentResource):
    """A file system shared by the nodes of the cluster's vSwitches.

    Outputs: `file_system_id`, `mount_addresses` (zone -> domain), `mount_address` (the first
    zone's; None for CPFS), `file_system_type`.
    """

    file_system: alicloud.nas.FileSystem
    access_group: alicloud.nas.AccessGroup | None
    access_rules: list[alicloud.nas.AccessRule]
    mount_targets: dict[str, alicloud.nas.MountTarget]
    protocol_service: alicloud.nas.ProtocolService | None
    exports: dict[str, alicloud.nas.ProtocolMountTarget]

    def __init__(self, name: str, *, config: SharedFileSystemConfig, vpc_id: pulumi.Input[str],
                 vswitch_ids: Mapping[str, pulumi.Input[str]],
                 client_cidrs: list[IPv4Network], conventions: Conventions,
                 kms_key_id: pulumi.Input[str] | None = None,
                 opts: pulumi.ResourceOptions | None = None):
        """`config`: kind, capacity and zone (an extreme or cpfs file system goes to
        `config.zone`, default the first of vswitch_ids); `vswitch_ids`: zone -> vSwitch id
        of every vSwitch with nodes (one mount target each); `client_cidrs`: who may mount
        (the vSwitch or VPC CIDRs, never world-open)."""
        super().__init__("gpu-infra:storage:SharedFileSystem", name, None, opts)
        _check(vswitch_ids, client_cidrs)
        fs_type = FS_TYPES[config.kind]
        by_capacity = config.kind in CAPACITY_KINDS
        zone = config.zone or next(iter(vswitch_ids))
        child = pulumi.ResourceOptions(parent=self)
        is_cpfs = fs_type.file_system_type == "cpfs"
        encrypt = fs_type.kms_encrypt_type if kms_key_id and fs_type.kms_encrypt_type \
            else fs_type.encrypt_type
        fs_name = child_name(name, "fs")
        self.file_system = alicloud.nas.FileSystem(
            fs_name, description=fs_name, file_system_type=fs_type.file_system_type,
            protocol_type=fs_type.protocol_type, storage_type=fs_type.storage_type,
            capacity=config.capacity_gib, zone_id=zone if by_capacity else None,
            vpc_id=vpc_id if is_cpfs else None,
            vswitch_id=vswitch_ids[zone] if is_cpfs else None,
            encrypt_type=encrypt, kms_key_id=kms_key_id if encrypt == 2 else None,
            tags=conventions.tags_for(fs_name), opts=conventions.data_options(self))
        self.access_group, self.access_rules, self.mount_targets = None, [], {}
        self.protocol_service, self.exports = None, {}
        if is_cpfs:
            self._cpfs_exports(name, vpc_id, vswitch_ids, zone, child)
        else:
            self._nas_mount_targets(name, config, fs_type, vpc_id, vswitch_ids, client_cidrs,
                                    conventions, child)
        self.file_system_id: pulumi.Output[str] = self.file_system.id
        self.file_system_type = fs_type.file_system_type
        self.mount_addresses = {zone_: target.mount_target_domain
                                for zone_, target in self.mount_targets.items()}
        self.mount_address: pulumi.Output[str] | None = (
            next(iter(self.mount_addresses.values())) if self.mount_addresses else None)
        self.register_outputs({"file_system_id": self.file_system_id,
                               "file_system_type": self.file_system_type,
                               "mount_address": self.mount_address,
                               "mount_addresses": self.mount_addresses})

    def _nas_mount_targets(self, name: str, config: SharedFileSystemConfig, fs_type: FsType,
                           vpc_id: pulumi.Input[str],
                           vswitch_ids: Mapping[str, pulumi.Input[str]],
                           client_cidrs: list[IPv4Network], conventions: Conventions,
                           child: pulumi.ResourceOptions) -> None:
        group_name = child_name(name, "access")
        self.access_group = alicloud.nas.AccessGroup(
            group_name, access_group_name=conventions.unique_name(NAS_ACCESS_GROUP, group_name),
            access_group_type="Vpc", file_system_type=fs_type.file_system_type,
            description=group_name, opts=fixed_name(self))
        group = self.access_group.access_group_name
        self.access_rules = [
            alicloud.nas.AccessRule(
                child_name(name, f"rule-{index}"), access_group_name=group,
                file_system_type=fs_type.file_system_type, source_cidr_ip=str(cidr),
                rw_access_type=config.access, user_access_type=config.squash, priority=1,
                opts=child)
            for index, cidr in enumerate(client_cidrs, start=1)]
        self.mount_targets = {
            zone: alicloud.nas.MountTarget(
                child_name(name, f"mount-{zone}"), file_system_id=self.file_system.id,
                access_group_name=self.access_group.access_group_name, network_type="Vpc",
                vpc_id=vpc_id, vswitch_id=vswitch_id,
                opts=pulumi.ResourceOptions(parent=self, depends_on=self.access_rules))
            for zone, vswitch_id in vswitch_ids.items()}

    def _cpfs_exports(self, name: str, vpc_id: pulumi.Input[str],
                      vswitch_ids: Mapping[str, pulumi.Input[str]], zone: str,
                      child: pulumi.ResourceOptions) -> None:
        self.protocol_service = alicloud.nas.ProtocolService(
            child_name(name, "nfs"), file_system_id=self.file_system.id, protocol_type="NFS",
            protocol_spec="General", vpc_id=vpc_id, vswitch_id=vswitch_ids[zone],
            description=child_name(name, "nfs"), opts=child)
        self.exports = {
            zone_: alicloud.nas.ProtocolMountTarget(
                child_name(name, f"export-{zone_}"), file_system_id=self.file_system.id,
                protocol_service_id=self.protocol_service.protocol_service_id, path="/",
                vpc_id=vpc_id, vswitch_id=vswitch_id,
                description=child_name(name, f"export-{zone_}"), opts=child)
            for zone_, vswitch_id in vswitch_ids.items()}



def _check(vswitch_ids: Mapping[str, pulumi.Input[str]],
           client_cidrs: list[IPv4Network]) -> None:
    problems: list[str] = []
    if not vswitch_ids:
        problems.append("vswitch_ids: at least one vSwitch with nodes is needed")
    if not client_cidrs:
        problems.append("client_cidrs: at least one CIDR (the vSwitch or VPC CIDRs)")
    reason = world_open(client_cidrs)
    if reason:
        problems.append(f"client_cidrs: {', '.join(map(str, client_cidrs))} {reason}: that "
                        "opens the file system to the world; list the vSwitch or VPC CIDRs")
    if problems:
        raise ValueError("\n".join(problems))


__all__ = ["SharedFileSystem", "mount_command"]
