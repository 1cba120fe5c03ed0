"""`gpu-infra clone SOURCE NEW`: write stacks/Pulumi.NEW.yaml from an existing stack with a
new cluster name, a free VPC CIDR, no secrets of the source, and `--set` overrides."""

from __future__ import annotations

import argparse
import shlex
import sys
from ipaddress import IPv4Network

from gpu_infra.schema import ConfigError
from gpu_infra.schema.problems import shorten
from gpu_infra_tools.cli.arguments import InputDirectory, non_empty
from gpu_infra_tools.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    project_dir,
    report_problems,
    stack_path,
)
from gpu_infra_tools.clone import (
    DEFAULT_POOL,
    PathError,
    clone_stack,
    parse_override,
    stacks_lock,
    write_stack_file,
)

SET_HELP = ("override a value, e.g. fleet.nodes=16, network.zones=[cn-hangzhou-i] or "
            "alicloud:region=cn-beijing; PATH is under gpu-infra:cluster unless it starts with "
            "a namespaced key; VALUE is YAML; null removes the key (repeatable)")


EXAMPLES = (
    "gpu-infra clone training-dev training-b --set fleet.nodes=4",
)
"""Shown by `--help`; a test parses each."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command."""
    parser = subparsers.add_parser(
        "clone", help="write a new stack file from an existing one (new name, free CIDR)")
    parser.add_argument("stack", metavar="SOURCE", type=non_empty,
                        help="stack to clone: a name in the stacks directory or a file path")
    parser.add_argument("new", metavar="NEW", type=non_empty, help="name of the new stack")
    parser.add_argument("--stacks-dir", type=InputDirectory(), default=None,
                        help="directory of Pulumi.<stack>.yaml files (default: PROJECT/stacks)")
    parser.add_argument("--name", type=non_empty,
                        help="cluster name (default: derived from NEW)")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="PATH=VALUE", help=SET_HELP)
    parser.add_argument("--pool", type=_network, default=DEFAULT_POOL,
                        help=f"CIDR to allocate the VPC from (default: {DEFAULT_POOL})")
    parser.add_argument("--force", action="store_true",
                        help="overwrite the new stack file if it exists")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the new stack file instead of writing it")
    parser.set_defaults(run=run)


def _network(text: str) -> IPv4Network:
    try:
        return IPv4Network(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not an IPv4 CIDR: {error}") from None


def run(args: argparse.Namespace) -> int:
    """Clone; exit 0, or 2 with one line per problem and nothing written."""
    source = stack_path(args)
    stacks_dir = args.stacks_dir or project_dir() / "stacks"
    try:
        overrides = [parse_override(text) for text in args.overrides]
    except PathError as error:
        print(f"clone failed: {shorten(str(error))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        if args.dry_run:
            clone = clone_stack(source, args.new, stacks_dir, name=args.name,
                                overrides=overrides, pool=args.pool, force=args.force)
            print(clone.text, end="")
            return EXIT_OK
        with stacks_lock(stacks_dir):  # read the taken CIDRs and names, pick, write: one turn
            clone = clone_stack(source, args.new, stacks_dir, name=args.name,
                                overrides=overrides, pool=args.pool, force=args.force)
            write_stack_file(clone, source, force=args.force)
    except ConfigError as error:
        return report_problems(error, "clone failed")
    cluster = clone.cluster
    print(f"wrote {clone.path}: cluster '{cluster.name}', VPC {cluster.network.vpc_cidr}"
          f" (from {source}: '{clone.source_cluster.name}', "
          f"{clone.source_cluster.network.vpc_cidr})")
    for note in clone.notes:
        print(f"  note: {note}")
    print("next:")
    provider = (f" --secrets-provider {shlex.quote(clone.secrets_provider)}"
                if clone.secrets_provider else "")
    print(f"  pulumi stack init {shlex.quote(clone.name)}{provider}")
    for secret in clone.secrets:
        print(f"  {secret.set_secret_command(clone.name)}")
    print(f"  gpu-infra plan {shlex.quote(clone.name)}")
    return EXIT_OK
