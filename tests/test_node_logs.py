"""Node logs: the bootstrap's `logs` step in the node sandbox (machine-group id, collector
install, the line naming the instance) and what the user data says to it."""

from __future__ import annotations

import dataclasses

import pytest

from gpu_infra.blocks.bootstrap import BootstrapSpec
from gpu_infra_facts import node_stack

from .bootstrap_sandbox import HOSTNAME, INSTANCE_TYPE, Sandbox, clear_calls

pytestmark = pytest.mark.slow  # runs the node bootstrap in a shell sandbox

SPEC = BootstrapSpec(fleet="t01-gpu", region="cn-beijing", gpu_counts={INSTANCE_TYPE: 8},
                     route="auto_install", driver=node_stack.DEFAULT_DRIVER_STACK,
                     data_disks=("scratch",), log_machine_id="t01-gpu-1a2b3c4d")


def _sandbox(tmp_path, spec: BootstrapSpec = SPEC, *knobs: str) -> Sandbox:
    sandbox = Sandbox(tmp_path)
    (tmp_path / "meta/instance-id").write_text("i-sandbox0001")
    for knob in knobs:
        sandbox.knob(knob)
    assert sandbox.install(spec).code == 0
    return sandbox


def _boot(tmp_path, spec: BootstrapSpec = SPEC, *knobs: str):
    return _sandbox(tmp_path, spec, *knobs).boot()


def test_logs_ship_first_from_the_stacks_machine_group(tmp_path):
    run = _boot(tmp_path)
    assert run.code == 0, run.output
    assert run.output.splitlines()[1].endswith("[logs] start")
    assert run.file(node_stack.LOONGCOLLECTOR_ID_FILE) == "t01-gpu-1a2b3c4d\n"
    assert "loongcollector install cn-beijing" in run.calls
    assert node_stack.loongcollector_installer_url("cn-beijing") in " ".join(run.calls)
    assert (f"node i-sandbox0001 logs as host {HOSTNAME} in machine group "
            "t01-gpu-1a2b3c4d") in run.file("/var/log/gpu-infra/bootstrap.log")
    assert run.exists("/var/lib/gpu-infra/ready")


def test_a_collector_that_cannot_be_installed_leaves_the_node_healthy(tmp_path):
    run = _boot(tmp_path, SPEC, "fail-loongcollector")
    assert run.code == 0, run.output
    assert "WARNING: no LoongCollector: this node's logs stay on the node" in run.output
    assert run.exists("/var/lib/gpu-infra/ready")


def test_an_installed_collector_is_not_installed_again(tmp_path):
    sandbox = _sandbox(tmp_path)
    assert sandbox.boot().code == 0
    clear_calls(sandbox)
    again = sandbox.boot()
    assert again.code == 0, again.output
    assert not [c for c in again.calls if c.startswith("loongcollector")]


def test_without_logs_no_step_and_no_collector(tmp_path):
    run = _boot(tmp_path, dataclasses.replace(SPEC, log_machine_id=None))
    assert run.code == 0, run.output
    assert "[logs] start" not in run.output
    assert not [c for c in run.calls if c.startswith("loongcollector")]
