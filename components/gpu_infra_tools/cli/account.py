"""The account options of the commands that read the user's Alibaba Cloud account
(preflight, `cost --live-prices`): `--endpoint` and `--metadata-endpoint`, and the client
built from the credentials Alibaba's tools find (gpu_infra_tools.alibaba.credentials)."""

from __future__ import annotations

import argparse
import os
import sys
import urllib.parse

from gpu_infra.blocks.functions.rpc import METADATA_URL
from gpu_infra_tools.alibaba.client import AlibabaClient, ClientError
from gpu_infra_tools.alibaba.credentials import CredentialsError, find_credentials
from gpu_infra_tools.cli.arguments import endpoint_url, is_loopback
from gpu_infra_tools.cli.common import EXIT_BAD_INPUT

ENDPOINT_VARIABLE = "GPU_INFRA_ALIBABA_ENDPOINT"
METADATA_VARIABLE = "GPU_INFRA_ECS_METADATA_ENDPOINT"


METADATA_HOST = urllib.parse.urlsplit(METADATA_URL).hostname
"""The metadata service's address: the one host besides loopback it is asked over http."""


def add_account_arguments(parser: argparse.ArgumentParser) -> None:
    """--endpoint (https, or http to a loopback address) and --metadata-endpoint (also http
    to the metadata service's address)."""
    parser.add_argument("--endpoint", metavar="URL", type=endpoint_url(),
                        help="one base URL for every Alibaba Cloud API (a proxy; default: "
                             "each product's public endpoint in the stack's region, or "
                             f"${ENDPOINT_VARIABLE})")
    parser.add_argument("--metadata-endpoint", metavar="URL",
                        type=endpoint_url(lambda host: is_loopback(host) or host == METADATA_HOST),
                        help="the ECS metadata service, asked only for the keys of a RAM role "
                             "that ALIBABA_CLOUD_ECS_METADATA or the CLI profile names "
                             f"(default {METADATA_URL}, or ${METADATA_VARIABLE})")


def unused_account_options(args: argparse.Namespace) -> list[str]:
    """One problem per account option given to a command that reads no account (without
    --live-prices): an option that would be silently ignored."""
    return [f"{option}: only used with --live-prices" for option, value in
            (("--endpoint", args.endpoint), ("--metadata-endpoint", args.metadata_endpoint))
            if value is not None and not args.live_prices]


def account_client(args: argparse.Namespace, region: str,
                   command: str) -> tuple[AlibabaClient, str] | int:
    """(client in `region`, where its credentials came from), or, after one line on stderr,
    the bad-input exit code (no credentials, a bad endpoint or region)."""
    try:
        metadata = args.metadata_endpoint or os.environ.get(METADATA_VARIABLE, METADATA_URL)
        credentials, source = find_credentials(metadata_url=metadata)
        client = AlibabaClient(credentials, region,
                               args.endpoint or os.environ.get(ENDPOINT_VARIABLE))
    except (CredentialsError, ClientError) as error:
        print(f"gpu-infra {command}: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return client, source
