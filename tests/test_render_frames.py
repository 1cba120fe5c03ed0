"""The render worker on a node, end to end, under each system's own python3: the worker program
the node tools install takes jobs from the MNS stand-in, runs them through the docker
stand-in (tests/container_standins.py) and uploads the frames to the OSS stand-in
(tests/fake_node_cloud.py). A frame rendered and its message deleted; a failed render left
for retry; a message that is no job ends in the dead-letter queue; a drain mid-job hands the
job back (tests/test_drain.py's contract) and the worker leaves it alone; a stop mid-job hands
it back at once."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpu_infra.blocks.bootstrap import (
    BootstrapSpec,
    RenderWorker,
    drain_command,
    node_tools_installer,
    user_data,
    with_node_tools,
)
from gpu_infra_facts import node_stack

from .bootstrap_sandbox import INSTANCE_TYPE
from .container_standins import docker_runs
from .fake_node_cloud import FakeNodeCloud
from .node_systems import PYTHONS, dash
from .render_node import (
    Node,
    boot_render_node,
    container_hook,
    new_sandbox,
    stopped,
    until,
)
from .test_workload_commands import PACKAGES, closure

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


def render_node(directory: Path, cloud: FakeNodeCloud, system: str) -> Node:
    """A render node of SPEC booted in the sandbox, the render of RENDER in its image."""
    assert SPEC.node_tools is not None
    sandbox = new_sandbox(directory, system)
    node = boot_render_node(sandbox, cloud, system, user_data(SPEC),
                            {SPEC.node_tools.key: node_tools_installer(SPEC)})
    container_hook(sandbox, IMAGE, RENDER)
    return node


@pytest.fixture(params=sorted(PYTHONS))
def node(request, tmp_path) -> Iterator[Node]:
    with FakeNodeCloud([]) as cloud:
        cloud.state.region = "cn-hangzhou"
        cloud.state.queues.visibility[QUEUE] = WORKER.visibility_seconds
        yield render_node(tmp_path, cloud, request.param)


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


def test_every_command_the_worker_runs_is_installed_on_a_booted_node(tmp_path):
    """The commands and node tools the worker's unit needs (tests/test_workload_commands.py
    reads them from the unit and its programs), on a booted node: docker answers only once
    the container runtime step installed it (the stand-in exits 127 before); each node tool
    is a file the user data or the node tools wrote."""
    commands, tools = closure("gpu-infra-render.service")
    assert PACKAGES.keys() & commands.keys() == {"docker"}
    with FakeNodeCloud([]) as cloud:
        node = render_node(tmp_path, cloud, "ubuntu-22.04")
    done = subprocess.run(["docker", "--version"], env=node.env(), capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "docker-ce" in (node.dir / "calls.log").read_text()  # by the runtime step
    assert {"gpu_infra_render.py", "gpu-infra-pull", "gpu-infra-api"} <= tools
    for tool in tools:
        assert (node.root / "opt/gpu-infra/bin" / tool).is_file(), tool
