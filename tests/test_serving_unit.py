"""gpu-infra-serve, the model server unit's program, as the node tools install it, under each
supported system's /bin/sh (dash on Ubuntu, bash on Alibaba Cloud Linux 3) and python3,
against the sandbox's docker stand-in and the stand-in OSS: the container starts only once
every file of the model is on the node and checked, with the GPUs, the node's network and the
model read-only; a corrupt model never starts it, a missing one is waited for."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from gpu_infra.blocks.bootstrap import node_files, node_tools_files
from gpu_infra_facts import container_runtime

from .bootstrap_sandbox import OS_RELEASES, Sandbox
from .container_standins import docker_runs
from .fake_node_cloud import FakeNodeCloud
from .node_systems import PYTHONS, dash, python_of
from .test_serving_node import BUCKET, FILES, PREFIX, SERVING_NODE, UNIT, manifest, upload

pytestmark = pytest.mark.slow  # node programs under each system's shell and python3

DIGEST = hashlib.sha256(manifest(FILES)).hexdigest()
MODEL_ON_NODE = f"{UNIT.model_cache}/{DIGEST}"


def shell_of(system: str) -> str:
    """The system's /bin/sh: dash on Ubuntu, bash on Alibaba Cloud Linux 3."""
    return dash() if system.startswith("ubuntu") else "bash"


def serve(tmp_path: Path, system: str, cloud: FakeNodeCloud) -> tuple[
        Sandbox, subprocess.CompletedProcess[str]]:
    """A node of `system` with docker running and the node tools installed; gpu-infra-serve
    run once as its unit runs it (the unit's PATH: /opt/gpu-infra/bin first)."""
    sandbox = Sandbox(tmp_path, os_release=OS_RELEASES[system])
    (sandbox.dir / "bin/python3").symlink_to(python_of(system))
    for path, (content, mode) in {**node_files(SERVING_NODE),
                                  **node_tools_files(SERVING_NODE)}.items():
        target = sandbox.root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        target.chmod(mode)
    with (sandbox.root / "opt/gpu-infra/config.sh").open("a") as config:
        config.write("".join(f"{key}={value}\n" for key, value in
                             cloud.settings("i-node0").items()) + "PULL_RETRY_SECONDS=0\n")
    sandbox.knob("docker-version", container_runtime.DOCKER_VERSION)
    sandbox.knob("active-docker")
    sandbox.knob("docker-daemon.json", '{"runtimes": {"nvidia": {}}}')
    hook = sandbox.dir / "containers" / UNIT.image.translate(str.maketrans("/:@", "___"))
    hook.parent.mkdir()
    hook.write_text(f'ls "$GPU_INFRA_ROOT{MODEL_ON_NODE}" | tr "\\n" " " > '
                    '"$SANDBOX/container-started"\n')  # what the container finds at its start
    env = {**{k: v for k, v in sandbox.env().items() if k != "GPU_INFRA_API"},
           "PATH": f"{sandbox.root}/opt/gpu-infra/bin:{sandbox.dir}/bin:/usr/bin:/bin"}
    program = sandbox.root / "opt/gpu-infra/bin/gpu-infra-serve"
    done = subprocess.run([shell_of(system), str(program)], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    return sandbox, done


@pytest.mark.parametrize("system", list(PYTHONS))
def test_the_server_starts_after_its_model_with_the_gpus_and_the_node_s_network(tmp_path,
                                                                                system):
    with FakeNodeCloud(["i-node0"]) as cloud:
        upload(cloud, FILES)
        sandbox, done = serve(tmp_path, system, cloud)
    assert done.returncode == 0, done.stderr
    assert (sandbox.dir / "container-started").read_text() == "config.json weights "
    [run] = docker_runs(sandbox.dir)
    assert run.options["--gpus"] == ["all"] and run.options["--network"] == ["host"]
    assert run.options["--ipc"] == ["host"] and "--rm" in run.flags
    assert run.options["-v"] == [f"{sandbox.root}{MODEL_ON_NODE}:/mnt/models/{PREFIX}:ro"]
    assert run.options["-e"] == [f"MODEL_DIR=/mnt/models/{PREFIX}"]
    assert run.options["--entrypoint"] == ["vllm"]
    assert (run.image, run.command) == (UNIT.image, list(UNIT.command[1:]))
    assert "docker pull --quiet " + UNIT.image in sandbox.dir.joinpath("calls.log").read_text()


@pytest.mark.parametrize("system", list(PYTHONS))
def test_a_corrupt_model_never_starts_the_server(tmp_path, system):
    with FakeNodeCloud(["i-node0"]) as cloud:
        upload(cloud, FILES)
        name = "config.json"
        cloud.state.objects[(BUCKET, f"{PREFIX}/{name}")] = (b"{}\n", "Standard")
        sandbox, done = serve(tmp_path, system, cloud)
    assert done.returncode == 1
    line = (f"model {PREFIX}: gpu-infra-api: oss://{BUCKET}/{PREFIX}/{name} does not match its "
            "sha256 in SHA256SUMS (corrupt, or replaced after the manifest was made)")
    assert done.stderr == f"gpu-infra-serve: {line}\n"
    assert sandbox.root.joinpath("var/lib/gpu-infra/serving.error").read_text() == line + "\n"
    assert docker_runs(sandbox.dir) == [] and not (sandbox.dir / "container-started").exists()


def test_a_model_not_uploaded_yet_is_waited_for(tmp_path):
    with FakeNodeCloud(["i-node0"]) as cloud:
        sandbox, done = serve(tmp_path, "ubuntu-22.04", cloud)
    assert done.returncode == 75  # the unit starts it again 10 s later
    waiting = sandbox.root.joinpath("var/lib/gpu-infra/serving.waiting").read_text()
    assert waiting == (f"model {PREFIX}: gpu-infra-api: oss GetObject /{BUCKET}/{PREFIX}/"
                       "SHA256SUMS failed: 404 NoSuchKey (no such object: upload it)\n")
    assert not sandbox.root.joinpath("var/lib/gpu-infra/serving.error").exists()
    assert docker_runs(sandbox.dir) == []


def test_an_image_not_pulled_is_waited_for_like_a_model_not_uploaded(tmp_path):
    """The first `pulumi up` makes the registry and the nodes together: until the image is
    pushed, the unit tries again (exit 75, the line in serving.waiting), no container."""
    with FakeNodeCloud(["i-node0"]) as cloud:
        upload(cloud, FILES)
        (tmp_path / "state").mkdir(parents=True)
        (tmp_path / "state/registry-down").write_text("")
        sandbox, done = serve(tmp_path, "ubuntu-22.04", cloud)
    assert done.returncode == 75, done.stderr
    waiting = sandbox.root.joinpath("var/lib/gpu-infra/serving.waiting").read_text()
    assert waiting.startswith(f"image {UNIT.image}: gpu-infra-pull: {UNIT.image}: not pulled "
                              "after 5 tries: Error response from daemon: ")
    assert not sandbox.root.joinpath("var/lib/gpu-infra/serving.error").exists()
    assert docker_runs(sandbox.dir) == []
