"""The environment profile (schema.environment) is the one place that decides by environment:
giving an environment another profile changes the plan, the validators and the policy
verdicts exactly as if the stack were in the environment that profile came from, and no
source compares an environment's name."""

from __future__ import annotations

import ast
import base64
import json
import typing
from pathlib import Path

import pytest
import yaml

from gpu_infra.knowhow import run_validators
from gpu_infra.schema import ConfigError, parse_cluster_config
from gpu_infra.schema.environment import (
    PRODUCTION,
    PROFILES,
    RELAXED,
    Environment,
    policy_demands,
)
from gpu_infra_facts import types as t
from gpu_infra_policies.base import Resource
from gpu_infra_tools.plan.engine import run_plan
from gpu_infra_tools.review import review

from .bootstrap_sandbox import script_of
from .conftest import BASE_TRAINING, PROJECT_DIR, STACKS_DIR, merged
from .rule_helpers import messages
from .sources import nodes

PROFILE_MODULE = PROJECT_DIR / "components" / "gpu_infra" / "schema" / "environment.py"
SOURCES = [*sorted((PROJECT_DIR / "components" / "gpu_infra").rglob("*.py")),
           *sorted((PROJECT_DIR / "components" / "gpu_infra_policies").rglob("*.py"))]


def test_every_environment_has_a_profile():
    assert set(PROFILES) == set(typing.get_args(Environment))


def _name_constants(path: Path) -> list[str]:
    """Environment names written as string values in `path` (docstrings aside)."""
    docstrings = {id(node.body[0].value) for node in nodes(path)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)}
    return [f"{path.relative_to(PROJECT_DIR)}:{node.lineno} {node.value!r}"
            for node in nodes(path)
            if isinstance(node, ast.Constant) and node.value in PROFILES
            and id(node) not in docstrings]


def test_no_source_but_the_profile_names_an_environment():
    """A decision such as `environment == "prod"` anywhere else bypasses the profile."""
    found = [hit for path in SOURCES if path != PROFILE_MODULE
             for hit in _name_constants(path)]
    assert found == []
    assert _name_constants(PROFILE_MODULE)  # the scan sees the names where they are


def _record(path: Path) -> str:
    """The plan record (resources, findings, verdicts, cost) of the stack file at `path`,
    with its environment's name spelt `prod` (also inside the base64 configuration command)
    and without the file's path."""
    plan = run_plan(path)
    for resource in plan.resources:  # the configuration command names the job tools' bucket
        if resource.type == t.ECS_COMMAND:
            resource.inputs["commandContent"] = base64.b64decode(
                resource.inputs["commandContent"]).decode()
        if isinstance(resource.inputs.get("userData"), str):  # so does the packed user data
            resource.inputs["userData"] = script_of(resource.inputs["userData"])
    record = review(plan).to_json()
    record.pop("cost")
    return json.dumps(record, sort_keys=True, default=str).replace("staging", "prod")


def _variant(tmp_path: Path, stack: str, environment: str) -> Path:
    """The shipped stack in `environment`, with a kept disk (snapshots and protection)."""
    document = yaml.safe_load((STACKS_DIR / f"Pulumi.{stack}.yaml").read_text())
    cluster = document["config"]["gpu-infra:cluster"]
    cluster["environment"] = environment
    cluster["storage"]["disks"] = [{"name": "scratch", "size_gib": 500},
                                   {"name": "keep", "size_gib": 200, "keep": True}]
    folder = tmp_path / environment
    folder.mkdir()
    path = folder / f"Pulumi.{stack}.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


@pytest.mark.slow  # full plans of the prod stacks, twice each
@pytest.mark.parametrize("stack", ["training-prod", "inference-prod"])
def test_another_profile_plans_like_the_environment_it_came_from(stack, tmp_path,
                                                                 monkeypatch):
    """staging given prod's profile plans (resources, validators, verdicts) exactly as
    prod does; prod given staging's plans as staging does."""
    prod, staging = _variant(tmp_path, stack, "prod"), _variant(tmp_path, stack, "staging")
    as_prod, as_staging = _record(prod), _record(staging)
    assert as_prod != as_staging
    with monkeypatch.context() as patch:
        patch.setitem(PROFILES, "staging", PRODUCTION)
        assert _record(staging) == as_prod
    with monkeypatch.context() as patch:
        patch.setitem(PROFILES, "prod", RELAXED)
        assert _record(prod) == as_staging


def test_the_profile_decides_what_the_schema_refuses_and_the_validators_find(monkeypatch):
    open_stack = merged(BASE_TRAINING, environment="staging",
                        security={"admin_cidrs": ["0.0.0.0/0"], "kms_encryption": False})
    config = {"alicloud:region": "cn-hangzhou", "gpu-infra:cluster": open_stack}
    names = {finding.validator for finding in run_validators(parse_cluster_config(config))}
    assert "world-open-cidrs" in names and "prod-without-kms" not in names
    monkeypatch.setitem(PROFILES, "staging", PRODUCTION)
    with pytest.raises(ConfigError) as refused:
        parse_cluster_config(config)
    assert refused.value.problems == [
        "gpu-infra:cluster.security.admin_cidrs: 0.0.0.0/0 covers all public IPv4 space: "
        "not allowed in staging; list the CIDRs that need access"]
    closed = merged(open_stack, security={"admin_cidrs": ["10.0.0.0/8"],
                                          "kms_encryption": False})
    found = run_validators(parse_cluster_config({**config, "gpu-infra:cluster": closed}))
    assert [f.validator for f in found if f.level.value == "ERROR"] == ["prod-without-kms"]


def test_an_unknown_environment_gets_prods_demands():
    """A resource tagged with a name no profile has (the schema refuses one in a stack,
    but any resource may carry the tag) is judged as strictly as prod."""
    assert policy_demands("production") == PRODUCTION.demands
    bucket = Resource(t.BUCKET, {"tags": {"Environment": "production"}}, "b", "urn:b")
    assert messages("prod-data-protected", bucket) == [
        "production data resource is not protected (ResourceOptions(protect=True))"]
    relaxed = Resource(t.BUCKET, {"tags": {"Environment": "staging"}}, "b", "urn:b")
    assert messages("prod-data-protected", relaxed) == []
