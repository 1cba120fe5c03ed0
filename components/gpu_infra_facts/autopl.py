"""ESSD AutoPL performance from Alibaba Cloud's published formulas.

Source: "ESSD AutoPL disks" (alibabacloud.com/help/en/ecs/user-guide/essd-autopl-disks,
updated 2026-01-08):
- baseline IOPS = max{min{1,800 + 50 x GiB, 50,000}, 3,000}
- baseline throughput = max{min{120 + 0.5 x GiB, 350}, 125} MB/s
- provisioned IOPS: none up to 3 GiB; from 4 GiB, 1 to min{1,000 x GiB - baseline, 50,000};
  each provisioned IOPS adds 16 KB/s of throughput
- burst: up to min{1,000,000, 1,000 x GiB} IOPS
"""

from __future__ import annotations

from dataclasses import dataclass

AUTOPL_SIZE_RANGE = (1, 65536)
"""Sizes (GiB) a cloud_auto disk accepts."""
PROVISIONING_MIN_GIB = 4
"""Smallest disk (GiB) that takes provisioned IOPS."""
MAX_PROVISIONED_IOPS = 50_000
MAX_BURST_IOPS = 1_000_000
PROVISIONED_KB_PER_IOPS = 16
"""Throughput each provisioned IOPS adds, in KB/s."""


@dataclass(frozen=True)
class AutoPlPerformance:
    """What one ESSD AutoPL disk delivers."""

    size_gib: int
    baseline_iops: int
    baseline_throughput_mbps: float
    provisioned_iops: int
    """Provisioned on top of the baseline (0: none)."""
    max_provisioned_iops: int
    """The most this size may provision (0 below 4 GiB)."""
    iops: int
    """Sustained IOPS: baseline plus provisioned."""
    throughput_mbps: float
    """Sustained throughput: baseline plus 16 KB/s per provisioned IOPS."""
    burst_iops: int
    """Burst ceiling when bursting is on, else 0."""


def baseline_iops(size_gib: int) -> int:
    """max{min{1800 + 50 x GiB, 50000}, 3000}."""
    return max(min(1800 + 50 * size_gib, 50_000), 3000)


def baseline_throughput_mbps(size_gib: int) -> float:
    """max{min{120 + 0.5 x GiB, 350}, 125} MB/s."""
    return max(min(120 + 0.5 * size_gib, 350.0), 125.0)


def max_provisioned_iops(size_gib: int) -> int:
    """0 up to 3 GiB, else min{1000 x GiB - baseline, 50000}."""
    if size_gib < PROVISIONING_MIN_GIB:
        return 0
    return max(min(1000 * size_gib - baseline_iops(size_gib), MAX_PROVISIONED_IOPS), 0)


def burst_iops(size_gib: int) -> int:
    """min{1,000,000, 1000 x GiB}."""
    return min(MAX_BURST_IOPS, 1000 * size_gib)


def autopl_problems(size_gib: int, provisioned_iops: int = 0) -> list[str]:
    """`field: message` lines for a size or provisioned IOPS the disk cannot have."""
    low, high = AUTOPL_SIZE_RANGE
    if not low <= size_gib <= high:
        return [f"size_gib: {size_gib} GiB is outside the ESSD AutoPL range; allowed "
                f"{low} to {high} GiB"]
    if provisioned_iops < 0:
        return [f"provisioned_iops: {provisioned_iops} is negative; allowed 0 (none) or more"]
    limit = max_provisioned_iops(size_gib)
    if provisioned_iops and limit == 0:
        return [f"provisioned_iops: a {size_gib} GiB disk cannot provision IOPS; allowed only "
                f"from {PROVISIONING_MIN_GIB} GiB (set 0)"]
    if provisioned_iops > limit:
        return [f"provisioned_iops: {provisioned_iops} is above the limit of a {size_gib} GiB "
                f"disk; allowed 0 to {limit} (min{{1000 x GiB - baseline "
                f"{baseline_iops(size_gib)}, {MAX_PROVISIONED_IOPS}}})"]
    return []


def autopl_performance(size_gib: int, provisioned_iops: int = 0,
                       bursting: bool = True) -> AutoPlPerformance:
    """The disk's performance; ValueError (one line per problem) beyond the limits."""
    problems = autopl_problems(size_gib, provisioned_iops)
    if problems:
        raise ValueError("\n".join(problems))
    base_iops, base_mbps = baseline_iops(size_gib), baseline_throughput_mbps(size_gib)
    return AutoPlPerformance(
        size_gib=size_gib, baseline_iops=base_iops, baseline_throughput_mbps=base_mbps,
        provisioned_iops=provisioned_iops, max_provisioned_iops=max_provisioned_iops(size_gib),
        iops=base_iops + provisioned_iops,
        throughput_mbps=base_mbps + provisioned_iops * PROVISIONED_KB_PER_IOPS / 1024,
        burst_iops=burst_iops(size_gib) if bursting else 0)
