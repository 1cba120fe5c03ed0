"""`gpu-infra job STACK`: print the stack's ready training job.

On an ECS training stack: a script to run on node 0 (`pulumi stack output node0_shell` opens
a shell there; on a fleet that is one spot worker, on that worker) that describes the job for
every node's job unit, which runs elastic torchrun in the job's image (`--image`, default the
pinned PyTorch image as the stack's registry mirrors it), with the c10d rendezvous on node 0,
checkpoints under the documented directory and each worker resumed from the newest complete
checkpoint. On an ACK training stack: the ConfigMap and PyTorchJob of its training
pool (`kubectl apply -f -`), with `--image` or the registry's first repository. The plan
exports the same text as `training_job`.
"""

from __future__ import annotations

import argparse
import shlex

from gpu_infra.layouts.jobs import JobRequest, job_problems, ready_job
from gpu_infra.schema import ConfigError, TrainingConfig
from gpu_infra.schema.loader import stack_name_of
from gpu_infra_tools.cli.common import (
    add_stack_argument,
    load_stack_arguments,
    report_problems,
    stack_path,
)
from gpu_infra_tools.cli.output import add_output_arguments, emit

EXAMPLES = (
    "gpu-infra job training-dev > job.sh",
    "gpu-infra job training-prod --image registry-vpc.cn-beijing.aliyuncs.com/team/train:1",
    "gpu-infra job training-prod --command '/mnt/shared/train.py --epochs 3'",
    "gpu-infra job training-prod --max-restarts 5",
    "gpu-infra job training-ack --image registry-vpc.cn-beijing.aliyuncs.com/team/train:1",
)
"""Shown by `--help`; a test parses each."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command."""
    parser = subparsers.add_parser("job", help="print the stack's ready training job")
    add_stack_argument(parser)
    parser.add_argument("--image", default=None,
                        help="container image of the job (default: ECS the pinned PyTorch "
                             "image, ACK the registry's first repository)")
    parser.add_argument("--command", dest="job_command", default=None, metavar="COMMAND",
                        help="training script and its arguments, one shell-quoted string "
                             "(default: /mnt/shared/train.py)")
    parser.add_argument("--max-restarts", type=int, default=None,
                        help="worker-group restarts before the job fails (default 3)")
    add_output_arguments(parser, ("text",), "the job")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the job and exit 0, or exit 2 with one line per problem."""
    path = stack_path(args)
    try:
        _, cluster = load_stack_arguments(args, path)
    except ConfigError as error:
        return report_problems(error)
    problems: list[str] = []
    script: list[str] | None = None
    if args.job_command is not None:
        try:
            script = shlex.split(args.job_command)
        except ValueError as error:
            problems.append(f"--command: cannot be split into words ({error}); quote it as "
                            "a shell would")
    request = JobRequest(image=args.image, script=script, max_restarts=args.max_restarts)
    if not isinstance(cluster, TrainingConfig):
        problems.append(f"STACK: {path.name} has layout {cluster.layout}; jobs are for "
                        "training stacks")
    else:
        problems += job_problems(cluster, request, cluster.platform)
    if problems or not isinstance(cluster, TrainingConfig):
        return report_problems(ConfigError(str(path), problems), what="cannot make the job")
    return emit(args, ready_job(cluster, stack_name_of(path), request, cluster.platform).text)
