"""bench/loop.py times the contributor's loop: wall and CPU of every process a tier starts."""

from __future__ import annotations

import sys

import pytest

from bench.loop import report, timed


def test_the_report_gives_each_run_and_the_medians_against_the_targets():
    runs = {"fast": [{"wall": 28.0, "cpu": 50.0, "load_before": 0.5, "load_after": 2.0,
                      "exit": 0},
                     {"wall": 32.0, "cpu": 54.0, "load_before": 1.0, "load_after": 2.1,
                      "exit": 0}]}
    text = report(runs)
    assert "| fast | 2 | 32.0 | 54.0 | 1.0 / 2.1 | 0 |" in text
    assert "- fast: median wall 30.0 s (target 30 s), CPU 52.0 s" in text


@pytest.mark.slow  # a process
def test_cpu_counts_the_processes_the_command_starts(tmp_path):
    busy = "import subprocess, sys; subprocess.run([sys.executable, '-c', " \
           "'x = 0\\nfor i in range(3_000_000): x += i'])"
    result = timed([sys.executable, "-c", busy], tmp_path, tmp_path / "log")
    assert result["exit"] == 0 and result["cpu"] >= 0.1 and result["wall"] > 0
