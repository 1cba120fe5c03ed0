"""The container runtime on ECS GPU nodes, run in the node sandbox under each supported system's
own python3: Docker and the NVIDIA Container Toolkit at their pins from the intranet mirrors,
docker set up for the GPUs once, the readiness gate's container check (every GPU, eRDMA
devices), and gpu-infra-pull's retries and one-line failure."""

from __future__ import annotations

import dataclasses
import subprocess
from collections.abc import Callable

import pytest

from gpu_infra.blocks.bootstrap import BootstrapSpec, SharedFsMount
from gpu_infra_facts import container_runtime, node_stack

from .bootstrap_sandbox import (
    INSTANCE_TYPE,
    OS_RELEASES,
    TRUST,
    Run,
    Sandbox,
    Snapshot,
    clear_calls,
)
from .container_standins import docker_runs
from .node_systems import PYTHONS, python_of

pytestmark = pytest.mark.slow  # runs the node bootstrap in a shell sandbox

CHECK_IMAGE = "registry-vpc.example/t01/ubuntu:jammy-20251013"
TRAINING = BootstrapSpec(
    fleet="t01-gpu", region="cn-beijing", gpu_counts={INSTANCE_TYPE: 8},
    route="auto_install", driver=node_stack.DEFAULT_DRIVER_STACK, erdma=True,
    data_disks=("scratch",), shared_fs=SharedFsMount("nas.example:/share", "vers=3,nolock"),
    trust=TRUST, check_image=CHECK_IMAGE)
DOCKER, CTK = container_runtime.DOCKER_VERSION, container_runtime.NVIDIA_CTK_VERSION
CTK_PACKAGES = ("nvidia-container-toolkit", "nvidia-container-toolkit-base",
                "libnvidia-container-tools", "libnvidia-container1")


def node(tmp_path, system: str, spec: BootstrapSpec = TRAINING) -> Sandbox:
    """A sandbox of `system` (its os-release; its python3 runs gpu-infra-api) with the user
    data installed; gpu-infra-pull's retries 0 s apart."""
    sandbox = Sandbox(tmp_path, os_release=OS_RELEASES[system])
    (sandbox.dir / "bin/python3").symlink_to(python_of(system))
    assert sandbox.install(spec).code == 0
    with (sandbox.root / "opt/gpu-infra/config.sh").open("a") as config:
        config.write("PULL_RETRY_SECONDS=0\n")
    return sandbox


@pytest.fixture(scope="module")
def first_boot(tmp_path_factory) -> Callable[[str], tuple[Sandbox, Run]]:
    """A new TRAINING node of a system booted once per module, and what its boot did: the
    node as that boot left it for each test (a snapshot put back)."""
    booted: dict[str, tuple[Snapshot, Run]] = {}

    def boot(system: str) -> tuple[Sandbox, Run]:
        if system not in booted:
            sandbox = node(tmp_path_factory.mktemp(system), system)
            run = sandbox.boot()
            booted[system] = (Snapshot(sandbox), run)
        snapshot, run = booted[system]
        return snapshot.restore(), run
    return boot


def installs(run) -> list[str]:
    """The package installs of the container runtime."""
    return [call for call in run.calls if call.startswith(("apt-get", "dnf")) and
            " install " in call and "docker-ce" in call]


@pytest.mark.parametrize("system", PYTHONS)
def test_a_new_node_installs_the_pinned_runtime_from_the_mirrors_and_a_container_sees_it_all(
        first_boot, system):
    sandbox, run = first_boot(system)
    assert run.code == 0, run.output
    [install] = installs(run)
    if system.startswith("ubuntu"):
        release = system.removeprefix("ubuntu-")
        codename = {"22.04": "jammy", "24.04": "noble"}[release]
        docker = f"5:{DOCKER}-1~ubuntu.{release}~{codename}"
        assert install.endswith(" ".join([f"docker-ce={docker}", f"docker-ce-cli={docker}",
                                          *(f"{p}={CTK}-1" for p in CTK_PACKAGES)]))
        assert run.file("/etc/apt/sources.list.d/docker.list") == (
            "deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.asc] "
            f"http://mirrors.cloud.aliyuncs.com/docker-ce/linux/ubuntu {codename} stable\n")
        assert run.file("/etc/apt/sources.list.d/nvidia-container-toolkit.list") == (
            "deb [signed-by=/etc/apt/keyrings/nvidia-container-toolkit.asc] "
            "http://mirrors.cloud.aliyuncs.com/libnvidia-container/stable/deb/$(ARCH) /\n")
        assert run.calls.index("apt-get -q -o DPkg::Lock::Timeout=600 update") < \
            run.calls.index(install)  # the lists are read again after the repositories
    else:
        assert install == ("dnf install -y -q " + " ".join(
            [f"docker-ce-{DOCKER}", f"docker-ce-cli-{DOCKER}",
             *(f"{p}-{CTK}" for p in CTK_PACKAGES)]))
        repo = run.file("/etc/yum.repos.d/docker-ce.repo")
        assert "baseurl=http://mirrors.cloud.aliyuncs.com/docker-ce/linux/rhel/8/x86_64/stable" \
            in repo and "gpgcheck=1" in repo
        assert "baseurl=http://mirrors.cloud.aliyuncs.com/libnvidia-container/stable/rpm/" \
            "x86_64" in run.file("/etc/yum.repos.d/nvidia-container-toolkit.repo")
    assert '"nvidia"' in run.file("/etc/docker/daemon.json")
    assert run.calls.index(f"nvidia-ctk runtime configure --runtime=docker "
                           f"--config={sandbox.root}/etc/docker/daemon.json") < \
        run.calls.index("systemctl restart docker")
    gpus, erdma = docker_runs(sandbox.dir)
    assert gpus.options == {"--gpus": ["all"]} and gpus.flags == ["--rm"]
    assert (gpus.image, gpus.command) == (CHECK_IMAGE, ["nvidia-smi", "-L"])
    assert erdma.options == {"--device": ["/dev/infiniband"]}
    assert (erdma.image, erdma.command) == (CHECK_IMAGE, ["ls", "/dev/infiniband"])
    assert f"docker pull --quiet {CHECK_IMAGE}" in run.calls  # through gpu-infra-pull
    assert "check ok: a container sees the 8 GPU(s)" in run.output
    assert "check ok: a container sees the eRDMA devices" in run.output
    assert run.exists("/var/lib/gpu-infra/ready")


def test_a_second_boot_installs_nothing_and_leaves_docker_running(first_boot):
    sandbox, first = first_boot("ubuntu-22.04")
    assert first.code == 0
    clear_calls(sandbox)
    second = sandbox.boot()
    assert second.code == 0, second.output
    assert not installs(second)
    assert "systemctl restart docker" not in second.calls
    assert not [call for call in second.calls if call.startswith("docker pull")]  # it has it
    assert f"Docker {DOCKER} and the NVIDIA Container Toolkit {CTK} present" in second.output


def test_docker_restarts_when_it_stopped_or_its_configuration_lost_the_nvidia_runtime(
        first_boot):
    sandbox, first = first_boot("alinux-3")
    assert first.code == 0
    (sandbox.root / "etc/docker/daemon.json").write_text('{"log-driver": "journald"}')
    clear_calls(sandbox)
    again = sandbox.boot()
    assert again.code == 0, again.output
    assert "systemctl restart docker" in again.calls
    assert '"journald"' in again.file("/etc/docker/daemon.json")  # the user's setting stays
    (sandbox.state / "active-docker").unlink()
    clear_calls(sandbox)
    stopped = sandbox.boot()
    assert stopped.code == 0, stopped.output
    assert "systemctl restart docker" in stopped.calls


def test_a_container_that_sees_fewer_gpus_than_the_node_makes_it_unhealthy(tmp_path):
    sandbox = node(tmp_path, "ubuntu-24.04")
    sandbox.knob("container-gpus", "7")
    run = sandbox.boot()
    assert run.code != 0
    assert "check FAILED: a container sees the 8 GPU(s)" in run.output
    assert run.file("/var/lib/gpu-infra/unhealthy").strip() == "health"


def test_a_node_whose_containers_get_no_erdma_device_is_unhealthy(first_boot):
    sandbox, first = first_boot("ubuntu-22.04")
    assert first.code == 0
    for device in (sandbox.root / "dev/infiniband").iterdir():
        device.unlink()  # the eRDMA interfaces are up, but no verbs device reaches /dev
    run = sandbox.boot()
    assert run.code != 0
    assert "check ok: a container sees the 8 GPU(s)" in run.output
    assert "check FAILED: a container sees the eRDMA devices" in run.output
    assert run.file("/var/lib/gpu-infra/unhealthy").strip() == "health"


def test_an_installed_runtime_at_another_version_is_refused(tmp_path):
    sandbox = node(tmp_path, "ubuntu-22.04")
    sandbox.knob("docker-version", "24.0.7")
    run = sandbox.boot()
    assert run.code != 0
    assert f"Docker 24.0.7 is installed but {DOCKER} is pinned" in run.output
    assert not installs(run)


def test_the_pull_rides_out_a_short_outage_and_a_long_one_fails_with_one_line(tmp_path):
    sandbox = node(tmp_path, "alinux-3")
    sandbox.knob("pull-failures", str(container_runtime.PULL_TRIES - 1))
    run = sandbox.boot()
    assert run.code == 0, run.output
    pulls = [call for call in run.calls if call.startswith("docker pull")]
    assert len(pulls) == container_runtime.PULL_TRIES
    (sandbox.state / "docker-images").rename(sandbox.dir / "pruned")
    sandbox.knob("registry-down")
    clear_calls(sandbox)
    failed = sandbox.boot()
    assert failed.code != 0
    assert "check FAILED: a container sees the 8 GPU(s)" in failed.output
    lines = [line.removeprefix("  | ") for line in failed.output.splitlines()
             if "gpu-infra-pull" in line]  # the step's stderr, as the log quotes it
    assert lines == [f"gpu-infra-pull: {CHECK_IMAGE}: not pulled after "
                     f"{container_runtime.PULL_TRIES} tries: Error response from daemon: Get "
                     "\"https://registry-vpc.example/v2/\": dial tcp: i/o timeout"]


@pytest.mark.parametrize("system", PYTHONS)
def test_gpu_infra_pull_is_one_line_and_exit_1_when_docker_is_down(tmp_path, system):
    sandbox = node(tmp_path, system)
    sandbox.knob("docker-version", DOCKER)
    pull = sandbox.root / "opt/gpu-infra/bin/gpu-infra-pull"
    env = {key: value for key, value in sandbox.env().items() if key != "GPU_INFRA_API"}
    done = subprocess.run(["dash", str(pull), "x.example/a:1"], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "gpu-infra-pull: x.example/a:1: not pulled after 5 tries: Cannot connect to the Docker "
        "daemon at unix:///var/run/docker.sock. Is the docker daemon running?"]
    usage = subprocess.run(["dash", str(pull)], env=env, capture_output=True, text=True,
                           timeout=60, check=False)
    assert (usage.returncode, usage.stderr) == (2, "usage: gpu-infra-pull IMAGE\n")


def test_without_a_check_image_no_container_runs(tmp_path):
    sandbox = node(tmp_path, "ubuntu-22.04", dataclasses.replace(TRAINING, check_image=None))
    run = sandbox.boot()
    assert run.code == 0, run.output
    assert docker_runs(sandbox.dir) == []
    assert "systemctl restart docker" in run.calls  # the runtime is there all the same
