"""`gpu-infra plan STACK`: the offline plan (the real program under the mock engine)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpu_infra.schema import ConfigError
from gpu_infra.schema.document import MAX_DOCUMENT_BYTES
from gpu_infra_policies.config import MAX_CONFIG_BYTES, PolicyConfigError, load_policy_config
from gpu_infra_tools.cli.arguments import InputFile, OutputFile, is_stdout, non_empty
from gpu_infra_tools.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_OK,
    add_stack_argument,
    report_problems,
    stack_path,
)
from gpu_infra_tools.cli.output import DeprecatedAlias, add_output_arguments, emit
from gpu_infra_tools.cli.planned import plan_or_exit_code
from gpu_infra_tools.cli.progress import progress_line
from gpu_infra_tools.files import OutputError, write_text_atomically
from gpu_infra_tools.plan.diagram import render_mermaid
from gpu_infra_tools.review import Review, review
from gpu_infra_tools.review.acknowledgements import (
    acknowledgements_path,
    load_acknowledgements,
)
from gpu_infra_tools.review.base_plan import BaseError, load_base
from gpu_infra_tools.review.changes import ChangeReport, change_report
from gpu_infra_tools.review.render import render_markdown, render_text
from gpu_infra_tools.review.sarif import sarif_document

RENDERERS: dict[str, Callable[[Review, ChangeReport | None], str]] = {
    "text": render_text, "markdown": render_markdown,
    "mermaid": lambda result, _: render_mermaid(result.plan),
    "json": lambda result, changes: json.dumps(_record(result, changes), indent=2,
                                               default=str, allow_nan=False),
    "sarif": lambda result, changes: json.dumps(sarif_document(result, changes), indent=2)}
"""`--format`: text (a preview tree), markdown (the review), mermaid (a diagram), json (the
full plan record), sarif (findings, verdicts and guard rails for code scanning)."""


EXAMPLES = (
    "gpu-infra plan training-dev",
    "gpu-infra plan stacks/Pulumi.training-prod.yaml --format json --output plan.json",
    "gpu-infra plan training-dev --policy-config policies/policy-config.example.json",
    "gpu-infra plan training-prod --against main",
    "gpu-infra plan training-prod --against plan-of-main.json --format markdown",
    "gpu-infra plan training-prod --sarif plan.sarif",
)
"""Shown by `--help`; a test parses each."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command."""
    parser = subparsers.add_parser(
        "plan", help="offline plan: resources, validator findings (no cloud access needed)")
    add_stack_argument(parser)
    add_output_arguments(parser, tuple(RENDERERS), "the plan")
    parser.add_argument("--json", dest="json_file", type=OutputFile(), metavar="FILE",
                        action=DeprecatedAlias, replacement="--format json --output FILE",
                        help="also write the full plan record as JSON to FILE ('-' = stdout)")
    parser.add_argument("--sarif", dest="sarif_file", type=OutputFile(), metavar="FILE",
                        help="also write the findings, policy verdicts and guard rails as "
                             "SARIF 2.1.0 to FILE, beside the report `--format` prints (GitHub "
                             "code scanning; '-' = stdout)")
    parser.add_argument("--policy-config", type=InputFile(MAX_CONFIG_BYTES), metavar="FILE",
                        help="policy rule levels and thresholds, the JSON file given to "
                             "`pulumi preview --policy-pack-config` (default: rule defaults)")
    parser.add_argument("--against", metavar="BASE", type=non_empty,
                        help="change report against BASE: a `plan --json` file, or a git "
                             "revision (the same stack file planned by the program at that "
                             "revision); exit 1 on an unacknowledged dangerous change in prod")
    parser.add_argument("--acknowledgements", type=InputFile(MAX_DOCUMENT_BYTES),
                        metavar="FILE",
                        help="acknowledged dangerous changes (default: "
                             "STACKS_DIR/acknowledged/<stack>.yaml, if it exists)")
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
    if is_stdout(args.json_file) and is_stdout(args.sarif_file):
        print("--json - and --sarif -: only one of them can go to standard output",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.acknowledgements and not args.against:
        print("--acknowledgements: applies to a change report; give --against BASE too",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    path = stack_path(args)
    try:
        acknowledgements = load_acknowledgements(
            args.acknowledgements or acknowledgements_path(path),
            required=args.acknowledgements is not None) if args.against else None
    except ConfigError as error:
        return report_problems(error, "invalid acknowledgements")
    with progress_line(f"planning {args.stack}"):
        plan = plan_or_exit_code(path, args)
    if isinstance(plan, int):
        return plan
    changes = None
    try:
        base = load_base(args.against, path, Path.cwd()) if args.against else None
    except BaseError as error:
        print(f"invalid --against: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    result = review(plan, settings, base[0].get("resources") or [] if base else ())
    if base and acknowledgements is not None:
        changes = change_report(result, *base, acknowledgements)
    blocked = result.blocked or (changes is not None and changes.blocked)
    status = EXIT_FAILED if blocked else EXIT_OK
    extras = {"--sarif": (args.sarif_file, "sarif"), "--json": (args.json_file, "json")}
    for option, (target, kind) in extras.items():
        if is_stdout(target):
            args.format = kind  # the old `--json -` / `--sarif -`: the document on stdout
        elif target is not None:
            try:
                write_text_atomically(target, RENDERERS[kind](result, changes) + "\n")
            except OutputError as error:
                print(f"{option}: {error}", file=sys.stderr)
                return EXIT_BAD_INPUT
    return emit(args, RENDERERS[args.format](result, changes)) or status


def _record(result: Review, changes: ChangeReport | None) -> dict[str, Any]:
    """The `--json` record: the plan, its verdicts and, against a base, the changes."""
    data = result.to_json()
    if changes is not None:
        annotate(data, changes)
    return data


def annotate(record: dict[str, Any], changes: ChangeReport) -> None:
    """Add each resource's change/restart/because and the top-level `changes` record."""
    by_urn = changes.by_urn()
    for resource in record["resources"]:
        change = by_urn.get(resource["urn"])
        if change is not None:
            resource.update(change.to_json())
    record["changes"] = changes.to_json()
