"""`gpu-infra policy coverage [STACK]`: which resource types the policy rules review and for
which concerns; with a stack, every resource type of its plan, reviewed or not."""

from __future__ import annotations

import argparse

from gpu_infra_policies.coverage import coverage_markdown, stack_coverage
from gpu_infra_policies.rules import JUDGING_RULES
from gpu_infra_tools.cli.arguments import InputDirectory, non_empty
from gpu_infra_tools.cli.common import stack_path
from gpu_infra_tools.cli.output import add_output_arguments, emit
from gpu_infra_tools.cli.planned import plan_or_exit_code
from gpu_infra_tools.plan.engine import Plan
from gpu_infra_tools.review.policy import as_policy_resource

EXAMPLES = (
    "gpu-infra policy coverage",
    "gpu-infra policy coverage training-prod",
)
"""Shown by `--help`; a test parses each."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command."""
    parser = subparsers.add_parser(
        "policy", help="what the policy rules review: types and concerns (coverage)")
    parser.add_argument("action", choices=("coverage",),
                        help="coverage: the types the rules review, or a stack's types")
    parser.add_argument("stack", metavar="STACK", nargs="?", type=non_empty,
                        help="stack name or stack file: report its plan's resource types")
    parser.add_argument("--stacks-dir", type=InputDirectory(), default=None,
                        help="directory of Pulumi.<stack>.yaml files (default: PROJECT/stacks)")
    add_output_arguments(parser, ("markdown",), "the coverage")
    parser.set_defaults(run=run)


def stack_report(plan: Plan) -> list[str]:
    """One line per resource type of the plan, reviewed or not, and a total."""
    resources = [as_policy_resource(r) for r in plan.resources if r.custom]
    by_type = stack_coverage(resources, JUDGING_RULES)
    lines, unreviewed = [], 0
    for token, (coverage, found) in sorted(by_type.items()):
        if coverage.security_rules:
            verdict = f"reviewed for {', '.join(coverage.concerns)}"
        elif coverage.no_concern:
            verdict = f"no security concern: {coverage.no_concern}"
        else:
            verdict = "NOT REVIEWED by any security rule"
            unreviewed += 1
        lines.append(f"{token} ({len(found)}): {verdict}")
    total = sum(len(found) for _, found in by_type.values())
    lines.append(f"{len(lines)} types, {total} resources; {unreviewed} types not reviewed")
    return lines


def run(args: argparse.Namespace) -> int:
    """Print the coverage table, or a stack's coverage; exit 0, 2 on a bad stack, 1 when its
    program fails."""
    if args.stack is None:
        return emit(args, coverage_markdown(JUDGING_RULES))
    plan = plan_or_exit_code(stack_path(args))
    if isinstance(plan, int):
        return plan
    return emit(args, "\n".join(stack_report(plan)))
