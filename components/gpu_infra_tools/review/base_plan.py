"""The base of a change report: a plan record written earlier by `gpu-infra plan --json`, or
the plan of the same stack file by the program at a git revision (checked out in a
temporary `git worktree`, planned by that revision's own code, removed afterwards)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

PLAN_TIMEOUT_SECONDS = 600
"""A base plan that takes longer than this has hung."""
CLI_ENTRY = "gpu_infra_tools.cli:main"
"""Where the base revision's CLI is when its pyproject cannot be read: every revision since
the restructure has it (the console script, tools/console.py, calls it)."""


class BaseError(Exception):
    """The base cannot be had; the message says why, in one line."""


def load_base(against: str, stack_file: Path, project_dir: Path) -> tuple[dict[str, Any], str]:
    """(plan record, label) of `against`: a JSON file if that path exists, else a git
    revision of the repository holding `project_dir`. BaseError if neither works."""
    path = Path(against)
    if path.is_file():
        return read_record(path), str(path)
    return plan_at_revision(against, stack_file, project_dir)


def read_record(path: Path) -> dict[str, Any]:
    """A `plan --json` record from `path`; BaseError if it is not one."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BaseError(f"{path}: not a readable plan JSON ({error})") from None
    if not isinstance(record, dict) or not isinstance(record.get("resources"), list):
        raise BaseError(f"{path}: not a `gpu-infra plan --json` record (no resources list)")
    return record


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          timeout=PLAN_TIMEOUT_SECONDS, check=False)


def plan_at_revision(revision: str, stack_file: Path,
                     project_dir: Path) -> tuple[dict[str, Any], str]:
    """Plan `stack_file`'s path at `revision` with that revision's program. A stack file
    that did not exist there has an empty base (everything is a create)."""
    top = _git(project_dir, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise BaseError(f"--against {revision}: not a plan JSON file, and {project_dir} is "
                        "not in a git repository")
    repo = Path(top.stdout.strip())
    commit = _git(repo, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    if commit.returncode != 0:
        raise BaseError(f"--against {revision}: neither a plan JSON file nor a git revision")
    sha = commit.stdout.strip()
    label = f"{revision} ({sha[:12]})"
    try:
        relative = stack_file.resolve().relative_to(repo.resolve())
    except ValueError:
        raise BaseError(f"{stack_file} is outside the repository {repo}") from None
    if _git(repo, "cat-file", "-e", f"{sha}:{relative.as_posix()}").returncode != 0:
        return {"resources": []}, f"{label}, where {relative} does not exist"
    with tempfile.TemporaryDirectory(prefix="gpu-infra-base-") as scratch:
        tree = Path(scratch) / "tree"
        added = _git(repo, "worktree", "add", "--detach", "--quiet", str(tree), sha)
        if added.returncode != 0:
            raise BaseError(f"git worktree add {sha[:12]} failed: {added.stderr.strip()}")
        try:
            return _plan_in(tree, relative, Path(scratch) / "base.json"), label
        finally:
            _git(repo, "worktree", "remove", "--force", str(tree))
            _git(repo, "worktree", "prune")


def _plan_in(tree: Path, stack: Path, out: Path) -> dict[str, Any]:
    """Run that revision's `gpu-infra plan --json` on its own code (its source roots first
    on the import path), in this interpreter's environment."""
    module, _, function = _cli_entry(tree).partition(":")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        str(tree / root) for root in ("components", "policies", "."))}
    code = (f"import sys; from {module} import {function} as main; "
            f"sys.exit(main(['plan', {str(stack)!r}, '--json', {str(out)!r}]))")
    try:
        result = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env,
                                capture_output=True, text=True, timeout=PLAN_TIMEOUT_SECONDS,
                                check=False)
    except subprocess.TimeoutExpired:
        raise BaseError(f"the base plan took over {PLAN_TIMEOUT_SECONDS} s") from None
    if not out.is_file():
        detail = (result.stderr.strip() or result.stdout.strip()).splitlines()[-3:]
        raise BaseError(f"the base revision cannot plan {stack} (exit {result.returncode}): "
                        + " / ".join(detail))
    return read_record(out)


def _cli_entry(tree: Path) -> str:
    """The `gpu-infra` console script of the checked-out revision."""
    if sys.version_info >= (3, 11):  # Python 3.10 has no tomllib: take the current entry
        import tomllib

        try:
            data = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            return CLI_ENTRY
        return str(data.get("project", {}).get("scripts", {}).get("gpu-infra", CLI_ENTRY))
    return CLI_ENTRY
