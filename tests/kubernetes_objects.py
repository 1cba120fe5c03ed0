"""Kubernetes objects of a plan as manifests, validated against the OpenAPI schema of the
cluster's pinned Kubernetes version (kubernetes-validate ships the upstream schemas) or, for
custom kinds, against the `openAPIV3Schema` of their CRD vendored under tests/data/crds/
(`<group>_<plural>.yaml`, each with its source and version in a leading comment)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import yaml

from .k8s_schemas import validate_strict

CRD_DIR = Path(__file__).parent / "data" / "crds"
PULUMI_ONLY = ("urn", "id")
"""Plan record keys that are not part of the object."""


def manifest(type_token: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """`kubernetes:storage.k8s.io/v1:StorageClass` + inputs -> the object (apiVersion, kind
    and the inputs as the API takes them; the core group has no group prefix)."""
    _, group_version, kind = type_token.split(":")
    group, version = group_version.split("/")
    api_version = version if group == "core" else f"{group}/{version}"
    return {"apiVersion": api_version, "kind": kind, **inputs}


def crd_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    """(apiVersion, kind) -> the openAPIV3Schema of every vendored CRD version."""
    schemas = {}
    for path in sorted(CRD_DIR.glob("*.yaml")):
        for crd in yaml.safe_load_all(path.read_text()):
            spec = crd["spec"]
            for served in spec["versions"]:
                schemas[(f"{spec['group']}/{served['name']}", spec["names"]["kind"])] = (
                    served["schema"]["openAPIV3Schema"])
    return schemas


def validation_problems(objects: list[dict[str, Any]], kubernetes_minor: str) -> list[str]:
    """One line per object that its schema refuses (built-in kinds: the OpenAPI schema of
    `kubernetes_minor`, e.g. 1.34, strict: unknown fields are errors)."""
    custom = crd_schemas()
    problems = []
    for obj in objects:
        label = f"{obj['kind']} {obj.get('metadata', {}).get('name')}"
        key = (obj["apiVersion"], obj["kind"])
        try:
            if key in custom:
                jsonschema.validate(obj, custom[key])
            else:
                validate_strict(obj, f"{kubernetes_minor}.0")
        except kubernetes_validate.SchemaNotFoundError:
            problems.append(f"{label}: no schema for {key} (vendor its CRD in {CRD_DIR.name})")
        except (kubernetes_validate.ValidationError, jsonschema.ValidationError) as error:
            problems.append(f"{label}: {str(error).splitlines()[0]}")
    return problems
