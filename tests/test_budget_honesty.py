"""Budget honesty (issue 38 point 4): an unknown GPU price is never within budget, and a
reservation bought or grown beyond what the fleet can use is refused where it is made."""

from __future__ import annotations

import json

import pytest

from gpu_infra_policies.base import Context, Resource
from gpu_infra_policies.config import parse_policy_config
from gpu_infra_policies.cost import on_demand_capacity, reserved_capacity_excess
from gpu_infra_tools.cli import main
from gpu_infra_tools.review import review
from gpu_infra_tools.review.render import budget_line

from .conftest import BASE_TRAINING, PROJECT_DIR, merged, write_stack
from .shipped import plan_shipped_once

UNPRICED_TYPE = "ecs.gn9x-8x.48xlarge"
"""A declared type without a price: 8 GPUs, no price_cny_per_hour."""
DECLARED = {UNPRICED_TYPE: {"gpu_model": "NVIDIA X200", "gpu_count": 8, "gpu_memory_gib": 141,
                            "vcpu": 192, "memory_gib": 2048}}
UNPRICED = "budget-unpriced-gpus"
EXCESS = "reserved-capacity-excess"
RI = "alicloud:ecs/reservedInstance:ReservedInstance"


@pytest.fixture(autouse=True)
def in_project(monkeypatch):
    monkeypatch.chdir(PROJECT_DIR)
    plan_shipped_once(monkeypatch)


def unpriced_stack(**overrides) -> dict:
    return merged(BASE_TRAINING, storage={"disks": []}, instance_types=DECLARED,
                  fleet={"instance_type": UNPRICED_TYPE, "nodes": 3}, **overrides)


def verdicts(result, rule: str) -> list[tuple[str, str | None]]:
    return [(v.level, v.resource_name) for v in result.verdicts if v.rule == rule]


def test_unpriced_gpus_fail_the_budget_and_say_how_many(plan_cluster):
    result = review(plan_cluster(unpriced_stack(monthly_budget_cny=1_000_000)))
    assert result.cost.total_monthly_cost < 1_000_000   # the old verdict: within budget
    assert verdicts(result, UNPRICED) == [("mandatory", "t01-gpu-node-000"),
                                          ("mandatory", "t01-gpu-node-001"),
                                          ("mandatory", "t01-gpu-node-002")]
    line = budget_line(result)
    assert line is not None and "within budget" not in line
    assert line.startswith("**Budget: ≥ ")
    assert ("not judged (mandatory): no price for 1 on-demand instance(s) (8 GPUs) of "
            f"{UNPRICED_TYPE} in t01-gpu-node-000") in line
    assert result.blocked
    details = result.cost.details()
    assert [(c["instances"], c["gpus"]) for c in details["unpricedCapacity"]] == [(1, 8)] * 3
    assert "without a price: 1 on-demand instance(s) (8 GPUs)" in details["summary"]


def test_unpriced_gpus_can_be_accepted_as_a_warning_or_ignored_without_a_budget(plan_cluster):
    plan = plan_cluster(unpriced_stack(monthly_budget_cny=1_000_000))
    warned = review(plan, parse_policy_config({UNPRICED: "advisory"}))
    assert {level for level, _ in verdicts(warned, UNPRICED)} == {"advisory"}
    assert not warned.blocked
    assert "not judged (advisory)" in (budget_line(warned) or "")
    no_budget = review(plan_cluster(unpriced_stack()))
    assert verdicts(no_budget, UNPRICED) == [] and budget_line(no_budget) is None
    assert "without a price: 1 on-demand instance(s) (8 GPUs)" in no_budget.cost.summary()


def test_a_priced_fleet_is_judged_within_budget_for_the_priced_part(plan_cluster):
    result = review(plan_cluster(merged(BASE_TRAINING, monthly_budget_cny=1_000_000)))
    assert verdicts(result, UNPRICED) == []
    line = budget_line(result) or ""
    assert "within budget" in line and "not judged" not in line
    assert ("(" in line) == bool(result.cost.unpriced)   # names what stays unpriced


def test_plan_exits_1_on_unpriced_gpus_and_the_comment_says_so(tmp_path, capsys):
    path = write_stack(tmp_path, "unpriced", unpriced_stack(monthly_budget_cny=50_000))
    assert main(["plan", str(path), "--format", "markdown"]) == 1
    comment = capsys.readouterr().out
    assert "not judged (mandatory): no price for 1 on-demand instance(s) (8 GPUs)" in comment
    assert f"| mandatory | `{UNPRICED}` | high | `t01-gpu-node-000` |" in comment


# --- reservations -----------------------------------------------------------------------

def reserving(count: int, nodes: int = 8, environment: str = "prod") -> dict:
    return merged(BASE_TRAINING, environment=environment, storage={"disks": []},
                  fleet={"instance_type": "ecs.gn7i-c8g1.2xlarge", "nodes": nodes,
                         "reserved": {"reserved_instances": {"count": count}}})


@pytest.mark.parametrize("environment", ["dev", "prod"])
def test_a_thousand_reserved_for_eight_nodes_fails_the_plan(environment, tmp_path, capsys):
    path = write_stack(tmp_path, "many", reserving(1000, environment=environment))
    assert main(["plan", str(path)]) == 1
    out = capsys.readouterr().out
    [line] = [line for line in out.splitlines() if EXCESS in line]
    assert line.startswith("    MANDATORY reserved-capacity-excess (high): " + RI)
    assert ("instanceAmount 1000 of ecs.gn7i-c8g1.2xlarge, but the planned fleets run at most "
            "8 of it that are not spot: this plan creates it, and the 992 idle") in line


def test_the_rule_level_is_configurable(plan_cluster):
    result = review(plan_cluster(reserving(20)), parse_policy_config({EXCESS: "advisory"}))
    assert verdicts(result, EXCESS) == [("advisory", "t01-reserved-ri")]


def write_base(tmp_path, cluster: dict, capsys) -> str:
    """The `plan --json` record of `cluster`, as `--against` reads it."""
    (tmp_path / "base").mkdir()
    path = write_stack(tmp_path / "base", "train", cluster)
    main(["plan", str(path), "--json", str(tmp_path / "base.json")])
    capsys.readouterr()
    return str(tmp_path / "base.json")


def test_a_fleet_shrunk_under_an_existing_reservation_only_warns(tmp_path, capsys):
    """(In dev: in prod, deleting the 4 nodes is the change report's own ERROR.)"""
    base = write_base(tmp_path, reserving(8, nodes=8, environment="dev"), capsys)
    path = write_stack(tmp_path, "train", reserving(8, nodes=4, environment="dev"))
    assert main(["plan", str(path), "--against", base]) == 0
    out = capsys.readouterr().out
    assert EXCESS not in out
    assert "WARNING reserved-capacity-unused" in out
    # the same file planned with no base buys the reservation now
    assert main(["plan", str(path)]) == 1
    assert EXCESS in capsys.readouterr().out


def test_a_reservation_grown_beyond_the_fleet_is_refused(tmp_path, capsys):
    base = write_base(tmp_path, reserving(4, nodes=8), capsys)
    path = write_stack(tmp_path, "train", reserving(10, nodes=8))
    main(["plan", str(path), "--against", base])
    [line] = [line for line in capsys.readouterr().out.splitlines() if EXCESS in line]
    assert "MANDATORY" in line and "this plan grows it from 4" in line


def test_on_demand_capacity_counts_what_is_not_spot():
    group = Resource("alicloud:ess/scalingGroup:ScalingGroup",
                     {"maxSize": 10, "onDemandBaseCapacity": 2,
                      "onDemandPercentageAboveBaseCapacity": 25}, "g", "urn:g", id="sg-1")
    config = Resource("alicloud:ess/scalingConfiguration:ScalingConfiguration",
                      {"scalingGroupId": "sg-1", "instanceTypes": ["ecs.a.x", "ecs.b.x"],
                       "spotStrategy": "SpotAsPriceGo"}, "c", "urn:c")
    pool = Resource("alicloud:cs/nodePool:NodePool",
                    {"instanceTypes": ["ecs.a.x"], "scalingConfig": {"enable": True,
                                                                    "maxSize": 6}},
                    "p", "urn:p")
    fixed = Resource("alicloud:cs/nodePool:NodePool",
                     {"instanceTypes": ["ecs.b.x"], "desiredSize": "3"}, "q", "urn:q")
    spot = Resource("alicloud:ecs/instance:Instance",
                    {"instanceType": "ecs.a.x", "spotStrategy": "SpotAsPriceGo"}, "s", "urn:s")
    on_demand = Resource("alicloud:ecs/instance:Instance", {"instanceType": "ecs.c.x"}, "o",
                         "urn:o")
    usable = on_demand_capacity([group, config, pool, fixed, spot, on_demand])
    # the group: base 2 + 25% of the other 8 = 4, counted for each of its types
    assert dict(usable) == {"ecs.a.x": 4 + 6 + 0, "ecs.b.x": 4 + 3, "ecs.c.x": 1}


def test_the_rule_says_nothing_where_the_base_is_unknown():
    reservation = Resource(RI, {"instanceType": "ecs.a.x", "instanceAmount": 5}, "ri", "urn:ri")
    assert list(reserved_capacity_excess([reservation], {}, Context())) == []
    assert [m for _, m in reserved_capacity_excess(
        [reservation], {}, Context(reservations_before={}))][0].startswith(
        "instanceAmount 5 of ecs.a.x, but the planned fleets run at most 0")
    assert list(reserved_capacity_excess(
        [reservation], {}, Context(reservations_before={"ri": 5}))) == []


def test_json_record_lists_unpriced_capacity(tmp_path, capsys):
    path = write_stack(tmp_path, "unpriced", unpriced_stack())
    main(["plan", str(path), "--json", "-"])
    record = json.loads(capsys.readouterr().out)
    assert record["costDetails"]["unpricedCapacity"][0] == {
        "resource": "t01-gpu-node-000", "instanceType": UNPRICED_TYPE,
        "capacity": "on_demand", "instances": 1, "gpus": 8}
