"""The estimate of planned stacks, the budget rule, the plan output and `gpu-infra cost`."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from gpu_infra_policies.config import parse_policy_config
from gpu_infra_tools.cli import main
from gpu_infra_tools.cost import estimate_plan
from gpu_infra_tools.review import review

from .conftest import BASE_TRAINING, PROJECT_DIR, merged, write_stack
from .shipped import plan_shipped_once
from .test_config_schema import problems_of

H = 730
GN7I_PRICE = 9.53


@pytest.fixture(autouse=True)
def in_project(monkeypatch):
    """In the project directory; the commands plan each stack file once (tests/shipped.py)."""
    monkeypatch.chdir(PROJECT_DIR)
    plan_shipped_once(monkeypatch)


def training(**overrides):
    return merged(BASE_TRAINING, storage={"disks": []}, **overrides)


def test_planned_training_stack_prices_nodes_per_component(plan_cluster):
    plan = plan_cluster(training())
    result = estimate_plan(plan)
    components = result.by_component()
    nodes = [r for r in result.resources if r.resource_type == "alicloud:ecs/instance:Instance"]
    assert len(nodes) == 2
    assert result.gpu_split()["on_demand"] == pytest.approx(2 * GN7I_PRICE * H)
    gpu_block = next(name for name in components if name.startswith("compute:GpuNodes "))
    assert components[gpu_block] == pytest.approx(sum(n.monthly_cost for n in nodes))
    assert components["network:Network t01-net"] == pytest.approx((0.24 + 0.02) * H)
    assert result.total_monthly_cost == pytest.approx(sum(v or 0 for v in components.values()))


def test_planned_spot_stack_shows_the_saving(plan_cluster):
    plan = plan_cluster(merged(training(fleet={"instance_type": "ecs.gn7i-c8g1.2xlarge",
                                               "nodes": 3, "capacity": "spot",
                                               "interruptible": True}),
                               storage={"shared_fs": {"enabled": True}}))
    split = estimate_plan(plan).gpu_split()
    assert split["spot"] == pytest.approx(2 * GN7I_PRICE * 0.7 * H)
    assert split["saving"] == pytest.approx(2 * GN7I_PRICE * 0.3 * H)


def test_budget_rule_fires_over_budget_and_is_quiet_under_it(plan_cluster):
    over = review(plan_cluster(training(monthly_budget_cny=1000)))
    verdicts = [v for v in over.verdicts if v.rule == "monthly-budget"]
    total = over.cost.total_monthly_cost
    assert [(v.level, v.message) for v in verdicts] == [
        ("advisory", f"estimated monthly cost {total:,.0f} exceeds budget 1,000")]
    under = review(plan_cluster(training(monthly_budget_cny=1_000_000)))
    assert not [v for v in under.verdicts if v.rule == "monthly-budget"]


def test_budget_rule_level_from_policy_config_and_off_without_budget(plan_cluster):
    plan = plan_cluster(training(monthly_budget_cny=1000))
    settings = parse_policy_config({"monthly-budget": "mandatory"})
    assert [v.level for v in review(plan, settings).verdicts if v.rule == "monthly-budget"] == [
        "mandatory"]
    disabled = parse_policy_config({"monthly-budget": "disabled"})
    assert not [v for v in review(plan, disabled).verdicts if v.rule == "monthly-budget"]
    no_budget = review(plan_cluster(training()))
    assert not [v for v in no_budget.verdicts if v.rule == "monthly-budget"]


def test_budget_must_be_positive():
    assert problems_of(training(monthly_budget_cny=-5)) == [
        "gpu-infra:cluster.monthly_budget_cny: input should be greater than 0 (got -5)"]


def test_plan_text_markdown_and_json_carry_the_estimate(tmp_path, capsys):
    path = write_stack(tmp_path, "budget", training(monthly_budget_cny=1000))
    assert main(["plan", str(path)]) == 0
    text = capsys.readouterr().out
    assert "Cost estimate (CNY, 730 h/month" in text
    assert "compute:GpuNodes t01-gpu" in text
    assert "GPU instances per month: on-demand 13,914" in text
    assert "ADVISORY monthly-budget (medium): estimated monthly cost" in text
    assert main(["plan", str(path), "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert "**Estimated cost: " in markdown and "| `compute:GpuNodes t01-gpu` |" in markdown
    assert main(["plan", str(path), "--json", "-"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["cost"]["version"] == "0.2" and record["cost"]["currency"] == "CNY"
    assert record["costDetails"]["gpuMonthlyCost"]["onDemand"] == pytest.approx(
        2 * GN7I_PRICE * H)
    assert [p["rule"] for p in record["policy"]].count("monthly-budget") == 1


def test_cost_command_text_and_json(capsys):
    assert main(["cost", "training-prod"]) == 0
    text = capsys.readouterr().out
    assert "Total: ≥ " in text and "9 resource(s) unpriced" in text  # the registry too
    assert "alicloud:kms/key:Key llm-pretrain-kms-key: KMS key price not confirmed" in text
    assert ("alicloud:log/store:Store llm-pretrain-node-logs-bootstrap: billed by the logs the "
            "nodes write: usage-based") in text
    assert "GPU instances per month: reserved " in text
    assert main(["cost", "training-prod", "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    resources = record["projects"][0]["breakdown"]["resources"]
    key = next(r for r in resources if r["name"] == "llm-pretrain-kms-key")
    assert key["monthlyCost"] is None and key["costComponents"][0]["priceNotFound"] is True
    ri = next(r for r in resources if r["name"] == "llm-pretrain-reserved-ri")
    assert float(ri["hourlyCost"]) == pytest.approx(8 * 270.83 * 0.65, abs=1e-3)


def test_cost_command_spot_factor(capsys):
    assert main(["cost", "training-dev", "--format", "json", "--spot-price-factor", "0.5"]) == 0
    record = json.loads(capsys.readouterr().out)
    (workers,) = [r for r in record["projects"][0]["breakdown"]["resources"]
                  if r["resourceType"] == "alicloud:ess/scalingGroup:ScalingGroup"]
    slots = {slot["capacity"]: slot for slot in workers["metadata"]["gpu"]}
    assert slots["on_demand"]["count"] == 0 and slots["spot"]["count"] == 1
    assert slots["spot"]["paidHourly"] == "17.37"  # 34.74 x 0.5


def test_cost_compare_shows_the_difference(capsys):
    assert main(["cost", "training-dev", "--compare", "training-prod"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "Cost difference training-prod -> training-dev (CNY/month):"
    assert any(line.split()[:2] == ["removed", "llm-pretrain-reserved-ri"] for line in out)
    assert out[-1].startswith("Difference: -")
    assert main(["cost", "training-dev", "--compare", "training-prod", "--format", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["projects"][0]["pastBreakdown"]["resources"]
    assert Decimal(record["diffTotalMonthlyCost"]) == (
        Decimal(record["totalMonthlyCost"]) - Decimal(record["pastTotalMonthlyCost"]))


@pytest.mark.parametrize("argv", [["cost", "no-such-stack"],
                                  ["cost", "training-dev", "--compare", "no-such-stack"]])
def test_cost_missing_stack_exits_2(argv, capsys):
    assert main(argv) == 2
    assert "no-such-stack.yaml: no such stack file" in capsys.readouterr().err


@pytest.mark.parametrize(("value", "message"), [
    ("1.5", "must be above 0 and at most 1, got 1.5"), ("cheap", "not a number: 'cheap'")])
def test_cost_bad_spot_factor_exits_2(value, message, capsys):
    with pytest.raises(SystemExit) as caught:
        main(["cost", "training-dev", "--spot-price-factor", value])
    assert caught.value.code == 2
    assert f"argument --spot-price-factor: {message}" in capsys.readouterr().err


def test_cost_invalid_stack_one_line_per_problem(tmp_path, capsys):
    path = write_stack(tmp_path, "bad", training(monthly_budget_cny=0, colour="red"))
    assert main(["cost", str(path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"invalid stack: {path}"
    assert sorted(line.strip().split(":")[1] for line in err[1:]) == [
        "cluster.colour", "cluster.monthly_budget_cny"]
