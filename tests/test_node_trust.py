"""Trust between training nodes comes only from what the stack writes (blocks.compute.trust):
a principal with a node's own permissions, or anyone who may tag the fleet's instances, tries
to add a key to root's authorized_keys, swap a peer's host key or slip an instance into the
hostfile, and fails. The real gpu-infra-api (each system's python3) and the node scripts run
against the signing stand-in, which applies the stack's node policy as RAM would; the keys are
real OpenSSH ED25519 keys, and two sandbox nodes log in to each other through a real OpenSSH
server (sshd on 127.0.0.1, started by the test only)."""

from __future__ import annotations

import shlex
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from gpu_infra.blocks.bootstrap import node_files
from gpu_infra.blocks.bootstrap.permissions import bootstrap_policy_document
from gpu_infra.blocks.compute.trust import NODE_LIST_PAGE_IDS, node_list_pages, page_name

from .bootstrap_sandbox import HOSTNAME, TRUST, Sandbox
from .fake_node_cloud import ACCOUNT, FakeNodeCloud
from .node_systems import PYTHONS, python_of
from .test_bootstrap_run import TRAINING

pytestmark = pytest.mark.slow  # runs the node code against an HTTP stand-in

SSHD = "/usr/sbin/sshd"
"""Debian's and Ubuntu's OpenSSH server (sshd wants its absolute path)."""

NODES = {"i-node0": (HOSTNAME, "10.1.0.10"), "i-node1": ("t01-gpu-node-001", "10.1.0.11")}
ROGUE = ("i-rogue", "a-rogue-host", "10.9.9.9")
"""An instance outside the stack's node list (its name sorts first: it would be node 0)."""


def keypair(directory: Path, name: str) -> tuple[str, str]:
    """A real ED25519 key (private OpenSSH text, public line), as tls.PrivateKey makes."""
    path = directory / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "", "-f", str(path)],
                   check=True)
    return path.read_text(), path.with_suffix(".pub").read_text().strip()


def signed_call(python: str, api: Path, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([python, str(api), *args], env={"GPU_INFRA_ROOT": str(root)},
                          capture_output=True, text=True, timeout=60, check=False)


def attack(python: str, api: Path, root: Path, action: str, **params: str) -> None:
    """One signed call with the attacking node's credentials, through gpu-infra-api's own
    signer (its `call`)."""
    script = ("import importlib.machinery, sys; "
              f"m = importlib.machinery.SourceFileLoader('api', {str(api)!r}).load_module(); "
              f"m.call(sys.argv[1], m.config()[sys.argv[1].upper() + '_ENDPOINT'], "
              f"{action!r}, **{params!r})")
    product = "oos" if "Parameter" in action else "ecs"
    subprocess.run([python, "-c", script, product], env={"GPU_INFRA_ROOT": str(root)},
                   capture_output=True, text=True, timeout=60, check=False)


def node_config(root: Path, settings: dict[str, str]) -> None:
    """Point config.sh under `root` at the stand-in."""
    config = root / "opt/gpu-infra/config.sh"
    lines = [line for line in config.read_text().splitlines()
             if line.split("=", 1)[0] not in settings]
    config.write_text("\n".join([*lines, *(f"{k}={shlex.quote(v)}" for k, v in
                                           settings.items())]) + "\n")


@pytest.mark.parametrize("system", list(PYTHONS))
def test_a_principal_that_may_tag_cannot_change_what_nodes_trust(tmp_path, system):
    python = python_of(system)
    user_key, user_pub = keypair(tmp_path, "user")
    host_key, host_pub = keypair(tmp_path, "host")
    forged_key, forged_pub = keypair(tmp_path, "forged")
    policy = bootstrap_policy_document(TRAINING.region, ACCOUNT, TRAINING.fleet, trust=TRUST)
    with FakeNodeCloud(list(NODES), policy=policy) as cloud:
        state = cloud.state
        state.batch = []
        state.secrets = {TRUST.user_key: user_key, TRUST.host_key: host_key}
        state.parameters = {TRUST.node_list: ",".join(NODES)}
        for instance, (host, ip) in NODES.items():
            state.instances[instance] = {"HostName": host, "PrivateIp": ip,
                                         "InstanceType": "ecs.gn8v-8x.48xlarge"}
            state.tags[instance]["GpuInfraHealth"] = "healthy"
        rogue, rogue_host, rogue_ip = ROGUE
        state.instances[rogue] = {"HostName": rogue_host, "PrivateIp": rogue_ip,
                                  "InstanceType": "ecs.gn8v-8x.48xlarge"}
        state.tags[rogue] = {}

        attacker = Sandbox(tmp_path / "node1")
        attacker.install(TRAINING)
        api = attacker.root / "opt/gpu-infra/bin/gpu-infra-api"
        node_config(attacker.root, cloud.settings("i-node1"))
        # with node1's own role: rewrite the fleet's keys and node list, tag the rogue in
        attack(python, api, attacker.root, "UpdateSecretParameter", RegionId=TRAINING.region,
               Name=TRUST.user_key, Value=forged_key)
        attack(python, api, attacker.root, "UpdateSecretParameter", RegionId=TRAINING.region,
               Name=TRUST.host_key, Value=forged_key)
        attack(python, api, attacker.root, "UpdateParameter", RegionId=TRAINING.region,
               Name=TRUST.node_list, Value=f"{rogue},i-node1")
        attack(python, api, attacker.root, "TagResources", RegionId=TRAINING.region,
               ResourceType="instance", **{"ResourceId.1": rogue, "Tag.1.Key": "GpuFleet",
                                           "Tag.1.Value": TRAINING.fleet})
        # what the old design trusted: key tags on a peer, which node1's role may still set
        attack(python, api, attacker.root, "TagResources", RegionId=TRAINING.region,
               ResourceType="instance", **{"ResourceId.1": "i-node0",
                                           "Tag.1.Key": "GpuInfraSshKey",
                                           "Tag.1.Value": forged_pub.split()[1]})
        assert {action for _, action, _ in state.denied} == {
            "oos:UpdateSecretParameter", "oos:UpdateParameter", "ecs:TagResources"}
        assert state.secrets[TRUST.user_key] == user_key
        assert state.tags["i-node0"]["GpuInfraSshKey"] == forged_pub.split()[1]
        # a principal that may tag any instance (an operator role, a tagging automation)
        # tags the rogue into the fleet, healthy
        state.tags[rogue] = {"GpuFleet": TRAINING.fleet, "GpuInfraHealth": "healthy"}

        node = Sandbox(tmp_path / "node0")
        (node.dir / "bin/ssh-keygen").unlink()  # the real one
        node.install(TRAINING)
        # the node's shell steps keep the sandbox's metadata; its API calls go to the stand-in
        api_root = tmp_path / "node0-api"
        shutil.copytree(node.root / "opt/gpu-infra", api_root / "opt/gpu-infra")
        node_config(api_root, cloud.settings("i-node0"))
        (node.dir / "bin/gpu-infra-api").write_text(
            "#!/bin/bash\n[ \"$1\" != gpu-check ] || exit 0  # no GPU here\n"
            f"GPU_INFRA_ROOT={shlex.quote(str(api_root))} exec "
            f"{shlex.quote(python)} {api_root / 'opt/gpu-infra/bin/gpu-infra-api'} \"$@\"\n")
        boot = node.boot()
        assert boot.code == 0, boot.output
        peers = node.run("/opt/gpu-infra/bin/gpu-infra-peers")
        assert peers.code == 0, peers.output

    assert node.root.joinpath("root/.ssh/id_ed25519").read_text() == user_key
    assert node.root.joinpath("etc/ssh/ssh_host_ed25519_key").read_text() == host_key
    authorized = node.root.joinpath("root/.ssh/authorized_keys").read_text()
    assert authorized == f"{user_pub} gpu-infra-fleet\n"
    assert forged_pub.split()[1] not in authorized
    hostfile = node.root.joinpath("etc/gpu-infra/hostfile").read_text()
    assert hostfile.splitlines() == ["10.1.0.10 slots=8", "10.1.0.11 slots=8"]
    assert "MASTER_ADDR=10.1.0.10" in node.root.joinpath("etc/gpu-infra/torchrun.env").read_text()
    known = node.root / "etc/gpu-infra/known_hosts"
    assert rogue_ip not in known.read_text() and rogue_host not in known.read_text()
    # real OpenSSH reads the pinned host key for a peer's name and address, and no other
    for name in ("t01-gpu-node-001", "10.1.0.11"):
        found = subprocess.run(["ssh-keygen", "-F", name, "-f", str(known)],
                               capture_output=True, text=True, check=False)
        assert found.returncode == 0 and host_pub.split()[1] in found.stdout
    assert subprocess.run(["ssh-keygen", "-F", rogue_ip, "-f", str(known)],
                          capture_output=True, check=False).returncode == 1
    assert rogue_host not in node.root.joinpath("etc/hosts").read_text()


def test_node_list_pages_go_on_and_the_node_reads_every_page(tmp_path):
    ids = [f"i-{n:020d}" for n in range(NODE_LIST_PAGE_IDS * 2 + 3)]
    pages = node_list_pages(ids)
    assert len(pages) == 3 and pages[0].endswith(",+") and not pages[2].endswith("+")
    assert all(len(page) <= 4096 for page in pages)
    with FakeNodeCloud([]) as cloud:
        cloud.state.parameters = {page_name(TRUST.node_list, n): page
                                  for n, page in enumerate(pages, start=1)}
        for i in ids:
            cloud.state.instances[i] = {"HostName": i, "PrivateIp": "10.0.0.1",
                                        "InstanceType": "t"}
        root = tmp_path / "node"
        files = node_files(TRAINING)
        for path in ("/opt/gpu-infra/bin/gpu-infra-api", "/opt/gpu-infra/bin/gpu_infra_peers.py",
                     "/opt/gpu-infra/config.sh"):
            target = root / path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(files[path][0])
        sandbox_config = root / "opt/gpu-infra/config.sh"
        lines = [line for line in sandbox_config.read_text().splitlines()
                 if line.split("=", 1)[0] not in cloud.settings("i-x")]
        sandbox_config.write_text("\n".join(
            [*lines, *(f"{k}={shlex.quote(v)}" for k, v in cloud.settings("i-x").items())]))
        done = signed_call(python_of("alinux-3"), root / "opt/gpu-infra/bin/gpu-infra-api",
                           root, "peers")
        assert done.returncode == 0, done.stderr
        assert [row.split("\t")[0] for row in done.stdout.splitlines()] == ids
        cloud.state.parameters = {}
        missing = signed_call(python_of("alinux-3"), root / "opt/gpu-infra/bin/gpu-infra-api",
                              root, "peers")
        assert missing.returncode == 75  # not written yet: the peers timer tries again


def sshd(directory: Path, host_key: Path, authorized: Path) -> tuple[subprocess.Popen[str], int]:
    """A real OpenSSH server on 127.0.0.1 playing one node: its host key and root's
    authorized_keys are the node's files; the port it listens on."""
    with socket.socket() as probe:  # a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = directory / "sshd_config"
    config.write_text(f"ListenAddress 127.0.0.1:{port}\nHostKey {host_key}\n"
                      f"AuthorizedKeysFile {authorized}\nPermitRootLogin prohibit-password\n"
                      "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                      "UsePAM no\nStrictModes no\n"
                      f"PidFile {directory / 'sshd.pid'}\n")
    Path("/run/sshd").mkdir(exist_ok=True)  # its privilege separation directory
    server = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], text=True,
                              stderr=subprocess.PIPE)
    for _ in range(100):
        with socket.socket() as client:
            if client.connect_ex(("127.0.0.1", port)) == 0:
                return server, port
        time.sleep(0.05)
    server.kill()
    raise AssertionError(f"sshd did not listen: {server.communicate()[1]}")


def ssh_from(node: Sandbox, peer: str, port: int, key: Path | None = None
             ) -> subprocess.CompletedProcess[str]:
    """`ssh root@<peer> true` as node's root would run it: its key, its known hosts (the
    peer's name as gpu-infra-peers wrote it), strict host key checking."""
    return subprocess.run(
        ["ssh", "-F", "/dev/null", "-p", str(port), "-i",
         str(key or node.root / "root/.ssh/id_ed25519"), "-o", "BatchMode=yes",
         "-o", "IdentitiesOnly=yes", "-o", "StrictHostKeyChecking=yes",
         "-o", f"GlobalKnownHostsFile={node.root / 'etc/gpu-infra/known_hosts'}",
         "-o", "UserKnownHostsFile=/dev/null", "-o", f"HostKeyAlias={peer}",
         "root@127.0.0.1", "true"], capture_output=True, text=True, timeout=30, check=False)


@pytest.mark.skipif(not Path(SSHD).exists(), reason="NOT TESTED: no OpenSSH server "
                    "(apt-get install openssh-server; .ci/run installs it)")
def test_nodes_log_in_to_each_other_and_nothing_else_passes_for_a_node(tmp_path):
    """Two nodes booted from the same fleet keys: node 0 logs in to node 1 as root with real
    OpenSSH, by the name gpu-infra-peers wrote; a server without the fleet's host key is
    refused (host key verification), and a client without the fleet's key is denied."""
    user_key, user_pub = keypair(tmp_path, "user")
    host_key, host_pub = keypair(tmp_path, "host")
    peers = ((HOSTNAME, "10.1.0.10", "healthy"), ("t01-gpu-node-001", "10.1.0.11", "healthy"))
    nodes = []
    for name in ("node0", "node1"):
        node = Sandbox(tmp_path / name, peers=peers)
        (node.dir / "bin/ssh-keygen").unlink()  # the real one
        (node.dir / "secrets" / TRUST.user_key).write_text(user_key)
        (node.dir / "secrets" / TRUST.host_key).write_text(host_key)
        node.install(TRAINING)
        assert node.boot().code == 0
        nodes.append(node)
    node0, node1 = nodes
    assert "t01-gpu-node-001" in node0.root.joinpath("etc/hosts").read_text()
    server, port = sshd(tmp_path, node1.root / "etc/ssh/ssh_host_ed25519_key",
                        node1.root / "root/.ssh/authorized_keys")
    _, stranger_pub = keypair(tmp_path, "stranger")
    try:
        done = ssh_from(node0, "t01-gpu-node-001", port)
        assert done.returncode == 0, done.stderr
        denied = ssh_from(node0, "t01-gpu-node-001", port, key=tmp_path / "stranger")
        assert denied.returncode != 0 and "Permission denied" in denied.stderr
    finally:
        server.terminate()
        server.communicate(timeout=10)
    rogue, rogue_port = sshd(tmp_path, tmp_path / "stranger",
                             node1.root / "root/.ssh/authorized_keys")
    try:
        refused = ssh_from(node0, "t01-gpu-node-001", rogue_port)
        assert refused.returncode != 0 and "Host key verification failed" in refused.stderr
    finally:
        rogue.terminate()
        rogue.communicate(timeout=10)
    assert host_pub.split()[1] in node0.root.joinpath("etc/gpu-infra/known_hosts").read_text()
    assert user_pub.split()[1] in node1.root.joinpath("root/.ssh/authorized_keys").read_text()
    assert stranger_pub.split()[1] not in node1.root.joinpath(
        "root/.ssh/authorized_keys").read_text()
