"""The ready training job of a training stack, from the stack file: what `gpu-infra job STACK`
prints and the plan exports as `training_job`.

ECS stacks get a script for node 0 that describes the job for every node's job unit, which
runs elastic torchrun (gpu-infra-torchrun) in the image `--image` names or the pinned PyTorch
image (jobs.TRAINING_IMAGE) as the stack's registry mirrors it.
ACK stacks get a ConfigMap and a PyTorchJob (blocks.workloads.training_job) for their training
pool, in the jobs namespace, with the shared file system and checkpoints bucket claims
blocks.ack.KubeStorage makes, and the image `--image` names or the registry's first
repository (tag latest).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from gpu_infra.blocks.ack.kube import JOBS_NAMESPACE, SHARED_CLAIM, bucket_claim
from gpu_infra.blocks.registry import mirrored_image
from gpu_infra.blocks.storage.buckets import bucket_purposes
from gpu_infra.blocks.workloads.training_job import (
    EcsFleet,
    TrainingTarget,
    ecs_job_script,
    pytorch_job,
)
from gpu_infra.knowhow.placement import erdma_for
from gpu_infra.nodeplan.plans import gpu_fleet_name
from gpu_infra.schema import FleetCluster, InferenceConfig, TrainingConfig
from gpu_infra.schema.ack import Platform
from gpu_infra_facts import jobs
from gpu_infra_facts.ack import POOL_LABEL
from gpu_infra_facts.file_systems import EXPORT_PATHS, FS_TYPES
from gpu_infra_facts.image_references import reference_problem

MAX_RESTARTS_LIMIT = 100
"""The most restarts `--max-restarts` takes: beyond it a job that cannot run loops for hours."""


@dataclass(frozen=True)
class JobRequest:
    """What the user adds to the stack's job: the image, the script and its arguments
    (default /mnt/shared/train.py), the restart budget (default 3)."""

    image: str | None = None
    script: list[str] | None = None
    max_restarts: int | None = None


@dataclass(frozen=True)
class ReadyJob:
    """The job: `text` is what a user runs or applies; `manifests` its Kubernetes objects
    (empty on ECS)."""

    platform: str
    text: str
    manifests: list[dict[str, Any]] = field(default_factory=list)


def ecs_training_image(cluster: FleetCluster) -> str:
    """The image of an ECS stack's training job unless `--image` says otherwise: the pinned
    PyTorch image (jobs.TRAINING_IMAGE) in the stack's registry's mirror namespace, by tag and
    digest (`skopeo copy --all`, the mirror command, keeps the digest)."""
    mirrored = mirrored_image(cluster.registry_prefix(mirror=True), jobs.TRAINING_IMAGE)
    return f"{mirrored}@{jobs.TRAINING_IMAGE_DIGEST}"


def serving_name(cluster: InferenceConfig) -> str:
    """The model server's Deployment, Service and autoscaler: `<cluster>-serve`."""
    return f"{cluster.name}-serve"


def training_target(cluster: TrainingConfig, image: str) -> TrainingTarget:
    """What the PyTorchJob of an ACK training stack needs of its pool and storage."""
    fleet = cluster.fleet
    zone = cluster.network.zones[0]
    shared = cluster.storage.shared_fs
    mountable = shared.enabled and \
        EXPORT_PATHS.get(FS_TYPES[shared.kind].file_system_type) is not None  # not CPFS
    return TrainingTarget(
        name=f"{cluster.name}-train", instance_type=fleet.instance_type, nodes=fleet.nodes,
        min_nodes=fleet.min_nodes,
        gpus_per_node=cluster.gpu_types.gpus_per_node(fleet.instance_type),
        erdma=erdma_for(fleet, cluster.gpu_types),
        nccl_cidr=str(cluster.network.pod_vswitch_cidr(zone)),
        pool_selector=(POOL_LABEL, gpu_fleet_name(cluster.name)),
        has_spot=fleet.capacity == "spot",
        shared_fs_claim=SHARED_CLAIM if mountable else None,
        checkpoints_claim=bucket_claim("checkpoints")
        if "checkpoints" in bucket_purposes(cluster) else None,
        image=image, namespace=JOBS_NAMESPACE)


def job_problems(cluster: TrainingConfig, request: JobRequest,
                 platform: Platform = "ecs") -> list[str]:
    """One line per thing in `request` the stack on `platform` cannot take."""
    problems = []
    if platform == "ack":
        if request.image is None and cluster.default_image is None:
            problems.append("--image: missing; this stack's registry lists no repository "
                            "to take the job image from; give one, e.g. --image "
                            "registry-vpc.cn-beijing.aliyuncs.com/team/train:1")
        if request.image is not None and (problem := reference_problem(request.image)):
            problems.append(f"--image: {problem}")
    elif request.image is not None and (problem := reference_problem(request.image)):
        problems.append(f"--image: {problem}")
    if request.script is not None and not request.script:
        problems.append("--command: empty; give the training script and its arguments, e.g. "
                        "'/mnt/shared/train.py --epochs 3'")
    if request.max_restarts is not None and not 0 <= request.max_restarts <= MAX_RESTARTS_LIMIT:
        problems.append(f"--max-restarts: {request.max_restarts} is out of range; allowed 0 to "
                        f"{MAX_RESTARTS_LIMIT}")
    return problems


def ready_job(cluster: TrainingConfig, stack_name: str, request: JobRequest | None = None,
              platform: Platform = "ecs") -> ReadyJob:
    """The job of the stack on `platform` (call job_problems first: a request it refuses
    raises ValueError)."""
    request = request or JobRequest()
    problems = job_problems(cluster, request, platform)
    if problems:
        raise ValueError("\n".join(problems))
    if platform == "ack":
        image = request.image or cluster.default_image or ""
        manifests = pytorch_job(training_target(cluster, image), request.script,
                                request.max_restarts if request.max_restarts is not None
                                else jobs.DEFAULT_MAX_RESTARTS)
        return ReadyJob("ack", manifests_yaml(manifests), manifests)
    fleet = cluster.fleet
    text = ecs_job_script(
        stack=stack_name, fleet=EcsFleet(
            nodes=fleet.nodes, instance_type=fleet.instance_type,
            gpus_per_node=cluster.gpu_types.gpus_per_node(fleet.instance_type),
            fixed_nodes=fleet.fixed_nodes, spot_workers=fleet.spot_workers),
        image=request.image or ecs_training_image(cluster), script=request.script,
        max_restarts=request.max_restarts)
    return ReadyJob("ecs", text)


class _BlockStyle(yaml.SafeDumper):
    """Multi-line strings as `|` blocks (a script in a ConfigMap stays readable), and no
    anchors: an object used twice (a pod's limits and requests) is written out twice."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _string(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockStyle.add_representer(str, _string)


def manifests_yaml(manifests: list[dict[str, Any]]) -> str:
    """Kubernetes objects as one multi-document YAML file (`kubectl apply -f`)."""
    return yaml.dump_all(manifests, Dumper=_BlockStyle, sort_keys=False,
                         default_flow_style=False)
