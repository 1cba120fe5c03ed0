"""The monitoring blocks on their own, under the mock engine."""

from __future__ import annotations

import json
import re
import typing

import pulumi

from gpu_infra.blocks.conventions import FLEET_TAG_KEY, Conventions
from gpu_infra.blocks.monitoring import (
    FAILURE_EVENT_NAMES,
    FLEET_METRICS,
    NAMESPACE,
    SPOT_EVENT_NAMES,
    Alerting,
    FleetAlarms,
    webhook_targets,
)
from gpu_infra.schema import SECRET_PLACEHOLDER
from gpu_infra.schema.monitoring import FleetAlarmsConfig, MonitoringConfig
from gpu_infra_facts.allowed import GROUP_OPERATORS, ComparisonOperator

ALARM = "alicloud:cms/alarm:Alarm"
SETTINGS = MonitoringConfig(contacts=[
    {"name": "oncall", "email": "oncall@example.com"},
    {"name": "robot", "dingtalk_webhook": SECRET_PLACEHOLDER}],
    webhook="https://hooks.example.com/gpu")
EXPECTED = {  # alarm -> (metric, operator, threshold, period, times, statistics, level)
    "gpu_idle": ("instance_gpu_gpu_usedutilization", "<", "10", 900, 8, "Maximum", "info"),
    "gpu_memory": ("instance_gpu_memory_usedutilization", ">=", "95", 300, 3, "Average",
                   "warn"),
    "gpu_temperature": ("instance_gpu_gpu_temperature", ">=", "85", 300, 3, "Maximum",
                        "critical"),
    "cpu": ("CPUUtilization", ">=", "90", 300, 3, "Average", "warn"),
    "memory": ("memory_usedutilization", ">=", "90", 300, 3, "Average", "warn"),
    "system_disk": ("diskusage_utilization", ">=", "85", 300, 3, "Average", "warn"),
}


def _fleet(settings: MonitoringConfig = SETTINGS, ids=("i-1", "i-2")):
    def build():
        instance_ids = pulumi.Output.from_input(list(ids)) if ids is not None else None
        FleetAlarms("f1-alarms", config=settings, fleet_name="f1", contact_group="grp",
                    conventions=Conventions(tags={"Project": "p"}), instance_ids=instance_ids)
    return build


def test_every_alarm_setting_has_a_metric_and_every_operator_a_template_name():
    assert set(FLEET_METRICS) == set(FleetAlarmsConfig.model_fields)
    assert set(GROUP_OPERATORS) == set(typing.get_args(ComparisonOperator))


def test_fixed_nodes_get_one_alarm_per_metric_over_all_instances(record):
    alarms = {r.name.removeprefix("f1-alarms-"): r for r in record(_fleet()) if r.type == ALARM}
    assert set(alarms) == {key.replace("_", "-") for key in EXPECTED}
    for key, (metric, operator, threshold, period, times, statistics, level) in \
            EXPECTED.items():
        inputs = alarms[key.replace("_", "-")].inputs
        device = {"device": "/dev/vda1"} if key == "system_disk" else {}
        assert inputs["project"] == NAMESPACE == "acs_ecs_dashboard"
        assert inputs["metric"] == metric
        assert json.loads(inputs["metricDimensions"]) == [
            {"instanceId": "i-1", **device}, {"instanceId": "i-2", **device}]
        assert inputs["period"] == period
        assert inputs["contactGroups"] == ["grp"]
        assert inputs["silenceTime"] == 86400
        assert inputs["effectiveInterval"] == "00:00-23:59"
        escalation_keys = [k for k in inputs if k.startswith("escalations")]
        assert escalation_keys == [f"escalations{level.capitalize()}"]
        assert inputs[escalation_keys[0]] == {
            "comparisonOperator": operator, "statistics": statistics,
            "threshold": threshold, "times": times}
        assert inputs["tags"] == {"Project": "p", "Name": f"f1-alarms-{key.replace('_', '-')}"}


def test_tuned_and_disabled_alarms(record):
    settings = SETTINGS.model_validate({
        **SETTINGS.model_dump(), "silence_time": 600, "effective_interval": "08:00-20:00",
        "alarms": {"gpu_idle": {"threshold": 20, "period": 3600, "times": 2},
                   "cpu": {"enabled": False}, "memory": {"enabled": False}}})
    alarms = {r.name: r.inputs for r in record(_fleet(settings)) if r.type == ALARM}
    assert "f1-alarms-cpu" not in alarms and "f1-alarms-memory" not in alarms
    idle = alarms["f1-alarms-gpu-idle"]
    assert (idle["period"], idle["escalationsInfo"]["threshold"],
            idle["escalationsInfo"]["times"]) == (3600, "20", 2)
    assert (idle["silenceTime"], idle["effectiveInterval"]) == (600, "08:00-20:00")


def test_scaling_fleet_alarms_follow_the_fleet_tag(record):
    resources = record(_fleet(ids=None))
    assert not [r for r in resources if r.type == ALARM]
    template = next(r for r in resources
                    if r.type == "alicloud:cms/metricRuleTemplate:MetricRuleTemplate")
    group = next(r for r in resources
                 if r.type == "alicloud:cms/dynamicTagGroup:DynamicTagGroup")
    assert group.inputs["tagKey"] == FLEET_TAG_KEY == "GpuFleet"
    assert group.inputs["matchExpresses"] == [
        {"tagValue": "f1", "tagValueMatchFunction": "equals"}]
    assert group.inputs["contactGroupLists"] == ["grp"]
    assert group.inputs["templateIdLists"] == [template.id]
    assert (template.inputs["silenceTime"], template.inputs["enableStartTime"],
            template.inputs["enableEndTime"]) == (86400, "00", "23")
    rules = {t["metricName"]: t for t in template.inputs["alertTemplates"]}
    assert set(rules) == {expected[0] for expected in EXPECTED.values()}
    for metric, operator, threshold, _, times, statistics, level in EXPECTED.values():
        assert rules[metric]["namespace"] == NAMESPACE
        assert rules[metric]["category"] == "ecs"
        assert rules[metric]["escalations"] == {level: {
            "comparisonOperator": GROUP_OPERATORS[operator], "statistics": statistics,
            "threshold": threshold, "times": str(times)}}
    assert rules["instance_gpu_gpu_usedutilization"]["escalations"]["info"][
        "comparisonOperator"] == "LessThanThreshold"


def test_no_enabled_alarms_creates_nothing_in_tag_mode(record):
    off = {key: {"enabled": False} for key in FleetAlarmsConfig.model_fields}
    settings = SETTINGS.model_validate({**SETTINGS.model_dump(), "alarms": off})
    assert [r.type for r in record(_fleet(settings, ids=None)) if r.custom] == []


def _alerting(settings: MonitoringConfig = SETTINGS):
    return lambda: Alerting("t01-mon", config=settings)


def test_contacts_and_contact_group(record):
    resources = record(_alerting())
    contacts = {r.name: r.inputs for r in resources
                if r.type == "alicloud:cms/alarmContact:AlarmContact"}
    assert contacts["t01-mon-oncall"]["alarmContactName"] == "t01-mon-oncall"
    assert contacts["t01-mon-oncall"]["channelsMail"] == "oncall@example.com"
    assert "channelsDingWebHook" not in contacts["t01-mon-oncall"]
    assert contacts["t01-mon-robot"]["channelsDingWebHook"] == SECRET_PLACEHOLDER
    group = next(r for r in resources
                 if r.type == "alicloud:cms/alarmContactGroup:AlarmContactGroup")
    assert group.inputs["alarmContactGroupName"] == "t01-mon-contacts"
    assert group.inputs["contacts"] == ["t01-mon-oncall", "t01-mon-robot"]
    assert all(r.parent and r.parent.endswith("::t01-mon") for r in resources if r.custom)


def test_event_rules_for_spot_interruption_and_failures(record):
    rules = {r.name: r.inputs for r in record(_alerting())
             if r.type == "alicloud:cms/eventRule:EventRule"}
    spot, failure = rules["t01-mon-spot-interruption"], rules["t01-mon-instance-failure"]
    assert spot["eventPattern"] == {
        "product": "ecs", "eventTypeLists": ["StatusNotification"],
        "nameLists": ["Instance:PreemptibleInstanceInterruption"]}
    assert list(SPOT_EVENT_NAMES) == ["Instance:PreemptibleInstanceInterruption"]
    assert failure["eventPattern"] == {
        "product": "ecs", "eventTypeLists": ["*"], "nameLists": list(FAILURE_EVENT_NAMES)}
    assert "Instance:SystemFailure.Reboot:Executing" in FAILURE_EVENT_NAMES
    for rule in (spot, failure):
        assert rule["status"] == "ENABLED"
        assert rule["contactParameters"] == [
            {"contactGroupName": "t01-mon-contacts", "level": "4"}]
        assert rule["webhookParameters"] == SECRET_PLACEHOLDER


def test_webhook_target_is_an_http_post():
    [target] = webhook_targets("https://hooks.example.com/gpu")
    assert (target.url, target.protocol, target.method) == (
        "https://hooks.example.com/gpu", "http", "POST")


def test_event_rules_toggle_and_webhook_is_optional(record):
    settings = MonitoringConfig(contacts=[{"name": "oncall", "email": "o@example.com"}],
                                events={"spot_interruption": False})
    rules = {r.name: r.inputs for r in record(_alerting(settings))
             if r.type == "alicloud:cms/eventRule:EventRule"}
    assert list(rules) == ["t01-mon-instance-failure"]
    assert "webhookParameters" not in rules["t01-mon-instance-failure"]


def test_too_long_contact_name_is_shortened_with_a_digest(record):
    settings = MonitoringConfig(contacts=[{"name": "abcdefghijkl", "email": "o@example.com"}])
    resources = record(lambda: Alerting("a-very-long-cluster-name-mon-x", config=settings))
    [contact] = [r.inputs["alarmContactName"] for r in resources
                 if r.type == "alicloud:cms/alarmContact:AlarmContact"]
    assert len(contact) == 40 and contact.startswith("a-very-long-cluster-name-mon-x-ab-")
    assert re.fullmatch(r".*-[0-9a-f]{6}", contact)
