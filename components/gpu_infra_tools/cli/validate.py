"""`gpu-infra validate STACK`: check a stack file against the schema and the validators."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from gpu_infra.knowhow import Finding, errors_in
from gpu_infra.nodeplan import judge_stack
from gpu_infra.schema import ClusterConfig, ConfigError
from gpu_infra.schema.loader import stack_name_of
from gpu_infra.schema.problems import capped
from gpu_infra_tools.cli.common import (
    EXIT_BAD_INPUT,
    add_stack_argument,
    load_stack_arguments,
    report_problems,
    stack_path,
)
from gpu_infra_tools.cli.output import add_output_arguments, emit

EXAMPLES = (
    "gpu-infra validate training-dev",
    "gpu-infra validate ./Pulumi.mine.yaml",
    "gpu-infra validate training-prod --format json --output verdict.json",
)
"""Shown by `--help`; a test parses each."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command."""
    parser = subparsers.add_parser("validate", help="check a stack file; exit 2 if invalid")
    add_stack_argument(parser)
    add_output_arguments(parser, ("text", "json"), "the verdict")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Exit 0 with a one-line summary, or 2 with one line per problem on stderr; with
    `--format json` the verdict is also a JSON document (valid or not)."""
    path = stack_path(args)
    try:
        stack_file, cluster = load_stack_arguments(args, path)
    except ConfigError as error:
        code = report_problems(error)
        if args.format == "json":
            emit(args, _document(path, problems=error.problems))
        return code
    findings = judge_stack(cluster)
    for line in capped([finding.line() for finding in findings], "finding"):
        print(line, file=sys.stderr)
    errors = errors_in(findings)
    if errors:
        print(f"invalid stack: {path}: {len(errors)} validator error(s)", file=sys.stderr)
    if args.format == "json":
        code = emit(args, _document(path, cluster, findings))
        return EXIT_BAD_INPUT if errors else code
    if errors:
        return EXIT_BAD_INPUT
    warnings = len(findings)
    return emit(args, f"{stack_file.name}: valid {cluster.layout} cluster '{cluster.name}' "
                      f"({cluster.environment}, {cluster.region}, zones "
                      f"{', '.join(cluster.network.zones)})"
                      + (f"; {warnings} warning(s)" if warnings else ""))


def _document(path: Path, cluster: ClusterConfig | None = None,
              findings: Sequence[Finding] = (), problems: Sequence[str] = ()) -> str:
    """The `--format json` verdict: `valid`, the schema `problems` (one line each), the
    validator `findings` and, when the file parsed, what it describes."""
    described = {} if cluster is None else {
        "layout": cluster.layout, "cluster": cluster.name,
        "environment": cluster.environment, "region": cluster.region,
        "zones": list(cluster.network.zones)}
    return json.dumps({
        "stack": stack_name_of(path), "file": str(path),
        "valid": cluster is not None and not errors_in(findings),
        **described,
        "problems": list(problems),
        "findings": [{"validator": f.validator, "level": f.level.value, "path": f.path,
                      "message": f.message} for f in findings]}, indent=2)
