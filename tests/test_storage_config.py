"""The `storage` schema: defaults, and one line per problem with the full field path."""

import pytest

from gpu_infra.blocks.conventions import Conventions
from gpu_infra.blocks.storage.buckets import bucket_names, log_bucket_name
from gpu_infra.schema import ConfigError
from gpu_infra.schema.storage import StorageConfig
from tests.conftest import BASE_INFERENCE, BASE_TRAINING, cluster_config, merged

P = "gpu-infra:cluster.storage"


def problems_of(storage, **sections):
    with pytest.raises(ConfigError) as caught:
        cluster_config(merged(BASE_TRAINING, storage=storage, **sections))
    return caught.value.problems


def test_defaults():
    storage = StorageConfig()
    assert [(d.name, d.size_gib, d.per, d.provisioned_iops, d.bursting, d.keep)
            for d in storage.disks] == [("scratch", 500, "node", 0, True, False)]
    assert not storage.shared_fs.enabled
    assert storage.buckets.lifecycle.transitions == {"IA": 30, "Archive": 90}
    assert storage.buckets.lifecycle.abort_multipart_days == 7
    assert (storage.snapshots.time_points, storage.snapshots.retention_days) == ([2], 7)


@pytest.mark.parametrize(("storage", "expected"), [
    ({"disks": [{"size_gib": 3, "provisioned_iops": 5}]},
     f"{P}.disks[0].provisioned_iops: a 3 GiB disk cannot provision IOPS; allowed only from "
     "4 GiB (set 0)"),
    ({"disks": [{"size_gib": 100, "provisioned_iops": 98000}]},
     f"{P}.disks[0].provisioned_iops: 98000 is above the limit of a 100 GiB disk; allowed 0 "
     "to 50000 (min{1000 x GiB - baseline 6800, 50000})"),
    ({"disks": [{"size_gib": 65537}]},
     f"{P}.disks[0].size_gib: input should be less than or equal to 65536 (got 65537)"),
    ({"disks": [{"name": "a"}]},
     f"{P}.disks[0].name: string should match pattern '^[a-z][a-z0-9-]{{1,30}}$' (got 'a')"),
    ({"disks": [{"name": "data"}, {"name": "data"}]},
     f"{P}.disks: each disk name may be used once"),
    ({"shared_fs": {"kind": "extreme"}},
     f"{P}.shared_fs.capacity_gib: missing; required for kind extreme"),
    ({"shared_fs": {"kind": "cpfs"}},
     f"{P}.shared_fs.capacity_gib: missing; required for kind cpfs"),
    ({"shared_fs": {"kind": "nas_capacity", "capacity_gib": 100}},
     f"{P}.shared_fs.capacity_gib: only for kinds extreme and cpfs; nas_capacity is billed by "
     "use (remove it)"),
    ({"shared_fs": {"zone": "cn-hangzhou-i"}},
     f"{P}.shared_fs.zone: only for kinds extreme and cpfs, not nas_performance"),
    ({"shared_fs": {"kind": "extreme", "capacity_gib": 100, "zone": "cn-hangzhou-k"}},
     f"{P}.shared_fs.zone: cn-hangzhou-k is not in network.zones"),
    ({"buckets": {"lifecycle": {"ia_days": 90, "archive_days": 30}}},
     f"{P}.buckets.lifecycle.archive_days: 30 must be more than ia_days (90); tiers go IA -> "
     "Archive -> ColdArchive"),
    ({"buckets": {"lifecycle": {"archive_days": None, "cold_archive_days": 30}}},
     f"{P}.buckets.lifecycle.cold_archive_days: 30 must be more than ia_days (30); tiers go "
     "IA -> Archive -> ColdArchive"),
    ({"buckets": {"lifecycle": {"abort_multipart_days": 0}}},
     f"{P}.buckets.lifecycle.abort_multipart_days: input should be greater than or equal to 1"
     " (got 0)"),
    ({"buckets": {"bucket_prefix": "a" * 52}},
     f"{P}.buckets.bucket_prefix: {'a' * 52!r} is too long; bucket `<prefix>-checkpoints` "
     "must be at most 63 characters, so at most 51"),
    ({"buckets": {"bucket_prefix": "My_Org"}},
     f"{P}.buckets.bucket_prefix: string should match pattern "
     "'^[a-z0-9][a-z0-9-]*[a-z0-9]$|^[a-z0-9]$' (got 'My_Org')"),
    ({"buckets": {"purposes": ["models", "models"]}},
     f"{P}.buckets.purposes: each purpose may be listed once"),
    ({"buckets": {"purposes": ["scratch"]}},
     f"{P}.buckets.purposes[0]: input should be 'datasets', 'checkpoints', 'models' or "
     "'outputs' (got 'scratch')"),
    ({"buckets": {"purposes": ["models"], "expected_gib": {"datasets": {"IA": 5}}}},
     f"{P}.buckets.expected_gib.datasets: datasets is not in purposes"),
    ({"buckets": {"expected_gib": {"models": {"IA": -5}}}},
     f"{P}.buckets.expected_gib.models.IA: -5 is negative"),
    ({"snapshots": {"time_points": [24]}},
     f"{P}.snapshots.time_points: 24 is not an hour; allowed 0 to 23"),
    ({"snapshots": {"repeat_weekdays": [0]}},
     f"{P}.snapshots.repeat_weekdays: 0 is not a weekday; allowed 1 (Monday) to 7"),
    ({"snapshots": {"time_points": [1, 1]}},
     f"{P}.snapshots.time_points: each value may be listed once"),
    ({"snapshots": {"retention_days": 0}},
     f"{P}.snapshots.retention_days: 0 is out of range; allowed 1 to 65536, or -1 (keep "
     "until deleted)"),
    ({"unknown": 1}, f"{P}.unknown: unknown key; allowed: disks, snapshots, inline_disks, "
     "shared_fs, buckets, backup"),
])
def test_problem_lines(storage, expected):
    assert problems_of(storage) == [expected]


def test_several_problems_one_line_each():
    assert problems_of({"snapshots": {"time_points": [25], "retention_days": 0}}) == [
        f"{P}.snapshots.time_points: 25 is not an hour; allowed 0 to 23",
        f"{P}.snapshots.retention_days: 0 is out of range; allowed 1 to 65536, or -1 (keep "
        "until deleted)"]


def test_valid_edges_accepted():
    stack = cluster_config(merged(BASE_TRAINING, storage={
        "disks": [{"size_gib": 4, "provisioned_iops": 1000}, {"name": "data", "keep": True}],
        "snapshots": {"retention_days": -1},
        "shared_fs": {"enabled": True, "kind": "cpfs", "capacity_gib": 3600,
                      "zone": "cn-hangzhou-i"},
        "buckets": {"bucket_prefix": "a" * 50, "lifecycle": {"cold_archive_days": 180}}}))
    assert stack.storage.buckets.lifecycle.transitions == {"IA": 30, "Archive": 90,
                                                           "ColdArchive": 180}


NO_SUFFIX = Conventions()


def test_bucket_names_default_prefix_per_layout():
    training = cluster_config(BASE_TRAINING)
    assert bucket_names(training, NO_SUFFIX) == {p: f"t01-dev-{p}" for p in
                                      ("datasets", "checkpoints", "models", "outputs")}
    assert log_bucket_name(training, NO_SUFFIX) is None
    inference = cluster_config(merged(BASE_INFERENCE, environment="prod"))
    assert bucket_names(inference, NO_SUFFIX) == {"models": "i01-prod-models"}
    rendering = cluster_config({**BASE_TRAINING, "layout": "rendering",
                                "fleet": {"instance_types": ["ecs.gn7i-c8g1.2xlarge"]}})
    assert list(bucket_names(rendering, NO_SUFFIX)) == ["datasets", "outputs"]


def test_bucket_names_explicit_prefix_purposes_and_logs():
    stack = cluster_config(merged(BASE_TRAINING, storage={"buckets": {
        "bucket_prefix": "acme-t01", "purposes": ["models", "datasets"], "logging": True}}))
    assert bucket_names(stack, NO_SUFFIX) == {"models": "acme-t01-models",
                                              "datasets": "acme-t01-datasets"}
    assert log_bucket_name(stack, NO_SUFFIX) == "acme-t01-logs"
    suffixed = Conventions(global_suffix="x1y2")
    assert bucket_names(stack, suffixed)["models"] == "acme-t01-models-x1y2"
    assert log_bucket_name(stack, suffixed) == "acme-t01-logs-x1y2"


@pytest.mark.parametrize("environment, kms, explicit, key", [
    ("prod", None, None, "stack"), ("dev", None, None, "hbr"), ("dev", True, None, "stack"),
    ("prod", None, "hbr", "hbr"), ("dev", True, "stack", "stack")])
def test_the_vault_takes_the_stacks_key_where_it_has_one(environment, kms, explicit, key):
    backup = {"vault_key": explicit} if explicit else {}
    cluster = merged(BASE_TRAINING, environment=environment,
                     security={"kms_encryption": kms} if kms is not None else {},
                     storage={"backup": backup})
    assert cluster_config(cluster).backup_vault_key == key


def test_the_stacks_key_without_kms_is_refused_with_its_path():
    assert problems_of({"backup": {"vault_key": "stack"}}) == [
        f"{P}.backup.vault_key: stack needs the stack's KMS key, and "
        "security.kms_encryption is off; set hbr, or turn kms_encryption on"]
