"""The three layouts and the shipped stacks: what each plans, with the inputs that matter."""

from __future__ import annotations

import json
from functools import cache

import pytest

from gpu_infra.blocks.conventions import REQUIRED_TAG_KEYS
from gpu_infra.tools.plan.diagram import render_mermaid
from gpu_infra.tools.plan.engine import Plan, run_plan

from .conftest import BASE_RENDERING, STACKS_DIR, merged, takes_tags

SHIPPED = ("training-dev", "training-prod", "inference-prod", "rendering-batch")


@cache
def shipped(stack: str) -> Plan:
    return run_plan(STACKS_DIR / f"Pulumi.{stack}.yaml")


def count(plan: Plan, suffix: str) -> int:
    return sum(1 for r in plan.resources if r.custom and r.type.endswith(suffix))


@pytest.mark.parametrize(("stack", "total", "expected"), [
    ("training-dev", 43, {":Instance": 1, ":EcsDeploymentSet": 1, ":Bucket": 4,
                          ":BucketLogging": 0,
                          ":FileSystem": 1, ":MountTarget": 1, ":Key": 0, ":cms/alarm:Alarm": 6,
                          ":EventRule": 2, ":ReservedInstance": 0, ":SnatEntry": 1}),
    ("training-prod", 67, {":Instance": 8, ":RamRoleAttachment": 8, ":EcsDeploymentSet": 1,
                           ":ReservedInstance": 1, ":Key": 1, ":Bucket": 5, ":BucketLogging": 4,
                           ":FileSystem": 1, ":cms/alarm:Alarm": 6}),
    ("inference-prod", 44, {":ScalingGroup": 1, ":ScalingConfiguration": 1,
                            ":nlb/loadBalancer:LoadBalancer": 1, ":nlb/listener:Listener": 1,
                            ":ServerGroupAttachment": 1, ":Bucket": 2, ":BucketLogging": 1,
                            ":Instance": 0,
                            ":DynamicTagGroup": 1, ":MetricRuleTemplate": 1, ":SnatEntry": 2}),
    ("rendering-batch", 46, {":ScalingGroup": 1, ":ess/alarm:Alarm": 2, ":LifecycleHook": 1,
                             ":FileSystem": 1, ":MountTarget": 2, ":Bucket": 3,
                             ":BucketLogging": 2,
                             ":MonitorGroup": 1, ":Instance": 0}),
])
def test_shipped_stack_plans_with_expected_resources(stack, total, expected):
    plan = shipped(stack)
    assert sum(1 for r in plan.resources if r.custom) == total
    assert {suffix: count(plan, suffix) for suffix in expected} == expected
    assert plan.findings == []


@pytest.mark.parametrize("stack", SHIPPED)
def test_layouts_compose_blocks_only(stack):
    plan = shipped(stack)
    layout = next(r for r in plan.resources if r.type.startswith("gpu-infra:layouts:"))
    assert [r.name for r in plan.resources if r.custom and r.parent == layout.urn] == []
    assert all(r.type.startswith("gpu-infra:") for r in plan.resources if not r.custom)


def test_training_prod_nodes_are_packed_fast_encrypted_and_protected():
    plan = shipped("training-prod")
    [deployment_set] = plan.by_type("alicloud:ecs/ecsDeploymentSet:EcsDeploymentSet")
    key = plan.one("alicloud:kms/key:Key")
    [vswitch] = plan.by_type("alicloud:vpc/switch:Switch")
    nodes = plan.by_type("alicloud:ecs/instance:Instance")
    assert deployment_set.inputs["strategy"] == "LowLatency"
    for node in nodes:
        inputs = node.inputs
        assert inputs["instanceType"] == "ecs.ebmgn7ex.32xlarge"
        assert inputs["networkInterfaceTrafficMode"] == "HighPerformance"
        assert inputs["deploymentSetId"] == deployment_set.id
        assert inputs["vswitchId"] == vswitch.id and inputs["internetMaxBandwidthOut"] == 0
        assert (inputs["instanceChargeType"], inputs["spotStrategy"]) == ("PostPaid", "NoSpot")
        assert inputs["deletionProtection"] is True
        assert (inputs["systemDiskEncrypted"], inputs["systemDiskKmsKeyId"]) == (True, key.id)
        [scratch] = inputs["dataDisks"]
        assert (scratch["category"], scratch["size"], scratch["provisionedIops"],
                scratch["encrypted"], scratch["kmsKeyId"]) == ("cloud_auto", 4000, 20000,
                                                               True, key.id)
        assert "password" not in inputs
    reserved = plan.one("alicloud:ecs/reservedInstance:ReservedInstance")
    assert (reserved.inputs["instanceAmount"], reserved.inputs["scope"],
            reserved.inputs["zoneId"]) == (8, "Zone", "cn-beijing-l")
    data = [r for r in plan.resources if r.type in (
        "alicloud:oss/bucket:Bucket", "alicloud:nas/fileSystem:FileSystem")]
    assert data and all(r.protect for r in data)
    assert all(r.inputs["versioning"] == {"status": "Enabled"}
               for r in plan.by_type("alicloud:oss/bucket:Bucket"))
    fs = plan.one("alicloud:nas/fileSystem:FileSystem")
    assert (fs.inputs["fileSystemType"], fs.inputs["capacity"], fs.inputs["encryptType"]) == (
        "extreme", 20480, 2)


def test_training_dev_is_spot_and_unprotected_and_mounts_the_shared_file_system():
    plan = shipped("training-dev")
    node = plan.one("alicloud:ecs/instance:Instance")
    assert (node.inputs["spotStrategy"], node.inputs["deletionProtection"]) == (
        "SpotAsPriceGo", False)
    assert not any(r.protect for r in plan.resources)
    mount = plan.one("alicloud:nas/mountTarget:MountTarget")
    domain = plan.outputs["mount_command"].split("mount -t nfs")[1].split()[2].split(":")[0]
    assert domain.endswith(".nas.aliyuncs.com")
    assert f"{domain}:/ /mnt/shared" in node.inputs["userData"]
    assert "/mnt/scratch" in node.inputs["userData"] and mount.id
    assert plan.outputs["node_private_ips"] == ["10.10.64.4"]


def test_inference_prod_fleet_spans_zones_behind_an_intranet_nlb():
    plan = shipped("inference-prod")
    group = plan.one("alicloud:ess/scalingGroup:ScalingGroup")
    config = plan.one("alicloud:ess/scalingConfiguration:ScalingConfiguration")
    vswitches = {r.inputs["zoneId"]: r.id for r in plan.by_type("alicloud:vpc/switch:Switch")}
    assert sorted(group.inputs["vswitchIds"]) == sorted(vswitches.values())
    assert (group.inputs["minSize"], group.inputs["maxSize"], group.inputs["multiAzPolicy"],
            group.inputs["onDemandBaseCapacity"],
            group.inputs["onDemandPercentageAboveBaseCapacity"],
            group.inputs["spotInstancePools"], group.inputs["groupDeletionProtection"]) == (
        2, 16, "COST_OPTIMIZED", 2, 30, 2, True)
    assert config.inputs["instanceTypes"] == [
        "ecs.gn7i-c8g1.2xlarge", "ecs.gn7i-c16g1.4xlarge", "ecs.gn6i-c4g1.xlarge"]
    assert config.inputs["spotStrategy"] == "SpotAsPriceGo"
    assert config.inputs["systemDiskEncrypted"] is True
    assert [d["category"] for d in config.inputs["dataDisks"]] == ["cloud_essd"]
    nlb = plan.one("alicloud:nlb/loadBalancer:LoadBalancer")
    assert nlb.inputs["addressType"] == "Intranet"
    assert {m["zoneId"]: m["vswitchId"] for m in nlb.inputs["zoneMappings"]} == vswitches
    attachment = plan.one("alicloud:ess/serverGroupAttachment:ServerGroupAttachment")
    assert (attachment.inputs["scalingGroupId"], attachment.inputs["type"],
            attachment.inputs["port"]) == (group.id, "NLB", 8000)
    health = plan.one("alicloud:nlb/serverGroup:ServerGroup").inputs["healthCheck"]
    assert (health["healthCheckType"], health["healthCheckUrl"]) == ("HTTP", "/v2/health/ready")
    [lb_group] = nlb.inputs["securityGroupIds"]
    fleet_group = plan.outputs["security_group_id"]
    service_rules = {(r.inputs["securityGroupId"],
                      r.inputs.get("cidrIp") or r.inputs["sourceSecurityGroupId"])
                     for r in plan.by_type("alicloud:ecs/securityGroupRule:SecurityGroupRule")
                     if r.inputs["portRange"] == "8000/8000"}
    assert service_rules == {(lb_group, "172.16.0.0/12"), (fleet_group, "172.16.0.0/12"),
                             (fleet_group, lb_group)}
    assert plan.outputs["load_balancer_dns"] == nlb.id + ".cn-hangzhou.nlb.aliyuncs.com"


def test_rendering_batch_scales_on_queue_length_to_zero_on_spot():
    plan = shipped("rendering-batch")
    group = plan.one("alicloud:ess/scalingGroup:ScalingGroup")
    assert (group.inputs["minSize"], group.inputs["onDemandPercentageAboveBaseCapacity"],
            group.inputs["onDemandBaseCapacity"]) == (0, 0, 0)
    metrics = plan.one("alicloud:cms/monitorGroup:MonitorGroup")
    alarms = {a.inputs["comparisonOperator"]: a.inputs
              for a in plan.by_type("alicloud:ess/alarm:Alarm")}
    assert {op: (a["metricName"], a["metricType"], a["cloudMonitorGroupId"], a["threshold"])
            for op, a in alarms.items()} == {
        ">=": ("job_queue_length", "custom", int(metrics.id), "1"),
        "<=": ("job_queue_length", "custom", int(metrics.id), "0")}
    rules = {r.inputs["scalingRuleType"]: r.inputs
             for r in plan.by_type("alicloud:ess/scalingRule:ScalingRule")}
    assert rules["SimpleScalingRule"]["adjustmentValue"] == 0
    assert [s["scalingAdjustment"] for s in rules["StepScalingRule"]["stepAdjustments"]] == [
        2, 10]
    hook = plan.one("alicloud:ess/lifecycleHook:LifecycleHook")
    assert (hook.inputs["lifecycleTransition"], hook.inputs["heartbeatTimeout"]) == (
        "SCALE_IN", 900)
    outputs = next(b for b in plan.by_type("alicloud:oss/bucket:Bucket")
                   if b.inputs["bucket"].endswith("-outputs"))
    assert [(t["storageClass"], t["days"])
            for t in outputs.inputs["lifecycleRules"][0]["transitions"]] == [
        ("IA", 30), ("Archive", 90), ("ColdArchive", 180)]
    assert plan.outputs["metric_group_id"] == metrics.id


def test_scaling_fleet_without_shared_fs_or_monitoring(plan_cluster):
    plan = plan_cluster(merged(BASE_RENDERING, storage={"disks": []}))
    assert plan.by_type("alicloud:nas/fileSystem:FileSystem") == []
    assert plan.by_type("alicloud:cms/alarmContactGroup:AlarmContactGroup") == []
    config = plan.one("alicloud:ess/scalingConfiguration:ScalingConfiguration")
    assert "dataDisks" not in config.inputs and "mount" not in config.inputs["userData"]
    assert "mount_command" not in plan.outputs


@pytest.mark.parametrize(("stack", "blocks", "edges"), [
    ("training-dev", ["Network", "ClusterSecurity", "InstanceRole", "SharedFileSystem",
                      "GpuNodes", "Alerting", "FleetAlarms"],
     [("Network", "ClusterSecurity"), ("ClusterSecurity", "GpuNodes"),
      ("SharedFileSystem", "GpuNodes"), ("InstanceRole", "GpuNodes"),
      ("GpuNodes", "FleetAlarms"), ("Alerting", "FleetAlarms")]),
    ("inference-prod", ["Network", "ServiceLoadBalancer", "ClusterSecurity", "KmsKey",
                        "GpuScalingGroup"],
     [("Network", "ServiceLoadBalancer"), ("ServiceLoadBalancer", "ClusterSecurity"),
      ("GpuScalingGroup", "ServiceLoadBalancer"), ("KmsKey", "GpuScalingGroup")]),
    ("rendering-batch", ["Network", "SharedFileSystem", "GpuScalingGroup", "FleetAlarms"],
     [("SharedFileSystem", "GpuScalingGroup"), ("Network", "SharedFileSystem")]),
])
def test_mermaid_shows_blocks_and_the_data_flow(stack, blocks, edges):
    text = render_mermaid(shipped(stack))
    lines = text.splitlines()
    assert lines[0] == "flowchart LR" and lines[1].startswith('  subgraph layout["')
    ids = {}
    for line in lines:
        if line.startswith("    b") and '["' in line:
            node_id, label = line.strip().split('["', 1)
            ids[label.split("<br/>")[0]] = node_id
    assert set(blocks) <= set(ids)
    arrows = {tuple(line.split(" --> ")) for line in (raw.strip() for raw in lines)
              if " --> " in line}
    for source, target in edges:
        assert (ids[source], ids[target]) in arrows, (source, target)


def test_exports_are_json_serialisable_and_name_what_users_need():
    outputs = shipped("training-prod").outputs
    json.dumps(outputs)
    assert len(outputs["node_private_ips"]) == 8
    assert set(outputs["bucket_names"]) == {"datasets", "checkpoints", "models", "outputs"}
    assert outputs["mount_command"].count("/share /mnt/shared") == 2  # fstab line and mount


@pytest.mark.parametrize("stack", SHIPPED)
def test_every_child_is_named_after_its_component_and_tagged(stack):
    plan = shipped(stack)
    by_urn = {r.urn: r for r in plan.resources}
    for resource in plan.resources:
        parent = by_urn.get(resource.parent)
        if resource.custom:
            assert parent is not None and parent.type.startswith("gpu-infra:"), resource.name
        if parent is not None:
            assert resource.name.startswith(f"{parent.name}-"), (resource.name, parent.name)
        if resource.custom and takes_tags(resource.type):
            tags = resource.inputs.get("tags", {})
            assert set(REQUIRED_TAG_KEYS) | {"CostCenter", "Owner"} <= set(tags), resource.name
            assert tags["Stack"] == stack
