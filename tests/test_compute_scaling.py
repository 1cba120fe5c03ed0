"""GpuScalingGroup and ReservedCapacity under the mock engine."""

from __future__ import annotations

import pytest

from gpu_infra.blocks.compute.reserved import ReservedCapacity
from gpu_infra.blocks.compute.scaling import GpuScalingGroup
from gpu_infra.blocks.conventions import FLEET_TAG_KEY, Conventions
from gpu_infra.schema.compute import ReservedCapacityConfig as ReservedSettings
from gpu_infra.schema.compute import ScalingFleet

from .conftest import utc_in

GROUP = "alicloud:ess/scalingGroup:ScalingGroup"
CONFIG = "alicloud:ess/scalingConfiguration:ScalingConfiguration"
RULE = "alicloud:ess/scalingRule:ScalingRule"
ALARM = "alicloud:ess/alarm:Alarm"
TASK = "alicloud:ess/scheduledTask:ScheduledTask"
HOOK = "alicloud:ess/lifecycleHook:LifecycleHook"
TYPES = ["ecs.gn7i-c8g1.2xlarge", "ecs.gn6i-c4g1.xlarge"]
LAUNCH = utc_in(10)


def build(record, protection=False, scale_in_percent=25, **fleet):
    settings = ScalingFleet(**{"instance_types": TYPES, **fleet})
    resources = record(lambda: GpuScalingGroup(
        "inf", config=settings, vswitch_ids=["vsw-a", "vsw-b"], security_group_ids=["sg-1"],
        image_id="m-gpu", role_name="role", key_name="k", user_data="#!/bin/sh",
        scale_in_percent=scale_in_percent,
        conventions=Conventions(tags={"Project": "p"}, deletion_protection=protection,
                                region="cn-hangzhou")))
    return {t: [r for r in resources if r.type == t]
            for t in (GROUP, CONFIG, RULE, ALARM, TASK, HOOK)}


def test_on_demand_group_and_configuration(record):
    found = build(record, min_size=1, max_size=6, desired_size=2, protection=True)
    [group], [config] = found[GROUP], found[CONFIG]
    g = group.inputs
    assert (g["minSize"], g["maxSize"], g["desiredCapacity"]) == (1, 6, 2)
    assert g["vswitchIds"] == ["vsw-a", "vsw-b"] and g["multiAzPolicy"] == "COST_OPTIMIZED"
    assert g["onDemandBaseCapacity"] == 0 and g["onDemandPercentageAboveBaseCapacity"] == 100
    assert "spotInstancePools" not in g and g["groupDeletionProtection"] is True
    assert g["removalPolicies"] == ["OldestScalingConfiguration", "OldestInstance"]
    assert g["tags"][FLEET_TAG_KEY] == "inf"
    c = config.inputs
    assert c["scalingGroupId"] == group.id and c["instanceTypes"] == TYPES
    assert (c["imageId"], c["roleName"], c["keyName"], c["userData"]) == (
        "m-gpu", "role", "k", "#!/bin/sh")
    assert c["securityGroupIds"] == ["sg-1"] and c["internetMaxBandwidthOut"] == 0
    assert c["systemDiskCategory"] == "cloud_essd" and c["systemDiskSize"] == 200
    assert c["spotStrategy"] == "NoSpot" and c["active"] is True and c["enable"] is True
    assert c["tags"][FLEET_TAG_KEY] == "inf"


@pytest.mark.parametrize("fleet, spot_strategy, limits", [
    ({"on_demand_base_capacity": 1, "on_demand_percentage_above_base": 0},
     "SpotAsPriceGo", None),
    ({"on_demand_percentage_above_base": 50, "spot_strategy": "SpotWithPriceLimit",
      "spot_price_limit": 5.5}, "SpotWithPriceLimit",
     [{"instanceType": t, "priceLimit": 5.5} for t in TYPES]),
])
def test_spot_mixes(record, fleet, spot_strategy, limits):
    found = build(record, **fleet)
    g, c = found[GROUP][0].inputs, found[CONFIG][0].inputs
    assert g["onDemandBaseCapacity"] == fleet.get("on_demand_base_capacity", 0)
    assert g["onDemandPercentageAboveBaseCapacity"] == fleet["on_demand_percentage_above_base"]
    assert g["spotInstancePools"] == 2 and g["spotInstanceRemedy"] is True
    assert c["spotStrategy"] == spot_strategy
    assert c.get("spotPriceLimits") == limits


def test_target_tracking_rule(record):
    [rule] = build(record, target_tracking={"target_value": 60})[RULE]
    r = rule.inputs
    assert r["scalingRuleType"] == "TargetTrackingScalingRule"
    assert (r["metricType"], r["metricName"], r["targetValue"]) == (
        "system", "CpuUtilization", 60)


def test_queue_scaling_steps_follow_the_backlog_and_scale_in_is_proportional(record):
    found = build(record, min_size=0, max_size=3, queue_scaling={
        "cloud_monitor_group_id": 12345, "jobs_per_instance": 5}, scale_in_percent=50)
    rules = {r.name: r for r in found[RULE]}
    out, scale_in = rules["inf-queue-out"], rules["inf-queue-in"]
    assert out.inputs["scalingRuleType"] == "StepScalingRule"
    # bands of 5 and 5 jobs, then the rest; capped at max_size - min_size = 3 instances
    assert out.inputs["stepAdjustments"] == [
        {"metricIntervalLowerBound": "0", "metricIntervalUpperBound": "5",
         "scalingAdjustment": 1},
        {"metricIntervalLowerBound": "5", "metricIntervalUpperBound": "10",
         "scalingAdjustment": 2},
        {"metricIntervalLowerBound": "10", "scalingAdjustment": 3}]
    assert (scale_in.inputs["scalingRuleType"], scale_in.inputs["adjustmentType"],
            scale_in.inputs["minAdjustmentMagnitude"], scale_in.inputs["stepAdjustments"]) == (
        "StepScalingRule", "PercentChangeInCapacity", 1,
        [{"metricIntervalUpperBound": "0", "scalingAdjustment": -50}])
    alarms = {a.name: a for a in found[ALARM]}
    high, empty = alarms["inf-queue-high"], alarms["inf-queue-empty"]
    assert (high.inputs["evaluationCount"], empty.inputs["evaluationCount"]) == (3, 10)
    for alarm, rule, operator, threshold in ((high, out, ">=", "1"),
                                             (empty, scale_in, "<=", "0")):
        a = alarm.inputs
        assert a["metricType"] == "custom" and a["cloudMonitorGroupId"] == 12345
        assert a["metricName"] == "job_queue_length" and a["period"] == 60
        assert (a["comparisonOperator"], a["threshold"]) == (operator, threshold)
        assert a["alarmActions"] == [f"ari:acs:ess:cn-hangzhou:1234567890123456:"
                                     f"scalingrule/{rule.id}"]


def test_gpu_scaling_alarms_watch_the_agents_gpu_utilisation(record):
    found = build(record, min_size=1, max_size=8, gpu_scaling={
        "scale_out_at": 80, "scale_in_at": 20, "grow_percent": 50, "shrink_percent": 10,
        "period_seconds": 120})
    rules = {r.name: r.inputs for r in found[RULE]}
    grow, shrink = rules["inf-gpu-high-rule"], rules["inf-gpu-low-rule"]
    assert (grow["adjustmentType"], grow["minAdjustmentMagnitude"], grow["stepAdjustments"]) \
        == ("PercentChangeInCapacity", 1,
            [{"metricIntervalLowerBound": "0", "scalingAdjustment": 50}])
    assert grow["estimatedInstanceWarmup"] == 600 and "estimatedInstanceWarmup" not in shrink
    assert shrink["stepAdjustments"] == [{"metricIntervalUpperBound": "0",
                                          "scalingAdjustment": -10}]
    alarms = {a.name: a.inputs for a in found[ALARM]}
    for name, operator, threshold, periods, rule in (
            ("inf-gpu-high", ">=", "80", 3, "inf-gpu-high-rule"),
            ("inf-gpu-low", "<=", "20", 15, "inf-gpu-low-rule")):
        alarm = alarms[name]
        assert (alarm["metricType"], alarm["metricName"], alarm["statistics"]) == (
            "system", "GpuUtilizationAgent", "Average")
        assert "cloudMonitorGroupId" not in alarm and alarm["period"] == 120
        assert (alarm["comparisonOperator"], alarm["threshold"],
                alarm["evaluationCount"]) == (operator, threshold, periods)
        rule_id = next(r.id for r in found[RULE] if r.name == rule)
        assert alarm["alarmActions"] == [f"ari:acs:ess:cn-hangzhou:1234567890123456:"
                                         f"scalingrule/{rule_id}"]


@pytest.mark.parametrize("settings, message", [
    ({"scale_out_at": 50, "scale_in_at": 50}, "scale_in_at: 50% must be below scale_out_at"),
    ({"scale_out_at": 120}, "scale_out_at"),
])
def test_gpu_scaling_thresholds_are_checked(settings, message):
    with pytest.raises(ValueError, match=message):
        ScalingFleet(instance_types=["ecs.gn7i-c8g1.2xlarge"], gpu_scaling=settings)


def test_schedules_and_drain_hook(record):
    found = build(record, schedules=[{
        "name": "weekday-up", "launch_time": LAUNCH, "recurrence_type": "Cron",
        "recurrence_value": "0 8 * * 1-5", "recurrence_end_time": utc_in(300),
        "desired_size": 3}], drain_seconds=900)
    [task], [hook] = found[TASK], found[HOOK]
    t = task.inputs
    assert (t["launchTime"], t["recurrenceType"], t["recurrenceValue"], t["desiredCapacity"]) \
        == (LAUNCH, "Cron", "0 8 * * 1-5", 3)
    assert t["scalingGroupId"] == found[GROUP][0].id
    assert (hook.inputs["lifecycleTransition"], hook.inputs["heartbeatTimeout"],
            hook.inputs["defaultResult"]) == ("SCALE_IN", 900, "CONTINUE")
    assert build(record, drain_seconds=None)[HOOK] == []


RESERVED = {
    "ri": "alicloud:ecs/reservedInstance:ReservedInstance",
    "ea": "alicloud:ecs/elasticityAssurance:ElasticityAssurance",
    "cr": "alicloud:ecs/capacityReservation:CapacityReservation",
}


def build_reserved(record, settings):
    resources = record(lambda: ReservedCapacity(
        "res", instance_type="ecs.gn8v-8x.48xlarge", zone_id="cn-hangzhou-i",
        config=ReservedSettings(**settings), conventions=Conventions()))
    return {key: [r for r in resources if r.type == t] for key, t in RESERVED.items()}


def test_reserved_instances_and_capacity_reservation(record):
    found = build_reserved(record, {"reserved_instances": {"count": 4, "scope": "Zone"},
                                    "guarantee": {"count": 2}})
    [ri], [cr] = found["ri"], found["cr"]
    assert (ri.inputs["instanceAmount"], ri.inputs["offeringType"], ri.inputs["period"],
            ri.inputs["periodUnit"], ri.inputs["scope"], ri.inputs["zoneId"]) == (
        4, "No Upfront", 1, "Year", "Zone", "cn-hangzhou-i")
    assert (cr.inputs["instanceAmount"], cr.inputs["zoneIds"], cr.inputs["endTimeType"]) == (
        2, ["cn-hangzhou-i"], "Unlimited")
    assert found["ea"] == []


def test_elasticity_assurance(record):
    found = build_reserved(record, {"guarantee": {"kind": "elasticity_assurance",
                                                  "count": 8, "period_months": 3}})
    [ea] = found["ea"]
    assert (ea.inputs["instanceAmount"], ea.inputs["period"], ea.inputs["periodUnit"],
            ea.inputs["instanceType"]) == (8, 3, "Month", "ecs.gn8v-8x.48xlarge")
    assert found["ri"] == [] and found["cr"] == []


@pytest.mark.parametrize("months, period, unit", [(9, 9, "Month"), (12, 1, "Year"),
                                                  (60, 5, "Year")])
def test_elasticity_assurance_terms_from_a_year_are_bought_in_years(record, months, period,
                                                                    unit):
    found = build_reserved(record, {"guarantee": {"kind": "elasticity_assurance", "count": 1,
                                                  "period_months": months}})
    [ea] = found["ea"]
    assert (ea.inputs["period"], ea.inputs["periodUnit"]) == (period, unit)


@pytest.mark.parametrize("months", [10, 13, 72])
def test_elasticity_assurance_terms_the_provider_refuses_are_refused(months):
    with pytest.raises(ValueError, match=rf"period_months: {months} not allowed; allowed: "
                                         r"1, 2, .*, 9, 12, 24, 36, 48, 60"):
        ReservedSettings(guarantee={"kind": "elasticity_assurance", "count": 1,
                                    "period_months": months})
