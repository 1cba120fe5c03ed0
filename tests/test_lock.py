"""requirements.lock: the exact versions `make`, the workflow and the Pulumi CLI install, in
step with pyproject.toml's ranges, the workflow's Pulumi CLI, the installed packages and the
provider version the vendored update semantics were read from."""

from __future__ import annotations

import json
import re
from importlib.metadata import version

import pytest
import yaml
from packaging.markers import Marker
from packaging.requirements import Requirement

from .conftest import PROJECT_DIR

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

LOCK = PROJECT_DIR / "requirements.lock"


def pins() -> dict[str, str]:
    """Package -> pinned version for this interpreter (markers evaluated)."""
    found: dict[str, str] = {}
    for line in LOCK.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        requirement, _, marker = line.partition(" ; ")
        if marker and not Marker(marker).evaluate():
            continue
        name, _, pinned = requirement.partition("==")
        found[re.sub(r"[-_.]+", "-", name).lower()] = pinned
    return found


def test_every_line_is_an_exact_pin():
    lines = [line for line in LOCK.read_text().splitlines() if line and not line.startswith("#")]
    assert lines and all(re.fullmatch(r"[A-Za-z0-9._-]+==[\w.+!-]+( ; .+)?", line)
                         for line in lines)


def test_the_pins_satisfy_pyproject():
    project = tomllib.loads((PROJECT_DIR / "pyproject.toml").read_text())["project"]
    wanted = [Requirement(r) for r in [*project["dependencies"],
                                       *project["optional-dependencies"]["dev"]]]
    locked = pins()
    for requirement in wanted:
        name = re.sub(r"[-_.]+", "-", requirement.name).lower()
        assert name in locked, f"{name} is not locked"
        assert requirement.specifier.contains(locked[name]), f"{name}=={locked[name]}"


@pytest.mark.parametrize("package", ["pulumi", "pulumi-alicloud", "pulumi-policy", "pydantic"])
def test_the_installed_versions_are_the_locked_ones(package):
    assert version(package) == pins()[package]


def test_the_workflow_cli_matches_the_locked_sdk():
    workflow = yaml.safe_load((PROJECT_DIR / ".github" / "workflows" / "pr.yml").read_text())
    assert workflow["env"]["PULUMI_VERSION"] == pins()["pulumi"]


def test_the_vendored_update_semantics_match_the_installed_provider():
    semantics = json.loads((PROJECT_DIR / "components" / "gpu_infra_facts" /
                            "update_semantics.json").read_text())
    assert semantics["provider"]["sdk"] == f"pulumi-alicloud {version('pulumi-alicloud')}"
    assert semantics["provider"]["sdk"] == f"pulumi-alicloud {pins()['pulumi-alicloud']}"


def test_make_the_cli_and_the_policy_pack_install_with_the_lock():
    assert "pip install --quiet -c requirements.lock -e '.[dev]'" in (
        PROJECT_DIR / "Makefile").read_text()
    assert "-c requirements.lock" in (PROJECT_DIR / "requirements.txt").read_text().splitlines()
    assert "-c ../requirements.lock" in (PROJECT_DIR / "policies" /
                                         "requirements.txt").read_text().splitlines()


def test_the_lock_covers_the_oldest_python():
    """Pins split by Python where a release dropped 3.10 (a universal resolution)."""
    assert "python_full_version < '3.11'" in LOCK.read_text()
