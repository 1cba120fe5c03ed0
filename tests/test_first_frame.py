"""The rendering page's three commands, from `pulumi up` to the first rendered frame, run as
written against the sandbox, for the shipped rendering-batch stack:

1. `pulumi up`: the stack is planned (tests/shipped.py) and a node of its scaling group is
   booted in the node sandbox from the planned user data, with the planned objects in its
   bucket (the node tools) and the GRID package the stack names; its calls are authorized by
   the policies the plan attaches to the node role (tests/fake_node_cloud.py plays RAM).
2. `gpu-infra submit`: the documented line, run by the CLI against the account stand-in
   (tests/alibaba_standin.py: the user's credentials, STS GetCallerIdentity, MNS SendMessage),
   whose job queue is the one the node's worker receives from.
3. `ossutil cp oss://BUCKET/KEY .`: the object is checked in the OSS stand-in (ossutil itself
   is not run): a PNG that Blender's stand-in wrote for frame 1.

The image is pulled from the stack's registry (the login the nodes make with their role) and
the render runs in the docker stand-in, where BLENDER plays Blender's command line. The seconds
from the submission to the frame in the bucket are printed (the "first frame" figure)."""

from __future__ import annotations

import json
import shlex
import time

import pytest

from gpu_infra_facts import types as t
from gpu_infra_tools.cli import main
from gpu_infra_tools.cli.account import ENDPOINT_VARIABLE
from gpu_infra_tools.plan.engine import Plan

from .alibaba_standin import KEY_ID, SECRET, Account, serving
from .conftest import PROJECT_DIR
from .container_standins import docker_runs
from .fake_node_cloud import FakeNodeCloud
from .mns_queues import Queues
from .render_node import boot_render_node, container_hook, new_sandbox, stopped, until
from .shipped import plan_shipped_once, shipped_plan

pytestmark = pytest.mark.slow  # plans a stack, boots a node, runs the worker

STACK = "rendering-batch"
PAGE = PROJECT_DIR / "docs/layouts/rendering.md"
HEADING = "### On ECS: from `pulumi up` to the first rendered frame in three commands"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
BLENDER = r'''
# Blender's command line as the worker's jobs use it (docs.blender.org, "Command Line
# Arguments"), processed in order: -b FILE loads the scene (a missing file: "Error: Cannot
# read file", exit 1), -o PATH sets the output path (a run of # is the frame, zero-padded to
# its length; the extension of the output format, PNG by default, is appended), -f N renders
# frame N and prints "Saved: 'PATH'". Container paths are mapped to the host through the
# --volume values docker got (DOCKER_VOLUMES).
host() {
  for volume in $DOCKER_VOLUMES; do
    inside=${volume#*:}
    case $1 in "$inside"/*) echo "${volume%%:*}${1#"$inside"}"; return ;; esac
  done
  echo "$1"
}
scene="" output=/tmp/
while [ $# -gt 0 ]; do
  case $1 in
    blender) shift ;;
    -b) scene=$2; shift 2
        [ -f "$(host "$scene")" ] || { echo "Error: Cannot read file '$scene'"; exit 1; } ;;
    -o) output=$2; shift 2 ;;
    -f) [ -n "$scene" ] || { echo "Error: no blend file loaded"; exit 1; }
        hashes=$(printf '%s' "$output" | grep -o '#*' | sort | tail -1)
        frame=$(printf "%0${#hashes}d" "$2")
        [ -n "$hashes" ] || { frame=$(printf '%04d' "$2"); output="$output#"; hashes="#"; }
        path="${output%"$hashes"*}$frame${output##*"$hashes"}.png"
        printf '\211PNG\r\n\032\nframe %s of %s\n' "$2" "$scene" > "$(host "$path")"
        echo "Saved: '$path'"
        shift 2 ;;
    *) shift ;;
  esac
done
'''


def walk() -> list[str]:
    """The commands of the page's first-frame walk (its first sh block after HEADING)."""
    text = PAGE.read_text()
    assert HEADING in text, f"{PAGE.name} lost its heading {HEADING!r}"
    block = text.split(HEADING, 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return block.strip().splitlines()


def node_policy(plan: Plan) -> str:
    """One document with every statement of the policies the plan attaches to the node role."""
    role = plan.outputs["role_name"]
    attached = {a.inputs["policyName"] for a in plan.by_type(t.RAM_ROLE_POLICY_ATTACHMENT)
                if a.inputs["roleName"] == role}
    statements = [statement for policy in plan.by_type(t.RAM_POLICY)
                  if policy.inputs["policyName"] in attached
                  for statement in json.loads(policy.inputs["policyDocument"])["Statement"]]
    return json.dumps({"Version": "1", "Statement": statements})


class SharedQueue(list[str]):
    """The account stand-in's queue: a body SendMessage accepts also reaches the node cloud's
    queue of the same name (one MNS, reached with the user's and with the node's
    credentials)."""

    def __init__(self, queues: Queues, name: str) -> None:
        super().__init__()
        self.queues, self.name = queues, name

    def append(self, body: str) -> None:
        super().append(body)
        self.queues.send(self.name, body)


def test_the_first_frame_walk_works_as_written(tmp_path, monkeypatch, capsys):
    up, submit_line, fetch = walk()
    assert up == f"pulumi up --stack {STACK}"
    plan = shipped_plan(STACK)
    cluster, outputs = plan.cluster, plan.outputs
    queue, bucket = outputs["job_queue"], outputs["bucket_names"]["outputs"]
    worker = getattr(cluster, "worker", None)
    assert worker is not None, f"{STACK} ships no worker"
    [config] = plan.by_type(t.SCALING_CONFIGURATION)
    objects = {o.inputs["key"]: o.inputs["content"] for o in plan.by_type(t.BUCKET_OBJECT)}

    sandbox = new_sandbox(tmp_path / "node", "alinux-3")
    (sandbox.dir / "meta/instance/instance-type").write_text(cluster.fleet.instance_types[0])
    (sandbox.dir / "grid.run").write_text(  # the GRID package the stack names
        f'#!/bin/sh\necho {cluster.fleet.driver.version} > "$SANDBOX/state/driver"\n')
    registry = worker.image.split("/", 1)[0]
    assert registry == outputs["registry_address"], "the worker's image is not in the registry"
    (sandbox.dir / "registry-host").write_text(registry)
    (sandbox.dir / "registry-password").write_text("temporary-token")
    with FakeNodeCloud([], policy=node_policy(plan), fleet=outputs["fleet_name"]) as cloud:
        cloud.state.region = plan.cluster.region
        node = boot_render_node(sandbox, cloud, "alinux-3", config.inputs["userData"], objects)
        container_hook(sandbox, worker.image, BLENDER)
        (node.root / "mnt/shared/shot010.blend").write_text("BLENDER-v402 scene\n")
        running = node.start()

        plan_shipped_once(monkeypatch)
        monkeypatch.chdir(PROJECT_DIR)
        for name in ("ALICLOUD_ACCESS_KEY", "ALICLOUD_SECRET_KEY", "ALIBABA_CLOUD_ECS_METADATA",
                     "ALIBABA_CLOUD_SECURITY_TOKEN"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("HOME", str(tmp_path))
        monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", KEY_ID)
        monkeypatch.setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", SECRET)
        words = shlex.split(submit_line)
        assert words[:3] == [".venv/bin/gpu-infra", "submit", STACK], submit_line
        account = Account(queues={queue: SharedQueue(cloud.state.queues, queue)})
        with serving(account) as stand_in:
            monkeypatch.setenv(ENDPOINT_VARIABLE, stand_in.url)
            submitted = time.monotonic()
            assert main(words[1:]) == 0, capsys.readouterr().err
        assert capsys.readouterr().out.splitlines()[-1] == f"sent 240 job(s) to {queue}"

        tool, command, source, target = shlex.split(fetch)
        assert (tool, command, target) == ("ossutil", "cp", ".")
        fetched_bucket, key = source.removeprefix("oss://").split("/", 1)
        assert fetched_bucket == bucket
        until(lambda: (bucket, key) in cloud.state.objects, running, 120)
        seconds = time.monotonic() - submitted
        output = stopped(running)
    content, _ = cloud.state.objects[(bucket, key)]
    assert content.startswith(PNG_SIGNATURE)
    assert content.endswith(b"frame 1 of /mnt/shared/shot010.blend\n")
    assert f"oss://{bucket}/renders/" in output
    first = next(run for run in docker_runs(sandbox.dir) if run.image == worker.image)
    assert first.command[-2:] == ["-f", "1"]
    assert (sandbox.state / "docker-logins" / registry).is_file()  # the role's login
    assert cloud.state.denied == []
    print(f"first frame: {seconds:.1f} s from the submission to the frame in the bucket")


def test_the_walk_names_the_stack_s_own_bucket_and_the_worker_s_output_name():
    """A change of the stack's outputs bucket or of the page's Blender arguments is caught
    without booting a node."""
    _, submit_line, fetch = walk()
    bucket = shipped_plan(STACK).outputs["bucket_names"]["outputs"]
    arguments = shlex.split(shlex.split(submit_line)[-1])
    pattern = arguments[arguments.index("-o") + 1]
    assert pattern.startswith("/output/")
    name = pattern.removeprefix("/output/").replace("####", "0001") + ".png"
    assert shlex.split(fetch)[2] == f"oss://{bucket}/renders/{name}"

