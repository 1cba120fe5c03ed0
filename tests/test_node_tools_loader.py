"""The user data's loader (steps/gpu-infra-load), which every ECS fleet boots since its nodes
always have node tools (issue 37, user data): a node whose node tools cannot be fetched
stops there, marked unhealthy, and answers its scale-out (the good object and one that fails
its sha256 are tested in tests/test_training_jobs.py)."""

from __future__ import annotations

import dataclasses

import pytest

from gpu_infra.blocks.bootstrap import BootstrapSpec, with_node_tools
from gpu_infra_facts import node_stack

from .bootstrap_sandbox import INSTANCE_TYPE, Sandbox

SCALING_NODE = with_node_tools(BootstrapSpec(
    fleet="i01-gpu", region="cn-beijing", gpu_counts={INSTANCE_TYPE: 8}, route="auto_install",
    driver=node_stack.DEFAULT_DRIVER_STACK, data_disks=("scratch",),
    scaling_group_id="asg-1", lifecycle_hook_id="ash-ready"), "i01-models")


@pytest.mark.slow  # a node boot in a shell sandbox
def test_node_tools_that_cannot_be_fetched_stop_the_node_unhealthy(tmp_path):
    assert SCALING_NODE.node_tools is not None
    sandbox = Sandbox(tmp_path)  # the bucket holds no object: the fetch fails
    assert sandbox.install(SCALING_NODE).code == 0
    loader = sandbox.run("/opt/gpu-infra/bootstrap.sh")
    assert loader.code != 0
    assert loader.file("/var/lib/gpu-infra/unhealthy").strip() == "node_tools"
    assert "FAILED: no node tools: the node is unhealthy" in loader.output
    api = loader.api_calls()
    assert api[0] == (f"gpu-infra-api oss-get i01-models {SCALING_NODE.node_tools.key} "
                      f"{tmp_path}/root/var/lib/gpu-infra/node-tools.sh")
    assert api[1:] == ["gpu-infra-api tag GpuInfraHealth=unhealthy",
                       "gpu-infra-api answer-scale-out"]
    assert not loader.exists("/var/lib/gpu-infra/ready")
    assert "run_steps" not in loader.file("/opt/gpu-infra/bootstrap.sh")  # still the loader


def test_the_spec_without_node_tools_is_not_what_a_fleet_boots():
    """Every fleet's spec has node tools (a stack without a bucket is refused), so its user
    data writes the loader, not the whole bootstrap."""
    from gpu_infra.blocks.bootstrap import node_files

    files = node_files(SCALING_NODE)
    assert "NODE_TOOLS_OBJECT=" in files["/opt/gpu-infra/config.sh"][0]
    assert "oss-get" in files["/opt/gpu-infra/bootstrap.sh"][0]
    inline = node_files(dataclasses.replace(SCALING_NODE, node_tools=None))
    assert "run_steps" in inline["/opt/gpu-infra/bootstrap.sh"][0]
