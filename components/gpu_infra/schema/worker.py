"""The render worker of a render farm (`worker`): the container every render node runs on the
jobs of the stack's queue (blocks.bootstrap RenderWorker, steps/gpu_infra_render.py). Its
fields mean what the serving section's do (image, command, environment, GPUs)."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from gpu_infra.schema.base import StrictModel
from gpu_infra_facts.credentials import findings_in
from gpu_infra_facts.image_references import reference_problem

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
"""An environment variable name the worker passes to `docker run --env NAME`."""
RESERVED_ENV_PREFIXES = ("GPU_INFRA_", "NVIDIA_")
"""Names the worker sets itself (the job id, the output directory, the driver capabilities)."""
SECRET_NAME = re.compile(r"(?i)(?:^|_)(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|"
                         r"PRIVATE_?KEY|CREDENTIALS?)(?:_|$)")
"""A name that says its value is a secret: refused whatever the value (issue 40: no secret
in clear in a stack file, a plan or the nodes' files)."""
MAX_ATTEMPTS = 100
"""The most receives of one job this schema takes before the dead-letter queue. UNCONFIRMED
upper bound: the API reference (SMQ CreateQueue DlqPolicy.MaxReceiveCount) states none."""


class WorkerConfig(StrictModel):
    """The render worker every node runs (a systemd unit): one job at a time from the stack's
    job queue, rendered with `docker run --gpus` in `image`, what the command writes to
    /output uploaded to the outputs bucket, the message deleted only after that."""

    image: str = Field(min_length=1, max_length=512)
    """Container image, e.g. the stack's registry's `render` repository. Required."""
    command: list[str] = Field(default=[], max_length=64)
    """The render command and its first arguments; each job's `args` follow. Default: the
    image's entrypoint."""
    environment: dict[str, str] = Field(default={}, max_length=64)
    """Environment variables of every render (no secrets: a render that needs one reads it
    with the node's RAM role, e.g. from KMS Secrets Manager). Each job's `env` adds to them.
    Default none."""
    gpus: int | None = Field(default=None, ge=1, le=16)
    """GPUs each render gets (`docker run --gpus N`). Default: every GPU of the node."""
    max_attempts: int = Field(default=5, ge=1, le=MAX_ATTEMPTS)
    """Receives of one job before the queue moves it to the dead-letter queue
    (`<fleet>-jobs-dead`): a failing render, or one handed back by a drain, counts. Default 5."""

    @field_validator("image")
    @classmethod
    def _image_reference(cls, image: str) -> str:
        problem = reference_problem(image)
        if problem:
            raise ValueError(problem)
        return image

    @field_validator("environment")
    @classmethod
    def _environment(cls, environment: dict[str, str]) -> dict[str, str]:
        problems = []
        for name, value in environment.items():
            if not ENV_NAME.match(name) or name.startswith(RESERVED_ENV_PREFIXES):
                problems.append(f"{name!r} is not a variable name the worker may set (letters, "
                                "digits and _, not starting with a digit, GPU_INFRA_ or "
                                "NVIDIA_)")
            elif SECRET_NAME.search(name) or findings_in(f"{name}={value}"):
                problems.append(f"{name} holds a secret in clear (it would reach the plan, the "
                                "state and the nodes); read it in the render with the node's "
                                "RAM role (KMS Secrets Manager) instead")
        if problems:
            raise ValueError("; ".join(problems))
        return environment


__all__ = ["WorkerConfig"]
