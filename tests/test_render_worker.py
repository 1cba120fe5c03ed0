"""The render farm's worker: the `worker` section, what the plan makes of it (the job queue's
dead-letter queue, the worker's settings in the node tools, its step before the readiness
check), and the node's queue client under each system's own Python against the MNS
stand-in (receive with a visibility timeout, renew with a new receipt handle, delete,
dead-letter after the most receives)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from gpu_infra.blocks.bootstrap import (
    BootstrapSpec,
    RenderWorker,
    node_files,
    node_tools_files,
)
from gpu_infra.schema.loader import ConfigError
from gpu_infra_facts import node_stack
from gpu_infra_facts import types as t

from .bootstrap_sandbox import planned_steps
from .conftest import BASE_RENDERING, cluster_config, merged
from .fake_node_cloud import FakeNodeCloud
from .node_systems import PYTHONS, python_of

WORKER = {"image": "registry-vpc.cn-hangzhou.aliyuncs.com/r01/blender:4.2.3",
          "command": ["blender"], "environment": {"CYCLES_DEVICE": "OPTIX"}}
RENDER_FARM = merged(BASE_RENDERING, fleet={**BASE_RENDERING["fleet"], "queue_scaling": {}},
                     worker=WORKER, registry={"repositories": ["blender"]})


def problems(cluster: dict) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        cluster_config(cluster)
    return raised.value.problems


def test_a_worker_is_one_container_description():
    worker = cluster_config(RENDER_FARM).worker
    assert (worker.image, worker.command, worker.gpus, worker.max_attempts) == (
        WORKER["image"], ["blender"], None, 5)


@pytest.mark.parametrize("environment, found", [
    ({"RENDER_API_TOKEN": "abc"}, "RENDER_API_TOKEN holds a secret in clear"),
    ({"LICENSE": "password=Hunter2Hunter2x"}, "LICENSE holds a secret in clear"),
    ({"NVIDIA_VISIBLE_DEVICES": "0"}, "'NVIDIA_VISIBLE_DEVICES' is not a variable name"),
    ({"1X": "y"}, "'1X' is not a variable name")])
def test_the_environment_holds_no_secret_and_no_name_the_worker_sets(environment, found):
    lines = problems(merged(RENDER_FARM, worker={**WORKER, "environment": environment}))
    assert len(lines) == 1 and lines[0].startswith("gpu-infra:cluster.worker.environment")
    assert found in lines[0]
    assert "abc" not in lines[0] and "Hunter2" not in lines[0]


def test_a_worker_needs_the_stacks_queue_and_fits_the_fleet():
    lines = problems(merged(BASE_RENDERING, worker={**WORKER, "gpus": 2}))
    assert any("worker: takes its jobs from the stack's job queue" in line for line in lines)
    assert any("worker.gpus: 2 GPUs do not fit the fleet's smallest instance type (1 GPUs)"
               in line for line in lines)
    bad_image = problems(merged(RENDER_FARM, worker={**WORKER, "image": "Blender latest"}))
    assert len(bad_image) == 1 and "worker.image" in bad_image[0]


@pytest.mark.parametrize("registry", [{"repositories": ["train", "serve"]},
                                      {"repositories": ["blender"], "namespace": "studio"}])
def test_an_image_of_the_stack_s_registry_names_one_of_its_repositories(registry):
    """Personal edition (dev): the registry is registry-vpc.<region>.aliyuncs.com, namespace
    the cluster's name; the image must name a listed repository there."""
    [line] = problems(merged(RENDER_FARM, registry=registry))
    assert line.startswith("gpu-infra:cluster.worker.image: r01/blender is not a repository "
                           "of the stack's registry (")
    assert "list it in registry.repositories" in line
    mirrored = merged(RENDER_FARM, registry={"repositories": ["train"], "mirrored": ["blender"]},
                      worker={**WORKER, "image": WORKER["image"].replace("/r01/", "/r01-mirror/")})
    assert cluster_config(mirrored).worker is not None
    elsewhere = merged(RENDER_FARM, registry={"repositories": []},
                       worker={**WORKER, "image": "docker.io/x/y:1"})
    assert cluster_config(elsewhere).worker is not None  # another registry: not the stack's


@pytest.mark.slow  # plans a render farm
def test_the_plan_gives_the_queue_a_dead_letter_queue_and_the_nodes_the_worker(plan_cluster):
    plan = plan_cluster(RENDER_FARM)
    queues = {q.inputs["queueName"]: q.inputs for q in plan.by_type(t.MNS_QUEUE)}
    job_queue = plan.outputs["job_queue"]
    assert set(queues) == {job_queue, "r01-gpu-jobs-dead"}
    assert queues[job_queue]["dlqPolicy"] == {
        "enabled": True, "deadLetterTargetQueue": "r01-gpu-jobs-dead", "maxReceiveCount": 5}
    assert queues["r01-gpu-jobs-dead"]["messageRetentionPeriod"] == 604800
    [tools] = [o.inputs["content"] for o in plan.by_type(t.BUCKET_OBJECT)
               if o.name.endswith("-node-tools")]
    settings = json.loads(re.search(
        r"w /etc/gpu-infra/render.json 644 <<'GPU_INFRA_EOF'\n(.*?)\nGPU_INFRA_EOF",
        tools, re.S)[1])
    assert settings["queue"] == job_queue
    assert settings["bucket"] == plan.outputs["bucket_names"]["outputs"]
    assert (settings["image"], settings["command"], settings["gpus"]) == (
        WORKER["image"], ["blender"], "all")
    assert settings["visibility_seconds"] == queues[job_queue]["visibilityTimeout"]
    for path in ("/opt/gpu-infra/bin/gpu_infra_render.py",
                 "/etc/systemd/system/gpu-infra-render.service"):
        assert f"w {path} " in tools
    [config] = plan.by_type(t.SCALING_CONFIGURATION)
    steps = planned_steps(config.inputs["userData"])
    assert steps.index("render_worker") == steps.index("health") - 1


def test_a_farm_without_a_worker_runs_none():
    spec = BootstrapSpec(fleet="r01-gpu", region="cn-hangzhou", gpu_counts={}, route="grid",
                         driver=node_stack.DEFAULT_DRIVER_STACK, returns_jobs=True)
    assert "render_worker" not in spec.node_steps()
    assert not any("render" in path for path in node_tools_files(spec))


QUEUE = "r01-gpu-jobs-queue"
CLIENT = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import gpu_infra_queue as q
from gpu_infra_node import api
node = api()
base = q.endpoint(node)
out = {}
first = q.receive(node, base, "QUEUE", 30)
out["first"] = first
out["renewed"] = q.visible_again(node, base, "QUEUE", first["ReceiptHandle"], 600)
out["stale_renew"] = q.visible_again(node, base, "QUEUE", first["ReceiptHandle"], 600)
out["stale_delete"] = q.delete(node, base, "QUEUE", first["ReceiptHandle"])
out["deleted"] = q.delete(node, base, "QUEUE", out["renewed"])
out["second"] = q.receive(node, base, "QUEUE", 30)
out["back"] = q.visible_again(node, base, "QUEUE", out["second"]["ReceiptHandle"])
out["empty"] = q.receive(node, base, "QUEUE", 1)
print(json.dumps(out))
'''.replace("QUEUE", QUEUE)


def node_with_tools(directory: Path, cloud: FakeNodeCloud) -> Path:
    """A render node's gpu-infra-api and node tools (config.sh pointing at the stand-in)."""
    worker = RenderWorker(queue=QUEUE, image="img", command=(), environment={}, gpus="all",
                          bucket="r01-dev-outputs", visibility_seconds=60, work_dir="/tmp")
    spec = BootstrapSpec(fleet="r01-gpu", region="cn-hangzhou", gpu_counts={}, route="grid",
                         driver=node_stack.DEFAULT_DRIVER_STACK, returns_jobs=True,
                         render_worker=worker)
    root = directory / "root"
    for path, (content, _) in {**node_files(spec), **node_tools_files(spec)}.items():
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    (root / "opt/gpu-infra/config.sh").write_text("REGION=cn-hangzhou\n" + "".join(
        f"{key}={value}\n" for key, value in cloud.settings("i-render1").items()))
    return root


@pytest.mark.slow  # runs the node's Python
@pytest.mark.parametrize("system", sorted(PYTHONS))
def test_the_queue_client_receives_renews_and_deletes(tmp_path, system):
    """Each call as the API reference has it: a renewal answers a new receipt handle and the
    old one stops being valid (MessageNotExist: None, no exit); the job's second message is
    handed back at once; an empty queue answers None after its wait."""
    with FakeNodeCloud([]) as cloud:
        cloud.state.region = "cn-hangzhou"
        cloud.state.queues.visibility[QUEUE] = 60
        ids = [cloud.state.queues.send(QUEUE, body) for body in ('{"args": ["-f", "1"]}',
                                                                  '{"args": ["-f", "2"]}')]
        root = node_with_tools(tmp_path, cloud)
        done = subprocess.run([python_of(system), "-c", CLIENT, str(root / "opt/gpu-infra/bin")],
                              capture_output=True, text=True, timeout=120,
                              env={"GPU_INFRA_ROOT": str(root)})
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert (out["first"]["MessageId"], out["first"]["DequeueCount"]) == (ids[0], "1")
    assert out["first"]["MessageBody"] == '{"args": ["-f", "1"]}'
    assert out["renewed"] not in (None, out["first"]["ReceiptHandle"])
    assert (out["stale_renew"], out["stale_delete"], out["deleted"]) == (None, False, True)
    assert out["second"]["MessageId"] == ids[1] and out["back"] is not None
    assert out["empty"] is None or out["empty"]["MessageId"] == ids[1]
    assert cloud.state.queues.deleted == [(QUEUE, ids[0])]
    assert done.stderr == ""


def test_a_job_received_too_often_goes_to_the_dead_letter_queue():
    """The stand-in moves a message past MaxReceiveCount, as SMQ documents it."""
    with FakeNodeCloud([]) as cloud:
        queues = cloud.state.queues
        queues.visibility[QUEUE] = 60
        queues.dead_letter[QUEUE] = ("r01-gpu-jobs-dead", 2)
        queues.send(QUEUE, "poison")
        for attempt in (1, 2):
            message = queues.receive(QUEUE, 0)
            assert message is not None and message.dequeue_count == attempt
            assert queues.change(QUEUE, message.receipt or "", 1) is not None
            message.visible_at = 0  # its visibility ended
        assert queues.receive(QUEUE, 0) is None
        assert queues.bodies("r01-gpu-jobs-dead") == ["poison"]
