"""Storage rules: OSS buckets and objects not public (ACLs, bucket policies judged by
principal and condition), encrypted, access-logged in prod; NAS encryption; KMS rotation."""

from __future__ import annotations

import json

import pytest

from gpu_infra_facts import types as t
from gpu_infra_policies.base import UNKNOWN, Context, Resource

from .rule_helpers import PROD, bucket, messages, stack_messages


def test_bucket_and_object_acls():
    assert messages("oss-bucket-private", Resource(t.BUCKET_ACL, {"acl": "public-read"})) == [
        "bucket ACL public-read makes objects public; use private"]
    assert messages("oss-bucket-private", Resource(t.BUCKET, {"acl": "public-read-write"}))
    assert messages("oss-bucket-private", Resource(t.BUCKET_OBJECT, {"acl": "public-read"})) \
        == ["object ACL public-read makes objects public; use private"]
    for token in (t.BUCKET_ACL, t.BUCKET_OBJECT):
        for props in ({"acl": "private"}, {}, {"acl": UNKNOWN}, {"acl": "default"}):
            assert messages("oss-bucket-private", Resource(token, props)) == []


def bucket_policy(statement: dict, token: str = t.BUCKET_POLICY) -> Resource:
    return Resource(token, {"policy": json.dumps({"Version": "1", "Statement": [statement]})})


READ = {"Effect": "Allow", "Action": ["oss:GetObject"], "Resource": ["acs:oss:*:*:ckpt/*"]}


@pytest.mark.parametrize("principal", [["*"], "*", {"RAM": ["*"]}])
@pytest.mark.parametrize("token", [t.BUCKET_POLICY, t.BUCKET])
def test_bucket_policy_for_anyone_fires(principal, token):
    assert messages("oss-bucket-private", bucket_policy({**READ, "Principal": principal},
                                                        token)) == [
        "bucket policy allows ['oss:GetObject'] to the anonymous principal *; grant named RAM "
        "principals or limit it with a condition (acs:SourceVpc)"]


@pytest.mark.parametrize("condition", [
    None, {"IpAddress": {"acs:SourceIp": ["0.0.0.0/1", "128.0.0.0/1"]}},
    {"IpAddress": {"acs:SourceIp": "2000::/3"}},
])
def test_bucket_policy_world_open_condition_is_no_limit(condition):
    statement = {**READ, "Principal": ["*"], **({"Condition": condition} if condition else {})}
    assert len(messages("oss-bucket-private", bucket_policy(statement))) == 1


@pytest.mark.parametrize("statement", [
    {**READ, "Principal": ["123456789012"]},
    {**READ, "Principal": ["*"], "Effect": "Deny"},
    {**READ, "Principal": ["*"], "Condition": {"StringEquals": {"acs:SourceVpc": ["vpc-1"]}}},
    {**READ, "Principal": ["*"], "Condition": {"IpAddress": {"acs:SourceIp": ["10.0.0.0/8"]}}},
])
def test_bucket_policy_quiet(statement):
    assert messages("oss-bucket-private", bucket_policy(statement)) == []
    assert messages("oss-bucket-private", Resource(t.BUCKET_POLICY, {"policy": UNKNOWN})) == []


def test_bucket_encrypted():
    assert stack_messages("oss-bucket-encrypted", [bucket()]) == [
        ("ckpt", "bucket has no server-side encryption (serverSideEncryptionRule or "
                 "oss.BucketServerSideEncryption)")]
    inline = bucket(serverSideEncryptionRule={"sseAlgorithm": "KMS"})
    assert stack_messages("oss-bucket-encrypted", [inline]) == []
    by_name = Resource(t.BUCKET_ENCRYPTION, {"bucket": "ckpt", "sseAlgorithm": "AES256"})
    by_dep = Resource(t.BUCKET_ENCRYPTION, {"bucket": UNKNOWN}, dependencies=("urn:bucket",))
    assert stack_messages("oss-bucket-encrypted", [bucket(), by_name]) == []
    assert stack_messages("oss-bucket-encrypted", [bucket(), by_dep]) == []


def test_public_access_blocked():
    missing = "bucket has no oss.BucketPublicAccessBlock with blockPublicAccess true"
    assert stack_messages("oss-public-access-blocked", [bucket()]) == [("ckpt", missing)]
    off = Resource(t.BUCKET_PUBLIC_ACCESS_BLOCK, {"bucket": "ckpt", "blockPublicAccess": False},
                   "pab")
    assert stack_messages("oss-public-access-blocked", [bucket(), off]) == [
        ("pab", "blockPublicAccess is false"), ("ckpt", missing)]
    for value in (True, UNKNOWN):
        on = Resource(t.BUCKET_PUBLIC_ACCESS_BLOCK, {"bucket": "ckpt", "blockPublicAccess": value})
        assert stack_messages("oss-public-access-blocked", [bucket(), on]) == []


def test_prod_bucket_logging():
    logs = Resource(t.BUCKET, {"bucket": "logs", "tags": PROD}, "logs", "urn:logs", id="logs")
    data = bucket(tags=PROD)
    expected = ("ckpt", "prod bucket keeps no access log; add an oss.BucketLogging to a logs "
                        "bucket (storage.buckets.logging, on in prod)")
    assert stack_messages("prod-bucket-logging", [data]) == [expected]
    assert stack_messages("prod-bucket-logging", [bucket()], Context("prod")) == [expected]
    logging = Resource(t.BUCKET_LOGGING, {"bucket": "ckpt", "targetBucket": "logs"},
                       dependencies=("urn:bucket", "urn:logs"))
    assert stack_messages("prod-bucket-logging", [data, logs, logging]) == []
    # in preview the names are unknown: the dependencies still link them
    unknown = Resource(t.BUCKET_LOGGING, {"bucket": UNKNOWN, "targetBucket": UNKNOWN},
                       dependencies=("urn:bucket", "urn:logs"))
    assert stack_messages("prod-bucket-logging", [data, logs, unknown]) == []
    inline = bucket(tags=PROD, logging={"targetBucket": "logs"})
    assert stack_messages("prod-bucket-logging", [inline, logs]) == []
    assert stack_messages("prod-bucket-logging", [bucket()]) == []  # not prod


def test_nas_encrypted():
    expected = ["file system is not encrypted (encryptType 0); set 1 or, with a KMS key, 2"]
    for props in ({}, {"encryptType": 0}):
        assert messages("nas-encrypted", Resource(t.NAS_FILE_SYSTEM, props)) == expected
    for props in ({"encryptType": 1}, {"encryptType": 2.0}, {"encryptType": UNKNOWN}):
        assert messages("nas-encrypted", Resource(t.NAS_FILE_SYSTEM, props)) == []


def test_kms_key_rotation():
    assert messages("kms-key-rotation", Resource(t.KMS_KEY, {})) == [
        "automaticRotation is Disabled; set Enabled"]
    assert messages("kms-key-rotation", Resource(t.KMS_KEY, {"automaticRotation": "Disabled"}))
    for value in ("Enabled", UNKNOWN):
        assert messages("kms-key-rotation", Resource(t.KMS_KEY,
                                                     {"automaticRotation": value})) == []


def test_the_nas_types_that_take_a_kms_key_are_the_blocks_and_the_rules():
    from gpu_infra_facts.allowed import NAS_KMS_FILE_SYSTEM_TYPES
    from gpu_infra_facts.file_systems import FS_TYPES
    for kind in FS_TYPES.values():
        assert (kind.kms_encrypt_type == 2) is (kind.file_system_type in
                                                NAS_KMS_FILE_SYSTEM_TYPES), kind
