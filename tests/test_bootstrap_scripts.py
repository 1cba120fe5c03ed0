"""The user data of every shipped stack: ShellCheck-clean, within the ECS limit, the same for
every node whatever the fleet's size, with the agent wherever alarms need its metrics."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_infra.nodeplan import node_plan
from gpu_infra.schema import load_cluster_config
from gpu_infra_facts.node_stack import DEFAULT_IMAGES, USER_DATA_MAX_BYTES
from gpu_infra_tools.plan.fake_cloud import FakeCloud

from .bootstrap_sandbox import Sandbox, planned_steps, script_of
from .conftest import BASE_TRAINING, STACKS_DIR, merged
from .shipped import shipped_plan

INSTANCE = "alicloud:ecs/instance:Instance"
SCALING_CONFIG = "alicloud:ess/scalingConfiguration:ScalingConfiguration"
SHIPPED = sorted(path.name.removeprefix("Pulumi.").removesuffix(".yaml")
                 for path in STACKS_DIR.glob("Pulumi.*.yaml")
                 if (nodes := node_plan(load_cluster_config(path)[1])) is not None
                 and nodes.BOOTSTRAPS)
"""The shipped stacks whose GPU nodes boot gpu-infra's bootstrap (an image-baking stack has
no nodes; ACK sets up its own)."""
SHELLCHECK = shutil.which("shellcheck") or str(Path(sys.executable).parent / "shellcheck")


def user_data_of(plan) -> list[str]:
    """The user data of every node resource of the plan (instances, scaling configs)."""
    return [r.inputs["userData"] for r in plan.by_type(INSTANCE) + plan.by_type(SCALING_CONFIG)
            if "userData" in r.inputs]


@pytest.fixture(scope="module")
def shipped_plans():
    return {name: shipped_plan(name) for name in SHIPPED}


def test_every_shipped_stack_has_user_data_within_the_limit(shipped_plans):
    for name, plan in shipped_plans.items():
        scripts = user_data_of(plan)
        assert scripts, name
        for script in scripts:
            size = len(script.encode())
            assert size <= USER_DATA_MAX_BYTES, f"{name}: {size} bytes"


@pytest.mark.slow  # runs ShellCheck
def test_generated_scripts_pass_shellcheck(shipped_plans, tmp_path):
    for name, plan in shipped_plans.items():
        script = user_data_of(plan)[0]
        sandbox = Sandbox(tmp_path / name)
        assert sandbox.install_text(script).code == 0
        installed = sandbox.root / "opt/gpu-infra"
        (sandbox.dir / "node-script.sh").write_text(script_of(script))
        (sandbox.dir / "loader.sh").write_text((installed / "bootstrap.sh").read_text())
        [tools] = [o.inputs["content"] for o in plan.by_type(
            "alicloud:oss/bucketObject:BucketObject") if o.name.endswith("-node-tools")]
        assert sandbox.run_script(tools, "node-tools.sh").code == 0  # the fleet's bootstrap.sh
        files = [sandbox.dir / "user-data.sh", sandbox.dir / "node-script.sh",
                 sandbox.dir / "loader.sh", installed / "bootstrap.sh",
                 installed / "config.sh", *sorted(installed.glob("bin/gpu-infra-peers")),
                 *sorted(installed.glob("bin/gpu-infra-serve"))]
        done = subprocess.run([SHELLCHECK, "--severity=style", *map(str, files)],
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, f"{name}:\n{done.stdout}"


def test_every_node_of_a_fleet_gets_the_same_user_data(shipped_plans):
    for name, plan in shipped_plans.items():
        assert len(set(user_data_of(plan))) == 1, name


def test_adding_nodes_does_not_change_the_user_data_of_node_0(plan_cluster):
    def node0(nodes: int) -> str:
        cluster = merged(BASE_TRAINING, fleet={"instance_type": "ecs.gn8v-8x.48xlarge",
                                               "nodes": nodes})
        plan = plan_cluster(cluster, name=f"n{nodes}")
        return next(r.inputs["userData"] for r in plan.by_type(INSTANCE)
                    if r.name.endswith("node-000"))

    four, eight = node0(4), node0(8)
    assert four == eight
    assert "cluster_peers" in planned_steps(four)


def test_fleets_with_gpu_alarms_install_the_cloudmonitor_agent(shipped_plans):
    for name, plan in shipped_plans.items():
        alarms = [r for r in plan.by_type("alicloud:cms/alarm:Alarm")
                  if "gpu" in r.inputs.get("metric", "")]
        if alarms:
            assert "cloudmonitor" in planned_steps(user_data_of(plan)[0]), name


def test_training_prod_user_data_wires_erdma_fabric_manager_and_the_cluster(shipped_plans):
    script = script_of(user_data_of(shipped_plans["training-prod"])[0])
    assert planned_steps(script) == [
        "logs", "node_tools", "data_disks", "shared_fs", "gpu_driver", "erdma", "fabric_manager",
        "container_runtime", "cloudmonitor", "nccl_env", "cluster_ssh", "health", "cluster_peers"]
    assert "\nFLEET=llm-pretrain-gpu" in script


def test_scaling_fleets_report_to_their_readiness_hook(shipped_plans):
    for name in ("inference-prod", "rendering-batch"):
        plan = shipped_plans[name]
        hook = next(r for r in plan.by_type("alicloud:ess/lifecycleHook:LifecycleHook")
                    if r.inputs["lifecycleTransition"] == "SCALE_OUT")
        assert hook.inputs["defaultResult"] == "ABANDON"
        assert f"\nLIFECYCLE_HOOK_ID={hook.id}" in script_of(user_data_of(plan)[0])


def test_a_newly_published_public_image_does_not_change_the_plan(plan_cluster, monkeypatch):
    before = plan_cluster(BASE_TRAINING).by_type(INSTANCE)[0].inputs["imageId"]
    answer = FakeCloud.answer

    def newer_images(self, token, args):
        if token == "alicloud:ecs/getImages:getImages":
            newest = "ubuntu_22_04_x64_20G_alibase_20991231.vhd"
            return {"id": newest, "ids": [newest], "images": []}
        return answer(self, token, args)

    monkeypatch.setattr(FakeCloud, "answer", newer_images)
    after = plan_cluster(BASE_TRAINING).by_type(INSTANCE)[0].inputs["imageId"]
    assert before == after == DEFAULT_IMAGES["ubuntu_22_04"]


def test_a_grid_fleet_downloads_the_package_its_stack_names(shipped_plans):
    script = script_of(user_data_of(shipped_plans["rendering-batch"])[0])
    assert "\nGRID_BUCKET=render-farm-prod-datasets\n" in script
    assert "\nGRID_OBJECT=drivers/NVIDIA-Linux-x86_64-535.161.07-grid.run\n" in script


def test_fixed_nodes_keep_the_tags_they_write_themselves(shipped_plans):
    """Health is tagged by the nodes: an update after `pulumi refresh` must not strip it
    (peers would wait for the node's health again). No key is in a tag any more."""
    for resource in shipped_plans["training-prod"].by_type("alicloud:ecs/instance:Instance"):
        assert 'tags["GpuInfraHealth"]' in resource.ignore_changes
        assert not [key for key in resource.inputs["tags"] if "Key" in key]


API_MODULES = {"peers": "gpu_infra_peers", "secret": "gpu_infra_peers",
               "answer-scale-out": "gpu_infra_scale_out", "gpu-check cuda": "gpu_infra_gpus",
               "gpu-check nvlink": "gpu_infra_gpus", "pull": "gpu_infra_pull",
               "model-get": "gpu_infra_models"}
"""gpu-infra-api's commands that import a module written beside it; the others are its own
code."""


def test_every_api_command_a_node_runs_finds_its_module_on_the_node(shipped_plans):
    """The bootstrap sandbox plays gpu-infra-api with a stand-in, so a module missing from
    the user data and the node tools shows only here (training nodes once lacked the OSS
    download their job tools step called)."""
    import re

    from gpu_infra.blocks.bootstrap import step_source

    imported = set(re.findall(r"^\s+import (gpu_infra_\w+)", step_source("gpu-infra-api"), re.M))
    assert imported == set(API_MODULES.values())
    checked = 0
    for name, plan in shipped_plans.items():
        tools = "".join(o.inputs["content"] for o in plan.by_type(
            "alicloud:oss/bucketObject:BucketObject") if o.name.endswith("-node-tools"))
        for script in map(script_of, user_data_of(plan)):
            # the loader's calls run before the node tools exist: their modules are in the
            # user data itself; the bootstrap's find them in either
            own = set(re.findall(r"^w \S+/(\w+)\.py \d+ <<", script, re.M))
            before = set(re.findall(r'"\$API" ([a-z-]+)', step_source("gpu-infra-load")))
            if "\nLIFECYCLE_HOOK_ID=" not in script:
                before.discard("answer-scale-out")  # the loader answers only with a hook
            assert "answer-scale-out" in before or "SCALING_GROUP_ID" not in script
            assert all(API_MODULES[c] in own for c in before & set(API_MODULES)), name
            written = own | set(re.findall(r"^w \S+/(\w+)\.py \d+ <<", tools, re.M))
            calls = set(re.findall(r'"\$API" ([a-z-]+(?: nvlink| cuda)?)', script + tools))
            if "readonly -a NVLINK_TYPES=()" in script:
                calls.discard("gpu-check nvlink")  # the health step skips it
            if "\nLIFECYCLE_HOOK_ID=" not in script:
                calls.discard("answer-scale-out")  # report() answers only with a hook
            for call in calls & set(API_MODULES):
                assert API_MODULES[call] in written, (name, call)
                checked += 1
    assert checked >= 7  # peers, secret and nvlink on training; the scale-out answer; the
    # model fetch of inference-prod
