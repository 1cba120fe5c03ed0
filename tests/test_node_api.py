"""gpu-infra-api as the nodes get it (stripped), run by each supported system's own python3
against a stand-in of metadata, ECS, ESS and CloudMonitor: scale-out batches of two and four
with one failing node, a silent node, the failure event; and the image build's tasks under
dash, Ubuntu's /bin/sh."""

from __future__ import annotations

import dataclasses
import json
import shlex
import subprocess
from pathlib import Path

import pytest

from gpu_infra.blocks.bootstrap import GridPackage, bake_tasks, config_script, node_files
from gpu_infra.blocks.bootstrap.permissions import bootstrap_policy_document

from .bootstrap_sandbox import Sandbox
from .fake_node_cloud import ACCOUNT, SCALING_GROUP, FakeNodeCloud
from .node_systems import PYTHONS, dash, python_of
from .test_bootstrap_run import SCALING, TRAINING

SYSTEMS = list(PYTHONS)


def install_node(root: Path, settings: dict[str, str], wait_seconds: int = 600) -> Path:
    """The API files of a scaling node under `root`, its config.sh pointed at the stand-in;
    the path of its gpu-infra-api."""
    files = node_files(SCALING)
    for path in ("/opt/gpu-infra/bin/gpu-infra-api", "/opt/gpu-infra/bin/gpu_infra_scale_out.py"):
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(files[path][0])
    values = {**settings, "SCALE_OUT_WAIT_SECONDS": str(wait_seconds)}
    lines = [line for line in config_script(SCALING).splitlines()
             if line.split("=", 1)[0] not in values]
    lines += [f"{key}={shlex.quote(value)}" for key, value in values.items()]
    (root / "opt/gpu-infra/config.sh").write_text("\n".join(lines) + "\n")
    return root / "opt/gpu-infra/bin/gpu-infra-api"


def report(python: str, api: Path, root: Path, status: str) -> subprocess.Popen[str]:
    """What a node's bootstrap does when its health is known: tag, then answer the batch."""
    script = (f"{shlex.quote(python)} {api} tag GpuInfraHealth={status} && "
              f"{shlex.quote(python)} {api} answer-scale-out")
    return subprocess.Popen(["bash", "-c", script], text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT,
                            env={"GPU_INFRA_ROOT": str(root), "GPU_INFRA_POLL_SECONDS": "0.1",
                                 "PATH": "/usr/bin:/bin"})


def run_batch(tmp_path, python: str, health: dict[str, str | None],
              wait_seconds: int = 600) -> FakeNodeCloud:
    """One scale-out batch: every node whose health is given reports it at once; None stays
    silent (hung). The stand-in after every reporting node has finished."""
    policy = bootstrap_policy_document(SCALING.region, ACCOUNT, SCALING.fleet,
                                       scaling_group_id=SCALING_GROUP)
    with FakeNodeCloud(list(health), policy=policy) as cloud:
        nodes = []
        for node, status in health.items():
            if status is None:
                continue
            api = install_node(tmp_path / node, cloud.settings(node), wait_seconds)
            nodes.append(report(python, api, tmp_path / node, status))
        for process in nodes:
            output, _ = process.communicate(timeout=120)
            assert process.returncode == 0, output
    assert cloud.state.denied == []  # the stack's node policy allows every call they make
    return cloud


@pytest.mark.slow  # nodes report from processes under the systems' Python
@pytest.mark.parametrize("system", SYSTEMS)
@pytest.mark.parametrize("size", [2, 4])
def test_a_batch_is_answered_once_every_instance_has_told(tmp_path, system, size):
    """ESS applies one answer to the whole batch (the token names no instance): the answer
    waits for every instance, CONTINUEs the healthy ones and sets the failing one Unhealthy
    (before, the first healthy node admitted nodes still installing, and a failing node's
    ABANDON released healthy ones)."""
    health: dict[str, str | None] = {f"i-node{n}": "healthy" for n in range(size)}
    health["i-node1"] = "unhealthy"
    cloud = run_batch(tmp_path, python_of(system), health)
    [(result, seen)] = cloud.state.answers
    assert result == "CONTINUE"
    assert seen == health  # nobody answered before every instance had told
    assert cloud.state.unhealthy == ["i-node1"]


@pytest.mark.slow  # nodes report from processes under the systems' Python
@pytest.mark.parametrize("system", SYSTEMS)
def test_a_batch_with_no_healthy_instance_is_abandoned(tmp_path, system):
    cloud = run_batch(tmp_path, python_of(system), {"i-a": "unhealthy", "i-b": "unhealthy"})
    assert [result for result, _ in cloud.state.answers] == ["ABANDON"]
    assert cloud.state.unhealthy == []


@pytest.mark.slow  # nodes report from processes under the systems' Python
def test_a_silent_instance_does_not_hold_the_batch_past_the_deadline(tmp_path):
    # One reporting node: with a deadline of 0 s whoever reports first answers for the batch,
    # so a second healthy node would race it (and count as silent when it starts late).
    cloud = run_batch(tmp_path, python_of("alinux-3"),
                      {"i-a": "healthy", "i-hung": None}, wait_seconds=0)
    [(result, seen)] = cloud.state.answers
    assert result == "CONTINUE" and seen["i-hung"] is None
    assert cloud.state.unhealthy == ["i-hung"]


@pytest.mark.slow  # the node API under the systems' Python
@pytest.mark.parametrize("system", SYSTEMS)
def test_the_failure_event_reaches_cloudmonitor(tmp_path, system):
    stderr = tmp_path / "gpu_driver.err"
    stderr.write_text("".join(f"line {n}\n" for n in range(30)) + "E: dpkg was interrupted\n")
    policy = bootstrap_policy_document(SCALING.region, ACCOUNT, SCALING.fleet,
                                       scaling_group_id=SCALING_GROUP)
    with FakeNodeCloud([], policy=policy) as cloud:
        api = install_node(tmp_path / "node", cloud.settings("i-node0"))
        done = subprocess.run([python_of(system), str(api), "event", "unhealthy", "gpu_driver",
                               str(stderr)], env={"GPU_INFRA_ROOT": str(tmp_path / "node")},
                              capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    [event] = cloud.state.events
    assert event["name"] == "gpu-infra-node-unhealthy"
    content = json.loads(event["content"])
    assert content["instanceId"] == "i-node0" and content["step"] == "gpu_driver"
    assert content["stderr"][-1] == "E: dpkg was interrupted" and len(content["stderr"]) == 20


@pytest.mark.slow  # py_compile under the systems' Python
@pytest.mark.parametrize("system", SYSTEMS)
def test_every_shipped_python_file_compiles_under_the_systems_python(tmp_path, system):
    """The node's Python as it is written to the node (stripped), byte-compiled by that
    system's python3 (Alibaba Cloud Linux 3: 3.6, no `:=`, no builtin generics)."""
    spec = dataclasses.replace(TRAINING, scaling_group_id="asg-1", lifecycle_hook_id="ash-1",
                               nvlink_types=frozenset({"ecs.gn8v-8x.48xlarge"}),
                               grid=GridPackage("bucket", "grid.run"))
    compiled = []
    for path, (content, _) in node_files(spec).items():
        if content.startswith("#!/usr/bin/env python3") or path.endswith(".py"):
            source = tmp_path / Path(path).name
            source.write_text(content)
            done = subprocess.run([python_of(system), "-m", "py_compile", str(source)],
                                  capture_output=True, text=True, check=False)
            assert done.returncode == 0, (path, done.stderr)
            compiled.append(Path(path).name)
    assert {"gpu-infra-api", "gpu_infra_scale_out.py", "gpu_infra_gpus.py",
            "gpu_infra_peers.py"} <= set(compiled)


@pytest.mark.slow  # the image build tasks in a dash sandbox
@pytest.mark.parametrize("spec", [TRAINING, SCALING])
def test_image_build_tasks_run_under_dash(tmp_path, spec):
    """Cloud Assistant runs each task with `sh -c`: dash on Ubuntu (`set -o pipefail` is an
    illegal option there)."""
    sandbox = Sandbox(tmp_path)
    for task in bake_tasks(spec):
        if task.command is None or not task.name.startswith("Write"):
            continue
        done = subprocess.run([dash(), "-c", task.command], env=sandbox.env(),
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, (task.name, done.stderr)
    assert (sandbox.root / "opt/gpu-infra/bootstrap.sh").exists()
    assert (sandbox.root / "opt/gpu-infra/probe.sh").exists()
