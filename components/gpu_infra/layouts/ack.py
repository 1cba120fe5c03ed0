"""Training and inference on ACK (`platform: ack`): the shared blocks of LayoutBase (network
with pod vSwitches, security group, KMS key, buckets, shared file system, alarms) plus an
ACK Pro cluster, a CPU system pool, the fleet's GPU pools, the add-ons, a private registry
and the Kubernetes storage objects. ACK sets the nodes up (driver at join, device plugin,
eRDMA, fault fencing, logs), so the nodes boot no gpu-infra bootstrap."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi

from gpu_infra.blocks.ack import AckPlatform, GpuPool
from gpu_infra.blocks.ack.addons import AckAddons
from gpu_infra.blocks.ack.cluster import AckCluster, rrsa_trust_policy
from gpu_infra.blocks.ack.gpu_faults import AckGpuFaultAlarm
from gpu_infra.blocks.ack.kube import (
    OSS_FUSE_SERVICE_ACCOUNT,
    VOLUME_CAPACITY,
    KubeStorage,
    OssVolume,
    SharedVolume,
)
from gpu_infra.blocks.ack.pools import GpuNodePools, GpuPoolSpec, SystemPool
from gpu_infra.blocks.compute.reserved import ReservedCapacity
from gpu_infra.blocks.identity import InstanceRole
from gpu_infra.blocks.logs import ACK_MACHINE_GROUP
from gpu_infra.blocks.registry import Registry, mirrored_image
from gpu_infra.blocks.storage.buckets import bucket_names
from gpu_infra.blocks.workloads.install import KubeObjects
from gpu_infra.blocks.workloads.network_policies import (
    namespace_baseline,
    operator_policy,
    training_peers,
)
from gpu_infra.blocks.workloads.operator import operator_install, operator_pod_labels
from gpu_infra.blocks.workloads.serving import ServingTarget, serving_objects, zone_maps
from gpu_infra.blocks.workloads.spot_watch import spot_watch_objects
from gpu_infra.knowhow.node_software import driver_plan
from gpu_infra.knowhow.placement import placement_for
from gpu_infra.layouts.base import LayoutBase
from gpu_infra.layouts.jobs import (
    ready_job,
    serving_name,
)
from gpu_infra.nodeplan.plans import gpu_fleet_name, gpu_health_name
from gpu_infra.schema import InferenceConfig, TrainingConfig
from gpu_infra.schema.compute import TrainingFleet
from gpu_infra_facts import jobs
from gpu_infra_facts.ack import (
    ADDONS,
    DRIVER_VERSION_LABEL,
    ERDMA_ADDONS,
    GPU_ADDONS,
    LOG_ADDONS,
    POOL_LABEL,
)
from gpu_infra_facts.acr import registry_component_name
from gpu_infra_facts.file_systems import EXPORT_PATHS, FS_TYPES
from gpu_infra_facts.jobs import SKYPILOT_ACCELERATOR_LABEL, skypilot_accelerator

ERDMA_LABEL = "gpu-infra/erdma"
"""Node label `true` on pools whose nodes have eRDMA."""
Manifest = dict[str, Any]

CORE_ADDONS = ("ack-node-problem-detector", "loongcollector", "arms-prometheus",
               "managed-aliyun-acr-credential-helper")
"""Installed in every cluster beside the creation-time ones and the GPU ones."""


class AckLayout(LayoutBase):
    """What both ACK layouts build after LayoutBase's blocks (see the module docstring).

    Attributes: `ack` (AckCluster), `system_pool`, `gpu_pools` (GpuNodePools), `addons`,
    `registry`, `oss_role`, `storage` (KubeStorage), `reserved` (or None), `platform`
    (AckPlatform, the job layer's API: gpu_infra.blocks.ack) and `workloads` (the job
    layer's objects, blocks.workloads.install.KubeObjects).

    Extra outputs: `images_to_mirror` (source, target, why) and `mirror_command` (skopeo),
    where the job layer runs upstream images.
    """

    PLATFORM = "ack"
    cluster: TrainingConfig | InferenceConfig
    reserved: ReservedCapacity | None

    def instance_type(self) -> str:
        """The fleet's (first) instance type."""
        fleet = self.cluster.fleet
        return fleet.instance_type if isinstance(fleet, TrainingFleet) \
            else fleet.instance_types[0]

    def addon_names(self) -> list[str]:
        """Every add-on the cluster gets, in install order."""
        names = [name for name, addon in ADDONS.items() if addon.at_creation]
        names += [*GPU_ADDONS, *CORE_ADDONS]
        if self.node_plan.uses_erdma():
            names += ERDMA_ADDONS
        return names

    def build_fleet(self, name: str) -> tuple[str, None]:
        """The cluster, its pools, add-ons, registry and storage; alarms go by fleet tag."""
        cluster = self.cluster
        ack = cluster.ack_settings
        network = self.network
        zones = cluster.network.zones
        fleet_name = gpu_fleet_name(name)
        self.ack = AckCluster(
            f"{name}-ack", config=ack, vswitch_ids=[network.vswitch_ids[z] for z in zones],
            pod_vswitch_ids=[network.pod_vswitch_ids[z] for z in zones],
            security_group_id=self.security.security_group_id, conventions=self.conventions,
            kms_key_id=self.kms_key_id, control_plane_logs=cluster.control_plane_logs,
            opts=self.child)
        cluster_id = self.ack.cluster_id
        self.system_pool = SystemPool(
            f"{name}-system", config=ack.system_pool, cluster_id=cluster_id,
            vswitch_ids=[network.vswitch_ids[z] for z in zones], image_type=ack.image_type,
            conventions=self.conventions, kms_key_id=self.kms_key_id,
            key_name=self.security.key_pair_name, opts=self.child)
        self.reserved = ReservedCapacity(
            f"{name}-reserved", config=cluster.fleet.reserved,
            instance_type=self.instance_type(), zone_id=self.fleet_zones()[0],
            conventions=self.conventions, opts=self.child) if cluster.fleet.reserved else None
        self.gpu_pools = GpuNodePools(
            fleet_name, fleet=cluster.fleet, cluster_id=cluster_id,
            spec=self._pool_spec(fleet_name), conventions=self.conventions, opts=self.child)
        names = self.addon_names()
        logs = {"sls_project_name": self.logs.project_name} if self.logs else None
        self.addons = AckAddons(
            f"{name}-addons", cluster_id=cluster_id, names=names,
            versions={addon: ack.addon_version(addon) for addon in names},
            configs={addon: logs for addon in LOG_ADDONS if addon in names} if logs else None,
            depends_on=[self.system_pool.pool], opts=self.child)
        if self.logs:
            self.logs.collect_from(f"{name}-node-logs-ack", machine_group=cluster_id.apply(
                lambda cid: ACK_MACHINE_GROUP.format(cluster_id=cid)))
        self.gpu_faults = self._gpu_fault_alarm(name)
        self.registry = Registry(
            registry_component_name(name), config=cluster.registry_settings,
            edition=cluster.registry_edition,
            namespace=cluster.registry_namespace, region=cluster.region,
            vpc_id=network.vpc_id, vswitch_id=network.vswitch_ids[zones[0]],
            conventions=self.conventions,
            required_mirrors=[image.repository for image in self.mirrored_images()],
            opts=self.child)
        self.oss_role = InstanceRole(
            f"{name}-oss", bucket_names=list(bucket_names(cluster, self.conventions).values()),
            kms_key_arn=self.kms_key.key_arn if self.kms_key else None,
            trust=rrsa_trust_policy(self.ack.rrsa_oidc_arn, self.ack.rrsa_issuer_url,
                                    OSS_FUSE_SERVICE_ACCOUNT),
            description="Assumed through RRSA by the OSS CSI driver to mount the stack's "
                        "buckets", conventions=self.conventions, opts=self.child)
        self.storage = KubeStorage(
            f"{name}-kube", provider=self.ack.provider, kms_key_id=self.kms_key_id,
            scratch_iops=max((disk.provisioned_iops for disk in cluster.storage.disks),
                             default=0),
            shared=self._shared_volume(),
            buckets=[OssVolume(purpose, bucket.bucket_name,
                               f"oss-{cluster.region}-internal.aliyuncs.com")
                     for purpose, bucket in self.buckets.items()],
            oss_role_name=self.oss_role.role_name,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.addons]))
        self.platform = AckPlatform(
            provider=self.ack.provider, cluster_id=cluster_id,
            kubernetes_version=ack.kubernetes_version, kubernetes_minor=ack.minor,
            gpu_pools={fleet_name: GpuPool(
                node_pool_ids=self.gpu_pools.node_pool_ids, labels=self.gpu_pools.labels,
                taint=self.gpu_pools.taint, erdma=self.node_plan.uses_erdma(),
                gpus_per_node=self.gpu_count())},
            system_labels=self.system_pool.labels, registry=self.registry,
            storage=self.storage, oss_role_name=self.oss_role.role_name)
        manifests = self.job_layer(self.platform)
        self.workloads = KubeObjects(
            f"{name}-workloads", manifests=manifests, provider=self.ack.provider,
            wait_for_rollout=False,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.addons, self.storage]))
        return fleet_name, None

    def _gpu_fault_alarm(self, name: str) -> AckGpuFaultAlarm | None:
        """The alarm on the node problem detector's GPU fault events, where the stack has
        contacts, logs (where the events go) and `monitoring.events.gpu_health` (default
        on); None otherwise."""
        monitoring = self.cluster.monitoring
        if not (self.alerting and self.logs and monitoring.events.gpu_health):
            return None
        return AckGpuFaultAlarm(
            gpu_health_name(name), log_project=self.logs.project_name,
            region=self.cluster.region, contact_group=self.alerting.contact_group_name,
            webhook=pulumi.Output.secret(monitoring.webhook) if monitoring.webhook else None,
            conventions=self.conventions, opts=self.child)

    def uses_spot(self) -> bool:
        """Whether the GPU pool has spot nodes."""
        fleet = self.cluster.fleet
        return fleet.capacity == "spot" if isinstance(fleet, TrainingFleet) else fleet.uses_spot

    def mirrored_images(self) -> tuple[jobs.UpstreamImage, ...]:
        """The upstream images the stack's Kubernetes objects run (job_layer), which must be
        copied into the registry's mirror namespace (after the `pulumi up` that creates it)
        before their pods start: the spot watcher's where the pool has spot."""
        return (jobs.WATCHER_IMAGE,) if self.uses_spot() else ()

    def node_cidrs(self) -> list[pulumi.Input[str]]:
        """The CIDRs of the node vSwitches (in zone order)."""
        return [self.network.vswitch_cidrs[zone] for zone in self.cluster.network.zones]

    def job_layer(self, platform: AckPlatform) -> list[Manifest]:
        """The job layer's objects the stack installs (through `platform.provider`): the jobs
        namespace's default-deny and DNS NetworkPolicies, and the spot watcher DaemonSet where
        the pool has spot."""
        objects = namespace_baseline(platform.storage.namespace)
        if self.uses_spot():
            objects += spot_watch_objects(mirrored_image(self.mirror_prefix(),
                                                         jobs.WATCHER_IMAGE))
        return objects

    def _pool_spec(self, fleet_name: str) -> GpuPoolSpec:
        cluster = self.cluster
        fleet = cluster.fleet
        gpu = cluster.gpu_types.get(self.instance_type())
        labels = {POOL_LABEL: fleet_name, DRIVER_VERSION_LABEL: driver_plan(fleet).versions.driver,
                  **({SKYPILOT_ACCELERATOR_LABEL: skypilot_accelerator(gpu.gpu_model)}
                     if gpu else {})}
        if self.node_plan.uses_erdma():
            labels[ERDMA_LABEL] = "true"
        placement = placement_for(fleet, cluster.gpu_types) \
            if isinstance(fleet, TrainingFleet) else None
        guarantee = self.reserved.guarantee_id if self.reserved else None
        return GpuPoolSpec(
            vswitch_ids=[self.network.vswitch_ids[z] for z in self.fleet_zones()],
            labels=labels, disks=cluster.storage.disks, gpu_count=self.gpu_count(),
            image_type=cluster.ack_settings.image_type,
            placement=placement,
            private_pool_id=guarantee, private_pool_match="Open" if placement is None else "Target",
            kms_key_id=self.kms_key_id, key_name=self.security.key_pair_name,
            resource_group_id=self.alerting.resource_group_id if self.alerting else None)

    def _shared_volume(self) -> SharedVolume | None:
        """The shared file system as a volume (NAS; CPFS has no mount address here)."""
        shared = self.cluster.storage.shared_fs
        if self.shared_fs is None or self.shared_fs.mount_address is None:
            return None
        path = EXPORT_PATHS[FS_TYPES[shared.kind].file_system_type]
        return SharedVolume(server=self.shared_fs.mount_address, path=path,
                            capacity=f"{shared.capacity_gib}Gi" if shared.capacity_gib
                            else VOLUME_CAPACITY)

    def fleet_exports(self) -> dict[str, pulumi.Input[Any]]:
        """What an operator needs next: how to get a kubeconfig (a command, never the
        credential), the cluster, the pools' labels and taint, the registry, the storage."""
        storage = self.storage
        return {
            "cluster_id": self.ack.cluster_id,
            "kubeconfig_command": self.ack.kubeconfig_command,
            "kubernetes_version": self.cluster.ack_settings.kubernetes_version,
            "gpu_node_pool_ids": self.gpu_pools.node_pool_ids,
            "gpu_node_labels": self.gpu_pools.labels,
            "gpu_node_taint": "{}={}:{}".format(*self.gpu_pools.taint),
            "system_node_labels": self.system_pool.labels,
            **({"gpu_fault_alarm_id": self.gpu_faults.alarm_id} if self.gpu_faults else {}),
            "jobs_namespace": storage.namespace,
            "scratch_storage_class": storage.scratch_class,
            **({"shared_volume_claim": storage.shared_claim} if storage.shared_claim else {}),
            "bucket_volume_claims": storage.bucket_claims}


class AckTrainingCluster(AckLayout):
    """A training cluster on ACK: the GPU pools in the first zone of `network.zones`, in
    LowLatency deployment sets where the family supports them, eRDMA where it has it."""

    TYPE = "gpu-infra:layouts:AckTrainingCluster"
    CONFIG = TrainingConfig
    cluster: TrainingConfig

    def fleet_zones(self) -> list[str]:
        """Training nodes share one zone: the first of `network.zones`."""
        return self.cluster.network.zones[:1]

    def mirrored_images(self) -> tuple[jobs.UpstreamImage, ...]:
        """The training operator's and its init container's images, and AckLayout's."""
        return (jobs.OPERATOR_IMAGE, jobs.OPERATOR_INIT_IMAGE, *super().mirrored_images())

    def job_layer(self, platform: AckPlatform) -> list[Manifest]:
        """The training operator (on the system pool, images from the mirror namespace) with
        its namespace's NetworkPolicies, the jobs' peer policy, and AckLayout's."""
        namespace = jobs.OPERATOR_NAMESPACE
        return [*operator_install(self.mirror_prefix(), platform.system_labels),
                *namespace_baseline(namespace),
                operator_policy(namespace, operator_pod_labels(), self.node_cidrs(),
                                self.network.vpc_cidr),
                training_peers(platform.storage.namespace),
                *super().job_layer(platform)]

    def fleet_exports(self) -> dict[str, pulumi.Input[Any]]:
        """AckLayout's, and the ready PyTorchJob (`gpu-infra job`) where the registry names
        the image."""
        job = {"training_job": ready_job(self.cluster, self.stack_name,
                                            platform=self.PLATFORM).text} \
            if self.cluster.default_image else {}
        return {**super().fleet_exports(), **job}


class AckInferenceService(AckLayout):
    """An inference fleet on ACK: one GPU pool over every zone, autoscaled between min_size
    and max_size (or fixed at desired_size); the Service in front of it is the job layer's."""

    TYPE = "gpu-infra:layouts:AckInferenceService"
    CONFIG = InferenceConfig
    cluster: InferenceConfig

    def job_layer(self, platform: AckPlatform) -> list[Manifest]:
        """AckLayout's, and the model server of `serving` (Deployment, NLB Service, HPA)."""
        serving = self.cluster.serving
        objects = super().job_layer(platform)
        if serving is None:
            return objects
        cluster = self.cluster
        zones = cluster.network.zones
        (pool,) = platform.gpu_pools.values()
        vswitches = pulumi.Output.all(*[self.network.vswitch_ids[z] for z in zones]).apply(
            lambda ids: zone_maps(dict(zip(zones, ids, strict=True))))
        low, high = cluster.serving_replicas
        target = ServingTarget(
            name=serving_name(cluster), image=cluster.serving_image,
            command=serving.command, port=cluster.security.service_ports[0],
            readiness_path=serving.readiness_path,
            gpus_per_pod=serving.gpus_per_pod or min(
                cluster.gpu_types.gpus_per_node(name) for name in cluster.fleet.instance_types),
            pool_selector=next(iter(pool.labels.items())), zone_maps=vswitches,
            min_replicas=low, max_replicas=high, target_gpu_util=serving.target_gpu_util,
            internet_facing=serving.internet_facing,
            models_claim=platform.storage.bucket_claims.get("models"), model=serving.model,
            namespace=platform.storage.namespace,
            client_cidrs=[str(cidr) for cidr in cluster.security.client_cidrs],
            node_cidrs=self.node_cidrs())
        return [*objects, *serving_objects(target)]

    def fleet_exports(self) -> dict[str, pulumi.Input[Any]]:
        """AckLayout's, and with `serving` the command that prints the NLB's address."""
        if self.cluster.serving is None:
            return super().fleet_exports()
        return {**super().fleet_exports(), "serving_address_command": (
            f"kubectl -n {self.storage.namespace} get service {serving_name(self.cluster)} "
            "-o jsonpath='{.status.loadBalancer.ingress[0].hostname}'")}


__all__: Sequence[str] = ["AckInferenceService", "AckLayout", "AckTrainingCluster"]
