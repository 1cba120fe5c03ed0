"""`serving` on ECS inference fleets: what the schema accepts and refuses (one line per
problem), and what the plan makes of it: the load balancer's and the scaling group's checks
aim at the server, the readiness hook waits for its start, the node tools carry its unit."""

from __future__ import annotations

import shlex

import pytest

from gpu_infra.blocks.bootstrap import BootstrapSpec
from gpu_infra.nodeplan import node_plan
from gpu_infra.nodeplan.plans import gpu_fleet_name
from gpu_infra.schema import ConfigError
from gpu_infra_facts import node_stack, serving

from .bootstrap_sandbox import script_of
from .conftest import BASE_INFERENCE, cluster_config, merged

SERVING = {"image": "registry-vpc.cn-hangzhou.aliyuncs.com/ml/vllm-openai:v0.6.3",
           "command": ["vllm", "serve", "/mnt/models/chat", "--port", "8000"],
           "model": "chat", "readiness_path": "/health"}
STACK = merged(BASE_INFERENCE, serving=SERVING,
               storage={"disks": [{"name": "model-cache", "size_gib": 200}]})


def problems(cluster: dict) -> list[str]:
    with pytest.raises(ConfigError) as refused:
        cluster_config(cluster)
    return [line.removeprefix("gpu-infra:cluster.") for line in refused.value.problems]


def test_ecs_accepts_serving():
    config = cluster_config(STACK)
    assert config.serving is not None and config.health_check_path == "/health"


def test_each_ack_only_field_is_one_line_naming_what_ecs_has_instead():
    lines = problems(merged(STACK, serving={**SERVING, "gpus_per_pod": 1, "min_replicas": 2,
                                            "max_replicas": 4, "target_gpu_util": 50,
                                            "internet_facing": True}))
    assert lines == [
        "serving.gpus_per_pod: ACK only; on ECS the server gets every GPU of its node; "
        "remove it",
        "serving.min_replicas: ACK only; on ECS fleet.min_size sets the fewest servers; "
        "remove it",
        "serving.max_replicas: ACK only; on ECS fleet.max_size sets the most servers; remove it",
        "serving.target_gpu_util: ACK only; on ECS fleet.gpu_scaling scales on the GPUs' "
        "load; remove it",
        "serving.internet_facing: ACK only; on ECS set load_balancer.internet_facing; "
        "remove it"]


def test_missing_pieces_are_refused_one_line_each():
    no_image = {key: value for key, value in SERVING.items() if key != "image"}
    lines = problems({**STACK, "serving": no_image, "registry": {"repositories": []},
                      "security": {"service_ports": [], "client_cidrs": ["10.9.0.0/16"]},
                      "storage": {"buckets": {"purposes": ["datasets"]}},
                      "load_balancer": {"health_check_path": "/v2/health/ready"}})
    assert lines == [
        "serving.image: missing; registry lists no repository to take the server image from; "
        "give one, e.g. vllm/vllm-openai:v0.6.3 mirrored into the registry",
        "security.service_ports: empty; serving needs the port the server listens on, "
        "e.g. [8000]",
        "serving.model: the stack has no models bucket to take it from; add models to "
        "storage.buckets.purposes",
        "load_balancer.health_check_path: /v2/health/ready is not serving.readiness_path "
        "(/health); the load balancer checks the server: remove it"]


def test_a_unit_without_a_bucket_for_the_node_tools_is_refused():
    image_only = {"image": SERVING["image"]}
    assert problems({**STACK, "serving": image_only,
                     "storage": {"buckets": {"purposes": []}}}) == [
        "storage.buckets.purposes: empty; on ECS the model server's unit comes with the node "
        "tools, kept in one of the stack's buckets: list at least one, e.g. [models]"]


def test_without_an_image_the_node_runs_the_registry_s_first_repository():
    config = cluster_config({**STACK, "serving": {"model": "chat"},
                             "registry": {"repositories": ["serve", "train"]}})
    unit = node_plan(config).serving_unit()  # type: ignore[union-attr]
    assert unit is not None and unit.image == (
        f"{config.registry_address}/{config.name}/serve:latest")
    assert config.registry_address.startswith("registry-vpc.cn-")  # the VPC endpoint


def test_a_model_prefix_that_leaves_the_bucket_is_refused():
    for prefix in ("../other", "chat/../x", "/chat", "chat/", ".hidden"):
        [line] = problems(merged(STACK, serving={**SERVING, "model": prefix}))
        assert line.startswith("serving.model: "), line


def test_the_node_plan_gives_the_unit_its_port_model_and_cache():
    spec: BootstrapSpec = node_plan(cluster_config(STACK)).bootstrap_spec(  # type: ignore
        gpu_fleet_name("i01"))
    unit = spec.serving
    assert unit is not None
    assert (unit.port, unit.model, unit.models_bucket, unit.model_cache, unit.model_dir) == (
        8000, "chat", "i01-dev-models", "/mnt/model-cache/models", "/mnt/models/chat")
    steps = spec.node_steps()
    assert steps.index("serving") == steps.index("health") - 1


def test_the_plan_points_both_health_checks_at_the_server(plan_cluster):
    plan = plan_cluster(STACK)
    [group] = plan.by_type("alicloud:nlb/serverGroup:ServerGroup")
    check = group.inputs["healthCheck"]
    assert (check["healthCheckType"], check["healthCheckUrl"], check["healthCheckHttpCodes"],
            check["httpCheckMethod"], check["healthCheckConnectPort"]) == (
        "HTTP", "/health", ["http_2xx"], "GET", 0)  # 0: the backend's own port, 8000
    attachment = plan.one("alicloud:ess/serverGroupAttachment:ServerGroupAttachment")
    assert attachment.inputs["port"] == 8000
    scaling = plan.one("alicloud:ess/scalingGroup:ScalingGroup")
    assert scaling.inputs["healthCheckTypes"] == ["ECS", "LOAD_BALANCER"]
    [ready] = [hook for hook in plan.by_type("alicloud:ess/lifecycleHook:LifecycleHook")
               if hook.inputs["lifecycleTransition"] == "SCALE_OUT"]
    assert ready.inputs["heartbeatTimeout"] == (
        node_stack.READINESS_TIMEOUT_SECONDS["auto_install"] + serving.START_SECONDS)


def test_an_alb_checks_the_readiness_path_too(plan_cluster):
    plan = plan_cluster(merged(STACK, load_balancer={"kind": "alb"}, environment="dev"))
    check = plan.one("alicloud:alb/serverGroup:ServerGroup").inputs["healthCheckConfig"]
    assert (check["healthCheckProtocol"], check["healthCheckPath"], check["healthCheckCodes"],
            check["healthCheckMethod"]) == ("HTTP", "/health", ["http_2xx"], "GET")


def test_the_node_tools_carry_the_unit_and_its_settings(plan_cluster):
    plan = plan_cluster(STACK)
    [tools] = [o.inputs["content"] for o in plan.by_type("alicloud:oss/bucketObject:BucketObject")
               if o.name.endswith("-node-tools")]
    assert "/etc/systemd/system/gpu-infra-serving.service" in tools
    assert "/opt/gpu-infra/bin/gpu-infra-serve" in tools
    assert "/opt/gpu-infra/bin/gpu_infra_models.py" in tools
    env = tools.split("w /etc/gpu-infra/serving.env 644 <<'GPU_INFRA_EOF'\n")[1].split(
        "\nGPU_INFRA_EOF")[0]
    settings = dict(line.split("=", 1) for line in env.splitlines())
    assert shlex.split(settings["SERVING_IMAGE"]) == [SERVING["image"]]
    assert settings["SERVING_ENTRYPOINT"] == "vllm"
    assert shlex.split(shlex.split(settings["SERVING_ARGS"])[0]) == [
        "serve", "/mnt/models/chat", "--port", "8000"]
    assert settings["MODEL"] == "chat" and "chat-serve" not in env  # no bucket name
    [config] = plan.by_type("alicloud:ess/scalingConfiguration:ScalingConfiguration")
    script = script_of(config.inputs["userData"])
    bucket = plan.outputs["bucket_names"]["models"]
    assert f"\nMODELS_BUCKET={bucket}\n" in script and "\nSERVING_PORT=8000\n" in script


def test_without_serving_the_check_stays_tcp_and_the_hook_the_driver_s(plan_cluster):
    plan = plan_cluster(BASE_INFERENCE)
    check = plan.one("alicloud:nlb/serverGroup:ServerGroup").inputs["healthCheck"]
    assert check["healthCheckType"] == "TCP" and "healthCheckHttpCodes" not in check
    [ready] = [hook for hook in plan.by_type("alicloud:ess/lifecycleHook:LifecycleHook")
               if hook.inputs["lifecycleTransition"] == "SCALE_OUT"]
    assert ready.inputs["heartbeatTimeout"] == node_stack.READINESS_TIMEOUT_SECONDS[
        "auto_install"]
