"""The training operator's install on an ACK stack: the vendored v1.9.0 objects (vendor.py)
with gpu-infra's settings applied, in apply order, and the images that must be in the stack's
registry first.

Settings: the `kubeflow` namespace of the upstream standalone overlay; the operator's image and
the PyTorch init-container image from the stack's registry (China regions may not reach
docker.io); only the PyTorchJob controller and webhook (`--enable-scheme=pytorchjob`, so the
one CRD installed is the one used); the operator pod on the system pool. No
`--gang-scheduler-name`: ACK Pro's own scheduler gangs the job's pods from their labels
(training_job), so the operator creates no PodGroups. The webhook's certificate is the
operator's own (it writes the `training-operator-webhook-cert` Secret at start).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from gpu_infra.blocks.registry import mirrored_image
from gpu_infra.blocks.workloads.vendor import operator_objects, pytorchjob_crd
from gpu_infra_facts import jobs

Manifest = dict[str, Any]

WEBHOOK_SECRET = "training-operator-webhook-cert"


def operator_install(registry_prefix: str, system_labels: Mapping[str, str]) -> list[Manifest]:
    """Namespace, CRD and the operator's objects, ready to apply (the vendored files with the
    settings of the module docstring)."""
    namespace = jobs.OPERATOR_NAMESPACE
    objects: list[Manifest] = [{"apiVersion": "v1", "kind": "Namespace",
                                "metadata": {"name": namespace}}, pytorchjob_crd(),
                               {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                                "metadata": {"name": WEBHOOK_SECRET, "namespace": namespace}}]
    for manifest in operator_objects():
        kind = manifest["kind"]
        if kind not in ("ClusterRole", "ClusterRoleBinding", "ValidatingWebhookConfiguration"):
            manifest["metadata"]["namespace"] = namespace
        if kind == "ClusterRoleBinding":
            for subject in manifest["subjects"]:
                subject["namespace"] = namespace
        elif kind == "Deployment":
            _configure_deployment(manifest, registry_prefix, system_labels)
        elif kind == "ValidatingWebhookConfiguration":
            _pytorch_webhook_only(manifest)
        objects.append(manifest)
    return objects


def operator_pod_labels() -> dict[str, str]:
    """The labels the operator's Deployment selects its pods by (the vendored file's)."""
    (deployment,) = [m for m in operator_objects() if m["kind"] == "Deployment"]
    labels: dict[str, str] = deployment["spec"]["selector"]["matchLabels"]
    return labels


def _configure_deployment(deployment: Manifest, registry_prefix: str,
                          system_labels: Mapping[str, str]) -> None:
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    container["image"] = mirrored_image(registry_prefix, jobs.OPERATOR_IMAGE)
    container["args"] = [
        *(f"--enable-scheme={scheme}" for scheme in jobs.OPERATOR_SCHEMES),
        "--pytorch-init-container-image="
        + mirrored_image(registry_prefix, jobs.OPERATOR_INIT_IMAGE)]
    container["resources"] = {"requests": {"cpu": "100m", "memory": "256Mi"},
                              "limits": {"cpu": "1", "memory": "1Gi"}}
    pod["nodeSelector"] = dict(system_labels)


def _pytorch_webhook_only(configuration: Manifest) -> None:
    """The upstream file lists every job kind's webhook; only PyTorchJob's server runs, and
    a webhook with failurePolicy Fail and no server would block those kinds."""
    webhooks = [hook for hook in configuration["webhooks"]
                if "pytorchjobs" in hook["rules"][0]["resources"]]
    for hook in webhooks:
        hook["clientConfig"]["service"].update(name="training-operator",
                                               namespace=jobs.OPERATOR_NAMESPACE)
    configuration["webhooks"] = copy.deepcopy(webhooks)
    configuration["metadata"]["name"] = "validator.training-operator.kubeflow.org"
