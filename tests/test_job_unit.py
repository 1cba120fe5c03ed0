"""The ECS job unit in the node sandbox: a node booted with its bootstrap (the container
runtime installed by its step, the job unit by the node tools) finds the job `gpu-infra job`
describes on the shared file system, pulls the image through gpu-infra-pull and runs elastic
torchrun in a container with the GPUs, eRDMA, host network and IPC and its data paths. The
job's commands run inside the image, which brings torchrun and python3 (jobs.TRAINING_IMAGE);
the host's are the ones the node's steps install. A spot worker that replaces a reclaimed one
joins the running job by itself and resumes from the newest complete checkpoint. The shell
scripts run under dash, as on Ubuntu; tests/spot_sandbox.py says what is a stand-in."""

from __future__ import annotations

import dataclasses
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpu_infra.blocks.bootstrap import BootstrapSpec, node_tools_installer, with_node_tools
from gpu_infra.nodeplan.plans import SpotWorkers

from .bootstrap_sandbox import INSTANCE_TYPE, Sandbox, Snapshot
from .conftest import cluster_config, merged
from .container_standins import docker_runs
from .spot_sandbox import TORCHRUN, TRAINER, install
from .test_bootstrap_run import TRAINING
from .test_spot_reclaim import SPOT_TRAINING

SPOT_ERDMA = merged(SPOT_TRAINING, fleet={**SPOT_TRAINING["fleet"], "instance_type": INSTANCE_TYPE})
"""Spot training on the sandbox node's type (8 GPUs, eRDMA)."""
JOB_ID = "20261203T140000Z"
IMAGE = "registry-vpc.cn-beijing.aliyuncs.com/t01-mirror/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
CHECK_IMAGE = "registry-vpc.cn-beijing.aliyuncs.com/t01-mirror/ubuntu:jammy-20251013"
CONTAINER = '''
# the image's stand-in: its PATH the image's commands (image-bin) and the base system, the
# node paths the container mounts moved under the sandbox root, then the command it is given
export GPU_INFRA_CHECKPOINT_DIR=$GPU_INFRA_ROOT$GPU_INFRA_CHECKPOINT_DIR
export GPU_INFRA_SPOT_NOTICE=$GPU_INFRA_ROOT$GPU_INFRA_SPOT_NOTICE
export PATH=$SANDBOX/image-bin:/usr/bin:/bin SANDBOX_SHELL=dash
cd "$SANDBOX"
exec dash "$GPU_INFRA_ROOT$1" "${@:2}"
'''
PYTHON3 = f'''#!/bin/sh
# the image's python3: runs the job's script (a node path under the sandbox root)
echo "python3 $*" >> "$SANDBOX/image-calls.log"
script=$1; shift
exec {sys.executable} "$GPU_INFRA_ROOT$script" "$@"
'''


def node_sandbox(directory: Path, launch: BootstrapSpec, image: str = IMAGE) -> Sandbox:
    """A training node as ECS (or ESS) launches it: the sandbox's node with `launch`'s job
    launcher and spot watcher, its user data installed (not booted yet), its node tools in the
    bucket, the stand-in of `image` in place; gpu-infra-pull's retries 0 s apart."""
    spec = with_node_tools(dataclasses.replace(
        TRAINING, elastic=launch.elastic, spot_watch=launch.spot_watch,
        check_image=CHECK_IMAGE), "t01-checkpoints")
    assert spec.node_tools is not None
    directory.mkdir(parents=True, exist_ok=True)
    sandbox = Sandbox(directory)
    stored = directory / "objects" / spec.node_tools.key
    stored.parent.mkdir(parents=True)
    stored.write_text(node_tools_installer(spec) or "")
    assert sandbox.install(spec).code == 0
    with (sandbox.root / "opt/gpu-infra/config.sh").open("a") as config:
        config.write("PULL_RETRY_SECONDS=0\n")
    torchrun = TORCHRUN.replace("#!/usr/bin/env python3", f"#!{sys.executable}", 1)
    install(directory / "image-bin", {"torchrun": torchrun, "python3": PYTHON3})
    (directory / "containers").mkdir(exist_ok=True)
    ref = image.translate(str.maketrans("/:@", "___"))
    (directory / "containers" / ref).write_text(CONTAINER)
    return sandbox


def worker_sandbox(directory: Path) -> Sandbox:
    """node_sandbox of a spot worker (SpotWorkers: no SSH wiring, the spot watcher)."""
    return node_sandbox(directory, SpotWorkers(cluster_config(SPOT_ERDMA)).bootstrap_spec(
        "t01-gpu", shared_fs_source="nas.example:/share"))


def booted(sandbox: Sandbox) -> Sandbox:
    """`sandbox` booted (ready, Docker running: the container runtime step installed it, the
    job unit installed by the node tools), its job unit looking every 0.05 s."""
    run = sandbox.boot()
    assert run.code == 0 and run.exists("/var/lib/gpu-infra/ready"), run.output
    with (sandbox.root / "etc/gpu-infra/elastic.env").open("a") as elastic:
        elastic.write("GPU_INFRA_JOB_POLL_SECONDS=0.05\n")
    return sandbox


@pytest.fixture(scope="module")
def job_node(tmp_path_factory) -> Snapshot:
    """A spot worker booted once per module: each test starts from `job_node.restore()`."""
    return Snapshot(booted(worker_sandbox(tmp_path_factory.mktemp("worker"))))


ONE_SHOT = """import os, sys
with open(os.path.join(os.environ["SANDBOX"], "trainer.log"), "a") as log:
    log.write("trained {} steps, resume={}\\n".format(
        sys.argv[1], os.environ.get("GPU_INFRA_RESUME_FROM", "-")))
"""
"""A training script that trains its steps and ends 0."""


def describe_job(shared: Path, script: str = TRAINER) -> None:
    """The job file as the printed job script writes it (node 0 at 10.1.64.4, four nodes),
    and the training `script` on the shared file system."""
    job_dir = shared / ".gpu-infra/job"
    job_dir.mkdir(parents=True, exist_ok=True)
    lines = [f"JOB_ID={JOB_ID}", "RDZV_HOST=10.1.64.4", f"RDZV_ID=t01-gpu-{JOB_ID}",
             "NNODES=4", "NPROC_PER_NODE=8", "MAX_RESTARTS=3", f"JOB_IMAGE={IMAGE}",
             "JOB_COMMAND=" + shlex.quote("/mnt/shared/train.py 3")]
    (job_dir / "job.env").write_text("\n".join(lines) + "\n")
    (shared / "train.py").write_text(script)


def run_unit(sandbox: Sandbox, until: str, seconds: float = 60, *, said_twice: str = "") -> str:
    """gpu-infra-job under dash until `until` (a node path) exists or, with `said_twice`,
    until its output says that twice (it looked again); its output."""
    log = sandbox.dir / "job-unit.out"
    with log.open("w") as out:
        unit = subprocess.Popen(["dash", str(sandbox.root / "opt/gpu-infra/bin/gpu-infra-job")],
                                env=sandbox.env(), stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + seconds
    target = sandbox.root / until.lstrip("/")
    while not target.exists() and unit.poll() is None and time.monotonic() < deadline and not (
            said_twice and log.read_text().count(said_twice) >= 2):
        time.sleep(0.05)
    time.sleep(0.3)  # more looks: a finished job is not run again
    unit.terminate()
    unit.wait(timeout=10)
    return log.read_text()


def trainer_log(sandbox: Sandbox) -> list[str]:
    return (sandbox.dir / "trainer.log").read_text().splitlines()


@pytest.mark.slow  # a node boot and the job unit in a shell sandbox
def test_the_job_unit_runs_the_job_in_its_image_with_the_node_s_gpus_and_data(job_node):
    sandbox = job_node.restore()
    describe_job(sandbox.root / "mnt/shared", ONE_SHOT)
    out = run_unit(sandbox, f"/mnt/shared/.gpu-infra/job/{JOB_ID}.done")
    assert f"gpu-infra-job: job {JOB_ID} finished" in out, out
    calls = (sandbox.dir / "calls.log").read_text()
    assert f"docker pull --quiet {IMAGE}" in calls  # through gpu-infra-pull
    (run,) = [r for r in docker_runs(sandbox.dir) if r.image == IMAGE]
    assert {"--rm", "--init"} <= set(run.flags)
    assert run.options["--gpus"] == ["all"] and run.options["--network"] == ["host"]
    assert run.options["--ipc"] == ["host"] and run.options["--device"] == ["/dev/infiniband"]
    assert {"/mnt/shared:/mnt/shared", "/mnt/scratch:/mnt/scratch",
            "/opt/gpu-infra/bin:/opt/gpu-infra/bin:ro"} <= set(run.options["-v"])
    assert run.options["--env-file"] == [f"{sandbox.root}/etc/gpu-infra/nccl.env"]  # moved
    assert run.command == ["/opt/gpu-infra/bin/gpu-infra-torchrun", "/mnt/shared/train.py", "3"]
    args = (sandbox.dir / "torchrun.args").read_text().splitlines()
    assert args[:6] == ["--nnodes=1:4", "--nproc-per-node=8", "--rdzv-backend=c10d",
                        "--rdzv-endpoint=10.1.64.4:29400", f"--rdzv-id=t01-gpu-{JOB_ID}",
                        "--max-restarts=3"]
    assert (sandbox.dir / "image-calls.log").read_text().splitlines() == [
        "python3 /mnt/shared/train.py 3"]
    assert trainer_log(sandbox) == ["trained 3 steps, resume=-"]
    assert out.count(f"joining job {JOB_ID}") == 1  # done: not run again


@pytest.mark.slow  # two node boots and the job unit in a shell sandbox
def test_a_replacement_worker_joins_the_running_job_and_resumes_from_the_newest_checkpoint(
        tmp_path, job_node):
    """What ESS's replacement of a reclaimed worker does with no human step: it boots the
    workers' bootstrap, its job unit finds the running job on the shared file system and
    joins the same rendezvous, and its worker starts from the newest complete checkpoint (the
    one the reclaimed worker saved on its notice), not from an incomplete newer one."""
    shared = tmp_path / "shared"
    describe_job(shared)
    checkpoints = shared / "checkpoints"
    for step, complete in ((100, True), (140, True), (150, False)):
        saved = checkpoints / f"step-{step:06d}"
        saved.mkdir(parents=True)
        (saved / "step").write_text(str(step))
        if complete:
            (saved / "COMPLETE").touch()
    replacement = job_node.restore()
    mount = replacement.root / "mnt/shared"
    mount.rmdir()
    mount.symlink_to(shared)  # the NFS mount of the same file system
    out = run_unit(replacement, f"/mnt/shared/.gpu-infra/job/{JOB_ID}.done")
    assert f"joining job {JOB_ID}" in out, out
    (run,) = [r for r in docker_runs(replacement.dir) if r.image == IMAGE]
    assert run.command == ["/opt/gpu-infra/bin/gpu-infra-torchrun", "/mnt/shared/train.py", "3"]
    args = (replacement.dir / "torchrun.args").read_text().splitlines()
    assert args[3:5] == ["--rdzv-endpoint=10.1.64.4:29400", f"--rdzv-id=t01-gpu-{JOB_ID}"]
    newest = checkpoints / "step-000140"
    assert trainer_log(replacement) == [f"start restart=0 resume={mount}/checkpoints/"
                                        f"{newest.name} step=140", "done step=143"]


@pytest.mark.slow  # a node boot and the job unit in a shell sandbox
def test_without_the_runtime_step_s_docker_the_job_never_runs(job_node):
    """The job's host commands come from the node's steps: with Docker gone (what a node whose
    container runtime step installed nothing has) gpu-infra-pull fails, the unit says so and
    tries again, and no container starts."""
    sandbox = job_node.restore()
    (sandbox.state / "docker-version").unlink()
    describe_job(sandbox.root / "mnt/shared")
    refused = f"job {JOB_ID}: its image could not be pulled; trying again"
    out = run_unit(sandbox, "/never", seconds=30, said_twice=refused)
    assert out.count(refused) >= 2, out  # said so, and looked again
    assert not (sandbox.root / f"mnt/shared/.gpu-infra/job/{JOB_ID}.done").exists()
    assert [r for r in docker_runs(sandbox.dir) if r.image == IMAGE] == []
