"""The stack's GPU-health alarm: one per ECS fleet stack with contacts, on the node metric's
Maximum over the fleet, in the group the nodes put it into (stack output
gpu_health_group_id)."""

from __future__ import annotations

import json

from gpu_infra_facts.cloudmonitor import GPU_HEALTH_METRIC
from gpu_infra_facts.types import SERVICE_METRIC_ALARM_RULE

from .conftest import BASE_RENDERING, BASE_TRAINING, merged

MONITOR_GROUP = "alicloud:cms/monitorGroup:MonitorGroup"
CONTACTS = {"contacts": [{"name": "oncall", "email": "oncall@example.com"}]}


def _health_rules(plan):
    return [r for r in plan.by_type(SERVICE_METRIC_ALARM_RULE)
            if r.inputs["metricName"] == GPU_HEALTH_METRIC]


def test_one_fault_on_any_node_pages_the_contacts(plan_cluster):
    plan = plan_cluster(merged(BASE_TRAINING, monitoring=CONTACTS))
    [rule] = _health_rules(plan)
    [group] = [g for g in plan.by_type(MONITOR_GROUP) if g.name == "t01-gpu-health-nodes"]
    assert json.loads(rule.inputs["resources"]) == [{"groupId": group.id, "fleet": "t01-gpu"}]
    assert rule.inputs["namespace"] == "acs_customMetric_1234567890123456"
    assert rule.inputs["contactGroups"] == "t01-alerts-contacts"
    critical = rule.inputs["escalations"]["critical"]
    assert (critical["statistics"], critical["comparisonOperator"], critical["threshold"],
            critical["times"]) == ("Maximum", "GreaterThanOrEqualToThreshold", "1", 1)
    assert rule.inputs["sendOk"] is True and "noDataPolicy" not in rule.inputs
    assert plan.outputs["gpu_health_group_id"] == group.id


def test_scaling_fleets_get_it_too_and_it_can_be_switched_off(plan_cluster):
    farm = plan_cluster(merged(BASE_RENDERING, monitoring=CONTACTS))
    assert len(_health_rules(farm)) == 1
    off = plan_cluster(merged(BASE_RENDERING, monitoring={
        **CONTACTS, "events": {"gpu_health": False}}), name="off")
    assert _health_rules(off) == [] and "gpu_health_group_id" not in off.outputs


def test_without_contacts_there_is_no_alarm(plan_cluster):
    plan = plan_cluster(BASE_TRAINING)
    assert _health_rules(plan) == [] and "gpu_health_group_id" not in plan.outputs


def test_ack_stacks_have_none_their_nodes_run_no_gpu_infra_check():
    from .golden import golden_record

    for stack in ("training-ack", "inference-ack"):
        rules = [r for r in golden_record(stack)["resources"]
                 if r["type"] == SERVICE_METRIC_ALARM_RULE
                 and r["inputs"].get("metricName") == GPU_HEALTH_METRIC]
        assert rules == [], stack


ECS_FLEET_STACKS = ("training-dev", "training-prod", "inference-prod", "rendering-batch")
"""The shipped stacks with an ECS GPU fleet (each has contacts)."""
HEALTH_TIMER = "systemctl enable gpu-infra-gpu-health.timer"


def test_every_shipped_ecs_fleet_runs_the_check_and_its_alarm_pages_the_contacts():
    from .golden import golden_record

    for stack in ECS_FLEET_STACKS:
        resources = golden_record(stack)["resources"]
        [rule] = [r for r in resources if r["type"] == SERVICE_METRIC_ALARM_RULE
                  and r["inputs"].get("metricName") == GPU_HEALTH_METRIC]
        [contacts] = [r for r in resources
                      if r["type"] == "alicloud:cms/alarmContactGroup:AlarmContactGroup"]
        assert rule.get("inputs")["contactGroups"] == contacts["inputs"]["alarmContactGroupName"]
        [tools] = [r for r in resources if r["type"] == "alicloud:oss/bucketObject:BucketObject"
                   and r["name"].endswith("-node-tools")]
        assert HEALTH_TIMER in tools["inputs"]["content"].splitlines(), stack
        [role] = [r for r in resources if r["type"] == "alicloud:ram/role:Role"
                  and r["name"].endswith("-node-role")]
        attached = {r["inputs"]["policyName"] for r in resources
                    if r["type"] == "alicloud:ram/rolePolicyAttachment:RolePolicyAttachment"
                    and r["inputs"]["roleName"] == role["inputs"]["roleName"]}
        assert any(name.endswith("-gpu-health-node-policy") for name in attached), stack
        nodes = [r for r in resources if r["type"] in (
            "alicloud:ecs/instance:Instance",
            "alicloud:ess/scalingConfiguration:ScalingConfiguration")]
        assert nodes and all(tools["urn"] in r["dependencies"] for r in nodes), stack


def test_a_stack_without_buckets_is_refused_and_told_what_its_nodes_would_miss():
    from gpu_infra.nodeplan import judge_stack

    from .conftest import BASE_INFERENCE, cluster_config

    bare = merged(BASE_TRAINING, monitoring=CONTACTS, storage={"buckets": {"purposes": []}})
    [finding] = [f for f in judge_stack(cluster_config(bare))
                 if f.validator == "node-tools-without-bucket"]
    assert finding.line() == (
        "ERROR node-tools-without-bucket: storage.buckets.purposes: no bucket holds the "
        "nodes' node tools: the bootstrap steps (the user data has room only for their "
        "loader), the GPU health check after boot, the elastic job launcher; list at least "
        "one purpose (e.g. [checkpoints]: the node tools go in the checkpoints bucket, else "
        "the first)")
    with_bucket = merged(bare, storage={"buckets": {"purposes": ["checkpoints"]}})
    assert not [f for f in judge_stack(cluster_config(with_bucket))
                if f.validator == "node-tools-without-bucket"]
    inference = merged(BASE_INFERENCE, storage={"buckets": {"purposes": []}})
    [finding] = [f for f in judge_stack(cluster_config(inference))
                 if f.validator == "node-tools-without-bucket"]
    assert "no bucket holds the nodes' node tools: the bootstrap steps (the user data has " \
           "room only for their loader); list" in finding.message


def test_every_environment_refuses_nodes_without_their_node_tools(tmp_path, capsys):
    """validate: exit 2 and one line with the field path and what to do, dev and staging
    as prod (the whole bootstrap would not leave the user data room, issue 37)."""
    from gpu_infra_tools.cli import main

    from .conftest import write_stack

    for environment in ("dev", "staging", "prod"):
        bare = merged(BASE_TRAINING, environment=environment, monitoring=CONTACTS,
                      storage={"buckets": {"purposes": []}})
        code = main(["validate", str(write_stack(tmp_path, f"bare-{environment}", bare))])
        err = capsys.readouterr().err
        [line] = [line for line in err.splitlines() if "node-tools-without-bucket" in line]
        assert code == 2, environment
        assert line.strip().startswith("ERROR node-tools-without-bucket: "
                                       "storage.buckets.purposes: no bucket holds"), line
        assert "Traceback" not in err
