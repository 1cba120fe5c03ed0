"""Every Kubernetes object an ACK stack creates is valid for the cluster's pinned version."""

from __future__ import annotations

import pytest

from gpu_infra.schema import load_cluster_config

from .conftest import STACKS_DIR
from .kubernetes_objects import manifest, validation_problems
from .shipped import shipped_plan

ACK_STACKS = sorted(path.name.removeprefix("Pulumi.").removesuffix(".yaml")
                    for path in STACKS_DIR.glob("Pulumi.*.yaml")
                    if getattr(load_cluster_config(path)[1], "platform", "ecs") == "ack")


def test_there_are_shipped_ack_stacks():
    assert {"training-ack", "inference-ack"} <= set(ACK_STACKS)


@pytest.mark.parametrize("stack", ACK_STACKS)
def test_every_kubernetes_object_is_valid_for_the_pinned_version(stack):
    path = STACKS_DIR / f"Pulumi.{stack}.yaml"
    config = load_cluster_config(path)[1]
    plan = shipped_plan(stack)
    objects = [manifest(r.type, r.inputs) for r in plan.resources
               if r.custom and r.type.startswith("kubernetes:")]
    assert len(objects) >= 3
    assert validation_problems(objects, config.ack.minor) == []


def test_the_check_refuses_what_the_schema_does_not_allow():
    bad = manifest("kubernetes:storage.k8s.io/v1:StorageClass", {
        "metadata": {"name": "x"}, "provisioner": "diskplugin.csi.alibabacloud.com",
        "volumeBindingMode": "WaitForFirstConsumer", "reclaimPolicy": "Delete",
        "parameter": {"type": "cloud_auto"}})
    (problem,) = validation_problems([bad], "1.34")
    assert "'parameter' was unexpected" in problem
    custom = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "j"}}
    assert "no schema" in validation_problems([custom], "1.34")[0]
