"""The `registry` section: the stack's private image registry (ACR), on ECS as on ACK: the
nodes (or the cluster) pull the workloads' images and the mirrored upstream images from it."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, model_validator

from gpu_infra.schema.base import StrictModel
from gpu_infra.schema.problems import choice_problems
from gpu_infra_facts.allowed import REGISTRY_PERIODS_MONTHS, RegistryInstanceType

RegistryEdition = Literal["enterprise", "personal"]
"""ACR edition: an Enterprise instance (cr.RegistryEnterpriseInstance) or a namespace on the
personal edition (cr.Namespace)."""
REPOSITORY_PATTERN = r"^[a-z0-9][a-z0-9_.-]{1,63}$"
"""ACR repository and namespace names we accept: 2-64 lowercase letters, digits, `_.-`."""


class RegistryConfig(StrictModel):
    """The private image registry (ACR) the nodes pull workload and mirrored images from."""

    edition: RegistryEdition | None = None
    """enterprise (an ACR Enterprise instance, VPC access only) or personal (a namespace on
    the free personal edition). Default: enterprise in prod, personal otherwise."""
    instance_type: RegistryInstanceType = "Standard"
    """Enterprise instance size: Basic, Standard or Advanced. Default Standard."""
    period_months: int = 12
    """Enterprise instances are subscriptions: term in months (1, 2, 3, 6, 12, 24, 36, 48,
    60). Default 12."""
    namespace: str | None = Field(default=None, pattern=REPOSITORY_PATTERN)
    """Namespace of the stack's repositories. Default: the cluster name."""
    repositories: list[str] = Field(default=["train", "serve"], max_length=100)
    """Repositories for the workloads' images (jobs, model servers, render workers). Default
    [train, serve]."""
    mirrored: list[str] = Field(default=[], max_length=100)
    """Repositories for upstream images mirrored from registries the region may not reach
    (ghcr.io, docker.io), in the namespace `<namespace>-mirror`, besides those gpu-infra's
    own code runs (added by the layout). Default none."""

    @model_validator(mode="after")
    def _check(self) -> RegistryConfig:
        problems = [f"{field}[{index}]: {name!r} is not a repository name (2-64 lowercase "
                    "letters, digits, _ . -)"
                    for field in ("repositories", "mirrored")
                    for index, name in enumerate(getattr(self, field))
                    if not re.match(REPOSITORY_PATTERN, name)]
        for field in ("repositories", "mirrored"):
            names = getattr(self, field)
            if len(set(names)) != len(names):
                problems.append(f"{field}: each name may be listed once")
        problems += choice_problems("period_months", self.period_months,
                                    REGISTRY_PERIODS_MONTHS)
        if problems:
            raise ValueError("\n".join(problems))
        return self
