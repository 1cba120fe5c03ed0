"""The update-semantics data file covers every resource type the program can create, and its
rules resolve the way the diff relies on."""

from __future__ import annotations

import inspect

import pytest

from gpu_infra_facts.update_semantics import covered_types, provider_source, semantics

from .conftest import (
    BASE_INFERENCE,
    BASE_RENDERING,
    BASE_TRAINING,
    merged,
    provider_class,
    utc_in,
)
from .golden import GOLDEN_DIR, golden_record

OPTIONAL_FEATURES = {
    "training-everything": merged(BASE_TRAINING, environment="prod", fleet={
        **BASE_TRAINING["fleet"],
        "reserved": {"reserved_instances": {"count": 1, "scope": "Zone"},
                     "guarantee": {"kind": "elasticity_assurance", "count": 1}}},
        storage={"disks": [{"name": "ckpt", "size_gib": 100, "keep": True}],
                 "snapshots": {"retention_days": 3},
                 "shared_fs": {"enabled": True, "kind": "extreme", "capacity_gib": 3600},
                 "buckets": {"logging": True}}),
    # CPFS cannot be encrypted, so it is refused where the stack encrypts (prod)
    "training-cpfs": merged(BASE_TRAINING, storage={
        "shared_fs": {"enabled": True, "kind": "cpfs", "capacity_gib": 3600}}),
    "inference-refresh": merged(BASE_INFERENCE, fleet={
        **BASE_INFERENCE["fleet"], "min_size": 1, "multi_az_policy": "PRIORITY"}),
    "training-capacity-reservation": merged(BASE_TRAINING, fleet={
        **BASE_TRAINING["fleet"],
        "reserved": {"guarantee": {"kind": "capacity_reservation", "count": 1}}}),
    "inference-alb": merged(BASE_INFERENCE, load_balancer={"kind": "alb"}, fleet={
        **BASE_INFERENCE["fleet"],
        "target_tracking": {"metric": "CpuUtilization", "target_value": 60},
        "queue_scaling": {"metric_name": "pending", "scale_out_threshold": 4},
        "schedules": [{"name": "night", "launch_time": utc_in(10),
                       "recurrence_type": "Daily", "recurrence_value": "1",
                       "recurrence_end_time": utc_in(200), "min_size": 0}]}),
    "rendering": BASE_RENDERING,
}


@pytest.fixture(scope="module")
def creatable_resources(tmp_path_factory) -> list[dict]:
    """Custom resources (plan records) of every shipped stack (their recorded plans, which
    test_golden_plans keeps equal to the program) and of configs with optional features
    (planned once per test process: tests/test_policies_by_concern.py plans them too)."""
    from .conftest import write_stack
    from .shipped import planned_once

    records = [r for path in sorted(GOLDEN_DIR.glob("*.json"))
               for r in golden_record(path.stem)["resources"] if r["custom"]]
    directory = tmp_path_factory.mktemp("features")
    for name, cluster in OPTIONAL_FEATURES.items():
        plan = planned_once(write_stack(directory, name, cluster))
        records += [r.to_json() for r in plan.resources if r.custom]
    return records


@pytest.fixture(scope="module")
def creatable_types(creatable_resources) -> set[str]:
    return {r["type"] for r in creatable_resources}


def test_every_creatable_type_is_covered(creatable_types):
    missing = sorted(creatable_types - covered_types())
    assert not missing, f"add these types to gpu_infra_facts/update_semantics.json: {missing}"


def test_fixed_names_are_deleted_before_they_are_replaced(creatable_resources):
    """A resource holding a name the cloud keeps unique is replaced delete-first: Pulumi's
    default (create, then delete) would collide on the name halfway through `pulumi up`."""
    fixed = [r for r in creatable_resources
             if (name := semantics(r["type"]).unique_name) and r["inputs"].get(name)]
    assert {"alicloud:oss/bucket:Bucket", "alicloud:ram/role:Role",
            "alicloud:cms/alarmContact:AlarmContact",
            "alicloud:ecs/ecsKeyPair:EcsKeyPair"} <= {r["type"] for r in fixed}
    created_first = sorted({f"{r['type']} {r['name']}" for r in fixed
                            if not r.get("deleteBeforeReplace")})
    assert not created_first, f"set fixed_name(...) options on: {created_first}"


def test_optional_features_reach_the_optional_types(creatable_types):
    for token in ("alicloud:ecs/elasticityAssurance:ElasticityAssurance",
                  "alicloud:ecs/capacityReservation:CapacityReservation",
                  "alicloud:alb/loadBalancer:LoadBalancer",
                  "alicloud:ecs/autoSnapshotPolicy:AutoSnapshotPolicy",
                  "alicloud:nas/protocolService:ProtocolService",
                  "alicloud:ess/instanceRefresh:InstanceRefresh"):
        assert token in creatable_types


@pytest.mark.parametrize("token", sorted(covered_types()))
def test_rule_paths_are_inputs_of_the_sdk(token):
    """Every top-level path the file names is an argument of the SDK's class."""
    parameters = inspect.signature(provider_class(token)._internal_init).parameters
    camel = {"".join(w.capitalize() if i else w for i, w in enumerate(p.split("_")))
             for p in parameters}
    rules = semantics(token)
    for section in (rules.replace, rules.restart, rules.ignored, rules.suppressed,
                    rules.nodes, rules.kept_if_removed):
        for path in section:
            assert path.split(".")[0] in camel, f"{token}: {path} is not an input"
    if token.startswith("alicloud:"):
        assert rules.file.startswith("alicloud/resource_alicloud_")
    elif token.startswith("tls:"):  # terraform-provider-tls, which pulumi-tls bridges
        assert rules.file.startswith("internal/provider/resource_")
    else:  # Kubernetes objects: what pulumi-kubernetes replaces (its diff.go)
        assert rules.file == "provider/pkg/provider/diff.go"


def test_nested_paths_resolve_to_the_enclosing_rule():
    instance = semantics("alicloud:ecs/instance:Instance")
    assert instance.replacing("dataDisks.size", {}).line > 0
    assert instance.replacing("dataDisks.performanceLevel", {}) is None
    assert instance.ignoring("dataDisks.performanceLevel", {}) is not None
    assert instance.restarting("userData").how == "stop-start"
    assert instance.restarting("keyName").how == "reboot"
    assert instance.replacing("tags.Name", {}) is None
    nat = semantics("alicloud:vpc/natGateway:NatGateway")
    assert nat.replacing("accessMode.modeValue", {}) is not None


def test_suppressed_fields_depend_on_the_charge_type():
    instance = semantics("alicloud:ecs/instance:Instance")
    assert instance.replacing("spotStrategy", {"instanceChargeType": "PostPaid"}) is not None
    assert instance.replacing("spotStrategy", {"instanceChargeType": "PrePaid"}) is None
    assert instance.ignoring("spotStrategy", {"instanceChargeType": "PrePaid"}) is not None


def test_unknown_type_names_the_file():
    with pytest.raises(KeyError, match="update_semantics.json"):
        semantics("alicloud:foo/bar:Bar")


def test_provider_source_is_pinned():
    assert len(provider_source()["commit"]) == 40


POOL_LEVEL = {"updateNodes"}
"""Node pool inputs that are no setting: update_nodes is sent with every update (line 3093)."""
UPDATE_HANDLED = (
    "instancePatterns", "platform", "systemDiskSnapshotPolicyId", "password",
    "systemDiskPerformanceLevel", "internetChargeType", "autoRenew", "spotPriceLimits",
    "systemDiskCategories", "period", "periodUnit", "rdsInstances", "autoRenewPeriod",
    "systemDiskEncryptAlgorithm", "scalingPolicy", "internetMaxBandwidthOut", "scalingConfig",
    "unschedulable", "cpuPolicy", "management", "resourceGroupId", "name", "nodePoolName",
    "nodeCount", "containerdConfig", "instances", "kubeletConfiguration", "upgradePolicy")
"""Inputs resourceAliCloudAckNodepoolUpdate (resource_alicloud_cs_kubernetes_node_pool.go at
the pinned commit, lines 2431-3500) sends on a change, beyond the template fields the file
listed first (turn4-facts section 3)."""


def test_node_pool_updates_say_how_they_reach_the_nodes(creatable_resources):
    """Every input of a node pool the program sets either replaces the pool, says how it
    reaches the nodes (the change report's new-nodes-only and scale lines), or is about the
    pool itself."""
    pool = semantics("alicloud:cs/nodePool:NodePool")
    inputs = {key for r in creatable_resources if r["type"] == "alicloud:cs/nodePool:NodePool"
              for key in r["inputs"]}
    unexplained = sorted(inputs - set(pool.replace) - set(pool.nodes) - POOL_LEVEL)
    assert not unexplained, f"say how these reach the nodes: {unexplained}"
    assert {rule.how for rule in pool.nodes.values()} == {
        "new-nodes", "running-nodes", "scale", "rolling", "pool"}
    assert [path for path in UPDATE_HANDLED if pool.reaching_nodes(path) is None] == []
    assert {path: pool.reaching_nodes(path).how for path in (
        "kubeletConfiguration", "containerdConfig", "nodeCount", "instances", "management",
        "unschedulable", "cpuPolicy")} == {
        "kubeletConfiguration": "rolling", "containerdConfig": "rolling", "nodeCount": "scale",
        "instances": "scale", "management": "pool", "unschedulable": "new-nodes",
        "cpuPolicy": "new-nodes"}
    assert not set(pool.nodes) & set(pool.replace)
    assert pool.reaching_nodes("dataDisks.size").how == "new-nodes"
    assert pool.reaching_nodes("taints.effect").how == "running-nodes"
    assert pool.kept_when_removed("scalingConfig.maxSize") is not None
    assert pool.kept_when_removed("desiredSize") is None


def test_a_log_store_keeps_its_shards_and_its_logs_go_with_it():
    """alicloud_log_store: shard_count is ForceNew but its DiffSuppressFunc hides every change
    of an existing store (ignored, not a replacement); the name, the project and the
    encryption type are ForceNew; the name is unique in its project; a delete takes the
    logs."""
    from gpu_infra_facts.types import LOG_STORE

    store = semantics(LOG_STORE)
    assert store.replacing("shardCount", {}) is None
    assert store.ignoring("shardCount", {}) is not None
    for path in ("logstoreName", "projectName", "encryptConf.encryptType",
                 "encryptConf.userCmkInfo.cmkKeyId"):
        assert store.replacing(path, {}) is not None, path
    assert store.replacing("retentionPeriod", {}) is None
    assert store.unique_name == "logstoreName"
    assert store.on_delete is not None and "log" in store.on_delete.note
