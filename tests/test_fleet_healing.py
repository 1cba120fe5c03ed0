"""Scaling fleets that heal and renew: schema rules and validators around refresh, warm
pool, queue thresholds and health checks (the plan-level behaviour is in test_layouts)."""

from __future__ import annotations

import pytest

from gpu_infra.knowhow import run_validators
from gpu_infra.schema import ConfigError

from .conftest import BASE_INFERENCE, BASE_RENDERING, cluster_config, merged

TYPE = ["ecs.gn7i-c8g1.2xlarge"]


def problems(cluster) -> list[str]:
    with pytest.raises(ConfigError) as error:
        cluster_config(cluster)
    return error.value.problems


def test_refresh_asked_for_where_ess_cannot_is_refused():
    cluster = merged(BASE_INFERENCE, fleet={"instance_types": TYPE, "min_size": 1,
                                            "refresh": {"enabled": True}})
    assert problems(cluster) == [
        "gpu-infra:cluster.fleet.refresh.enabled: ESS refreshes only groups with "
        "multi_az_policy PRIORITY, scale_in_mode release and min_size 1 or more; use "
        "max_instance_lifetime_days to renew other fleets"]


def test_warm_pool_stops_instances_and_is_never_refreshed(plan_cluster):
    plan = plan_cluster(merged(BASE_INFERENCE, fleet={
        "instance_types": TYPE, "min_size": 1, "multi_az_policy": "PRIORITY",
        "scale_in_mode": "recycle", "max_instance_lifetime_days": 3}))
    group = plan.one("alicloud:ess/scalingGroup:ScalingGroup").inputs
    assert (group["scalingPolicy"], group["maxInstanceLifetime"]) == ("recycle", 3 * 86400)
    assert plan.by_type("alicloud:ess/instanceRefresh:InstanceRefresh") == []


def test_a_long_lived_fleet_nothing_renews_gets_an_info():
    stack = cluster_config(merged(BASE_INFERENCE, fleet={"instance_types": TYPE,
                                                         "min_size": 2}))
    [finding] = [f for f in run_validators(stack) if f.validator == "no-rolling-refresh"]
    assert finding.path == "fleet.max_instance_lifetime_days"
    assert "multi_az_policy COST_OPTIMIZED" in finding.message
    renewed = cluster_config(merged(BASE_INFERENCE, fleet={
        "instance_types": TYPE, "min_size": 2, "max_instance_lifetime_days": 7}))
    assert not [f for f in run_validators(renewed) if f.validator == "no-rolling-refresh"]


def test_scale_in_threshold_must_stay_below_scale_out():
    cluster = merged(BASE_RENDERING, fleet={"instance_types": ["ecs.vgn7i-vws-m4.xlarge"],
                                            "queue_scaling": {"scale_out_threshold": 5,
                                                              "scale_in_threshold": 5}})
    assert problems(cluster) == [
        "gpu-infra:cluster.fleet.queue_scaling.scale_in_threshold: 5 must be below "
        "scale_out_threshold 5 (else the fleet grows and shrinks on the same backlog)"]


def test_a_render_farm_cannot_check_a_load_balancer_it_does_not_have():
    cluster = merged(BASE_RENDERING, fleet={"instance_types": ["ecs.vgn7i-vws-m4.xlarge"],
                                            "health_checks": ["ECS", "LOAD_BALANCER"]})
    assert problems(cluster) == [
        "gpu-infra:cluster.fleet.health_checks: LOAD_BALANCER needs a load balancer; a "
        "render farm has none (use ECS)"]


def test_no_missing_data_alert_without_contacts_and_on_demand_fleets_skip_spot_fallback(
        plan_cluster):
    plan = plan_cluster(merged(BASE_INFERENCE, fleet={
        "instance_types": TYPE, "queue_scaling": {"metric_name": "pending"}}))
    assert plan.by_type(
        "alicloud:cloudmonitor/serviceMetricAlarmRule:ServiceMetricAlarmRule") == []
    group = plan.one("alicloud:ess/scalingGroup:ScalingGroup").inputs
    assert "compensateWithOnDemand" not in group
    assert group["healthCheckTypes"] == ["ECS", "LOAD_BALANCER"]
