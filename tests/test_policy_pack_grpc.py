"""End to end: start the real policy pack the way the Pulumi CLI does
(`python -u -m pulumi.policy ENGINE_ADDRESS PACK_DIR`), read the port it prints, and call the
analyzer over gRPC with the resources of planned stacks. The pack must agree with the
offline plan's verdicts, rule for rule and resource for resource."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from gpu_infra.schema.environment import policy_demands
from gpu_infra.schema.registry import layout_placement, layouts_suited
from gpu_infra_facts import types as t
from gpu_infra_policies.base import Context, Resource
from gpu_infra_policies.config import parse_policy_config
from gpu_infra_policies.rules import RULES, RULES_BY_NAME, evaluate
from gpu_infra_tools.plan.engine import Plan
from gpu_infra_tools.review.policy import as_policy_resource, check_plan

from .conftest import BASE_TRAINING, PROJECT_DIR, merged
from .hostile_resources import CASES, all_resources
from .rule_helpers import TAGS

pytestmark = pytest.mark.slow  # runs the policy pack as a gRPC server process

LEVELS = {"advisory": analyzer_pb2.ADVISORY, "mandatory": analyzer_pb2.MANDATORY,
          "disabled": analyzer_pb2.DISABLED}
LEVEL_NAMES = {value: name for name, value in LEVELS.items()}


@contextmanager
def running_pack(environ: dict[str, str] | None = None
                 ) -> Iterator[analyzer_pb2_grpc.AnalyzerStub]:
    """The pack started as the CLI starts it (with `environ`, default this process's)."""
    process = subprocess.Popen(
        [sys.executable, "-u", "-m", "pulumi.policy", "127.0.0.1:1",
         str(PROJECT_DIR / "policies")], cwd=PROJECT_DIR / "policies", env=environ,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        port = int(process.stdout.readline())
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield analyzer_pb2_grpc.AnalyzerStub(channel)
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def analyzer() -> Iterator[analyzer_pb2_grpc.AnalyzerStub]:
    with running_pack() as stub:
        yield stub


def configure(stub, settings) -> None:
    """Send the levels and thresholds, as the CLI does from --policy-pack-config."""
    config = {}
    for name, setting in settings.items():
        properties = struct_pb2.Struct()
        properties.update(dict(setting.thresholds))
        config[name] = analyzer_pb2.PolicyConfig(enforcementLevel=LEVELS[setting.level],
                                                 properties=properties)
    stub.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig=config))


def analyzer_resources(resources: list[Resource]) -> list[analyzer_pb2.AnalyzerResource]:
    out = []
    for resource in resources:
        properties = struct_pb2.Struct()
        properties.update(dict(resource.props))
        out.append(analyzer_pb2.AnalyzerResource(
            type=resource.type, urn=resource.urn, name=resource.name, properties=properties,
            options=analyzer_pb2.AnalyzerResourceOptions(protect=resource.protect),
            dependencies=resource.dependencies))
    return out


def plan_resources(plan: Plan) -> list[Resource]:
    return [as_policy_resource(r) for r in plan.resources if r.custom]


def pack_verdicts(stub, plan: Plan | list[Resource]) -> list[tuple[str, str, str | None, str]]:
    """(rule, level, resource name or None, message) from Analyze and AnalyzeStack."""
    resources = analyzer_resources(plan if isinstance(plan, list) else plan_resources(plan))
    names = {r.urn: r.name for r in resources}
    found = []
    for resource in resources:
        for d in stub.Analyze(analyzer_pb2.AnalyzeRequest(
                type=resource.type, urn=resource.urn, name=resource.name,
                properties=resource.properties, options=resource.options)).diagnostics:
            found.append((d.policyName, LEVEL_NAMES[d.enforcementLevel], resource.name,
                          d.message.split("\n", 1)[1]))
    for d in stub.AnalyzeStack(analyzer_pb2.AnalyzeStackRequest(resources=resources)).diagnostics:
        found.append((d.policyName, LEVEL_NAMES[d.enforcementLevel], names.get(d.urn),
                      d.message.split("\n", 1)[1]))
    return found


def offline_verdicts(plan: Plan, settings=None) -> list[tuple[str, str, str | None, str]]:
    return [(v.rule, v.level, v.resource_name, v.message) for v in check_plan(plan, settings)]


def test_analyzer_info_lists_every_rule_with_metadata(analyzer):
    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty())
    assert info.name == "gpu-infra"
    assert [p.name for p in info.policies] == [rule.name for rule in RULES]
    ingress = next(p for p in info.policies if p.name == "no-world-ingress")
    assert ingress.enforcementLevel == analyzer_pb2.MANDATORY
    assert ingress.severity == analyzer_pb2.POLICY_SEVERITY_CRITICAL
    assert ingress.policy_type == analyzer_pb2.POLICY_TYPE_STACK
    assert ingress.remediation_steps == RULES_BY_NAME["no-world-ingress"].remediation
    assert ingress.configSchema.properties["publicListenerPorts"]["default"] == [80.0, 443.0]
    budget = next(p for p in info.policies if p.name == "monthly-budget")
    assert budget.enforcementLevel == analyzer_pb2.DISABLED
    assert budget.policy_type == analyzer_pb2.POLICY_TYPE_STACK


def test_bad_stack_gets_its_violations_and_matches_the_offline_plan(analyzer, plan_cluster):
    cluster = merged(BASE_TRAINING, security={"admin_cidrs": ["0.0.0.0/0"]})
    cluster["tags"] = {}
    bad = plan_cluster(cluster, name="bad")
    configure(analyzer, parse_policy_config({}))
    found = pack_verdicts(analyzer, bad)
    assert ("no-world-ingress", "mandatory", "t01-sec-rule-ssh-0.0.0.0-0",
            "ingress to port 22 (tcp) from 0.0.0.0/0, which covers all public IPv4 "
            "space; allow known CIDRs only") in found
    assert any(rule == "required-tags" and level == "advisory"
               and message.startswith("missing tags: CostCenter, Owner")
               for rule, level, _, message in found)
    assert sorted(found, key=str) == sorted(offline_verdicts(bad), key=str)


def test_good_stack_agrees_with_the_offline_plan_and_has_no_mandatory(analyzer, plan_cluster):
    good = plan_cluster(BASE_TRAINING, name="good")
    configure(analyzer, parse_policy_config({}))
    found = pack_verdicts(analyzer, good)
    assert sorted(found, key=str) == sorted(offline_verdicts(good), key=str)
    assert [v for v in found if v[1] == "mandatory"] == []


def test_configure_changes_levels_and_thresholds(analyzer, plan_cluster):
    good = plan_cluster(BASE_TRAINING, name="good")
    settings = parse_policy_config({"required-tags": {
        "enforcementLevel": "mandatory", "requiredTags": ["Team"]}})
    configure(analyzer, settings)
    found = pack_verdicts(analyzer, good)
    assert found and all(v[:1] == ("required-tags",) and v[1] == "mandatory"
                         and v[3] == "missing tags: Team" for v in found
                         if v[0] == "required-tags")
    assert sorted(found, key=str) == sorted(offline_verdicts(good, settings), key=str)


def test_unknown_values_in_preview_are_skipped_not_crashing(analyzer):
    configure(analyzer, parse_policy_config({}))
    properties = struct_pb2.Struct()
    properties.update({"type": "ingress", "ipProtocol": "tcp", "portRange": "22/22",
                       "cidrIp": "04da6b54-80e4-46f7-96ec-b56ff0331ba9"})
    response = analyzer.Analyze(analyzer_pb2.AnalyzeRequest(
        type="alicloud:ecs/securityGroupRule:SecurityGroupRule", urn="urn:x", name="x",
        properties=properties))
    assert list(response.diagnostics) == []


def test_what_a_reviewer_tries_gets_the_same_verdicts_from_pack_and_plan(analyzer):
    resources = all_resources()
    configure(analyzer, parse_policy_config({}))
    found = pack_verdicts(analyzer, resources)
    offline = [(v.rule, v.level, v.resource_name, v.message) for v in evaluate(
        resources, context=Context(catalog=layouts_suited, demands=policy_demands,
                                   placement=layout_placement))]
    assert sorted(found, key=str) == sorted(offline, key=str)
    assert {rule for rule, _ in CASES} <= {rule for rule, *_ in found}
    # the 1500-deep document is reported, and the analyzer still answers afterwards
    assert any(rule == "policy-documents-readable" and name == "nested"
               for rule, _, name, _ in found)
    assert analyzer.GetAnalyzerInfo(empty_pb2.Empty()).name == "gpu-infra"


def test_the_pack_checks_the_placement_each_layout_declares(analyzer):
    """The pack gets the registry's placements: a spread-out layout's one-zone group and a
    kept-together layout's nodes outside a deployment set are reported, as offline."""
    tags = {**TAGS, "GpuFleet": "g"}
    nodes = [Resource(t.INSTANCE, {"tags": {**tags, "Layout": "training"}}, f"node-{i}",
                      f"urn:node-{i}") for i in range(2)]
    group = Resource(t.SCALING_GROUP, {"tags": {**tags, "Layout": "inference"},
                                       "vswitchIds": ["vsw-a"], "onDemandBaseCapacity": 1},
                     "group", "urn:group")
    configure(analyzer, parse_policy_config({}))
    found = pack_verdicts(analyzer, [*nodes, group])
    placed = [v for v in found if v[0] in ("training-low-latency", "inference-multi-zone")]
    assert sorted(v[:3] for v in placed) == [
        ("inference-multi-zone", "advisory", "group"),
        ("training-low-latency", "advisory", "node-0"),
        ("training-low-latency", "advisory", "node-1")]
    offline = [(v.rule, v.level, v.resource_name, v.message) for v in evaluate(
        [*nodes, group], context=Context(demands=policy_demands, placement=layout_placement))]
    assert sorted(found, key=str) == sorted(offline, key=str)


def test_pack_dir_layout():
    pack = Path(PROJECT_DIR / "policies")
    assert "toolchain: pip" in (pack / "PulumiPolicy.yaml").read_text()
    assert "pulumi-policy" in (pack / "requirements.txt").read_text()


@pytest.mark.parametrize("environment, level", [
    ("staging", analyzer_pb2.ADVISORY), ("prod", analyzer_pb2.MANDATORY)])
def test_the_api_endpoint_rule_takes_the_level_of_the_stacks_environment(environment, level):
    """Under CrossGuard a policy has one level: the pack reads the stack's environment from
    PULUMI_CONFIG when it starts (advisory where the environment allows ack.public_api)."""
    config = json.dumps({"gpu-infra:cluster": json.dumps({"environment": environment})})
    with running_pack({**os.environ, "PULUMI_CONFIG": config}) as stub:
        info = stub.GetAnalyzerInfo(empty_pb2.Empty())
    levels = {p.name: p.enforcementLevel for p in info.policies}
    assert levels["ack-private-api-endpoint"] == level
    assert levels["no-world-ingress"] == analyzer_pb2.MANDATORY
