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
import sys
from pathlib import Path

from gpu_infra_tools.cli.account import account_client, add_account_arguments
from gpu_infra_tools.cli.common import EXIT_BAD_INPUT, EXIT_OK, add_stack_argument, stack_path
from gpu_infra_tools.cli.planned import plan_or_exit_code
from gpu_infra_tools.cli.progress import progress_line
from gpu_infra_tools.files import OutputError, check_writable_target, write_text_atomically
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
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="text (default): one line per finding; json: a document")
    parser.add_argument("--output", type=Path, metavar="FILE",
                        help="write the report to FILE (whole or not at all) instead of stdout")
    parser.add_argument("--check", action="append", choices=list(CHECKS), metavar="NAME",
                        help=f"run only this check (repeatable): {', '.join(CHECKS)}")
    add_account_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print or write the report; exit 0, 1 or 2 (module docstring)."""
    if args.output is not None:
        try:
            check_writable_target(args.output)
        except OutputError as error:
            print(f"gpu-infra preflight: {error}", file=sys.stderr)
            return EXIT_BAD_INPUT
    path = stack_path(args)
    with progress_line(f"planning {path.name}"):
        plan = plan_or_exit_code(path)
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
    if args.output is None:
        sys.stdout.write(text)
    else:
        try:
            write_text_atomically(args.output, text)
        except OutputError as error:
            print(f"gpu-infra preflight: {error}", file=sys.stderr)
            return EXIT_BAD_INPUT
    return EXIT_BAD_INPUT if report.failed else EXIT_OK
