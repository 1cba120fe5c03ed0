"""The vendored training operator release (vendor/training-operator-<version>/, unmodified
upstream files; SOURCE.md there names the tag and commit): its objects and the PyTorchJob
CRD's OpenAPI schema."""

from __future__ import annotations

import copy
import functools
from importlib import resources
from typing import Any

import yaml

from gpu_infra_facts import jobs

OPERATOR_FILES = ("service-account.yaml", "role.yaml", "cluster-role-binding.yaml",
                  "service.yaml", "deployment.yaml", "webhook.yaml")
"""The install's objects, in apply order (manifests/base/kustomization.yaml at the tag, less
the CRDs of the job kinds gpu-infra does not enable)."""
PYTORCHJOB_CRD = "kubeflow.org_pytorchjobs.yaml"

Manifest = dict[str, Any]
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML has it (the PyTorchJob CRD is 600 kB, which the
pure-Python loader parses tens of times slower), else the pure-Python one; both build the
same objects."""


def _directory() -> Any:
    return resources.files(__package__) / "vendor" / f"training-operator-{jobs.OPERATOR_VERSION}"


@functools.cache
def _documents(file_name: str) -> tuple[Manifest, ...]:
    text = (_directory() / file_name).read_text(encoding="utf-8")
    return tuple(document for document in yaml.load_all(text, Loader=LOADER) if document)


def operator_objects() -> list[Manifest]:
    """The release's install objects as upstream ships them (fresh copies, safe to edit)."""
    return [copy.deepcopy(document) for name in OPERATOR_FILES for document in _documents(name)]


def pytorchjob_crd() -> Manifest:
    """The PyTorchJob CustomResourceDefinition of the release (a fresh copy)."""
    return copy.deepcopy(_documents(PYTORCHJOB_CRD)[0])


@functools.cache
def pytorchjob_schema() -> Manifest:
    """The `openAPIV3Schema` of PyTorchJob kubeflow.org/v1: what the API server checks."""
    (version,) = [v for v in _documents(PYTORCHJOB_CRD)[0]["spec"]["versions"]
                  if v["name"] == "v1"]
    schema: Manifest = version["schema"]["openAPIV3Schema"]
    return schema
