"""The fleet schema: defaults and one line per problem with the field path."""

from __future__ import annotations

import pytest

from gpu_infra.schema import ConfigError

from .conftest import BASE_INFERENCE, BASE_TRAINING, cluster_config, merged, utc_in

P = "gpu-infra:cluster.fleet"
INFERENCE = BASE_INFERENCE


def problems(cluster) -> list[str]:
    with pytest.raises(ConfigError) as error:
        cluster_config(cluster)
    return error.value.problems


def test_training_defaults():
    fleet = cluster_config(BASE_TRAINING).fleet
    assert (fleet.capacity, fleet.erdma, fleet.placement, fleet.interruptible) == (
        "on_demand", "auto", "auto", False)
    assert (fleet.system_disk_gib, fleet.system_disk_performance_level, fleet.image.id) == (
        200, "PL1", None)


def test_scaling_defaults():
    fleet = cluster_config(INFERENCE).fleet
    assert (fleet.min_size, fleet.max_size, fleet.multi_az_policy, fleet.uses_spot) == (
        0, 4, "COST_OPTIMIZED", False)
    assert (fleet.drain_seconds, fleet.interruptible, fleet.spot_instance_pools) == (
        600, True, 2)


def test_training_capacity_errors():
    cluster = merged(BASE_TRAINING, fleet={"instance_type": "ecs.gn7i-c8g1.2xlarge",
                                           "spot_strategy": "SpotWithPriceLimit",
                                           "prepaid_period": 10})
    assert problems(cluster) == [
        f"{P}.spot_price_limit: required with spot_strategy SpotWithPriceLimit",
        f"{P}.prepaid_period: 10 not allowed; allowed: 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 24, 36, "
        "48, 60"]
    cluster = merged(BASE_TRAINING, fleet={"instance_type": "ecs.gn7i-c8g1.2xlarge",
                                           "spot_price_limit": 2.5})
    assert problems(cluster) == [f"{P}.spot_price_limit: only used with spot capacity and "
                                 "spot_strategy SpotWithPriceLimit"]


def test_scaling_fleet_errors():
    cluster = merged(INFERENCE, fleet={
        "instance_types": ["ecs.gn7i-c8g1.2xlarge", "ecs.gn7i-c8g1.2xlarge"],
        "min_size": 3, "max_size": 2, "desired_size": 5, "multi_az_policy": "BALANCE",
        "on_demand_percentage_above_base": 50, "spot_strategy": "SpotWithPriceLimit",
        "spot_price_limit": 1.234})
    assert problems(cluster) == [
        f"{P}.min_size: 3 is above max_size 2",
        f"{P}.desired_size: 5 is outside min_size 3 .. max_size 2",
        f"{P}.multi_az_policy: a spot mix (on_demand_percentage_above_base below 100) needs "
        "COST_OPTIMIZED",
        f"{P}.instance_types: each type may be listed once",
        f"{P}.spot_price_limit: at most 2 decimals for scaling fleets"]


def test_schedule_and_queue_errors():
    cluster = merged(INFERENCE, fleet={
        "instance_types": ["ecs.gn7i-c8g1.2xlarge"],
        "schedules": [{"name": "up", "launch_time": utc_in(10),
                       "recurrence_type": "Daily"}],
        "queue_scaling": {"cloud_monitor_group_id": "abc"}, "drain_seconds": 10})
    assert sorted(problems(cluster)) == sorted([
        f"{P}.schedules[0].recurrence_type: recurrence_type, recurrence_value and "
        "recurrence_end_time go together",
        f"{P}.schedules[0].desired_size: set at least one of min_size, max_size, desired_size",
        f"{P}.queue_scaling.cloud_monitor_group_id: input should be a valid integer (got 'abc')",
        f"{P}.drain_seconds: input should be greater than or equal to 30 (got 10)"])


def test_unknown_fleet_key_is_rejected():
    cluster = merged(BASE_TRAINING, fleet={"instance_type": "ecs.gn7i-c8g1.2xlarge",
                                           "enable_erdma": True})
    assert problems(cluster)[0].startswith(f"{P}.enable_erdma: unknown key; allowed: ")
