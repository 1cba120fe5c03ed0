"""What a user waits for: `gpu-infra plan STACK` and `gpu-infra validate STACK` as processes
of their own, against the engine floor in a process of its own: a minimal program that
registers the plan's own resource types, bare (no inputs but the required ones, no
components), under the SDK's mock engine with the settings the plan engine registers with
(the cyclic collector paused, no stack captured per registration:
gpu_infra_tools.plan.engine), and imports nothing of gpu-infra. Medians of wall and CPU
(user + system) time over RUNS runs.

The console script also runs its whole command with the collector paused and freezes the
objects before the interpreter shuts down (gpu_infra_tools.console). That is a setting of
the process, not less work, so the report also gives the floor with the same setting (the
"tuned floor") and the ratio against it: what is left there is the work gpu-infra adds
(its imports, the schema's models, the judgement, the policy verdicts and the cost).
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FLOOR_PROGRAM = """
import gc, json, sys
if sys.argv[2:] == ["tuned"]:
    gc.disable()
from pulumi.runtime import mocks
from pulumi.runtime import resource as sdk_resource
from pulumi.runtime.proto import source_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await
from bench.bare import bare_resource

class Bare(mocks.Mocks):
    def new_resource(self, args):
        return f"{args.name}-id", dict(args.inputs)
    def call(self, args):
        return {}

def register():
    for index, token in enumerate(json.load(open(sys.argv[1]))):
        bare_resource(token, f"floor-{index}")

mocks.set_mocks(Bare(), project="gpu-infra", stack="floor", preview=False)
sdk_resource._get_stack_trace = source_pb2.StackTrace
gc.disable()
_sync_await(run_pulumi_func(register))
if sys.argv[2:] == ["tuned"]:
    gc.freeze()
"""
"""The floor; with a second argument `tuned`, in the console script's process settings."""


def process_seconds(commands: dict[str, list[str]], runs: int, cwd: Path,
                    ) -> dict[str, tuple[float, float]]:
    """Median wall and CPU seconds of each command (each must exit 0), run in turns (one of
    each per round) so that the machine's load weighs on all of them alike."""
    walls: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            walls[name].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[name].append(after.ru_utime - before.ru_utime
                              + after.ru_stime - before.ru_stime)
    return {name: (statistics.median(walls[name]), statistics.median(cpus[name]))
            for name in commands}


def measure_processes(stack_path: Path, type_tokens: list[str], runs: int,
                      cwd: Path) -> dict:
    """Process times of validate, plan and the floors for one stack, and plan/floor."""
    cli = str(Path(sys.executable).with_name("gpu-infra"))
    with tempfile.TemporaryDirectory() as scratch:
        types = Path(scratch) / "types.json"
        types.write_text(json.dumps(type_tokens))
        times = process_seconds({
            "floor": [sys.executable, "-c", FLOOR_PROGRAM, str(types)],
            "tuned": [sys.executable, "-c", FLOOR_PROGRAM, str(types), "tuned"],
            "plan": [cli, "plan", str(stack_path)],
            "validate": [cli, "validate", str(stack_path)]}, runs, cwd)
    floor, tuned, plan, validate = (times[name] for name in ("floor", "tuned", "plan",
                                                              "validate"))
    return {"stack": stack_path.name.removeprefix("Pulumi.").removesuffix(".yaml"),
            "resources": len(type_tokens),
            "validate_wall_s": round(validate[0], 3), "validate_cpu_s": round(validate[1], 3),
            "plan_wall_s": round(plan[0], 3), "plan_cpu_s": round(plan[1], 3),
            "floor_wall_s": round(floor[0], 3), "floor_cpu_s": round(floor[1], 3),
            "ratio_wall": round(plan[0] / floor[0], 2), "ratio_cpu": round(plan[1] / floor[1], 2),
            "tuned_floor_wall_s": round(tuned[0], 3), "tuned_floor_cpu_s": round(tuned[1], 3),
            "ratio_tuned_wall": round(plan[0] / tuned[0], 2),
            "ratio_tuned_cpu": round(plan[1] / tuned[1], 2)}


def report_lines(row: dict | None) -> list[str]:
    """The process table for latest.md."""
    if not row:
        return []
    return ["", "What a user waits for: each command a process of its own, against the engine "
            "floor as a process of its own (bare resources of the plan's types under the same "
            "mock engine, nothing of gpu-infra imported), and against the tuned floor (the "
            "same, with the console script's collector settings); median wall and CPU seconds "
            "(target plan/floor <= 1.3):", "",
            "| stack | resources | validate wall s | validate CPU s | plan wall s | plan CPU s "
            "| floor wall s | plan/floor wall | plan/floor CPU | tuned floor wall s "
            "| plan/tuned floor wall | plan/tuned floor CPU |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
            f"| {row['stack']} | {row['resources']} | {row['validate_wall_s']:.3f} | "
            f"{row['validate_cpu_s']:.3f} | {row['plan_wall_s']:.3f} | {row['plan_cpu_s']:.3f} "
            f"| {row['floor_wall_s']:.3f} | {row['ratio_wall']:.2f} | {row['ratio_cpu']:.2f} "
            f"| {row['tuned_floor_wall_s']:.3f} | {row['ratio_tuned_wall']:.2f} "
            f"| {row['ratio_tuned_cpu']:.2f} |"]
