"""The GPU health check after boot (gpu_infra_health.py, run by its timer) on a node under
each supported system's python3, with stand-ins that print what a faulty GPU prints and a
signing stand-in of the cloud (tests/fake_node_cloud.py): what it finds, the metric the
stack's alarm watches, the fault event, the health tag and, in a scaling group, ESS's
health status."""

from __future__ import annotations

import dataclasses
import json
import shlex
import subprocess
from pathlib import Path

import pytest

from gpu_infra.blocks.bootstrap import (
    BootstrapSpec,
    GpuHealthCheck,
    config_script,
    node_files,
    node_tools_files,
    node_tools_installer,
)
from gpu_infra_facts import node_stack

from .fake_node_cloud import ACCOUNT, INSTANCE_TYPE, FakeNodeCloud
from .node_systems import PYTHONS, python_of
from .shipped import shipped_plan

pytestmark = pytest.mark.slow  # runs the check under each system's python3

SYSTEMS = sorted(PYTHONS)
GROUP = "t01-gpu-health-nodes"
SPEC = BootstrapSpec(fleet="t01-gpu", region="cn-beijing", gpu_counts={INSTANCE_TYPE: 8},
                     route="auto_install", driver=node_stack.DEFAULT_DRIVER_STACK)
STAND_INS = {
    "nvidia-smi": '[ -f "$STATE/smi-hang" ] && exec sleep 600\n'
                  'cat "$STATE/smi-out"\nexit "$(cat "$STATE/smi-status" 2>/dev/null || '
                  'echo 0)"\n',
    "journalctl": 'cat "$STATE/kernel-log" 2>/dev/null || true\n',
}
XID_79 = ("NVRM: Xid (PCI:0000:3b:00): 79, pid=1923, name=python3, GPU has fallen off the "
          "bus.\nNVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.\n")
XID_13 = "NVRM: Xid (PCI:0000:5d:00): 13, pid=2201, Graphics Exception: ESR 0x404600\n"


def rows(count: int = 8, ecc: dict[int, int] | None = None) -> str:
    return "".join(f"{i}, GPU-0000000{i}-aaaa-bbbb, {(ecc or {}).get(i, 0)}\n"
                   for i in range(count))


class Node:
    """One node's files under `root`, its stand-ins, and a way to run the check."""

    def __init__(self, root: Path, cloud: FakeNodeCloud, spec: BootstrapSpec = SPEC,
                 node: str = "i-node0"):
        """A node whose bootstrap has finished healthy (its ready marker)."""
        self.root, self.cloud, self.node = root, cloud, node
        (root / "var/lib/gpu-infra").mkdir(parents=True)
        (root / "var/lib/gpu-infra/ready").write_text("2026-12-02T03:00:00Z\n")
        files = {**node_files(spec), **node_tools_files(
            dataclasses.replace(spec, gpu_health=GpuHealthCheck(GROUP)))}
        for path in ("/opt/gpu-infra/bin/gpu-infra-api", "/opt/gpu-infra/bin/gpu_infra_health.py",
                     "/opt/gpu-infra/bin/gpu_infra_node.py"):
            target = root / path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(files[path][0])
        settings = cloud.settings(node)
        lines = [line for line in config_script(spec).splitlines()
                 if line.split("=", 1)[0] not in settings]
        lines += [f"{key}={shlex.quote(value)}" for key, value in settings.items()]
        (root / "opt/gpu-infra/config.sh").write_text("\n".join(lines) + "\n")
        self.state = root / "state"
        self.bin = root / "stand-ins"
        for directory in (self.state, self.bin):
            directory.mkdir(parents=True, exist_ok=True)
        for name, body in STAND_INS.items():
            (self.bin / name).write_text("#!/bin/sh\n" + body)
            (self.bin / name).chmod(0o755)
        self.smi(rows())

    def smi(self, output: str, status: int = 0) -> None:
        (self.state / "smi-out").write_text(output)
        (self.state / "smi-status").write_text(f"{status}\n")

    def kernel_log(self, text: str) -> None:
        (self.state / "kernel-log").write_text(text)

    def check(self, system: str, probe_seconds: str = "20") -> subprocess.CompletedProcess[str]:
        health = self.root / "opt/gpu-infra/bin/gpu_infra_health.py"
        return subprocess.run(
            [python_of(system), str(health), GROUP],
            env={"GPU_INFRA_ROOT": str(self.root), "STATE": str(self.state),
                 "PROBE_SECONDS": probe_seconds, "PATH": f"{self.bin}:/usr/bin:/bin"},
            capture_output=True, text=True, timeout=120, check=False)


def _fault_event(cloud: FakeNodeCloud) -> dict[str, object]:
    [event] = cloud.state.events
    assert event["name"] == "gpu-infra-gpu-fault"
    return json.loads(event["content"])


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_healthy_node_puts_zero_and_nothing_else(tmp_path, system):
    with FakeNodeCloud([]) as cloud:
        cloud.state.groups[GROUP] = "5573088"
        done = Node(tmp_path, cloud).check(system)
    assert done.returncode == 0, done.stderr
    [metric] = cloud.state.metrics
    assert (metric["GroupId"], metric["MetricName"], json.loads(metric["Values"])) == (
        "5573088", "gpu_health_faults", {"value": 0})
    assert json.loads(metric["Dimensions"]) == {"fleet": "t01-gpu"}
    assert cloud.state.events == [] and cloud.state.tags == {}


@pytest.mark.parametrize("system", SYSTEMS)
def test_an_xid_79_gpu_off_the_bus_is_reported_and_the_node_marked(tmp_path, system):
    with FakeNodeCloud([]) as cloud:
        cloud.state.groups[GROUP] = "5573088"
        node = Node(tmp_path, cloud)
        node.kernel_log("[ 12.0] eth0: link up\n" + XID_13 + XID_79)
        done = node.check(system)
    assert done.returncode == 1
    assert json.loads(cloud.state.metrics[0]["Values"]) == {"value": 1}
    assert _fault_event(cloud) == {"instanceId": "i-node0", "fleet": "t01-gpu",
                                   "faults": ["XID 79 on 0000:3b:00 (1x)"]}
    assert cloud.state.health("i-node0") == "unhealthy"
    assert cloud.state.unhealthy == []  # a fixed node: no scaling group to replace it
    assert "gpu fault: XID 79" in done.stderr


@pytest.mark.parametrize("output, status, faults", [
    (rows(ecc={3: 2}), 0, ["GPU 3: 2 uncorrected ECC errors"]),
    (rows(7) + "Unable to determine the device handle for GPU0000:3b:00.0: Unknown Error\n", 0,
     ["a GPU does not answer: Unable to determine the device handle for GPU0000:3b:00.0: "
      "Unknown Error", "7 of 8 GPUs answer (fallen off the bus?)"]),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", 9,
     ["the NVIDIA driver does not answer (nvidia-smi: exit 9)"]),
    (rows(6), 0, ["6 of 8 GPUs answer (fallen off the bus?)"]),
])
def test_what_nvidia_smi_prints_for_a_faulty_gpu(tmp_path, output, status, faults):
    with FakeNodeCloud([]) as cloud:
        cloud.state.groups[GROUP] = "1"
        node = Node(tmp_path, cloud)
        node.smi(output, status)
        done = node.check("alinux-3")
    assert done.returncode == 1
    assert _fault_event(cloud)["faults"] == faults
    assert json.loads(cloud.state.metrics[0]["Values"]) == {"value": len(faults)}


def test_a_driver_that_hangs_is_a_fault_within_the_probe_bound(tmp_path):
    with FakeNodeCloud([]) as cloud:
        cloud.state.groups[GROUP] = "1"
        node = Node(tmp_path, cloud)
        (node.state / "smi-hang").write_text("")
        done = node.check("ubuntu-22.04", probe_seconds="1")
    assert done.returncode == 1
    assert _fault_event(cloud)["faults"] == [
        "the NVIDIA driver does not answer (nvidia-smi: no answer in 1 s)"]


def test_erdma_down_is_a_fault_where_the_fleet_uses_erdma(tmp_path):
    with FakeNodeCloud([]) as cloud:
        cloud.state.groups[GROUP] = "1"
        node = Node(tmp_path, cloud, dataclasses.replace(SPEC, erdma=True))
        for device, state in (("erdma_0", "4: ACTIVE"), ("erdma_1", "1: DOWN")):
            port = tmp_path / f"sys/class/infiniband/{device}/ports/1"
            port.mkdir(parents=True)
            (port / "state").write_text(state + "\n")
        done = node.check("ubuntu-24.04")
    assert done.returncode == 1
    assert _fault_event(cloud)["faults"] == ["eRDMA erdma_1 is 1: DOWN"]


def test_a_scaling_node_is_set_unhealthy_so_ess_replaces_it(tmp_path):
    spec = dataclasses.replace(SPEC, scaling_group_id="asg-1", lifecycle_hook_id="ash-1")
    with FakeNodeCloud([]) as cloud:
        cloud.state.groups[GROUP] = "1"
        node = Node(tmp_path, cloud, spec, node="i-scaled1")
        node.smi(rows(ecc={0: 1}))
        assert node.check("ubuntu-22.04").returncode == 1
    assert cloud.state.unhealthy == ["i-scaled1"]


def test_the_group_is_looked_up_once(tmp_path):
    with FakeNodeCloud([]) as cloud:
        cloud.state.groups[GROUP] = "42"
        node = Node(tmp_path, cloud)
        for _ in range(3):
            assert node.check("ubuntu-22.04").returncode == 0
    assert cloud.state.group_lookups == 1
    assert [m["GroupId"] for m in cloud.state.metrics] == ["42", "42", "42"]


def test_no_such_group_puts_nothing(tmp_path):
    with FakeNodeCloud([]) as cloud:
        done = Node(tmp_path, cloud).check("ubuntu-22.04")
    assert done.returncode != 0 and "0 CloudMonitor groups named t01-gpu-health-nodes" \
        in done.stderr
    assert cloud.state.metrics == []


def test_the_installer_writes_a_bounded_unit_and_its_timer(tmp_path):
    installer = node_tools_installer(dataclasses.replace(
        SPEC, gpu_health=GpuHealthCheck(GROUP, interval_minutes=3)))
    assert installer is not None
    done = subprocess.run(["bash", "-c", installer.replace("systemctl", "true")],
                          env={"GPU_INFRA_ROOT": str(tmp_path), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    unit = (tmp_path / "etc/systemd/system/gpu-infra-gpu-health.service").read_text()
    assert f"gpu_infra_health.py {GROUP}\n" in unit
    assert {"CPUQuota=10%", "TimeoutStartSec=120", "Type=oneshot"} <= set(unit.splitlines())
    timer = (tmp_path / "etc/systemd/system/gpu-infra-gpu-health.timer").read_text()
    assert "OnUnitInactiveSec=3min" in timer.splitlines()
    assert "systemctl enable gpu-infra-gpu-health.timer" in installer
    assert (tmp_path / "opt/gpu-infra/bin/gpu_infra_health.py").stat().st_mode & 0o111


def _node_role_policy(stack: str) -> tuple[str, str, dict[str, list[str]]]:
    """The planned RAM policies on `stack`'s node role as one document (its scaling group id
    as the stand-in cloud's), the fleet, and the GPU health policy's grants."""
    plan = shipped_plan(stack)
    role = next(r for r in plan.by_type("alicloud:ram/role:Role")
                if r.name.endswith("-node-role"))
    attached = {a.inputs["policyName"] for a in plan.by_type(
        "alicloud:ram/rolePolicyAttachment:RolePolicyAttachment")
        if a.inputs["roleName"] == role.inputs["roleName"]}
    group = plan.one("alicloud:ess/scalingGroup:ScalingGroup")
    statements, health = [], {}
    for policy in plan.by_type("alicloud:ram/policy:Policy"):
        if policy.inputs["policyName"] in attached:
            document = json.loads(policy.inputs["policyDocument"].replace(group.id, "asg-1"))
            statements += document["Statement"]
            if policy.name.endswith("-gpu-health-node-policy"):
                health = {a: s["Resource"] for s in document["Statement"] for a in s["Action"]}
    fleet = plan.outputs["fleet_name"]
    return json.dumps({"Version": "1", "Statement": statements}), fleet, health


def _faulty_scaling_node(tmp_path: Path, policy: str, fleet: str, region: str):
    spec = dataclasses.replace(SPEC, fleet=fleet, region=region, scaling_group_id="asg-1",
                               lifecycle_hook_id="ash-1")
    with FakeNodeCloud(["i-scaled1"], policy=policy, fleet=fleet) as cloud:
        cloud.state.groups[GROUP] = "1"
        node = Node(tmp_path, cloud, spec, node="i-scaled1")
        node.smi(rows(ecc={0: 1}))
        done = node.check("alinux-3")
    return done, cloud.state


@pytest.mark.parametrize("stack, region", [("inference-prod", "cn-hangzhou"),
                                           ("rendering-batch", "cn-hangzhou")])
def test_the_scaling_node_role_grants_exactly_what_the_check_calls(tmp_path, stack, region):
    """Under the stack's own node policies (RAM applied to every signed call) a fault is
    reported in full; without any one of the health policy's actions it is refused."""
    policy, fleet, health = _node_role_policy(stack)
    done, state = _faulty_scaling_node(tmp_path / "all", policy, fleet, region)
    assert done.returncode == 1 and "fault(s) reported" in done.stdout, done.stderr
    assert state.denied == []
    assert [json.loads(m["Values"]) for m in state.metrics] == [{"value": 1}]
    assert [e["name"] for e in state.events] == ["gpu-infra-gpu-fault"]
    assert state.health("i-scaled1") == "unhealthy" and state.unhealthy == ["i-scaled1"]
    assert health == {"cms:DescribeMonitorGroups": ["*"], "cms:PutCustomMetric": ["*"],
                      "cms:PutCustomEvent": [f"acs:cms:{region}:{ACCOUNT}:*"]}
    document = json.loads(policy)
    for action in health:
        narrower = {**document, "Statement": [
            {**s, "Action": [a for a in s["Action"] if a != action]}
            for s in document["Statement"]]}
        done, state = _faulty_scaling_node(tmp_path / action.replace(":", "-"),
                                           json.dumps(narrower), fleet, region)
        assert [denied[1] for denied in state.denied] == [action], action


@pytest.mark.parametrize("system", SYSTEMS)
def test_a_bootstrap_that_ended_unhealthy_is_a_fault_and_an_unfinished_one_is_nothing(
        tmp_path, system):
    state = tmp_path / "var/lib/gpu-infra"
    with FakeNodeCloud([]) as cloud:
        cloud.state.groups[GROUP] = "1"
        node = Node(tmp_path, cloud)
        (state / "ready").unlink()  # a run going, or stopped for its reboot
        node.smi("NVIDIA-SMI has failed because it couldn't communicate with the driver.\n", 9)
        waiting = node.check(system)
        assert (waiting.returncode, cloud.state.metrics) == (0, []), waiting.stderr
        assert "the bootstrap has not finished" in waiting.stdout
        (state / "unhealthy").write_text("gpu_driver\n")
        failed = node.check(system)
    assert failed.returncode == 1
    assert [json.loads(m["Values"]) for m in cloud.state.metrics] == [{"value": 1}]
    assert _fault_event(cloud)["faults"] == ["the bootstrap ended unhealthy (step gpu_driver)"]
    assert cloud.state.health("i-node0") == "unhealthy"
