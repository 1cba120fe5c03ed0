"""`gpu-infra plan --sarif FILE`: a SARIF 2.1.0 log (valid against the OASIS schema vendored
in tests/data/sarif/) of the validator findings, policy verdicts and guard rails, each at
its line of the stack file."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from gpu_infra_tools.cli import main
from gpu_infra_tools.review.sarif import field_line

from .conftest import BASE_TRAINING, PROJECT_DIR, merged, write_stack
from .shipped import plan_shipped_once

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif" /
                     "sarif-schema-2.1.0.json").read_text())


@pytest.fixture(autouse=True)
def plans_once(monkeypatch):
    plan_shipped_once(monkeypatch)


def sarif_of(stack: Path, tmp_path: Path, *args: str) -> tuple[int, dict]:
    out = tmp_path / "plan.sarif"
    code = main(["plan", str(stack), "--sarif", str(out), *args])
    return code, json.loads(out.read_text())


def test_findings_and_verdicts_are_valid_sarif_at_their_lines(tmp_path, capsys):
    cluster = merged(BASE_TRAINING, security={"admin_cidrs": ["0.0.0.0/0"]},
                     monthly_budget_cny=1)
    stack = write_stack(tmp_path, "sarif", cluster, "cn-hangzhou")
    code, log = sarif_of(stack, tmp_path, "--policy-config",
                         str(PROJECT_DIR / "policies" / "policy-config.example.json"))
    jsonschema.validate(log, SCHEMA)
    results = log["runs"][0]["results"]
    ids = {result["ruleId"] for result in results}
    assert {"policy/monthly-budget", "policy/no-world-ingress"} <= ids
    budget = next(r for r in results if r["ruleId"] == "policy/monthly-budget")
    assert budget["level"] == "error" and code == 1
    rules = {rule["id"]: rule for rule in log["runs"][0]["tool"]["driver"]["rules"]}
    assert set(rules) == ids and rules["policy/no-world-ingress"]["help"]["text"]
    uri = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert Path(uri).name == stack.name


def test_a_validator_finding_points_at_its_field(tmp_path):
    stack = write_stack(tmp_path, "sarif-finding", BASE_TRAINING, "cn-hangzhou")
    _, log = sarif_of(stack, tmp_path)
    jsonschema.validate(log, SCHEMA)
    findings = [r for r in log["runs"][0]["results"] if r["ruleId"].startswith("validator/")]
    assert findings, "two nodes of a family without NVLink or eRDMA get a finding"
    text = stack.read_text().splitlines()
    for result in findings:
        line = result["locations"][0]["physicalLocation"]["region"]["startLine"]
        field = result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]
        assert text[line - 1].strip().startswith(field.split(".")[-1].split("[")[0] + ":")


def test_field_line_follows_the_path_by_indentation():
    text = yaml.safe_dump({"config": {"gpu-infra:cluster": {
        "network": {"zones": ["a"]}, "fleet": {"nodes": 2, "zones": 1}}}}, sort_keys=False)
    lines = text.splitlines()
    assert lines[field_line(text, "fleet.zones") - 1].strip() == "zones: 1"
    assert field_line(text, "missing.key") == 1


@pytest.mark.parametrize("bad", ["/nonexistent-dir/plan.sarif"])
def test_an_unwritable_sarif_file_is_bad_input(bad, capsys):
    stack = PROJECT_DIR / "stacks" / "Pulumi.training-dev.yaml"
    with pytest.raises(SystemExit) as refused:  # while parsing: no plan is made
        main(["plan", str(stack), "--sarif", bad])
    assert refused.value.code == 2
    assert "argument --sarif: /nonexistent-dir/plan.sarif: the directory" in \
        capsys.readouterr().err
