"""`gpu-infra cost STACK [--compare BASE]`: the cost estimate of a stack's offline plan, or
how much it changes against another stack (e.g. the stack file before a pull request)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gpu_infra.schema import ConfigError, resolve_stack_path
from gpu_infra.tools.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_OK,
    add_stack_argument,
    project_dir,
    stack_path,
)
from gpu_infra.tools.cost import Assumptions, Estimate, compare, estimate_plan, render_text
from gpu_infra.tools.plan.engine import ProgramError, ValidatorErrors, run_plan


def _factor(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be above 0 and at most 1, got {value:g}")
    return value


def add_parser(subparsers) -> None:
    """Register the command."""
    parser = subparsers.add_parser(
        "cost", help="cost estimate of a stack's offline plan, or the difference to another")
    add_stack_argument(parser)
    parser.add_argument("--compare", metavar="BASE",
                        help="show the difference from stack BASE (name or path) to STACK")
    parser.add_argument("--json", action="store_true",
                        help="print the estimate (or the difference) as JSON")
    parser.add_argument("--spot-price-factor", type=_factor, metavar="F",
                        help="fraction of the on-demand price spot capacity pays, above 0 and "
                             "at most 1 (default 0.7, from components/cost/prices.yaml)")
    parser.set_defaults(run=run)


class _Failed(Exception):
    def __init__(self, code: int):
        self.code = code


def _estimate(path: Path, assumptions: Assumptions) -> tuple[str, Estimate]:
    """(cluster name, estimate) of the stack file at `path`; problems go to stderr."""
    try:
        plan = run_plan(path)
    except ConfigError as error:
        print(f"invalid stack: {error.source}", file=sys.stderr)
        for problem in error.problems:
            print(f"  {problem}", file=sys.stderr)
        raise _Failed(EXIT_BAD_INPUT) from None
    except ValidatorErrors as error:
        print(f"invalid stack: {path}", file=sys.stderr)
        for finding in error.findings:
            print(f"  {finding.line()}", file=sys.stderr)
        raise _Failed(EXIT_BAD_INPUT) from None
    except ProgramError as error:
        print(f"program failed: {error}", file=sys.stderr)
        raise _Failed(EXIT_FAILED) from None
    return plan.stack.name, estimate_plan(plan, assumptions)


def run(args: argparse.Namespace) -> int:
    """Print the estimate or the difference; exit 0, 1 (program failed) or 2 (bad input)."""
    assumptions = Assumptions(spot_price_factor=args.spot_price_factor)
    try:
        name, after = _estimate(stack_path(args), assumptions)
        if args.compare is None:
            print(json.dumps(after.to_json(), indent=2) if args.json else render_text(after))
            return EXIT_OK
        base_path = resolve_stack_path(args.compare, args.stacks_dir or project_dir() / "stacks")
        base_name, before = _estimate(base_path, assumptions)
    except _Failed as failure:
        return failure.code
    comparison = compare(before, after, base_name, name)
    print(json.dumps(comparison.to_json(), indent=2) if args.json
          else comparison.render_text(args.compare, args.stack))
    return EXIT_OK
