"""backend/: the bootstrap program of the Pulumi state bucket, run under the mock engine: a
private, versioned, encrypted, protected bucket whose old versions expire, and the exact
`pulumi login` line as its output."""

from __future__ import annotations

import runpy

from gpu_infra_tools.plan.engine import run_under_mocks

from .conftest import BASE_TRAINING, PROJECT_DIR, cluster_config

PROGRAM = PROJECT_DIR / "backend" / "__main__.py"


def bootstrap(**config: str):
    return run_under_mocks(cluster_config(BASE_TRAINING), "state",
                           lambda: runpy.run_path(str(PROGRAM), run_name="__main__"),
                           config={"alicloud:region": "cn-beijing", **config})


def by_type(resources, token):
    return [r for r in resources if r.type == token]


def test_the_state_bucket_is_private_versioned_encrypted_and_protected():
    resources, outputs = bootstrap(**{"gpu-infra-state:bucket": "acme-pulumi-state"})
    (bucket,) = by_type(resources, "alicloud:oss/bucket:Bucket")
    assert bucket.inputs["bucket"] == "acme-pulumi-state"
    assert bucket.inputs["versioning"] == {"status": "Enabled"}
    assert bucket.inputs["serverSideEncryptionRule"]["sseAlgorithm"] == "AES256"
    assert bucket.protect is True
    (rule,) = bucket.inputs["lifecycleRules"]
    assert rule["noncurrentVersionExpirations"] == [{"days": 90}]
    assert not rule.get("transitions")  # the CLI reads state on every command: no tiers
    (acl,) = by_type(resources, "alicloud:oss/bucketAcl:BucketAcl")
    assert acl.inputs["acl"] == "private"
    (block,) = by_type(resources, "alicloud:oss/bucketPublicAccessBlock:BucketPublicAccessBlock")
    assert block.inputs["blockPublicAccess"] is True
    assert outputs["login"] == ("pulumi login 's3://acme-pulumi-state/pulumi?endpoint="
                                "https://s3.oss-cn-beijing.aliyuncs.com&region=cn-beijing'")


def test_kms_prefix_and_retention_are_settings():
    resources, outputs = bootstrap(**{"gpu-infra-state:bucket": "acme-state",
                                      "gpu-infra-state:prefix": "gpu",
                                      "gpu-infra-state:kmsKeyId": "key-abc",
                                      "gpu-infra-state:keepVersionsDays": "365"})
    (bucket,) = by_type(resources, "alicloud:oss/bucket:Bucket")
    assert bucket.inputs["serverSideEncryptionRule"] == {"sseAlgorithm": "KMS",
                                                         "kmsMasterKeyId": "key-abc"}
    assert bucket.inputs["lifecycleRules"][0]["noncurrentVersionExpirations"] == [
        {"days": 365}]
    assert str(outputs["login"]).startswith("pulumi login 's3://acme-state/gpu?")
