"""The ACK stacks install the job layer themselves, through the cluster's Kubernetes provider:
the training operator (training stacks) on the system pool with images from the stack's
mirror namespace, the spot watcher where the pool has spot; the plan names the images to
mirror and the one command that copies them; every object validates against the pinned
Kubernetes schema; an operator upgrade updates its Deployment in place."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest

from gpu_infra.blocks.workloads.install import FOUNDATION_KINDS, KINDS, SKIP_AWAIT, kind_class
from gpu_infra_facts import jobs
from gpu_infra_facts import types as t
from gpu_infra_tools.plan.diff import diff_records
from gpu_infra_tools.plan.engine import Plan
from gpu_infra_tools.review import review

from .k8s_schemas import problems
from .test_ack import ACK_INFERENCE, ACK_TRAINING, shipped

KUBE_PREFIX = "kubernetes:"


def kube_objects(plan: Plan) -> list[Any]:
    return [r for r in plan.resources
            if r.custom and r.type.startswith(KUBE_PREFIX) and "Workloads" not in r.type
            and "-workloads-" in r.name]


def manifest(resource: Any) -> dict[str, Any]:
    """The object as the provider sends it (the inputs carry apiVersion and kind)."""
    return dict(resource.inputs)


def test_the_training_stack_installs_the_operator_on_the_system_pool_from_its_mirror():
    plan = shipped("training-ack")
    objects = kube_objects(plan)
    kinds = sorted(manifest(o)["kind"] for o in objects)
    assert kinds == sorted(["Namespace", "CustomResourceDefinition", "Secret",
                            "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Service",
                            "Deployment", "ValidatingWebhookConfiguration",
                            *["NetworkPolicy"] * 6])  # kubeflow: 3, gpu-jobs: 3
    for resource in objects:
        assert problems(manifest(resource)) == [], resource.name
    deployment = plan.one(t.K8S_DEPLOYMENT)
    pod = deployment.inputs["spec"]["template"]["spec"]
    mirror = {item["source"]: item["target"] for item in plan.outputs["images_to_mirror"]}
    assert pod["containers"][0]["image"] == mirror[jobs.OPERATOR_IMAGE.source]
    assert mirror[jobs.OPERATOR_IMAGE.source] == (
        plan.outputs["registry_repositories"]["training-operator"]
        + ":" + jobs.OPERATOR_IMAGE.mirror.rsplit(":", 1)[1])
    assert f"--pytorch-init-container-image={mirror[jobs.OPERATOR_INIT_IMAGE.source]}" in \
        pod["containers"][0]["args"]
    assert pod["nodeSelector"] == plan.outputs["system_node_labels"]
    # `pulumi up` does not wait for a rollout whose image the user mirrors after it
    assert deployment.inputs["metadata"]["annotations"] == {SKIP_AWAIT: "true"}
    assert all(f"{source}={target}" in plan.outputs["mirror_command"]
               for source, target in mirror.items())
    assert jobs.WATCHER_IMAGE.source not in mirror  # on-demand pool: no watcher


def test_namespaced_objects_and_the_webhook_wait_for_the_namespace_and_the_crd():
    objects = kube_objects(shipped("training-ack"))
    base = {o.urn for o in objects if manifest(o)["kind"] in FOUNDATION_KINDS}
    assert len(base) == 2
    for resource in objects:
        if manifest(resource)["kind"] not in FOUNDATION_KINDS:
            assert base <= set(resource.dependencies), resource.name


@pytest.mark.parametrize("cluster", [
    {**ACK_TRAINING, "fleet": {**ACK_TRAINING["fleet"], "capacity": "spot",
                               "interruptible": True}},
    ACK_INFERENCE])
def test_a_pool_with_spot_gets_the_watcher_from_the_mirror(plan_cluster, cluster):
    plan = plan_cluster(cluster)
    (daemonset,) = plan.by_type(t.K8S_DAEMON_SET)
    mirror = {item["source"]: item["target"] for item in plan.outputs["images_to_mirror"]}
    image = daemonset.inputs["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == mirror[jobs.WATCHER_IMAGE.source]
    assert image.rsplit(":", 1)[0] in plan.outputs["registry_repositories"].values()
    for resource in kube_objects(plan):
        assert problems(manifest(resource)) == [], resource.name
    operator = [o for o in plan.by_type(t.K8S_DEPLOYMENT)
                if o.inputs["metadata"]["name"] == "training-operator"]
    assert bool(operator) == (cluster is not ACK_INFERENCE)
    # a node agent in the namespace the pod-security rule exempts: nothing blocks the stack
    assert not review(plan).blocked


def test_an_operator_upgrade_rolls_its_deployment_in_place(plan_cluster, monkeypatch):
    base = plan_cluster(ACK_TRAINING)
    monkeypatch.setattr(jobs, "OPERATOR_IMAGE", jobs.UpstreamImage(
        jobs.OPERATOR_IMAGE.source.replace("v1-5170a36", "v1-next"),
        jobs.OPERATOR_IMAGE.mirror.replace("v1-5170a36", "v1-next"), jobs.OPERATOR_IMAGE.why))
    upgraded = plan_cluster(ACK_TRAINING)
    changes = {c.name: c for c in diff_records([r.to_json() for r in base.resources],
                                               [r.to_json() for r in upgraded.resources])
               if c.change != "same"}
    (deployment,) = changes.values()  # nothing else changes: the mirror repository stays
    assert (deployment.type, deployment.change) == (t.K8S_DEPLOYMENT, "update")
    assert deployment.because == ["spec.template.spec.containers.image"]


def test_the_inference_stack_serves_behind_a_private_nlb_with_an_autoscaler():
    plan = shipped("inference-ack")
    deployment = next(o for o in plan.by_type(t.K8S_DEPLOYMENT)
                      if o.inputs["metadata"]["name"] == "chat-ack-serve")
    (service,) = plan.by_type(t.K8S_SERVICE)
    (autoscaler,) = plan.by_type(t.K8S_HPA)
    for resource in (deployment, service, autoscaler):
        assert problems(manifest(resource)) == [], resource.name
    (container,) = deployment.inputs["spec"]["template"]["spec"]["containers"]
    assert container["image"] == plan.outputs["registry_repositories"]["serve"] + ":latest"
    assert container["command"][:2] == ["vllm", "serve"]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 1}
    annotations = service.inputs["metadata"]["annotations"]
    prefix = "service.beta.kubernetes.io/alibaba-cloud-loadbalancer-"
    assert annotations[prefix + "address-type"] == "intranet"
    assert annotations[prefix + "health-check-uri"] == "/health"
    vswitches = {r.inputs["zoneId"]: r.id for r in plan.by_type(t.VSWITCH)
                 if "pods" not in r.name}
    assert annotations[prefix + "zone-maps"] == ",".join(
        f"{zone}:{vswitches[zone]}" for zone in sorted(vswitches))
    assert (autoscaler.inputs["spec"]["minReplicas"],
            autoscaler.inputs["spec"]["maxReplicas"]) == (1, 16)
    assert deployment.inputs["spec"]["template"]["spec"]["volumes"][0][
        "persistentVolumeClaim"]["claimName"] == plan.outputs["bucket_volume_claims"]["models"]
    assert "serving_address_command" in plan.outputs
    assert not review(plan).blocked


def serving_edit(plan_cluster, **serving: Any) -> dict[str, Any]:
    """The changed objects (name -> change) when `serving` is edited on ACK_INFERENCE."""
    cluster = {**ACK_INFERENCE,
               "ack": {**ACK_INFERENCE["ack"], "registry": {"repositories": ["serve"]}},
               "serving": {"command": ["vllm", "serve"]}}
    base = plan_cluster(cluster)
    edited = plan_cluster({**cluster, "serving": {**cluster["serving"], **serving}})
    return {c.type: c for c in diff_records([r.to_json() for r in base.resources],
                                            [r.to_json() for r in edited.resources])
            if c.change != "same"}


@pytest.mark.parametrize(("edit", "changed", "because"), [
    ({"image": "registry-vpc.cn-hangzhou.aliyuncs.com/t/serve:2"}, t.K8S_DEPLOYMENT,
     ["spec.template.spec.containers.image"]),
    ({"max_replicas": 32}, t.K8S_HPA, ["spec.maxReplicas"]),
    ({"min_replicas": 2}, t.K8S_HPA, ["spec.minReplicas"]),
])
def test_serving_edits_update_their_object_in_place(plan_cluster, edit, changed, because):
    changes = serving_edit(plan_cluster, **edit)
    assert list(changes) == [changed]
    assert (changes[changed].change, changes[changed].because) == ("update", because)


def test_serving_is_refused_where_it_cannot_fit(plan_cluster):
    from gpu_infra.schema import ConfigError

    from .conftest import cluster_config

    with pytest.raises(ConfigError) as ack:
        cluster_config({**ACK_INFERENCE,
                        "ack": {**ACK_INFERENCE["ack"], "registry": {"repositories": []}},
                        "serving": {"gpus_per_pod": 2, "min_replicas": 9, "max_replicas": 4}})
    lines = "\n".join(ack.value.problems)
    assert "serving.image: missing" in lines
    assert "serving.gpus_per_pod: 2 GPUs do not fit the fleet's smallest instance type (1" in lines
    assert "serving.min_replicas: 9 is above max_replicas (4)" in lines


def test_every_kind_names_its_pulumi_kubernetes_class():
    """KINDS holds each class by its path in pulumi-kubernetes (loaded on first use): each
    resolves to the CustomResource of that kind and version."""
    for (api_version, kind), path in KINDS.items():
        group, _, version = api_version.rpartition("/")
        resource_class = kind_class((api_version, kind))
        assert issubclass(resource_class, pulumi.CustomResource), path
        assert resource_class.__name__ == kind, path
        package = f"pulumi_kubernetes.{group.split('.')[0] or 'core'}.{version}."
        assert resource_class.__module__.startswith(package), path
