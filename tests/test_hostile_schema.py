"""Accepted nonsense, now refused: every value here used to pass `validate` (or pass it and
then fail the plan). Each case runs `validate` and `plan` in-process (tests/hostile.py makes
the checks) and names the field path in its expected line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import BASE_INFERENCE, BASE_TRAINING, merged, utc_in
from .hostile import TRAINING, Case, replaced, run_in_process

P = "gpu-infra:cluster"
FLEET = BASE_INFERENCE["fleet"]


def stack_text(cluster: dict[str, Any]) -> str:
    """A stack file holding `cluster` (JSON is YAML 1.2)."""
    return json.dumps({"config": {"alicloud:region": "cn-hangzhou", P: cluster}}, indent=1)


def queue(**settings: Any) -> dict[str, Any]:
    return merged(BASE_INFERENCE, fleet={**FLEET, "queue_scaling": settings})


def steps(*bounds: tuple[float | None, float | None, int]) -> dict[str, Any]:
    return queue(steps=[{"lower": low, "upper": high, "adjustment": add}
                        for low, high, add in bounds])


def schedule(**settings: Any) -> dict[str, Any]:
    return merged(BASE_INFERENCE, fleet={**FLEET, "schedules": [
        {"name": "peak", "launch_time": utc_in(10), "desired_size": 2, **settings}]})


def tags(count: int) -> dict[str, Any]:
    return {**BASE_TRAINING, "tags": {f"Key{i}": "v" for i in range(count)}}


NONSENSE: dict[str, tuple[str, dict[str, Any] | str, str]] = {
    # kind: (what, stack, expected line)
    "steps-inverted": ("scaling", steps((10, 0, 1), (0, None, 2)),
                       f"{P}.fleet.queue_scaling.steps[0].upper: 0 is not above lower 10"),
    "steps-overlapping": ("scaling", steps((0, 10, 1), (5, None, 2)),
                          f"{P}.fleet.queue_scaling.steps[1].lower: 5 must equal the upper "
                          "bound 10 of steps[0]"),
    "steps-gap": ("scaling", steps((0, 10, 1), (20, None, 2)),
                  f"{P}.fleet.queue_scaling.steps[1].lower: 20 must equal the upper bound 10"),
    "steps-two-unbounded": ("scaling", steps((0, None, 1), (0, None, 2)),
                            f"{P}.fleet.queue_scaling.steps[1].lower: 0 must equal the upper "
                            "bound none of steps[0]"),
    "steps-closed-above": ("scaling", steps((0, 10, 1)),
                           f"{P}.fleet.queue_scaling.steps[0].upper: 10; the highest step must "
                           "have no upper bound"),
    "steps-start-above-threshold": ("scaling", steps((5, None, 1)),
                                    f"{P}.fleet.queue_scaling.steps[0].lower: 5; the lowest "
                                    "step must start at 0"),
    "steps-remove-instances": ("scaling", steps((0, None, -2)),
                               f"{P}.fleet.queue_scaling.steps[0].adjustment: -2; a step of "
                               "the scale-out alarm adds at least 1 instance"),
    "scale-in-above-scale-out": ("scaling", queue(scale_out_threshold=5, scale_in_threshold=9),
                                 f"{P}.fleet.queue_scaling.scale_in_threshold: 9 must be below "
                                 "scale_out_threshold 5"),
    "negative-threshold": ("scaling", queue(scale_out_threshold=-3),
                           f"{P}.fleet.queue_scaling.scale_out_threshold: input should be "
                           "greater than or equal to 0 (got -3)"),
    "evaluation-count-1e9": ("scaling", queue(evaluation_count=10**9),
                             f"{P}.fleet.queue_scaling.evaluation_count: input should be less "
                             "than or equal to 100"),
    "empty-metric-name": ("scaling", queue(metric_name=""),
                          f"{P}.fleet.queue_scaling.metric_name: string should match pattern"),
    "cpu-target-500": ("scaling", merged(BASE_INFERENCE, fleet={**FLEET, "target_tracking": {
        "target_value": 500}}), f"{P}.fleet.target_tracking.target_value: 500% CPU can never "
        "be reached; allowed above 0 up to 100"),
    "nan-threshold": ("scaling", replaced(
        json.dumps({"config": {"alicloud:region": "cn-hangzhou", P: queue(
            scale_out_threshold=12345)}}), "12345", ".nan"),
        f"{P}.fleet.queue_scaling.scale_out_threshold: input should be a finite number"),
    "infinite-spot-limit": ("scaling", replaced(TRAINING, "      spot_strategy: SpotAsPriceGo\n",
                                                "      spot_strategy: SpotWithPriceLimit\n"
                                                "      spot_price_limit: .inf\n"),
                            f"{P}.fleet.spot_price_limit: input should be a finite number"),
    "schedule-impossible-date": ("schedule", schedule(launch_time="2027-02-30T10:00Z"),
                                 f"{P}.fleet.schedules[0].launch_time: 2027-02-30T10:00Z is not "
                                 "a date and time"),
    "schedule-past": ("schedule", schedule(launch_time=utc_in(-3)),
                      "has passed and the task does not recur, so it never runs"),
    "schedule-beyond-90-days": ("schedule", schedule(launch_time=utc_in(120)),
                                "is more than 90 days ahead; ESS ignores such a task"),
    "schedule-ends-before-start": ("schedule", schedule(
        recurrence_type="Daily", recurrence_value="1", recurrence_end_time=utc_in(5)),
        f"{P}.fleet.schedules[0].recurrence_end_time: "),
    "schedule-min-above-max": ("schedule", schedule(min_size=6, max_size=2, desired_size=None),
                               f"{P}.fleet.schedules[0].max_size: 2 is below min_size 6"),
    "tags-21": ("tags", tags(21), f"{P}.tags: 21 tags; at most 13: a resource takes 20 tags"),
    "tags-14": ("tags", tags(14), f"{P}.tags: 14 tags; at most 13"),
    "tag-acs-prefix": ("tags", merged(BASE_TRAINING, tags={"acs:team": "x"}),
                       f"{P}.tags: tag 'acs:team': tag keys starting with aliyun or acs: are "
                       "reserved by Alibaba Cloud"),
    "tag-url-value": ("tags", merged(BASE_TRAINING, tags={"Wiki": "see https://x.example"}),
                      f"{P}.tags: tag 'Wiki': tag values cannot contain http:// or https://"),
    "tag-key-129": ("tags", merged(BASE_TRAINING, tags={"k" * 129: "x"}),
                    "tag keys have 1 to 128 characters, this one 129"),
    "tag-automatic-key": ("tags", merged(BASE_TRAINING, tags={"Project": "mine"}),
                          f"{P}.tags: tag Project: set by gpu-infra on every resource"),
    "string-integer": ("strict", merged(BASE_TRAINING, fleet={
        **BASE_TRAINING["fleet"], "nodes": "8"}),
        f"{P}.fleet.nodes: input should be a valid integer (got '8'); a string is not an "
        "integer: write it without quotes"),
    "boolean-integer": ("strict", merged(BASE_TRAINING, fleet={
        **BASE_TRAINING["fleet"], "nodes": True}),
        f"{P}.fleet.nodes: input should be a valid integer (got True)"),
    "yes-boolean": ("strict", merged(BASE_TRAINING, fleet={
        **BASE_TRAINING["fleet"], "interruptible": "yes"}),
        f"{P}.fleet.interruptible: input should be a valid boolean (got 'yes'); a string is "
        "not a boolean: write true or false, unquoted"),
    "string-decimal": ("strict", replaced(TRAINING, "      spot_strategy: SpotAsPriceGo\n",
                                          "      spot_strategy: SpotWithPriceLimit\n"
                                          "      spot_price_limit: '1.5'\n"),
                       f"{P}.fleet.spot_price_limit: input should be a valid number (got "
                       "'1.5'); a string is not a number: write it without quotes"),
    "one-boolean": ("strict", merged(BASE_TRAINING, network={
        **BASE_TRAINING["network"], "nat_gateway": 1}),
        f"{P}.network.nat_gateway: input should be a valid boolean (got 1)"),
    "float-integer": ("strict", merged(BASE_TRAINING, fleet={
        **BASE_TRAINING["fleet"], "nodes": 2.0}),
        f"{P}.fleet.nodes: input should be a valid integer (got 2.0)"),
    **{f"vpc-{name}": ("cidr", merged(BASE_TRAINING, network={
        **BASE_TRAINING["network"], "vpc_cidr": cidr}), f"{P}.network.vpc_cidr: {cidr} overlaps "
        f"{reserved}") for name, cidr, reserved in (
            ("loopback", "127.0.0.0/16", "127.0.0.0/8"),
            ("multicast", "224.0.0.0/16", "224.0.0.0/4"),
            ("link-local", "169.254.0.0/16", "169.254.0.0/16"),
            ("shared-100-64", "100.64.0.0/16", "100.64.0.0/10"),
            ("this-network", "0.0.0.0/16", "0.0.0.0/8"),
            ("reserved-240", "240.0.0.0/16", "240.0.0.0/4"))},
    "vpc-slash-8-without-vswitch-prefix": ("cidr", merged(BASE_TRAINING, network={
        **BASE_TRAINING["network"], "vpc_cidr": "10.0.0.0/8"}),
        f"{P}.network.vswitch_prefix: the default /13 (the VPC's /8 + 5) is wider than a "
        "vSwitch may be (/16 to /29); set vswitch_prefix, e.g. 16"),
    "per-gpu-disk-over-autopl-max": ("plan-only", merged(BASE_TRAINING, fleet={
        **BASE_TRAINING["fleet"], "instance_type": "ecs.gn7i-c32g1.32xlarge"},
        storage={"disks": [{"size_gib": 20000, "per": "gpu"}]}),
        "ERROR disk-too-large: storage.disks[0].size_gib: 20000 GiB per GPU x 4 GPUs of "
        "ecs.gn7i-c32g1.32xlarge = 80000 GiB; 80000 GiB is outside the ESSD AutoPL range"),
    "prod-without-kms": ("plan-only", merged(BASE_TRAINING, environment="prod",
                                             security={"kms_encryption": False}),
                         "ERROR prod-without-kms: security.kms_encryption: false in prod"),
    "inference-without-client-cidrs": ("plan-only", merged(BASE_INFERENCE, security={
        "service_ports": [8000], "client_cidrs": []}), f"{P}.security.client_cidrs: missing"),
    "lifecycle-days-beyond-exact": (
        "numbers", merged(BASE_INFERENCE, storage={"buckets": {"lifecycle": {
            "archive_days": 10**30}}}),
        f"{P}.storage.buckets.lifecycle.archive_days: {10**30} is beyond the integers Pulumi "
        "carries exactly (±9,007,199,254,740,991)"),
    "group-id-beyond-exact": (
        "numbers", queue(metric_name="pending", scale_out_threshold=4,
                         cloud_monitor_group_id=2**53),
        f"{P}.fleet.queue_scaling.cloud_monitor_group_id: {2**53} is beyond the integers"),
}
"""Stacks no command may accept, by kind (plan-only: validate said valid, then the plan
failed), and the line stderr must hold."""

CASES = [Case(f"schema-{kind}", f"{name}:{command}", (command, "{d}/Pulumi.bad.yaml"),
              {"Pulumi.bad.yaml": stack if isinstance(stack, str) else stack_text(stack)},
              expect=expect)
         for name, (kind, stack, expect) in NONSENSE.items() for command in ("validate", "plan")]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_nonsense_is_refused_by_validate_and_plan(case: Case, tmp_path: Path, capsys,
                                                   monkeypatch):
    run_in_process(case, tmp_path, capsys, monkeypatch)


def test_a_slash_8_vpc_with_slash_29_vswitches_plans_without_listing_its_subnets(
        tmp_path: Path, capsys, monkeypatch):
    """Two million /29 slots are counted, not listed (a plan took 18 s)."""
    cluster = merged(BASE_TRAINING, network={**BASE_TRAINING["network"],
                                             "vpc_cidr": "10.0.0.0/8", "vswitch_prefix": 29})
    case = Case("bound", "slash-8-by-slash-29", ("plan", "{d}/Pulumi.wide.yaml", "--json", "-"),
                {"Pulumi.wide.yaml": stack_text(cluster)}, code=0)
    run_in_process(case, tmp_path, capsys, monkeypatch)
