"""The packed user data (blocks.bootstrap.packing): the loader runs the node script under
each supported system's bash and python3, and stops on a damaged payload;
unpack gives back the script the golden plans and the policy pack read."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gpu_infra.blocks.bootstrap import INSTALL_DIR, unpack_user_data
from gpu_infra.blocks.bootstrap.packing import pack

from .node_systems import PYTHONS, python_of

SCRIPT = ("#!/bin/bash\n# gpu-infra node bootstrap of fleet t01-gpu; log: /var/log/x.log\n"
          "set -euo pipefail\nw() { cat > \"$1\"; }\nw \"$OUT\" <<'GPU_INFRA_EOF'\n"
          "héllo $HOME `not run`\nGPU_INFRA_EOF\necho ran\n")
"""A node script with a here-document and a non-ASCII character."""


def run(text: str, python: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`text` run as bash user data, with `python` as the node's python3."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "python3").unlink(missing_ok=True)
    (bin_dir / "python3").symlink_to(python)
    (tmp_path / "user-data.sh").write_text(text, encoding="utf-8")
    return subprocess.run(
        ["bash", "user-data.sh"], cwd=tmp_path,
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", "OUT": str(tmp_path / "out"),
             "HOME": "/nowhere"}, capture_output=True, text=True, timeout=30, check=False)


@pytest.mark.slow  # starts bash and the systems' Pythons
@pytest.mark.parametrize("system", sorted(PYTHONS))
def test_the_loader_runs_the_script_under_each_systems_python(system, tmp_path):
    done = run(pack(SCRIPT, INSTALL_DIR), python_of(system), tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out").read_text(encoding="utf-8") == "héllo $HOME `not run`\n"
    assert done.stdout == "ran\n"


@pytest.mark.slow
def test_a_damaged_payload_stops_the_user_data_before_anything_runs(tmp_path):
    packed = pack(SCRIPT, INSTALL_DIR).splitlines(keepends=True)
    payload = next(i for i, line in enumerate(packed) if line.startswith("s=$(")) + 1
    packed[payload] = "A" * (len(packed[payload]) - 1) + "\n"
    done = run("".join(packed), python_of("ubuntu-24.04"), tmp_path)
    assert done.returncode != 0
    assert not (tmp_path / "out").exists() and "ran" not in done.stdout


def test_unpack_gives_back_the_script_and_the_loader_shows_what_it_is():
    packed = pack(SCRIPT, INSTALL_DIR)
    assert unpack_user_data(packed) == SCRIPT
    assert packed == pack(SCRIPT, INSTALL_DIR)  # the same bytes for the same script
    assert packed.startswith(SCRIPT.split("set -eu")[0])  # the fleet's name stays in clear
    assert len(packed.encode()) < len(SCRIPT.encode()) * 4
    assert unpack_user_data(SCRIPT) is None
    assert unpack_user_data(packed.replace("\n", "!\n", 5)) is None
