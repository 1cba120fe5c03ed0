"""The docker stand-in's containers end as moby's do (tests/container_standins.py): `docker
stop` sends SIGTERM to the container's main process and SIGKILL once its `--time` has passed,
and every other process of the container ends with the main one (the kernel kills the rest of
a PID namespace when its init exits); `docker run` then reports 128 + the signal's number;
`docker rm` refuses a running container unless forced. The workloads' stop and drain tests
rely on it: a render left running after its container was stopped would hold the worker."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from .container_standins import DOCKER

pytestmark = pytest.mark.slow  # runs the stand-in

IMAGE = "registry.example/team/render:1"
NAME = "gpu-infra-render-m1"
STARTS_A_CHILD = 'sleep 300 & echo $! > "$SANDBOX/child"\n'


def docker_in(sandbox: Path, container: str) -> tuple[list[str], dict[str, str]]:
    """The stand-in under `sandbox` with a running daemon, and IMAGE's container running the
    shell text `container`; the command to call it and its environment."""
    state = sandbox / "state"
    (state / "docker-images").mkdir(parents=True)
    (state / "docker-version").write_text("28.5.2")
    (state / "active-docker").touch()
    (state / "docker-images" / IMAGE.replace("/", "_").replace(":", "_")).touch()
    (sandbox / "containers").mkdir()
    (sandbox / "containers" / IMAGE.replace("/", "_").replace(":", "_")).write_text(container)
    docker = sandbox / "docker"
    docker.write_text("#!/bin/bash\n" + DOCKER)
    docker.chmod(0o755)
    return [str(docker)], {**os.environ, "SANDBOX": str(sandbox)}


def started(docker: list[str], env: dict[str, str], sandbox: Path) -> subprocess.Popen[str]:
    """`docker run --name NAME IMAGE`, once its container and the child it starts run."""
    run = subprocess.Popen([*docker, "run", "--name", NAME, IMAGE], env=env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while not ((sandbox / "child").is_file() and (sandbox / "state" / f"running-{NAME}")
               .is_file()):
        assert run.poll() is None and time.monotonic() < deadline, run.communicate()[0]
        time.sleep(0.02)
    return run


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie nobody reaps has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def ends(pid: int) -> bool:
    """Whether `pid` ends within 10 s: a SIGKILL is delivered when the process next runs,
    after kill(2) has returned."""
    deadline = time.monotonic() + 10
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def child_of(sandbox: Path) -> int:
    return int((sandbox / "child").read_text())


@pytest.mark.parametrize("main, grace, status", [
    ("wait\n", "10", 143),  # the main process ends at SIGTERM
    ("trap '' TERM\nwait\n", "1", 137),  # it ignores SIGTERM: SIGKILL after --time
])
def test_a_stop_ends_the_main_process_and_every_process_it_started(tmp_path, main, grace,
                                                                   status):
    docker, env = docker_in(tmp_path, STARTS_A_CHILD + main)
    run = started(docker, env, tmp_path)
    stop = subprocess.run([*docker, "stop", "--time", grace, NAME], env=env,
                          capture_output=True, text=True, timeout=60)
    assert (stop.returncode, stop.stdout, stop.stderr) == (0, f"{NAME}\n", "")
    assert run.communicate(timeout=30)[0] == "" and run.returncode == status
    assert ends(child_of(tmp_path))
    again = subprocess.run([*docker, "stop", NAME], env=env, capture_output=True, text=True)
    assert again.returncode == 1
    assert again.stderr == f"Error response from daemon: No such container: {NAME}\n"


def test_a_running_container_is_removed_only_by_force(tmp_path):
    docker, env = docker_in(tmp_path, STARTS_A_CHILD + "wait\n")
    run = started(docker, env, tmp_path)
    refused = subprocess.run([*docker, "rm", NAME], env=env, capture_output=True, text=True)
    assert refused.returncode == 1 and "container is running" in refused.stderr
    assert run.poll() is None and alive(child_of(tmp_path))
    forced = subprocess.run([*docker, "rm", "--force", NAME], env=env, capture_output=True,
                            text=True, timeout=60)
    assert (forced.returncode, forced.stdout) == (0, f"{NAME}\n")
    assert run.communicate(timeout=30)[0] == "" and run.returncode == 137
    assert ends(child_of(tmp_path))
    gone = subprocess.run([*docker, "rm", "--force", NAME], env=env, capture_output=True,
                          text=True)
    assert gone.returncode == 0  # docker/cli container/rm.go: a missing container passes
