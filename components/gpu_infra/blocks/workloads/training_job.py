"""A stack's ready training job.

On ACK: a PyTorchJob (kubeflow.org/v1, training operator v1.9.0) with one pod per GPU node of
the training pool, elastic (`elasticPolicy`: c10d, minReplicas/maxReplicas, maxRestarts), and
a ConfigMap with gpu-infra-resume. Each pod asks for every GPU of its node and the node's
eRDMA devices, carries the NCCL settings the ECS bootstrap writes for the same instance type
(gpu_infra_facts.node_stack.nccl_env, the one source), tolerates the GPU taint, selects the
training pool, mounts the shared file system at /mnt/shared, the checkpoints bucket at
/mnt/checkpoints and the spot notice directory of its node read-only, and carries ACK's gang
labels, so no pod is bound until at least `min_nodes` can run together.

When the pool has spot nodes, a Master pod (replicas 1) holds the rendezvous and is pinned to
the pool's on-demand nodes (`node.alibabacloud.com/spot-strategy: NoSpot`); Workers may land on
spot. A reclaimed Worker's pod is recreated by the operator and waits for the pool's
replacement node; torchrun on the others restarts the group (one of maxRestarts) with the
nodes still there, and every worker start resumes from the newest complete checkpoint.

On ECS: a script for node 0 that describes the job where every node's job unit finds it
(gpu-infra-job runs it in its image, gpu-infra-torchrun inside).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from gpu_infra.blocks.bootstrap import JOB_UNIT, step_source
from gpu_infra_facts import jobs
from gpu_infra_facts.ack import ERDMA_RESOURCE, GPU_RESOURCE, GPU_TAINT
from gpu_infra_facts.node_stack import erdma_devices, nccl_env

Manifest = dict[str, Any]

API_VERSION = "kubeflow.org/v1"
CONTAINER = "pytorch"
"""The operator requires a container of this name (pytorchjob_webhook.go)."""
OPERATOR_PORT = ("pytorchjob-port", 23456)
"""The port the operator reads MASTER_PORT from (its default name and number)."""
DEFAULT_SCRIPT = f"{jobs.SHARED_FS_PATH}/train.py"
"""What the job runs unless `--command` says otherwise: a script on the shared file system."""
LAUNCHER_CONFIGMAP_KEY = "gpu-infra-resume"
SHM_GIB = 64
"""/dev/shm of a job pod (memory-backed): PyTorch data loaders and NCCL need more than the
container runtime's 64 MiB default."""
TERMINATION_GRACE_SECONDS = 120
"""How long a drained pod has between SIGTERM and SIGKILL (a reclaim gives about 300 s in
all, of which the watcher's poll and the drain take some)."""


@dataclass(frozen=True)
class TrainingTarget:
    """What the job needs to know of a stack's training pool on ACK."""

    name: str
    """The job's name (a DNS-1035 label): `<cluster>-train`."""
    instance_type: str
    nodes: int
    min_nodes: int
    gpus_per_node: int
    erdma: bool
    nccl_cidr: str
    """The CIDR NCCL picks eRDMA addresses from with several NICs (NCCL_IB_ADDR_RANGE)."""
    pool_selector: tuple[str, str]
    """Node label (key, value) of the training pool."""
    has_spot: bool
    """Some nodes of the pool are spot: the rendezvous moves to a Master on on-demand nodes."""
    shared_fs_claim: str | None
    checkpoints_claim: str | None
    image: str
    namespace: str = "default"


def pod_env(target: TrainingTarget) -> dict[str, str]:
    """The containers' environment: NCCL (as the ECS bootstrap writes it for the instance
    type), the checkpoint directory and the spot notice file."""
    env = nccl_env(erdma_devices(target.instance_type), target.nccl_cidr) if target.erdma \
        else {}
    return {**env, "GPU_INFRA_CHECKPOINT_DIR": f"{jobs.CHECKPOINTS_PATH}/{target.name}",
            "GPU_INFRA_SPOT_NOTICE": jobs.SPOT_NOTICE_FILE}


def container_command(script: list[str]) -> list[str]:
    """torchrun (its elastic settings come from the operator's PET_* variables) starting
    every worker through gpu-infra-resume."""
    return ["torchrun", "--no-python", f"{jobs.LAUNCHER_DIR}/gpu-infra-resume", "python3",
            *script]


def _volumes(target: TrainingTarget) -> tuple[list[Manifest], list[Manifest]]:
    """(volumes, mounts) of a job pod."""
    volumes: list[Manifest] = [
        {"name": "launcher", "configMap": {"name": f"{target.name}-launcher",
                                           "defaultMode": 0o755}},
        {"name": "spot-notice", "hostPath": {"path": jobs.SPOT_NOTICE_DIR,
                                             "type": "DirectoryOrCreate"}},
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": f"{SHM_GIB}Gi"}}]
    mounts: list[Manifest] = [
        {"name": "launcher", "mountPath": jobs.LAUNCHER_DIR, "readOnly": True},
        {"name": "spot-notice", "mountPath": jobs.SPOT_NOTICE_DIR, "readOnly": True},
        {"name": "dshm", "mountPath": "/dev/shm"}]
    for volume, claim, path in (("shared", target.shared_fs_claim, jobs.SHARED_FS_PATH),
                                ("checkpoints", target.checkpoints_claim,
                                 jobs.CHECKPOINTS_PATH)):
        if claim:
            volumes.append({"name": volume, "persistentVolumeClaim": {"claimName": claim}})
            mounts.append({"name": volume, "mountPath": path})
    return volumes, mounts


def _replica(target: TrainingTarget, script: list[str], replicas: int,
             on_demand: bool) -> Manifest:
    volumes, mounts = _volumes(target)
    resources = {GPU_RESOURCE: target.gpus_per_node,
                 **({ERDMA_RESOURCE: 1} if target.erdma else {})}
    selector = dict([target.pool_selector])
    if on_demand:
        selector[jobs.SPOT_STRATEGY_LABEL] = jobs.ON_DEMAND
    container = {
        "name": CONTAINER, "image": target.image, "command": container_command(script),
        "env": [{"name": key, "value": value} for key, value in pod_env(target).items()],
        "ports": [{"name": OPERATOR_PORT[0], "containerPort": OPERATOR_PORT[1]},
                  {"name": "c10d", "containerPort": jobs.RDZV_PORT}],
        "resources": {"limits": resources, "requests": resources},
        "volumeMounts": mounts}
    return {
        "replicas": replicas, "restartPolicy": "OnFailure",
        "template": {
            "metadata": {"labels": {
                "app.kubernetes.io/name": target.name,
                jobs.GANG_NAME_LABEL: target.name,
                jobs.GANG_MIN_LABEL: str(target.min_nodes)}},
            "spec": {
                "nodeSelector": selector,
                "tolerations": [{"key": GPU_TAINT[0], "operator": "Exists",
                                 "effect": GPU_TAINT[2]}],
                "terminationGracePeriodSeconds": TERMINATION_GRACE_SECONDS,
                "containers": [container], "volumes": volumes}}}


def pytorch_job(target: TrainingTarget, script: list[str] | None = None,
                max_restarts: int = jobs.DEFAULT_MAX_RESTARTS) -> list[Manifest]:
    """The ConfigMap with gpu-infra-resume and the PyTorchJob: `script` (default
    DEFAULT_SCRIPT) and its arguments run as `python3 SCRIPT ARGS` on every GPU."""
    script = script or [DEFAULT_SCRIPT]
    meta = {"name": target.name, "namespace": target.namespace,
            "labels": {"app.kubernetes.io/managed-by": "gpu-infra"}}
    launcher = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {**meta, "name": f"{target.name}-launcher"},
                "data": {LAUNCHER_CONFIGMAP_KEY: step_source("gpu-infra-resume")}}
    elastic: Manifest = {"rdzvBackend": jobs.RDZV_BACKEND, "rdzvPort": jobs.RDZV_PORT,
                         "minReplicas": target.min_nodes, "maxReplicas": target.nodes,
                         "maxRestarts": max_restarts}
    master = target.has_spot and target.nodes > 1
    if master:
        elastic["rdzvHost"] = f"{target.name}-master-0"
        replicas = {"Master": _replica(target, script, 1, on_demand=True),
                    "Worker": _replica(target, script, target.nodes - 1, on_demand=False)}
    else:
        replicas = {"Worker": _replica(target, script, target.nodes, on_demand=False)}
    job = {"apiVersion": API_VERSION, "kind": "PyTorchJob", "metadata": meta,
           "spec": {"nprocPerNode": str(target.gpus_per_node), "elasticPolicy": elastic,
                    "runPolicy": {"cleanPodPolicy": "None"},
                    "pytorchReplicaSpecs": replicas}}
    return [launcher, job]


@dataclass(frozen=True)
class EcsFleet:
    """What the ECS job script needs of a training fleet."""

    nodes: int
    instance_type: str
    gpus_per_node: int
    fixed_nodes: int
    """Fixed nodes (node 0 among them holds the rendezvous); 0: one spot worker, alone."""
    spot_workers: int


def ecs_job_script(*, stack: str, fleet: EcsFleet, image: str,
                   script: list[str] | None = None, max_restarts: int | None = None) -> str:
    """The ECS job: run on node 0 (`node0_shell`; on a fleet that is one spot worker, on
    that worker), it refreshes the peers and describes the job in the fleet's job directory
    (GPU_INFRA_JOB_DIR of elastic.env; on the shared file system, else copied to every
    healthy node over SSH): a new JOB_ID, `image`, `script` (default DEFAULT_SCRIPT) as the
    command, the rendezvous on node 0 (on the worker itself when it is alone), NNODES (the
    healthy fixed nodes, plus the spot workers) and the torchrun settings. Every node's
    gpu-infra-job.service, and a node that joins later, runs it in the image
    (steps/gpu-infra-job). `max_restarts`: default the nodes' (elastic.env)."""
    words = " ".join(shlex.quote(word) for word in script or [DEFAULT_SCRIPT])
    fixed = [f"JOB_IMAGE={shlex.quote(image)}", f"JOB_COMMAND={shlex.quote(words)}"]
    restarts = "$MAX_RESTARTS" if max_restarts is None else str(max_restarts)
    if fleet.fixed_nodes:
        where = ["# Run on node 0 (the stack output node0_shell opens a shell there): every "
                 f"node's {JOB_UNIT}", f"{jobs.LAUNCHER_DIR}/gpu-infra-peers",
                 "set -a", ". /etc/gpu-infra/torchrun.env", ". /etc/gpu-infra/elastic.env",
                 "set +a"]
        if fleet.spot_workers:
            where.append(f"NNODES=$((NNODES + {fleet.spot_workers}))")
    else:
        where = ["# Run on the spot worker (the scaling group spot_scaling_group_id holds it): "
                 f"its {JOB_UNIT}", "set -a", ". /etc/gpu-infra/elastic.env", "set +a",
                 f"MASTER_ADDR=127.0.0.1 NNODES=1 NPROC_PER_NODE={fleet.gpus_per_node}"]
    copy = ('ssh -o BatchMode=yes "$host" "mkdir -p $d && cat > $d/job.env.new && '
            'mv $d/job.env.new $d/job.env" < "$d/job.env"')
    return "\n".join([
        "#!/bin/sh",
        f"# gpu-infra training job of stack {stack}: {fleet.nodes} node(s) of "
        f"{fleet.instance_type},",
        f"# image {image}.", where[0],
        "# runs it in its container, and a node that joins later joins it.",
        "set -eu", *where[1:],
        "id=$(date -u +%Y%m%dT%H%M%SZ) d=$GPU_INFRA_JOB_DIR",
        'mkdir -p "$d"',
        "printf '%s\\n' \"JOB_ID=$id\" \"RDZV_HOST=$MASTER_ADDR\" \"RDZV_ID=$RDZV_ID-$id\" "
        "\"NNODES=$NNODES\" \\",
        f'  "NPROC_PER_NODE=$NPROC_PER_NODE" "MAX_RESTARTS={restarts}" \\',
        *(f"  {shlex.quote(line)} \\" for line in fixed), '  > "$d/job.env.new"',
        'mv "$d/job.env.new" "$d/job.env"',
        'if [ "$GPU_INFRA_JOB_SHARED" != 1 ]; then',
        f"  while read -r host _ <&3; do {copy}; done 3< /etc/gpu-infra/hostfile",
        "fi",
        f'echo "job $id: every ready node joins it within {jobs.JOB_POLL_SECONDS} s; '
        f'follow it with journalctl -u {JOB_UNIT} -f"', ""])
