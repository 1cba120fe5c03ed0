"""The README stays true: its command lines parse (the cheap ones run), the paths it names
exist, and its generated sections (stack files, architecture pictures, cost figures, the
environments and layouts tables, user-data sizes) are what the code produces today.

A generated section sits between `<!-- generated: KIND STACK -->` and `<!-- end generated -->`;
after a deliberate change, rewrite them with `GPU_INFRA_UPDATE_README=1 .venv/bin/pytest
tests/test_readme.py` and read the diff.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable

import pytest

from gpu_infra.blocks.bootstrap import user_data, user_data_size
from gpu_infra.nodeplan import node_plan
from gpu_infra.nodeplan.user_data import worst_case_spec
from gpu_infra.schema.environment import profile_table
from gpu_infra.schema.registry import LAYOUT_MODELS
from gpu_infra_facts.node_stack import USER_DATA_MAX_BYTES
from gpu_infra_tools.cli import build_parser, main
from gpu_infra_tools.cost import estimate_plan
from gpu_infra_tools.plan.diagram import render_mermaid

from .conftest import PROJECT_DIR, STACKS_DIR, cluster_config
from .shipped import shipped_plan as planned
from .test_bootstrap_scripts import SHIPPED, user_data_of
from .test_user_data_size import LARGEST_RENDERING, LARGEST_TRAINING

README = PROJECT_DIR / "README.md"
GENERATED = re.compile(
    r"^( *)<!-- generated: ([\w-]+) ([\w-]+) -->\n(.*?)^ *<!-- end generated -->",
    re.MULTILINE | re.DOTALL)
FENCE = re.compile(r"^ *```[\w]*\n(.*?)^ *```", re.MULTILINE | re.DOTALL)
PATH = re.compile(r"`((?:components|policies|stacks|tests|bench|schema)/[\w./-]*)`")


def _stack(stack: str) -> str:
    return "```yaml\n" + (STACKS_DIR / f"Pulumi.{stack}.yaml").read_text() + "```\n"


def _mermaid(stack: str) -> str:
    return "```mermaid\n" + render_mermaid(planned(stack)).rstrip("\n") + "\n```\n"


def _cost_summary(stack: str) -> str:
    return f"`{estimate_plan(planned(stack)).summary()}`\n"


def _environments(_: str) -> str:
    return profile_table()


def _layouts(_: str) -> str:
    """What each registered layout declares: default buckets, placement, catalog uses."""
    lines = ["| Layout | Default buckets (`storage.buckets.purposes`) | Nodes | Instance uses |",
             "|---|---|---|---|"]
    for name, model in LAYOUT_MODELS.items():
        buckets = ", ".join(getattr(model, "default_bucket_purposes", ())) or "none"
        placement = model.workload.placement or "either"
        lines.append(f"| `{name}` | {buckets} | {placement} | "
                     f"{', '.join(model.workload.uses)} |")
    return "\n".join(lines) + "\n"


def _user_data_sizes(_: str) -> str:
    """Each shipped fleet stack's user data (as planned) and what the size check renders for
    the largest stacks the schema allows, against ECS's limit."""
    lines = ["| Stack | User data (bytes) | Headroom to 32,768 |", "|---|---|---|"]
    sizes = {stack: user_data_size(user_data_of(planned(stack))[0]) for stack in SHIPPED}
    for label, cluster in (("largest training stack (size check)", LARGEST_TRAINING),
                           ("largest rendering stack (size check)", LARGEST_RENDERING)):
        config = cluster_config(cluster)
        sizes[label] = user_data_size(user_data(worst_case_spec(node_plan(config))))
    lines += [f"| {name} | {size:,} | {USER_DATA_MAX_BYTES - size:,} |"
              for name, size in sizes.items()]
    return "\n".join(lines) + "\n"


KINDS: dict[str, Callable[[str], str]] = {
    "stack": _stack, "mermaid": _mermaid, "cost-summary": _cost_summary,
    "environments": _environments, "layouts": _layouts, "user-data-sizes": _user_data_sizes}


def regenerated(text: str) -> str:
    """`text` with every generated section made anew."""
    def replace(match: re.Match[str]) -> str:
        indent, kind, stack = match.group(1), match.group(2), match.group(3)
        body = "".join(f"{indent}{line}" if line.strip() else line
                       for line in KINDS[kind](stack).splitlines(keepends=True))
        return (f"{indent}<!-- generated: {kind} {stack} -->\n{body}"
                f"{indent}<!-- end generated -->")
    return GENERATED.sub(replace, text)


def command_lines() -> list[str]:
    """Every `gpu-infra` command in a code block, continuation lines joined."""
    lines = []
    for block in FENCE.findall(README.read_text()):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.strip()
            if re.match(r"(\.venv/bin/)?gpu-infra ", line):
                lines.append(line)
    return lines


def test_generated_sections_are_up_to_date():
    text = README.read_text()
    assert len(GENERATED.findall(text)) >= 7
    fresh = regenerated(text)
    if os.environ.get("GPU_INFRA_UPDATE_README") == "1":
        README.write_text(fresh)
    assert fresh == text, ("README.md's generated sections are stale: rerun with "
                           "GPU_INFRA_UPDATE_README=1 and commit the diff")


def test_examples_use_the_venv_command():
    """`make plan` puts the command in .venv/bin, not on PATH."""
    lines = command_lines()
    assert len(lines) >= 15
    assert [line for line in lines if not line.startswith(".venv/bin/gpu-infra ")] == []


NEEDS_THE_CLOUD = {
    "publish-queue-metric": "sends PutCustomMetric to CloudMonitor: needs Alibaba Cloud "
                            "credentials and the network (tests/test_metric_publisher.py runs "
                            "it against a fake CloudMonitor)",
}
"""Commands of the README that cannot run offline, with the reason; they are only parsed."""
NEEDS_GIT_MAIN = ("--compare-revision main", "--against main")
"""Command lines that read the stack file at git revision `main`: run in the repository. On a
branch that makes a dangerous prod change to a shipped stack, the comparison rightly exits 1
(an unacknowledged dangerous change), so those lines pass with 0 or 1; anything else fails."""


def _git_has_main() -> bool:
    done = subprocess.run(["git", "-C", str(PROJECT_DIR), "rev-parse", "--verify", "--quiet",
                           "main^{commit}"], capture_output=True)
    return done.returncode == 0


@pytest.mark.slow  # about a dozen plans, in README order
def test_every_readme_command_runs(tmp_path, capsys, monkeypatch):
    """Each `gpu-infra` line of the README runs and exits 0, in README order (a later line
    may use what an earlier one wrote, e.g. plan-of-main.json), in a copy of the project so
    that clones and output files land there; a `> FILE` redirection is left out (the output
    is captured). Lines that need the cloud are parsed only (NEEDS_THE_CLOUD); those that
    read git revision `main` run in the repository itself, if it has that branch."""
    for name in ("Pulumi.yaml", "stacks", "policies"):
        source = PROJECT_DIR / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, tmp_path / name)
    failures, ran = [], 0
    for line in command_lines():
        words = shlex.split(line, comments=True)
        if ">" in words:
            words = words[:words.index(">")]
        arguments = words[1:]
        args = build_parser().parse_args(arguments)
        assert callable(args.run), line
        if arguments[0] in NEEDS_THE_CLOUD:
            continue
        in_repository = any(marker in line for marker in NEEDS_GIT_MAIN)
        if in_repository and not _git_has_main():
            continue
        monkeypatch.chdir(PROJECT_DIR if in_repository else tmp_path)
        code = main(arguments)
        captured = capsys.readouterr()
        ran += 1
        if code not in ((0, 1) if in_repository else (0,)):
            failures.append(f"{line}\n  exit {code}: {captured.err.strip()[:600]}")
    assert not failures, "\n".join(failures)
    assert ran >= len(command_lines()) - len(NEEDS_THE_CLOUD) - len(NEEDS_GIT_MAIN)


def test_paths_named_in_the_readme_exist():
    named = sorted(set(PATH.findall(README.read_text())))
    assert named
    assert [path for path in named if "NEW" not in path
            and not (PROJECT_DIR / path).exists()] == []
