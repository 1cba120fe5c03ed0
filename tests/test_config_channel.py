"""The configuration channel over time, in the sandbox under dash (Cloud Assistant runs the
command with sh): an upgrade of gpu-infra, a node still on its first boot and a node-count
change are each a success that changes nothing on the node; a changed setting re-runs only
the steps that read it, with `ready` and the torchrun environment kept; the node tools
restart a unit whose settings changed. The invocation of a failed run fails `pulumi up`
(resource_alicloud_ecs_invocation.go waits for Success and fails on Failed), so each of
these must exit 0."""

from __future__ import annotations

import base64
import dataclasses
import subprocess

import pytest

from gpu_infra.blocks.bootstrap import (
    CONFIG_RUN_SECONDS,
    CONFIG_WAIT_SECONDS,
    DISK_WAIT_SECONDS,
    SharedFsMount,
    SpotWatch,
    config_command,
    config_script,
    node_release,
    node_tools_installer,
    user_data,
)
from gpu_infra.blocks.compute.nodes import invocation_timeout

from .bootstrap_sandbox import Sandbox, clear_calls
from .conftest import BASE_TRAINING, merged
from .node_systems import dash
from .test_bootstrap_run import PEERS, PIN, SCALING, TRAINING, steps_started

pytestmark = pytest.mark.slow  # runs the node bootstrap in a shell sandbox

FIXED = dataclasses.replace(SCALING, route="preinstalled", scaling_group_id=None,
                            lifecycle_hook_id=None,
                            shared_fs=SharedFsMount("nas:/share", "hard"))
"""Fixed nodes whose image carries the driver, with a shared file system."""
CONFIG = "/opt/gpu-infra/config.sh"


def ready_node(tmp_path, spec=FIXED, **options) -> Sandbox:
    """A node booted once to `ready` (its image carries the driver and the agent)."""
    sandbox = Sandbox(tmp_path, **options)
    sandbox.preinstalled(PIN.driver)
    assert sandbox.install(spec).code == 0
    run = sandbox.boot()
    assert run.code == 0 and run.exists("/var/lib/gpu-infra/ready"), run.output
    clear_calls(sandbox)
    return sandbox


def channel(sandbox: Sandbox, spec) -> subprocess.CompletedProcess[str]:
    """The configuration command of `spec`, as Cloud Assistant runs it."""
    return subprocess.run([dash(), "-c", config_command(spec)], env=sandbox.env(),
                          capture_output=True, text=True, timeout=120, check=False)


def calls(sandbox: Sandbox) -> list[str]:
    log = sandbox.dir / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def test_an_upgrade_of_gpu_infra_leaves_a_node_of_the_previous_release_alone(tmp_path):
    """Case 3: every release changes the command (its release id), so `pulumi up` after an
    upgrade runs it on nodes booted with the previous release: a success that changes
    nothing there (the previous release's steps read their own settings)."""
    sandbox = ready_node(tmp_path)
    config = sandbox.root / CONFIG.lstrip("/")
    previous = config.read_text().replace(f"NODE_RELEASE={node_release()}",
                                          "NODE_RELEASE=0123456789abcdef")
    config.write_text(previous)
    newer = dataclasses.replace(FIXED, shared_fs=SharedFsMount("nas:/share", "soft"))
    done = channel(sandbox, newer)
    assert done.returncode == 0, done.stderr
    assert "another gpu-infra release and keeps its configuration" in done.stdout
    assert config.read_text() == previous and calls(sandbox) == []
    assert sandbox.root.joinpath("var/lib/gpu-infra/ready").exists()


def test_a_node_on_its_first_boot_is_waited_for(tmp_path):
    """Case 4: the invocation runs before cloud-init has written config.sh: the command
    waits for it (here cloud-init finishes during its first wait) and then finds the
    configuration its user data carries: nothing to change."""
    sandbox = Sandbox(tmp_path)
    (sandbox.dir / "user-data.sh").write_text(user_data(FIXED))
    (sandbox.dir / "on-sleep").write_text(f'bash "{sandbox.dir}/user-data.sh"\n')
    done = channel(sandbox, FIXED)
    assert done.returncode == 0, done.stderr
    assert "the configuration is unchanged" in done.stdout
    assert sandbox.root.joinpath(CONFIG.lstrip("/")).read_text() == config_script(FIXED)


def test_a_node_whose_user_data_never_ran_is_a_success_that_says_so(tmp_path):
    sandbox = Sandbox(tmp_path)
    done = channel(sandbox, FIXED)
    assert done.returncode == 0, done.stderr
    assert f"no config.sh after {CONFIG_WAIT_SECONDS} s" in done.stdout
    assert not sandbox.root.joinpath(CONFIG.lstrip("/")).exists()


def test_a_node_count_change_changes_nothing_on_a_running_training_node(tmp_path):
    """Case 7: the node list is an OOS parameter the peers timer reads, so the command of a
    fleet with more nodes is the same configuration: no step runs again (no GPU touched),
    `ready` and torchrun.env stay."""
    sandbox = ready_node(tmp_path, TRAINING, peers=PEERS)
    assert sandbox.run("/opt/gpu-infra/bin/gpu-infra-peers").code == 0
    clear_calls(sandbox)
    done = channel(sandbox, TRAINING)
    assert done.returncode == 0 and "the configuration is unchanged" in done.stdout
    assert calls(sandbox) == []
    assert sandbox.root.joinpath("var/lib/gpu-infra/ready").exists()
    assert "NODE_RANK=0" in sandbox.root.joinpath("etc/gpu-infra/torchrun.env").read_text()


def test_a_changed_setting_reruns_only_the_steps_that_read_it(tmp_path):
    """A second data disk: the data_disks step and the readiness check run again, nothing
    else (no shared file system, driver or agent step); `ready` is kept until the check
    writes it anew, so the peers timer never drops the node's rank meanwhile."""
    sandbox = ready_node(tmp_path)
    ready = sandbox.root / "var/lib/gpu-infra/ready"
    ready.write_text("before\n")
    sandbox.attach_disk("fast", "2ze0fast000000000002", "vdc")
    more = dataclasses.replace(FIXED, data_disks=("scratch", "fast"))
    done = channel(sandbox, more)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "changed: DATA_DISKS ; re-running: data_disks health" in done.stdout
    assert steps_started(done.stdout + done.stderr) == ["data_disks", "health"]
    assert sandbox.root.joinpath(CONFIG.lstrip("/")).read_text() == config_script(more)
    assert ready.exists() and ready.read_text() != "before\n"
    assert " /mnt/fast " in sandbox.root.joinpath("etc/fstab").read_text()


def test_turning_the_shared_fs_off_changes_the_step_list_and_reruns_every_step(tmp_path):
    """The step list itself changed (shared_fs_off instead of shared_fs): the whole
    bootstrap runs again, in rerun mode, and takes the hard NFS entry out of fstab; user
    data never ran again."""
    sandbox = ready_node(tmp_path)
    off = dataclasses.replace(FIXED, shared_fs=None)
    done = channel(sandbox, off)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "shared_fs_off" in steps_started(done.stdout + done.stderr)
    assert " /mnt/shared " not in sandbox.root.joinpath("etc/fstab").read_text()


def test_the_channel_leaves_a_running_bootstrap_alone(tmp_path):
    sandbox = ready_node(tmp_path)
    sandbox.knob("active-gpu-infra-bootstrap.service")
    done = channel(sandbox, dataclasses.replace(FIXED, shared_fs=None))
    assert done.returncode == 0 and "its next run reads the new config.sh" in done.stdout
    assert not [c for c in calls(sandbox) if c.startswith("systemctl start")]


def test_a_node_that_is_not_ready_runs_its_whole_bootstrap_again(tmp_path):
    """A node that ended unhealthy (or is between its driver's reboots) gets no partial
    re-run: its whole bootstrap starts again with the new configuration."""
    sandbox = ready_node(tmp_path)
    sandbox.root.joinpath("var/lib/gpu-infra/ready").unlink()
    done = channel(sandbox, dataclasses.replace(FIXED, shared_fs=None))
    assert done.returncode == 0 and "whole bootstrap runs again" in done.stdout
    assert "systemctl start --no-block gpu-infra-bootstrap.service" in calls(sandbox)


def test_the_node_tools_restart_a_unit_whose_settings_changed(tmp_path):
    """Case 8: the spot watcher's restore command changed; `systemctl enable --now` would
    leave the running watcher with the old one. The installer (re)starts it when one of its
    files is new or changed, and only starts it (a no-op when running) otherwise."""
    sandbox = Sandbox(tmp_path)
    watch = dataclasses.replace(TRAINING, spot_watch=SpotWatch("restore-a"))
    installer = sandbox.dir / "tools.sh"
    for restore, expected in (("restore-a", "restart"), ("restore-a", "start"),
                              ("restore-b", "restart")):
        installer.write_text(node_tools_installer(
            dataclasses.replace(watch, spot_watch=SpotWatch(restore))) or "")
        clear_calls(sandbox)
        assert sandbox.run_script(installer.read_text(), "tools.sh").code == 0
        assert f"systemctl {expected} --no-block gpu-infra-spot-watch.service" in \
            calls(sandbox), restore
    assert "restore-b" in sandbox.root.joinpath("etc/gpu-infra/spot-watch.env").read_text()


def command_of(plan) -> tuple[str, int]:
    """The planned configuration command's script and timeout."""
    [command] = [c for c in plan.by_type("alicloud:ecs/command:Command")
                 if c.name.endswith("-gpu-config")]
    return base64.b64decode(command.inputs["commandContent"]).decode(), command.inputs["timeout"]


def test_more_nodes_plan_the_same_configuration(plan_cluster):
    """What a node-count change sends to the running nodes: the same command text (so the
    re-run invocation finds the configuration unchanged), with a timeout that covers the
    first-boot wait and a re-run that waits for a new data disk."""
    two = command_of(plan_cluster(merged(BASE_TRAINING, name="t02")))
    three = command_of(plan_cluster(merged(
        BASE_TRAINING, name="t02", fleet={**BASE_TRAINING["fleet"], "nodes": 3})))
    assert two == three
    assert two[1] == CONFIG_RUN_SECONDS > CONFIG_WAIT_SECONDS + DISK_WAIT_SECONDS


def test_the_invocation_waits_for_the_whole_fleet():
    """The provider's create waits 1 minute unless told; the invocation is given its
    command's run time, the delivery margin and a second per node."""
    assert invocation_timeout(2) == "36m"
    assert invocation_timeout(1024) == "53m"
