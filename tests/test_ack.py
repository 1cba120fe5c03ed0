"""`platform: ack`: the schema's rules for the new settings, the plan of an ACK stack (cluster,
pools, add-ons, registry, storage) and the API the job layer builds on."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from gpu_infra.schema import ConfigError
from gpu_infra.schema.environment import policy_demands
from gpu_infra_facts import types as t
from gpu_infra_facts.ack import ADDONS, DRIVER_VERSION_LABEL, GPU_TAINT
from gpu_infra_facts.update_semantics import semantics
from gpu_infra_policies.base import Context
from gpu_infra_policies.config import parse_policy_config
from gpu_infra_policies.rules import evaluate
from gpu_infra_tools.plan.engine import run_plan
from gpu_infra_tools.review.policy import as_policy_resource, check_plan, has_mandatory

from .conftest import (
    BASE_INFERENCE,
    BASE_TRAINING,
    STACKS_DIR,
    cluster_config,
    merged,
    write_stack,
)
from .shipped import shipped_plan as shipped

ACK = {"kubernetes_version": "1.34.1-aliyun.1"}
ACK_TRAINING: dict[str, Any] = merged(
    BASE_TRAINING, platform="ack", ack=ACK,
    fleet={"instance_type": "ecs.gn8v-8x.48xlarge", "nodes": 2})
ACK_INFERENCE: dict[str, Any] = merged(
    BASE_INFERENCE, platform="ack", ack=ACK,
    fleet={"instance_types": ["ecs.gn7i-c8g1.2xlarge", "ecs.gn7i-c16g1.4xlarge"],
           "min_size": 1, "max_size": 8, "on_demand_base_capacity": 1,
           "on_demand_percentage_above_base": 30})


def problems(cluster: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        cluster_config(cluster)
    return [line.removeprefix("gpu-infra:cluster.") for line in caught.value.problems]


def with_ack(cluster: dict[str, Any], **ack: Any) -> dict[str, Any]:
    changed = copy.deepcopy(cluster)
    changed["ack"].update(ack)
    return changed


# The schema

def test_ecs_stays_the_default_and_has_no_pod_vswitches():
    config = cluster_config(BASE_TRAINING)
    assert config.platform == "ecs" and not config.network.pod_vswitches


def test_pod_vswitches_come_from_the_upper_half_of_the_vpc():
    network = cluster_config(ACK_INFERENCE).network
    assert network.pod_vswitches
    for zone in network.zones:
        node, pods = network.vswitch_cidr(zone), network.pod_vswitch_cidr(zone)
        assert not node.overlaps(pods)
        assert str(node).startswith("10.2.") and int(str(node).split(".")[2]) < 128
        assert int(str(pods).split(".")[2]) >= 128


def test_overlapping_pod_vswitch_is_refused_with_its_path():
    cluster = merged(ACK_TRAINING, network={
        **ACK_TRAINING["network"], "pod_vswitch_cidrs": {"cn-hangzhou-i": "10.1.32.0/20"}})
    assert any(line.startswith("network.pod_vswitch_cidrs.cn-hangzhou-i: 10.1.32.0/20 "
                               "overlaps") for line in problems(cluster)), problems(cluster)


@pytest.mark.parametrize("version, expected", [
    ("1.34", "ack.kubernetes_version"), ("v1.34.1-aliyun.1", "not an ACK version"),
    ("1.28.9-aliyun.1", "minors 1.33, 1.34, 1.35 only")])
def test_bad_kubernetes_versions_are_refused(version, expected):
    lines = problems(with_ack(ACK_TRAINING, kubernetes_version=version))
    assert len(lines) == 1 and lines[0].startswith("ack.kubernetes_version")
    assert expected in lines[0]


def test_a_public_api_server_is_refused_in_prod():
    lines = problems(merged(with_ack(ACK_TRAINING, public_api=True), environment="prod"))
    assert lines == ["ack.public_api: an internet API server is not allowed in prod; reach it "
                     "from the VPC (VPN, CEN, bastion)"]
    assert cluster_config(with_ack(ACK_TRAINING, public_api=True)).ack.public_api


def test_a_public_api_server_allowed_outside_prod_is_advisory_and_mandatory_in_prod(tmp_path):
    """The schema allows `ack.public_api: true` in staging: the stack plans with no mandatory
    violation, and the pack still shows the internet endpoint (advisory). The same cluster
    in a prod stack is a mandatory violation (and the schema refuses the setting there)."""
    shipped_file = yaml.safe_load((STACKS_DIR / "Pulumi.inference-ack.yaml").read_text())
    config = shipped_file["config"]
    cluster = with_ack(config["gpu-infra:cluster"], public_api=True)
    assert cluster["environment"] == "staging"
    plan = run_plan(write_stack(tmp_path, "inference-ack", cluster, config["alicloud:region"]))
    verdicts = check_plan(plan)
    assert not has_mandatory(verdicts), [v.line() for v in verdicts if v.level == "mandatory"]
    (api,) = [v for v in verdicts if v.rule == "ack-private-api-endpoint"]
    assert api.level == "advisory" and api.message.startswith("slbInternetEnabled is true")

    resources = [as_policy_resource(r) for r in plan.resources if r.custom]
    in_prod = evaluate(resources, context=Context(environment="prod", demands=policy_demands))
    assert [v.level for v in in_prod if v.rule == "ack-private-api-endpoint"] == ["mandatory"]
    unknown = evaluate(resources, context=Context(demands=policy_demands))
    assert [v.level for v in unknown if v.rule == "ack-private-api-endpoint"] == ["mandatory"]
    configured = check_plan(plan, parse_policy_config(
        {"ack-private-api-endpoint": "mandatory"}))
    assert [v.level for v in configured if v.rule == "ack-private-api-endpoint"] == [
        "mandatory"]
    assert problems(merged(cluster, environment="prod"))[0].startswith("ack.public_api:")


def test_zero_nodes_without_autoscaling_is_refused():
    cluster = merged(ACK_INFERENCE, fleet={**ACK_INFERENCE["fleet"], "min_size": 0,
                                           "desired_size": 0})
    assert [line for line in problems(cluster) if line.startswith("fleet.desired_size")] == [
        "fleet.desired_size: 0 nodes and no autoscaling would give a pool without GPU nodes; "
        "remove desired_size to let the autoscaler size the pool between min_size and "
        "max_size, or set at least 1"]


@pytest.mark.parametrize("cluster, line", [
    (merged(BASE_TRAINING, ack=ACK), "ack: only with platform: ack"),
    (merged(BASE_TRAINING, platform="ack"), "ack: missing; platform ack needs at least "
                                            "ack.kubernetes_version"),
    (with_ack(ACK_TRAINING, addon_versions={"ack-gpu-magic": "v1"}),
     "ack.addon_versions.ack-gpu-magic: not an add-on gpu-infra installs"),
    (with_ack(ACK_TRAINING, addon_versions={"csi-plugin": "latest"}),
     "ack.addon_versions.csi-plugin: 'latest' is not a version"),
    (with_ack(ACK_TRAINING, service_cidr="10.1.0.0/20"),
     "ack.service_cidr: 10.1.0.0/20 overlaps vpc_cidr 10.1.0.0/16"),
    (merged(ACK_TRAINING, fleet={**ACK_TRAINING["fleet"], "jumbo_frames": True}),
     "fleet.jumbo_frames: ECS only"),
    (merged(ACK_INFERENCE, fleet={**ACK_INFERENCE["fleet"],
                                  "queue_scaling": {"metric_name": "q"}}),
     "fleet.queue_scaling: ECS only"),
])
def test_ack_settings_are_checked_with_their_paths(cluster, line):
    assert any(problem.startswith(line) for problem in problems(cluster)), problems(cluster)


# The plan

def test_training_ack_builds_a_private_pro_cluster_a_prod_platform_engineer_accepts():
    plan = shipped("training-ack")
    (cluster,) = plan.by_type(t.MANAGED_KUBERNETES)
    inputs = cluster.inputs
    assert inputs["clusterSpec"] == "ack.pro.small" and inputs["version"] == "1.34.1-aliyun.1"
    assert inputs["slbInternetEnabled"] is False and inputs["enableRrsa"] is True
    assert inputs["deletionProtection"] is True and cluster.protect
    assert inputs["encryptionProviderKey"] and inputs["disableEncryption"] is False
    assert inputs["auditLogConfig"] == {"enabled": True}
    assert "apiserver" in inputs["controlPlaneLogComponents"]
    assert inputs["operationPolicy"] == {"clusterAutoUpgrade": {"enabled": False}}
    assert inputs["maintenanceWindow"]["enable"] is True
    assert inputs["newNatGateway"] is False
    assert {addon["name"] for addon in inputs["addons"]} == {
        name for name, addon in ADDONS.items() if addon.at_creation}
    assert len(inputs["podVswitchIds"]) == len(inputs["vswitchIds"]) == 1
    assert inputs["podVswitchIds"] != inputs["vswitchIds"]


def test_training_pool_is_one_zone_one_deployment_set_fixed_size_tainted_and_pinned():
    plan = shipped("training-ack")
    pools = {pool.name: pool.inputs for pool in plan.by_type(t.NODE_POOL)}
    gpu = pools["llm-ack-gpu-pool"]
    assert gpu["instanceTypes"] == ["ecs.gn8v-8x.48xlarge"] and len(gpu["vswitchIds"]) == 1
    assert gpu["desiredSize"] == "4" and "scalingConfig" not in gpu
    assert gpu["deploymentSetId"]
    (deployment_set,) = plan.by_type(t.DEPLOYMENT_SET)
    assert deployment_set.inputs["strategy"] == "LowLatency"
    key, value, effect = GPU_TAINT
    assert gpu["taints"] == [{"key": key, "value": value, "effect": effect}]
    labels = {label["key"]: label["value"] for label in gpu["labels"]}
    assert labels[DRIVER_VERSION_LABEL] and labels["gpu-infra/erdma"] == "true"
    assert gpu["systemDiskCategory"] == "cloud_auto" and gpu["systemDiskEncrypted"] is True
    (disk,) = gpu["dataDisks"]
    assert disk["category"] == "cloud_auto" and disk["encrypted"] == "true"
    assert disk["size"] == 500 * 8 and disk["provisionedIops"] == 20000 and disk["kmsKeyId"]
    assert gpu["instanceMetadataOptions"] == {"httpTokens": "required"}
    assert gpu["management"]["autoRepair"] is True and gpu["management"]["autoUpgrade"] is False
    system = pools["llm-ack-system-pool"]
    assert "taints" not in system and system["desiredSize"] == "2"


def test_inference_pool_is_autoscaled_over_zones_with_the_fleets_spot_mix(plan_cluster):
    plan = plan_cluster(ACK_INFERENCE)
    (gpu,) = [pool.inputs for pool in plan.by_type(t.NODE_POOL) if "taints" in pool.inputs]
    assert gpu["scalingConfig"] == {"enable": True, "minSize": 1, "maxSize": 8, "type": "gpu"}
    assert "desiredSize" not in gpu
    assert len(gpu["vswitchIds"]) == 2 and "deploymentSetId" not in gpu
    assert gpu["instanceTypes"] == ["ecs.gn7i-c8g1.2xlarge", "ecs.gn7i-c16g1.4xlarge"]
    assert (gpu["multiAzPolicy"], gpu["onDemandBaseCapacity"],
            gpu["onDemandPercentageAboveBaseCapacity"], gpu["spotStrategy"],
            gpu["spotInstancePools"], gpu["spotInstanceRemedy"],
            gpu["compensateWithOnDemand"]) == (
        "COST_OPTIMIZED", "1", "30", "SpotAsPriceGo", 2, True, True)


def test_a_fixed_inference_pool_never_gets_a_scaling_config(plan_cluster):
    plan = plan_cluster(merged(ACK_INFERENCE, fleet={**ACK_INFERENCE["fleet"],
                                                     "desired_size": 3}))
    for pool in plan.by_type(t.NODE_POOL):
        assert "scalingConfig" not in pool.inputs and pool.inputs["desiredSize"]


def test_large_training_fleets_get_one_pool_per_deployment_set(plan_cluster):
    plan = plan_cluster(merged(ACK_TRAINING, fleet={**ACK_TRAINING["fleet"], "nodes": 45}))
    gpu = {pool.name: pool.inputs for pool in plan.by_type(t.NODE_POOL)
           if "taints" in pool.inputs}
    assert {name: pool["desiredSize"] for name, pool in gpu.items()} == {
        "t01-gpu-pool": "20", "t01-gpu-pool-001": "20", "t01-gpu-pool-002": "5"}
    assert len({pool["deploymentSetId"] for pool in gpu.values()}) == 3


def test_an_autoscaled_pool_leaves_its_size_to_the_autoscaler(plan_cluster):
    """The provider reads desired_size back from the cloud: without ignoreChanges, a stack
    that never sets it would diff against the autoscaler's count on every run."""
    autoscaled = plan_cluster(ACK_INFERENCE)
    fixed = plan_cluster(merged(ACK_INFERENCE, fleet={**ACK_INFERENCE["fleet"],
                                                      "desired_size": 3}))
    for plan, ignored in ((autoscaled, ["desiredSize"]), (fixed, [])):
        (gpu,) = [p for p in plan.by_type(t.NODE_POOL) if "taints" in p.inputs]
        assert list(gpu.to_json().get("ignoreChanges", [])) == ignored


def test_addons_are_pinned_and_erdma_only_where_the_nodes_have_it(plan_cluster):
    training = {a.inputs["name"]: a.inputs for a in shipped("training-ack")
                .by_type(t.KUBERNETES_ADDON)}
    assert set(training) == set(ADDONS)
    assert all(addon["version"] == ADDONS[name].version for name, addon in training.items())
    assert json.loads(training["ack-erdma-controller"]["config"]) == {
        "agent": {"allocateAllDevices": True, "preferDriver": "ofed"}}
    inference = {a.inputs["name"] for a in plan_cluster(ACK_INFERENCE)
                 .by_type(t.KUBERNETES_ADDON)}
    assert "ack-erdma-controller" not in inference and "ack-nvidia-device-plugin" in inference


def test_registry_is_enterprise_in_prod_and_personal_elsewhere(plan_cluster):
    prod = shipped("training-ack")
    (instance,) = prod.by_type(t.REGISTRY_EE_INSTANCE)
    assert instance.protect and instance.inputs["paymentType"] == "Subscription"
    assert prod.by_type(t.REGISTRY_VPC_ENDPOINT)
    assert {r.inputs["repoType"] for r in prod.by_type(t.REGISTRY_EE_REPO)} == {"PRIVATE"}
    dev = plan_cluster(ACK_TRAINING)
    assert not dev.by_type(t.REGISTRY_EE_INSTANCE)
    # the stack's repositories, and the mirrors of the training operator and its init image
    assert sorted(r.inputs["name"] for r in dev.by_type(t.REGISTRY_REPO)) == [
        "alpine", "serve", "train", "training-operator"]
    assert {n.inputs["defaultVisibility"] for n in dev.by_type(t.REGISTRY_NAMESPACE)} == {
        "PRIVATE"}


def test_outputs_give_a_kubeconfig_command_never_a_credential():
    outputs = shipped("training-ack").outputs
    assert outputs["kubeconfig_command"].startswith("aliyun cs GET /k8s/")
    assert "kube_config" not in json.dumps(outputs) and "BEGIN" not in json.dumps(outputs)
    assert outputs["gpu_node_taint"] == "nvidia.com/gpu=true:NoSchedule"
    assert outputs["scratch_storage_class"] == "gpu-infra-scratch"
    assert outputs["shared_volume_claim"] == "shared"
    assert outputs["registry_address"].endswith(".cr.aliyuncs.com")
    assert "role_name" not in outputs  # ACK nodes assume no gpu-infra instance role


# Cost

def test_cost_prices_the_pro_fee_and_the_pools_like_fleets(plan_cluster):
    from gpu_infra_tools.cost.estimate import estimate_plan
    from gpu_infra_tools.cost.prices import price_book

    result = estimate_plan(plan_cluster(ACK_INFERENCE))
    costs = {cost.resource_type: cost for cost in result.resources}
    fee = costs[t.MANAGED_KUBERNETES].components[0]
    assert fee.price == price_book().get("container.ack.pro.small").price
    gpu = next(cost for cost in result.resources
               if cost.resource_type == t.NODE_POOL and cost.name.endswith("gpu-pool"))
    # autoscaler min size 1, all of it the on-demand base: no spot running yet
    assert [(c.name, c.quantity) for c in gpu.components[:2]] == [
        ("Compute (on-demand, ecs.gn7i-c8g1.2xlarge)", 1), (
            "Compute (spot, x0.7, ecs.gn7i-c8g1.2xlarge)", 0)]
    assert "autoscaler min size 1 (max 8)" in gpu.note
    assert t.REGISTRY_EE_INSTANCE not in costs  # staging: the free personal edition
    assert costs[t.REGISTRY_NAMESPACE].free


def test_ack_logs_go_to_the_stacks_project_through_the_log_add_on():
    """The log add-on and the problem detector get the stack's SLS project, and the system
    journal pipeline is applied to the machine group the add-on creates for the cluster."""
    from .golden import golden_record

    record = golden_record("training-ack")
    [project] = [r for r in record["resources"] if r["type"] == "alicloud:log/project:Project"]
    addons = {r["inputs"]["name"]: json.loads(r["inputs"]["config"])
              for r in record["resources"]
              if r["type"] == "alicloud:cs/kubernetesAddon:KubernetesAddon"
              and r["inputs"].get("config")}
    name = project["inputs"]["projectName"]
    assert addons["loongcollector"]["sls_project_name"] == name
    assert addons["ack-node-problem-detector"]["sls_project_name"] == name
    [cluster] = [r for r in record["resources"]
                 if r["type"] == "alicloud:cs/managedKubernetes:ManagedKubernetes"]
    [attachment] = [r for r in record["resources"] if r["name"].endswith("-ack-system-nodes")]
    assert attachment["inputs"] == {"project": name, "logtailConfigName": "system",
                                    "machineGroupName": f"k8s-group-{cluster['id']}"}


@pytest.mark.parametrize("stack", ["training-ack", "inference-ack"])
def test_no_pool_sets_an_upgrade_policy(stack):
    """The provider re-sends a pool's upgrade_policy on every update of the pool (GetOk, not
    HasChange: update_semantics.json), so one set once would upgrade (or, with use_replace,
    replace) the nodes again at each later edit: the stack sets none."""
    pools = shipped(stack).by_type(t.NODE_POOL)
    assert pools and not [p.name for p in pools if p.inputs.get("upgradePolicy")]
    rule = semantics(t.NODE_POOL).reaching_nodes("upgradePolicy")
    assert rule is not None and "every update" in rule.note


@pytest.mark.parametrize("stack", ["training-ack", "inference-ack"])
def test_every_claim_is_replaced_with_its_volume(stack):
    """A claim names its volume by its name, which the volume's replacement keeps, and
    Kubernetes deletes no volume while a claim binds it: each claim is replaced with its
    volume (replace_with), not deleted with it (Kubernetes keeps the claim)."""
    plan = shipped(stack)
    volumes = {v.inputs["metadata"]["name"]: v.urn for v in plan.by_type(t.K8S_PERSISTENT_VOLUME)}
    claims = plan.by_type(t.K8S_PERSISTENT_VOLUME_CLAIM)
    assert claims and volumes
    for claim in claims:
        assert claim.replace_with == [volumes[claim.inputs["spec"]["volumeName"]]], claim.name
        assert claim.deleted_with is None, claim.name
