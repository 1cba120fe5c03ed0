"""The change report's cost: `plan STACK --against BASE.json` next to one plain `plan STACK`
(both with the review: cost and policy verdicts), for training-prod and a 1024-node training
stack. The edit turns eRDMA off (the instances' network_interface_traffic_mode is ForceNew), so
every node is replaced and its role and disk attachments with it: the diff's worst case (a
disk edit no longer replaces nodes: the disks are separate). Target: at most 1.2 x the plain
plan."""

from __future__ import annotations

import gc
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from gpu_infra_tools.plan.engine import run_plan
from gpu_infra_tools.review import review
from gpu_infra_tools.review.changes import change_report

TARGET_RATIO = 1.2
PAIRED_RUNS = 7
"""Alternating runs of the plain plan and the change report (medians compared)."""


def _stack(directory: Path, template: Path, nodes: int | None, edited: bool) -> Path:
    document = yaml.safe_load(template.read_text())
    cluster = document["config"]["gpu-infra:cluster"]
    if nodes is not None:
        cluster["fleet"]["nodes"] = nodes
    if edited:
        cluster["fleet"]["erdma"] = "off"
    path = directory / ("edited" if edited else "base") / template.name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def measure_changes(template: Path, nodes: int | None, median_seconds) -> dict:
    """Plain plan vs change report of `template` (with `nodes`), seconds and ratio."""
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        base_json = directory / "base.json"
        base_json.write_text(json.dumps(
            review(run_plan(_stack(directory, template, nodes, False))).to_json()))
        edited = _stack(directory, template, nodes, True)

        def with_report() -> None:
            planned = review(run_plan(edited))
            change_report(planned, json.loads(base_json.read_text()), str(base_json))

        plain, against = _paired_medians(lambda: review(run_plan(edited)), with_report)
        planned = review(run_plan(edited))
        report = change_report(planned, json.loads(base_json.read_text()), "base")
        alone = median_seconds(lambda: change_report(
            planned, json.loads(base_json.read_text()), "base"))
    return {"stack": planned.plan.stack_name, "nodes": planned.plan.cluster.fleet.nodes,
            "resources": sum(1 for r in planned.plan.resources if r.custom),
            "replaced": report.counts()["replace"], "plan_s": round(plain, 4),
            "against_s": round(against, 4), "ratio": round(against / plain, 3),
            "report_only_s": round(alone, 4)}


def _paired_medians(first: Callable[[], object], second: Callable[[], object],
                    runs: int = PAIRED_RUNS) -> tuple[float, float]:
    """Median wall times of `first()` and `second()`, run alternately so that a change in the
    machine's load during the benchmark weighs on both alike."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(runs):
        for action, samples in ((first, times[0]), (second, times[1])):
            gc.collect()
            start = time.perf_counter()
            action()
            samples.append(time.perf_counter() - start)
    return statistics.median(times[0]), statistics.median(times[1])


def report_lines(rows: list[dict]) -> list[str]:
    """The results as markdown."""
    lines = ["", f"Change report (`plan --against BASE.json`, every node replaced) against one "
                 f"plain plan of the same stack, both reviewed (target <= {TARGET_RATIO}x):", "",
             "| stack | nodes | resources | replaced | plan s | --against s | ratio | "
             "report alone s |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [f"| {r['stack']} | {r['nodes']} | {r['resources']} | {r['replaced']} | "
              f"{r['plan_s']:.3f} | {r['against_s']:.3f} | {r['ratio']:.3f} | "
              f"{r['report_only_s']:.3f} |" for r in rows]
    lines.append("(report alone: loading the base JSON, the diff, the base's cost estimate "
                 "and the impact, on an existing plan)")
    return lines
