"""The pull-request workflow: actions on the node24 runtime, the oldest and newest supported
Python, the Pulumi CLI pinned in the real preview."""

from __future__ import annotations

import re
from importlib.metadata import metadata

import yaml

from .conftest import PROJECT_DIR

WORKFLOW = yaml.safe_load((PROJECT_DIR / ".github" / "workflows" / "pr.yml").read_text())
NODE24_SINCE = {
    "actions/checkout": 5,       # v5.0.0, 2025-08-11 (actions/checkout#2238)
    "actions/setup-python": 6,   # README "Breaking changes in V6": node20 -> node24
    "actions/github-script": 8,  # v8.0.0 action.yml: using node24
    "pulumi/actions": 7,         # 7.0.0, 2026-05-01 (pulumi/actions#1404)
}
"""The first major version of each action that runs on node24 (node20 is removed from the
runners on 2026-09-23). An action not listed here fails the test until it is checked."""


def steps():
    return [step for job in WORKFLOW["jobs"].values() for step in job["steps"]]


def test_every_action_runs_on_node24():
    used = [step["uses"] for step in steps() if "uses" in step]
    assert used
    for reference in used:
        action, _, version = reference.partition("@")
        assert action in NODE24_SINCE, f"{reference}: runtime not checked"
        assert re.fullmatch(r"v\d+", version), f"{reference}: pin a major version"
        assert int(version[1:]) >= NODE24_SINCE[action], f"{reference} runs on node20"


def test_tests_run_on_the_oldest_and_newest_supported_python():
    package = metadata("gpu-infra")
    supported = sorted((c.rsplit(" :: ", 1)[1] for c in package.get_all("Classifier")
                        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)),
                       key=lambda v: int(v.split(".")[1]))
    assert package["Requires-Python"] == f">={supported[0]}"
    tested = {step["with"]["python-version"] for job in WORKFLOW["jobs"].values()
              for step in job["steps"] if step.get("uses", "").startswith("actions/setup-python")
              and any("make test" in s.get("run", "") for s in job["steps"])}
    assert tested == {supported[0], supported[-1]}


def test_preview_pins_the_pulumi_cli_and_upserts_the_stack():
    pinned = WORKFLOW["env"]["PULUMI_VERSION"]
    assert re.fullmatch(r"3\.\d+\.\d+", pinned)
    sdk = next(r for r in metadata("gpu-infra").get_all("Requires-Dist")
               if re.match(r"pulumi[<>=]", r))
    lower = re.search(r">=(3\.\d+)", sdk).group(1)
    assert tuple(map(int, pinned.split(".")[:2])) >= tuple(map(int, lower.split(".")))
    preview = next(step for step in steps() if step.get("uses", "").startswith("pulumi/"))
    assert preview["with"]["pulumi-version"] == "${{ env.PULUMI_VERSION }}"
    assert preview["with"]["upsert"] is True
    install = next(step for step in WORKFLOW["jobs"]["preview-with-policy-pack"]["steps"]
                   if step.get("name") == "Install the project")
    assert '"pulumi==$PULUMI_VERSION"' in install["run"]
