"""The Kubernetes objects of the platform (pulumi-kubernetes): the jobs' namespace, the
node-local scratch storage class, the shared file system as a ReadWriteMany volume and the
stack's OSS buckets mounted through the CSI driver.

CSI drivers and their parameters (ACK "Storage" docs, csi-plugin): disks
`diskplugin.csi.alibabacloud.com` (`type`, `encrypted`, `kmsKeyId`, `provisionedIops`,
`burstingEnabled`, `fstype`), NAS `nasplugin.csi.alibabacloud.com` (`server`, `path`), OSS
`ossplugin.csi.alibabacloud.com` (`bucket`, `url`, `otherOpts`, `authType: rrsa`,
`roleName`). The disk parameters `provisionedIops` and `burstingEnabled` and the OSS RRSA
service account (`ack-csi-fuse/csi-fuse-ossfs`) are UNCONFIRMED against a primary source.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from gpu_infra.blocks.conventions import child_name

JOBS_NAMESPACE = "gpu-jobs"
"""Namespace of the jobs and of the volume claims the stack creates."""
SCRATCH_CLASS = "gpu-infra-scratch"
"""StorageClass of node-local scratch: an encrypted ESSD AutoPL disk per claim, created in
the pod's zone when the pod is scheduled."""
SHARED_CLAIM = "shared"
"""PersistentVolumeClaim of the shared file system (ReadWriteMany)."""
DISK_DRIVER = "diskplugin.csi.alibabacloud.com"
NAS_DRIVER = "nasplugin.csi.alibabacloud.com"
OSS_DRIVER = "ossplugin.csi.alibabacloud.com"
NFS_MOUNT_OPTIONS = ("nolock", "tcp", "noresvport", "vers=3")
"""NAS NFSv3 mount options ACK documents for NAS volumes."""
OSS_FUSE_SERVICE_ACCOUNT = "system:serviceaccount:ack-csi-fuse:csi-fuse-ossfs"
"""Who mounts OSS volumes with RRSA (UNCONFIRMED, see the module docstring)."""
VOLUME_CAPACITY = "1Ti"
"""Nominal capacity of volumes without one (NAS is elastic, OSS unbounded): Kubernetes
requires a size; the CSI drivers ignore it."""


@dataclass(frozen=True)
class SharedVolume:
    """The stack's shared file system as the cluster mounts it."""

    server: pulumi.Input[str]
    """Mount target domain."""
    path: str
    """Export path (`/` general-purpose NAS, `/share` Extreme NAS)."""
    capacity: str
    """Kubernetes quantity, e.g. 20480Gi."""


@dataclass(frozen=True)
class OssVolume:
    """One of the stack's buckets as the cluster mounts it."""

    purpose: str
    bucket: pulumi.Input[str]
    endpoint: pulumi.Input[str]
    """Intranet endpoint, e.g. oss-cn-beijing-internal.aliyuncs.com."""


def bucket_claim(purpose: str) -> str:
    """The claim name of the `purpose` bucket's volume in the jobs namespace: `oss-<purpose>`."""
    return f"oss-{purpose}"


def _meta(name: str, namespace: str | None = None,
          labels: Mapping[str, str] | None = None) -> k8s.meta.v1.ObjectMetaArgs:
    return k8s.meta.v1.ObjectMetaArgs(
        name=name, namespace=namespace,
        labels={"app.kubernetes.io/managed-by": "gpu-infra", **(labels or {})})


class KubeStorage(pulumi.ComponentResource):
    """The jobs' namespace (`gpu-jobs`), the `gpu-infra-scratch` StorageClass (encrypted
    AutoPL disks with `scratch_iops` provisioned IOPS, bound where the pod lands), the shared
    file system as a static PersistentVolume + claim `shared` (ReadWriteMany, kept when the
    claim goes), and one static PersistentVolume + claim `oss-<purpose>` per bucket
    (ReadWriteMany, mounted with the RRSA role `oss_role_name`).

    Outputs: `namespace`, `scratch_class`, `shared_claim` (or None), `bucket_claims`
    (purpose -> claim)."""

    TYPE = "gpu-infra:ack:KubeStorage"

    def __init__(self, name: str, *, provider: k8s.Provider, kms_key_id: pulumi.Input[str] | None,
                 scratch_iops: int = 0, shared: SharedVolume | None = None,
                 buckets: Sequence[OssVolume] = (), oss_role_name: pulumi.Input[str] | None = None,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__(self.TYPE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=provider)
        namespace = k8s.core.v1.Namespace(
            child_name(name, "ns"), metadata=_meta(JOBS_NAMESPACE), opts=child)
        in_namespace = pulumi.ResourceOptions(parent=self, provider=provider,
                                              depends_on=[namespace])
        parameters: dict[str, pulumi.Input[str]] = {
            "type": "cloud_auto", "fstype": "ext4", "encrypted": "true",
            "burstingEnabled": "true"}
        if kms_key_id is not None:
            parameters["kmsKeyId"] = kms_key_id
        if scratch_iops:
            parameters["provisionedIops"] = str(scratch_iops)
        k8s.storage.v1.StorageClass(
            child_name(name, "scratch"), metadata=_meta(SCRATCH_CLASS), provisioner=DISK_DRIVER,
            parameters=parameters, reclaim_policy="Delete",
            volume_binding_mode="WaitForFirstConsumer", allow_volume_expansion=True,
            opts=child)
        self.shared_claim = self._shared(name, shared, in_namespace) if shared else None
        self.bucket_claims = {
            volume.purpose: self._bucket(name, volume, oss_role_name, in_namespace)
            for volume in buckets} if oss_role_name is not None else {}
        self.namespace = JOBS_NAMESPACE
        self.scratch_class = SCRATCH_CLASS
        self.register_outputs({"namespace": self.namespace, "scratch_class": SCRATCH_CLASS,
                               "shared_claim": self.shared_claim,
                               "bucket_claims": self.bucket_claims})

    def _static(self, name: str, claim: str, csi: k8s.core.v1.CSIPersistentVolumeSourceArgs,
                capacity: str, opts: pulumi.ResourceOptions,
                mount_options: Sequence[str] = ()) -> str:
        """A static ReadWriteMany PersistentVolume `<cluster>-<claim>` and its claim, replaced
        with the volume (`replace_with`): the claim names the volume by its name, which a
        replacement keeps (spec.csi is ForceNew: a new NAS mount address, bucket or role), and
        Kubernetes postpones deleting a volume bound to a claim until the claim goes
        (kubernetes.io/docs/concepts/storage/persistent-volumes, "Storage Object in Use
        Protection"), so the volume's delete-first replacement (pulumi-kubernetes replaces a
        named object delete-first) would wait on the claim Pulumi kept. With it, the claim is
        deleted first (once no pod uses it) and bound to the new volume."""
        volume_name = child_name(name, claim)
        volume = k8s.core.v1.PersistentVolume(
            volume_name, metadata=_meta(volume_name, labels={"gpu-infra/volume": claim}),
            spec=k8s.core.v1.PersistentVolumeSpecArgs(
                capacity={"storage": capacity}, access_modes=["ReadWriteMany"],
                persistent_volume_reclaim_policy="Retain", storage_class_name="",
                mount_options=list(mount_options) or None, csi=csi),
            opts=opts)
        k8s.core.v1.PersistentVolumeClaim(
            child_name(name, f"{claim}-claim"), metadata=_meta(claim, JOBS_NAMESPACE),
            spec=k8s.core.v1.PersistentVolumeClaimSpecArgs(
                access_modes=["ReadWriteMany"], storage_class_name="",
                volume_name=volume.metadata.name,
                resources=k8s.core.v1.VolumeResourceRequirementsArgs(
                    requests={"storage": capacity})),
            opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(
                replace_with=[volume])))
        return claim

    def _shared(self, name: str, shared: SharedVolume, opts: pulumi.ResourceOptions) -> str:
        csi = k8s.core.v1.CSIPersistentVolumeSourceArgs(
            driver=NAS_DRIVER, volume_handle=child_name(name, SHARED_CLAIM),
            volume_attributes={"server": shared.server, "path": shared.path})
        return self._static(name, SHARED_CLAIM, csi, shared.capacity, opts,
                            NFS_MOUNT_OPTIONS)

    def _bucket(self, name: str, volume: OssVolume, role_name: pulumi.Input[str],
                opts: pulumi.ResourceOptions) -> str:
        claim = bucket_claim(volume.purpose)
        csi = k8s.core.v1.CSIPersistentVolumeSourceArgs(
            driver=OSS_DRIVER, volume_handle=child_name(name, claim),
            volume_attributes={"bucket": volume.bucket, "url": volume.endpoint,
                               "otherOpts": "-o umask=022 -o allow_other",
                               "authType": "rrsa", "roleName": role_name})
        return self._static(name, claim, csi, VOLUME_CAPACITY, opts)
