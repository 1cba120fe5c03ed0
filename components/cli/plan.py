"""`gpu-infra plan STACK`: the offline plan (the real program under the mock engine)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..config import ConfigError
from ..plan.engine import ProgramError, ValidatorErrors, run_plan
from ..plan.render import render_markdown, render_text
from .common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_OK,
    add_stack_argument,
    project_dir,
    report_problems,
    stack_path,
)

RENDERERS = {"text": render_text, "markdown": render_markdown}


def add_parser(subparsers) -> None:
    """Register the command."""
    parser = subparsers.add_parser(
        "plan", help="offline plan: resources, validator findings (no cloud access needed)")
    add_stack_argument(parser)
    parser.add_argument("--format", choices=sorted(RENDERERS), default="text",
                        help="output format on stdout (default: text, a preview tree)")
    parser.add_argument("--json", dest="json_file", type=Path, metavar="FILE",
                        help="also write the full plan record as JSON to FILE ('-' = stdout)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Plan the stack; exit 0, 1 (program failed) or 2 (bad input)."""
    try:
        plan = run_plan(stack_path(args), project_dir())
    except ConfigError as error:
        return report_problems(error)
    except ValidatorErrors as error:
        print(f"invalid stack: {stack_path(args)}", file=sys.stderr)
        for finding in error.findings:
            print(f"  {finding.line()}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ProgramError as error:
        print(f"program failed: {error}", file=sys.stderr)
        return EXIT_FAILED
    if args.json_file is not None:
        record = json.dumps(plan.to_json(), indent=2, default=str)
        if str(args.json_file) == "-":
            print(record)
            return EXIT_OK
        args.json_file.write_text(record + "\n", encoding="utf-8")
    print(RENDERERS[args.format](plan))
    return EXIT_OK
