"""Helpers shared by the commands: locating the project and stacks, printing problems."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gpu_infra.schema import ConfigError, resolve_stack_path

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def project_dir() -> Path:
    """The nearest directory at or above the working directory holding Pulumi.yaml, else the
    working directory."""
    here = Path.cwd().resolve()
    return next((d for d in (here, *here.parents) if (d / "Pulumi.yaml").is_file()), here)


def add_stack_argument(parser: argparse.ArgumentParser) -> None:
    """The STACK positional and --stacks-dir option."""
    parser.add_argument("stack", metavar="STACK",
                        help="stack name in the stacks directory, or a path to a stack file")
    parser.add_argument("--stacks-dir", type=Path, default=None,
                        help="directory of Pulumi.<stack>.yaml files (default: PROJECT/stacks)")


def stack_path(args: argparse.Namespace) -> Path:
    """The stack file the arguments name."""
    return resolve_stack_path(args.stack, args.stacks_dir or project_dir() / "stacks")


def report_problems(error: ConfigError, what: str = "invalid stack") -> int:
    """Print one line per problem to stderr; return the bad-input exit code."""
    print(f"{what}: {error.source}", file=sys.stderr)
    for problem in error.problems:
        print(f"  {problem}", file=sys.stderr)
    return EXIT_BAD_INPUT
