"""The node's paths are written once, in steps/probe.sh: Python reads them from there, and the
other step files agree with it."""

from __future__ import annotations

import re
import subprocess
from importlib import resources

import pytest

from gpu_infra.blocks import bootstrap

STEPS = resources.files(bootstrap) / "steps"
GPU_INFRA_PATH = re.compile(r"/(?:opt|var/lib|var/log|etc)/gpu-infra[\w./-]*")


@pytest.mark.slow  # bash assigns the paths
def test_python_reads_the_paths_as_bash_assigns_them():
    assignments = "\n".join(line for line in (STEPS / "probe.sh").read_text().splitlines()
                            if re.match(r"^[A-Z_]+=", line))
    names = sorted(bootstrap.NODE_PATHS)
    shown = subprocess.run(
        ["bash", "-c", assignments + "\n" + "".join(f'echo "{n}=${n}"\n' for n in names)],
        env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=True).stdout
    assert dict(line.split("=", 1) for line in shown.splitlines()) == bootstrap.NODE_PATHS
    assert {"STATE_DIR", "LOG_DIR", "LOG_FILE", "BIN_DIR", "ETC_DIR"} <= set(names)


def test_every_gpu_infra_path_in_the_steps_lies_under_a_probe_sh_directory():
    roots = (bootstrap.STATE_ROOT, bootstrap.LOG_DIR, bootstrap.INSTALL_DIR,
             bootstrap.NODE_PATHS["ETC_DIR"])
    found = {f"{step.name}: {path}" for step in STEPS.iterdir() if step.is_file()
             for path in GPU_INFRA_PATH.findall(step.read_text(encoding="utf-8"))
             if not any(path == root or path.startswith(f"{root}/") for root in roots)}
    assert found == set()


def test_the_scan_sees_a_path_outside_the_directories():
    assert GPU_INFRA_PATH.findall('x=$ROOT/etc/gpu-infra2/hosts . "/opt/gpu-infra/c.sh"') == [
        "/etc/gpu-infra2/hosts", "/opt/gpu-infra/c.sh"]


def test_the_user_data_installs_under_the_install_dir():
    spec = bootstrap.BootstrapSpec(fleet="f", region="cn-hangzhou", gpu_counts={"t": 1},
                                   route="auto_install",
                                   driver=bootstrap.node_stack.DEFAULT_DRIVER_STACK)
    paths = set(bootstrap.node_files(spec))
    assert f"{bootstrap.INSTALL_DIR}/bootstrap.sh" in paths
    assert all(path.startswith((bootstrap.INSTALL_DIR, "/etc/systemd/system/"))
               for path in paths)
