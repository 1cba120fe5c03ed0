"""Maintainers: refresh the dated GPU prices of the catalog (gpu_catalog.yaml, the price book
of GPU instances) from ECS DescribePrice's list prices (OriginalPrice, pay-as-you-go) in one
region, with the credentials Alibaba's tools find.

    python -m gpu_infra_tools.cli.refresh_prices --region cn-beijing [--type ecs.gn7i-c8g1.2xlarge]
        [--catalog PATH] [--endpoint URL] [--dry-run]

Each type the region prices gets `price: {cny_per_hour, region, date: today, source:
"DescribePrice (list)"}` in place (comments and layout kept); a type the region does not
sell keeps its dated price and is listed. The file is rewritten whole or not at all, and
only after the rewritten text reads back with exactly the new prices. Exit 0 done, 2 bad
input, no credentials or an account that refuses, 1 nothing was priced.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping, Sequence

import yaml

from gpu_infra import catalog
from gpu_infra.catalog import CatalogPrice
from gpu_infra.schema.document import MAX_DOCUMENT_BYTES
from gpu_infra.schema.problems import shorten
from gpu_infra_facts.regions import REGIONS
from gpu_infra_tools.alibaba.client import ApiError
from gpu_infra_tools.alibaba.prices import read_live_prices
from gpu_infra_tools.cli.account import account_client, add_account_arguments
from gpu_infra_tools.cli.arguments import InputFile
from gpu_infra_tools.cli.common import with_standard_streams
from gpu_infra_tools.cost.prices import price_book
from gpu_infra_tools.files import OutputError, check_writable_target, write_text_atomically

PRICE_FIELD = re.compile(r"price:\s*\{[^{}]*\}")


class RewriteError(Exception):
    """The catalog text is not as expected (a type's entry is missing or malformed)."""


def _flow_entry(text: str, instance_type: str) -> tuple[int, int]:
    """(start, end) of the `{type: <instance_type>, ...}` flow mapping, braces included."""
    match = re.search(r"\{type:\s*" + re.escape(instance_type) + r"\s*,", text)
    if match is None:
        raise RewriteError(f"{instance_type}: no `{{type: {instance_type}, ...}}` entry")
    depth = 0
    for index in range(match.start(), len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return match.start(), index + 1
    raise RewriteError(f"{instance_type}: its entry never closes")


def price_text(price: CatalogPrice) -> str:
    """The flow mapping a size's price is written as."""
    return (f"price: {{cny_per_hour: {price.cny_per_hour:g}, region: {price.region}, "
            f'date: "{price.date}", source: "{price.source}"}}')


def rewrite_prices(text: str, prices: Mapping[str, CatalogPrice]) -> str:
    """`text` (gpu_catalog.yaml) with each type's price replaced or added."""
    for instance_type, price in prices.items():
        start, end = _flow_entry(text, instance_type)
        entry = text[start:end]
        found = PRICE_FIELD.search(entry)
        if found:
            new = entry[:found.start()] + price_text(price) + entry[found.end():]
        else:
            indent = " " * (start - text.rfind("\n", 0, start))
            new = f"{entry[:-1].rstrip()},\n{indent}{price_text(price)}}}"
        text = text[:start] + new + text[end:]
    return text


def read_back(text: str) -> dict[str, dict[str, object]]:
    """Type -> its `price` mapping, as the catalog loader reads the text."""
    document = yaml.safe_load(text)
    try:
        return {size["type"]: size.get("price") or {}
                for family in document["families"].values() for size in family["sizes"]}
    except (KeyError, TypeError, AttributeError):
        raise RewriteError("not a GPU catalog (families: <family>: sizes: [{type: ...}])"
                           ) from None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point (module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m gpu_infra_tools.cli.refresh_prices",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--region", required=True, help="the region whose prices to read")
    parser.add_argument("--type", action="append", dest="types", metavar="TYPE",
                        help="only this instance type (repeatable; default every catalog type)")
    parser.add_argument("--catalog", type=InputFile(MAX_DOCUMENT_BYTES),
                        default=catalog.CATALOG_FILE,
                        help="the catalog file to rewrite (default the package's)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the prices read, write nothing")
    add_account_arguments(parser)
    args = parser.parse_args(argv)
    try:  # everything the rewrite needs, before any credential or request
        original = args.catalog.read_text(encoding="utf-8")
        known = set(read_back(original))
        if not args.dry_run:
            check_writable_target(args.catalog)
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RewriteError, OutputError) as error:
        mark = getattr(error, "problem_mark", None)
        why = (f"malformed YAML at line {mark.line + 1}: {getattr(error, 'problem', '')}"
               if mark is not None else str(error).splitlines()[0])
        print(f"--catalog: {args.catalog}: {shorten(why)}", file=sys.stderr)
        return 2
    problems = [f"--type: not in the catalog: {', '.join(unknown)}"
                for unknown in [[t for t in args.types or [] if t not in known]] if unknown]
    if args.region not in REGIONS:
        problems.append(f"--region: unknown region {shorten(args.region, 40)!r}")
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        return 2
    account = account_client(args, args.region, "refresh")
    if isinstance(account, int):
        return account
    client, _ = account
    try:
        live = read_live_prices(client, args.types or sorted(known),
                                price_book().hours_per_month, kind="list",
                                billings=("on_demand",))
    except ApiError as error:
        print(f"refresh: {error}", file=sys.stderr)
        return 2
    prices = dict(live.prices.get("on_demand", {}))
    for what, why in live.missing.items():
        print(f"not priced in {args.region}, kept as it was: {what}: {why}", file=sys.stderr)
    for instance_type, price in sorted(prices.items()):
        print(f"{instance_type}: {price.cny_per_hour:g} CNY/h")
    if not prices:
        return 1
    if args.dry_run:
        return 0
    try:
        text = rewrite_prices(original, prices)
        written = read_back(text)
        wrong = [t for t, p in prices.items()
                 if written.get(t, {}).get("cny_per_hour") != p.cny_per_hour]
        if wrong:
            raise RewriteError(f"the rewritten file reads back other prices for {wrong}")
        write_text_atomically(args.catalog, text)
    except (OSError, RewriteError, OutputError, yaml.YAMLError) as error:
        print(f"refresh: {args.catalog}: {error}", file=sys.stderr)
        return 2
    print(f"{len(prices)} prices written to {args.catalog} ({args.region}, "
          f"{next(iter(prices.values())).date})")
    return 0


if __name__ == "__main__":
    sys.exit(with_standard_streams(main))
