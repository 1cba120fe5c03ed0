"""The model server of an inference stack on ACK (`serving`, platform ack only): what
blocks.workloads.serving makes of it (a Deployment on the GPU pool, an NLB Service, an HPA)."""

from __future__ import annotations

from pydantic import Field, field_validator

from gpu_infra.schema.base import StrictModel
from gpu_infra.schema.loadbalancer import HEALTH_CHECK_PATH_PATTERN
from gpu_infra_facts.image_references import reference_problem

MAX_GPU_UTIL_PERCENT = 100


class ServingConfig(StrictModel):
    """The model server the stack runs on its GPU pool (`security.service_ports[0]` is the
    port it listens on). ACK only: on ECS the nodes run the server themselves."""

    image: str | None = Field(default=None, min_length=1, max_length=512)
    """Container image. Default: the first `registry.repositories` entry, tag latest."""
    command: list[str] = Field(default=[], max_length=64)
    """The server's command and arguments. Default: the image's entrypoint."""
    readiness_path: str = Field(default="/health", pattern=HEALTH_CHECK_PATH_PATTERN)
    """HTTP path that answers 200 once the server can take requests: the pods' readiness
    probe and the NLB's health check. Default /health (vLLM's; Triton's is
    /v2/health/ready)."""
    gpus_per_pod: int | None = Field(default=None, ge=1, le=16)
    """GPUs each server asks for. Default: every GPU of the fleet's smallest instance type
    (one server per node)."""
    min_replicas: int | None = Field(default=None, ge=1, le=1000)
    """Fewest servers. Default: fleet.min_size, at least 1."""
    max_replicas: int | None = Field(default=None, ge=1, le=1000)
    """Most servers. Default: fleet.max_size."""
    target_gpu_util: int = Field(default=70, ge=1, le=MAX_GPU_UTIL_PERCENT)
    """Average GPU utilisation (percent) the autoscaler keeps. Default 70."""
    @field_validator("image")
    @classmethod
    def _image_reference(cls, image: str | None) -> str | None:
        problem = None if image is None else reference_problem(image)
        if problem:
            raise ValueError(problem)
        return image

    internet_facing: bool = False
    """An internet NLB instead of the default intranet one."""
