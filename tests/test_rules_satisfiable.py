"""Every mandatory policy rule can be satisfied from the stack file (issue 39 point 4): for each
one, either the blocks always satisfy it (no stack of the matrix below violates it, in any
environment), or a stack setting does (the stack without it violates the rule, with it does
not), or the schema refuses the combination that would violate it, naming the field. A new
mandatory rule with no entry in HOW fails the first test."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_infra.schema import ConfigError
from gpu_infra_policies.rules import RULES
from gpu_infra_tools.plan.engine import run_plan
from gpu_infra_tools.review import review

from .conftest import BASE_INFERENCE, BASE_TRAINING, STACKS_DIR, merged, write_stack
from .test_update_semantics import OPTIONAL_FEATURES

pytestmark = pytest.mark.slow


Stack = tuple[dict[str, Any], str]
"""A cluster section and its region."""


def shipped_config(stack: str) -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load(
        (STACKS_DIR / f"Pulumi.{stack}.yaml").read_text())["config"]
    return config


def shipped_cluster(stack: str) -> dict[str, Any]:
    cluster: dict[str, Any] = shipped_config(stack)["gpu-infra:cluster"]
    return cluster


def region(stack: str) -> str:
    name: str = shipped_config(stack)["alicloud:region"]
    return name


def in_environment(cluster: dict[str, Any], environment: str) -> dict[str, Any]:
    """`cluster` in `environment`, a GRID package moved into that environment's datasets
    bucket (bucket names hold the environment; the nodes read only the stack's own)."""
    moved = merged(cluster, environment=environment)
    driver = moved["fleet"].get("driver", {})
    if "grid_package" in driver:
        key = driver["grid_package"].split("/", 3)[3]
        driver["grid_package"] = f"oss://{moved['name']}-{environment}-datasets/{key}"
    return moved


def hangzhou(cluster: dict[str, Any]) -> Stack:
    return cluster, "cn-hangzhou"


def ack_serving(environment: str, internet: bool) -> dict[str, Any]:
    cluster = shipped_cluster("inference-ack")
    return merged(cluster, environment=environment,
                  serving={**cluster["serving"], "internet_facing": internet})


def ack_edit(stack: str, **edits: Any) -> Stack:
    """Shipped ACK stack `stack` with `edits` in its `ack` section, in its region."""
    cluster = shipped_cluster(stack)
    return merged(cluster, ack={**cluster["ack"], **edits}), region(stack)


INTERNET_TLS = {"kind": "alb", "internet_facing": True,
                "tls": {"certificate_id": "12345678-cn-hangzhou"}}
MATRIX: dict[str, Stack] = {
    **{f"{name}-{env}": hangzhou(in_environment(cluster, env))
       for name, cluster in OPTIONAL_FEATURES.items() for env in ("dev", "prod")
       if not (name == "training-cpfs" and env == "prod")},
    **{f"{stack}-as-shipped": (shipped_cluster(stack), region(stack)) for stack in (
        "training-dev", "training-prod", "inference-prod", "rendering-batch", "training-ack",
        "inference-ack")},
    **{f"ack-serving-{env}-{'internet' if internet else 'intranet'}": (
        ack_serving(env, internet), region("inference-ack"))
       for env in ("dev", "prod") for internet in (False, True)},
    "inference-internet-alb-prod": hangzhou(merged(BASE_INFERENCE, environment="prod",
                                                   load_balancer=INTERNET_TLS)),
    "training-flow-logs-prod": hangzhou(merged(
        BASE_TRAINING, environment="prod",
        network={**BASE_TRAINING["network"], "flow_logs": True})),
}
"""Stacks exercising every layout, platform, optional feature and environment."""

SETTINGS: dict[str, tuple[Stack, Stack]] = {
    "world-open clients": (
        hangzhou(merged(BASE_INFERENCE, security={**BASE_INFERENCE["security"],
                                                  "client_cidrs": ["0.0.0.0/0"]})),
        hangzhou(merged(BASE_INFERENCE, security={**BASE_INFERENCE["security"],
                                                  "client_cidrs": ["10.100.0.0/16"]}))),
    "internet listener without TLS": (
        hangzhou(merged(BASE_INFERENCE, load_balancer={"kind": "alb",
                                                       "internet_facing": True})),
        hangzhou(merged(BASE_INFERENCE, load_balancer=INTERNET_TLS))),
    "public ACK API in dev": (ack_edit("inference-ack", public_api=True),
                              ack_edit("inference-ack")),
}
"""(stack violating a rule, the same stack with the setting that satisfies it)."""

REFUSALS: dict[str, tuple[Stack, str]] = {
    "ALB without access logs in prod": (
        hangzhou(merged(BASE_INFERENCE, environment="prod",
                        load_balancer={"kind": "alb", "access_logs": False})),
        "load_balancer.access_logs"),
    "ALB access logs without a log project": (
        hangzhou(merged(BASE_INFERENCE, load_balancer={"kind": "alb", "access_logs": True},
                        logs={"enabled": False})), "load_balancer.access_logs"),
    "CPFS where the stack encrypts": (
        hangzhou(merged(OPTIONAL_FEATURES["training-cpfs"], environment="prod")),
        "storage.shared_fs.kind"),
    "world-open clients in prod": (
        hangzhou(merged(BASE_INFERENCE, environment="prod", security={
            **BASE_INFERENCE["security"], "client_cidrs": ["0.0.0.0/1", "128.0.0.0/1"]})),
        "security.client_cidrs"),
    "public ACK API in prod": (ack_edit("training-ack", public_api=True), "ack.public_api"),
    "world-open ACK serving clients in prod": (
        (merged(ack_serving("prod", True), security={
            **shipped_cluster("inference-ack")["security"], "client_cidrs": ["0.0.0.0/0"]}),
         region("inference-ack")), "security.client_cidrs"),
    "flow logs without a log project": (
        hangzhou(merged(BASE_TRAINING, network={**BASE_TRAINING["network"], "flow_logs": True},
                        logs={"enabled": False})), "network.flow_logs"),
}
"""(stack the schema refuses, the field path its message names)."""

BLOCKS = ("blocks",)
HOW: dict[str, tuple[str, ...]] = {
    "no-world-ingress": ("setting", "world-open clients", "refused",
                         "world-open clients in prod", "refused",
                         "world-open ACK serving clients in prod"),
    "nas-no-world-access": BLOCKS, "no-foreign-network-peers": BLOCKS,
    "fc-triggers-authenticated": BLOCKS, "databases-in-vpc": BLOCKS,
    "no-public-ip-on-nodes": BLOCKS, "no-eip-on-nodes": BLOCKS,
    "ack-private-api-endpoint": ("setting", "public ACK API in dev", "refused",
                                 "public ACK API in prod"),
    "tls-on-public-listeners": ("setting", "internet listener without TLS"),
    "tls-modern-policies": BLOCKS, "vpn-strong-ciphers": BLOCKS, "tls-to-databases": BLOCKS,
    "no-plain-http-downloads": BLOCKS, "policy-documents-readable": BLOCKS,
    "no-admin-policies": BLOCKS, "ram-no-privilege-escalation": BLOCKS,
    "ram-trust-policy": BLOCKS, "console-mfa": BLOCKS, "ram-password-policy": BLOCKS,
    "k8s-rbac-least-privilege": BLOCKS, "disks-encrypted": BLOCKS,
    "oss-bucket-private": BLOCKS, "oss-bucket-encrypted": BLOCKS,
    "oss-public-access-blocked": BLOCKS,
    "nas-encrypted": ("blocks", "refused", "CPFS where the stack encrypts"),
    "kms-key-rotation": BLOCKS, "prod-customer-keys": BLOCKS,
    "no-foreign-data-sharing": BLOCKS, "no-anonymous-resource-policies": BLOCKS,
    "no-plaintext-secrets": BLOCKS, "prod-bucket-logging": BLOCKS,
    "actiontrail-complete": BLOCKS, "log-audit-complete": BLOCKS,
    "prod-log-retention": BLOCKS,
    "prod-access-logs": ("blocks", "refused", "ALB without access logs in prod", "refused",
                         "ALB access logs without a log project"),
    # judged against a base only (the change report; these plans have none): a stack
    # satisfies it with fleet.reserved counts within its on-demand nodes, which the
    # validator reserved-capacity-unused already asks for
    "reserved-capacity-excess": BLOCKS,
    "ack-rrsa": BLOCKS, "registry-private": BLOCKS, "k8s-pod-security": BLOCKS,
    "no-password-login": BLOCKS, "metadata-hardened": BLOCKS,
}
"""Mandatory rule -> how a stack satisfies it: "blocks" (no stack of MATRIX violates it),
("setting", name of SETTINGS), ("refused", name of REFUSALS), or several."""
MANDATORY = sorted(rule.name for rule in RULES if rule.default_enforcement == "mandatory")


def test_every_mandatory_rule_says_how_it_is_satisfied():
    assert sorted(HOW) == MANDATORY, "add the new mandatory rule to HOW with its proof"
    for how in HOW.values():
        steps = list(how)
        while steps:
            kind = steps.pop(0)
            if kind != "blocks":
                name = steps.pop(0)
                assert name in (SETTINGS if kind == "setting" else REFUSALS), name


@cache
def mandatory_violations(name: str, path: Path) -> frozenset[tuple[str, str]]:
    """(rule, resource) of the mandatory rules the stack at `path` violates, at any level."""
    mandatory = set(MANDATORY)
    return frozenset((v.rule, f"{v.resource_type} {v.resource_name}")
                     for v in review(run_plan(path)).verdicts if v.rule in mandatory)


@pytest.fixture(scope="module")
def stacks(tmp_path_factory) -> dict[str, frozenset[tuple[str, str]]]:
    directory = tmp_path_factory.mktemp("matrix")
    return {name: mandatory_violations(name, write_stack(directory, name, *stack))
            for name, stack in MATRIX.items()}


@pytest.mark.parametrize("rule", MANDATORY)
def test_the_blocks_satisfy_the_rule_in_every_stack(rule, stacks):
    """Every rule, whatever else satisfies it: the matrix's stacks (no setting that
    violates it) never violate it."""
    found = {name: sorted(where for r, where in violations if r == rule)
             for name, violations in stacks.items()}
    assert {name: where for name, where in found.items() if where} == {}


@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_a_stack_setting_satisfies_the_rule(setting, tmp_path):
    violating, satisfying = SETTINGS[setting]
    rules = {rule for rule, how in HOW.items() if setting in how}
    before = mandatory_violations(f"{setting}-without",
                                  write_stack(tmp_path, "without", *violating))
    after = mandatory_violations(f"{setting}-with", write_stack(tmp_path, "with", *satisfying))
    assert rules <= {rule for rule, _ in before}
    assert not rules & {rule for rule, _ in after}


@pytest.mark.parametrize("refusal", sorted(REFUSALS))
def test_the_schema_refuses_the_combination_with_its_field(refusal, tmp_path):
    stack, field = REFUSALS[refusal]
    with pytest.raises(ConfigError) as refused:
        run_plan(write_stack(tmp_path, "refused", *stack))
    assert f"gpu-infra:cluster.{field}" in str(refused.value)
