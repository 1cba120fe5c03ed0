"""Cost estimates as Infracost JSON, validated against Infracost's own published schema
(tests/infracost/infracost.schema.json), and the diff against a baseline."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import jsonschema
import pytest
import yaml

from gpu_infra_tools.cli import main
from gpu_infra_tools.cost import CostProject, estimate, infracost_document

from .conftest import BASE_TRAINING, PROJECT_DIR, write_stack
from .shipped import plan_shipped_once
from .test_cost_estimate import GN7I, GN7I_PRICE, H, instance, res
from .test_golden_plans import GOLDEN_DIR, SHIPPED

SCHEMA = json.loads((Path(__file__).parent / "infracost" / "infracost.schema.json").read_text())
VALIDATOR = jsonschema.Draft4Validator(SCHEMA)


def errors_of(document: dict) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in VALIDATOR.iter_errors(document)]


def document(after, past=None, **project) -> dict:
    return infracost_document([CostProject("s", "stacks/Pulumi.s.yaml", after, past=past,
                                           **project)], "test")


@pytest.fixture(autouse=True)
def in_project(monkeypatch):
    """In the project directory; the commands plan each stack file once (tests/shipped.py)."""
    monkeypatch.chdir(PROJECT_DIR)
    plan_shipped_once(monkeypatch)


@pytest.mark.parametrize("stack", SHIPPED)
def test_plan_json_cost_of_every_shipped_stack_is_valid_infracost(stack):
    """The recordings are what `plan --json` writes (test_golden_plans checks that)."""
    cost = json.loads((GOLDEN_DIR / f"{stack}.json").read_text())["cost"]
    assert errors_of(cost) == []
    assert cost["version"] == "0.2" and cost["projects"][0]["name"] == stack


def test_cost_json_and_comparison_are_valid_infracost(capsys):
    assert main(["cost", "training-prod", "--format", "json"]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert main(["cost", "training-dev", "--compare", "training-prod", "--format", "json"]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert errors_of(alone) == [] and errors_of(compared) == []
    datetime.strptime(alone["timeGenerated"], "%Y-%m-%dT%H:%M:%SZ")
    assert compared["pastTotalMonthlyCost"] == alone["totalMonthlyCost"]


def test_our_old_shape_is_not_infracost():
    """The validator is not lenient: the estimate's own numbers fail it."""
    assert len(errors_of({"currency": "CNY", "totalMonthlyCost": 1.0, "resources": []})) >= 10


def test_decimals_are_strings_and_quantities_both_periods():
    result = estimate([instance(spotStrategy="SpotAsPriceGo")])
    doc = document(result, cluster="")
    node = doc["projects"][0]["breakdown"]["resources"][0]
    compute, disk = node["costComponents"]
    assert compute == {"name": f"Compute (spot SpotAsPriceGo, x0.7, {GN7I})", "unit": "hour",
                       "hourlyQuantity": "1", "monthlyQuantity": str(H),
                       "price": str(Decimal(str(GN7I_PRICE)) * Decimal("0.7")),
                       "hourlyCost": "6.671", "monthlyCost": "4869.83",
                       "usageBased": False, "priceNotFound": False}
    assert disk["monthlyQuantity"] == "100" and disk["hourlyQuantity"] == "0.1369863"
    assert node["monthlyCost"] == "4969.83" and doc["totalMonthlyCost"] == "4969.83"
    assert node["metadata"]["gpu"] == [{"instanceType": GN7I, "capacity": "spot", "count": 1,
                                        "paidHourly": "6.671", "onDemandHourly": "9.53"}]


def test_unknown_price_free_and_unsupported_resources():
    result = estimate([res("alicloud:kms/key:Key", "key", {}),
                       res("alicloud:vpc/network:Network", "vpc", {}),
                       res("alicloud:foo/bar:Bar", "mystery", {}),
                       res("alicloud:nlb/loadBalancer:LoadBalancer", "nlb", {})])
    doc = document(result)
    project = doc["projects"][0]
    assert errors_of(doc) == []
    listed = {r["name"]: r for r in project["breakdown"]["resources"]}
    assert list(listed) == ["nlb", "key"]  # highest monthly cost first, unknown last
    key = listed["key"]["costComponents"][0]
    assert (key["priceNotFound"], key["price"], key["monthlyCost"]) == (True, "0", None)
    lcu = listed["nlb"]["costComponents"][1]
    assert lcu["usageBased"] and lcu["monthlyQuantity"] is None and lcu["price"] != "0"
    assert project["summary"] == {
        "totalDetectedResources": 4, "totalSupportedResources": 2,
        "totalUnsupportedResources": 1, "totalUsageBasedResources": 1,
        "totalNoPriceResources": 1,
        "unsupportedResourceCounts": {"alicloud:foo/bar:Bar": 1},
        "noPriceResourceCounts": {"alicloud:vpc/network:Network": 1}}
    assert doc["summary"] == project["summary"]


def test_without_a_baseline_past_is_empty_and_diff_is_everything():
    doc = document(estimate([instance("n0"), instance("n1")]))
    project = doc["projects"][0]
    assert project["pastBreakdown"] == {"resources": [], "totalHourlyCost": "0",
                                        "totalMonthlyCost": "0", "totalMonthlyUsageCost": None}
    assert [r["name"] for r in project["diff"]["resources"]] == ["n0", "n1"]
    assert doc["diffTotalMonthlyCost"] == doc["totalMonthlyCost"]
    assert {r["metadata"]["change"] for r in project["diff"]["resources"]} == {"added"}


def test_diff_against_another_cluster_pairs_by_name_without_the_prefix():
    before = estimate([instance("a-n0"), instance("a-n1"), instance("a-n2")])
    after = estimate([instance("b-n0", systemDiskSize=200), instance("b-n1"),
                      instance("b-n3", instanceType="ecs.gn7i-c16g1.4xlarge")])
    doc = document(after, before, cluster="b", past_cluster="a")
    assert errors_of(doc) == []
    diff = {r["name"]: r for r in doc["projects"][0]["diff"]["resources"]}
    assert {name: r["metadata"]["change"] for name, r in diff.items()} == {
        "b-n3": "added", "b-n0": "changed", "a-n2": "removed"}
    disk = diff["b-n0"]["costComponents"]
    assert [(c["name"], c["monthlyQuantity"], c["monthlyCost"]) for c in disk] == [
        ("System disk (cloud_essd PL1, 100 GiB → 200 GiB)", "100", "100")]
    assert diff["a-n2"]["monthlyCost"] == "-7056.9"  # 9.53 x 730 + 100 GiB system disk
    assert Decimal(doc["diffTotalMonthlyCost"]) == (
        Decimal(doc["totalMonthlyCost"]) - Decimal(doc["pastTotalMonthlyCost"]))


def test_changed_instance_type_shows_old_and_new_label():
    before = estimate([instance("n0")])
    after = estimate([instance("n0", instanceType="ecs.gn7e-c16g1.4xlarge")])
    diff = document(after, before)["projects"][0]["diff"]["resources"]
    compute = diff[0]["costComponents"][0]
    assert compute["name"] == f"Compute (on-demand, {GN7I} → ecs.gn7e-c16g1.4xlarge)"
    assert (compute["hourlyQuantity"], compute["price"]) == ("0", "25.21")  # 34.74 - 9.53
    assert len(diff[0]["costComponents"]) == 1  # the unchanged system disk is left out


def test_time_generated_is_utc():
    doc = infracost_document([], "test", datetime(2026, 12, 1, 9, 30, tzinfo=timezone.utc))
    assert doc["timeGenerated"] == "2026-12-01T09:30:00Z" and errors_of(doc) == []


def _git(directory: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(directory), "-c", "user.name=t", "-c", "user.email=t@t",
                    *args], check=True, capture_output=True)


@pytest.mark.slow  # a git repository and two plans
def test_compare_revision_of_a_stack_file(tmp_path: Path, capsys):
    path = write_stack(tmp_path, "rev", BASE_TRAINING)
    _git(tmp_path, "init", "-q")
    assert main(["cost", str(path), "--compare-revision", "HEAD", "--format", "json"]) == 2
    assert "--compare-revision: 'HEAD' is not a commit" in capsys.readouterr().err
    _git(tmp_path, "commit", "-q", "--allow-empty", "-m", "empty")
    assert main(["cost", str(path), "--compare-revision", "HEAD", "--format", "json"]) == 0
    new = json.loads(capsys.readouterr().out)["projects"][0]
    assert new["pastBreakdown"]["resources"] == []  # not in HEAD: a new stack
    _git(tmp_path, "add", path.name)
    _git(tmp_path, "commit", "-q", "-m", "two nodes")
    document_ = yaml.safe_load(path.read_text())
    document_["config"]["gpu-infra:cluster"]["fleet"]["nodes"] = 3
    path.write_text(yaml.safe_dump(document_))
    assert main(["cost", str(path), "--compare-revision", "HEAD", "--format", "json"]) == 0
    changed = json.loads(capsys.readouterr().out)
    assert errors_of(changed) == []
    diff = changed["projects"][0]["diff"]["resources"]
    assert sorted((r["name"], r["metadata"]["change"]) for r in diff) == [
        ("t01-gpu-node-002", "added"), ("t01-gpu-node-002-scratch", "added")]
    assert main(["cost", str(path), "--compare-revision", "HEAD"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Cost difference HEAD:Pulumi.rev.yaml -> ")
    assert "added   t01-gpu-node-002" in text
