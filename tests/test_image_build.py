"""The image-baking stack (`layout: image`): its plan (resources and exact inputs), the
component content (the nodes' own install steps, in order, within Image Builder's limits),
the schema and the validators."""

from __future__ import annotations

import subprocess

import pytest
from ruamel.yaml import YAML

from gpu_infra.blocks.bootstrap import STEP_FILES, BakeTask, step_source
from gpu_infra.blocks.bootstrap.minify import strip_shell
from gpu_infra.blocks.compute.image_build import pack_components
from gpu_infra.knowhow import run_validators
from gpu_infra_facts.image_builder import COMPONENT_CONTENT_MAX_BYTES
from gpu_infra_facts.node_stack import DEFAULT_DRIVER_STACK, DEFAULT_IMAGES
from gpu_infra_tools.plan.engine import run_plan

from .bootstrap_sandbox import planned_steps
from .conftest import cluster_config, write_stack
from .shipped import shipped_plan

COMPONENT = "alicloud:ecs/ecsImageComponent:EcsImageComponent"
PIPELINE = "alicloud:ecs/ecsImagePipeline:EcsImagePipeline"
EXECUTION = "alicloud:ecs/imagePipelineExecution:ImagePipelineExecution"
IMAGE = {"layout": "image", "name": "gpu-a100", "network": {"zones": ["cn-beijing-l"]},
         "image": {"instance_type": "ecs.gn7e-c16g1.4xlarge"}}


@pytest.fixture(scope="module")
def shipped():
    return shipped_plan("image-a100")


def tasks_of(content: str) -> list[dict]:
    return YAML(typ="safe").load(content)["Tasks"]


def components_of(plan) -> list:
    """The image components in build order (`...-bake-<n>-<digest>`)."""
    return sorted(plan.by_type(COMPONENT),
                  key=lambda c: int(c.inputs["imageComponentName"].split("-bake-")[1]
                                    .split("-")[0]))


def test_image_stack_plans_its_components_a_template_and_one_build(shipped):
    components = components_of(shipped)
    component = components[0]
    [pipeline] = shipped.by_type(PIPELINE)
    [execution] = shipped.by_type(EXECUTION)
    assert not shipped.by_type("alicloud:ecs/instance:Instance")
    [vswitch] = shipped.by_type("alicloud:vpc/switch:Switch")
    digest = pipeline.inputs["name"].removeprefix("gpu-a100-img-")
    assert len(digest) == 8
    assert {key: value for key, value in pipeline.inputs.items()
            if key not in ("tags", "description")} == {
        "name": f"gpu-a100-img-{digest}", "imageName": f"gpu-a100-img-{digest}",
        "baseImageType": "IMAGE", "baseImage": DEFAULT_IMAGES["ubuntu_22_04"],
        "buildContent": "\n".join(f"COMPONENT {c.id}" for c in components),
        "instanceType": "ecs.gn7e-c16g1.4xlarge",
        "vswitchId": vswitch.id, "systemDiskSize": 60, "internetMaxBandwidthOut": 0,
        "deleteInstanceOnFailure": True}
    assert execution.inputs == {"imagePipelineId": pipeline.id}
    assert component.inputs["componentType"] == "Build"
    assert component.inputs["systemType"] == "Linux"
    assert component.inputs["imageComponentName"] == f"GpuInfra-gpu-a100-img-bake-0-{digest}"
    for resource in (*components, pipeline):
        assert resource.inputs["tags"]["Layout"] == "image"
        assert resource.inputs["tags"]["CostCenter"] == "ml-platform"
    assert shipped.outputs["image_name_prefix"] == f"gpu-a100-img-{digest}"
    assert shipped.outputs["driver_version"] == DEFAULT_DRIVER_STACK.driver


def test_component_content_runs_the_bake_steps_in_order(shipped):
    tasks = []
    for component in components_of(shipped):
        content = component.inputs["content"]
        assert len(content.encode()) <= COMPONENT_CONTENT_MAX_BYTES
        tasks += tasks_of(content)
    assert [(t["Name"], t["Action"]) for t in tasks] == [
        ("WriteConfig", "RunShellCommand"), ("WriteProbe", "RunShellCommand"),
        ("WriteBootstrap", "RunShellCommand"),
        ("Install", "RunShellCommand"), ("Reboot", "Reboot"),
        ("InstallAfterReboot", "RunShellCommand"), ("Clean", "RunShellCommand")]
    config = tasks[0]["Properties"]["commandContent"]
    assert f"\nDRIVER_VERSION={DEFAULT_DRIVER_STACK.driver}" in config
    assert "\nERDMA=1" in config and "\nFABRIC_MANAGER=1" in config
    assert "\nINSTALL=1" in config
    program = tasks[2]["Properties"]["commandContent"]
    assert planned_steps(program, "bake") == ["gpu_driver", "erdma", "fabric_manager",
                                              "container_runtime", "cloudmonitor",
                                              "logs_install"]
    for step in ("gpu_driver", "erdma", "fabric_manager", "container_runtime", "cloudmonitor",
                 "logs_install"):
        assert strip_shell(step_source(STEP_FILES[step])).rstrip("\n") in program
    assert tasks[3]["Properties"]["commandContent"] == "/opt/gpu-infra/bootstrap.sh bake"
    assert tasks[5]["Properties"]["commandContent"] == "/opt/gpu-infra/bootstrap.sh bake"


def test_tasks_that_do_not_fit_one_component_go_to_the_next_in_order():
    big = "x" * 9000
    tasks = [BakeTask("First", f"echo {big}"), BakeTask("Reboot", None),
             BakeTask("Second", f"echo {big}")]
    contents = pack_components(tasks)
    assert [[t["Name"] for t in tasks_of(c)] for c in contents] == [["First", "Reboot"],
                                                                    ["Second"]]
    with pytest.raises(ValueError, match="over Image Builder's limit of 16384"):
        pack_components([BakeTask("Huge", "x" * 17000)])
    with pytest.raises(ValueError, match="read as an Image Builder parameter"):
        pack_components([BakeTask("Braces", "echo {{ nope }}")])


def test_a_changed_install_makes_a_new_template_and_image_name(tmp_path):
    first = run_plan(write_stack(tmp_path, "a", IMAGE, "cn-beijing"))
    pinned = {**IMAGE, "image": {**IMAGE["image"], "driver": {"version": "535.161.08"}}}
    second = run_plan(write_stack(tmp_path, "b", pinned, "cn-beijing"))
    [one], [two] = first.by_type(PIPELINE), second.by_type(PIPELINE)
    assert one.inputs["name"] != two.inputs["name"]
    assert one.inputs["imageName"] != two.inputs["imageName"]
    assert " DRIVER_VERSION=535.161.08\n" in second.by_type(COMPONENT)[0].inputs["content"]


def test_sharing_copying_and_a_chosen_prefix_reach_the_template(tmp_path):
    cluster = {**IMAGE, "image": {**IMAGE["image"], "image_name_prefix": "gpu-a100-baked",
                                  "share_with_accounts": ["1234567890123456"],
                                  "copy_to_regions": ["cn-shanghai"], "erdma": "off",
                                  "delete_instance_on_failure": False}}
    plan = run_plan(write_stack(tmp_path, "share", cluster, "cn-beijing"))
    [pipeline] = plan.by_type(PIPELINE)
    assert pipeline.inputs["imageName"] == "gpu-a100-baked"
    assert pipeline.inputs["addAccounts"] == ["1234567890123456"]
    assert pipeline.inputs["toRegionIds"] == ["cn-shanghai"]
    assert pipeline.inputs["deleteInstanceOnFailure"] is False
    assert " ERDMA=0\n" in plan.by_type(COMPONENT)[0].inputs["content"]


@pytest.mark.parametrize(("image", "problem"), [
    ({"driver": {"route": "preinstalled"}},
     "image.driver.route: preinstalled cannot be baked; allowed: auto, auto_install"),
    ({"system_disk_gib": 10}, "image.system_disk_gib: input should be greater than or equal to 20"),
    ({"share_with_accounts": ["12345"]}, "12345: not an account id (16 digits)"),
    ({"copy_to_regions": ["mars-1"]}, "unknown region mars-1"),
    ({"image_name_prefix": "1-bad"}, "image.image_name_prefix"),
])
def test_image_section_problems_name_the_field(image, problem):
    from gpu_infra.schema import ConfigError

    with pytest.raises(ConfigError) as error:
        cluster_config({**IMAGE, "image": {**IMAGE["image"], **image}}, "cn-beijing")
    assert any(problem in line for line in error.value.problems), error.value.problems


def test_image_stack_refuses_fleet_sections():
    from gpu_infra.schema import ConfigError

    with pytest.raises(ConfigError) as error:
        cluster_config({**IMAGE, "storage": {"disks": []}}, "cn-beijing")
    assert any("storage: unknown key" in line for line in error.value.problems)


@pytest.mark.parametrize(("image", "finding"), [
    ({"instance_type": "ecs.gn99.xlarge"}, "ERROR image-build-type: image.instance_type: "
                                           "ecs.gn99.xlarge is not in the GPU catalog"),
    ({"instance_type": "ecs.sgn7i-vws-m2.xlarge"},
     "ERROR image-build-type: image.instance_type: sgn7i-vws runs the GRID driver"),
    ({"instance_type": "ecs.gn7i-c8g1.2xlarge", "driver": {"version": "515.65.01"}}, None),
    ({"instance_type": "ecs.gn7-c13g1.13xlarge", "driver": {"version": "515.65.01"}},
     "ERROR image-driver-incompatible: image.driver.version: driver 515.65.01 on gn7"),
])
def test_image_validators(image, finding):
    stack = cluster_config({**IMAGE, "image": {**IMAGE["image"], **image}}, "cn-beijing")
    lines = [f.line() for f in run_validators(stack) if f.validator != "no-internet-egress"]
    if finding is None:
        assert lines == []
    else:
        assert any(line.startswith(finding) for line in lines), lines


def test_an_image_build_without_egress_is_warned():
    stack = cluster_config({**IMAGE, "network": {"zones": ["cn-beijing-l"],
                                                 "nat_gateway": False}}, "cn-beijing")
    assert [f.validator for f in run_validators(stack)] == ["no-internet-egress"]


@pytest.mark.slow  # runs ShellCheck
def test_the_baked_scripts_pass_shellcheck(shipped, tmp_path):
    from .bootstrap_sandbox import Sandbox
    from .test_bootstrap_scripts import SHELLCHECK

    sandbox = Sandbox(tmp_path)
    scripts = []
    for task in (task for component in components_of(shipped)
                 for task in tasks_of(component.inputs["content"])):
        command = task.get("Properties", {}).get("commandContent")
        if command is None:
            continue
        path = tmp_path / f"{task['Name']}.sh"
        path.write_text("#!/bin/bash\n" + command)
        scripts.append(str(path))
        if task["Name"].startswith("Write"):
            assert sandbox.run_script(command, f"{task['Name']}-run.sh").code == 0
    installed = sandbox.root / "opt/gpu-infra"
    done = subprocess.run([SHELLCHECK, "--severity=style", *scripts,
                           str(installed / "bootstrap.sh"), str(installed / "config.sh")],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stdout
