"""A node whose bootstrap ends unhealthy pages the stack's contacts (issue 29 point 5), and one
whose bootstrap is still going does not: the bootstrap runs in the shell sandbox (bash, as its
unit runs it) and installs its node tools from the sandbox's bucket; then the GPU health
timer's check, as those node tools installed it, runs under each system's python3 against the
signing stand-in cloud with the node role's grants (the bootstrap's and the health check's).
The metric it puts is the one the stack's GPU-health alarm watches."""

from __future__ import annotations

import json
import shlex
import subprocess

import pytest

from gpu_infra.blocks.bootstrap import (
    BootstrapSpec,
    GpuHealthCheck,
    node_tools_installer,
    with_node_tools,
)
from gpu_infra.blocks.bootstrap.permissions import bootstrap_policy_document
from gpu_infra.blocks.gpu_health import NODE_CALLS
from gpu_infra_facts import node_stack
from gpu_infra_facts.node_apis import allow_statements

from .bootstrap_sandbox import INSTANCE_TYPE, Sandbox
from .fake_node_cloud import ACCOUNT, SCALING_GROUP, FakeNodeCloud
from .node_systems import PYTHONS, python_of

pytestmark = pytest.mark.slow  # node boots in a shell sandbox, checks under each python3

GROUP = "t01-gpu-health-nodes"
NODE = "i-node0"
SPEC = with_node_tools(BootstrapSpec(
    fleet="t01-gpu", region="cn-beijing", gpu_counts={INSTANCE_TYPE: 8}, route="auto_install",
    driver=node_stack.DEFAULT_DRIVER_STACK, data_disks=("scratch",),
    scaling_group_id=SCALING_GROUP, lifecycle_hook_id="ash-ready",
    gpu_health=GpuHealthCheck(GROUP)), "t01-datasets")
"""A scaling node of a stack with contacts: its node tools carry the health check."""
NO_DRIVER_YET = 'echo "ALL INSTALL OK" > auto_install.log\n'
"""An auto_install run whose driver loads only after a reboot (the bootstrap asks for one)."""


def node_policy() -> str:
    """The node role's grants: the bootstrap's and the GPU health check's."""
    document = json.loads(bootstrap_policy_document(SPEC.region, ACCOUNT, SPEC.fleet,
                                                    scaling_group_id=SCALING_GROUP))
    document["Statement"] += allow_statements("cms", NODE_CALLS, region=SPEC.region,
                                              account=ACCOUNT)
    return json.dumps(document)


def booted(sandbox: Sandbox, **knobs: str) -> int:
    """Install the user data with the node tools in the bucket, boot once; the exit code."""
    assert SPEC.node_tools is not None
    stored = sandbox.dir / "objects" / SPEC.node_tools.key
    stored.parent.mkdir(parents=True, exist_ok=True)
    stored.write_text(node_tools_installer(SPEC))
    for name, value in knobs.items():
        sandbox.knob(name.replace("_", "-"), value)
    assert sandbox.install(SPEC).code == 0
    return sandbox.boot().code


def timer_run(sandbox: Sandbox, cloud: FakeNodeCloud,
              system: str) -> subprocess.CompletedProcess[str]:
    """One run of the health timer's service on the node: its ExecStart, as the node tools
    installed it, with the node's endpoints pointed at the stand-in cloud for that run."""
    unit = sandbox.root / "etc/systemd/system/gpu-infra-gpu-health.service"
    command = next(line.removeprefix("ExecStart=") for line in unit.read_text().splitlines()
                   if line.startswith("ExecStart="))
    _, script, group = shlex.split(command)
    config = sandbox.root / "opt/gpu-infra/config.sh"
    settings = config.read_text()
    config.write_text(settings + "".join(
        f"{key}={shlex.quote(value)}\n" for key, value in cloud.settings(NODE).items()))
    try:
        return subprocess.run(
            [python_of(system), str(sandbox.root / script.lstrip("/")), group],
            env={**sandbox.env(), "PROBE_SECONDS": "10"}, capture_output=True, text=True,
            timeout=120, check=False)
    finally:
        config.write_text(settings)


def fault_events(cloud: FakeNodeCloud) -> list[list[str]]:
    return [json.loads(e["content"])["faults"] for e in cloud.state.events
            if e["name"] == "gpu-infra-gpu-fault"]


@pytest.mark.parametrize("system", sorted(PYTHONS))
def test_a_bootstrap_that_ends_unhealthy_pages_through_the_gpu_health_metric(tmp_path, system):
    sandbox = Sandbox(tmp_path)
    assert booted(sandbox, fail_auto_install="") != 0
    assert (sandbox.root / "var/lib/gpu-infra/unhealthy").read_text().strip() == "gpu_driver"
    with FakeNodeCloud([NODE], policy=node_policy(), fleet=SPEC.fleet) as cloud:
        cloud.state.groups[GROUP] = "7"
        done = timer_run(sandbox, cloud, system)
    assert done.returncode == 1, done.stderr
    assert cloud.state.denied == []
    assert [(m["GroupId"], json.loads(m["Values"])) for m in cloud.state.metrics] == [
        ("7", {"value": 1})]
    assert fault_events(cloud) == [["the bootstrap ended unhealthy (step gpu_driver)"]]
    assert cloud.state.health(NODE) == "unhealthy" and cloud.state.unhealthy == [NODE]


@pytest.mark.parametrize("system", sorted(PYTHONS))
def test_a_good_bootstrap_puts_zero(tmp_path, system):
    sandbox = Sandbox(tmp_path)
    assert booted(sandbox) == 0
    assert (sandbox.root / "var/lib/gpu-infra/ready").exists()
    with FakeNodeCloud([NODE], policy=node_policy(), fleet=SPEC.fleet) as cloud:
        cloud.state.groups[GROUP] = "7"
        done = timer_run(sandbox, cloud, system)
    assert done.returncode == 0, done.stderr
    assert [json.loads(m["Values"]) for m in cloud.state.metrics] == [{"value": 0}]
    assert cloud.state.events == [] and cloud.state.unhealthy == []


@pytest.mark.parametrize("system", sorted(PYTHONS))
def test_a_bootstrap_stopped_for_its_reboot_puts_nothing_until_it_finishes(tmp_path, system):
    sandbox = Sandbox(tmp_path)
    (sandbox.dir / "installers/auto_install.sh").write_text(NO_DRIVER_YET)
    assert booted(sandbox) == 0  # stopped for the reboot the driver needs
    assert "systemctl reboot" in (sandbox.dir / "calls.log").read_text()
    with FakeNodeCloud([NODE], policy=node_policy(), fleet=SPEC.fleet) as cloud:
        cloud.state.groups[GROUP] = "7"
        waiting = timer_run(sandbox, cloud, system)  # the timer fires before the reboot
        assert (waiting.returncode, cloud.state.metrics, cloud.state.events) == (0, [], [])
        assert "the bootstrap has not finished" in waiting.stdout
        sandbox.knob("driver", SPEC.driver.driver)  # the driver loads at the next boot
        assert sandbox.boot().code == 0
        done = timer_run(sandbox, cloud, system)
    assert done.returncode == 0, done.stderr
    assert [json.loads(m["Values"]) for m in cloud.state.metrics] == [{"value": 0}]
    assert cloud.state.unhealthy == []


def test_a_rerun_of_a_failed_bootstrap_is_not_counted_while_it_runs(tmp_path):
    """Each run removes the unhealthy marker as it starts: a node the configuration channel
    (or a reboot) runs again is not reported while that run is going. The node tools come
    first, so the timer is there whichever step fails."""
    assert SPEC.node_steps()[0] == "node_tools"
    sandbox = Sandbox(tmp_path)
    assert booted(sandbox, fail_auto_install="") != 0
    (sandbox.state / "fail-auto-install").unlink()  # fixed, and its failed log cleared
    (sandbox.root / "root/auto_install/auto_install.log").unlink()
    (sandbox.dir / "installers/auto_install.sh").write_text(NO_DRIVER_YET)
    assert sandbox.boot().code == 0  # the rerun stops for its reboot
    with FakeNodeCloud([NODE], policy=node_policy(), fleet=SPEC.fleet) as cloud:
        cloud.state.groups[GROUP] = "7"
        done = timer_run(sandbox, cloud, "alinux-3")
    assert (done.returncode, cloud.state.metrics) == (0, []), done.stderr
