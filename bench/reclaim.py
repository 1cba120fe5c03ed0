"""`python -m bench.reclaim`: what a spot reclaim costs an ECS training job, in the node
sandbox (tests/spot_sandbox.py: a metadata server announcing the notice, a torchrun that
restarts its worker group as torch elastic's agent does, a trainer following the checkpoint
protocol). The watcher, gpu-infra-resume and gpu-infra-torchrun are the shipped scripts,
installed by the fleet's node-tools installer, with the shipped poll (5 s) and leave settings;
systemctl is a stand-in whose `stop gpu-infra-job.service` is the node leaving (the peers'
collective fails). Prints the seconds from the notice to each stage and to training again on
the survivors, and for the replacement worker ESS launches (tests/test_job_unit.py's sandbox:
its bootstrap, then its job unit with the shipped 10 s look, as the node tools start it) the
seconds from its boot to ready and to its worker training from the newest checkpoint; median
of RUNS runs each. What the sandbox does not spend (saving a real checkpoint, the
re-rendezvous, ESS's launch, a real boot and pull, starting real workers) is listed apart with
its assumed figure.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpu_infra.blocks.bootstrap import node_tools_installer
from gpu_infra.nodeplan.plans import SpotWorkers
from gpu_infra_facts import jobs
from tests.conftest import cluster_config
from tests.spot_sandbox import metadata_server
from tests.test_job_unit import describe_job, worker_sandbox
from tests.test_spot_reclaim import SPOT_TRAINING, env_file, moved, sandbox_env

RUNS = 5
SIMULATED = (
    ("saving the checkpoint", "S = checkpoint bytes / shared file system write rate; the "
     f"node leaves at most {jobs.LEAVE_SECONDS} s after the notice whatever S is"),
    ("re-rendezvous with fewer than NNODES", "30 s: the c10d rendezvous waits its last-call "
     "timeout once MIN nodes joined (torch dynamic_rendezvous.py RendezvousTimeout, "
     "last_call 30 s)"),
    ("starting the workers and loading the checkpoint", "UNCONFIRMED, model-dependent: CUDA "
     "and NCCL init plus reading the checkpoint back"),
    ("ESS launching the replacement", "UNCONFIRMED (no account): the scaling activity ESS "
     "starts on the reclaim message (spot_instance_remedy)"),
    ("the replacement's boot", "10-20 min with the driver's auto_install; the instance's "
     "start plus the checks on a baked image (docs/platforms/ecs.md, boot time budget)"),
    ("pulling the job image", "about 3.1 GB compressed from the stack's registry over the VPC "
     "(jobs.TRAINING_IMAGE_DIGEST; UNCONFIRMED size and rate)"),
)
"""What the sandbox spends no time on, and the figure a real reclaim adds for it."""


def one_reclaim(root: Path) -> dict[str, float]:
    """Seconds from the notice to: the notice file, the checkpoint, the leave, training
    again (the restarted worker resumed from the checkpoint)."""
    spec = SpotWorkers(cluster_config(SPOT_TRAINING)).bootstrap_spec(
        "t01-gpu", shared_fs_source="fs.example:/", node_tools_bucket="t01-checkpoints")
    stand_ins = root / "stand-ins"
    stand_ins.mkdir()
    (stand_ins / "systemctl").write_text(
        '#!/bin/sh\necho "systemctl $*" >> "$SANDBOX/calls.log"\n'
        '[ "$*" != "stop gpu-infra-job.service" ] || touch "$SANDBOX/peer-lost"\n')
    (stand_ins / "systemctl").chmod(0o755)
    base = {**os.environ, "SANDBOX": str(root), "PATH": f"{stand_ins}:{os.environ['PATH']}"}
    subprocess.run(["bash", "-c", node_tools_installer(spec)], check=True, capture_output=True,
                   env={**base, "GPU_INFRA_ROOT": str(root)})
    etc, bin_dir = root / "etc/gpu-infra", root / "opt/gpu-infra/bin"
    elastic = env_file((etc / "elastic.env").read_text())
    watch = env_file((etc / "spot-watch.env").read_text())
    job = {"RDZV_HOST": "10.1.64.4", "RDZV_ID": "t01-gpu-1", "NNODES": "2",
           "NPROC_PER_NODE": "1", "MAX_RESTARTS": "3"}
    env = sandbox_env(root, **{**{key: moved(value, root) for key, value in elastic.items()},
                               **job})
    env["PATH"] = f"{stand_ins}:{env['PATH']}"
    stages = {"notice file": moved(jobs.SPOT_NOTICE_FILE, root), "left the job": "peer-lost"}
    with metadata_server() as server:
        watcher = subprocess.Popen(
            ["dash", str(bin_dir / "gpu-infra-spot-watch")], stdout=subprocess.DEVNULL,
            env={**env, **{key: moved(value, root) for key, value in watch.items()},
                 "GPU_INFRA_METADATA": server.base})
        trainer = subprocess.Popen(["dash", str(bin_dir / "gpu-infra-torchrun"), "train.py",
                                    "5"], cwd=root, env=env, stderr=subprocess.DEVNULL)
        time.sleep(1)
        start = time.monotonic()
        server.announce()
        seen: dict[str, float] = {}
        while trainer.poll() is None and time.monotonic() - start < 60:
            log = root / "trainer.log"
            if "checkpoint" not in seen and any(root.glob("mnt/shared/checkpoints/*/COMPLETE")):
                seen["checkpoint"] = time.monotonic() - start
            for stage, path in stages.items():
                if stage not in seen and (root / path).exists():
                    seen[stage] = time.monotonic() - start
            if log.exists() and "restart=1" in log.read_text():
                seen.setdefault("training again", time.monotonic() - start)
            time.sleep(0.01)
        trainer.wait(timeout=60)
        watcher.terminate()
        watcher.wait(timeout=10)
    return seen


def one_replacement(root: Path) -> dict[str, float]:
    """Seconds from the replacement worker's boot to: ready, training (its worker started,
    resuming from the job's newest complete checkpoint on the shared file system)."""
    shared = root / "shared"
    describe_job(shared)
    saved = shared / "checkpoints/step-000100"
    saved.mkdir(parents=True)
    (saved / "step").write_text("100")
    (saved / "COMPLETE").touch()
    node = worker_sandbox(root / "replacement")
    mount = node.root / "mnt/shared"
    mount.parent.mkdir(parents=True, exist_ok=True)
    mount.symlink_to(shared)  # what its shared_fs step mounts
    ready, log = node.root / "var/lib/gpu-infra/ready", node.dir / "trainer.log"
    elastic = node.root / "etc/gpu-infra/elastic.env"
    env = node.env()
    real = root / "real-sleep"  # the sandbox's sleep returns at once; the unit's looks wait
    real.mkdir()
    (real / "sleep").symlink_to(shutil.which("sleep") or "/bin/sleep")
    unit_env = {**env, "PATH": f"{real}:{env['PATH']}"}
    start = time.monotonic()
    boot = subprocess.Popen(["bash", str(node.root / "opt/gpu-infra/bootstrap.sh")], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    unit = None
    seen: dict[str, float] = {}
    while "training" not in seen and time.monotonic() - start < 120:
        if unit is None and elastic.exists():  # the node tools' installer starts the unit
            unit = subprocess.Popen(["dash", str(node.root / "opt/gpu-infra/bin/gpu-infra-job")],
                                    env=unit_env, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        if "ready" not in seen and ready.exists():
            seen["ready"] = time.monotonic() - start
        if log.exists() and f"resume={mount}/checkpoints/{saved.name} " in log.read_text():
            seen["training"] = time.monotonic() - start
        time.sleep(0.01)
    boot.wait(timeout=60)
    if unit is not None:
        unit.terminate()
        unit.wait(timeout=10)
    return seen


def medians(runs: list[dict[str, float]], stages: tuple[str, ...], since: str) -> None:
    """Print the median seconds from `since` to each of `stages` over `runs`."""
    for stage in stages:
        values = [run[stage] for run in runs if stage in run]
        print(f"  {since} -> {stage}: {statistics.median(values):.2f} s ({len(values)} runs)")


def main() -> None:
    """Print the median seconds of RUNS reclaims and RUNS replacements."""
    runs, replacements = [], []
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory() as directory:
            runs.append(one_reclaim(Path(directory)))
        with tempfile.TemporaryDirectory() as directory:
            replacements.append(one_replacement(Path(directory)))
    print(f"spot reclaim on ECS, node sandbox, median of {RUNS} runs "
          f"(python {sys.version.split()[0]}):")
    medians(runs, ("notice file", "checkpoint", "left the job", "training again"), "notice")
    print("the replacement worker (its job unit looks every "
          f"{jobs.JOB_POLL_SECONDS} s):")
    medians(replacements, ("ready", "training"), "boot")
    print("not spent in the sandbox (a real reclaim adds):")
    for what, figure in SIMULATED:
        print(f"  {what}: {figure}")


if __name__ == "__main__":
    main()
