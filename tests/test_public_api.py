"""The public API: the modules docs/reference/api.md lists (the site renders their `__all__`
from the docstrings and annotations, tests/test_docs.py builds it), every public name
documented, and a program outside the repository that type-checks against the installed
packages under `mypy --strict` (py.typed, no import-untyped)."""

from __future__ import annotations

import importlib
import inspect
import re
from types import ModuleType

import pytest

from .conftest import PROJECT_DIR

PACKAGES = ("gpu_infra_facts", "gpu_infra", "gpu_infra_provider", "gpu_infra_policies",
            "gpu_infra_tools")


PUBLIC_MODULES = tuple(re.findall(
    r"^::: (\S+)$", (PROJECT_DIR / "docs" / "reference" / "api.md").read_text(encoding="utf-8"),
    re.MULTILINE))
"""The stable modules: those the API reference renders (a `::: module` line each)."""


def public_modules() -> list[ModuleType]:
    return [importlib.import_module(name) for name in PUBLIC_MODULES]


def public_names(module: ModuleType) -> list[str]:
    """The module's `__all__`: a public module must declare one."""
    names = getattr(module, "__all__", None)
    assert names is not None, f"{module.__name__}: a public module needs __all__"
    return list(names)


def test_the_reference_lists_the_public_modules():
    assert len(PUBLIC_MODULES) >= 20
    assert [module.__name__ for module in public_modules()] == list(PUBLIC_MODULES)


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


@pytest.mark.slow  # a mypy process (one for every program: tests/strict_programs.py)
def test_a_program_importing_every_public_name_passes_mypy_strict(strict_mypy):
    """Checked from a directory of its own, so the repository's mypy settings (mypy_path) do
    not apply: the packages are found as installed, as in a user's project."""
    from .strict_programs import PUBLIC_API

    assert not any("import-untyped" in line for line in strict_mypy[PUBLIC_API])
    assert strict_mypy[PUBLIC_API] == []


def test_every_layout_and_its_config_is_exported_from_its_package():
    import gpu_infra.layouts
    import gpu_infra.schema

    for (config, _), layout in gpu_infra.layouts.LAYOUT_CLASSES.items():
        assert getattr(gpu_infra.layouts, layout.__name__) is layout
        assert layout.__name__ in gpu_infra.layouts.__all__
        assert getattr(gpu_infra.schema, config.__name__) is config
        assert config.__name__ in gpu_infra.schema.__all__


def test_the_version_is_pyprojects():
    import tomllib

    import gpu_infra

    project = tomllib.loads((PROJECT_DIR / "pyproject.toml").read_text())["project"]
    assert gpu_infra.__version__ == project["version"]
    with pytest.raises(AttributeError):
        _ = gpu_infra.no_such_name  # type: ignore[attr-defined]
