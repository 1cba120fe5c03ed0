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
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable

from gpu_infra.blocks.functions.rpc import (
    Credentials,
    MetricPoint,
    PublishError,
    publish_queue_metric,
)
from gpu_infra.schema.compute import METRIC_NAME_PATTERN
from gpu_infra.schema.problems import shorten
from gpu_infra_facts.regions import REGIONS
from gpu_infra_tools.cli.arguments import endpoint_url, number_between
from gpu_infra_tools.cli.common import EXIT_FAILED, EXIT_OK

COMMAND_TIMEOUT_SECONDS = 30
"""A queue-length command that takes longer is abandoned for that round."""
MAX_INTERVAL_SECONDS = 86_400.0
"""The longest wait between rounds (a day: the fleet's missing-data alarm fires long before)."""
MAX_QUEUE_LENGTH = float(2**53)
"""The largest queue length sent: the largest integer a double holds exactly."""


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
    parser.add_argument("--region", required=True, type=_region,
                        help="region of the stack, e.g. cn-hangzhou")
    parser.add_argument("--group-id", required=True, type=_group_id,
                        help="CloudMonitor group id (stack output metric_group_id)")
    parser.add_argument("--fleet", required=True, type=_fleet,
                        help="fleet name (stack output fleet_name), the metric's dimension")
    parser.add_argument("--metric", required=True, type=_metric,
                        help="metric name (fleet.queue_scaling.metric_name)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--value", type=_queue_length,
                        help="send this value once (a finite number, 0 or more)")
    source.add_argument("--command", type=_command,
                        help="shell command printing the queue length")
    parser.add_argument("--interval", type=_interval, default=60.0,
                        help=f"seconds between rounds with --command, 0 to "
                             f"{MAX_INTERVAL_SECONDS} (default 60)")
    parser.add_argument("--count", type=_count, default=None,
                        help="rounds with --command, 1 or more (default: run until stopped)")
    parser.add_argument("--endpoint", type=endpoint_url(), default=None,
                        help="CloudMonitor endpoint URL: https, or http to a loopback address "
                             "(default https://metrics.REGION.aliyuncs.com/)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Publish once or in a loop (every argument was checked when parsed, before the
    credentials are looked up); exit 1 if a round failed, see the module docstring."""
    try:
        credentials = Credentials.resolve()
    except PublishError as error:
        print(f"publish-queue-metric: {error}", file=sys.stderr)
        return EXIT_FAILED
    if args.value is not None:
        return EXIT_OK if _send(args, args.value, credentials) else EXIT_FAILED
    gc.enable()  # a loop that may run for days; the console script paused the collector
    rounds = failed = 0
    while args.count is None or rounds < args.count:
        if rounds:
            time.sleep(args.interval)
        rounds += 1
        value = _measure(args.command)
        if value is None or not _send(args, value, credentials):
            failed += 1
    if failed:
        print(f"publish-queue-metric: {failed} of {rounds} round(s) failed", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def _measure(command: list[str]) -> float | None:
    """The queue length `command` prints, or None (reported) if it fails, prints anything
    but a finite number of 0 or more, or exits non-zero."""
    shown = shlex.join(command)
    try:
        done = subprocess.run(command, capture_output=True, text=True, errors="replace",
                              stdin=subprocess.DEVNULL, timeout=COMMAND_TIMEOUT_SECONDS,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        print(f"publish-queue-metric: {shorten(shown, 80)!r} failed: {error}", file=sys.stderr)
        return None
    printed = done.stdout.strip()
    if done.returncode != 0:
        print(f"publish-queue-metric: {shorten(shown, 80)!r} exited {done.returncode}",
              file=sys.stderr)
        return None
    try:
        return _queue_length(printed)
    except argparse.ArgumentTypeError as error:
        print(f"publish-queue-metric: {shorten(shown, 80)!r} printed {error}", file=sys.stderr)
        return None


def _send(args: argparse.Namespace, value: float, credentials: Credentials) -> bool:
    point = MetricPoint(group_id=args.group_id, metric_name=args.metric, value=value,
                        fleet=args.fleet)
    try:
        request_id = publish_queue_metric(point, region=args.region, credentials=credentials,
                                          endpoint=args.endpoint)
    except PublishError as error:
        print(f"publish-queue-metric: {shorten(str(error))}", file=sys.stderr)
        return False
    print(f"{args.metric}={value:g} fleet={args.fleet} group={args.group_id} "
          f"request={request_id}")
    return True


def _checked(pattern: str, allowed: str) -> Callable[[str], str]:
    """An argparse type: the text if it matches `pattern`, else an error saying `allowed`."""
    compiled = re.compile(pattern)

    def check(text: str) -> str:
        if not compiled.fullmatch(text):
            raise argparse.ArgumentTypeError(f"{shorten(text, 80)!r}: {allowed}")
        return text
    return check


_group_id = _checked(r"[0-9]{1,20}", "not a CloudMonitor group id (digits)")
_metric = _checked(METRIC_NAME_PATTERN.strip("^$"),
                   "not a metric name (a letter, then letters, digits, underscores; 64 at most)")
_fleet = _checked(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}",
                  "not a fleet name (letters, digits, '.', '_', '-'; 128 at most)")


def _region(text: str) -> str:
    if text not in REGIONS:
        raise argparse.ArgumentTypeError(f"{shorten(text, 80)!r}: unknown region; give the "
                                          "stack's alicloud:region, e.g. cn-hangzhou")
    return text


_queue_length = number_between(0, MAX_QUEUE_LENGTH)
_interval = number_between(0, MAX_INTERVAL_SECONDS)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shorten(text, 80)!r}, not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: must be 1 or more")
    return value


def _command(text: str) -> list[str]:
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"cannot be split into words ({error}); quote it as "
                                          "a shell would") from None
    if not words:
        raise argparse.ArgumentTypeError("empty; give the command that prints the queue "
                                          "length")
    return words
