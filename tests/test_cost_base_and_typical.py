"""Cost at typical load with a committed steady base (issue 38 point 5): a scaling fleet priced
at `fleet.typical_size`, reserved instances covering a fleet's on-demand base, and a savings
plan paying for on-demand instances up to its commitment; spot for the rest."""

from __future__ import annotations

import pytest

from gpu_infra_tools.cost import estimate_plan

from .conftest import BASE_INFERENCE, merged
from .test_config_schema import problems_of

H = 730
GN7I = 9.53
"""The catalog's on-demand price of ecs.gn7i-c8g1.2xlarge (cn-hangzhou, 2024-12-31)."""
RI_NO_UPFRONT_1Y = 0.65
"""prices.yaml reserved_factor, No Upfront, 1 year."""
SPOT = 0.7
ACK_VERSION = "1.34.1-aliyun.1"
"""The version the shipped ACK stacks pin."""


def fleet(savings_plan: dict | None = None, **settings) -> dict:
    """An inference stack of gn7i (2 to 20 nodes) with fleet `settings` and a savings plan."""
    stack = merged(BASE_INFERENCE, storage={"disks": []}, fleet={
        "instance_types": ["ecs.gn7i-c8g1.2xlarge"], "min_size": 2, "max_size": 20,
        **settings})
    return stack if savings_plan is None else {**stack, "savings_plan": savings_plan}


def split(plan) -> dict:
    return estimate_plan(plan).gpu_split()


def test_a_scaling_fleet_is_priced_at_its_typical_size(plan_cluster):
    at_min = estimate_plan(plan_cluster(fleet()))
    typical = estimate_plan(plan_cluster(fleet(typical_size=12)))
    assert at_min.gpu_split()["on_demand"] == pytest.approx(2 * GN7I * H)
    assert typical.gpu_split()["on_demand"] == pytest.approx(12 * GN7I * H)
    [group] = [r for r in typical.resources if r.resource_type.endswith("ScalingGroup")]
    assert group.note.startswith("at typical size (fleet.typical_size) 12 (max 20)")
    assert typical.assumptions["scalingGroups"].startswith("fleet.typical_size")


def test_an_ack_pool_is_priced_at_its_typical_size(plan_cluster):
    cluster = {**fleet(typical_size=6), "platform": "ack",
               "ack": {"kubernetes_version": ACK_VERSION}}
    result = estimate_plan(plan_cluster(cluster, region="cn-hangzhou"))
    [pool] = [r for r in result.resources if r.resource_type.endswith("NodePool")
              and "gpu" in r.name]
    assert pool.gpu[0].count == 6 and pool.note.startswith("at typical size")


@pytest.mark.parametrize("size, message", [
    (1, "typical_size: 1 is outside min_size 2 .. max_size 20"),
    (21, "typical_size: 21 is outside min_size 2 .. max_size 20")])
def test_typical_size_stays_within_the_fleet(size, message):
    assert problems_of(fleet(typical_size=size)) == [f"gpu-infra:cluster.fleet.{message}"]


def test_reserved_instances_cover_the_on_demand_base_and_spot_takes_the_rest(plan_cluster):
    """10 nodes: a base of 4 on demand, covered by 4 reserved instances, 6 spot."""
    settings = {"typical_size": 10, "on_demand_base_capacity": 4,
                "on_demand_percentage_above_base": 0}
    bare = split(plan_cluster(fleet(**settings)))
    reserved = split(plan_cluster(fleet(**settings, reserved={
        "reserved_instances": {"count": 4}})))
    assert bare["on_demand"] == pytest.approx(4 * GN7I * H)
    assert reserved["on_demand"] == 0          # the base is no longer paid twice
    assert reserved["reserved"] == pytest.approx(4 * GN7I * RI_NO_UPFRONT_1Y * H)
    assert reserved["spot"] == bare["spot"] == pytest.approx(6 * GN7I * SPOT * H)
    assert reserved["all_on_demand"] == pytest.approx(10 * GN7I * H)


def test_a_reservation_larger_than_the_base_covers_only_the_base(plan_cluster):
    result = split(plan_cluster(fleet(typical_size=3, reserved={
        "reserved_instances": {"count": 5}})))
    assert result["on_demand"] == 0
    assert result["reserved"] == pytest.approx(5 * GN7I * RI_NO_UPFRONT_1Y * H)


def test_a_savings_plan_pays_on_demand_up_to_its_commitment(plan_cluster):
    """Commitment 10 CNY/h at 0.5 covers 20 CNY/h of list price: 20 / 9.53 instances."""
    plan = plan_cluster(fleet(typical_size=5, savings_plan={
        "hourly_commitment_cny": 10, "price_factor": 0.5, "instance_family": "gn7i"}))
    result = estimate_plan(plan)
    gpu = result.gpu_split()
    assert gpu["savings_plan"] == pytest.approx(10 * H)
    assert gpu["on_demand"] == pytest.approx((5 * GN7I - 20) * H)
    assert gpu["saving"] == pytest.approx(10 * H)
    [commitment] = [r for r in result.resources if r.name == "savings-plan"]
    assert commitment.note == "bought outside the stack; fully used"


def test_an_unused_commitment_is_still_paid_and_said(plan_cluster):
    result = estimate_plan(plan_cluster(fleet(savings_plan={
        "hourly_commitment_cny": 50, "price_factor": 0.5})))
    gpu = result.gpu_split()
    assert gpu["on_demand"] == 0 and gpu["savings_plan"] == pytest.approx(50 * H)
    [commitment] = [r for r in result.resources if r.name == "savings-plan"]
    unused = 50 - 2 * GN7I * 0.5
    assert f"{unused:,.2f} CNY/h of it is not used" in commitment.note


def test_a_savings_plan_of_another_family_covers_nothing_and_is_refused():
    assert problems_of(fleet(savings_plan={
        "hourly_commitment_cny": 5, "price_factor": 0.6, "instance_family": "gn8v"})) == [
        "gpu-infra:cluster.savings_plan.instance_family: gn8v is not a family of the fleet "
        "(gn7i): the plan would cover none of its instances; name one of them, or remove it "
        "for a universal plan"]


@pytest.mark.parametrize("plan, field", [
    ({"hourly_commitment_cny": 0, "price_factor": 0.5}, "hourly_commitment_cny"),
    ({"hourly_commitment_cny": 5, "price_factor": 1}, "price_factor"),
    ({"hourly_commitment_cny": 5}, "price_factor")])
def test_savings_plan_fields_are_checked(plan, field):
    [problem] = problems_of(fleet(savings_plan=plan))
    assert problem.startswith(f"gpu-infra:cluster.savings_plan.{field}: ")
