"""`python -m bench.reclaim`: what a spot reclaim costs an ECS training job, in the node
sandbox (tests/spot_sandbox.py: a metadata server announcing the notice, a torchrun that
restarts its worker group as torch elastic's agent does, a trainer following the checkpoint
protocol). The watcher, gpu-infra-resume and gpu-infra-torchrun are the shipped scripts,
installed by the fleet's node-tools installer, with the shipped poll (5 s) and leave settings;
systemctl is a stand-in whose `stop gpu-infra-job.service` is the node leaving (the peers'
collective fails). Prints the seconds from the notice to each stage and to training again,
median of RUNS runs; what the sandbox does not spend (saving a real checkpoint, the
re-rendezvous, starting real workers) is listed apart with its assumed figure.
"""

from __future__ import annotations

import os
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


def main() -> None:
    """Print the median seconds of RUNS reclaims."""
    runs = []
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory() as directory:
            runs.append(one_reclaim(Path(directory)))
    print(f"spot reclaim on ECS, node sandbox, median of {RUNS} runs "
          f"(python {sys.version.split()[0]}):")
    for stage in ("notice file", "checkpoint", "left the job", "training again"):
        values = [run[stage] for run in runs if stage in run]
        print(f"  notice -> {stage}: {statistics.median(values):.2f} s ({len(values)} runs)")
    print("not spent in the sandbox (a real reclaim adds):")
    for what, figure in SIMULATED:
        print(f"  {what}: {figure}")


if __name__ == "__main__":
    main()
