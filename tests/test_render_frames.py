"""The render worker on a node, end to end, under each system's own python3: the worker program
the node tools install takes jobs from the MNS stand-in, runs them through the docker
stand-in (tests/container_standins.py) and uploads the frames to the OSS stand-in
(tests/fake_node_cloud.py). A frame rendered and its message deleted; a failed render left
for retry; a message that is no job ends in the dead-letter queue; a drain mid-job hands the
job back (tests/test_drain.py's contract) and the worker leaves it alone; a stop mid-job hands
it back at once."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpu_infra.blocks.bootstrap import (
    BootstrapSpec,
    RenderWorker,
    drain_command,
    node_tools_installer,
    step_source,
    with_node_tools,
)
from gpu_infra_facts import node_stack

from .bootstrap_sandbox import INSTANCE_TYPE, OS_RELEASES, Sandbox
from .container_standins import docker_runs
from .fake_node_cloud import FakeNodeCloud
from .node_systems import PYTHONS, dash, python_of

pytestmark = pytest.mark.slow  # runs the worker under the node's Python

QUEUE, DEAD, BUCKET = "r01-gpu-jobs-queue", "r01-gpu-jobs-dead", "r01-dev-outputs"
IMAGE = "registry-vpc.cn-hangzhou.aliyuncs.com/r01/blender:4.2.3"
WORKER = RenderWorker(queue=QUEUE, image=IMAGE, command=("blender",),
                      environment={"CYCLES_DEVICE": "OPTIX"}, gpus="all", bucket=BUCKET,
                      visibility_seconds=3, work_dir="/mnt/scratch/gpu-infra-render",
                      mounts=("/mnt/shared",))
SPEC = with_node_tools(BootstrapSpec(
    fleet="r01-gpu", region="cn-hangzhou", gpu_counts={INSTANCE_TYPE: 1},
    route="auto_install", driver=node_stack.DEFAULT_DRIVER_STACK, data_disks=("scratch",),
    returns_jobs=True, render_worker=WORKER), "r01-dev-datasets")
RENDER = r'''
# the render: blender's arguments; writes the frame `-f N` to /output (its host directory
# from the --volume docker got), waits RENDER_SECONDS, exits RENDER_STATUS
out=$(printf '%s\n' $DOCKER_VOLUMES | sed -n 's|:/output$||p')
while [ $# -gt 0 ]; do [ "$1" = -f ] && frame=$2; shift; done
echo "frame $frame by $GPU_INFRA_JOB_ID on $CYCLES_DEVICE caps $NVIDIA_DRIVER_CAPABILITIES" \
  > "$out/f_$frame.png"
/bin/sleep "${RENDER_SECONDS:-0}"
exit "${RENDER_STATUS:-0}"
'''


@dataclass
class Node:
    """A booted render node of the sandbox; the worker runs under `python` as its unit
    would, its cloud client pointed at `cloud`."""

    sandbox: Sandbox
    python: str
    cloud: FakeNodeCloud

    @property
    def dir(self) -> Path:
        return self.sandbox.dir

    @property
    def root(self) -> Path:
        return self.sandbox.root

    def env(self, **extra: str) -> dict[str, str]:
        return {**self.sandbox.env(), **extra}

    def start(self, **extra: str) -> subprocess.Popen[str]:
        """The unit's ExecStart (python3 gpu_infra_render.py) under this node's python."""
        unit = (self.root / "etc/systemd/system/gpu-infra-render.service").read_text()
        [command] = [line.removeprefix("ExecStart=") for line in unit.splitlines()
                     if line.startswith("ExecStart=")]
        _, program = command.split()
        return subprocess.Popen([self.python, str(self.root / program.lstrip("/"))],
                                env=self.env(**extra), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)

    def jobs(self) -> list[str]:
        """The job files (the worker makes their directory when it starts)."""
        directory = self.root / "var/lib/gpu-infra/jobs"
        return sorted(p.name for p in directory.iterdir()) if directory.is_dir() else []


def render_node(directory: Path, cloud: FakeNodeCloud, system: str) -> Node:
    """A render node booted in the sandbox from its user data and node tools: the container
    runtime installed by its step (docker answers nothing before), the worker's unit enabled
    and started by the render_worker step; then its client pointed at the stand-in cloud."""
    assert SPEC.node_tools is not None
    sandbox = Sandbox(directory, gpus=1, os_release=OS_RELEASES[system])
    stored = sandbox.dir / "objects" / SPEC.node_tools.key
    stored.parent.mkdir(parents=True, exist_ok=True)
    stored.write_text(node_tools_installer(SPEC))
    (sandbox.dir / "bin/python3").symlink_to(python_of(system))
    assert sandbox.install(SPEC).code == 0
    boot = sandbox.boot()
    assert boot.code == 0, boot.output
    assert "systemctl enable gpu-infra-render.service" in boot.calls
    assert "systemctl restart --no-block gpu-infra-render.service" in boot.calls
    config = sandbox.root / "opt/gpu-infra/config.sh"
    config.write_text(config.read_text() + "".join(
        f"{key}={value}\n" for key, value in cloud.settings("i-render1").items()))
    (sandbox.root / "mnt/shared").mkdir(parents=True, exist_ok=True)
    hooks = sandbox.dir / "containers"
    hooks.mkdir()
    (hooks / IMAGE.replace("/", "_").replace(":", "_").replace("@", "_")).write_text(RENDER)
    return Node(sandbox, python_of(system), cloud)


@pytest.fixture(params=sorted(PYTHONS))
def node(request, tmp_path) -> Iterator[Node]:
    with FakeNodeCloud([]) as cloud:
        cloud.state.region = "cn-hangzhou"
        cloud.state.queues.visibility[QUEUE] = WORKER.visibility_seconds
        yield render_node(tmp_path, cloud, request.param)


def until(condition: Callable[[], bool], worker: subprocess.Popen[str],
          seconds: float = 60) -> None:
    """Wait for `condition`; past `seconds`, fail with what the worker said."""
    end = time.time() + seconds
    while not condition():
        if time.time() > end or worker.poll() is not None:
            worker.kill()
            pytest.fail(f"timed out; the worker said:\n{worker.communicate()[0]}")
        time.sleep(0.05)


def stopped(process: subprocess.Popen[str]) -> str:
    """SIGTERM (a stop of the unit) and the worker's output; it must exit 0."""
    process.send_signal(signal.SIGTERM)
    output = process.communicate(timeout=90)[0]
    assert process.returncode == 0, output
    assert "Traceback" not in output, output
    return output


def test_a_frame_is_rendered_uploaded_and_its_message_deleted(node):
    """The job's args follow the command; the render sees the worker's environment, its job
    id and every driver capability; its visibility is renewed while it renders (3 s timeout,
    a 4 s render), and the delete uses the renewed receipt handle."""
    queues = node.cloud.state.queues
    message = queues.send(QUEUE, json.dumps({"args": ["-b", "/mnt/shared/s.blend", "-f", "7"],
                                             "output": "shot010/"}))
    worker = node.start(RENDER_SECONDS="4")
    until(lambda: queues.deleted == [(QUEUE, message)], worker)
    output = stopped(worker)
    content, _ = node.cloud.state.objects[(BUCKET, "shot010/f_7.png")]
    assert content.decode() == (f"frame 7 by {message} on OPTIX caps "
                                "compute,graphics,utility,video\n")
    [run] = docker_runs(node.dir)
    assert run.image == IMAGE and run.command == ["blender", "-b", "/mnt/shared/s.blend",
                                                  "-f", "7"]
    assert run.options["--gpus"] == ["all"] and "--rm" in run.flags
    assert f"{node.root}/mnt/shared:/mnt/shared" in run.options["--volume"]
    assert {"CYCLES_DEVICE", "GPU_INFRA_JOB_ID"} <= set(run.options["--env"])
    renewals = [seconds for _, _, seconds in node.cloud.state.visibility]
    assert renewals and set(renewals) == {3}  # renewed by the job timeout, never handed back
    assert node.jobs() == []
    assert f"job {message} done" in output and f"oss://{BUCKET}/shot010/" in output


def test_a_failed_render_leaves_the_message_for_a_retry(node):
    queues = node.cloud.state.queues
    queues.send(QUEUE, json.dumps({"args": ["-f", "1"]}))
    worker = node.start(RENDER_STATUS="3")
    until(lambda: bool(node.cloud.state.visibility), worker)
    output = stopped(worker)
    assert queues.deleted == [] and len(queues.bodies(QUEUE)) == 1
    assert node.cloud.state.visibility[0][2] == 60  # back in RETRY_SECONDS
    assert node.cloud.state.puts == []
    assert "failed: exit 3" in output and node.jobs() == []


def test_a_message_that_is_no_job_ends_in_the_dead_letter_queue(node):
    """Handed back at once each time; the queue's policy (here 2 receives) moves it."""
    queues = node.cloud.state.queues
    queues.dead_letter[QUEUE] = (DEAD, 2)
    queues.send(QUEUE, "render frame 7 please")
    worker = node.start()
    until(lambda: queues.bodies(DEAD) == ["render frame 7 please"], worker)
    output = stopped(worker)
    assert output.count("is not a job: the body is neither JSON") == 2
    assert docker_runs(node.dir) == []


def test_a_drain_mid_job_hands_it_back_and_the_worker_leaves_it(node):
    """The drain (dash, as Cloud Assistant runs it) reaches its 1 s limit with the frame
    rendering: it moves the job file and returns the message with the receipt handle on its
    first line; the worker stops the container, returns the message too with the newest
    handle it holds (a renewal may have replaced the one the drain read), deletes nothing
    and takes no more work while the node drains. The message is visible again at once."""
    queues = node.cloud.state.queues
    message = queues.send(QUEUE, json.dumps({"args": ["-f", "2"]}))
    worker = node.start(RENDER_SECONDS="60")
    until(lambda: node.jobs() == [message], worker)
    drain = subprocess.run([dash(), "-c", drain_command(1, (), QUEUE)], env=node.env(),
                           capture_output=True, text=True, timeout=90)
    assert drain.returncode == 0, drain.stdout + drain.stderr
    assert "limit of 1s reached: handed back 1 job(s)" in drain.stdout
    until(lambda: not (node.dir / "state" / f"running-gpu-infra-render-{message}").exists(),
          worker)
    [waiting] = queues.messages[QUEUE]
    until(lambda: waiting.visible_at <= time.time(), worker, 5)  # visible again at once
    output = stopped(worker)
    assert f"job {message} handed back by the drain" in output
    assert queues.deleted == [] and node.cloud.state.puts == []
    assert len(docker_runs(node.dir)) == 1  # draining: no other job taken


def test_a_stop_mid_job_hands_it_back_at_once(node):
    queues = node.cloud.state.queues
    message = queues.send(QUEUE, json.dumps({"args": ["-f", "3"]}))
    worker = node.start(RENDER_SECONDS="60")
    until(lambda: node.jobs() == [message], worker)
    output = stopped(worker)
    assert f"handed back {message} (the worker stopped)" in output
    assert node.cloud.state.visibility[-1][2] == 1 and queues.deleted == []
    assert node.jobs() == []


WORKER_COMMAND = re.compile(r'\[\s*"(docker)"|BIN_DIR \+ "/([\w-]+)"')
"""A command the worker runs: `["docker", ...]` or a node tool `BIN_DIR + "/name"`."""


def test_every_command_the_worker_runs_is_installed_by_the_node(tmp_path):
    """docker answers only once the container runtime step installed it (the stand-in exits
    127 before); each node tool is a file the user data or the node tools write; python3 of
    the unit is the system's own (every supported image has one: node_systems)."""
    source = step_source("gpu_infra_render.py")
    commands = {a or b for a, b in WORKER_COMMAND.findall(source)}
    assert commands == {"docker", "gpu-infra-pull"}
    with FakeNodeCloud([]) as cloud:
        node = render_node(tmp_path, cloud, "ubuntu-22.04")
    for command in sorted(commands):
        if command == "docker":
            done = subprocess.run(["docker", "--version"], env=node.env(),
                                  capture_output=True, text=True, check=False)
            assert done.returncode == 0, done.stderr
            assert "docker-ce" in (node.dir / "calls.log").read_text()  # by the runtime step
        else:
            tool = node.root / "opt/gpu-infra/bin" / command
            assert tool.is_file() and tool.stat().st_mode & 0o111, command
    unit = (node.root / "etc/systemd/system/gpu-infra-render.service").read_text()
    assert "ExecStart=/usr/bin/python3 /opt/gpu-infra/bin/gpu_infra_render.py" in unit
