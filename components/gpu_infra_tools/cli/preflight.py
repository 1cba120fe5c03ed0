"""`gpu-infra preflight STACK`: read-only checks of the stack against your Alibaba Cloud
account before `pulumi up`: instance stock per zone, vCPU quotas, spot prices and
interruptions, the ACK version and add-ons, images, KMS keys, bucket names, alert contacts,
and a DryRun of the instances. One line per finding with the stack field it concerns.

Credentials as Alibaba's tools find them: ALIBABA_CLOUD_ACCESS_KEY_ID / _SECRET (or the
provider's ALICLOUD_ACCESS_KEY / ALICLOUD_SECRET_KEY), the aliyun CLI's profile
(~/.aliyun/config.json, ALIBABA_CLOUD_PROFILE), or the ECS instance's RAM role when
ALIBABA_CLOUD_ECS_METADATA names it. They are never written or shown.

Exit codes: 0 nothing would fail (warnings say what might); 2 `pulumi up` would fail (an
ERROR), the stack is invalid, no credentials, or the output cannot be written; 1 the
program failed.
"""

from __future__ import annotations

import argparse
import json

from gpu_infra_tools.cli.account import account_client, add_account_arguments
from gpu_infra_tools.cli.common import EXIT_BAD_INPUT, EXIT_OK, add_stack_argument, stack_path
from gpu_infra_tools.cli.output import add_output_arguments, emit
from gpu_infra_tools.cli.planned import plan_or_exit_code
from gpu_infra_tools.cli.progress import progress_line
from gpu_infra_tools.preflight import CHECKS, run_preflight

EXAMPLES = (
    "gpu-infra preflight training-prod",
    "gpu-infra preflight inference-prod --format json --output preflight.json",
    "gpu-infra preflight training-ack --check stock --check quota",
)
"""Shown by `--help`; a test parses each."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command."""
    parser = subparsers.add_parser(
        "preflight", help="read-only checks of a stack against your account before pulumi up")
    add_stack_argument(parser)
    add_output_arguments(parser, ("text", "json"), "the report (json: a document)")
    parser.add_argument("--check", action="append", choices=list(CHECKS), metavar="NAME",
                        help=f"run only this check (repeatable): {', '.join(CHECKS)}")
    add_account_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print or write the report; exit 0, 1 or 2 (module docstring)."""
    path = stack_path(args)
    with progress_line(f"planning {path.name}"):
        plan = plan_or_exit_code(path, args)
    if isinstance(plan, int):
        return plan
    account = account_client(args, plan.cluster.region, "preflight")
    if isinstance(account, int):
        return account
    client, source = account
    with progress_line(f"checking {plan.stack_name} against the account"):
        report = run_preflight(plan, client, source, tuple(args.check or ()))
    text = (json.dumps(report.to_json(), indent=2) + "\n" if args.format == "json"
            else report.render_text())
    written = emit(args, text)
    if written:
        return written
    return EXIT_BAD_INPUT if report.failed else EXIT_OK
