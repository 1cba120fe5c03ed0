"""`gpu-infra catalog`: the GPU instance catalog as a table, or recommendations for a
workload with `--recommend`; `--format text|json|markdown`, `--output FILE`."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import Any

from gpu_infra import catalog
from gpu_infra.catalog.recommend import Recommendation, recommend
from gpu_infra.schema.registry import LAYOUT_MODELS, LAYOUT_NAMES
from gpu_infra_facts.regions import REGIONS
from gpu_infra_tools.alibaba.client import ApiError
from gpu_infra_tools.alibaba.prices import read_live_prices
from gpu_infra_tools.cli.account import (
    account_client,
    add_account_arguments,
    unused_account_options,
)
from gpu_infra_tools.cli.arguments import non_empty
from gpu_infra_tools.cli.common import EXIT_BAD_INPUT
from gpu_infra_tools.cli.output import add_output_arguments, emit

COLUMNS = ("TYPE", "GPU", "GPUS", "GPU GiB", "vCPU", "MEM GiB", "NVLINK", "ERDMA", "USES",
           "BOUGHT", "DRIVERS", "CNY/h (region)")
BOUGHT = {"open": "open", "sales_only": "sales only", "by_ticket": "by ticket",
          "preview": "preview"}
"""How each availability reads in the table."""
FORMATS = ("text", "json", "markdown")
"""`--format`: text (an aligned table, or ranked lines), json (the catalog's records, each
with the price shown; or the ranked recommendations), markdown (a table, or a list)."""


EXAMPLES = (
    "gpu-infra catalog --use training",
    "gpu-infra catalog --gpu-model L20 --format json --output l20.json",
    "gpu-infra catalog --recommend --layout training --gpu-memory 80 --gpus 64 --multi-node "
    "--region cn-beijing",
)
"""Shown by `--help`; a test parses each."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command."""
    parser = subparsers.add_parser(
        "catalog", help="list GPU instance types, or recommend some for a workload")
    parser.add_argument("--use", choices=catalog.USES, help="only types for this use")
    parser.add_argument("--gpu-model", type=non_empty,
                        help="only GPU models with these words, e.g. A10 or 'A100 80GB' (exit "
                             "2 when no model in the catalog has them)")
    parser.add_argument("--recommend", action="store_true",
                        help="rank instance types for the workload described below")
    parser.add_argument("--layout", choices=LAYOUT_NAMES, default="training",
                        help="workload layout (default training)")
    parser.add_argument("--gpu-memory", type=float, default=None,
                        help="GPU memory needed per GPU, GiB (minimum with the table)")
    parser.add_argument("--gpus", type=int, default=1, help="GPUs in total (default 1)")
    parser.add_argument("--multi-node", action="store_true",
                        help="the workload may span several nodes")
    parser.add_argument("--region", default="cn-hangzhou",
                        help="region of the stack (default cn-hangzhou)")
    parser.add_argument("--top", type=int, default=10,
                        help="recommendations to show (default 10)")
    parser.add_argument("--live-prices", action="store_true",
                        help="show this account's pay-as-you-go prices in --region (ECS "
                             "DescribePrice; needs credentials, see `gpu-infra preflight "
                             "--help`); default: the catalog's dated prices")
    add_output_arguments(parser, FORMATS, "the table or the recommendations")
    add_account_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the table or the recommendations; exit 2 on bad input."""
    problems = unused_account_options(args)
    if args.region not in REGIONS:
        problems.append(f"--region: unknown region {args.region!r}")
    if args.gpus < 1:
        problems.append(f"--gpus: {args.gpus}; at least 1")
    if args.gpu_memory is not None and not (math.isfinite(args.gpu_memory)
                                            and args.gpu_memory > 0):
        problems.append(f"--gpu-memory: {args.gpu_memory:g}; must be a finite number above 0")
    if args.recommend and args.gpu_memory is None:
        problems.append("--gpu-memory: required with --recommend")
    if args.top < 1:
        problems.append(f"--top: {args.top}; at least 1")
    models = sorted({entry.gpu_model for entry in catalog.entries()})
    if args.gpu_model is not None and not catalog.filter(gpu_model=args.gpu_model):
        problems.append(f"--gpu-model: no GPU model in the catalog has the words "
                        f"{args.gpu_model!r}; models: {', '.join(models)} (a type the catalog "
                        "lacks can be declared in a stack under instance_types)")
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.recommend:
        return _recommendations(args)
    entries = catalog.filter(use=args.use, gpu_model=args.gpu_model,
                             min_gpu_memory_gib=args.gpu_memory)
    live: dict[str, catalog.CatalogPrice] = {}
    if args.live_prices:
        read = _live_prices(args, [entry.type for entry in entries])
        if isinstance(read, int):
            return read
        live = read
    if args.format == "json":
        return emit(args, json.dumps([_record(entry, live.get(entry.type))
                                      for entry in entries], indent=2))
    rows = [_row(entry, live.get(entry.type)) for entry in entries]
    table = _markdown_table(rows) if args.format == "markdown" else _text_table(rows)
    return emit(args, f"{table}\n\n{_notes(args.region, live)}")


def _notes(region: str, live: dict[str, catalog.CatalogPrice]) -> str:
    """What the table's prices and marks mean."""
    if live:
        day = next(iter(live.values())).date
        return (f"Prices marked live are this account's pay-as-you-go CNY/h in {region} "
                f"(DescribePrice, {day}); the others indicative on-demand CNY/h from a dated "
                "source. * marks UNCONFIRMED data.")
    return ("Prices are indicative on-demand CNY/h from dated sources (2024-10-09, "
            "2024-12-31); 'unknown' means no price was found. * marks UNCONFIRMED data. "
            "BOUGHT: sales only (through Alibaba Cloud sales, in specific regions), by "
            "ticket, preview (invitational, by ticket); (old): Alibaba no longer recommends "
            "the family. DRIVERS: the driver branches Alibaba documents for the family "
            "(ECI's list; '-': none documented). Regions: unknown for every type: "
            f"{catalog.regions_unknown_because()}.")


def _live_prices(args: argparse.Namespace,
                 types: list[str]) -> dict[str, catalog.CatalogPrice] | int:
    """The account's pay-as-you-go prices of `types` in --region, or the exit code after
    one line on stderr; types without a price are listed on stderr."""
    account = account_client(args, args.region, "catalog")
    if isinstance(account, int):
        return account
    try:
        live = read_live_prices(account[0], types, billings=("on_demand",))
    except ApiError as error:
        print(f"gpu-infra catalog: --live-prices: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for what, why in live.missing.items():
        print(f"--live-prices: no live price for {what}: {why}", file=sys.stderr)
    return dict(live.prices.get("on_demand", {}))


def _row(entry: catalog.InstanceType,
         live: catalog.CatalogPrice | None = None) -> tuple[str, ...]:
    def mark(field: str, text: str) -> str:
        return f"{text}*" if entry.is_unconfirmed(field) else text

    price = (f"{live.cny_per_hour:.2f} (live)" if live is not None
             else "unknown" if entry.price is None
             else f"{entry.price.cny_per_hour:.2f} ({entry.price.region})")
    return (entry.type, mark("gpu_model", entry.gpu_model), entry.gpu_count_label,
            f"{entry.gpu_memory_gib:g}", mark("vcpu", _or_unknown(entry.vcpu)),
            mark("memory_gib", _or_unknown(entry.memory_gib)), _yes(entry.nvlink),
            _yes(entry.erdma), ",".join(entry.uses),
            BOUGHT[entry.availability] + ("" if entry.recommended else " (old)"),
            ",".join(map(str, entry.driver_branches or ())) or "-", price)


def _recommendations(args: argparse.Namespace) -> int:
    ranked = recommend(LAYOUT_MODELS[args.layout].workload, args.gpu_memory, args.gpus,
                       args.multi_node, args.region)[:args.top]
    if not ranked:
        print(f"no instance type fits: {args.layout}, {args.gpu_memory:g} GiB per GPU, "
              f"{args.gpus} GPU(s){', multi-node' if args.multi_node else ''}",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.format == "json":
        return emit(args, json.dumps([
            {"rank": rank, "type": choice.entry.type, "nodes": choice.nodes,
             "penalty": choice.penalty, "hourly_cny": choice.hourly_cny,
             "reasons": choice.reasons} for rank, choice in enumerate(ranked, start=1)],
            indent=2))
    return emit(args, "\n".join(_ranked_lines(ranked, markdown=args.format == "markdown")))


def _ranked_lines(ranked: Sequence[Recommendation], *, markdown: bool) -> list[str]:
    """`1. <type> x <nodes> (fit)` and its reasons below, indented for text or markdown."""
    lines = []
    for rank, choice in enumerate(ranked, start=1):
        fit = "full fit" if choice.penalty == 0 else f"fit penalty {choice.penalty}"
        kind = f"`{choice.entry.type}`" if markdown else choice.entry.type
        lines.append(f"{rank}. {kind} x {choice.nodes} ({fit})")
        lines += [f"{'    ' if markdown else '     '}- {reason}" for reason in choice.reasons]
    return lines


def _record(entry: catalog.InstanceType, live: catalog.CatalogPrice | None) -> dict[str, Any]:
    """`entry` as the catalog holds it, with `live_price` (None unless --live-prices read
    one)."""
    record = entry.model_dump(mode="json")
    record["live_price"] = live.model_dump(mode="json") if live is not None else None
    return record


def _text_table(rows: list[tuple[str, ...]]) -> str:
    rows = [COLUMNS, *rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in
                               zip(row, widths, strict=True)).rstrip() for row in rows)


def _markdown_table(rows: list[tuple[str, ...]]) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"
    return "\n".join([line(COLUMNS), line(["---"] * len(COLUMNS)), *map(line, rows)])


def _or_unknown(value: float | None) -> str:
    return "unknown" if value is None else f"{value:g}"


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"
