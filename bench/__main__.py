"""`make bench`: offline plan time of every shipped stack and of generated training stacks,
the mock-engine floor, peak memory of the largest plan, and the longest creation chain.

Shipped stacks are the stack files git tracks in stacks/ (a user's own stacks there are left
out). Results go to OUT/latest.md and latest.json (`--out`, default .bench/, untracked;
`make bench BENCH_OUT=bench/results` updates the recorded ones). Timings are medians of RUNS
runs.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from gpu_infra.schema import load_cluster_config
from gpu_infra_tools.plan.engine import run_plan, run_under_mocks

from . import process
from .bare import bare_resource
from .changes import measure_changes, report_lines
from .graph import longest_chain

ROOT = Path(__file__).resolve().parent.parent
STACKS = ROOT / "stacks"
DEFAULT_OUT = ROOT / ".bench"
RUNS = 5
NODE_COUNTS = (8, 64, 512, 1024)
TEMPLATE = "training-prod"
"""Generated stacks are this shipped stack with `fleet.nodes` set (training-dev if absent)."""
ACK_TEMPLATE = "training-ack"
"""The ACK equivalent: the same node counts as GPU node pools (one per 20 nodes)."""


def median_seconds(action, runs: int = RUNS) -> float:
    """Median wall time of `action()` over `runs` runs."""
    times = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def floor_seconds(stack_path: Path, type_tokens: list[str]) -> float:
    """The engine floor: `type_tokens` registered bare and flat (no components, no inputs,
    none of our code) under the same mock engine."""
    _, stack = load_cluster_config(stack_path)

    def register() -> None:
        for index, type_token in enumerate(type_tokens):
            bare_resource(type_token, f"floor-{index}")

    return median_seconds(lambda: run_under_mocks(stack, "floor", register))


def measure(stack_path: Path) -> dict:
    """Plan time, floor, resource count and longest chain of one stack."""
    plan = run_plan(stack_path)
    types = [r.type for r in plan.resources if r.custom]
    custom = len(types)
    seconds = median_seconds(lambda: run_plan(stack_path))
    floor = floor_seconds(stack_path, types)
    vpc_floor = floor_seconds(stack_path, ["alicloud:vpc/network:Network"] * custom)
    chain = longest_chain(plan)
    return {"stack": plan.stack_name, "layout": plan.cluster.layout,
            "nodes": getattr(getattr(plan.cluster, "fleet", None), "nodes", None),
            "resources": custom,
            "components": len(plan.resources) - custom, "plan_s": round(seconds, 4),
            "floor_s": round(floor, 4), "ratio": round(seconds / floor, 2),
            "vpc_floor_s": round(vpc_floor, 4), "vpc_ratio": round(seconds / vpc_floor, 2),
            "chain_length": len(chain), "chain": chain}


def generated_stack(directory: Path, nodes: int, template_name: str = TEMPLATE) -> Path:
    """The template stack with `fleet.nodes = nodes`."""
    template = STACKS / f"Pulumi.{template_name}.yaml"
    if not template.exists():
        template = STACKS / "Pulumi.training-dev.yaml"
    document = yaml.safe_load(template.read_text())
    document["config"]["gpu-infra:cluster"]["fleet"]["nodes"] = nodes
    path = directory / f"Pulumi.bench-{template_name}-{nodes}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def peak_memory_mib(stack_path: Path) -> float:
    """Peak resident memory of a separate process that plans `stack_path`."""
    script = ("import resource, sys; from pathlib import Path; "
              "from gpu_infra_tools.plan.engine import run_plan; "
              f"run_plan(Path({str(stack_path)!r})); "
              "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    output = subprocess.run([sys.executable, "-c", script], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    return int(output.strip().splitlines()[-1]) / 1024


def linear_fit(points: list[tuple[int, float]]) -> tuple[float, float, float]:
    """Least-squares slope (s/node), intercept (s) and R² of plan time against nodes."""
    slope, intercept = statistics.linear_regression([p[0] for p in points],
                                                    [p[1] for p in points])
    mean = statistics.fmean(p[1] for p in points)
    total = sum((p[1] - mean) ** 2 for p in points)
    residual = sum((p[1] - (slope * p[0] + intercept)) ** 2 for p in points)
    return slope, intercept, 1 - residual / total if total else 1.0


def shipped_stacks() -> list[Path]:
    """The stack files git tracks in stacks/."""
    listed = subprocess.run(["git", "ls-files", "--", "Pulumi.*.yaml"], cwd=STACKS,
                            check=True, capture_output=True, text=True).stdout.split()
    return sorted(STACKS / name for name in listed)


def main(argv: list[str] | None = None) -> None:
    """Run every benchmark and write the results to --out."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="directory for latest.md and latest.json (default .bench/)")
    out = parser.parse_args(argv).out
    shipped = [measure(path) for path in shipped_stacks()]
    with tempfile.TemporaryDirectory() as scratch:
        generated = [measure(generated_stack(Path(scratch), n)) for n in NODE_COUNTS]
        ack = [measure(generated_stack(Path(scratch), n, ACK_TEMPLATE))
               for n in (NODE_COUNTS[1], NODE_COUNTS[-1])]
        largest = generated_stack(Path(scratch), NODE_COUNTS[-1])
        memory = peak_memory_mib(largest)
    template = STACKS / f"Pulumi.{TEMPLATE}.yaml"
    changes = [measure_changes(template, nodes, median_seconds)
               for nodes in (None, NODE_COUNTS[-1])]
    processes = process.measure_processes(
        template, [r.type for r in run_plan(template).resources if r.custom], RUNS, ROOT)
    slope, intercept, r2 = linear_fit([(g["nodes"], g["plan_s"]) for g in generated])
    results = {"date": time.strftime("%Y-%m-%d"), "python": platform.python_version(),
               "machine": f"{platform.machine()}, {platform.processor() or 'cpu'}",
               "runs": RUNS, "shipped": shipped, "generated": generated, "ack": ack,
               "linear_fit": {"seconds_per_node": round(slope, 5),
                              "intercept_s": round(intercept, 4), "r2": round(r2, 4)},
               "peak_memory_mib": round(memory, 1), "peak_memory_stack": largest.name,
               "changes": changes, "processes": processes}
    out.mkdir(parents=True, exist_ok=True)
    (out / "latest.json").write_text(json.dumps(results, indent=2) + "\n")
    (out / "latest.md").write_text(report(results))
    print(report(results))


def report(results: dict) -> str:
    """The results as a markdown table."""
    lines = [f"# Offline plan benchmarks ({results['date']}, Python {results['python']}, "
             f"median of {results['runs']} runs)", "",
             "Floor: the same number of bare resources (no inputs, no components) under the "
             "same mock engine, of the plan's own types, and (VPC floor) all vpc.Network.", "",
             "| stack | layout | nodes | resources | plan s | floor s | plan/floor | "
             "VPC floor s | plan/VPC floor | longest chain |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in results["shipped"] + results["generated"] + results.get("ack", []):
        lines.append(f"| {row['stack']} | {row['layout']} | {row['nodes'] or '-'} | "
                     f"{row['resources']} | {row['plan_s']:.3f} | {row['floor_s']:.3f} | "
                     f"{row['ratio']:.2f} | {row['vpc_floor_s']:.3f} | {row['vpc_ratio']:.2f} | "
                     f"{row['chain_length']} |")
    fit = results["linear_fit"]
    lines += ["", f"Linear fit of plan time against nodes: {fit['seconds_per_node'] * 1000:.2f} "
                  f"ms/node + {fit['intercept_s']:.3f} s, R² = {fit['r2']:.4f}.",
              f"Peak memory of the largest plan ({results['peak_memory_stack']}): "
              f"{results['peak_memory_mib']:.1f} MiB.", "", "Longest creation chains:"]
    for row in results["shipped"]:
        lines.append(f"- {row['stack']}: {row['chain_length']} levels: "
                     + " → ".join(t.split(":")[-1] for t in row["chain"]))
    lines += report_lines(results.get("changes", []))
    lines += process.report_lines(results.get("processes"))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
