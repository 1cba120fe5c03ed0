"""`instance_types`: GPU types the catalog lacks, declared in the stack and seen by every
lookup (validators, node health check, placement and eRDMA, cost, policy fit)."""

from __future__ import annotations

import pytest

from gpu_infra.knowhow import Level, run_validators
from gpu_infra.schema import ConfigError
from gpu_infra_tools.cost import estimate_plan
from gpu_infra_tools.review import review

from .bootstrap_sandbox import script_of
from .conftest import BASE_INFERENCE, BASE_TRAINING, cluster_config, merged

NEW_TYPE = "ecs.gn9x-8x.48xlarge"
"""A type no catalog lists."""
DECLARED = {"gpu_model": "NVIDIA X200", "gpu_count": 8, "gpu_memory_gib": 141, "vcpu": 192,
            "memory_gib": 2048, "erdma": True, "nvswitch": True, "low_latency": True,
            "price_cny_per_hour": 300.0}
INSTANCE = "alicloud:ecs/instance:Instance"


def training(declared: dict | None = None, **fleet) -> dict:
    return merged(BASE_TRAINING, fleet={"instance_type": NEW_TYPE, "nodes": 2, **fleet},
                  instance_types={NEW_TYPE: declared or DECLARED})


def findings(cluster: dict, name: str) -> list:
    return [f for f in run_validators(cluster_config(cluster)) if f.validator == name]


def test_an_undeclared_unknown_type_is_an_error_saying_how_to_declare_it():
    [finding] = findings(merged(BASE_TRAINING, fleet={"instance_type": NEW_TYPE}),
                         "unknown-instance-type")
    assert finding.level is Level.ERROR
    assert finding.message.endswith(
        f"for a type the catalog lacks, declare it under instance_types.{NEW_TYPE} with "
        "gpu_model, gpu_count, gpu_memory_gib, vcpu and memory_gib")


def test_a_declared_type_plans_with_its_gpus_erdma_placement_and_fabric_manager(plan_cluster):
    assert findings(training(), "unknown-instance-type") == []
    plan = plan_cluster(training())
    nodes = plan.by_type(INSTANCE)
    assert [n.inputs["instanceType"] for n in nodes] == [NEW_TYPE, NEW_TYPE]
    assert {n.inputs["networkInterfaceTrafficMode"] for n in nodes} == {"HighPerformance"}
    [deployment_set] = plan.by_type("alicloud:ecs/ecsDeploymentSet:EcsDeploymentSet")
    assert deployment_set.inputs["strategy"] == "LowLatency"
    user_data = script_of(nodes[0].inputs["userData"])
    assert f'readonly -A GPU_COUNTS=(["{NEW_TYPE}"]=8)' in user_data
    assert "\nFABRIC_MANAGER=1\n" in user_data
    without = plan_cluster(training({**DECLARED, "nvswitch": False, "erdma": False}))
    assert "\nFABRIC_MANAGER=0\n" in script_of(without.by_type(INSTANCE)[0].inputs["userData"])


def test_the_cost_estimate_uses_the_declared_price_and_the_policy_rules_accept_it(
        plan_cluster):
    plan = plan_cluster(training())
    nodes = [r for r in estimate_plan(plan).resources if r.resource_type == INSTANCE]
    assert [n.components[0].price for n in nodes] == [300.0, 300.0]
    verdicts = review(plan).verdicts
    assert not [v for v in verdicts if v.rule == "gpu-type-in-catalog"]
    unpriced = plan_cluster(training({k: v for k, v in DECLARED.items()
                                      if k != "price_cny_per_hour"}))
    assert {r.name for r in estimate_plan(unpriced).unpriced} >= {"t01-gpu-node-000"}


def test_validators_judge_a_declared_type_like_a_catalog_one():
    few_cpus = training({**DECLARED, "vcpu": 16})
    [finding] = findings(few_cpus, "low-vcpu-per-gpu")
    assert finding.message.startswith(f"{NEW_TYPE} has 2 vCPUs per GPU")
    [finding] = findings(training({**DECLARED, "erdma": False}, erdma="on"),
                         "erdma-unsupported")
    assert finding.message.startswith("family gn9x has no eRDMA")


def test_declared_regions_make_the_region_validator_fire():
    elsewhere = training({**DECLARED, "regions": ["cn-beijing", "cn-wulanchabu"]})
    [finding] = findings(elsewhere, "not-offered-in-region")
    assert (finding.level, finding.path) == (Level.WARNING, "fleet.instance_type")
    assert finding.message == (f"{NEW_TYPE} is not offered in cn-hangzhou per its "
                               "instance_types declaration (offered in: cn-beijing, "
                               "cn-wulanchabu)")
    assert findings(training({**DECLARED, "regions": ["cn-hangzhou"]}),
                    "not-offered-in-region") == []


def test_a_declared_type_serves_the_stack_layout_unless_uses_say_otherwise():
    inference = merged(BASE_INFERENCE, fleet={"instance_types": [NEW_TYPE]},
                       instance_types={NEW_TYPE: DECLARED})
    assert cluster_config(inference).gpu_types.get(NEW_TYPE).uses == ("inference",)
    rendering_only = merged(inference, instance_types={NEW_TYPE: {**DECLARED,
                                                                   "uses": ["rendering"]}})
    assert cluster_config(rendering_only).gpu_types.get(NEW_TYPE).uses == ("rendering",)


@pytest.mark.parametrize("declarations, problem", [
    ({"ecs.gn7i-c8g1.2xlarge": DECLARED},
     "instance_types.ecs.gn7i-c8g1.2xlarge: the catalog lists it; remove the declaration"),
    ({"gn9x.large": DECLARED}, "instance_types.gn9x.large: not an instance type name"),
    ({NEW_TYPE: {**DECLARED, "regions": ["mars-1"]}},
     f"instance_types.{NEW_TYPE}.regions: unknown region 'mars-1'"),
    ({NEW_TYPE: {k: v for k, v in DECLARED.items() if k != "gpu_count"}},
     f"instance_types.{NEW_TYPE}.gpu_count: missing"),
    ({NEW_TYPE: {**DECLARED, "gpu_count": 0}},
     f"instance_types.{NEW_TYPE}.gpu_count: input should be greater than or equal to 1"),
])
def test_a_bad_declaration_is_one_line_naming_the_field(declarations, problem):
    with pytest.raises(ConfigError) as error:
        cluster_config(merged(BASE_TRAINING, instance_types=declarations))
    assert any(problem in line for line in error.value.problems), error.value.problems
