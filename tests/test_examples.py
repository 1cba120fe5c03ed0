"""The programs in examples/: each runs under the mock engine and builds what its docstring
says, and each type-checks under `mypy --strict` as a program outside the repository."""

from __future__ import annotations

import json
import runpy

import pytest

from gpu_infra_tools.plan.engine import PlannedResource, run_under_mocks

from .conftest import BASE_INFERENCE, PROJECT_DIR, cluster_config

EXAMPLES_DIR = PROJECT_DIR / "examples"
PYTHON_EXAMPLES = sorted(path.parent.name for path in EXAMPLES_DIR.glob("*/__main__.py"))


def run_example(name: str) -> tuple[list[PlannedResource], dict[str, object]]:
    """The resources and exports of examples/<name> under the mock engine (invokes answered
    for cn-hangzhou)."""
    program = EXAMPLES_DIR / name / "__main__.py"
    return run_under_mocks(cluster_config(BASE_INFERENCE), name,
                           lambda: runpy.run_path(str(program), run_name="__main__"))


def by_type(resources: list[PlannedResource], token: str) -> list[PlannedResource]:
    return [resource for resource in resources if resource.type == token]


def test_there_are_at_least_three_python_examples():
    assert len(PYTHON_EXAMPLES) >= 3
    for name in PYTHON_EXAMPLES:
        assert (EXAMPLES_DIR / name / "Pulumi.yaml").is_file()


def test_fleet_in_existing_vpc_uses_the_programs_vswitches():
    resources, outputs = run_example("fleet-in-existing-vpc")
    own_switch_ids = {r.id for r in by_type(resources, "alicloud:vpc/switch:Switch")}
    (group,) = by_type(resources, "alicloud:ess/scalingGroup:ScalingGroup")
    (vpc,) = by_type(resources, "alicloud:vpc/network:Network")
    (security_group,) = by_type(resources, "alicloud:ecs/securityGroup:SecurityGroup")
    assert len(own_switch_ids) == 2 and set(group.inputs["vswitchIds"]) == own_switch_ids
    assert security_group.inputs["vpcId"] == vpc.id
    assert group.inputs["onDemandBaseCapacity"] == 1
    assert outputs["scaling_group_id"] == group.id
    assert not any(r.type.startswith("gpu-infra:network") for r in resources)


def test_training_cluster_reads_only_the_programs_bucket_and_alerts_its_group():
    resources, outputs = run_example("training-own-bucket")
    (policy,) = by_type(resources, "alicloud:ram/policy:Policy")
    resources_granted = {arn for statement in json.loads(policy.inputs["policyDocument"])[
        "Statement"] for arn in statement["Resource"]}
    assert resources_granted == {"acs:oss:*:*:acme-llm-datasets",
                                 "acs:oss:*:*:acme-llm-datasets/*"}
    nodes = by_type(resources, "alicloud:ecs/instance:Instance")
    alarms = by_type(resources, "alicloud:cms/alarm:Alarm")
    assert len(nodes) == 4 and alarms
    assert {alarm.inputs["contactGroups"][0] for alarm in alarms} == {"ml-on-call"}
    for alarm in alarms:
        listed = {entry["instanceId"] for entry in json.loads(alarm.inputs["metricDimensions"])}
        assert listed == {node.id for node in nodes}, alarm.name
    ips = outputs["node_private_ips"]
    assert isinstance(ips, list) and len(set(ips)) == 4


def test_image_bake_feeds_the_fleet_in_the_bakery_network():
    resources, outputs = run_example("image-bake-to-fleet")
    (execution,) = by_type(resources,
                           "alicloud:ecs/imagePipelineExecution:ImagePipelineExecution")
    (switch,) = by_type(resources, "alicloud:vpc/switch:Switch")
    (group,) = by_type(resources, "alicloud:ess/scalingGroup:ScalingGroup")
    (configuration,) = by_type(resources,
                               "alicloud:ess/scalingConfiguration:ScalingConfiguration")
    assert group.inputs["vswitchIds"] == [switch.id]
    assert configuration.inputs["imageId"]
    assert str(outputs["image_name_prefix"]).startswith("a10-img-")
    assert execution.inputs["imagePipelineId"]


@pytest.mark.slow  # a mypy process (one for every program: tests/strict_programs.py)
@pytest.mark.parametrize("name", PYTHON_EXAMPLES)
def test_example_passes_mypy_strict_outside_the_repository(name, strict_mypy):
    from .strict_programs import example_file

    report = strict_mypy[example_file(name)]
    assert not any("import-untyped" in line for line in report)
    assert report == []


def test_the_python_page_shows_every_example():
    page = (PROJECT_DIR / "docs" / "python.md").read_text(encoding="utf-8")
    assert [name for name in PYTHON_EXAMPLES if f"examples/{name}" not in page] == []

