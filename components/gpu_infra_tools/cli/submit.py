"""`gpu-infra submit STACK [--frames FIRST-LAST] --args 'ARG...'`: send render jobs to a render
farm's job queue, one message per frame, in the format the nodes' worker reads (docs: the
job message): the words of `--args` (one shell-quoted string, as `job --command` takes)
follow the worker's command, `{frame}` in them (and in `--env` values and `--prefix`)
becomes each frame's number.

The queue is the stack's (`job_queue`, from the offline plan) in the account of your
credentials (STS GetCallerIdentity), through MNS SendMessage. Credentials as Alibaba's tools
find them: ALIBABA_CLOUD_ACCESS_KEY_ID / _SECRET (/ _SECURITY_TOKEN), the aliyun CLI's
profile, or the ECS instance's RAM role. `--dry-run` prints the messages and sends nothing.

Exit codes: 0 every job sent (or printed); 1 a send failed (the line says how many were sent
before it); 2 the stack has no worker, or an argument is wrong.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import json
import re
import shlex
import sys
from functools import cache
from importlib import resources
from types import ModuleType

from gpu_infra.schema import RenderingConfig
from gpu_infra.schema.problems import shorten
from gpu_infra.schema.worker import ENV_NAME
from gpu_infra_facts.credentials import findings_in
from gpu_infra_tools.alibaba.client import ApiError, ClientError
from gpu_infra_tools.cli.account import account_client, add_account_arguments
from gpu_infra_tools.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    add_stack_argument,
    stack_path,
)
from gpu_infra_tools.cli.output import add_output_arguments, emit
from gpu_infra_tools.cli.planned import plan_or_exit_code

EXAMPLES = (
    "gpu-infra submit rendering-batch --frames 1-3 --dry-run",
    "gpu-infra submit rendering-batch --frames 1-240 "
    "--args '-b /mnt/shared/shot010.blend -o /output/shot010_#### -f {frame}'",
)
"""Shown by `--help`; a test parses each."""
FRAMES = re.compile(r"^(\d{1,7})(?:-(\d{1,7}))?(?::(\d{1,7}))?$")
MAX_JOBS = 100_000
"""The most jobs one call sends."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command."""
    parser = subparsers.add_parser(
        "submit", help="send render jobs to a render farm's job queue",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_stack_argument(parser)
    parser.add_argument("--frames", metavar="FIRST-LAST[:STEP]", default=None,
                        help="one job per frame (default: one job, no {frame})")
    parser.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                        help="an environment variable of the render (repeatable; no secrets)")
    parser.add_argument("--prefix", default="renders/", metavar="PREFIX",
                        help="key prefix of the frames in the outputs bucket (default renders/)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the messages, send nothing")
    add_account_arguments(parser)
    add_output_arguments(parser, ("text", "json"), "the jobs sent (json: their messages)")
    parser.add_argument("--args", dest="job_args", default="", metavar="'ARG...'",
                        help="the render's arguments after the worker's command, one "
                             "shell-quoted string ({frame}: the frame; default none)")
    parser.set_defaults(run=run)


@cache
def worker_module() -> ModuleType:
    """The nodes' worker (steps/gpu_infra_render.py): its job_of is the one judge of a job."""
    path = resources.files("gpu_infra.blocks.bootstrap") / "steps" / "gpu_infra_render.py"
    loader = importlib.machinery.SourceFileLoader("gpu_infra_render", str(path))
    spec = importlib.util.spec_from_loader("gpu_infra_render", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def frames(text: str | None) -> list[int | None] | str:
    """The frames `--frames` names ([None] without it), or why it is wrong."""
    if text is None:
        return [None]
    match = FRAMES.match(text)
    if match is None:
        return "--frames: not FIRST-LAST[:STEP] (e.g. 1-240, 1-240:10, 42)"
    first = int(match[1])
    last, step = int(match[2] or first), int(match[3] or 1)
    if last < first or step < 1:
        return "--frames: LAST must not be below FIRST, STEP at least 1"
    if (last - first) // step + 1 > MAX_JOBS:
        return f"--frames: more than {MAX_JOBS} jobs; submit them in parts"
    return list(range(first, last + 1, step))


def environment(pairs: list[str]) -> dict[str, str] | list[str]:
    """The `--env` pairs, or one problem line each."""
    found: dict[str, str] = {}
    problems = []
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not ENV_NAME.match(name):
            problems.append(f"--env {shorten(name, 40)!r}: not NAME=VALUE with a variable "
                            "name (letters, digits, _)")
        elif findings_in(pair):
            problems.append(f"--env {name}: holds a secret in clear (a message reaches the "
                            "queue and the node's log); read it in the render with the node's "
                            "RAM role instead")
        else:
            found[name] = value
    return problems or found


def messages(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The message bodies to send, and the problem lines (then no bodies)."""
    wanted, env = frames(args.frames), environment(args.env)
    try:
        words = shlex.split(args.job_args)
    except ValueError as error:
        return [], [f"--args: cannot be split into words ({error}); quote it as a shell "
                    "would"]
    if isinstance(wanted, str) or isinstance(env, list):
        return [], ([wanted] if isinstance(wanted, str) else []) + (
            env if isinstance(env, list) else [])
    bodies = []
    for frame in wanted:
        def fill(text: str, frame: int | None = frame) -> str:
            return text if frame is None else text.replace("{frame}", str(frame))
        body = json.dumps({"args": [fill(word) for word in words],
                           "env": {name: fill(value) for name, value in env.items()},
                           "output": fill(args.prefix)}, separators=(",", ":"))
        try:
            worker_module().job_of(body)
        except ValueError as error:
            return [], [f"the job is not one the worker takes: {error}"]
        bodies.append(body)
    return bodies, []


def run(args: argparse.Namespace) -> int:
    """Send (or print) the jobs; exit 0, 1 or 2 (module docstring)."""
    bodies, problems = messages(args)
    for line in problems:
        print(f"gpu-infra submit: {line}", file=sys.stderr)
    if problems:
        return EXIT_BAD_INPUT
    path = stack_path(args)
    plan = plan_or_exit_code(path, args)
    if isinstance(plan, int):
        return plan
    cluster, queue = plan.cluster, plan.outputs.get("job_queue")
    if not isinstance(cluster, RenderingConfig) or cluster.worker is None or queue is None:
        print(f"gpu-infra submit: {path.name} runs no render worker (a rendering stack with "
              "`worker` and the stack's job queue takes jobs)", file=sys.stderr)
        return EXIT_BAD_INPUT
    sent = bodies
    if not args.dry_run:
        account = account_client(args, cluster.region, "submit")
        if isinstance(account, int):
            return account
        client = account[0]
        try:
            account_id = client.account_id()
            sent = []
            for body in bodies:
                client.send_message(account_id, str(queue), body)
                sent.append(body)
        except (ApiError, ClientError) as error:
            print(f"gpu-infra submit: {shorten(str(error))} (sent {len(sent)} of "
                  f"{len(bodies)} job(s) to {queue})", file=sys.stderr)
            return EXIT_FAILED
    if args.format == "json":
        return emit(args, json.dumps({"queue": queue, "sent": not args.dry_run,
                                      "messages": [json.loads(b) for b in sent]}, indent=2))
    verb = "would send" if args.dry_run else "sent"
    return emit(args, "\n".join([*sent, f"{verb} {len(sent)} job(s) to {queue}"]))


__all__ = ["EXAMPLES", "add_parser", "run"]
