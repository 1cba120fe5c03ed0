"""`gpu-infra publish-queue-metric`: report a fleet's queue length to CloudMonitor, the metric
its scaling alarms watch.

    gpu-infra publish-queue-metric --region cn-hangzhou --group-id 123456 \
        --fleet chat-serve-gpu --metric pending_requests --value 17
    gpu-infra publish-queue-metric ... --command 'redis-cli llen jobs' --interval 60

With `--value` it sends once (exit 1 if CloudMonitor refuses); with `--command` it runs the
command every `--interval` seconds and sends the number it prints, forever or `--count`
times; a failed round is reported on stderr and the next one runs (if the publisher stops,
the fleet's missing-data alarm tells the contacts). Credentials: ALIBABA_CLOUD_ACCESS_KEY_ID /
_SECRET (/ _SECURITY_TOKEN), else the RAM role of the instance it runs on.
"""

from __future__ import annotations

import argparse
import gc
import shlex
import subprocess
import sys
import time

from gpu_infra.blocks.functions.rpc import (
    Credentials,
    MetricPoint,
    PublishError,
    publish_queue_metric,
)
from gpu_infra_tools.cli.common import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK

COMMAND_TIMEOUT_SECONDS = 30
"""A queue-length command that takes longer is abandoned for that round."""


EXAMPLES = (
    "gpu-infra publish-queue-metric --region cn-hangzhou --group-id 123456 "
    "--fleet chat-serve-gpu --metric pending_requests --value 17",
)
"""Shown by `--help`; a test parses each."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command."""
    parser = subparsers.add_parser(
        "publish-queue-metric", help="report a fleet's queue length to CloudMonitor",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--region", required=True, help="region of the stack, e.g. cn-hangzhou")
    parser.add_argument("--group-id", required=True,
                        help="CloudMonitor group id (stack output metric_group_id)")
    parser.add_argument("--fleet", required=True,
                        help="fleet name (stack output fleet_name), the metric's dimension")
    parser.add_argument("--metric", required=True,
                        help="metric name (fleet.queue_scaling.metric_name)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--value", type=float, help="send this value once")
    source.add_argument("--command", help="shell command printing the queue length")
    parser.add_argument("--interval", type=float, default=60,
                        help="seconds between rounds with --command (default 60)")
    parser.add_argument("--count", type=int, default=None,
                        help="rounds with --command (default: run until stopped)")
    parser.add_argument("--endpoint", default=None,
                        help="CloudMonitor endpoint URL (default https://metrics.REGION."
                             "aliyuncs.com/)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Publish once or in a loop; see the module docstring for exit codes."""
    if not args.group_id.isdigit():
        print(f"--group-id: {args.group_id!r} is not a CloudMonitor group id (digits)",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.interval < 0 or (args.count is not None and args.count < 1):
        print("--interval must be 0 or more and --count 1 or more", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        credentials = Credentials.resolve()
    except PublishError as error:
        print(f"publish-queue-metric: {error}", file=sys.stderr)
        return EXIT_FAILED
    if args.value is not None:
        return EXIT_OK if _send(args, args.value, credentials) else EXIT_FAILED
    gc.enable()  # a loop that may run for days; the console script paused the collector
    rounds = 0
    while args.count is None or rounds < args.count:
        if rounds:
            time.sleep(args.interval)
        rounds += 1
        value = _measure(args.command)
        if value is not None:
            _send(args, value, credentials)
    return EXIT_OK


def _measure(command: str) -> float | None:
    try:
        done = subprocess.run(shlex.split(command), capture_output=True, text=True,
                              timeout=COMMAND_TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        print(f"publish-queue-metric: {command!r} failed: {error}", file=sys.stderr)
        return None
    try:
        return float(done.stdout.strip())
    except ValueError:
        print(f"publish-queue-metric: {command!r} printed {done.stdout.strip()[:80]!r}, not a "
              f"number (exit {done.returncode})", file=sys.stderr)
        return None


def _send(args: argparse.Namespace, value: float, credentials: Credentials) -> bool:
    point = MetricPoint(group_id=args.group_id, metric_name=args.metric, value=value,
                        fleet=args.fleet)
    try:
        request_id = publish_queue_metric(point, region=args.region, credentials=credentials,
                                          endpoint=args.endpoint)
    except PublishError as error:
        print(f"publish-queue-metric: {error}", file=sys.stderr)
        return False
    print(f"{args.metric}={value:g} fleet={args.fleet} group={args.group_id} "
          f"request={request_id}")
    return True
