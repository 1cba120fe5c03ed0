"""Validation of the Kubernetes objects gpu-infra writes: built-in kinds against the Kubernetes
OpenAPI schema of the pinned version (kubernetes-validate, strict: unknown fields are errors),
PyTorchJobs against the vendored CRD's openAPIV3Schema, with their pod templates also checked
strictly as PodTemplates (the CRD schema prunes unknown fields rather than refusing them)."""

from __future__ import annotations

from typing import Any

import jsonschema
import kubernetes_validate

from gpu_infra.blocks.workloads.vendor import pytorchjob_schema

KUBERNETES_VERSION = "1.34.0"
"""The Kubernetes version the shipped ACK stacks pin (1.34.x); the schemas of that minor."""


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
        kubernetes_validate.validate(manifest, version, strict=True)
    except kubernetes_validate.ValidationError as error:
        return [f"{'.'.join(map(str, error.path))}: {error.message}"]
    return []
