"""The stack's alarm on its nodes' GPU health: a CloudMonitor application group the nodes put
the GPU_HEALTH_METRIC into, and one alert rule to the contacts when any node of the fleet
reports a fault."""

from __future__ import annotations

import json

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.bootstrap import health_group_name
from gpu_infra.blocks.compute.fleet_ops import account_id
from gpu_infra.blocks.conventions import Conventions, child_name, fixed_name
from gpu_infra.blocks.identity import RAM_POLICY_VERSION, role_policy
from gpu_infra_facts.allowed import GROUP_OPERATORS
from gpu_infra_facts.cloudmonitor import (
    CUSTOM_METRIC_NAMESPACE_PREFIX,
    FLEET_DIMENSION,
    GPU_HEALTH_METRIC,
    GPU_HEALTH_STATISTIC,
)
from gpu_infra_facts.node_apis import allow_statements
from gpu_infra_facts.types import SERVICE_METRIC_ALARM_RULE

PERIOD_SECONDS = 60
"""The alert rule's period."""
NODE_CALLS = ("DescribeMonitorGroups", "PutCustomMetric", "PutCustomEvent")
"""What the nodes' check calls: find the group by name, put the metric, send the fault
event (their grants: gpu_infra_facts.node_apis)."""


class GpuHealthAlarm(pulumi.ComponentResource):
    """`<name>-nodes` application group (cms.MonitorGroup) for the fleet's GPU-health metric
    and the alert rule `<name>-faults` (cloudmonitor.ServiceMetricAlarmRule, CRITICAL) that tells
    `contact_group` as soon as the metric's Maximum over the fleet is 1 or more in one
    period, and again when it is back to 0 (send_ok). No data alerts nothing: a fleet
    scaled to zero reports nothing and is healthy.

    Outputs: `group_id` (where the nodes put the metric), `rule_id`.
    """

    TYPE = "gpu-infra:monitoring:GpuHealthAlarm"

    def __init__(self, name: str, *, fleet: str, contact_group: pulumi.Input[str],
                 conventions: Conventions, role_name: pulumi.Input[str] | None = None,
                 opts: pulumi.ResourceOptions | None = None):
        """`fleet`: the FLEET_DIMENSION value the nodes put (the fleet's name);
        `role_name`: the node role, granted NODE_CALLS."""
        super().__init__(self.TYPE, name, None, opts)
        group_name, rule_name = health_group_name(name), child_name(name, "faults")
        self.group = alicloud.cms.MonitorGroup(
            group_name, monitor_group_name=group_name, tags=conventions.tags_for(group_name),
            opts=pulumi.ResourceOptions(parent=self))
        resources = self.group.id.apply(lambda gid: json.dumps(
            [{"groupId": gid, FLEET_DIMENSION: fleet}], separators=(",", ":")))
        self.rule = alicloud.cloudmonitor.ServiceMetricAlarmRule(
            rule_name, rule_name=rule_name,
            metric_alarm_rule_id=conventions.unique_name(SERVICE_METRIC_ALARM_RULE, rule_name),
            namespace=pulumi.Output.concat(CUSTOM_METRIC_NAMESPACE_PREFIX, account_id(self)),
            metric_name=GPU_HEALTH_METRIC, resources=resources, contact_groups=contact_group,
            period=str(PERIOD_SECONDS), status=True, send_ok=True,
            escalations=alicloud.cloudmonitor.ServiceMetricAlarmRuleEscalationsArgs(
                critical=alicloud.cloudmonitor.ServiceMetricAlarmRuleEscalationsCriticalArgs(
                    comparison_operator=GROUP_OPERATORS[">="],
                    statistics=GPU_HEALTH_STATISTIC, threshold="1", times=1)),
            opts=fixed_name(self))
        if role_name is not None:
            document = account_id(self).apply(lambda account: json.dumps({
                "Version": RAM_POLICY_VERSION, "Statement": allow_statements(
                    "cms", NODE_CALLS, region=conventions.region, account=account)}))
            role_policy(child_name(name, "node-policy"), role_name=role_name,
                        document=document,
                        description="The nodes' GPU health check: its metric and events",
                        conventions=conventions, parent=self)
        self.group_id: pulumi.Output[str] = self.group.id
        self.rule_id: pulumi.Output[str] = self.rule.id
        self.register_outputs({"group_id": self.group_id, "rule_id": self.rule_id})


__all__ = ["GpuHealthAlarm"]
