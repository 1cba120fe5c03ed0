"""A spot reclaim, simulated offline on both platforms (tests/spot_sandbox.py says what is a
stand-in): the notice appears on the metadata server, the shipped watcher writes the notice
file (and on ECS the release report), the trainer saves a checkpoint, its peer is lost, the
elastic launcher restarts the worker once and the restarted worker resumes from that
checkpoint, as docs/workloads/training-jobs.md documents. The shell scripts run under dash
and bash."""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_infra.blocks.bootstrap import launch_files, node_tools_installer
from gpu_infra.blocks.workloads.spot_watch import spot_watch_objects
from gpu_infra.blocks.workloads.training_job import TrainingTarget, pytorch_job
from gpu_infra.nodeplan.plans import SpotWorkers
from gpu_infra_facts import jobs

from .conftest import BASE_TRAINING, cluster_config, merged
from .spot_sandbox import RELEASE_TIME, TORCHRUN, TRAINER, install, metadata_server, wait_for

SHELLS = [shell for shell in ("dash", "bash") if shutil.which(shell)]
SPOT_TRAINING = merged(BASE_TRAINING, fleet={"instance_type": "ecs.gn7i-c8g1.2xlarge",
                                             "nodes": 2, "capacity": "spot",
                                             "interruptible": True},
                       storage={"shared_fs": {"enabled": True}})
STACK = "training-spot"
RESUMED_STEPS = 5


def env_file(text: str) -> dict[str, str]:
    """KEY=value lines (shell-quoted values) as a dict."""
    return dict(line.split("=", 1) for line in shlex.split(text, comments=True))


def moved(value: str, root: Path) -> str:
    """A node path under the sandbox root (other values unchanged)."""
    return f"{root}{value}" if value.startswith(("/run/", "/mnt/", "/opt/", "/etc/", "/var/")) \
        else value


def sandbox_env(root: Path, **extra: str) -> dict[str, str]:
    bin_dir = root / "stand-ins"
    install(bin_dir, {"torchrun": TORCHRUN})
    (root / "train.py").write_text(TRAINER, encoding="utf-8")
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SANDBOX": str(root),
            "PYTHON": sys.executable, **extra}


def trainer_log(root: Path) -> list[str]:
    return (root / "trainer.log").read_text(encoding="utf-8").splitlines()


def reclaim(root: Path, server, watcher: subprocess.Popen[str], job: subprocess.Popen[str],
            notice: Path, checkpoints: Path, *, leaves: bool = False) -> None:
    """The notice appears; once the trainer saved its checkpoint, the node is released (or,
    `leaves`, the watcher makes it leave the job: its stand-in systemctl tells the trainer its
    peer is lost when the job unit stops)."""
    server.announce()
    wait_for(notice, watcher)
    assert notice.read_text(encoding="utf-8") == RELEASE_TIME + "\n"
    marker = None
    for _ in range(600):
        found = sorted(checkpoints.glob("*/COMPLETE"))
        if found or job.poll() is not None:
            marker = found[0] if found else None
            break
        wait_for(checkpoints / "never", job, seconds=0.05)
    assert marker is not None, "the trainer saved no checkpoint on the notice"
    if not leaves:
        (root / "peer-lost").touch()
    assert job.wait(timeout=120) == 0
    watcher.terminate()
    assert watcher.wait(timeout=10) == 0


@pytest.mark.slow  # the reclaim in a shell sandbox
@pytest.mark.parametrize("shell", SHELLS)
def test_ecs_reclaim_checkpoints_leaves_the_job_and_resumes(tmp_path, shell):
    cluster = cluster_config(SPOT_TRAINING)
    spec = SpotWorkers(cluster).bootstrap_spec("t01-gpu", shared_fs_source="fs.example:/",
                                               node_tools_bucket="t01-checkpoints")
    assert spec.node_tools is not None and "node_tools" in spec.node_steps()
    installer = node_tools_installer(spec)
    assert installer is not None
    assert spec.node_tools.sha256 == hashlib.sha256(installer.encode()).hexdigest()
    root = tmp_path
    stand_ins = root / "stand-ins"
    install(stand_ins, {"systemctl": 'echo "systemctl $*" >> "$SANDBOX/calls.log"\n'
                        '[ "$*" != "stop gpu-infra-job.service" ] || touch "$SANDBOX/peer-lost"\n'})
    installed = subprocess.run(
        ["bash", "-c", installer], text=True, capture_output=True,
        env={**os.environ, "GPU_INFRA_ROOT": str(root), "SANDBOX": str(root),
             "PATH": f"{stand_ins}:{os.environ['PATH']}"})
    assert installed.returncode == 0, installed.stderr
    calls = (root / "calls.log").read_text()
    assert "systemctl restart --no-block gpu-infra-spot-watch.service" in calls
    assert "systemctl restart --no-block gpu-infra-job.service" in calls
    files = {path: (root / path.lstrip("/")).read_text()
             for path in launch_files(spec.elastic, spec.spot_watch)}
    unit = files["/etc/systemd/system/gpu-infra-spot-watch.service"]
    assert "EnvironmentFile=/etc/gpu-infra/spot-watch.env" in unit
    assert "ExecStart=/opt/gpu-infra/bin/gpu-infra-spot-watch" in unit
    watch_env = env_file(files["/etc/gpu-infra/spot-watch.env"])
    assert watch_env == {"GPU_INFRA_SPOT_NOTICE_DIR": jobs.SPOT_NOTICE_DIR,
                         "GPU_INFRA_SPOT_POLL_SECONDS": str(jobs.SPOT_POLL_SECONDS),
                         "GPU_INFRA_LEAVE_COMMAND": "systemctl stop gpu-infra-job.service",
                         "GPU_INFRA_LEAVE_SECONDS": str(jobs.LEAVE_SECONDS),
                         "GPU_INFRA_CHECKPOINT_DIR": "/mnt/shared/checkpoints",
                         "GPU_INFRA_REPORT_DIR": "/mnt/shared/.gpu-infra/reclaims"}
    elastic = env_file(files["/etc/gpu-infra/elastic.env"])
    assert elastic["GPU_INFRA_CHECKPOINT_DIR"] == "/mnt/shared/checkpoints"
    assert elastic["GPU_INFRA_SPOT_NOTICE"] == jobs.SPOT_NOTICE_FILE
    bin_dir = root / "opt/gpu-infra/bin"
    # the container's environment as gpu-infra-job passes it on node 1 of two: elastic.env
    # and the job's description (node 0, on demand, is 10.1.64.4)
    job = {"RDZV_HOST": "10.1.64.4", "RDZV_ID": "t01-gpu-20261201T230000Z", "NNODES": "2",
           "NPROC_PER_NODE": "1", "MAX_RESTARTS": "3"}
    container = {**{key: moved(value, root) for key, value in elastic.items()}, **job}
    env = sandbox_env(root, SANDBOX_SHELL=shell, **container)
    notice = Path(moved(jobs.SPOT_NOTICE_FILE, root))
    checkpoints = Path(moved(elastic["GPU_INFRA_CHECKPOINT_DIR"], root))
    with metadata_server() as server:
        watcher = subprocess.Popen(
            [shell, str(bin_dir / "gpu-infra-spot-watch")], text=True, stdout=subprocess.PIPE,
            env={**env, **{key: moved(value, root) for key, value in watch_env.items()},
                 "GPU_INFRA_METADATA": server.base, "GPU_INFRA_SPOT_POLL_SECONDS": "0.05",
                 "GPU_INFRA_NODE_NAME": "t01-gpu-node-001"})
        trainer = subprocess.Popen([shell, str(bin_dir / "gpu-infra-torchrun"), "train.py",
                                    str(RESUMED_STEPS)], cwd=root, env=env, text=True)
        reclaim(root, server, watcher, trainer, notice, checkpoints, leaves=True)
        watch_log = watcher.stdout.read() if watcher.stdout else ""
    assert all(r.startswith("PUT /latest/api/token") or "token" not in r
               for r in server.requests)
    report = (root / "mnt/shared/.gpu-infra/reclaims/t01-gpu-node-001").read_text()
    assert report == f"released_at={RELEASE_TIME}\n"
    assert "leaving the job after " in watch_log
    assert "systemctl stop gpu-infra-job.service" in (root / "calls.log").read_text()
    args = (root / "torchrun.args").read_text().splitlines()
    assert args[:6] == ["--nnodes=1:2", "--nproc-per-node=1", "--rdzv-backend=c10d",
                        "--rdzv-endpoint=10.1.64.4:29400",
                        "--rdzv-id=t01-gpu-20261201T230000Z", "--max-restarts=3"]
    assert args[6:] == ["--no-python", f"{bin_dir}/gpu-infra-resume", sys.executable,
                        "train.py", str(RESUMED_STEPS)]
    saved = sorted(checkpoints.glob("*/COMPLETE"))[0].parent
    step = int((saved / "step").read_text())
    assert trainer_log(root) == ["start restart=0 resume=- step=0",
                                 f"start restart=1 resume={saved} step={step}",
                                 f"done step={step + RESUMED_STEPS}"]


def operator_env(job: dict) -> dict[str, str]:
    """The PET_* variables training operator v1.9.0 adds to every container of an elastic
    PyTorchJob (pkg/controller.v1/pytorch/elastic.go), for the stand-in torchrun."""
    policy = job["spec"]["elasticPolicy"]
    host = policy.get("rdzvHost", f"{job['metadata']['name']}-worker-0")
    return {"PET_RDZV_BACKEND": policy["rdzvBackend"],
            "PET_RDZV_ENDPOINT": f"{host}:{policy['rdzvPort']}",
            "PET_NNODES": f"{policy['minReplicas']}:{policy['maxReplicas']}",
            "PET_MAX_RESTARTS": str(policy["maxRestarts"]),
            "PET_NPROC_PER_NODE": job["spec"]["nprocPerNode"]}


@pytest.mark.slow  # the reclaim in a shell sandbox
@pytest.mark.parametrize("shell", SHELLS)
def test_ack_reclaim_signals_the_pod_and_the_worker_resumes(tmp_path, shell):
    target = TrainingTarget(
        name="t01-train", instance_type="ecs.gn7i-c8g1.2xlarge", nodes=2, min_nodes=1,
        gpus_per_node=1, erdma=False, nccl_cidr="10.1.64.0/18",
        pool_selector=("gpu-infra.io/pool", "t01-gpu"), has_spot=True,
        shared_fs_claim="t01-shared", checkpoints_claim="t01-checkpoints", image="r/t:1")
    launcher, job = pytorch_job(target)
    worker = job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    assert job["spec"]["elasticPolicy"]["rdzvHost"] == "t01-train-master-0"
    master = job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
    assert master["nodeSelector"][jobs.SPOT_STRATEGY_LABEL] == "NoSpot"
    (container,) = worker["containers"]
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert mounts[jobs.SPOT_NOTICE_DIR]["readOnly"] is True
    config_map, daemonset = spot_watch_objects("registry/curl:1")
    (watch,) = daemonset["spec"]["template"]["spec"]["containers"]
    root = tmp_path
    install(Path(moved("/opt/gpu-infra/bin", root)), {
        "gpu-infra-resume": launcher["data"]["gpu-infra-resume"],
        "gpu-infra-spot-watch": config_map["data"]["gpu-infra-spot-watch"]})
    pod_env = {e["name"]: moved(e["value"], root) for e in container["env"]}
    env = sandbox_env(root, SANDBOX_SHELL=shell, **operator_env(job), **pod_env)
    watch_env = {e["name"]: moved(e["value"], root) for e in watch["env"] if "value" in e}
    checkpoints = Path(pod_env["GPU_INFRA_CHECKPOINT_DIR"])
    command = [moved(word, root) for word in container["command"]]
    assert command[:3] == ["torchrun", "--no-python", f"{root}/opt/gpu-infra/bin/gpu-infra-resume"]
    with metadata_server() as server:
        watcher = subprocess.Popen(
            [shell, moved(watch["command"][1], root)], text=True, stdout=subprocess.PIPE,
            env={**os.environ, **watch_env, "GPU_INFRA_METADATA": server.base,
                 "GPU_INFRA_SPOT_POLL_SECONDS": "0.05", "GPU_INFRA_NODE_NAME": "node-b"})
        pod = subprocess.Popen([*command[:3], sys.executable, "train.py", str(RESUMED_STEPS)],
                               cwd=root, env=env, text=True)
        reclaim(root, server, watcher, pod, Path(pod_env["GPU_INFRA_SPOT_NOTICE"]),
                checkpoints)
        watch_log = watcher.stdout.read() if watcher.stdout else ""
    assert "node-b is released at " + RELEASE_TIME in watch_log
    assert "restore" not in watch_log  # ACK's pool replaces the node
    saved = sorted(checkpoints.glob("*/COMPLETE"))[0].parent
    step = int((saved / "step").read_text())
    assert saved.parent == Path(moved(f"{jobs.CHECKPOINTS_PATH}/t01-train", root))
    assert trainer_log(root) == ["start restart=0 resume=- step=0",
                                 f"start restart=1 resume={saved} step={step}",
                                 f"done step={step + RESUMED_STEPS}"]
