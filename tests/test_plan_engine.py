"""The offline plan records what the real program registers."""

from __future__ import annotations

import runpy

import pytest

from gpu_infra.schema import SECRET_PLACEHOLDER
from gpu_infra_tools.plan.engine import run_plan

from .conftest import BASE_TRAINING, PROJECT_DIR, STACKS_DIR


def test_plan_records_types_names_parents_inputs_and_dependencies():
    plan = run_plan(STACKS_DIR / "Pulumi.training-dev.yaml")
    layout = plan.one("gpu-infra:layouts:TrainingCluster")
    network = plan.one("gpu-infra:network:Network")
    vpc = plan.one("alicloud:vpc/network:Network")
    assert network.parent == layout.urn and vpc.parent == network.urn
    assert vpc.inputs["cidrBlock"] == "10.10.0.0/16" and vpc.id.startswith("vpc-")
    [vswitch] = plan.by_type("alicloud:vpc/switch:Switch")
    assert vswitch.inputs["vpcId"] == vpc.id and vpc.urn in vswitch.dependencies
    assert plan.outputs["vpc_id"] == vpc.id


def test_plans_are_repeatable_in_one_process():
    first = run_plan(STACKS_DIR / "Pulumi.training-dev.yaml")
    second = run_plan(STACKS_DIR / "Pulumi.training-dev.yaml")
    assert [(r.type, r.name, r.inputs) for r in first.resources] == \
           [(r.type, r.name, r.inputs) for r in second.resources]


def test_secure_values_are_planned_as_placeholders(tmp_path):
    path = tmp_path / "Pulumi.sec.yaml"
    hook = {"secure": "v1:AAAA"}
    import yaml

    cluster = {**BASE_TRAINING, "monitoring": {"contacts": [
        {"name": "robot", "dingtalk_webhook": hook}]}}
    path.write_text(yaml.safe_dump({"config": {"alicloud:region": "cn-hangzhou",
                                               "gpu-infra:cluster": cluster}}))
    plan = run_plan(path)
    assert plan.secret_keys == ["gpu-infra:cluster.monitoring.contacts[0].dingtalk_webhook"]
    contact = plan.one("alicloud:cms/alarmContact:AlarmContact")
    assert contact.inputs["channelsDingWebHook"] == SECRET_PLACEHOLDER


def test_the_projects_main_runs_the_same_program_as_the_plan():
    """`pulumi up` in the repository runs __main__.py; a plan runs the packaged program."""
    path = STACKS_DIR / "Pulumi.training-dev.yaml"
    packaged = run_plan(path)
    via_main = run_plan(path, program=lambda: runpy.run_path(
        str(PROJECT_DIR / "__main__.py"), run_name="__main__"))
    assert [(r.type, r.name, r.inputs) for r in via_main.resources] == [
        (r.type, r.name, r.inputs) for r in packaged.resources]
    assert len(packaged.resources) > 20


def _count_judgements(monkeypatch) -> list[str]:
    """Every judge_stack call from now on (the engine's and the layouts'), by cluster."""
    import gpu_infra.layouts.judgement
    import gpu_infra_tools.plan.engine
    from gpu_infra.nodeplan import judge_stack

    calls: list[str] = []

    def counted(cluster):
        calls.append(cluster.name)
        return judge_stack(cluster)

    monkeypatch.setattr(gpu_infra.layouts.judgement, "judge_stack", counted)
    monkeypatch.setattr(gpu_infra_tools.plan.engine, "judge_stack", counted)
    return calls


def test_a_plan_judges_the_stack_once_secure_values_included(tmp_path, monkeypatch):
    import yaml

    calls = _count_judgements(monkeypatch)
    run_plan(STACKS_DIR / "Pulumi.training-prod.yaml")
    path = tmp_path / "Pulumi.sec.yaml"
    cluster = {**BASE_TRAINING, "monitoring": {"contacts": [
        {"name": "robot", "dingtalk_webhook": {"secure": "v1:AAAA"}}]}}
    path.write_text(yaml.safe_dump({"config": {"alicloud:region": "cn-hangzhou",
                                               "gpu-infra:cluster": cluster}}))
    run_plan(path)
    assert calls == ["llm-pretrain", BASE_TRAINING["name"]]


def test_a_program_given_another_config_judges_it_itself(monkeypatch):
    """The judgement handed over applies only to the very config it was made of."""
    from gpu_infra.program import judged_already
    from gpu_infra.program import run as run_program
    from gpu_infra.schema import load_cluster_config
    from gpu_infra_tools.plan.engine import run_under_mocks

    from .conftest import cluster_config

    stack_file, cluster = load_cluster_config(STACKS_DIR / "Pulumi.training-dev.yaml")
    other = cluster_config({**BASE_TRAINING, "name": "other"})
    calls = _count_judgements(monkeypatch)
    with judged_already({"gpu-infra:cluster": {"name": "other"}}, other, []):
        resources, _ = run_under_mocks(cluster, stack_file.name, run_program,
                                       config=stack_file.config)
    assert calls == [cluster.name]
    assert resources and not any(r.name.startswith("other") for r in resources)


VPC = "alicloud:vpc/network:Network"


def test_plan_cluster_hands_each_test_a_copy_of_its_own(plan_cluster):
    """plan_cluster plans a cluster once per process (tests/shipped.py): a test changing the
    plan it got changes no later one."""
    first = plan_cluster(BASE_TRAINING)
    count = len(first.resources)
    first.one(VPC).inputs.clear()
    first.resources.clear()
    first.outputs["vpc_id"] = "changed"
    second = plan_cluster(BASE_TRAINING)
    assert len(second.resources) == count and second.one(VPC).inputs["cidrBlock"]
    assert second.outputs["vpc_id"] == second.one(VPC).id


def test_plan_cluster_plans_afresh_in_a_test_that_patches(plan_cluster, monkeypatch):
    """In a test that uses monkeypatch, plan_cluster never hands out a plan made before the
    patch (or in another test): the program runs again."""
    from gpu_infra import program
    from gpu_infra_tools.plan.engine import ProgramError

    assert plan_cluster(BASE_TRAINING).resources

    def broken(cluster, stack):
        raise ValueError("patched")

    monkeypatch.setattr(program, "build_layout", broken)
    with pytest.raises(ProgramError, match="patched"):
        plan_cluster(BASE_TRAINING)


def test_a_shared_plan_names_the_stack_file_it_was_asked_for(tmp_path):
    """The same stack file in two directories shares one plan, each copy with its own source
    (SARIF and the cost record point at it)."""
    from .conftest import write_stack
    from .shipped import planned_once

    first, second = (tmp_path / "a", tmp_path / "b")
    first.mkdir()
    second.mkdir()
    plans = [planned_once(write_stack(directory, "same", BASE_TRAINING))
             for directory in (first, second)]
    assert [plan.source for plan in plans] == [
        str(first / "Pulumi.same.yaml"), str(second / "Pulumi.same.yaml")]


def test_a_plan_finds_unknowns_as_the_sdk_does_without_leaving_cycles(record):
    """The engine's unknowns check answers as the SDK's (rpc.contains_unknowns) and, unlike
    it, leaves no reference cycle per call for the cyclic collector: none of the SDK's
    closures is garbage after a plan, and the SDK's check is back in place."""
    import gc

    from pulumi.output import Unknown
    from pulumi.runtime import rpc

    from gpu_infra.blocks.conventions import Conventions
    from gpu_infra.blocks.network import Network
    from gpu_infra.schema.network import NetworkConfig
    from gpu_infra_tools.plan import engine

    class Fields(dict):  # an output type's fields shadow dict's methods
        values = None

    looped: list[object] = [1]
    looped.append(looped)
    for value in (None, 1, "x", Unknown(), [1, [2, {"a": Unknown()}]], {"a": [1, {"b": 2}]},
                  looped, {"a": looped, "b": [Unknown()]}, (Unknown(),), {Unknown()},
                  Fields(values=[Unknown()]), Fields(values=[1])):
        assert engine._contains_unknowns(value) == rpc.contains_unknowns(value), value

    sdk_check, during = rpc.contains_unknowns, []
    gc.collect(0)  # the youngest generation: where everything the plan makes stays
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        record(lambda: (during.append(rpc.contains_unknowns), Network(
            "net", config=NetworkConfig(vpc_cidr="10.1.0.0/16", zones=["cn-hangzhou-i"]),
            conventions=Conventions(tags={"Project": "p"}))))
        gc.collect(0)
        closures = [item for item in gc.garbage if getattr(item, "__qualname__", "") ==
                    "contains_unknowns.<locals>.impl"]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert during == [engine._contains_unknowns] and rpc.contains_unknowns is sdk_check
    assert closures == []


def test_a_plan_unwraps_each_annotation_once_as_the_sdk_does_and_puts_the_sdk_back(record):
    """Within a plan the SDK's annotation unwrapping (Optional[T], Input[T], Output[T] -> T)
    answers as the SDK's own functions, calling them once per annotation object; a union
    equal to another but in another order (typing finds them equal, the SDK answers them
    differently) gets its own answer; after the plan the SDK's functions are back."""
    import pulumi
    from pulumi import _types

    from gpu_infra.blocks.conventions import Conventions
    from gpu_infra.blocks.network import Network
    from gpu_infra.schema.network import NetworkConfig
    from gpu_infra_tools.plan import engine

    @pulumi.input_type
    class PartArgs:
        pass

    args_first, dict_first = PartArgs | dict, dict | PartArgs
    assert args_first == dict_first
    calls: list[object] = []

    def counted(annotation):
        calls.append(annotation)
        return _types.unwrap_type(annotation)

    remembered = engine._memoized(counted)
    annotations = [args_first, dict_first, pulumi.Input[str], pulumi.Output[list[str]],
                   pulumi.Input[int] | None, str]
    for annotation in annotations * 3:
        assert remembered(annotation) == _types.unwrap_type(annotation), annotation
    assert remembered(args_first) is PartArgs and remembered(dict_first) is dict_first
    assert len(calls) == len(annotations)

    sdk_functions, during = (_types.unwrap_type, _types.unwrap_optional_type), []
    record(lambda: (during.append((_types.unwrap_type, _types.unwrap_optional_type)), Network(
        "net", config=NetworkConfig(vpc_cidr="10.1.0.0/16", zones=["cn-hangzhou-i"]),
        conventions=Conventions(tags={"Project": "p"}))))
    assert not set(during[0]) & set(sdk_functions)
    assert (_types.unwrap_type, _types.unwrap_optional_type) == sdk_functions
