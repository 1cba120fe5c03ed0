"""The contributor's loop: wall and CPU time of `make test-fast` in this checkout and of
`make test` on a fresh clone of its HEAD (set-up included: the venv from requirements.lock,
the npm checkers, ruff, mypy and every test), as CI runs it. CPU is user + system time of
every process the command starts (the test workers and the processes the tests start); the
load average before and after says how busy the machine was meanwhile. Targets on a two-core
machine: the fast tier under 30 s, `make test` under 4 minutes.

    .venv/bin/python -m bench.loop                      # both, once each
    .venv/bin/python -m bench.loop --tier fast --runs 3

Results go to OUT/loop.md and loop.json (`--out`, default .bench/), each command's output
to OUT/loop-<tier>-<run>.log.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / ".bench"
TARGET_SECONDS = {"fast": 30, "full": 240}
"""Wall-time targets on a two-core machine."""


def timed(command: list[str], cwd: Path, log: Path) -> dict[str, float]:
    """Run `command` in `cwd`, its output into `log`: wall and CPU seconds, the one-minute
    load average before and after, and its exit status."""
    before, load = resource.getrusage(resource.RUSAGE_CHILDREN), os.getloadavg()[0]
    start = time.perf_counter()
    with log.open("w") as output:
        code = subprocess.run(command, cwd=cwd, stdout=output, stderr=subprocess.STDOUT,
                              check=False).returncode
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": round(wall, 1), "cpu": round(cpu, 1), "load_before": round(load, 2),
            "load_after": round(os.getloadavg()[0], 2), "exit": code}


def fast_tier(out: Path, run: int) -> dict[str, float]:
    """`make test-fast` in this checkout (its .venv made first if missing)."""
    return timed(["make", "test-fast"], ROOT, out / f"loop-fast-{run}.log")


def full_suite(out: Path, run: int) -> dict[str, float]:
    """`make test` on a fresh clone of HEAD, in a temporary directory."""
    with tempfile.TemporaryDirectory(prefix="gpu-infra-loop-") as scratch:
        clone = Path(scratch) / "clone"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        return timed(["make", "test"], clone, out / f"loop-full-{run}.log")


TIERS = {"fast": fast_tier, "full": full_suite}


def report(results: dict[str, list[dict[str, float]]]) -> str:
    """The results as a Markdown table: each run, then the medians against the target."""
    lines = ["| Tier | Run | Wall (s) | CPU (s) | Load before / after | Exit |",
             "|---|---|---|---|---|---|"]
    for tier, runs in results.items():
        lines += [f"| {tier} | {index} | {run['wall']} | {run['cpu']} | "
                  f"{run['load_before']} / {run['load_after']} | {run['exit']} |"
                  for index, run in enumerate(runs, 1)]
    lines.append("")
    for tier, runs in results.items():
        wall = statistics.median(run["wall"] for run in runs)
        cpu = statistics.median(run["cpu"] for run in runs)
        lines.append(f"- {tier}: median wall {wall:.1f} s (target {TARGET_SECONDS[tier]} s), "
                     f"CPU {cpu:.1f} s")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Time the tiers asked for, `--runs` times each, in turns; write loop.md and loop.json."""
    parser = argparse.ArgumentParser(prog="python -m bench.loop", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tier", choices=["fast", "full", "both"], default="both")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    tiers = list(TIERS) if args.tier == "both" else [args.tier]
    results: dict[str, list[dict[str, float]]] = {tier: [] for tier in tiers}
    for run in range(1, args.runs + 1):
        for tier in tiers:
            results[tier].append(TIERS[tier](args.out, run))
    (args.out / "loop.json").write_text(json.dumps(results, indent=2) + "\n")
    (args.out / "loop.md").write_text(report(results))
    print(report(results), end="")


if __name__ == "__main__":
    main()
