"""The first job on ECS, as docs/workloads/training-jobs.md writes it ("On ECS: from `pulumi
up` to a running job in three commands"): each block's three lines run as written under bash
against the node sandbox, for each shipped ECS training stack. Stand-ins: `pulumi` (`up`, and
`stack output` answering with the stack's planned outputs as Pulumi prints them: a string as
is, other values and `--json` as JSON), `skopeo copy` (records what reaches the registry) and
`aliyun` (ECS RunCommand as Cloud Assistant runs it: the script as root on the instance, here
the sandbox node with its paths moved under the sandbox; ESS DescribeScalingInstances listing
that node). The node is booted with its fleet's bootstrap (node 0 of the fixed nodes, or the
spot worker); its job unit then runs the job in the image the mirror command copied."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpu_infra.nodeplan.plans import SpotWorkers, TrainingNodes

from .bootstrap_sandbox import INSTANCE_TYPE
from .conftest import BASE_TRAINING, PROJECT_DIR, STACKS_DIR, cluster_config, merged
from .container_standins import docker_runs
from .shipped import shipped_plan
from .spot_sandbox import install
from .test_job_unit import booted, node_sandbox, run_unit
from .test_spot_reclaim import SPOT_TRAINING

PAGE = PROJECT_DIR / "docs/workloads/training-jobs.md"
HEADING = "## On ECS: from `pulumi up` to a running job in three commands"
FENCE = re.compile(r"^```sh\n(.*?)^```", re.MULTILINE | re.DOTALL)
FIXED = merged(BASE_TRAINING, fleet={"instance_type": INSTANCE_TYPE, "nodes": 2},
               storage={"shared_fs": {"enabled": True}})
SPOT = merged(SPOT_TRAINING, fleet={**SPOT_TRAINING["fleet"], "instance_type": INSTANCE_TYPE,
                                    "nodes": 1})
"""The sandbox node's type (8 GPUs, eRDMA) as node 0 of fixed nodes, or as a lone spot worker."""
WORKER_ID = "i-bp1spotworker0001"
TRAIN_SCRIPT = """import os, sys
with open(os.path.join(os.environ["SANDBOX"], "trainer.log"), "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
"""

PULUMI = '''
import json, os, sys
args = sys.argv[1:]
with open(os.path.join(os.environ["SANDBOX"], "cloud-calls.log"), "a") as log:
    log.write("pulumi " + " ".join(args) + "\\n")
if args[:1] == ["up"]:
    sys.exit(0)
if args[:2] != ["stack", "output"] or len(args) < 3:
    sys.exit("error: unknown command")
name, rest, stack, as_json = args[2], args[3:], None, False
while rest:
    if rest[0] == "--stack" and len(rest) > 1:
        stack, rest = rest[1], rest[2:]
    elif rest[0] == "--json":
        as_json, rest = True, rest[1:]
    else:
        sys.exit("error: unknown flag: " + rest[0])
outputs = json.load(open(os.path.join(os.environ["SANDBOX"], "outputs", stack + ".json")))
if name not in outputs:
    sys.exit("error: current stack does not have output property '{}'".format(name))
value = outputs[name]
print(value if isinstance(value, str) and not as_json else json.dumps(value, indent=2))
'''
"""`pulumi up` and `pulumi stack output NAME [--stack S] [--json]` (pulumi/pulumi
pkg/cmd/pulumi/stack_output.go: a string is printed as is, other values as JSON)."""

SKOPEO = '''
import os, sys
args = sys.argv[1:]
if args[:2] != ["copy", "--all"] or len(args) != 4 or \\
        not all(arg.startswith("docker://") for arg in args[2:]):
    sys.exit("FATA[0000] Invalid arguments")
with open(os.path.join(os.environ["SANDBOX"], "mirrored"), "a") as log:
    log.write(args[3][len("docker://"):] + "\\n")
'''
"""`skopeo copy --all docker://SOURCE docker://TARGET`: TARGET is in the registry."""

ALIYUN = '''
import json, os, subprocess, sys
cloud = json.load(open(os.path.join(os.environ["SANDBOX"], "cloud.json")))
product, api, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
params = dict(zip(rest[::2], rest[1::2]))
with open(os.path.join(os.environ["SANDBOX"], "cloud-calls.log"), "a") as log:
    log.write("aliyun {} {} {}\\n".format(product, api, sorted(params)))
def error(code, message):
    sys.exit("ERROR: SDK.ServerError\\nErrorCode: {}\\nMessage: {}".format(code, message))
if params.get("--RegionId") != cloud["region"]:
    error("InvalidRegionId.NotFound", "The specified RegionId does not exist.")
if (product, api) == ("ess", "DescribeScalingInstances"):
    if params.get("--ScalingGroupId") != cloud["group"]:
        error("InvalidScalingGroupId.NotFound", "The specified scaling group does not exist.")
    print(json.dumps({"TotalCount": 1, "RequestId": "5D3A0B2C", "ScalingInstances": {
        "ScalingInstance": [{"InstanceId": cloud["instance"], "HealthStatus": "Healthy",
                             "LifecycleState": "InService"}]}}, indent=2))
elif (product, api) == ("ecs", "RunCommand"):
    if params.get("--InstanceId.1") != cloud["instance"]:
        error("InvalidInstance.NotFound", "The specified instance does not exist.")
    if params.get("--Type") != "RunShellScript" or "--CommandContent" not in params:
        error("MissingParameter", "Type RunShellScript and CommandContent are required.")
    root, moved = cloud["root"], cloud["moved_etc"]
    script = params["--CommandContent"].replace("/etc/gpu-infra", moved).replace(
        "/opt/gpu-infra", root + "/opt/gpu-infra")
    done = subprocess.run(["dash", "-c", script], env=cloud["node_env"], cwd=root,
                          capture_output=True, text=True)
    with open(os.path.join(os.environ["SANDBOX"], "invocation.out"), "w") as out:
        out.write("exit {}\\n{}{}".format(done.returncode, done.stdout, done.stderr))
    print(json.dumps({"CommandId": "c-hz01", "InvokeId": "t-hz01", "RequestId": "6E4B"}))
else:
    error("InvalidAction.NotFound", "Specified api is not found.")
'''
"""`aliyun ecs RunCommand --RegionId R --Type RunShellScript --InstanceId.1 ID
--CommandContent TEXT` (ECS API RunCommand: ContentEncoding defaults to PlainText, the command
runs as root) and `aliyun ess DescribeScalingInstances --RegionId R --ScalingGroupId G` (its
JSON answer: ScalingInstances.ScalingInstance[].InstanceId)."""


def first_job_blocks() -> dict[str, list[str]]:
    """The page's three-command blocks by the stack they name."""
    text = PAGE.read_text()
    section = text[text.index(HEADING):]
    section = section[:section.find("\n## ", 1)]
    blocks = [block.splitlines() for block in FENCE.findall(section)]
    return {re.findall(r"--stack (\S+)", lines[0])[0]: lines for lines in blocks}


def moved_etc(root: Path, directory: Path) -> Path:
    """The node's /etc/gpu-infra as a script run on it sees it, its node paths moved under
    `root`: elastic.env rewritten, the other files linked (gpu-infra-peers rewrites them)."""
    directory.mkdir()
    for path in (root / "etc/gpu-infra").iterdir():
        if path.name != "elastic.env":
            (directory / path.name).symlink_to(path)
    lines = []
    for line in (root / "etc/gpu-infra/elastic.env").read_text().splitlines():
        key, _, value = line.partition("=")
        words = shlex.split(value)
        value = " ".join(f"{root}{word}" if word.startswith(("/mnt/", "/var/", "/run/"))
                         else word for word in words)
        lines.append(f"{key}={shlex.quote(value)}")
    (directory / "elastic.env").write_text("\n".join(lines) + "\n")
    return directory


@pytest.mark.slow  # a node boot, the documented commands and the job unit in a shell sandbox
@pytest.mark.parametrize("stack", ["training-prod", "training-dev"])
def test_the_three_documented_commands_start_the_first_job(tmp_path, stack):
    lines = first_job_blocks()[stack]
    assert len(lines) == 3 and lines[0].startswith("pulumi up --stack ")
    plan = shipped_plan(stack)
    region = yaml.safe_load((STACKS_DIR / f"Pulumi.{stack}.yaml").read_text())[
        "config"]["alicloud:region"]
    outputs = json.loads(json.dumps(plan.outputs))
    image = re.findall(r"^  JOB_IMAGE=(\S+) \\$", outputs["training_job"], re.MULTILINE)[0]
    fixed = stack == "training-prod"
    launch = (TrainingNodes(cluster_config(FIXED)) if fixed else
              SpotWorkers(cluster_config(SPOT))).bootstrap_spec(
        "t01-gpu", shared_fs_source="nas.example:/share")
    node = booted(node_sandbox(tmp_path / "node", launch, image=image))
    (node.root / "mnt/shared/train.py").write_text(TRAIN_SCRIPT)
    instance = outputs["instance_ids"][0] if fixed else WORKER_ID
    (node.dir / "outputs").mkdir()
    (node.dir / "outputs" / f"{stack}.json").write_text(json.dumps(outputs))
    (node.dir / "cloud.json").write_text(json.dumps({
        "region": region, "instance": instance,
        "group": outputs.get("spot_scaling_group_id"), "root": str(node.root),
        "node_env": node.env(), "moved_etc": str(moved_etc(node.root, tmp_path / "etc"))}))
    python = f"#!{sys.executable}\n"
    install(tmp_path / "cloud", {"pulumi": python + PULUMI, "skopeo": python + SKOPEO,
                                 "aliyun": python + ALIYUN})
    work = tmp_path / "work"
    work.mkdir()
    for name in (".venv", "stacks", "Pulumi.yaml", "policies"):
        (work / name).symlink_to(PROJECT_DIR / name)
    typed = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", "\n".join(lines)], cwd=work, text=True,
        capture_output=True, env={**os.environ, "SANDBOX": str(node.dir),
                                  "PATH": f"{tmp_path / 'cloud'}:{os.environ['PATH']}"})
    assert typed.returncode == 0, typed.stderr
    assert json.loads(typed.stdout.splitlines()[-1])["InvokeId"] == "t-hz01"
    invocation = (node.dir / "invocation.out").read_text()
    assert invocation.startswith("exit 0\n"), invocation
    assert "every ready node joins it within 10 s" in invocation
    mirrored = (node.dir / "mirrored").read_text().splitlines()
    assert image.split("@")[0] in mirrored  # the job's image is one the mirror command copied
    out = run_unit(node, "/mnt/shared/.gpu-infra/job/" + re.findall(
        r"^JOB_ID=(\S+)$", (node.root / "mnt/shared/.gpu-infra/job/job.env").read_text(),
        re.MULTILINE)[0] + ".done")
    assert "finished" in out, out
    (run,) = [run for run in docker_runs(node.dir) if run.image == image]
    assert run.command == ["/opt/gpu-infra/bin/gpu-infra-torchrun", "/mnt/shared/train.py",
                           "--epochs", "3"]
    assert (node.dir / "trainer.log").read_text() == "--epochs 3\n"
