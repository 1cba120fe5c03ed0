"""Release hygiene: the CHANGELOG covers the current version with an upgrade note, the
pre-commit hooks run what `make test` runs, CONTRIBUTING names the tiers and the version
policy, and every shipped stack points editors at the schema."""

from __future__ import annotations

import json
import re

import yaml

from .conftest import PROJECT_DIR, STACKS_DIR

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

MODELINE = "# yaml-language-server: $schema=../schema/gpu-infra-stack.schema.json"


def test_the_changelog_has_the_current_version_with_upgrade_notes():
    version = tomllib.loads((PROJECT_DIR / "pyproject.toml").read_text())["project"]["version"]
    changelog = (PROJECT_DIR / "CHANGELOG.md").read_text()
    sections = re.split(r"^## ", changelog, flags=re.M)[1:]
    assert sections and any(section.startswith(version) or section.startswith("Unreleased")
                            for section in sections)
    unreleased = [section for section in sections if section.startswith("Unreleased")]
    assert all("Upgrading" in section for section in unreleased)


def test_pre_commit_runs_the_tools_of_make_test():
    recipe = (PROJECT_DIR / "Makefile").read_text().split("\ntest:", 1)[1].split("\n\n", 1)[0]
    commands = [line for line in recipe.splitlines() if line.startswith("\t")]
    tools = {match.group(1) for line in commands
             for match in re.finditer(r"\$\(BIN\)/(\w+)", line)}
    hooks = yaml.safe_load((PROJECT_DIR / ".pre-commit-config.yaml").read_text())
    entries = [hook["entry"] for repo in hooks["repos"] for hook in repo["hooks"]]
    assert tools and all(any(f".venv/bin/{tool}" in entry for entry in entries)
                         for tool in tools), tools


def test_contributing_names_the_tiers_and_the_version_policy():
    text = (PROJECT_DIR / "CONTRIBUTING.md").read_text()
    assert "make test" in text and "make test-fast" in text and "## Versions" in text
    for how_to in ("**A layout.**", "**A policy rule.**", "**A bootstrap step.**"):
        assert how_to in text


def test_every_shipped_stack_points_editors_at_the_schema():
    for path in sorted(STACKS_DIR.glob("Pulumi.*.yaml")):
        assert path.read_text().splitlines()[0] == MODELINE, path.name
    schema_path = MODELINE.split("$schema=", 1)[1]
    assert (STACKS_DIR / schema_path).resolve().is_file()
    settings = json.loads((PROJECT_DIR / ".vscode" / "settings.json").read_text())
    assert settings["yaml.schemas"] == {"./schema/gpu-infra-stack.schema.json":
                                        ["stacks/Pulumi.*.yaml"]}
