"""Data that stays readable and file systems that stay safe, in the plans of shipped and
derived stacks: lifecycle per bucket purpose, NAS root squash, CPFS refused or warned."""

from __future__ import annotations

import pytest

from gpu_infra.knowhow import run_validators
from gpu_infra.schema import ConfigError

from .conftest import BASE_TRAINING, cluster_config, merged
from .shipped import shipped_plan

BUCKET = "alicloud:oss/bucket:Bucket"
RULE = "alicloud:nas/accessRule:AccessRule"


def tiers(plan) -> dict[str, list[tuple[str, int]]]:
    """Bucket name suffix -> its lifecycle transitions."""
    return {b.inputs["bucket"].rsplit("-", 1)[1]: [
        (t["storageClass"], t["days"]) for t in b.inputs["lifecycleRules"][0].get(
            "transitions", [])] for b in plan.by_type(BUCKET)}


def test_datasets_and_models_are_never_archived_by_default_checkpoints_and_outputs_are():
    plan = shipped_plan("training-prod")
    assert tiers(plan) == {
        "datasets": [], "models": [],
        "checkpoints": [("IA", 30), ("Archive", 180)],
        "outputs": [("IA", 30), ("Archive", 180)],
        "logs": [("IA", 30), ("Archive", 180)]}
    for bucket in plan.by_type(BUCKET):  # every bucket still cleans up
        rule = bucket.inputs["lifecycleRules"][0]
        assert rule["abortMultipartUploads"] == [{"days": 7}]


def test_inference_models_stay_standard():
    plan = shipped_plan("inference-prod")
    assert tiers(plan)["models"] == []


def test_tiered_purposes_can_include_datasets(plan_cluster):
    plan = plan_cluster(merged(BASE_TRAINING, storage={"buckets": {"lifecycle": {
        "tiered_purposes": ["datasets"], "ia_days": 60, "archive_days": None}}}))
    assert tiers(plan) == {"datasets": [("IA", 60)], "checkpoints": [], "models": [],
                           "outputs": []}


@pytest.mark.parametrize("settings, squash, access", [
    ({}, "root_squash", "RDWR"),
    ({"squash": "no_squash", "access": "RDONLY"}, "no_squash", "RDONLY"),
])
def test_nas_squashes_root_by_default(plan_cluster, settings, squash, access):
    plan = plan_cluster(merged(BASE_TRAINING, storage={
        "shared_fs": {"enabled": True, "kind": "nas_performance", **settings}}))
    [rule] = plan.by_type(RULE)
    assert (rule.inputs["userAccessType"], rule.inputs["rwAccessType"],
            rule.inputs["sourceCidrIp"]) == (squash, access, "10.1.64.0/21")


def test_cpfs_is_refused_where_the_stack_encrypts_and_warned_elsewhere():
    cpfs = {"shared_fs": {"enabled": True, "kind": "cpfs", "capacity_gib": 3600}}
    with pytest.raises(ConfigError) as error:
        cluster_config(merged(BASE_TRAINING, environment="prod", storage=cpfs))
    assert error.value.problems == [
        "gpu-infra:cluster.storage.shared_fs.kind: cpfs cannot be encrypted through the "
        "provider (nas.FileSystem encrypt_type 1 and 2 are for standard and extreme only) but "
        "this stack encrypts its data (kms_encryption); use extreme, or set "
        "security.kms_encryption: false to accept an unencrypted CPFS"]
    [finding] = [f for f in run_validators(cluster_config(merged(BASE_TRAINING, storage=cpfs)))
                 if f.validator == "cpfs-not-encrypted-or-mounted"]
    assert (finding.level.value, finding.path) == ("WARNING", "storage.shared_fs.kind")
