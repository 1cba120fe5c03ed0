"""Plain Kubernetes manifests (the dicts of this package) applied by the stack through the
cluster's pulumi-kubernetes provider: one typed pulumi-kubernetes resource per object, so
`pulumi preview` and gpu-infra's change report show each object and whether an edit updates
or replaces it (update_semantics.json, from pulumi-kubernetes' diff.go).

Namespaces and CustomResourceDefinitions are created first; every other object waits for
them (an object in a namespace that does not exist yet, or of a kind the API server does not
know yet, would fail).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from gpu_infra.blocks.conventions import child_name

Manifest = dict[str, Any]

KINDS: dict[tuple[str, str], str] = {
    ("v1", "Namespace"): "core.v1.Namespace",
    ("v1", "ConfigMap"): "core.v1.ConfigMap",
    ("v1", "Secret"): "core.v1.Secret",
    ("v1", "Service"): "core.v1.Service",
    ("v1", "ServiceAccount"): "core.v1.ServiceAccount",
    ("apps/v1", "Deployment"): "apps.v1.Deployment",
    ("apps/v1", "DaemonSet"): "apps.v1.DaemonSet",
    ("autoscaling/v2", "HorizontalPodAutoscaler"): "autoscaling.v2.HorizontalPodAutoscaler",
    ("networking.k8s.io/v1", "NetworkPolicy"): "networking.v1.NetworkPolicy",
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): "rbac.v1.ClusterRole",
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): "rbac.v1.ClusterRoleBinding",
    ("rbac.authorization.k8s.io/v1", "Role"): "rbac.v1.Role",
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): "rbac.v1.RoleBinding",
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"):
        "apiextensions.v1.CustomResourceDefinition",
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"):
        "admissionregistration.v1.ValidatingWebhookConfiguration",
}
"""The kinds the job layer writes, and their pulumi-kubernetes classes (kind_class), by
their path in the package: pulumi-kubernetes loads a group's module on first use, and these
take about half a second to load, which an ECS plan never needs."""


def kind_class(kind: tuple[str, str]) -> type[pulumi.CustomResource]:
    """The pulumi-kubernetes class of `kind` ((apiVersion, kind), one of KINDS)."""
    found: Any = k8s
    for part in KINDS[kind].split("."):
        found = getattr(found, part)
    resource_class: type[pulumi.CustomResource] = found
    return resource_class
FOUNDATION_KINDS = ("Namespace", "CustomResourceDefinition")
"""Created before the rest."""
SKIP_AWAIT = "pulumi.com/skipAwait"
"""pulumi-kubernetes annotation: create or update the object without waiting for it to be
ready (its await logic otherwise waits for a Deployment's rollout, up to 10 minutes)."""
ROLLOUT_KINDS = ("Deployment", "DaemonSet")


def _argument(key: str) -> str:
    """A manifest's top-level field as the class's keyword (roleRef -> role_ref)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def _skipping_await(manifest: Manifest) -> Manifest:
    meta = manifest["metadata"]
    annotations = {**meta.get("annotations", {}), SKIP_AWAIT: "true"}
    return {**manifest, "metadata": {**meta, "annotations": annotations}}


class KubeObjects(pulumi.ComponentResource):
    """`manifests` in the cluster of `provider`, FOUNDATION_KINDS first. Each object is named
    `<name>-<object name>` (`<name>-<namespace>-<object name>` in a namespace); the type is
    part of the URN, so a ConfigMap and a DaemonSet may share a name. A kind outside KINDS
    raises ValueError. `wait_for_rollout` false: Deployments and DaemonSets carry SKIP_AWAIT
    (their images are mirrored into the registry the same `pulumi up` creates, so their pods
    start once the images are there, kubelet retrying the pull).

    Outputs: `kinds` (the kinds applied, sorted)."""

    TYPE = "gpu-infra:workloads:KubeObjects"

    def __init__(self, name: str, *, manifests: Sequence[Manifest], provider: k8s.Provider,
                 wait_for_rollout: bool = True, opts: pulumi.ResourceOptions | None = None):
        super().__init__(self.TYPE, name, None, opts)
        manifests = [_skipping_await(m) if not wait_for_rollout and m["kind"] in ROLLOUT_KINDS
                     else m for m in manifests]
        first = [m for m in manifests if m["kind"] in FOUNDATION_KINDS]
        rest = [m for m in manifests if m["kind"] not in FOUNDATION_KINDS]
        child = pulumi.ResourceOptions(parent=self, provider=provider)
        base = [self._object(name, manifest, child) for manifest in first]
        later = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=base))
        for manifest in rest:
            self._object(name, manifest, later)
        self.kinds = sorted({m["kind"] for m in manifests})
        self.register_outputs({"kinds": self.kinds})

    @staticmethod
    def _object(name: str, manifest: Manifest,
                opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
        kind = (manifest["apiVersion"], manifest["kind"])
        if kind not in KINDS:
            raise ValueError(f"{kind[0]} {kind[1]}: not a kind gpu-infra applies; allowed: "
                             + ", ".join(f"{v} {k}" for v, k in KINDS))
        meta = manifest["metadata"]
        where = f"{meta['namespace']}-" if "namespace" in meta else ""
        fields = {_argument(key): value for key, value in manifest.items()
                  if key not in ("apiVersion", "kind")}
        return kind_class(kind)(child_name(name, f"{where}{meta['name']}"), opts=opts,
                                **fields)


__all__ = ["FOUNDATION_KINDS", "KINDS", "SKIP_AWAIT", "KubeObjects", "kind_class"]
