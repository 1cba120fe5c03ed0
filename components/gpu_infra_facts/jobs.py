"""Facts about running jobs on the GPU fleets: the training operator release gpu-infra vendors,
the images it needs, the elastic-rendezvous and spot-notice conventions both platforms share,
the paths a job finds its data at, and the Kubernetes labels ACK's scheduler and cloud
controller read (sources inline; shared/reference/engines-and-operations.md sections 2-3,
checked 2026-12-01). UNCONFIRMED marks what no primary source states.
"""

from __future__ import annotations

from dataclasses import dataclass

# --- The training operator -------------------------------------------------------------------

OPERATOR_VERSION = "v1.9.0"
"""Kubeflow training operator v1, release tag v1.9.0 (commit 6f74c7f6b2ed, 2025-01-21): the
last v1 release with PyTorchJob `elasticPolicy` (Trainer v2 replaced PyTorchJob with
TrainJob, and Trainer v2.2.0 removed the ElasticPolicy API: kubeflow/trainer CHANGELOG).
Elastic torchrun (`--nnodes MIN:MAX`, c10d rendezvous, `--max-restarts`) is what survives a
spot reclaim, so gpu-infra runs v1. Its manifests and the PyTorchJob CRD are vendored under
gpu_infra/blocks/workloads/vendor/training-operator-<version>/."""
OPERATOR_COMMIT = "6f74c7f6b2ed6c27aabd82d0a316b23f0646059c"


@dataclass(frozen=True)
class UpstreamImage:
    """An image a gpu-infra Kubernetes object runs, as upstream publishes it, and the
    repository it takes in the stack's registry (`<registry>/<namespace>/<mirror>`)."""

    source: str
    """Full upstream reference, registry host included."""
    mirror: str
    """`<repository>:<tag>` in the stack's registry namespace."""
    why: str

    @property
    def repository(self) -> str:
        """The repository of `mirror` (without its tag)."""
        return self.mirror.rsplit(":", 1)[0]


OPERATOR_IMAGE = UpstreamImage(
    "docker.io/kubeflow/training-operator:v1-5170a36", "training-operator:v1-5170a36",
    "the operator (manifests/overlays/standalone/kustomization.yaml `images` at v1.9.0)")
OPERATOR_INIT_IMAGE = UpstreamImage(
    "docker.io/library/alpine:3.10", "alpine:3.10",
    "the init container that waits for the master's DNS name in PyTorchJobs with a Master "
    "(pkg/config/config.go PyTorchInitContainerImageDefault at v1.9.0)")
WATCHER_IMAGE = UpstreamImage(
    "docker.io/curlimages/curl:8.11.1", "curl:8.11.1",
    "the spot-notice watcher DaemonSet (gpu-infra-spot-watch is POSIX sh and curl)")
TRAINING_IMAGE = UpstreamImage(
    "docker.io/pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
    "pytorch:2.5.1-cuda12.4-cudnn9-runtime",
    "the default image of ECS training jobs: PyTorch's official CUDA runtime image (torch "
    "2.5.1+cu124, torchrun, Python 3.11, Ubuntu 22.04), whose CUDA 12.4 the nodes' pinned "
    "driver 550 runs (node_stack.DEFAULT_DRIVER_STACK)")
TRAINING_IMAGE_DIGEST = \
    "sha256:c8268a92a69bd500f8be0e665b2630ee006dadaf7bfbc24249141b15ff622755"
"""The linux/amd64 manifest the tag names (manifest 1,366 bytes, config
sha256:946241f40f56c5ac17b12be451a9ff6bf7163acaac37d1f15bbc7404f4394e57), as projects pinning
it record it (e.g. Dockerfiles `FROM pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime@sha256:
c8268a92...`); a mirror copied with `skopeo copy` keeps it. What a node pulls: about 3.1 GB
compressed (Docker Hub's tag page; about 4.8 GB unpacked), UNCONFIRMED: no stored primary
source states the figure."""
MIRRORED_IMAGES = (OPERATOR_IMAGE, OPERATOR_INIT_IMAGE, WATCHER_IMAGE)
"""Every image the stack's Kubernetes objects run besides the user's own: China regions may
not reach docker.io, so each must be copied into the stack's registry before `pulumi up`."""

OPERATOR_NAMESPACE = "kubeflow"
"""Namespace of the standalone overlay."""
OPERATOR_WEBHOOK_PORT = 9443
"""The operator pod's webhook server port (deployment.yaml `webhook-server`; its Service maps
443 to it): the API server calls it to admit PyTorchJobs."""
OPERATOR_PROBE_PORT = 8081
"""The operator pod's liveness and readiness port (deployment.yaml `/healthz`, `/readyz`)."""
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
"""Label the operator puts on every pod of a job (kubeflow/training-operator
pkg/apis/kubeflow.org/v1/common_types.go, JobNameLabel, at v1.9.0)."""
OPERATOR_SCHEMES = ("pytorchjob",)
"""`--enable-scheme`: only the PyTorchJob controller and webhook run (one CRD installed)."""

# --- Elastic training: both platforms ---------------------------------------------------------

RDZV_BACKEND = "c10d"
RDZV_PORT = 29400
"""torchrun's c10d rendezvous port (PyTorch elastic docs: `--rdzv-endpoint HOST:29400`),
hosted by the node that holds rank-0's rendezvous: on-demand node 0 on ECS, the Master pod on
an on-demand ACK node."""
DEFAULT_MAX_RESTARTS = 3
"""Worker-group restarts torchrun allows before the job fails (`--max-restarts`,
`elasticPolicy.maxRestarts`). A reclaimed node costs one on the survivors (their collectives
fail); a node joining does not."""

SPOT_NOTICE_ITEM = "instance/spot/termination-time"
"""Metadata item with the release time of a spot instance being reclaimed (404 while none
is scheduled), about 5 minutes (300 s) ahead (ECS "What is a spot instance", instance
metadata)."""
SPOT_POLL_SECONDS = 5
"""How often the watcher asks the metadata service."""
SPOT_NOTICE_DIR = "/run/gpu-infra/spot"
SPOT_NOTICE_FILE = f"{SPOT_NOTICE_DIR}/termination-time"
"""The last-checkpoint signal, the same on both platforms: the watcher writes the
termination time here when the notice appears (atomically, once). A training loop checks the
file (path in $GPU_INFRA_SPOT_NOTICE) between steps and saves a checkpoint when it exists.
On ECS it is the node's own /run; on ACK the watcher DaemonSet writes the node's /run and the
job's pods mount that directory read-only at the same path."""

CHECKPOINT_MARKER = "COMPLETE"
"""A checkpoint is a directory under $GPU_INFRA_CHECKPOINT_DIR; the writer creates this empty
file in it last, so a directory without it (a save cut off by the reclaim) is never resumed
from. gpu-infra-resume picks the directory whose marker is newest."""

# --- Where a job finds its data -----------------------------------------------------------------

SHARED_FS_PATH = "/mnt/shared"
CHECKPOINTS_PATH = "/mnt/checkpoints"
MODELS_PATH = "/mnt/models"
"""Mount points inside job pods on ACK: the shared file system and the OSS buckets (checkpoints
bucket read-write, models read-only). On ECS the shared file system is at the same
path and checkpoints go to `<shared>/checkpoints`."""
JOB_DIR = f"{SHARED_FS_PATH}/.gpu-infra/job"
"""Where an ECS job is described (`job.env`, written by the script `gpu-infra job` prints)
and marked finished (`<JOB_ID>.done`): on the shared file system, so every node of the fleet,
a replacement included, finds the running job; without a shared file system the script copies
it to each node's STATE_JOB_DIR."""
STATE_JOB_DIR = "/var/lib/gpu-infra/job"
JOB_POLL_SECONDS = 10
"""How often gpu-infra-job.service looks for a job to join."""
LEAVE_SECONDS = 240
"""On a spot notice a node leaves the job (stops its container: torchrun's agent takes the
signal and keeps the rendezvous open for the others) once a complete checkpoint newer than
the notice exists, or this many seconds after the notice at the latest, so the others go on
before the release at about 300 s instead of when their collectives time out."""
LAUNCHER_DIR = "/opt/gpu-infra/bin"
"""gpu-infra-resume (and on ECS gpu-infra-torchrun) on the nodes, and in ACK job pods (from a
ConfigMap)."""

# --- Kubernetes labels ACK reads ---------------------------------------------------------------

SPOT_STRATEGY_LABEL = "node.alibabacloud.com/spot-strategy"
"""Set on every ACK node by the cloud controller manager from the instance's SpotStrategy
(NoSpot, SpotAsPriceGo, SpotWithPriceLimit): kubernetes/cloud-provider-alibaba-cloud
pkg/controller/node (LabelSpotStrategy). The Master pod selects NoSpot: the on-demand part of
the pool holds the rendezvous."""
ON_DEMAND = "NoSpot"
GANG_NAME_LABEL = "pod-group.scheduling.sigs.k8s.io/name"
GANG_MIN_LABEL = "pod-group.scheduling.sigs.k8s.io/min-available"
"""Gang scheduling on ACK Pro by pod labels: kube-scheduler creates a PodGroup from them and
binds none of its pods until min-available can be placed together (ACK "Use Gang
scheduling", doc-detail/178169, method 1). The page is stored cut off before its example, so
the exact label spelling is UNCONFIRMED here (it is the coscheduling plugin's)."""
SKYPILOT_ACCELERATOR_LABEL = "skypilot.co/accelerator"
"""Node label SkyPilot reads for the GPU model on Kubernetes (lower-case names, e.g. a100,
h100, l20): it does not know aliyun.accelerator/* (skypilot docs, Kubernetes setup)."""


def skypilot_accelerator(gpu_model: str) -> str:
    """The `skypilot.co/accelerator` value of a catalog GPU model: the first model name,
    lower case, with the memory size where SkyPilot names the larger variant apart (its
    A100 is the 40 GB one, A100-80GB the other; V100 and V100-32GB): `NVIDIA A100/A800
    80GB` -> `a100-80gb`, `NVIDIA A100 40GB` -> `a100`, `NVIDIA H20` -> `h20`, `NVIDIA A10
    (vGPU)` -> `a10`. Names SkyPilot's catalog lacks (h20, l20) are UNCONFIRMED there."""
    words = gpu_model.removeprefix("NVIDIA ").split(" (")[0].split()
    name = words[0].split("/")[0].lower()
    size = next((word.lower() for word in words[1:] if word.upper().endswith("GB")), None)
    return f"{name}-{size}" if (name, size) in (("a100", "80gb"), ("v100", "32gb")) else name
