"""The model server of an inference stack (`serving`): on ACK what blocks.workloads.serving
makes of it (a Deployment on the GPU pool, an NLB Service, an HPA); on ECS the unit every node
of the fleet runs (blocks.bootstrap, gpu-infra-serve) behind the stack's load balancer."""

from __future__ import annotations

from pydantic import Field, field_validator

from gpu_infra.schema.base import StrictModel
from gpu_infra.schema.loadbalancer import HEALTH_CHECK_PATH_PATTERN
from gpu_infra_facts.image_references import reference_problem
from gpu_infra_facts.serving import MODEL_PREFIX

MAX_GPU_UTIL_PERCENT = 100
ACK_ONLY_FIELDS = ("gpus_per_pod", "min_replicas", "max_replicas", "target_gpu_util",
                   "internet_facing")
"""Fields of the Kubernetes objects; on ECS: every GPU of the node, `fleet` sizes and scales
the servers, `load_balancer.internet_facing` (ServingConfig.ecs_problems)."""
ECS_EQUIVALENTS = {
    "gpus_per_pod": "the server gets every GPU of its node",
    "min_replicas": "fleet.min_size sets the fewest servers",
    "max_replicas": "fleet.max_size sets the most servers",
    "target_gpu_util": "fleet.gpu_scaling scales on the GPUs' load",
    "internet_facing": "set load_balancer.internet_facing",
}


class ServingConfig(StrictModel):
    """The model server the stack runs (`security.service_ports[0]` is the port it listens
    on): on ACK a Deployment on the GPU pool; on ECS a container on every node of the
    fleet, with every GPU of its node, behind `load_balancer`."""

    image: str | None = Field(default=None, min_length=1, max_length=512)
    """Container image. Default: the first `registry.repositories` entry, tag latest."""
    command: list[str] = Field(default=[], max_length=64)
    """The server's command and arguments. Default: the image's entrypoint."""
    readiness_path: str = Field(default="/health", pattern=HEALTH_CHECK_PATH_PATTERN)
    """HTTP path that answers 2xx once the server can take requests: the pods' readiness
    probe, the load balancer's health check and, on ECS, what a new node waits for before it
    tells the scaling group it is ready. Default /health (vLLM's; Triton's is
    /v2/health/ready)."""
    model: str | None = Field(default=None, max_length=256, pattern=MODEL_PREFIX.pattern)
    """The model's prefix in the stack's models bucket (e.g. `chat` or `llama-3-8b/v2`); the
    server finds it read-only at /mnt/models/<model> (env MODEL_DIR). On ACK the models
    bucket is mounted there; on ECS each node downloads the files the prefix's SHA256SUMS
    manifest (`sha256sum` output) lists, checks every one and only then starts the server.
    Default none: the image carries its model."""
    gpus_per_pod: int | None = Field(default=None, ge=1, le=16)
    """ACK only: GPUs each server asks for. Default: every GPU of the fleet's smallest
    instance type (one server per node)."""
    min_replicas: int | None = Field(default=None, ge=1, le=1000)
    """ACK only: fewest servers. Default: fleet.min_size, at least 1."""
    max_replicas: int | None = Field(default=None, ge=1, le=1000)
    """ACK only: most servers. Default: fleet.max_size."""
    target_gpu_util: int = Field(default=70, ge=1, le=MAX_GPU_UTIL_PERCENT)
    """ACK only: average GPU utilisation (percent) the autoscaler keeps. Default 70."""
    @field_validator("image")
    @classmethod
    def _image_reference(cls, image: str | None) -> str | None:
        problem = None if image is None else reference_problem(image)
        if problem:
            raise ValueError(problem)
        return image

    internet_facing: bool = False
    """ACK only: an internet NLB instead of the default intranet one."""

    def ecs_problems(self) -> list[str]:
        """One line per field set that only the ACK objects have."""
        return [f"serving.{field}: ACK only; on ECS {ECS_EQUIVALENTS[field]}; remove it"
                for field in ACK_ONLY_FIELDS if field in self.model_fields_set]
