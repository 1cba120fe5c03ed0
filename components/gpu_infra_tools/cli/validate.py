"""`gpu-infra validate STACK`: check a stack file against the schema and the validators."""

from __future__ import annotations

import argparse
import sys

from gpu_infra.knowhow import errors_in
from gpu_infra.nodeplan import judge_stack
from gpu_infra.schema import ConfigError, load_cluster_config
from gpu_infra.schema.problems import capped
from gpu_infra_tools.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    add_stack_argument,
    report_problems,
    stack_path,
)

EXAMPLES = (
    "gpu-infra validate training-dev",
    "gpu-infra validate ./Pulumi.mine.yaml",
)
"""Shown by `--help`; a test parses each."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command."""
    parser = subparsers.add_parser("validate", help="check a stack file; exit 2 if invalid")
    add_stack_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Exit 0 with a one-line summary, or 2 with one line per problem."""
    path = stack_path(args)
    try:
        stack_file, cluster = load_cluster_config(path)
    except ConfigError as error:
        return report_problems(error)
    findings = judge_stack(cluster)
    for line in capped([finding.line() for finding in findings], "finding"):
        print(line, file=sys.stderr)
    if errors_in(findings):
        print(f"invalid stack: {path}: {len(errors_in(findings))} validator error(s)",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    warnings = len(findings)
    print(f"{stack_file.name}: valid {cluster.layout} cluster '{cluster.name}' "
          f"({cluster.environment}, {cluster.region}, zones {', '.join(cluster.network.zones)})"
          + (f"; {warnings} warning(s)" if warnings else ""))
    return EXIT_OK
