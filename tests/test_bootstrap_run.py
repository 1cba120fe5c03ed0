"""The bootstrap run under bash in a sandbox of stand-in commands: step order, pinned versions
and URLs, idempotency, and failures that make the node unhealthy and abandon its scale-out."""

from __future__ import annotations

import dataclasses
import hashlib
import re

import pytest

from gpu_infra.blocks.bootstrap import BootstrapSpec, GridPackage, SharedFsMount
from gpu_infra_facts import node_stack

from .bootstrap_sandbox import (
    HOST_KEY_PARAMETER,
    HOSTNAME,
    INSTANCE_TYPE,
    OS_RELEASES,
    SCRATCH_SERIAL,
    TRUST,
    Run,
    Sandbox,
    Snapshot,
    clear_calls,
)

pytestmark = pytest.mark.slow  # runs the node bootstrap in a shell sandbox

PIN = node_stack.DEFAULT_DRIVER_STACK
APT_INSTALL = "apt-get -q -o DPkg::Lock::Timeout=600 install -y "
TRAINING = BootstrapSpec(
    fleet="t01-gpu", region="cn-beijing", gpu_counts={INSTANCE_TYPE: 8},
    route="auto_install", driver=PIN, erdma=True, fabric_manager=True,
    data_disks=("scratch",), shared_fs=SharedFsMount("nas.example:/share", "vers=3,nolock"),
    trust=TRUST)
SCALING = dataclasses.replace(TRAINING, erdma=False, fabric_manager=False, trust=None,
                              shared_fs=None, scaling_group_id="asg-1",
                              lifecycle_hook_id="ash-ready")


def steps_started(output: str) -> list[str]:
    return re.findall(r"\[(\w+)\] start$", output, flags=re.MULTILINE)


def booted(tmp_path, spec: BootstrapSpec, **knobs: str) -> tuple[Sandbox, Run]:
    sandbox = Sandbox(tmp_path)
    for name, value in knobs.items():
        sandbox.knob(name.replace("_", "-"), value)
    assert sandbox.install(spec).code == 0
    return sandbox, sandbox.boot()


@pytest.fixture(scope="module")
def training_snapshot(tmp_path_factory) -> tuple[Snapshot, Run]:
    """One TRAINING node booted once per module, and what its first boot did."""
    sandbox, run = booted(tmp_path_factory.mktemp("training"), TRAINING)
    return Snapshot(sandbox), run


@pytest.fixture
def training_run(training_snapshot) -> Run:
    """The first boot of a TRAINING node, its files as that boot left them."""
    snapshot, run = training_snapshot
    snapshot.restore()
    return run


def test_user_data_installs_the_unit_and_starts_it_without_waiting(tmp_path):
    sandbox = Sandbox(tmp_path)
    run = sandbox.install(TRAINING)
    assert run.code == 0
    assert run.calls == ["systemctl daemon-reload",
                         "systemctl enable gpu-infra-bootstrap.service",
                         "systemctl start --no-block gpu-infra-bootstrap.service"]
    assert "ExecStart=/opt/gpu-infra/bootstrap.sh" in run.file(
        "/etc/systemd/system/gpu-infra-bootstrap.service")
    assert run.exists("/opt/gpu-infra/bin/gpu-infra-peers")


def test_training_node_runs_every_step_in_order_with_pinned_versions(training_run):
    run = training_run
    assert run.code == 0, run.output
    assert steps_started(run.output) == [
        "data_disks", "shared_fs", "gpu_driver", "erdma", "fabric_manager", "container_runtime",
        "cloudmonitor", "nccl_env", "cluster_ssh", "health", "cluster_peers"]
    calls = run.calls
    assert f"auto_install {PIN.driver} {PIN.cuda} {PIN.cudnn} FALSE FALSE" in calls
    downloads = [c.split()[-1] for c in calls if c.startswith("curl") and " -o " in c]
    assert downloads == [
        "http://mirrors.cloud.aliyuncs.com/opsx/ecs/linux/binary/script/auto_install_v4.0.sh",
        "http://mirrors.cloud.aliyuncs.com/erdma/erdma_installer-"
        f"{node_stack.ERDMA_INSTALLER_VERSION}.tar.gz",
        "http://mirrors.cloud.aliyuncs.com/erdma/env_setup.sh",
        "http://mirrors.cloud.aliyuncs.com/docker-ce/linux/ubuntu/gpg",
        "http://mirrors.cloud.aliyuncs.com/libnvidia-container/gpgkey",
        "https://cms-agent-cn-beijing.oss-cn-beijing-internal.aliyuncs.com/Argus/"
        "agent_install_ecs-1.7.sh"]
    assert ("env_setup --egs --url http://mirrors.cloud.aliyuncs.com/erdma/erdma_installer-"
            f"{node_stack.ERDMA_INSTALLER_VERSION}.tar.gz") in calls
    assert f"cms_installer ARGUS_VERSION={node_stack.CLOUDMONITOR_AGENT_VERSION}" in calls
    assert "modprobe erdma compat_mode=Y" in calls
    assert f"ip link set dev eth0 mtu {node_stack.ERDMA_MTU}" in calls
    assert run.exists("/var/lib/gpu-infra/ready")
    assert "gpu-infra-api tag GpuInfraHealth=healthy" in calls
    assert not [c for c in calls if "answer-scale-out" in c]  # fixed nodes have no hook
    # metadata in hardened mode only (the instances run with http_tokens required)
    reads = [c for c in calls if c.startswith("curl") and "100.100.100.200" in c]
    assert reads and all("X-aliyun-ecs-metadata-token" in c for c in reads)
    assert [c for c in reads if "-X PUT http://100.100.100.200/latest/api/token" in c]


def test_nccl_settings_for_two_erdma_nics(training_run):
    env = training_run.file("/etc/gpu-infra/nccl.env").splitlines()
    assert "NCCL_IB_HCA=erdma_0,erdma_1" in env
    assert "NCCL_IB_ADDR_RANGE=10.1.0.0/24" in env
    assert "NCCL_SOCKET_IFNAME=eth0" in env and "NCCL_IB_GID_INDEX=-1" in env
    assert "export NCCL_MIN_NCHANNELS=16" in training_run.file("/etc/profile.d/gpu-infra-nccl.sh")


def test_second_boot_installs_nothing_again(training_snapshot):
    snapshot, first = training_snapshot
    sandbox = snapshot.restore()
    assert first.code == 0
    clear_calls(sandbox)
    second = sandbox.boot()
    assert second.code == 0, second.output
    commands = second.commands()
    for installer in ("auto_install", "env_setup", "cms_installer", "mkfs.xfs"):
        assert installer not in commands
    assert second.file("/etc/fstab").count("/mnt/scratch") == 1
    assert second.file("/etc/fstab").count("/mnt/shared") == 1
    assert "gpu-infra-api tag GpuInfraHealth=healthy" in second.calls


def disk_booted(tmp_path, spec: BootstrapSpec, *disks: tuple) -> tuple[Sandbox, object]:
    """Boot with only `disks` attached: (name, serial, device[, attach options])."""
    sandbox = Sandbox(tmp_path, scratch=False)
    for name, serial, device, *options in disks:
        sandbox.attach_disk(name, serial, device, **(options[0] if options else {}))
    assert sandbox.install(spec).code == 0
    return sandbox, sandbox.boot()


def test_data_disks_are_mounted_by_name_not_by_device_order(tmp_path):
    """Each disk's device is found by the serial its ECS name maps to in instance metadata,
    whatever order the devices came up in (virtio and NVMe alike)."""
    spec = dataclasses.replace(TRAINING, data_disks=("scratch", "ckpt"))
    _, run = disk_booted(tmp_path, spec, ("ckpt", "2ze0ckpt000000000002", "vdb"),
                         ("scratch", SCRATCH_SERIAL, "nvme1n1",
                          {"link": "nvme-Alibaba_Cloud_Elastic_Block_Storage_{serial}"}))
    assert run.code == 0, run.output
    fstab = run.file("/etc/fstab")
    assert "UUID=uuid-nvme1n1 /mnt/scratch xfs" in fstab
    assert "UUID=uuid-vdb /mnt/ckpt xfs" in fstab
    assert {c for c in run.calls if c.startswith("mkfs.xfs")} == {
        f"mkfs.xfs -q {tmp_path}/root/dev/nvme1n1", f"mkfs.xfs -q {tmp_path}/root/dev/vdb"}
    assert "xfs_growfs /mnt/scratch" in run.calls  # grows after an online resize


def test_a_disk_attached_after_boot_is_waited_for(tmp_path):
    _, run = disk_booted(tmp_path, TRAINING, ("scratch", SCRATCH_SERIAL, "vdb", {"late": True}))
    assert run.code == 0, run.output
    assert "waiting for data disk scratch" in run.output
    assert "sleep 5" in run.calls
    assert "UUID=uuid-vdb /mnt/scratch xfs" in run.file("/etc/fstab")


def test_a_disk_never_attached_makes_the_node_unhealthy(tmp_path):
    """A disk of another name is not taken for it (the old rule took any non-root disk)."""
    _, run = disk_booted(tmp_path, TRAINING, ("other", SCRATCH_SERIAL, "vdb"))
    assert run.code != 0
    assert "data disk scratch: not attached after 600s" in run.output
    assert run.file("/var/lib/gpu-infra/unhealthy").strip() == "data_disks"
    assert not [c for c in run.calls if c.startswith("mkfs.xfs")]


def test_failed_driver_install_marks_the_node_unhealthy_and_abandons_it(tmp_path):
    _, run = booted(tmp_path, SCALING, fail_auto_install="")
    assert run.code != 0
    assert run.file("/var/lib/gpu-infra/unhealthy").strip() == "gpu_driver"
    assert not run.exists("/var/lib/gpu-infra/ready")
    assert "gpu-infra-api tag GpuInfraHealth=unhealthy" in run.calls
    assert run.api_calls()[-1] == "gpu-infra-api answer-scale-out"
    assert "health" not in steps_started(run.output)


def test_short_gpu_count_fails_the_health_check(tmp_path):
    _, run = booted(tmp_path, SCALING, gpus="7")
    assert run.code != 0
    assert run.file("/var/lib/gpu-infra/unhealthy").strip() == "health"
    assert "check FAILED: 8 GPU(s) of ecs.gn8v-8x.48xlarge" in run.output
    assert run.api_calls()[-1] == "gpu-infra-api answer-scale-out"


def test_healthy_scaling_node_continues_its_scale_out(tmp_path):
    _, run = booted(tmp_path, SCALING)
    assert run.code == 0, run.output
    assert [c for c in run.api_calls() if "gpu-check" not in c and " event " not in c] == [
        "gpu-infra-api tag GpuInfraHealth=healthy", "gpu-infra-api answer-scale-out"]


def test_missing_erdma_device_makes_the_node_unhealthy(tmp_path):
    _, run = booted(tmp_path, TRAINING, no_erdma="")
    assert run.code != 0
    assert run.file("/var/lib/gpu-infra/unhealthy").strip() == "erdma"
    assert "gpu-infra-api tag GpuInfraHealth=unhealthy" in run.calls


def test_fabric_manager_at_the_driver_version_where_nvswitch_is(tmp_path):
    sandbox = Sandbox(tmp_path)
    devices = sandbox.root / "proc/driver/nvidia-nvswitch/devices"
    devices.mkdir(parents=True)
    (devices / "0000:01:00.0").write_text("")
    sandbox.knob("fm", PIN.driver)  # what the package install leaves
    sandbox.install(TRAINING)
    run = sandbox.boot()
    assert APT_INSTALL + "nvidia-fabricmanager-550=550.127.08-1" not in run.calls
    assert "systemctl enable --now nvidia-fabricmanager" in run.calls
    assert "check ok: fabric manager where NVSwitch is" in run.output
    sandbox.knob("fm", "535.54.03")  # a stale fabric manager is replaced
    clear_calls(sandbox)
    run = sandbox.boot()
    assert APT_INSTALL + "nvidia-fabricmanager-550=550.127.08-1" in run.calls


def test_preinstalled_image_only_checks_the_driver(tmp_path):
    spec = dataclasses.replace(SCALING, route="preinstalled")
    sandbox = Sandbox(tmp_path)
    sandbox.preinstalled(PIN.driver)
    sandbox.install(spec)
    run = sandbox.boot()
    assert run.code == 0, run.output
    assert not [c for c in run.calls if c.startswith(("auto_install", "curl -fsS --retry 5 -o",
                                                      "apt-get"))]


def test_preinstalled_image_without_the_driver_is_unhealthy(tmp_path):
    _, run = booted(tmp_path, dataclasses.replace(SCALING, route="preinstalled"))
    assert run.code != 0
    assert run.file("/var/lib/gpu-infra/unhealthy").strip() == "gpu_driver"


def test_wrong_preinstalled_driver_is_refused(tmp_path):
    spec = dataclasses.replace(SCALING, route="preinstalled")
    sandbox = Sandbox(tmp_path)
    sandbox.knob("driver", "535.54.03")
    sandbox.install(spec)
    run = sandbox.boot()
    assert run.code != 0
    assert "driver 535.54.03 is installed but 550.127.08 is pinned" in run.output


def test_grid_route_installs_the_package_from_the_bucket(tmp_path):
    package = b"#!/bin/sh\necho grid-installer >> \"$SANDBOX/calls.log\"\n" \
              b"echo 535.161.07 > \"$SANDBOX/state/driver\"\n"
    grid = GridPackage("render-prod-datasets", "drivers/grid.run",
                       hashlib.sha256(package).hexdigest())
    spec = dataclasses.replace(SCALING, route="grid", grid=grid,
                               driver=node_stack.DriverStack("535.161.07", "", ""))
    sandbox = Sandbox(tmp_path)
    (sandbox.dir / "grid.run").write_bytes(package)
    sandbox.install(spec)
    run = sandbox.boot()
    assert run.code == 0, run.output
    assert "gpu-infra-api oss-get render-prod-datasets drivers/grid.run" in " ".join(run.calls)
    assert "grid-installer" in run.calls
    (sandbox.dir / "grid.run").write_bytes(package + b"# tampered\n")
    (sandbox.state / "driver").unlink()
    run = sandbox.boot()
    assert run.code != 0
    assert "does not match its pinned sha256" in run.output


def test_reboot_needed_after_the_install_is_not_a_failure(tmp_path):
    sandbox = Sandbox(tmp_path)
    installer = sandbox.dir / "installers/auto_install.sh"
    installer.write_text('echo "ALL INSTALL OK" > auto_install.log\n')  # driver loads later
    sandbox.install(SCALING)
    run = sandbox.boot()
    assert run.code == 0
    assert "systemctl reboot" in run.calls
    assert not run.exists("/var/lib/gpu-infra/unhealthy")
    assert not [c for c in run.calls if "answer-scale-out" in c]


def test_bake_mode_installs_only(tmp_path):
    sandbox = Sandbox(tmp_path)
    sandbox.knob("fm", PIN.driver)
    sandbox.install(TRAINING)
    run = sandbox.boot("bake")
    assert run.code == 0, run.output
    assert steps_started(run.output) == ["gpu_driver", "erdma", "fabric_manager",
                                         "container_runtime", "cloudmonitor"]
    assert run.api_calls() == []


PEERS = (("t01-gpu-node-002", "10.1.0.12", "healthy"),
         (HOSTNAME, "10.1.0.10", "healthy"),
         ("t01-gpu-node-001", "10.1.0.11", "unhealthy"),
         ("t01-gpu-node-003", "10.1.0.13", "healthy"))


def test_peers_give_hostfile_torchrun_env_and_ssh_trust(tmp_path):
    sandbox = Sandbox(tmp_path, peers=PEERS)
    (sandbox.root / "root/.ssh").mkdir(parents=True)
    (sandbox.root / "root/.ssh/authorized_keys").write_text("ssh-ed25519 OPERATOR ops@laptop\n")
    sandbox.install(TRAINING)
    boot = sandbox.boot()
    assert boot.code == 0, boot.output
    run = sandbox.run("/opt/gpu-infra/bin/gpu-infra-peers")
    assert run.code == 0, run.output
    assert run.file("/etc/gpu-infra/hostfile").splitlines() == [
        "10.1.0.10 slots=8", "10.1.0.12 slots=8", "10.1.0.13 slots=8"]
    assert run.file("/etc/gpu-infra/torchrun.env").splitlines() == [
        "MASTER_ADDR=10.1.0.10", "MASTER_PORT=29500", "NNODES=3", "NPROC_PER_NODE=8",
        "NODE_RANK=0"]
    # the fleet's keys from the stack's encrypted parameters, not the node's own
    assert run.file("/root/.ssh/id_ed25519") == "PRIVATE user-key\n"
    assert run.file("/etc/ssh/ssh_host_ed25519_key") == "PRIVATE host-key\n"
    assert "systemctl try-restart ssh.service" in boot.calls  # sshd serves the new host key
    keys = run.file("/root/.ssh/authorized_keys")
    assert keys.splitlines() == ["ssh-ed25519 OPERATOR ops@laptop",
                                 "ssh-ed25519 PUBuser-key gpu-infra-fleet"]
    known = run.file("/etc/gpu-infra/known_hosts").splitlines()
    assert "10.1.0.12,t01-gpu-node-002 ssh-ed25519 PUBhost-key" in known
    assert not [line for line in known if "node-001" in line]  # unhealthy: not a peer
    clear_calls(sandbox)
    again = sandbox.boot()
    assert again.code == 0 and again.file("/root/.ssh/authorized_keys") == keys
    assert not [c for c in again.calls if "try-restart" in c]  # same key: no restart


def test_a_node_list_not_written_yet_waits_and_a_wrong_key_fails(tmp_path):
    sandbox = Sandbox(tmp_path, peers=PEERS)
    sandbox.install(TRAINING)
    assert sandbox.boot().code == 0
    (sandbox.dir / "bin/gpu-infra-api").write_text(
        "#!/bin/bash\n[ \"$1\" != peers ] || exit 75\n")
    run = sandbox.run("/opt/gpu-infra/bin/gpu-infra-peers")
    assert run.code == 75 and "no node list yet" in run.output
    other = Sandbox(tmp_path / "other")
    (other.dir / "secrets" / HOST_KEY_PARAMETER).write_text("not a key\n")
    other.install(TRAINING)
    failed = other.boot()
    assert failed.code != 0
    assert other.root.joinpath("var/lib/gpu-infra/unhealthy").read_text() == "cluster_ssh\n"
    assert other.root.joinpath("etc/ssh/ssh_host_ed25519_key").read_text() == (
        "PRIVATE own-host-key\n")  # nothing half-installed


@pytest.mark.parametrize("spec", [TRAINING, SCALING])
def test_the_image_build_runs_the_nodes_step_files(spec):
    from gpu_infra.blocks.bootstrap import STEP_FILES, bake_tasks, step_source
    from gpu_infra.blocks.bootstrap.minify import strip_shell

    tasks = bake_tasks(spec)
    assert [task.name for task in tasks] == ["WriteConfig", "WriteProbe", "WriteBootstrap",
                                             "Install", "Reboot", "InstallAfterReboot", "Clean"]
    program = tasks[2].command or ""
    for step in spec.install_steps():
        assert strip_shell(step_source(STEP_FILES[step])).rstrip("\n") in program
    writes = "".join(task.command or "" for task in tasks[:3])
    assert writes.count("cat > ") == 3 and 'cat > "$R/opt/gpu-infra/bin/' not in writes
    assert tasks[4].command is None


class ImageBuild:
    """The image build's tasks as scripts in a sandbox (paths moved under its root); the
    Reboot task is the test's to play."""

    def __init__(self, sandbox: Sandbox, spec: BootstrapSpec):
        from gpu_infra.blocks.bootstrap import bake_tasks

        self.sandbox = sandbox
        self.scripts = {}
        for task in bake_tasks(spec):
            if task.command is None:
                continue
            command = task.command
            if not task.name.startswith("Write"):  # those write under $GPU_INFRA_ROOT
                command = re.sub(r"(^| )/", r"\1$GPU_INFRA_ROOT/", command)
            self.scripts[task.name] = command + "\n"

    def run(self, name: str):
        return self.sandbox.run_script(self.scripts[name], f"{name}.sh")


WRITES = ("WriteConfig", "WriteProbe", "WriteBootstrap")


def test_image_build_installs_reboots_once_then_verifies_and_cleans(tmp_path):
    sandbox = Sandbox(tmp_path)
    # the driver loads only after a reboot, and the installer reboots by itself
    (sandbox.dir / "installers/auto_install.sh").write_text(
        'echo "ALL INSTALL OK" > auto_install.log\nreboot\n'
        'echo 550.127.08 > "$SANDBOX/state/driver.after-reboot"\n')
    build = ImageBuild(sandbox, TRAINING)
    assert all(build.run(name).code == 0 for name in WRITES)
    first = build.run("Install")
    assert first.code == 0, first.output
    assert "reboot : deferred" in first.output
    assert "systemctl reboot" not in first.calls
    assert steps_started(first.output) == ["gpu_driver"]
    (sandbox.state / "driver.after-reboot").rename(sandbox.state / "driver")  # Reboot task
    sandbox.knob("fm", PIN.driver)  # what the fabric manager package leaves
    clear_calls(sandbox)
    second = build.run("InstallAfterReboot")
    assert second.code == 0, second.output
    assert steps_started(second.output) == ["gpu_driver", "erdma", "fabric_manager",
                                            "container_runtime", "cloudmonitor"]
    assert not [c for c in second.calls if c.startswith("ip link")]  # the nodes set the MTU
    assert "systemctl enable nvidia-fabricmanager" in second.calls  # it starts on nodes only
    assert "systemctl enable docker" in second.calls  # the image's docker starts at boot
    assert "systemctl restart docker" not in second.calls
    assert second.api_calls() == []
    assert build.run("Clean").code == 0
    assert not sandbox.root.joinpath("opt/gpu-infra").exists()
    assert not sandbox.root.joinpath("var/lib/gpu-infra").exists()


def test_image_build_fails_when_the_driver_is_missing_after_its_reboot(tmp_path):
    sandbox = Sandbox(tmp_path)
    (sandbox.dir / "installers/auto_install.sh").write_text(
        'echo "ALL INSTALL OK" > auto_install.log\n')  # the driver never loads
    build = ImageBuild(sandbox, TRAINING)
    for name in WRITES:
        build.run(name)
    assert build.run("Install").code == 0  # waits for the Reboot task
    second = build.run("InstallAfterReboot")
    assert second.code != 0
    assert "the driver loads after a reboot: still so after 1 reboot(s)" in second.output
    assert build.run("Clean").code != 0  # nothing is cleaned: the build fails, no image
    assert sandbox.root.joinpath("opt/gpu-infra/bootstrap.sh").exists()


def test_preinstalled_route_never_downloads_a_missing_piece(tmp_path):
    spec = dataclasses.replace(TRAINING, route="preinstalled", data_disks=(), shared_fs=None,
                               trust=None)
    sandbox = Sandbox(tmp_path)
    sandbox.knob("driver", PIN.driver)
    sandbox.knob("agent")
    sandbox.install(spec)
    run = sandbox.boot()
    assert run.code != 0
    assert "the eRDMA driver is missing from the image (route preinstalled installs nothing)" \
        in run.output
    assert run.file("/var/lib/gpu-infra/unhealthy").strip() == "erdma"
    assert not [c for c in run.calls if c.startswith("curl -fsS --retry 5 -o")]


def test_jumbo_frames_set_the_erdma_mtu_to_8500(tmp_path, training_run):
    _, run = booted(tmp_path, dataclasses.replace(TRAINING, jumbo_frames=True))
    assert run.code == 0, run.output
    assert "ip link set dev eth0 mtu 8500" in run.calls
    assert "ip link set dev eth0 mtu 1400" in training_run.calls


def test_peers_wait_until_every_node_has_told_its_health(tmp_path):
    """At first boot the other nodes are still installing: no torchrun.env (no NNODES=1, no
    rank) until every running node of the fleet is tagged healthy or unhealthy."""
    sandbox = Sandbox(tmp_path, peers=((HOSTNAME, "10.1.0.10", "healthy"),
                                       ("t01-gpu-node-001", "10.1.0.11", "unknown")))
    sandbox.install(TRAINING)
    run = sandbox.boot()
    assert run.code == 0, run.output
    assert "waiting for every node of fleet t01-gpu to tell its health" in run.output
    assert not run.exists("/etc/gpu-infra/torchrun.env")
    assert "systemctl restart gpu-infra-peers.timer" in run.calls


def test_an_unhealthy_node_takes_no_rank(tmp_path):
    sandbox = Sandbox(tmp_path, gpus=7, peers=PEERS)
    sandbox.install(TRAINING)
    assert sandbox.boot().code != 0
    run = sandbox.run("/opt/gpu-infra/bin/gpu-infra-peers")
    assert run.code == 75
    assert not run.exists("/etc/gpu-infra/torchrun.env")


def test_hostfile_slots_follow_each_hosts_own_type_and_names_resolve(tmp_path):
    small = "ecs.gn8v-4x.24xlarge"
    spec = dataclasses.replace(TRAINING, gpu_counts={INSTANCE_TYPE: 8, small: 4})
    sandbox = Sandbox(tmp_path, peers=((HOSTNAME, "10.1.0.10", "healthy"),
                                       ("t01-gpu-node-001", "10.1.0.11", "healthy", small)))
    sandbox.install(spec)
    assert sandbox.boot().code == 0
    run = sandbox.run("/opt/gpu-infra/bin/gpu-infra-peers")
    assert run.code == 0, run.output
    assert run.file("/etc/gpu-infra/hostfile").splitlines() == ["10.1.0.10 slots=8",
                                                               "10.1.0.11 slots=4"]
    hosts = run.file("/etc/hosts")
    assert "10.1.0.11 t01-gpu-node-001" in hosts and hosts.startswith("127.0.0.1 localhost")
    assert sandbox.run("/opt/gpu-infra/bin/gpu-infra-peers").file("/etc/hosts") == hosts


@pytest.mark.parametrize(("system", "unit"), [
    ("ubuntu-22.04", "ssh.service"), ("ubuntu-24.04", "ssh.service"),
    ("alinux-3", "sshd.service")])
def test_the_fleet_host_key_restarts_the_systems_own_ssh_unit(tmp_path, system, unit):
    """Ubuntu's OpenSSH unit is ssh.service (sshd.service is only an alias of an enabled
    unit, and 24.04 enables ssh.socket instead), Alibaba Cloud Linux's sshd.service."""
    sandbox = Sandbox(tmp_path, os_release=OS_RELEASES[system])
    sandbox.install(TRAINING)
    run = sandbox.boot()
    assert run.code == 0, run.output
    assert [c for c in run.calls if "try-restart" in c] == [f"systemctl try-restart {unit}"]
