"""ESSD AutoPL formulas at their boundaries, and the errors beyond the limits."""

import re

import pytest

from gpu_infra_facts.autopl import autopl_performance, autopl_problems

# size GiB -> (baseline IOPS, baseline MB/s, max provisioned IOPS, burst IOPS)
EXPECTED = {
    1: (3000, 125.0, 0, 1000),
    3: (3000, 125.0, 0, 3000),
    4: (3000, 125.0, 1000, 4000),
    24: (3000, 132.0, 21000, 24000),
    25: (3050, 132.5, 21950, 25000),
    460: (24800, 350.0, 50000, 460000),
    1000: (50000, 350.0, 50000, 1_000_000),
    32000: (50000, 350.0, 50000, 1_000_000),
    65536: (50000, 350.0, 50000, 1_000_000),
}


@pytest.mark.parametrize("size", sorted(EXPECTED))
def test_formula_values(size):
    perf = autopl_performance(size)
    assert (perf.baseline_iops, perf.baseline_throughput_mbps, perf.max_provisioned_iops,
            perf.burst_iops) == EXPECTED[size]
    assert perf.iops == perf.baseline_iops and perf.provisioned_iops == 0


def test_provisioned_iops_add_iops_and_16kb_each():
    perf = autopl_performance(24, provisioned_iops=1024)
    assert perf.iops == 3000 + 1024
    assert perf.throughput_mbps == 132.0 + 16.0


def test_full_provisioning_is_allowed_at_the_limit():
    assert autopl_performance(4, provisioned_iops=1000).iops == 4000
    assert autopl_performance(1000, provisioned_iops=50000).iops == 100000


def test_bursting_off_has_no_burst():
    assert autopl_performance(100, bursting=False).burst_iops == 0


@pytest.mark.parametrize(("size", "iops", "message"), [
    (3, 1, "provisioned_iops: a 3 GiB disk cannot provision IOPS; allowed only from 4 GiB "
           "(set 0)"),
    (4, 1001, "provisioned_iops: 1001 is above the limit of a 4 GiB disk; allowed 0 to 1000 "
              "(min{1000 x GiB - baseline 3000, 50000})"),
    (1000, 50001, "provisioned_iops: 50001 is above the limit of a 1000 GiB disk; allowed 0 "
                  "to 50000 (min{1000 x GiB - baseline 50000, 50000})"),
    (0, 0, "size_gib: 0 GiB is outside the ESSD AutoPL range; allowed 1 to 65536 GiB"),
    (65537, 0, "size_gib: 65537 GiB is outside the ESSD AutoPL range; allowed 1 to 65536 GiB"),
    (10, -1, "provisioned_iops: -1 is negative; allowed 0 (none) or more"),
])
def test_beyond_limits(size, iops, message):
    assert autopl_problems(size, iops) == [message]
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        autopl_performance(size, iops)
