"""Every cloud call in the node code has its row in the permission table
(gpu_infra_facts.node_apis), and the node role's policies of the shipped stacks grant each
row's actions, the dependent ones (KMS behind encrypted parameters) included."""

from __future__ import annotations

import ast
import json
import re
from importlib import resources
from pathlib import Path

import pytest

from gpu_infra_facts.node_apis import NODE_APIS, allow_statements, node_api

from .fake_node_cloud import allowed
from .shipped import shipped_plan

STEPS = resources.files("gpu_infra.blocks.bootstrap") / "steps"
CALLERS = {"call": 2, "rest": 1}
"""The node client's functions (gpu-infra-api): name -> the argument that names the
operation (the first names the service)."""


def literals(node: ast.expr) -> list[str]:
    """The strings an argument can be: a literal, or either branch of `a if c else b`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return literals(node.body) + literals(node.orelse)
    raise AssertionError(f"line {node.lineno}: a cloud call whose operation is not a literal")


def node_calls() -> set[tuple[str, str]]:
    """(service, operation) of every call through the node client in the node's Python."""
    found: set[tuple[str, str]] = set()
    for source in STEPS.iterdir():
        if not source.is_file():  # a __pycache__ left by a test that imported a step
            continue
        text = source.read_text(encoding="utf-8")
        if not (source.name.endswith(".py") or text.startswith("#!/usr/bin/env python3")):
            continue
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name in CALLERS and len(node.args) > CALLERS[name]:
                found |= {(service, operation) for service in literals(node.args[0])
                          for operation in literals(node.args[CALLERS[name]])}
    return found


def test_every_call_in_the_node_code_has_its_row():
    calls = node_calls()
    assert {("oos", "GetSecretParameter"), ("ecs", "TagResources"),
            ("cms", "PutCustomMetric")} <= calls  # the scan finds calls at all
    for service, operation in sorted(calls):
        node_api(service, operation)  # KeyError names a missing row


def test_reading_an_encrypted_parameter_grants_kms_get_secret_value():
    """OOS GetSecretParameter's reference asks for KMS GetSecretValue (case 1: without it
    every training node ended unhealthy at cluster_ssh)."""
    actions = [grant.action for grant in node_api("oos", "GetSecretParameter").grants]
    assert actions == ["oos:GetSecretParameter", "kms:GetSecretValue"]


def test_each_row_is_one_operation():
    keys = [(row.service, row.operation) for row in NODE_APIS]
    assert len(keys) == len(set(keys))
    assert all(row.grants and all(g.action.count(":") == 1 for g in row.grants)
               for row in NODE_APIS)


def node_role_policies(stack: str) -> list[str]:
    """The policy documents attached to the node role of a shipped stack."""
    plan = shipped_plan(stack)
    [role] = [r.inputs["roleName"] for r in plan.by_type("alicloud:ram/role:Role")
              if "ecs.aliyuncs.com" in r.inputs["assumeRolePolicyDocument"]]
    attached = {a.inputs["policyName"] for a in plan.by_type(
        "alicloud:ram/rolePolicyAttachment:RolePolicyAttachment")
        if a.inputs["roleName"] == role}
    return [p.inputs["policyDocument"] for p in plan.by_type("alicloud:ram/policy:Policy")
            if p.inputs["policyName"] in attached]


def granted_actions(documents: list[str]) -> set[str]:
    return {action for document in documents for statement in json.loads(document)["Statement"]
            for action in statement["Action"]}


@pytest.mark.slow  # plans shipped stacks
@pytest.mark.parametrize("stack,calls", [
    ("training-prod", [("ecs", "TagResources"), ("ecs", "DescribeInstances"),
                       ("cms", "PutCustomEvent"), ("oos", "GetParameter"),
                       ("oos", "GetSecretParameter"), ("cms", "PutCustomMetric"),
                       ("cms", "DescribeMonitorGroups"), ("oss", "GetObject")]),
    ("inference-prod", [("ecs", "TagResources"), ("ecs", "DescribeInstances"),
                        ("cms", "PutCustomEvent"), ("ess", "CompleteLifecycleAction"),
                        ("ess", "SetInstanceHealth"), ("oss", "GetObject")])])
def test_the_shipped_node_roles_grant_every_action_of_the_rows_their_nodes_call(stack, calls):
    actions = granted_actions(node_role_policies(stack))
    for service, operation in calls:
        assert {grant.action for grant in node_api(service, operation).grants} <= actions, \
            (stack, operation)


def test_statements_fill_every_name_and_merge_grants_on_the_same_resources():
    statements = allow_statements("oos", ["GetSecretParameter"], region="cn-beijing",
                                  account="1", names=["a", "b"])
    assert statements == [
        {"Effect": "Allow", "Action": ["oos:GetSecretParameter"],
         "Resource": ["acs:oos:cn-beijing:1:secretparameter/a",
                      "acs:oos:cn-beijing:1:secretparameter/b"]},
        {"Effect": "Allow", "Action": ["kms:GetSecretValue"],
         "Resource": ["acs:kms:cn-beijing:1:secret/*"]}]
    assert allowed(json.dumps({"Statement": statements}), "kms:GetSecretValue",
                   "acs:kms:cn-beijing:1:secret/oos-a", {})


def test_the_documentation_lists_every_row():
    """docs/operations/nodes-over-time.md shows the table the policies come from, row by row."""
    text = (Path(__file__).parent.parent / "docs/operations/nodes-over-time.md").read_text()
    listed = re.findall(r"^\| ([a-z]+) \| (\w+) \| ([a-z]+:[a-zA-Z:, ]+) \|", text, re.M)
    assert {(service, operation, tuple(actions.split(", ")))
            for service, operation, actions in listed} == {
        (row.service, row.operation, tuple(g.action for g in row.grants)) for row in NODE_APIS}
