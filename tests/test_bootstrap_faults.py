"""Faults a real node meets, run in the sandbox: GPUs that do not answer, error text where
data should be, a reboot in the middle of the bootstrap, SIGTERM, a hung NFS mount, a busy
package manager, nouveau, a shared file system switched off; each ends unhealthy (with the
failing step's stderr in its CloudMonitor event) or resumes as documented."""

from __future__ import annotations

import dataclasses
import hashlib

import pytest

from gpu_infra.blocks.bootstrap import (
    GridPackage,
    SharedFsMount,
)
from gpu_infra_facts import node_stack

from .bootstrap_sandbox import INSTANCE_TYPE, OS_RELEASES, Sandbox, clear_calls
from .test_bootstrap_run import APT_INSTALL, PIN, SCALING, TRAINING, steps_started

pytestmark = pytest.mark.slow  # runs the node bootstrap in a shell sandbox

PREINSTALLED = dataclasses.replace(SCALING, route="preinstalled")
KILL_BOOTSTRAP = 'kill -TERM "$(/usr/bin/pgrep -o -f "$GPU_INFRA_ROOT/opt/gpu-infra/bootstrap.sh")"'
"""What systemd does to the unit when the machine goes down: SIGTERM to its main process."""


def ready_node(tmp_path, spec=PREINSTALLED, **knobs: str) -> Sandbox:
    """A node whose image carries the driver and the agent, with `knobs` set."""
    sandbox = Sandbox(tmp_path)
    sandbox.preinstalled(PIN.driver)
    for name, value in knobs.items():
        sandbox.knob(name.replace("_", "-"), value)
    assert sandbox.install(spec).code == 0
    return sandbox


def with_installer(tmp_path, installer: str, body: str, spec=SCALING) -> tuple[Sandbox, object]:
    """A node whose `installer` stand-in (auto_install, cms_installer, ...) runs `body`,
    booted once."""
    sandbox = Sandbox(tmp_path)
    (sandbox.dir / f"installers/{installer}.sh").write_text(body)
    sandbox.install(spec)
    return sandbox, sandbox.boot()


def test_a_healthy_node_passes_every_check(tmp_path):
    run = ready_node(tmp_path).boot()
    assert run.code == 0, run.output
    for check in ("8 GPU(s) of ecs.gn8v-8x.48xlarge", "driver 550.127.08", "MIG mode off",
                  "no uncorrected ECC errors", "no XID errors in the kernel log",
                  "a CUDA context on each GPU"):
        assert f"check ok: {check}" in run.output


def test_a_gpu_whose_device_handle_fails_is_not_counted(tmp_path):
    """nvidia-smi prints an "Unable to determine the device handle" row for a lost GPU: 8 rows,
    7 GPUs. The old count of output lines passed it as healthy."""
    run = ready_node(tmp_path, lost_gpu_3="").boot()
    assert run.code != 0
    assert "check FAILED: 8 GPU(s) of ecs.gn8v-8x.48xlarge" in run.output
    assert run.file("/var/lib/gpu-infra/unhealthy").strip() == "health"


def test_rows_from_a_failing_nvidia_smi_do_not_count(tmp_path):
    run = ready_node(tmp_path, smi_status="15").boot()
    assert run.code != 0
    assert "check FAILED: 8 GPU(s) of ecs.gn8v-8x.48xlarge" in run.output


def test_no_devices_found_is_not_a_gpu(tmp_path):
    """"No devices were found" is error text on stdout (exit 6): it is no GPU (the old line
    count took it for one, so a one-GPU type passed with none)."""
    spec = dataclasses.replace(PREINSTALLED, gpu_counts={INSTANCE_TYPE: 1})
    sandbox = Sandbox(tmp_path, gpus=0)
    sandbox.preinstalled(PIN.driver)
    sandbox.install(spec)
    run = sandbox.boot()
    assert run.code != 0
    assert "check FAILED: 1 GPU(s) of ecs.gn8v-8x.48xlarge" in run.output


@pytest.mark.parametrize(("knob", "value", "check"), [
    ("mig", "Enabled", "MIG mode off"),
    ("ecc", "3", "no uncorrected ECC errors"),
    ("kernel-log", "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
     "no XID errors in the kernel log"),
    ("no-cuda", "", "a CUDA context on each GPU"),
])
def test_gpu_faults_fail_the_health_check(tmp_path, knob, value, check):
    sandbox = ready_node(tmp_path)
    sandbox.knob(knob, value)
    run = sandbox.boot()
    assert run.code != 0
    assert f"check FAILED: {check}" in run.output


def test_nvlink_is_checked_where_the_catalog_says_nvlink(tmp_path):
    spec = dataclasses.replace(PREINSTALLED, nvlink_types=frozenset({INSTANCE_TYPE}))
    assert "check ok: NVLink links active" in ready_node(tmp_path / "up", spec).boot().output
    down = ready_node(tmp_path / "down", spec, no_nvlink="").boot()
    assert down.code != 0 and "check FAILED: NVLink links active" in down.output
    plain = ready_node(tmp_path / "plain").boot()
    assert "NVLink" not in plain.output


def test_a_wrong_erdma_mtu_fails_the_health_check(tmp_path):
    sandbox = Sandbox(tmp_path)
    sandbox.install(TRAINING)
    (sandbox.dir / "bin/ip").write_text("#!/bin/bash\nexit 0\n")  # the MTU never changes
    mtu = sandbox.root / "sys/class/net/eth0/mtu"
    mtu.parent.mkdir(parents=True)
    mtu.write_text("1500\n")
    run = sandbox.boot()
    assert run.code != 0
    assert f"check FAILED: eth0 MTU {node_stack.ERDMA_MTU}" in run.output


def test_an_installer_reboot_stops_the_run_and_the_next_boot_resumes(tmp_path):
    """The auto-install reboots when it is done: nothing runs after it (no eRDMA install, no
    health answer during shutdown); the runner reboots once, and the next boot finishes."""
    sandbox, first = with_installer(
        tmp_path, "auto_install", 'echo "ALL INSTALL OK" > auto_install.log\nreboot\n'
        f'echo {PIN.driver} > "$SANDBOX/state/driver.after-reboot"\n')
    assert first.code == 0, first.output
    assert steps_started(first.output) == ["data_disks", "shared_fs_off", "gpu_driver"]
    assert first.calls.count("systemctl reboot") == 1
    assert first.api_calls() == []
    assert "stopping for the reboot (reboot by an installer)" in first.output
    (sandbox.state / "driver.after-reboot").rename(sandbox.state / "driver")
    clear_calls(sandbox)
    second = sandbox.boot()
    assert second.code == 0, second.output
    assert "auto_install" not in second.commands()
    assert steps_started(second.output)[-1] == "health"
    assert not second.exists("/var/lib/gpu-infra/reboots")


def test_sigterm_during_the_self_rebooting_installer_is_the_reboot(tmp_path):
    _, run = with_installer(tmp_path, "auto_install",
                            f'echo "ALL INSTALL OK" > auto_install.log\n{KILL_BOOTSTRAP}\n')
    assert run.code == 0, run.output
    assert "stopped by the reboot gpu_driver asked for" in run.output
    assert not run.exists("/var/lib/gpu-infra/unhealthy")
    assert run.api_calls() == []


def test_sigterm_anywhere_else_leaves_the_node_unhealthy(tmp_path):
    """Bash runs the EXIT trap on SIGTERM with status 0 unless TERM is trapped: a stopped
    bootstrap must not look like a finished one."""
    sandbox = Sandbox(tmp_path)
    sandbox.knob("driver", PIN.driver)
    (sandbox.dir / "installers/cms_installer.sh").write_text(
        f'{KILL_BOOTSTRAP}\n')
    sandbox.install(SCALING)
    run = sandbox.boot()
    assert run.code != 0
    assert "stopped by SIGTERM" in run.output
    assert run.file("/var/lib/gpu-infra/unhealthy").strip() == "cloudmonitor"
    assert "gpu-infra-api tag GpuInfraHealth=unhealthy" in run.calls


def test_the_failure_event_carries_the_failing_commands_stderr(tmp_path):
    sandbox, run = with_installer(
        tmp_path, "auto_install", 'echo "E: Unable to fetch nvidia-driver-550 (404)" >&2\nexit 3\n')
    assert run.code != 0
    event = next(c for c in run.api_calls() if " event " in c)
    assert event.startswith("gpu-infra-api event unhealthy gpu_driver ")
    assert "E: Unable to fetch nvidia-driver-550 (404)" in (
        sandbox.dir / "event-unhealthy.stderr").read_text()
    assert "  | E: Unable to fetch nvidia-driver-550 (404)" in run.output  # and in the log


def test_a_hung_hard_nfs_mount_fails_the_check_instead_of_blocking(tmp_path):
    spec = dataclasses.replace(PREINSTALLED, shared_fs=SharedFsMount("nas:/share", "hard"))
    sandbox = ready_node(tmp_path, spec)
    sandbox.knob("hung-mount")
    sandbox.extra_env["PROBE_SECONDS"] = "0.5"  # each of its three probes of a mount hangs
    run = sandbox.boot()
    assert run.code != 0
    assert run.file("/var/lib/gpu-infra/unhealthy").strip() in ("shared_fs", "health")


@pytest.mark.parametrize(("system", "manager", "package"), [
    ("ubuntu-22.04", APT_INSTALL, "nfs-common"), ("ubuntu-24.04", APT_INSTALL, "nfs-common"),
    ("alinux-3", "dnf install -y -q ", "nfs-utils")])
def test_first_boot_installs_update_wait_for_the_lock_and_name_the_os_package(
        tmp_path, system, manager, package):
    spec = dataclasses.replace(PREINSTALLED, shared_fs=SharedFsMount("nas:/share", "hard"))
    sandbox = Sandbox(tmp_path, os_release=OS_RELEASES[system])
    sandbox.preinstalled(PIN.driver)
    sandbox.install(spec)
    run = sandbox.boot()
    assert run.code == 0, run.output
    installs = [c for c in run.calls if c.startswith(("apt-get", "dnf"))]
    if manager == APT_INSTALL:
        assert installs == ["apt-get -q -o DPkg::Lock::Timeout=600 update",
                            APT_INSTALL + package]
    else:
        assert installs == [manager + package]


def test_turning_the_shared_fs_off_takes_it_out_of_fstab(tmp_path):
    on = dataclasses.replace(PREINSTALLED, shared_fs=SharedFsMount("nas:/share", "hard"))
    sandbox = ready_node(tmp_path, on)
    assert sandbox.boot().code == 0
    assert " /mnt/shared nfs " in sandbox.root.joinpath("etc/fstab").read_text()
    sandbox.install(PREINSTALLED)
    run = sandbox.boot()
    assert run.code == 0, run.output
    assert " /mnt/shared " not in run.file("/etc/fstab")
    assert "umount -l /mnt/shared" in run.calls


GRID = dataclasses.replace(SCALING, route="grid", grid=GridPackage("bucket", "grid.run"),
                           driver=node_stack.DriverStack("535.161.07", "", ""))


def grid_node(tmp_path, package: bytes) -> Sandbox:
    """A GRID-route node whose bucket object is `package`."""
    sandbox = Sandbox(tmp_path)
    (sandbox.dir / "grid.run").write_bytes(package)
    return sandbox


def test_grid_waits_for_nouveau_to_be_gone(tmp_path):
    sandbox = grid_node(tmp_path, b"#!/bin/sh\necho grid-installer >> \"$SANDBOX/calls.log\"\n")
    (sandbox.root / "sys/module/nouveau").mkdir(parents=True)
    sandbox.knob("nouveau-busy")
    sandbox.install(GRID)
    run = sandbox.boot()
    assert run.code == 0, run.output
    assert "blacklist nouveau" in run.file("/etc/modprobe.d/gpu-infra-nouveau.conf")
    assert "update-initramfs -u" in run.calls and "systemctl reboot" in run.calls
    assert "grid-installer" not in run.calls


def test_the_grid_package_digest_is_computed_and_logged(tmp_path):
    package = b"#!/bin/sh\necho 535.161.07 > \"$SANDBOX/state/driver\"\n"
    sandbox = grid_node(tmp_path, package)
    sandbox.install(GRID)
    run = sandbox.boot()
    assert f"the GRID package sha256 {hashlib.sha256(package).hexdigest()}" in run.output


def test_a_blkid_error_never_formats_the_disk(tmp_path):
    sandbox = Sandbox(tmp_path)
    (sandbox.dir / "bin/blkid").write_text("#!/bin/bash\nexit 4\n")
    sandbox.install(SCALING)
    run = sandbox.boot()
    assert run.code != 0
    assert not [c for c in run.calls if c.startswith("mkfs")]
    assert run.file("/var/lib/gpu-infra/unhealthy").strip() == "data_disks"


def test_an_installer_that_waits_for_its_own_deferred_reboot_does_not_stall_the_run(tmp_path):
    """The reboot shim defers the installer's `reboot`; an installer that then waits for the
    machine to go down would hold the bootstrap until systemd stops it (2 h). It is given
    REBOOT_GRACE_SECONDS, stopped, and the runner reboots as asked."""
    body = ('echo "auto_install $*" >> "$SANDBOX/calls.log"\n'
            'echo "ALL INSTALL OK" > auto_install.log\nreboot\nexec /bin/sleep 600\n')
    _, run = with_installer(tmp_path, "auto_install", body)
    assert run.code == 0, run.output
    assert "still runs 60s after asking for its reboot: stopped" in run.output
    assert "systemctl reboot" in run.calls
    assert run.file("/var/lib/gpu-infra/reboot-requested").startswith("reboot by an installer")
