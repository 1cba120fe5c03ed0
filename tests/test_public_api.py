"""The public API: docs/api.md is what the docstrings say today, every public name is
documented, and a program outside the repository type-checks against the installed
packages under `mypy --strict` (py.typed, no import-untyped)."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

import pytest

from gpu_infra_tools.apidoc import PUBLIC_MODULES, public_names, render

from .conftest import PROJECT_DIR

PACKAGES = ("gpu_infra_facts", "gpu_infra", "gpu_infra_provider", "gpu_infra_policies",
            "gpu_infra_tools")


def test_the_api_page_is_current():
    page = (PROJECT_DIR / "docs" / "api.md").read_text(encoding="utf-8")
    assert page == render(), "regenerate: python -m gpu_infra_tools.apidoc > docs/api.md"


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_every_public_name_exists_and_is_documented(module_name):
    module = importlib.import_module(module_name)
    undocumented = [name for name in public_names(module)
                    if (inspect.isclass(getattr(module, name))
                        or inspect.isfunction(getattr(module, name)))
                    and not inspect.getdoc(getattr(module, name))]
    assert undocumented == []


@pytest.mark.parametrize("package", PACKAGES)
def test_every_package_is_marked_typed(package):
    assert (PROJECT_DIR / "components" / package / "py.typed").is_file()


@pytest.mark.slow  # a mypy process
def test_a_program_importing_every_public_name_passes_mypy_strict(tmp_path):
    """Run from a directory of its own, so the repository's mypy settings (mypy_path) do not
    apply: the packages are found as installed, as in a user's project."""
    imports = [f"from {module_name} import {name} as _{index}_{name}"
               for module_name in PUBLIC_MODULES
               for index, name in enumerate(public_names(importlib.import_module(module_name)))]
    program = tmp_path / "consumer.py"
    program.write_text("\n".join(imports) + "\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental",
                           program.name], cwd=tmp_path, capture_output=True, text=True,
                          timeout=900)
    assert "import-untyped" not in done.stdout
    assert done.returncode == 0, done.stdout + done.stderr
