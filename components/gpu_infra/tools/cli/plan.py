"""`gpu-infra plan STACK`: the offline plan (the real program under the mock engine)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from gpu_infra.schema import ConfigError
from gpu_infra.tools.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_OK,
    add_stack_argument,
    report_problems,
    stack_path,
)
from gpu_infra.tools.plan.diagram import render_mermaid
from gpu_infra.tools.plan.engine import ProgramError, ValidatorErrors, run_plan
from gpu_infra.tools.review import Review, review
from gpu_infra.tools.review.render import render_markdown, render_text
from gpu_infra_policies.config import PolicyConfigError, load_policy_config

RENDERERS: dict[str, Callable[[Review], str]] = {
    "text": render_text, "markdown": render_markdown,
    "mermaid": lambda result: render_mermaid(result.plan)}


def add_parser(subparsers) -> None:
    """Register the command."""
    parser = subparsers.add_parser(
        "plan", help="offline plan: resources, validator findings (no cloud access needed)")
    add_stack_argument(parser)
    parser.add_argument("--format", choices=sorted(RENDERERS), default="text",
                        help="output format on stdout (default: text, a preview tree)")
    parser.add_argument("--json", dest="json_file", type=Path, metavar="FILE",
                        help="also write the full plan record as JSON to FILE ('-' = stdout)")
    parser.add_argument("--policy-config", type=Path, metavar="FILE",
                        help="policy rule levels and thresholds, the JSON file given to "
                             "`pulumi preview --policy-pack-config` (default: rule defaults)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Plan the stack and run the policy rules; exit 0, 1 (program failed or a mandatory
    policy violation) or 2 (bad input, including a bad policy config)."""
    try:
        settings = load_policy_config(args.policy_config) if args.policy_config else None
    except PolicyConfigError as error:
        print(f"invalid policy config: {error.source}", file=sys.stderr)
        for problem in error.problems:
            print(f"  {problem}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        plan = run_plan(stack_path(args))
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
    result = review(plan, settings)
    status = EXIT_FAILED if result.blocked else EXIT_OK
    if args.json_file is not None:
        record = json.dumps(result.to_json(), indent=2, default=str)
        if str(args.json_file) == "-":
            print(record)
            return status
        args.json_file.write_text(record + "\n", encoding="utf-8")
    print(RENDERERS[args.format](result))
    return status
