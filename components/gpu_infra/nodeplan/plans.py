"""What a fleet's nodes get, decided from the stack alone: the bootstrap (BootstrapSpec) of
its nodes, whether they are fixed, boot gpu-infra's bootstrap, use eRDMA, learn each other,
run elastic jobs and watch for spot notices. No Pulumi here: `validate` renders the nodes'
user data with it, and the layouts build their fleets from it (LayoutBase.nodes).

node_plan(cluster) is the plan of a stack's fleet: TrainingNodes for fixed ECS nodes (training),
NodePlan for the ECS scaling fleets (inference, rendering), AckNodes on ACK, None for stacks
without a fleet (image baking).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, TypedDict, cast

from gpu_infra.blocks.bootstrap import (
    DATA_ROOT,
    SHARED_FS_MOUNT_POINT,
    STATE_ROOT,
    BootstrapSpec,
    ElasticLaunch,
    GpuHealthCheck,
    GridPackage,
    NodeRegistry,
    RenderWorker,
    ServingUnit,
    SharedFsMount,
    SpotWatch,
    health_group_name,
    machine_group_id,
    trust_names,
    with_node_tools,
)
from gpu_infra.knowhow.node_software import (
    driver_plan,
    gpu_counts,
    may_have_nvswitch,
    nvlink_types,
)
from gpu_infra.knowhow.placement import erdma_for
from gpu_infra.schema import ClusterCommon, FleetCluster, InferenceConfig
from gpu_infra.schema.compute import TrainingFleet
from gpu_infra.schema.node import OSS_URL, DriverConfig
from gpu_infra_facts import container_runtime, jobs
from gpu_infra_facts.file_systems import NFS_OPTIONS
from gpu_infra_facts.naming import child_name, fit_name
from gpu_infra_facts.node_stack import ERDMA_DEVICE_DIR
from gpu_infra_facts.types import BUCKET, MNS_QUEUE

RECLAIM_REPORT_DIR = f"{SHARED_FS_MOUNT_POINT}/.gpu-infra/reclaims"
"""Where a reclaimed spot node leaves its report (its release time)."""


class LaunchSpec(TypedDict, total=False):
    """BootstrapSpec's job fields a node plan sets (NodePlan.launch_spec)."""

    elastic: ElasticLaunch
    spot_watch: SpotWatch


def gpu_fleet_name(cluster_name: str) -> str:
    """The GPU fleet's component name and GpuFleet tag value: `<cluster>-gpu`."""
    return f"{cluster_name}-gpu"


def gpu_health_name(cluster_name: str) -> str:
    """The GPU-health alarm's component name: `<cluster>-gpu-health`."""
    return f"{cluster_name}-gpu-health"


def grid_package(driver: DriverConfig) -> GridPackage | None:
    """The GRID package the nodes download (`driver.grid_package`, oss://<bucket>/<key>, and
    its sha256); None without one."""
    match = OSS_URL.match(driver.grid_package or "")
    return GridPackage(match["bucket"], match["key"], driver.grid_package_sha256) \
        if match else None


def checkpoint_dir(cluster: FleetCluster, shared_fs: bool) -> str:
    """Where ECS training jobs keep checkpoints (GPU_INFRA_CHECKPOINT_DIR): on the shared file
    system when the nodes mount one, else on the first data disk (node-local: it does not
    outlive the node), else under /var/lib/gpu-infra."""
    if shared_fs:
        return f"{SHARED_FS_MOUNT_POINT}/checkpoints"
    if cluster.storage.disks:
        return f"{DATA_ROOT}/{cluster.storage.disks[0].name}/checkpoints"
    return f"{STATE_ROOT}/checkpoints"


@dataclass(frozen=True)
class NodePlan:
    """The nodes of `cluster`'s fleet. This base is the scaling fleets' (inference,
    rendering): nodes that come and go, boot gpu-infra's bootstrap, no eRDMA, no wiring, no
    job launcher."""

    cluster: FleetCluster
    FIXED_NODES: ClassVar[bool] = False
    """Whether the fleet is fixed nodes with known instance ids (their ECS events can be
    scoped to them)."""
    BOOTSTRAPS: ClassVar[bool] = True
    """Whether the nodes boot gpu-infra's bootstrap (user data) and assume the stack's
    instance role; ACK nodes are set up by ACK."""

    def bootstrap_spec(self, fleet_name: str, *, shared_fs_source: str | None = None,
                       scaling_group_id: str | None = None,
                       lifecycle_hook_id: str | None = None,
                       global_suffix: str | None = None,
                       node_tools_bucket: str | None = None,
                       registry: NodeRegistry | None = None) -> BootstrapSpec:
        """What the fleet's nodes need, from the stack and the catalog (and the values the
        cloud assigns: the shared file system's mount address, the scaling group and its
        readiness hook; `global_suffix`: the stack's, which ends the log machine-group id;
        `node_tools_bucket`: the bucket holding the node tools' installer, None: no node
        tools; `registry`: the stack's registry, whose mirror of the check image the
        readiness gate runs, None: none)."""
        cluster = self.cluster
        fleet = cluster.fleet
        plan = driver_plan(fleet)
        if plan.route is None:
            raise ValueError("fleet.driver.route: no driver route (validator "
                             "driver-route-missing)")
        launch = self.launch_spec(fleet_name, shared_fs=shared_fs_source is not None)
        spec = BootstrapSpec(
            fleet=fleet_name, region=cluster.region,
            gpu_counts=gpu_counts(fleet, cluster.gpu_types),
            nvlink_types=nvlink_types(fleet, cluster.gpu_types),
            route=plan.route, driver=plan.versions, erdma=self.uses_erdma(),
            jumbo_frames=self.uses_jumbo_frames(),
            fabric_manager=may_have_nvswitch(fleet, cluster.gpu_types),
            data_disks=tuple(disk.name for disk in cluster.storage.disks),
            shared_fs=SharedFsMount(shared_fs_source, NFS_OPTIONS) if shared_fs_source else None,
            trust=trust_names(fleet_name, global_suffix) if self.wires_cluster() else None,
            grid=grid_package(fleet.driver),
            scaling_group_id=scaling_group_id, lifecycle_hook_id=lifecycle_hook_id,
            log_machine_id=machine_group_id(fleet_name, global_suffix)
            if cluster.logs.enabled else None,
            gpu_health=self.gpu_health_check(), returns_jobs=self.returns_jobs(),
            render_worker=self.render_worker(fleet_name, global_suffix,
                                             shared_fs=shared_fs_source is not None),
            registry=registry, check_image=None if registry is None else
            f"{registry.mirror_prefix}/{container_runtime.CHECK_IMAGE.mirror}",
            serving=self.serving_unit(global_suffix), **launch)
        return spec if node_tools_bucket is None else with_node_tools(spec, node_tools_bucket)

    def parts(self) -> list[NodePlan]:
        """The plans of the fleet's kinds of nodes, each with its own user data: this one
        (and, on a training fleet with fixed nodes, its spot workers)."""
        return [self]

    def gpu_health_check(self) -> GpuHealthCheck | None:
        """The GPU health check the nodes run after boot, where the stack alarms on it
        (contacts, `monitoring.events.gpu_health`) and the nodes boot gpu-infra's bootstrap.
        The node tools deliver it (the user data has no room for it)."""
        monitoring = self.cluster.monitoring
        if not (self.BOOTSTRAPS and monitoring.active and monitoring.events.gpu_health):
            return None
        return GpuHealthCheck(health_group_name(gpu_health_name(self.cluster.name)))

    def launch_spec(self, fleet_name: str, *, shared_fs: bool) -> LaunchSpec:
        """The job launcher and spot watcher the nodes get (BootstrapSpec `elastic` and
        `spot_watch`). Default: none."""
        return {}

    def serving_unit(self, global_suffix: str | None = None) -> ServingUnit | None:
        """The model server every node runs: the stack's `serving` where the nodes boot
        gpu-infra's bootstrap (ECS inference), on the first service port, its model from the
        stack's models bucket (its name with `global_suffix`) kept on the first data disk
        (else under the state directory); None without `serving`."""
        cluster = self.cluster
        if not isinstance(cluster, InferenceConfig) or cluster.serving is None \
                or not self.BOOTSTRAPS:
            return None
        config = cluster.serving
        disks = cluster.storage.disks
        cache = f"{DATA_ROOT}/{disks[0].name}/models" if disks else f"{STATE_ROOT}/models"
        return ServingUnit(
            image=cluster.serving_image, command=tuple(config.command),
            port=cluster.security.service_ports[0],
            readiness_path=config.readiness_path, model=config.model,
            models_bucket=cluster.bucket_names(global_suffix).get("models", "")
            if config.model else "", model_cache=cache)

    def returns_jobs(self) -> bool:
        """Whether the drain hands unfinished jobs back to the stack's job queue at once: a
        fleet that drains (`drain_seconds`) and takes its jobs from the stack's queue
        (rendering; an inference fleet's work in flight is requests)."""
        cluster = self.cluster
        fleet = cluster.fleet
        return (self.BOOTSTRAPS and cluster.layout == "rendering"
                and getattr(fleet, "drain_seconds", None) is not None
                and cluster.stack_publishes_queue_metric)

    def render_worker(self, fleet_name: str, global_suffix: str | None, *,
                      shared_fs: bool) -> RenderWorker | None:
        """The render worker of a render farm with a `worker` (and the stack's job queue):
        jobs from `<fleet>-jobs-queue`, frames to the outputs bucket, each job's output
        directory on the first data disk (else under /var/lib/gpu-infra), the shared file
        system mounted at its own path. None otherwise."""
        cluster = self.cluster
        worker = getattr(cluster, "worker", None)
        queue = cluster.fleet.queue_scaling if hasattr(cluster.fleet, "queue_scaling") else None
        if worker is None or queue is None or not self.returns_jobs():
            return None
        disks = cluster.storage.disks
        return RenderWorker(
            queue=fit_name(MNS_QUEUE, child_name(child_name(fleet_name, "jobs"), "queue"),
                           global_suffix),
            image=worker.image, command=tuple(worker.command), environment=worker.environment,
            gpus=str(worker.gpus or "all"),
            bucket=fit_name(BUCKET, f"{cluster.bucket_name_prefix}-outputs", global_suffix),
            visibility_seconds=queue.job_timeout_seconds,
            work_dir=f"{DATA_ROOT}/{disks[0].name}/gpu-infra-render" if disks
            else f"{STATE_ROOT}/render",
            mounts=(SHARED_FS_MOUNT_POINT,) if shared_fs else ())

    def dead_letter_after(self) -> int | None:
        """Receives of one job before the job queue moves it to its dead-letter queue: the
        render worker's `max_attempts`; None without a render worker."""
        worker = getattr(self.cluster, "worker", None)
        return worker.max_attempts if worker is not None and self.returns_jobs() else None

    def uses_erdma(self) -> bool:
        """Whether the nodes use eRDMA: training fleets as they ask (auto: where the family
        has it), on ECS and ACK alike. Default: no (scaling fleets)."""
        fleet = self.cluster.fleet
        return isinstance(fleet, TrainingFleet) and erdma_for(fleet, self.cluster.gpu_types)

    def uses_jumbo_frames(self) -> bool:
        """Whether the eRDMA MTU is the jumbo-frame one (8500). Default: no."""
        return False

    def wires_cluster(self) -> bool:
        """Whether the nodes learn each other (hostfile, torchrun, SSH). Default: no."""
        return False


class TrainingNodes(NodePlan):
    """Fixed training nodes: eRDMA where the family has it, wired to each other, elastic
    torchrun, and the spot watcher on spot fleets."""

    FIXED_NODES = True

    def uses_jumbo_frames(self) -> bool:
        """`fleet.jumbo_frames` (the nodes have them enabled)."""
        fleet = self.cluster.fleet
        return isinstance(fleet, TrainingFleet) and fleet.jumbo_frames

    def launch_spec(self, fleet_name: str, *, shared_fs: bool) -> LaunchSpec:
        """The job unit on every node, which runs the job in its container (the shared file
        system, the data disks and the checkpoints mounted, eRDMA where the nodes use it)
        with elastic torchrun inside (gpu-infra-torchrun: `--nnodes MIN:<healthy nodes>`,
        MIN the on-demand nodes of a spot fleet, else every node; c10d on node 0),
        and on the spot workers the spot watcher (SpotWorkers)."""
        fleet = self.cluster.fleet
        if not isinstance(fleet, TrainingFleet):
            return {}
        checkpoints = checkpoint_dir(self.cluster, shared_fs)
        mounts = [SHARED_FS_MOUNT_POINT] if shared_fs else []
        mounts += [f"{DATA_ROOT}/{disk.name}" for disk in self.cluster.storage.disks]
        if not any(checkpoints.startswith(f"{path}/") for path in mounts):
            mounts.append(checkpoints)
        spec: LaunchSpec = {"elastic": ElasticLaunch(
            min_nodes=fleet.min_nodes if fleet.capacity == "spot" else None,
            max_restarts=jobs.DEFAULT_MAX_RESTARTS, rdzv_id=fleet_name,
            checkpoint_dir=checkpoints,
            job_dir=jobs.JOB_DIR if shared_fs else jobs.STATE_JOB_DIR, mounts=tuple(mounts),
            devices=(ERDMA_DEVICE_DIR,) if self.uses_erdma() else ())}
        return spec

    def wires_cluster(self) -> bool:
        """Training nodes learn each other at boot and at job start."""
        return True

    def parts(self) -> list[NodePlan]:
        """The fixed nodes and, on spot capacity, the spot workers."""
        fleet = self.cluster.fleet
        workers = isinstance(fleet, TrainingFleet) and fleet.fixed_nodes and fleet.spot_workers
        return [self, SpotWorkers(self.cluster)] if workers else [self]


class SpotWorkers(TrainingNodes):
    """The spot workers of a spot training fleet (an ESS scaling group behind the fixed
    on-demand nodes): the same node software and job unit, no wiring (they find the job and
    its rendezvous in the job directory on the shared file system), and the spot watcher,
    which makes a worker leave the job on its notice; ESS replaces it."""

    FIXED_NODES = False

    def launch_spec(self, fleet_name: str, *, shared_fs: bool) -> LaunchSpec:
        """The fixed nodes' job unit and the spot watcher (its release report on the shared
        file system)."""
        spec = super().launch_spec(fleet_name, shared_fs=shared_fs)
        spec["spot_watch"] = SpotWatch(report_dir=RECLAIM_REPORT_DIR if shared_fs else None)
        return spec

    def wires_cluster(self) -> bool:
        """Workers join through the job directory, not the fleet's SSH trust."""
        return False

    def parts(self) -> list[NodePlan]:
        """The workers alone (a fleet that is one spot worker)."""
        return [self]


class AckNodes(NodePlan):
    """ACK node pools: ACK sets the nodes up (driver, device plugin, eRDMA, logs); they boot
    no gpu-infra bootstrap and assume no instance role of the stack."""

    BOOTSTRAPS = False


def node_plan(cluster: ClusterCommon) -> NodePlan | None:
    """The plan of `cluster`'s fleet, by its platform and fleet model: AckNodes on ACK,
    TrainingNodes for a TrainingFleet with fixed nodes (SpotWorkers for one that is all spot
    workers), else the scaling fleets' NodePlan;
    None for a stack without a fleet (image baking)."""
    fleet = getattr(cluster, "fleet", None)
    if fleet is None:
        return None
    with_fleet = cast("FleetCluster", cluster)  # every model with a fleet is a fleet cluster
    if getattr(cluster, "platform", "ecs") == "ack":
        return AckNodes(with_fleet)
    if isinstance(fleet, TrainingFleet):
        return (TrainingNodes if fleet.fixed_nodes else SpotWorkers)(with_fleet)
    return NodePlan(with_fleet)


__all__ = ["RECLAIM_REPORT_DIR", "AckNodes", "LaunchSpec", "NodePlan", "SpotWorkers",
           "TrainingNodes", "checkpoint_dir", "gpu_fleet_name", "gpu_health_name",
           "grid_package", "node_plan"]
