"""The offline plan of a stack file for the commands that plan (plan, policy), with its
failures reported the CLI's way. Kept out of common.py, which every command loads."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gpu_infra.schema import ConfigError
from gpu_infra_tools.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    environment_config,
    report_problems,
    unseen_environments,
)
from gpu_infra_tools.plan.engine import Plan, ProgramError, ValidatorErrors, run_plan


def plan_or_exit_code(path: Path, args: argparse.Namespace | None = None) -> Plan | int:
    """The offline plan of the stack file at `path` (with the `--environment-values` of
    `args`), or, after reporting why there is none on stderr, the exit code: 2 for a bad
    stack (one line per problem or validator finding), 1 when the program failed."""
    try:
        environment = environment_config(args) if args is not None else {}
        for line in unseen_environments(path, environment):
            print(f"note: {line}", file=sys.stderr)
        return run_plan(path, environment=environment) if environment else run_plan(path)
    except ConfigError as error:
        return report_problems(error)
    except ValidatorErrors as error:
        print(f"invalid stack: {path}", file=sys.stderr)
        for finding in error.findings:
            print(f"  {finding.line()}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ProgramError as error:
        print(f"program failed: {error}", file=sys.stderr)
        return EXIT_FAILED
