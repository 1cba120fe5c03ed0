"""The ACK objects of the job layer: the training operator's install (vendored v1.9.0 with
gpu-infra's settings), the images to mirror, the spot watcher DaemonSet and the model server,
each validated against the pinned Kubernetes schema; SkyPilot's accelerator names."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from gpu_infra.blocks.bootstrap import step_source
from gpu_infra.blocks.registry import images_to_mirror, mirror_command
from gpu_infra.blocks.workloads import vendor
from gpu_infra.blocks.workloads.operator import operator_install
from gpu_infra.blocks.workloads.serving import ServingTarget, serving_objects, zone_maps
from gpu_infra.blocks.workloads.spot_watch import spot_watch_objects
from gpu_infra.blocks.workloads.vendor import operator_objects
from gpu_infra_facts import jobs

from .k8s_schemas import problems

REGISTRY = "registry-vpc.cn-beijing.aliyuncs.com/llm-ack-mirror"
SYSTEM = {"gpu-infra/pool": "system"}
SERVING = ServingTarget(
    name="chat-serve", image="registry-vpc.cn-hangzhou.aliyuncs.com/chat/triton:24.08",
    command=["tritonserver", "--model-repository=/mnt/models"], port=8000,
    readiness_path="/v2/health/ready", gpus_per_pod=1,
    pool_selector=("gpu-infra/pool", "chat-serve-gpu"),
    zone_maps=zone_maps({"cn-hangzhou-j": "vsw-j", "cn-hangzhou-i": "vsw-i"}), min_replicas=2,
    max_replicas=16, models_claim="oss-models")


def test_the_operator_install_validates_and_runs_from_the_stack_registry():
    objects = operator_install(REGISTRY, SYSTEM)
    assert [o["kind"] for o in objects] == [
        "Namespace", "CustomResourceDefinition", "Secret", "ServiceAccount", "ClusterRole",
        "ClusterRoleBinding", "Service", "Deployment", "ValidatingWebhookConfiguration"]
    for manifest in objects:
        assert problems(manifest) == [], manifest["kind"]
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == f"{REGISTRY}/training-operator:v1-5170a36"
    assert container["args"] == ["--enable-scheme=pytorchjob",
                                 f"--pytorch-init-container-image={REGISTRY}/alpine:3.10"]
    assert pod["nodeSelector"] == SYSTEM
    assert {o["metadata"].get("namespace") for o in objects
            if o["kind"] in ("ServiceAccount", "Service", "Deployment", "Secret")} == {"kubeflow"}
    webhook = objects[-1]
    assert [hook["name"] for hook in webhook["webhooks"]] == [
        "validator.pytorchjob.training-operator.kubeflow.org"]
    assert webhook["webhooks"][0]["clientConfig"]["service"] == {
        "name": "training-operator", "namespace": "kubeflow",
        "path": "/validate-kubeflow-org-v1-pytorchjob"}


def test_the_install_leaves_the_vendored_objects_as_upstream_ships_them():
    before = operator_objects()
    operator_install(REGISTRY, SYSTEM)
    assert operator_objects() == before
    (deployment,) = [o for o in before if o["kind"] == "Deployment"]
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == \
        "kubeflow/training-operator"


def test_every_image_the_objects_run_is_in_the_mirror_list():
    targets = {item["target"] for item in images_to_mirror(REGISTRY)}
    operator = operator_install(REGISTRY, SYSTEM)
    _, daemonset = spot_watch_objects(f"{REGISTRY}/{jobs.WATCHER_IMAGE.mirror}")
    run = {container["image"] for manifest in [*operator, daemonset]
           if manifest["kind"] in ("Deployment", "DaemonSet")
           for container in manifest["spec"]["template"]["spec"]["containers"]}
    init = next(a.split("=", 1)[1] for o in operator if o["kind"] == "Deployment"
                for a in o["spec"]["template"]["spec"]["containers"][0]["args"]
                if a.startswith("--pytorch-init-container-image="))
    assert run | {init} == targets
    command = mirror_command(REGISTRY)
    assert all(f"{item['source']}={item['target']}" in command
               for item in images_to_mirror(REGISTRY))


def test_the_spot_watcher_validates_and_writes_only_the_notice_directory():
    objects = spot_watch_objects(f"{REGISTRY}/curl:8.11.1")
    for manifest in objects:
        assert problems(manifest) == [], manifest["kind"]
    pod = objects[-1]["spec"]["template"]["spec"]
    host_paths = [v["hostPath"]["path"] for v in pod["volumes"] if "hostPath" in v]
    assert host_paths == [jobs.SPOT_NOTICE_DIR]
    assert pod["tolerations"] == [{"operator": "Exists"}]
    assert "hostNetwork" not in pod


def test_the_model_server_validates_and_makes_a_private_nlb_checking_readiness():
    deployment, service, autoscaler = serving_objects(SERVING)
    for manifest in (deployment, service, autoscaler):
        assert problems(manifest) == [], manifest["kind"]
    annotations = service["metadata"]["annotations"]
    prefix = "service.beta.kubernetes.io/alibaba-cloud-loadbalancer-"
    assert service["spec"]["loadBalancerClass"] == "alibabacloud.com/nlb"
    assert annotations[prefix + "address-type"] == "intranet"
    assert annotations[prefix + "zone-maps"] == "cn-hangzhou-i:vsw-i,cn-hangzhou-j:vsw-j"
    assert annotations[prefix + "health-check-uri"] == "/v2/health/ready"
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 1}
    assert container["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"
    assert container["volumeMounts"] == [{"name": "models", "mountPath": "/mnt/models",
                                          "readOnly": True}]
    assert "replicas" not in deployment["spec"]  # the autoscaler owns the count
    assert (autoscaler["spec"]["minReplicas"], autoscaler["spec"]["maxReplicas"]) == (2, 16)
    assert autoscaler["spec"]["metrics"][0]["pods"]["metric"]["name"] == "DCGM_FI_DEV_GPU_UTIL"


def test_an_edited_server_is_still_valid_and_a_broken_one_is_refused():
    _, service, _ = serving_objects(
        ServingTarget(**{**SERVING.__dict__, "internet_facing": True, "models_claim": None}))
    assert service["metadata"]["annotations"][
        "service.beta.kubernetes.io/alibaba-cloud-loadbalancer-address-type"] == "internet"
    deployment = copy.deepcopy(serving_objects(SERVING)[0])
    deployment["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "x"
    assert problems(deployment)


@pytest.mark.parametrize(("model", "label"), [
    ("NVIDIA A100/A800 80GB", "a100-80gb"), ("NVIDIA A100 40GB", "a100"),
    ("NVIDIA H20", "h20"), ("NVIDIA A10 (vGPU)", "a10"), ("NVIDIA V100 SXM2 32GB", "v100-32gb"),
    ("NVIDIA T4", "t4")])
def test_skypilot_reads_lower_case_accelerator_names(model, label):
    assert jobs.skypilot_accelerator(model) == label


def test_the_vendored_release_is_the_one_the_facts_name():
    source = (Path(vendor.__file__).parent / "vendor" /
              f"training-operator-{jobs.OPERATOR_VERSION}" / "SOURCE.md").read_text()
    assert f"commit {jobs.OPERATOR_COMMIT}" in source
    assert f"tag {jobs.OPERATOR_IMAGE.source.rsplit(':', 1)[1]}" in source


def test_the_watcher_asks_for_the_documented_item_and_the_resume_for_the_marker():
    config_map, _ = spot_watch_objects("r/curl:1")
    assert f"/meta-data/{jobs.SPOT_NOTICE_ITEM}" in config_map["data"]["gpu-infra-spot-watch"]
    resume = step_source("gpu-infra-resume")
    assert f'"$dir"/*/{jobs.CHECKPOINT_MARKER}' in resume
    assert jobs.SKYPILOT_ACCELERATOR_LABEL == "skypilot.co/accelerator"
