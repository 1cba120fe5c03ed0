"""A render node booted in the node sandbox (tests/bootstrap_sandbox.py) from user data and the
node tools it fetches, its cloud client pointed at the stand-in cloud (tests/fake_node_cloud.py),
and its worker (gpu-infra-render.service's ExecStart) run under the system's own python3:
shared by the worker's tests and the rendering page's first frame."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from .bootstrap_sandbox import OS_RELEASES, Sandbox
from .fake_node_cloud import FakeNodeCloud
from .node_systems import python_of

UNIT = "etc/systemd/system/gpu-infra-render.service"


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
        unit = (self.root / UNIT).read_text()
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


def container_hook(sandbox: Sandbox, image: str, script: str) -> None:
    """What a container of `image` runs in the docker stand-in: bash `script` with the
    container's arguments (and DOCKER_VOLUMES)."""
    hooks = sandbox.dir / "containers"
    hooks.mkdir(exist_ok=True)
    (hooks / image.replace("/", "_").replace(":", "_").replace("@", "_")).write_text(script)


def boot_render_node(sandbox: Sandbox, cloud: FakeNodeCloud, system: str, user_data: str,
                     objects: dict[str, str]) -> Node:
    """Boot `sandbox` (a node of `system`) from `user_data`, the bucket holding `objects`
    (key: content; the node tools among them): the container runtime installed by its step
    (docker answers nothing before), the worker's unit enabled and started by the
    render_worker step; then its client pointed at `cloud`."""
    for key, content in objects.items():
        stored = sandbox.dir / "objects" / key
        stored.parent.mkdir(parents=True, exist_ok=True)
        stored.write_text(content)
    (sandbox.dir / "bin/python3").symlink_to(python_of(system))
    installed = sandbox.install_text(user_data)
    assert installed.code == 0, installed.output
    boot = sandbox.boot()
    assert boot.code == 0, boot.output
    assert "systemctl enable gpu-infra-render.service" in boot.calls
    assert "systemctl restart --no-block gpu-infra-render.service" in boot.calls
    config = sandbox.root / "opt/gpu-infra/config.sh"
    config.write_text(config.read_text() + "".join(
        f"{key}={value}\n" for key, value in cloud.settings("i-render1").items()))
    (sandbox.root / "mnt/shared").mkdir(parents=True, exist_ok=True)
    return Node(sandbox, python_of(system), cloud)


def new_sandbox(directory: Path, system: str, gpus: int = 1) -> Sandbox:
    """A sandbox node of `system` with `gpus` GPUs."""
    return Sandbox(directory, gpus=gpus, os_release=OS_RELEASES[system])


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
