"""The three layouts and the shipped stacks: what each plans, with the inputs that matter."""

from __future__ import annotations

import json

import pytest

from gpu_infra.blocks.conventions import REQUIRED_TAG_KEYS
from gpu_infra_facts import types as t
from gpu_infra_facts.types import SERVICE_METRIC_ALARM_RULE
from gpu_infra_tools.plan.diagram import render_mermaid
from gpu_infra_tools.plan.engine import Plan
from gpu_infra_tools.review.policy import check_plan

from .bootstrap_sandbox import planned_steps, script_of
from .conftest import (
    BASE_INFERENCE,
    BASE_RENDERING,
    BASE_TRAINING,
    merged,
    takes_tags,
)
from .shipped import shipped_plan as shipped

SHIPPED = ("training-dev", "training-prod", "inference-prod", "rendering-batch", "training-ack",
           "inference-ack")


def count(plan: Plan, suffix: str) -> int:
    return sum(1 for r in plan.resources if r.custom and r.type.endswith(suffix))


@pytest.mark.parametrize(("stack", "total", "expected"), [
    ("training-dev", 65, {":Instance": 0, ":ScalingGroup": 1, ":ScalingConfiguration": 1,
                          ":LifecycleHook": 1, ":cr/namespace:Namespace": 2, ":cr/repo:Repo": 4,
                          ":ecs/command:Command": 0, ":EcsInvocation": 0,
                          ":PrivateKey": 0, ":SecretParameter": 0, ":oos/parameter:Parameter": 0,
                          ":EcsDisk": 0, ":EcsDiskAttachment": 0,
                          ":EcsDeploymentSet": 0, ":Bucket": 4, ":BucketObject": 1,
                          ":BucketLogging": 0,
                          ":FileSystem": 1, ":MountTarget": 1, ":Key": 0, ":cms/alarm:Alarm": 0,
                          ":EventRule": 3, ":MonitorGroup": 2, ":MonitorGroupInstances": 0,
                          ":ReservedInstance": 0, ":SnatEntry": 1}),
    ("training-prod", 119, {":Instance": 8, ":RegistryEnterpriseInstance": 1,
                            ":VpcEndpointLinkedVpc": 1, ":RegistryEnterpriseRepo": 4,
                            ":ecs/command:Command": 1, ":EcsInvocation": 1,
                            ":PrivateKey": 2, ":SecretParameter": 2,
                            ":oos/parameter:Parameter": 1,
                            ":RamRoleAttachment": 8, ":EcsDeploymentSet": 1, ":BucketObject": 1,
                            ":EcsDisk": 8, ":EcsDiskAttachment": 8,
                            ":ReservedInstance": 1, ":Key": 1, ":Bucket": 5, ":BucketLogging": 4,
                            ":FileSystem": 1, ":cms/alarm:Alarm": 6, ":EventRule": 2}),
    ("inference-prod", 83, {":ScalingGroup": 1, ":RegistryEnterpriseInstance": 1,
                            ":ScalingConfiguration": 1, ":BucketObject": 1,
                            ":nlb/loadBalancer:LoadBalancer": 1, ":nlb/listener:Listener": 1,
                            ":ServerGroupAttachment": 1, ":Bucket": 2, ":BucketLogging": 1,
                            ":Instance": 0,
                            ":DynamicTagGroup": 1, ":MetricRuleTemplate": 1, ":SnatEntry": 2,
                            ":EventRule": 3, ":ResourceGroup": 1, ":ServiceQueue": 0,
                            ":ess/notification:Notification": 1,
                            ":ServiceMetricAlarmRule": 2, ":ess/alarm:Alarm": 4,
                            ":InstanceRefresh": 0}),
    ("rendering-batch", 92, {":ScalingGroup": 1, ":RegistryEnterpriseInstance": 1,
                             ":ess/alarm:Alarm": 2, ":LifecycleHook": 2,
                             ":BucketObject": 1,
                             ":FileSystem": 1, ":MountTarget": 2, ":Bucket": 3,
                             ":BucketLogging": 2,
                             ":MonitorGroup": 3, ":Instance": 0, ":EventRule": 3,
                             ":ResourceGroup": 1, ":ServiceQueue": 2,  # jobs, dead letters
                             ":V3Function": 1, ":V3Trigger": 1}),
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
        assert "dataDisks" not in inputs and not node.protect  # the disks are separate
        [attachment] = [a for a in plan.by_type(
            "alicloud:ecs/ecsDiskAttachment:EcsDiskAttachment")
            if a.inputs["instanceId"] == node.id]
        [scratch] = [d.inputs for d in plan.by_type("alicloud:ecs/ecsDisk:EcsDisk")
                     if d.id == attachment.inputs["diskId"]]
        assert (scratch["category"], scratch["size"], scratch["provisionedIops"],
                scratch["encrypted"], scratch["kmsKeyId"], scratch["zoneId"],
                scratch["diskName"], scratch["deleteWithInstance"], scratch["type"]) == (
            "cloud_auto", 4000, 20000, True, key.id, "cn-beijing-l", "scratch", True, "online")
        assert "password" not in inputs
    disk_ids = {d.id for d in plan.by_type("alicloud:ecs/ecsDisk:EcsDisk")}
    [user_data] = {script_of(node.inputs["userData"]) for node in nodes}  # one for the fleet
    assert not [i for i in disk_ids if i in user_data]  # a disk is found by name, not id
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


def test_training_dev_is_a_spot_worker_unprotected_and_mounts_the_shared_file_system():
    """Its one node is all spot: a scaling group of one spot worker that ESS replaces on a
    reclaim notice, booting the workers' bootstrap (the shared file system, the scratch
    disk)."""
    plan = shipped("training-dev")
    assert plan.by_type("alicloud:ecs/instance:Instance") == []
    group = plan.one("alicloud:ess/scalingGroup:ScalingGroup")
    assert (group.inputs["desiredCapacity"], group.inputs["spotInstanceRemedy"],
            group.inputs["groupDeletionProtection"]) == (1, True, False)
    config = plan.one("alicloud:ess/scalingConfiguration:ScalingConfiguration")
    assert config.inputs["spotStrategy"] == "SpotAsPriceGo"
    assert [d["size"] for d in config.inputs["dataDisks"]] == [500]
    assert not any(r.protect for r in plan.resources)
    mount = plan.one("alicloud:nas/mountTarget:MountTarget")
    domain = plan.outputs["mount_command"].split("mount -t nfs")[1].split()[2].split(":")[0]
    assert domain.endswith(".nas.aliyuncs.com")
    script = script_of(config.inputs["userData"])
    assert f"\nSHARED_FS_SOURCE={domain}:/\n" in script
    assert "readonly -a DATA_DISKS=(scratch)" in script and mount.id
    assert plan.outputs["spot_scaling_group_id"] == group.id


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
    assert (health["healthCheckType"], health["healthCheckUrl"], health["healthCheckHttpCodes"],
            health["httpCheckMethod"]) == ("HTTP", "/health", ["http_2xx"], "GET")
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
    g = group.inputs
    assert (g["minSize"], g["onDemandPercentageAboveBaseCapacity"],
            g["onDemandBaseCapacity"]) == (0, 0, 0)
    assert (g["healthCheckTypes"], g["compensateWithOnDemand"], g["scalingPolicy"]) == (
        ["ECS"], True, "release")
    metrics = next(g for g in plan.by_type("alicloud:cms/monitorGroup:MonitorGroup")
                   if g.name.endswith("-gpu-metrics"))
    alarms = {a.inputs["comparisonOperator"]: a.inputs
              for a in plan.by_type("alicloud:ess/alarm:Alarm")}
    assert {op: (a["metricName"], a["metricType"], a["cloudMonitorGroupId"], a["threshold"],
                 a["evaluationCount"], a["dimensions"])
            for op, a in alarms.items()} == {
        ">=": ("job_queue_length", "custom", int(metrics.id), "1", 3,
               {"fleet": "render-farm-gpu"}),
        "<=": ("job_queue_length", "custom", int(metrics.id), "0", 10,
               {"fleet": "render-farm-gpu"})}
    rules = {r.name: r.inputs for r in plan.by_type("alicloud:ess/scalingRule:ScalingRule")}
    # steps sized to the backlog: jobs_per_instance 4 -> bands of 4, 4, 8, then 16 and up
    assert rules["render-farm-gpu-queue-out"]["stepAdjustments"] == [
        {"metricIntervalLowerBound": "0", "metricIntervalUpperBound": "4",
         "scalingAdjustment": 1},
        {"metricIntervalLowerBound": "4", "metricIntervalUpperBound": "8",
         "scalingAdjustment": 2},
        {"metricIntervalLowerBound": "8", "metricIntervalUpperBound": "16",
         "scalingAdjustment": 4},
        {"metricIntervalLowerBound": "16", "scalingAdjustment": 8}]
    # an idle farm (its backlog counts running frames) goes to min_size: 100% per firing
    scale_in = rules["render-farm-gpu-queue-in"]
    assert (scale_in["scalingRuleType"], scale_in["adjustmentType"],
            scale_in["stepAdjustments"], scale_in["minAdjustmentMagnitude"]) == (
        "StepScalingRule", "PercentChangeInCapacity",
        [{"metricIntervalUpperBound": "0", "scalingAdjustment": -100}], 1)
    hook = next(h for h in plan.by_type("alicloud:ess/lifecycleHook:LifecycleHook")
                if h.inputs["lifecycleTransition"] == "SCALE_IN")
    ready = next(h for h in plan.by_type("alicloud:ess/lifecycleHook:LifecycleHook")
                 if h.inputs["lifecycleTransition"] == "SCALE_OUT")
    assert (ready.inputs["heartbeatTimeout"], ready.inputs["defaultResult"]) == (1800, "ABANDON")
    assert (hook.inputs["lifecycleTransition"], hook.inputs["heartbeatTimeout"],
            hook.inputs["notificationArn"]) == (
        "SCALE_IN", 900, "acs:ess:cn-hangzhou:1234567890123456:oos/ACS-ESS-LifeCycleRunCommand")
    outputs = next(b for b in plan.by_type("alicloud:oss/bucket:Bucket")
                   if b.inputs["bucket"].endswith("-outputs"))
    assert [(t["storageClass"], t["days"])
            for t in outputs.inputs["lifecycleRules"][0]["transitions"]] == [
        ("IA", 30), ("Archive", 90), ("ColdArchive", 180)]
    assert plan.outputs["metric_group_id"] == metrics.id
    assert (plan.outputs["fleet_name"], plan.outputs["job_queue"]) == (
        "render-farm-gpu", "render-farm-gpu-jobs-queue")
    assert "drain_queue" not in plan.outputs


def test_inference_prod_heals_behind_the_load_balancer_and_sheds_load_gradually():
    plan = shipped("inference-prod")
    g = plan.one("alicloud:ess/scalingGroup:ScalingGroup").inputs
    assert (g["healthCheckTypes"], g["compensateWithOnDemand"], g["spotInstanceRemedy"],
            g["maxInstanceLifetime"], g["multiAzPolicy"]) == (
        ["ECS", "LOAD_BALANCER"], True, True, 7 * 86400, "COST_OPTIMIZED")
    rules = {r.name: r.inputs for r in plan.by_type("alicloud:ess/scalingRule:ScalingRule")}
    assert [s["scalingAdjustment"] for s in rules["chat-serve-gpu-queue-out"]["stepAdjustments"]
            ] == [1, 2, 4, 8]
    assert rules["chat-serve-gpu-queue-out"]["stepAdjustments"][1] == {
        "metricIntervalLowerBound": "16", "metricIntervalUpperBound": "32",
        "scalingAdjustment": 2}
    assert rules["chat-serve-gpu-queue-out"]["estimatedInstanceWarmup"] == 600
    assert rules["chat-serve-gpu-queue-in"]["stepAdjustments"] == [
        {"metricIntervalUpperBound": "0", "scalingAdjustment": -25}]
    # nothing that scales in to a fixed total: no collapse to min_size
    assert all(r.get("adjustmentType") != "TotalCapacity" for r in rules.values())
    # COST_OPTIMIZED cannot be refreshed: renewed by max lifetime instead
    assert plan.by_type("alicloud:ess/instanceRefresh:InstanceRefresh") == []
    missing = next(r for r in plan.by_type(SERVICE_METRIC_ALARM_RULE)
                   if r.name.endswith("queue-missing"))
    m = missing.inputs
    assert (m["namespace"], m["metricName"], m["noDataPolicy"], m["contactGroups"],
            m["escalations"]["critical"]["times"]) == (
        "acs_customMetric_1234567890123456", "pending_requests", "INSUFFICIENT_DATA",
        "chat-serve-alerts-contacts", 15)
    policy = next(p for p in plan.by_type("alicloud:ram/policy:Policy")
                  if p.name == "chat-serve-gpu-fleet-policy")
    statements = json.loads(policy.inputs["policyDocument"])["Statement"]
    group = plan.one("alicloud:ess/scalingGroup:ScalingGroup")
    # the serving layer publishes its backlog; OOS, not the nodes, answers the scale-in
    assert statements == [
        {"Effect": "Allow", "Action": ["cms:PutCustomMetric"], "Resource": ["*"]}]
    notice = plan.one("alicloud:ess/notification:Notification").inputs
    assert (notice["scalingGroupId"], notice["notificationArn"]) == (
        group.id, "acs:ess:cn-hangzhou:1234567890123456:cloudmonitor")
    assert "AUTOSCALING:SCALE_OUT_WARN" in notice["notificationTypes"]


def test_scaling_fleet_events_are_scoped_to_the_stacks_resource_group():
    """The scaling group and every instance its configuration launches go into the stack's
    resource group; the application group follows it, and every event rule (spot, instance
    failures, ESS's failed activities) is scoped to that group and pages the contacts."""
    plan = shipped("rendering-batch")
    resource_group = plan.one("alicloud:resourcemanager/resourceGroup:ResourceGroup")
    group = plan.one("alicloud:ess/scalingGroup:ScalingGroup").inputs
    config = plan.one("alicloud:ess/scalingConfiguration:ScalingConfiguration").inputs
    assert group["resourceGroupId"] == config["resourceGroupId"] == resource_group.id
    nodes = next(g for g in plan.by_type("alicloud:cms/monitorGroup:MonitorGroup")
                 if g.name.endswith("-alerts-nodes"))
    assert (nodes.inputs["resourceGroupId"], nodes.inputs["resourceGroupName"]) == (
        resource_group.id, resource_group.inputs["resourceGroupName"])
    assert "resourceGroupId" in nodes.replace_on_changes
    rules = {r.name.rsplit("-alerts-", 1)[1]: r.inputs
             for r in plan.by_type("alicloud:cms/eventRule:EventRule")}
    assert sorted(rules) == ["instance-failure", "scaling-failure", "spot-interruption"]
    assert rules["scaling-failure"]["eventPattern"] == {"product": "ess",
                                                        "eventTypeLists": ["*"]}
    contact_group = plan.one("alicloud:cms/alarmContactGroup:AlarmContactGroup")
    for rule in rules.values():
        assert rule["groupId"] == nodes.id
        assert rule["contactParameters"][0]["contactGroupName"] == \
            contact_group.inputs["alarmContactGroupName"]
    assert plan.by_type("alicloud:cms/monitorGroupInstances:MonitorGroupInstances") == []


def test_training_event_rules_are_scoped_to_the_stacks_nodes():
    plan = shipped("training-prod")
    nodes_group = next(g for g in plan.by_type("alicloud:cms/monitorGroup:MonitorGroup")
                       if g.name.endswith("alerts-nodes"))
    members = plan.one("alicloud:cms/monitorGroupInstances:MonitorGroupInstances").inputs
    instances = plan.by_type("alicloud:ecs/instance:Instance")
    assert members["groupId"] == nodes_group.id
    assert sorted(m["instanceId"] for m in members["instances"]) == sorted(
        i.id for i in instances)
    assert {m["category"] for m in members["instances"]} == {"ecs"}
    assert {m["regionId"] for m in members["instances"]} == {"cn-beijing"}
    for rule in plan.by_type("alicloud:cms/eventRule:EventRule"):
        assert rule.inputs["groupId"] == nodes_group.id


def test_a_priority_fleet_rolls_a_refresh_with_the_documented_batches(plan_cluster):
    plan = plan_cluster(merged(BASE_INFERENCE, fleet={
        "instance_types": ["ecs.gn7i-c8g1.2xlarge"], "min_size": 2, "max_size": 6,
        "multi_az_policy": "PRIORITY",
        "refresh": {"min_healthy_percent": 90, "checkpoint_percent": 50, "pause_minutes": 15}}))
    refresh = plan.one("alicloud:ess/instanceRefresh:InstanceRefresh")
    group = plan.one("alicloud:ess/scalingGroup:ScalingGroup")
    config = plan.one("alicloud:ess/scalingConfiguration:ScalingConfiguration")
    r = refresh.inputs
    assert (r["scalingGroupId"], r["desiredConfigurationImageId"], r["minHealthyPercentage"],
            r["maxHealthyPercentage"], r["skipMatching"], r["checkpoints"],
            r["checkpointPauseTime"]) == (
        group.id, config.inputs["imageId"], 90, 120, False, [{"percentage": 50}], 15)
    assert config.urn in refresh.dependencies
    assert plan.findings == []


def test_scaling_fleet_without_shared_fs_or_monitoring(plan_cluster):
    plan = plan_cluster(merged(BASE_RENDERING, storage={"disks": []}))
    assert plan.by_type("alicloud:nas/fileSystem:FileSystem") == []
    assert plan.by_type("alicloud:cms/alarmContactGroup:AlarmContactGroup") == []
    config = plan.one("alicloud:ess/scalingConfiguration:ScalingConfiguration")
    assert "dataDisks" not in config.inputs
    assert "shared_fs" not in planned_steps(config.inputs["userData"])
    assert "mount_command" not in plan.outputs


@pytest.mark.parametrize(("stack", "blocks", "edges"), [
    ("training-dev", ["Network", "ClusterSecurity", "InstanceRole", "SharedFileSystem",
                      "GpuScalingGroup", "Alerting", "FleetAlarms"],
     [("Network", "ClusterSecurity"), ("ClusterSecurity", "GpuScalingGroup"),
      ("SharedFileSystem", "GpuScalingGroup"), ("InstanceRole", "GpuScalingGroup"),
      ("Alerting", "FleetAlarms")]),
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


@pytest.mark.parametrize("stack", ["training-dev", "training-prod", "inference-prod",
                                   "rendering-batch"])
def test_every_fleet_stack_ships_its_node_logs_to_its_own_sls_project(stack):
    """One project per stack, the bootstrap log and the journal (kernel messages included)
    each collected into its store from the stack's machine group, whose one user-defined id
    is the one the nodes' bootstrap announces; retention and encryption by environment."""
    plan = shipped(stack)
    project = plan.one("alicloud:log/project:Project")
    stores = {s.inputs["logstoreName"]: s for s in plan.by_type("alicloud:log/store:Store")}
    publisher = ["functions"] if plan.by_type("alicloud:fc/v3Function:V3Function") else []
    assert sorted(stores) == ["bootstrap", *publisher, "system"]
    prod = plan.cluster.environment == "prod"
    for store in stores.values():
        assert store.inputs["projectName"] == project.inputs["projectName"]
        assert store.inputs["retentionPeriod"] == (180 if prod else 7)
        assert store.inputs.get("encryptConf") == (
            {"enable": True, "encryptType": "default"} if prod else None)
        assert store.protect == prod
    group = plan.one("alicloud:log/machineGroup:MachineGroup").inputs
    assert group["identifyType"] == "userdefined"
    [machine_id] = group["identifyLists"]
    configs = {c.inputs["configName"]: c.inputs
               for c in plan.by_type("alicloud:sls/logtailPipelineConfig:LogtailPipelineConfig")}
    assert configs["bootstrap"]["inputs"] == [
        {"Type": "input_file", "FilePaths": '["/var/log/gpu-infra/bootstrap.log"]'}]
    assert configs["system"]["inputs"] == [{"Type": "service_journal", "Kernel": "true"}]
    for name, config in configs.items():
        assert config["flushers"][0]["Logstore"] == name
    attached = {(a.inputs["logtailConfigName"], a.inputs["machineGroupName"])
                for a in plan.by_type("alicloud:log/logTailAttachment:LogTailAttachment")}
    assert attached == {("bootstrap", "nodes"), ("system", "nodes")}
    user_data = next(script_of(r.inputs["userData"]) for r in plan.resources
                     if r.type in ("alicloud:ecs/instance:Instance",
                                   "alicloud:ess/scalingConfiguration:ScalingConfiguration"))
    assert f"\nLOG_ID={machine_id}\n" in user_data
    assert plan.outputs["log_project"] == project.inputs["projectName"]


def test_prod_backs_up_the_shared_file_system_daily_with_the_stacks_retention():
    plan = shipped("training-prod")
    vault = plan.one("alicloud:hbr/vault:Vault")
    policy = plan.one("alicloud:hbr/policy:Policy").inputs
    [binding] = plan.by_type("alicloud:hbr/policyBinding:PolicyBinding")
    fs = plan.one("alicloud:nas/fileSystem:FileSystem")
    assert (vault.inputs["vaultType"], vault.inputs["encryptType"], vault.protect) == (
        "STANDARD", "KMS", True)
    [rule] = policy["rules"]
    assert (policy["policyType"], rule["ruleType"], rule["retention"], rule["vaultId"]) == (
        "STANDARD", "BACKUP", 30, vault.id)
    assert rule["schedule"] == f"I|{1767225600 + 18 * 3600}|P1D"
    assert (binding.inputs["sourceType"], binding.inputs["dataSourceId"],
            binding.inputs["policyId"]) == ("NAS", fs.id,
                                            plan.one("alicloud:hbr/policy:Policy").id)
    assert plan.outputs["backup_vault_id"] == vault.id
    assert shipped("training-dev").by_type("alicloud:hbr/vault:Vault") == []


@pytest.mark.parametrize("name", ["training-prod", "rendering-batch", "training-ack"])
def test_prod_vaults_encrypt_with_the_stacks_kms_key(name):
    """Every shipped prod stack takes the default: the stack's KMS key."""
    plan = shipped(name)
    vault = plan.one("alicloud:hbr/vault:Vault").inputs
    key = plan.one(t.KMS_KEY)
    assert (vault["encryptType"], vault["kmsKeyId"]) == ("KMS", key.id)
    assert not [v for v in check_plan(plan) if v.rule == "prod-backup-vault-kms"]


def test_buckets_are_backed_up_only_when_listed_and_cpfs_never(plan_cluster):
    plan = plan_cluster(merged(BASE_TRAINING, storage={
        "shared_fs": {"enabled": True, "kind": "cpfs", "capacity_gib": 3600},
        "backup": {"enabled": True, "buckets": ["datasets", "models"], "retention_days": 7,
                   "hour_utc": 0}}))
    bindings = {b.inputs["sourceType"]: b for b in
                plan.by_type("alicloud:hbr/policyBinding:PolicyBinding")}
    buckets = {b.inputs["bucket"] for b in plan.by_type("alicloud:oss/bucket:Bucket")}
    sources = sorted(b.inputs["dataSourceId"] for b in
                     plan.by_type("alicloud:hbr/policyBinding:PolicyBinding"))
    assert set(bindings) == {"OSS"} and len(sources) == 2 and set(sources) <= buckets
    assert plan.one("alicloud:hbr/policy:Policy").inputs["rules"][0]["schedule"] == \
        "I|1767225600|P1D"


@pytest.mark.parametrize("stack", ["training-prod"])
def test_training_nodes_are_created_after_what_their_first_boot_reads(stack):
    """The fleet's key parameters and the job tools' object exist before any node boots
    (their ids flow into the user data; a depends_on on the GpuNodes component would not
    reach the instances)."""
    plan = shipped(stack)
    awaited = {r.urn for r in plan.by_type(t.OOS_SECRET_PARAMETER)}
    awaited |= {r.urn for r in plan.by_type(t.BUCKET_OBJECT)}
    assert len(awaited) == 3
    for node in plan.by_type(t.INSTANCE):
        assert awaited <= set(node.dependencies), node.name
