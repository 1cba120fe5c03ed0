"""Validation of the Kubernetes objects gpu-infra writes: built-in kinds against the Kubernetes
OpenAPI schema of the pinned version (kubernetes-validate, strict: unknown fields are errors),
PyTorchJobs against the vendored CRD's openAPIV3Schema, with their pod templates also checked
strictly as PodTemplates (the CRD schema prunes unknown fields rather than refusing them)."""

from __future__ import annotations

from functools import cache
from typing import Any

import jsonschema
import kubernetes_validate
import kubernetes_validate.utils

from gpu_infra.blocks.workloads.vendor import pytorchjob_schema

KUBERNETES_VERSION = "1.34.0"
"""The Kubernetes version the shipped ACK stacks pin (1.34.x); the schemas of that minor."""


# kubernetes-validate reads and decodes a kind's schema file and the version's definitions
# (1.5 MB of JSON) on every validate call (7 ms); the tests validate a few hundred objects
# of a few kinds, so each file is decoded once per process. Neither jsonschema nor
# kubernetes-validate changes a schema it is given.
kubernetes_validate.utils.schema_contents = cache(kubernetes_validate.utils.schema_contents)


def validate_strict(manifest: dict[str, Any], version: str) -> None:
    """kubernetes_validate.validate(manifest, version) with unknown fields as errors; raises
    its ValidationError and SchemaNotFoundError."""
    kubernetes_validate.validate(manifest, version, strict=True)


def problems(manifest: dict[str, Any], version: str = KUBERNETES_VERSION) -> list[str]:
    """Every schema violation of one object (empty when valid)."""
    if manifest.get("kind") == "PyTorchJob":
        found = [f"{'.'.join(map(str, error.absolute_path))}: {error.message}"
                 for error in jsonschema.Draft7Validator(pytorchjob_schema()).iter_errors(
                     manifest)]
        for role, spec in manifest.get("spec", {}).get("pytorchReplicaSpecs", {}).items():
            template = {"apiVersion": "v1", "kind": "PodTemplate",
                        "metadata": {"name": f"{role.lower()}"}, "template": spec["template"]}
            found += [f"{role}: {line}" for line in problems(template, version)]
        return found
    try:
        validate_strict(manifest, version)
    except kubernetes_validate.ValidationError as error:
        return [f"{'.'.join(map(str, error.path))}: {error.message}"]
    return []
