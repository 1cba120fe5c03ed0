"""The package as pip builds it: SPDX license metadata, the LICENSE file, the Pulumi program
and its data files inside, no deprecation warnings on the way."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from .conftest import PROJECT_DIR

pytestmark = pytest.mark.slow  # builds the wheel with pip


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> tuple[Path, str]:
    """(the built wheel, pip's output while building it)."""
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--verbose", "-w", str(out),
         str(PROJECT_DIR)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return next(out.glob("gpu_infra-*.whl")), done.stdout + done.stderr


def test_build_has_no_deprecation_warnings(wheel):
    _, output = wheel
    assert [line for line in output.splitlines() if "eprecat" in line] == []


def test_wheel_declares_the_spdx_license_and_ships_the_license_file(wheel):
    path, _ = wheel
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        metadata_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(metadata_name).decode())
        license_name = next(n for n in names if n.endswith("licenses/LICENSE"))
        shipped_license = archive.read(license_name).decode()
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata["License-File"] == "LICENSE"
    assert shipped_license == (PROJECT_DIR / "LICENSE").read_text()
    assert "Apache License" in shipped_license and "Version 2.0" in shipped_license


def test_wheel_ships_the_program_and_its_data(wheel):
    path, _ = wheel
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
    assert {"gpu_infra/program.py", "gpu_infra_tools/cost/prices.yaml",
            "gpu_infra/catalog/gpu_catalog.yaml", "gpu_infra_policies/rules.py",
            "gpu_infra_facts/py.typed", "gpu_infra/py.typed", "gpu_infra_policies/py.typed",
            "gpu_infra_tools/py.typed"} <= names
    assert not any(name.startswith(("tests/", "stacks/", "bench/", "examples/")) for name in names)
