"""Validators of the cluster as a whole: network egress, encryption."""

from __future__ import annotations

from collections.abc import Iterable

from gpu_infra.knowhow.findings import Finding, Level
from gpu_infra.schema import FleetCluster
from gpu_infra.schema.environment import environments_where
from gpu_infra.schema.stack import ClusterCommon


def no_internet_egress(cluster: ClusterCommon) -> Iterable[Finding]:
    """Nodes have no public IP: without a NAT gateway they cannot pull images, drivers,
    packages or datasets from the internet."""
    if not cluster.network.creates_nat and not cluster.network.existing_vpc_id:
        yield Finding("no-internet-egress", Level.WARNING, "network.nat_gateway",
                      "nodes get no public IP and no NAT gateway: they cannot reach the "
                      "internet (drivers, images, packages); fine only with private mirrors")


def prod_without_kms(cluster: FleetCluster) -> Iterable[Finding]:
    """ERROR: where the environment requires a KMS key (prod), data must be encrypted with
    it. The encryption policy rules are mandatory there, so without the key every plan would
    fail on them; this says so at `validate` time, once, with the field."""
    if cluster.profile.kms_required and not cluster.kms_encryption:
        environment = cluster.environment
        yield Finding("prod-without-kms", Level.ERROR, "security.kms_encryption",
                      f"false in {environment}: {environment} disks and buckets must be "
                      "encrypted with a KMS key (the policy pack's encryption rules are "
                      "mandatory); leave it unset or true, or use an environment that does "
                      "not require it")


def world_open_cidrs(cluster: FleetCluster) -> Iterable[Finding]:
    """Admin or client CIDRs that admit the whole internet (judged by address space; the
    schema refuses them where the environment's profile says so (prod), elsewhere this
    warns)."""
    refused = environments_where(lambda profile: profile.refuse_world_open)
    where = f" (refused in {' and '.join(refused)})" if refused else ""
    for field, why in cluster.security.world_open_fields():
        yield Finding("world-open-cidrs", Level.WARNING, f"security.{field}",
                      f"{why}: anyone on the internet can connect; list the CIDRs that need "
                      f"access{where}")


def cpfs_not_encrypted_or_mounted(cluster: FleetCluster) -> Iterable[Finding]:
    """WARNING: CPFS is neither encrypted (the provider cannot) nor mounted by the node
    bootstrap (the provider exports no address for its NFS exports)."""
    shared = cluster.storage.shared_fs
    if shared.enabled and shared.kind == "cpfs":
        yield Finding("cpfs-not-encrypted-or-mounted", Level.WARNING, "storage.shared_fs.kind",
                      "CPFS data is not encrypted at rest and the nodes do not mount it: "
                      "install the CPFS client or mount the NFS export (its address is in the "
                      "console) in your image or user data; extreme NAS is both")


GENERAL_VALIDATORS = (no_internet_egress, prod_without_kms, world_open_cidrs,
                      cpfs_not_encrypted_or_mounted)
