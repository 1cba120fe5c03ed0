"""`gpu-infra cost STACK [--compare BASE | --compare-revision REV] [--format F] [--output
FILE]`: the cost estimate of a stack's offline plan, or how much it changes against another
stack or the same file at a git revision (e.g. the base of a pull request); `--format json`
prints Infracost JSON, `--format markdown` a table for a pull request.

GPU instance prices are the catalog's dated ones (each line's note gives region, date and
source); `--live-prices` reads this account's prices in the stack's region instead (ECS
DescribePrice: pay-as-you-go, spot, one-month subscription) with the credentials Alibaba's
tools find (see `gpu-infra preflight --help`)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from gpu_infra.schema import ConfigError, resolve_stack_path
from gpu_infra_tools.alibaba.client import ApiError
from gpu_infra_tools.alibaba.prices import LivePrices, read_live_prices
from gpu_infra_tools.cli.account import (
    account_client,
    add_account_arguments,
    unused_account_options,
)
from gpu_infra_tools.cli.arguments import non_empty
from gpu_infra_tools.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    RevisionError,
    add_stack_argument,
    environment_config,
    project_dir,
    report_problems,
    stack_file_at_revision,
    stack_path,
)
from gpu_infra_tools.cli.output import DeprecatedAlias, add_output_arguments, emit
from gpu_infra_tools.cli.progress import progress_line
from gpu_infra_tools.cost import (
    Assumptions,
    CostProject,
    Estimate,
    compare,
    estimate_plan,
    infracost_document,
    price_book,
    render_markdown,
    render_text,
)
from gpu_infra_tools.cost.estimate import CATALOG_PRICES
from gpu_infra_tools.plan.engine import Plan, ProgramError, ValidatorErrors, run_plan


def _factor(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be above 0 and at most 1, got {value:g}")
    return value


FORMATS = ("text", "json", "markdown")
"""`--format`: text (for people), json (Infracost JSON, format 0.2; with a base, its
pastBreakdown and diff are filled), markdown (a table for a pull request)."""


EXAMPLES = (
    "gpu-infra cost training-prod",
    "gpu-infra cost training-dev --compare training-prod --format json",
    "gpu-infra cost training-dev --compare-revision origin/main",
    "gpu-infra cost inference-prod --live-prices",
)
"""Shown by `--help`; a test parses each."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command."""
    parser = subparsers.add_parser(
        "cost", help="cost estimate of a stack's offline plan, or the difference to another")
    add_stack_argument(parser)
    base = parser.add_mutually_exclusive_group()
    base.add_argument("--compare", metavar="BASE", type=non_empty,
                      help="show the difference from stack BASE (name or path) to STACK")
    base.add_argument("--compare-revision", metavar="REV",
                      help="show the difference from the same stack file at git revision REV "
                           "(e.g. origin/main) to the file as it is")
    add_output_arguments(parser, FORMATS, "the estimate")
    parser.add_argument("--json", dest="format", nargs=0, const="json", action=DeprecatedAlias,
                        replacement="--format json", help="print Infracost JSON")
    parser.add_argument("--spot-price-factor", type=_factor, metavar="F",
                        help="fraction of the on-demand price spot capacity pays, above 0 and "
                             "at most 1 (default 0.7, from gpu_infra_tools/cost/prices.yaml)")
    parser.add_argument("--live-prices", action="store_true",
                        help="price the instance types with this account's prices in the "
                             "stack's region (ECS DescribePrice; needs credentials); default: "
                             "the catalog's dated prices")
    add_account_arguments(parser)
    parser.set_defaults(run=run)


class _Failed(Exception):
    def __init__(self, code: int):
        self.code = code


def _plan(path: Path, args: argparse.Namespace | None = None) -> Plan:
    """The offline plan of the stack file at `path` (with the `--environment-values` of
    `args`); problems go to stderr."""
    try:
        environment = environment_config(args) if args is not None else {}
        with progress_line(f"planning {path.name}"):
            return run_plan(path, environment=environment) if environment else run_plan(path)
    except ConfigError as error:
        report_problems(error)
        raise _Failed(EXIT_BAD_INPUT) from None
    except ValidatorErrors as error:
        print(f"invalid stack: {path}", file=sys.stderr)
        for finding in error.findings:
            print(f"  {finding.line()}", file=sys.stderr)
        raise _Failed(EXIT_BAD_INPUT) from None
    except ProgramError as error:
        print(f"program failed: {error}", file=sys.stderr)
        raise _Failed(EXIT_FAILED) from None


def _base(args: argparse.Namespace, path: Path, scratch: Path) -> tuple[str, Plan | None]:
    """(label, plan) of the baseline; plan None when the file is new at the revision."""
    if args.compare is not None:
        return args.compare, _plan(resolve_stack_path(
            args.compare, args.stacks_dir or project_dir() / "stacks"))
    try:
        old = stack_file_at_revision(path, args.compare_revision, scratch)
    except RevisionError as error:
        print(f"--compare-revision: {error}", file=sys.stderr)
        raise _Failed(EXIT_BAD_INPUT) from None
    label = f"{args.compare_revision}:{path.name}"
    return label, None if old is None else _plan(old)


def _live_prices(args: argparse.Namespace, plan: Plan) -> LivePrices:
    """The account's prices of the plan's instance types; what has none goes to stderr."""
    account = account_client(args, plan.cluster.region, "cost")
    if isinstance(account, int):
        raise _Failed(account)
    client, _ = account
    kinds = sorted({str(kind) for r in plan.resources if r.custom
                    for kind in [r.inputs.get("instanceType"), *(r.inputs.get("instanceTypes")
                                                                 or [])]
                    if isinstance(kind, str) and kind.startswith("ecs.")})
    try:
        with progress_line(f"reading {len(kinds)} instance types' prices in {client.region}"):
            live = read_live_prices(client, kinds, price_book().hours_per_month)
    except ApiError as error:
        print(f"gpu-infra cost: --live-prices: {error}", file=sys.stderr)
        raise _Failed(EXIT_BAD_INPUT) from None
    for what, why in live.missing.items():
        print(f"--live-prices: no live price for {what}: {why}", file=sys.stderr)
    return live


def _gpu_prices(estimate: Estimate) -> str:
    """Where the estimate's GPU prices come from, for people."""
    if estimate.assumptions["gpuPrices"] != CATALOG_PRICES:
        return str(estimate.assumptions["gpuPrices"])
    return (f"the catalog's dated prices ({CATALOG_PRICES}; each resource's note in "
            "--format json has the region, date and source); --live-prices reads this account's")


def run(args: argparse.Namespace) -> int:
    """Print the estimate or the difference (`--format`, to `--output`); exit 0, 1 (program
    failed) or 2 (bad input)."""
    unused = unused_account_options(args)
    if unused:
        for problem in unused:
            print(problem, file=sys.stderr)
        return EXIT_BAD_INPUT
    path = stack_path(args)
    try:
        plan = _plan(path, args)
        assumptions = Assumptions(spot_price_factor=args.spot_price_factor,
                                  live=_live_prices(args, plan) if args.live_prices else None)
        after = estimate_plan(plan, assumptions)
        project = CostProject(plan.stack_name, str(path), after, plan.cluster.name)
        if args.compare is None and args.compare_revision is None:
            return emit(args, _estimate_document(args.format, project))
        with tempfile.TemporaryDirectory() as scratch:
            label, base = _base(args, path, Path(scratch))
    except _Failed as failure:
        return failure.code
    before = (estimate_plan(base, assumptions) if base is not None
              else Estimate(after.currency, after.hours_per_month, [], after.assumptions))
    project = replace(project, past=before, past_cluster=base.cluster.name if base else "")
    if args.format == "json":
        return emit(args, _infracost(project))
    comparison = compare(before, after, project.past_cluster, plan.cluster.name)
    render = comparison.render_markdown if args.format == "markdown" \
        else comparison.render_text
    return emit(args, render(label, args.stack))


def _estimate_document(kind: str, project: CostProject) -> str:
    """One stack's estimate in the `--format` `kind`."""
    estimate = project.estimate
    if kind == "json":
        return _infracost(project)
    if kind == "markdown":
        return f"{render_markdown(estimate)}\n\nGPU prices: {_gpu_prices(estimate)}"
    return f"{render_text(estimate)}\n\n    GPU prices: {_gpu_prices(estimate)}"


def _infracost(project: CostProject) -> str:
    return json.dumps(infracost_document([project], "gpu-infra cost"), indent=2)
