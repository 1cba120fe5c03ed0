"""gpu-infra-pull's login to the stack's registry, under each supported system's python3: the
node client asks ACR for a temporary token with the node role (an Enterprise instance's RPC
GetAuthorizationToken, or the personal edition's ROA one) from the stand-in cloud, which
checks signatures and RAM as the stack's node policy grants, and hands the password to
`docker login --password-stdin`; it never reaches a command line. Refusals are one line."""

from __future__ import annotations

import json
import subprocess

import pytest

from gpu_infra.blocks.bootstrap import BootstrapSpec, NodeRegistry, config_script, node_files
from gpu_infra.blocks.bootstrap.permissions import bootstrap_policy_document
from gpu_infra_facts import node_stack

from .bootstrap_sandbox import Sandbox
from .fake_node_cloud import ACCOUNT, FakeNodeCloud, registry_password
from .node_systems import PYTHONS, python_of

pytestmark = pytest.mark.slow  # gpu-infra-api under each system's python3

HOST = "t01-registry-acr-registry-vpc.cn-beijing.cr.aliyuncs.com"
IMAGE = f"{HOST}/t01/train:v1"
ENTERPRISE = NodeRegistry(HOST, "cri-abc123", f"{HOST}/t01-mirror")
PERSONAL = NodeRegistry("registry-vpc.cn-beijing.aliyuncs.com", None,
                        "registry-vpc.cn-beijing.aliyuncs.com/t01-mirror")


def spec(registry: NodeRegistry) -> BootstrapSpec:
    return BootstrapSpec(fleet="t01-gpu", region="cn-beijing", gpu_counts={}, route="grid",
                         driver=node_stack.DEFAULT_DRIVER_STACK, registry=registry)


def node(tmp_path, cloud: FakeNodeCloud, registry: NodeRegistry) -> Sandbox:
    """A sandbox whose docker stand-in runs, with the node's own gpu-infra-api and its pull
    module, config.sh as the plan writes it but pointed at the stand-in cloud."""
    sandbox = Sandbox(tmp_path, scratch=False)
    sandbox.knob("docker-version", "28.5.2")
    sandbox.knob("active-docker")
    files = node_files(spec(registry))
    for path in ("/opt/gpu-infra/bin/gpu-infra-api", "/opt/gpu-infra/bin/gpu_infra_pull.py",
                 "/opt/gpu-infra/bin/gpu-infra-pull"):
        target = sandbox.root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(files[path][0])
    settings = "".join(f"{key}={value}\n" for key, value in cloud.settings("i-node0").items())
    (sandbox.root / "opt/gpu-infra/config.sh").write_text(
        config_script(spec(registry)) + settings + "PULL_RETRY_SECONDS=0\n")
    (sandbox.dir / "registry-host").write_text(registry.endpoint)
    (sandbox.dir / "registry-password").write_text(registry_password("i-node0"))
    return sandbox


def pull(sandbox: Sandbox, system: str, image: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in sandbox.env().items() if key != "GPU_INFRA_API"}
    env["PATH"] = f"{sandbox.dir / 'bin'}:/usr/bin:/bin"
    return subprocess.run([python_of(system), str(sandbox.root / "opt/gpu-infra/bin/gpu-infra-api"),
                           "pull", image], env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def node_policy(registry: NodeRegistry) -> str:
    """The stack's node policy with the registry grant of blocks.registry's scopes."""
    scope = f"{registry.instance_id}/t01" if registry.instance_id else "t01"
    return bootstrap_policy_document("cn-beijing", ACCOUNT, "t01-gpu", registry_scopes=[scope])


@pytest.mark.parametrize("system", PYTHONS)
@pytest.mark.parametrize("registry", [ENTERPRISE, PERSONAL], ids=["enterprise", "personal"])
def test_the_node_logs_in_with_its_role_and_pulls(tmp_path, system, registry):
    with FakeNodeCloud(["i-node0"], policy=node_policy(registry)) as cloud:
        sandbox = node(tmp_path, cloud, registry)
        image = f"{registry.endpoint}/t01/train:v1"
        done = pull(sandbox, system, image)
        assert done.returncode == 0, done.stderr
        assert cloud.state.denied == []
    calls = (sandbox.dir / "calls.log").read_text().splitlines()
    assert f"docker login --username cr_temp_user --password-stdin {registry.endpoint}" in calls
    assert f"docker pull --quiet {image}" in calls
    assert registry_password("i-node0") not in "\n".join(calls)  # stdin only
    assert (sandbox.state / "docker-logins" / registry.endpoint).read_text() == "cr_temp_user\n"


@pytest.mark.parametrize("system", PYTHONS)
def test_an_image_of_another_registry_is_pulled_without_a_login(tmp_path, system):
    with FakeNodeCloud(["i-node0"]) as cloud:
        sandbox = node(tmp_path, cloud, ENTERPRISE)
        done = pull(sandbox, system, "docker.io/library/ubuntu:jammy-20251013")
    assert done.returncode == 0, done.stderr
    assert not [c for c in (sandbox.dir / "calls.log").read_text().splitlines()
                if c.startswith("docker login")]


def test_a_role_without_the_registry_grant_is_one_line(tmp_path):
    bare = bootstrap_policy_document("cn-beijing", ACCOUNT, "t01-gpu")
    assert "cr:" not in bare
    with FakeNodeCloud(["i-node0"], policy=bare) as cloud:
        sandbox = node(tmp_path, cloud, ENTERPRISE)
        done = pull(sandbox, "alinux-3", IMAGE)
        assert cloud.state.denied == [("i-node0", "cr:GetAuthorizationToken", "*")]
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "gpu-infra-api: cr GetAuthorizationToken failed: 403 Forbidden.RAM"]


def test_a_refused_login_is_one_line(tmp_path):
    with FakeNodeCloud(["i-node0"]) as cloud:
        sandbox = node(tmp_path, cloud, ENTERPRISE)
        (sandbox.dir / "registry-password").write_text("another")
        done = pull(sandbox, "ubuntu-22.04", IMAGE)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"gpu-infra-pull: docker login {HOST} failed: Error response from daemon: Get "
        f"\"https://{HOST}/v2/\": unauthorized: authentication required"]


def test_the_node_policy_grants_the_token_and_pulls_from_the_stack_namespaces_only():
    statements = json.loads(node_policy(ENTERPRISE))["Statement"]
    granted = {action: statement["Resource"] for statement in statements
               for action in statement["Action"] if action.startswith("cr:")}
    assert granted == {
        "cr:GetAuthorizationToken": ["*"],
        "cr:PullRepository": [f"acs:cr:cn-beijing:{ACCOUNT}:repository/cri-abc123/t01/*"]}
