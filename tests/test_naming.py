"""Names the cloud keeps unique beyond one stack: `naming.global_suffix` (none, auto, a
literal), their limits, and that two stacks differing in region or stack name never share
one."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_infra.schema import ConfigError
from gpu_infra.schema.stack import CLUSTER_NAME_PATTERN
from gpu_infra_facts.naming import (
    UNIQUE_NAMES,
    auto_suffix,
    fit_name,
    name_problems,
    resolve_suffix,
)
from gpu_infra_facts.regions import REGIONS
from gpu_infra_facts.types import ALARM_CONTACT, BUCKET

from .conftest import BASE_INFERENCE, BASE_RENDERING, BASE_TRAINING, cluster_config, merged

LONGEST_NAME = "a" * 24
"""The longest cluster name CLUSTER_NAME_PATTERN allows."""
CONTACTS = {"contacts": [{"name": "oncall", "email": "oncall@example.com"}]}
STACK_NAMES = st.from_regex(r"\A[A-Za-z0-9_.-]{1,40}\Z")
CLUSTER_NAMES = st.from_regex(CLUSTER_NAME_PATTERN.replace("^", r"\A").replace("$", r"\Z"))


def unique_names(plan) -> dict[tuple[str, str], str]:
    """(type token, logical name) -> the cloud-unique name input of every such resource."""
    return {(r.type, r.name): r.inputs[UNIQUE_NAMES[r.type].field]
            for r in plan.resources if r.type in UNIQUE_NAMES}


@pytest.mark.slow  # 300 generated cases
@settings(max_examples=300, deadline=None)
@given(stack=STACK_NAMES, other_stack=STACK_NAMES, region=st.sampled_from(sorted(REGIONS)),
       other_region=st.sampled_from(sorted(REGIONS)), cluster=CLUSTER_NAMES)
def test_auto_suffix_differs_when_the_region_or_the_stack_name_differs(
        stack, other_stack, region, other_region, cluster):
    first = auto_suffix(stack_name=stack, region=region, cluster=cluster)
    second = auto_suffix(stack_name=other_stack, region=other_region, cluster=cluster)
    assert (first == second) == ((stack, region) == (other_stack, other_region))
    assert len(first) == 8 and int(first, 16) >= 0


def test_two_stacks_of_one_cluster_name_share_no_global_name(plan_cluster):
    """One cluster name, one account: another region or another stack name gives every
    bucket, role, policy, key pair, access group, contact and rule a name of its own."""
    cluster = merged(BASE_TRAINING, naming={"global_suffix": "auto"}, monitoring=CONTACTS,
                     security={"public_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBmL6C2l7o5"
                                             "s2jyV6Hk3n3bqGkYc1vT0yQfXq0ZQx8sP a@b"},
                     storage={"shared_fs": {"enabled": True}})
    hangzhou = unique_names(plan_cluster(cluster, name="train-dev"))
    beijing = unique_names(plan_cluster(
        merged(cluster, network={"zones": ["cn-beijing-l"]}), region="cn-beijing",
        name="train-dev"))
    renamed = unique_names(plan_cluster(cluster, name="train-dev2"))
    kinds = {token for token, _ in hangzhou}
    assert {"alicloud:oss/bucket:Bucket", "alicloud:ram/role:Role", "alicloud:ram/policy:Policy",
            "alicloud:ecs/ecsKeyPair:EcsKeyPair", "alicloud:nas/accessGroup:AccessGroup",
            "alicloud:cms/alarmContact:AlarmContact", "alicloud:cms/eventRule:EventRule"} <= kinds
    for other in (beijing, renamed):
        assert set(hangzhou) == set(other)
        assert not set(hangzhou.values()) & set(other.values())
    suffix = auto_suffix(stack_name="train-dev", region="cn-hangzhou", cluster="t01")
    assert hangzhou[("alicloud:oss/bucket:Bucket", "t01-datasets-bucket")] == \
        f"t01-dev-datasets-{suffix}"
    assert hangzhou[("alicloud:ram/role:Role", "t01-node-role")] == f"t01-node-role-{suffix}"


def test_without_naming_the_names_stay_as_they_were(plan_cluster):
    names = unique_names(plan_cluster(BASE_TRAINING))
    assert names[("alicloud:oss/bucket:Bucket", "t01-datasets-bucket")] == "t01-dev-datasets"
    assert names[("alicloud:ram/role:Role", "t01-node-role")] == "t01-node-role"
    literal = unique_names(plan_cluster(merged(BASE_TRAINING,
                                               naming={"global_suffix": "acme01"})))
    assert set(literal.values()) == {f"{name}-acme01" for name in names.values()}


@pytest.mark.slow  # twelve plans of the longest names
@pytest.mark.parametrize("base", [BASE_TRAINING, BASE_INFERENCE, BASE_RENDERING],
                         ids=["training", "inference", "rendering"])
@pytest.mark.parametrize("suffix", ["auto", "abcdefgh"])
@pytest.mark.parametrize("cluster_name, contact", [(LONGEST_NAME, None), ("a" * 18, "ops"),
                                                   (LONGEST_NAME, "a" * 12)],
                         ids=["longest-name", "with-contacts", "longest-name-and-contact"])
def test_every_unique_name_stays_within_its_limits(plan_cluster, base, suffix, cluster_name,
                                                   contact):
    """The longest cluster name, with and without the longest contact (its CloudMonitor
    name is shortened with a digest), and a name that leaves room for a contact."""
    fleet = ({"queue_scaling": {"metric_name": "pending_requests", "scale_out_threshold": 32,
                                "jobs_per_instance": 16, "missing_data_minutes": 10},
              "drain_seconds": 120}
             if base is not BASE_TRAINING else {})
    if "driver" in base["fleet"]:  # the GRID package sits in the renamed stack's own bucket
        bucket = fit_name(BUCKET, f"{cluster_name}-prod-datasets", resolve_suffix(
            suffix, stack_name="test", region="cn-hangzhou", cluster=cluster_name))
        fleet["driver"] = {**base["fleet"]["driver"],
                           "grid_package": f"oss://{bucket}/grid.run"}
    contacts = [{"name": contact, "email": "ops@example.com"}] if contact else []
    cluster = merged(base, name=cluster_name, environment="prod",
                     naming={"global_suffix": suffix}, monitoring={"contacts": contacts},
                     fleet={**base["fleet"], **fleet}, storage={"shared_fs": {"enabled": True}},
                     security={**base.get("security", {}),
                               "public_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBmL6C2l7o5"
                                             "s2jyV6Hk3n3bqGkYc1vT0yQfXq0ZQx8sP a@b"})
    names = unique_names(plan_cluster(cluster))
    expected = {"alicloud:oss/bucket:Bucket", "alicloud:ram/role:Role",
                "alicloud:ecs/ecsKeyPair:EcsKeyPair", "alicloud:nas/accessGroup:AccessGroup"}
    if contact:
        expected |= ({"alicloud:cloudmonitor/serviceMetricAlarmRule:ServiceMetricAlarmRule"}
                     if fleet else {"alicloud:cms/eventRule:EventRule"})
        expected.add("alicloud:cms/alarmContact:AlarmContact")
    assert expected <= {token for token, _ in names}
    for (token, _), name in names.items():
        assert name_problems(token, name) == [], name
        assert name.startswith(cluster_name[:18]) and len(name.rsplit("-", 1)[1]) == 8


@pytest.mark.parametrize("naming, problem", [
    ({"global_suffix": "Acme"}, "naming.global_suffix: 'Acme' is not a suffix; use none, auto, "
                                "or 3-8 lowercase letters and digits"),
    ({"global_suffix": "ab"}, "naming.global_suffix: 'ab' is not a suffix"),
    ({"suffix": "auto"}, "naming.suffix: unknown key; allowed: global_suffix"),
])
def test_bad_global_suffix_is_one_line_naming_the_field(naming, problem):
    with pytest.raises(ConfigError) as error:
        cluster_config(merged(BASE_TRAINING, naming=naming))
    assert any(problem in line for line in error.value.problems), error.value.problems


def test_the_suffix_counts_against_the_bucket_prefix_room():
    prefix = "a" * 51
    cluster_config(merged(BASE_TRAINING, storage={"buckets": {"bucket_prefix": prefix}}))
    with pytest.raises(ConfigError) as error:
        cluster_config(merged(BASE_TRAINING, storage={"buckets": {"bucket_prefix": prefix}},
                              naming={"global_suffix": "auto"}, name="abcdefghijklmnopqrstuvwx",
                              monitoring={"contacts": [{"name": "abcdefghijkl",
                                                        "email": "a@example.com"}]}))
    lines = [line.removeprefix("gpu-infra:cluster.") for line in error.value.problems]
    assert lines == [
        f"storage.buckets.bucket_prefix: {prefix!r} is too long; bucket "
        "`<prefix>-checkpoints-<suffix>` must be at most 63 characters, so at most 42"]


def test_a_derived_name_too_long_is_shortened_with_a_digest_and_keeps_the_suffix():
    contact = "abcdefghijklmnopqrstuvwx-alerts-abcdefghijkl"
    fitted = fit_name(ALARM_CONTACT, contact, "1a2b3c4d")
    assert len(fitted) == 40 and fitted.endswith("-1a2b3c4d")
    head, digest, suffix = fitted.rsplit("-", 2)
    assert (head, len(digest), suffix) == ("abcdefghijklmnopqrstuvwx", 6, "1a2b3c4d")
    assert fitted == fit_name(ALARM_CONTACT, contact, "1a2b3c4d")
    assert fit_name(ALARM_CONTACT, contact + "x", "1a2b3c4d") != fitted
    assert fit_name(ALARM_CONTACT, "short-alerts-ops", "1a2b3c4d") == "short-alerts-ops-1a2b3c4d"
    assert fit_name(ALARM_CONTACT, contact, None) == fit_name(ALARM_CONTACT, contact, None)
    assert len(fit_name(ALARM_CONTACT, contact, None)) == 40
