"""Drains that work: the SCALE_IN hook starts the drain on every leaving instance through
OOS (ACS-ESS-LifeCycleRunCommand), each instance stops taking work, finishes or hands back
what it has within the stack's limit, and the action is answered once all have returned. The
drain runs here under dash (Cloud Assistant's sh on Ubuntu) on two instances leaving at once."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gpu_infra.blocks.bootstrap import drain_command
from gpu_infra_facts import node_stack
from gpu_infra_facts import types as t
from gpu_infra_facts.lifecycle import DRAIN_MARGIN_SECONDS

from .node_systems import PYTHONS, at_once, dash, python_of
from .shipped import shipped_plan

pytestmark = pytest.mark.slow  # runs the drain under dash and plans two shipped stacks

STAND_INS = {
    # a poll of the drain loop: the worker of a node whose frame completes finishes it now
    "sleep": '[ -f "$NODE/finishes" ] && rm -f "$NODE/root/var/lib/gpu-infra/jobs/"*\n'
             '[ -f "$NODE/requests" ] && : > "$NODE/requests"\nexec /bin/sleep 0.05\n',
    # established connections to the service port: one line each
    "ss": 'cat "$NODE/requests" 2>/dev/null || true\n',
}


def node(directory: Path, *, jobs: int = 0, requests: int = 0, finishes: bool) -> Path:
    root = directory / "root"
    (root / "var/lib/gpu-infra/jobs").mkdir(parents=True)
    for index in range(jobs):
        (root / f"var/lib/gpu-infra/jobs/frame-{index:04d}").write_text("receipt-handle\n")
    if requests:
        (directory / "requests").write_text("ESTAB 0 0 10.0.0.5:8000 10.0.9.9:40000\n" * requests)
    if finishes:
        (directory / "finishes").write_text("")
    bin_dir = directory / "bin"
    bin_dir.mkdir()
    for name, body in STAND_INS.items():
        (bin_dir / name).write_text("#!/bin/sh\n" + body)
        (bin_dir / name).chmod(0o755)
    return directory


def start(directory: Path, command: str) -> subprocess.Popen[str]:
    return subprocess.Popen([dash(), "-c", command], text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT,
                            env={"GPU_INFRA_ROOT": str(directory / "root"),
                                 "NODE": str(directory),
                                 "PATH": f"{directory / 'bin'}:/usr/bin:/bin"})


def test_two_render_nodes_leaving_at_once_finish_or_hand_back(tmp_path):
    command = drain_command(1)
    finishing = node(tmp_path / "i-a", jobs=1, finishes=True)
    stuck = node(tmp_path / "i-b", jobs=2, finishes=False)
    runs = [start(finishing, command), start(stuck, command)]
    outputs = [run.communicate(timeout=60)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    for directory in (finishing, stuck):
        assert (directory / "root/var/lib/gpu-infra/draining").exists()
    assert "up to 1s for 1 job(s) or request(s) in flight" in outputs[0]
    assert "work finished; the instance may go" in outputs[0]
    assert not (finishing / "root/var/lib/gpu-infra/handed-back").exists()
    assert "limit of 1s reached: handed back 2 job(s) or request(s)" in outputs[1]
    handed = sorted(p.name for p in (stuck / "root/var/lib/gpu-infra/handed-back").iterdir())
    assert handed == ["frame-0000", "frame-0001"]
    assert list((stuck / "root/var/lib/gpu-infra/jobs").iterdir()) == []
    log = (stuck / "root/var/log/gpu-infra/drain.log").read_text()
    assert "stop taking work" in log and "handed back 2" in log


def test_an_inference_node_waits_for_its_requests_in_flight(tmp_path):
    serving = node(tmp_path / "i-c", requests=3, finishes=True)
    run = start(serving, drain_command(60, [8000]))
    output = run.communicate(timeout=60)[0]
    assert run.returncode == 0, output
    assert "up to 60s for 3 job(s) or request(s) in flight" in output
    assert "work finished" in output


def test_a_node_with_nothing_in_flight_goes_at_once(tmp_path):
    idle = node(tmp_path / "i-d", finishes=False)
    run = start(idle, drain_command(600, [8000]))
    assert run.communicate(timeout=60)[0].count("work finished") == 1


@pytest.fixture(scope="module")
def plans():
    return {name: shipped_plan(name) for name in ("inference-prod", "rendering-batch")}


@pytest.mark.parametrize("stack, ports", [("rendering-batch", []), ("inference-prod", [8000])])
def test_the_scale_in_hook_starts_the_drain_through_oos(plans, stack, ports):
    queue = plans[stack].outputs.get("job_queue")  # rendering hands its jobs back to it
    plan = plans[stack]
    [hook] = [h for h in plan.by_type(t.LIFECYCLE_HOOK)
              if h.inputs["lifecycleTransition"] == "SCALE_IN"]
    assert hook.inputs["notificationArn"] == (
        f"acs:ess:{plan.cluster.region}:1234567890123456:oos/ACS-ESS-LifeCycleRunCommand")
    seconds = plan.cluster.fleet.drain_seconds
    parameters = json.loads(hook.inputs["notificationMetadata"])
    role = next(r for r in plan.by_type(t.RAM_ROLE) if r.name.endswith("drain-role"))
    assert parameters == {"commandType": "RunShellScript",
                          "commandContent": drain_command(seconds - DRAIN_MARGIN_SECONDS, ports,
                                                          queue),
                          "timeout": seconds, "lifecycleActionResult": "CONTINUE",
                          "OOSAssumeRole": role.inputs["roleName"]}
    assert (hook.inputs["heartbeatTimeout"], hook.inputs["defaultResult"]) == (seconds,
                                                                               "CONTINUE")
    trust = json.loads(role.inputs["assumeRolePolicyDocument"])["Statement"][0]["Principal"]
    assert trust == {"Service": ["oos.aliyuncs.com"]}
    policy = next(p for p in plan.by_type(t.RAM_POLICY) if p.name.endswith("drain-policy"))
    statements = json.loads(policy.inputs["policyDocument"])["Statement"]
    [on_nodes] = [s for s in statements if s.get("Condition")]
    assert on_nodes["Action"] == ["ecs:RunCommand"]
    assert on_nodes["Condition"] == {"StringEquals": {
        "acs:ResourceTag/GpuFleet": plan.outputs["fleet_name"]}}
    [answer] = [s for s in statements if s["Action"] == ["ess:CompleteLifecycleAction"]]
    assert answer["Resource"] == [f"acs:ess:{plan.cluster.region}:1234567890123456:"
                                  f"scalinggroup/{plan.outputs['scaling_group_id']}"]
    # the hook notifies no MNS queue any more: rendering keeps its job queue (and, with its
    # worker, the dead-letter queue)
    assert sorted(q.name for q in plan.by_type(t.MNS_QUEUE)) == (
        ["render-farm-gpu-jobs-dead", "render-farm-gpu-jobs-queue"]
        if stack == "rendering-batch" else [])


def test_the_longest_drain_the_schema_allows_fits_the_hook():
    from gpu_infra.blocks.compute.fleet_ops import drain_parameters
    from gpu_infra_facts.lifecycle import NOTIFICATION_METADATA_MAX

    metadata = drain_parameters(drain_command(21600, list(range(60000, 60200)), "q" * 120),
                                21600, "r" * 64)
    assert len(metadata) <= NOTIFICATION_METADATA_MAX
    with pytest.raises(ValueError, match="a lifecycle hook takes at most 4096"):
        drain_parameters("x" * NOTIFICATION_METADATA_MAX, 600, "role")


def _queue_node(directory: Path, cloud, region: str, jobs: int,
                system: str = "alinux-3") -> Path:
    """A render node with `jobs` stuck jobs (receipt handles rh-<n>, in flight in the stand-in
    queue `queue`) and what the hand-back runs: its node tools' gpu_infra_queue.py and
    gpu-infra-api under `system`'s python3, endpoints at the stand-in cloud."""
    from gpu_infra.blocks.bootstrap import BootstrapSpec, node_files, node_tools_files

    spec = BootstrapSpec(fleet="render-farm-gpu", region=region, gpu_counts={}, route="grid",
                         driver=node_stack.DEFAULT_DRIVER_STACK, returns_jobs=True)
    node(directory, jobs=0, finishes=False)
    root = directory / "root"
    files = {**node_files(spec), **node_tools_files(spec)}
    for path in ("/opt/gpu-infra/bin/gpu-infra-api", "/opt/gpu-infra/bin/gpu_infra_queue.py",
                 "/opt/gpu-infra/bin/gpu_infra_node.py"):
        (root / path.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        (root / path.lstrip("/")).write_text(files[path][0])
    (root / "opt/gpu-infra/config.sh").write_text(f"REGION={region}\n" + "".join(
        f"{key}={value}\n" for key, value in cloud.settings("i-render1").items()))
    for index in range(jobs):
        (root / f"var/lib/gpu-infra/jobs/frame-{index:04d}").write_text(f"rh-{index}\n")
    (directory / "bin/python3").symlink_to(python_of(system))
    return directory


def test_a_handed_back_frame_is_visible_in_the_queue_again_at_once(plans, tmp_path):
    """The stuck node's drain (dash) returns each unfinished frame's message with
    ChangeMessageVisibility (1 s, the API's least), under the stack's own fleet policy on
    the node role, instead of leaving it invisible for the queue's job timeout. The
    stand-in checks the MNS signature as documented, over the Content-Type the request
    carries (case 5: urllib's own Content-Type was sent but not signed), and its first
    answer is a 503 (retried). Under each system's python3, a stand-in each, all at once
    (each waits out its 1 s drain and its retry's 1 s)."""
    from .fake_node_cloud import FakeNodeCloud

    plan = plans["rendering-batch"]
    queue = plan.outputs["job_queue"]
    [policy] = [p.inputs["policyDocument"] for p in plan.by_type(t.RAM_POLICY)
                if p.name.endswith("-fleet-policy")]
    for system in PYTHONS:
        python_of(system)  # skips loudly without one of the interpreters

    def hand_back(system: str) -> tuple[FakeNodeCloud, list[int], list[str], Path]:
        with FakeNodeCloud([], policy=policy) as cloud:
            cloud.state.region = plan.cluster.region
            cloud.state.in_flight = {"rh-0": queue, "rh-1": queue, "rh-9": "another-queue"}
            cloud.state.fail_once = {"mns"}
            stuck = _queue_node(tmp_path / system / "i-b", cloud, plan.cluster.region, jobs=2,
                                system=system)
            finishing = node(tmp_path / system / "i-a", jobs=1, finishes=True)
            command = drain_command(1, (), queue)
            runs = [start(finishing, command), start(stuck, command)]
            outputs = [run.communicate(timeout=60)[0] for run in runs]
        return cloud, [run.returncode for run in runs], outputs, stuck

    for system, (cloud, codes, outputs, stuck) in at_once(hand_back, list(PYTHONS)).items():
        assert codes == [0, 0], (system, outputs)
        assert cloud.state.visibility == [(queue, "rh-0", 1), (queue, "rh-1", 1)], system
        assert cloud.state.denied == [] and cloud.state.failed == ["mns"], system
        assert f"returned frame-0000 to {queue}" in outputs[1], system
        assert "the instance may go" in outputs[1].splitlines()[-1], system
        assert "returned" not in outputs[0], system  # its frame finished: nothing to hand back
        log = (stuck / "root/var/log/gpu-infra/drain.log").read_text()
        assert f"returned frame-0001 to {queue}" in log, system


def test_a_frame_the_queue_refuses_returns_when_its_visibility_ends(tmp_path):
    """A message the node may not change (another queue, outside its fleet policy) is said
    so and left to its visibility timeout; the drain still returns."""
    from .fake_node_cloud import FakeNodeCloud

    policy = json.dumps({"Version": "1", "Statement": [{
        "Effect": "Allow", "Action": ["mns:ChangeMessageVisibility"],
        "Resource": ["acs:mns:cn-hangzhou:1234567890123456:/queues/farm-jobs/messages"]}]})
    with FakeNodeCloud([], policy=policy) as cloud:
        cloud.state.region = "cn-hangzhou"
        cloud.state.in_flight = {"rh-0": "other-jobs"}
        stuck = _queue_node(tmp_path / "i-c", cloud, "cn-hangzhou", jobs=1)
        run = start(stuck, drain_command(1, (), "other-jobs"))
        output = run.communicate(timeout=60)[0]
    assert run.returncode == 0, output
    assert cloud.state.visibility == []
    assert "gpu-infra-api: mns ChangeMessageVisibility /queues/other-jobs/messages?" \
           "ReceiptHandle=rh-0&VisibilityTimeout=1 failed: 403 AccessDenied\n" in output
    assert "could not return frame-0000 (1): it returns when its visibility ends" in output
    assert "Traceback" not in output
