"""Storage rules: OSS buckets and objects private (ACLs and bucket policies), encrypted and
access-logged in prod; NAS file systems and KMS keys."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gpu_infra_facts import types as t
from gpu_infra_facts.addresses import world_open
from gpu_infra_policies.base import (
    Context,
    Resource,
    ResourceRule,
    Rule,
    StackRule,
    is_unknown,
    number,
)
from gpu_infra_policies.documents import strings
from gpu_infra_policies.iam import any_account, statements_of

PUBLIC_ACLS = ("public-read", "public-read-write")
"""OSS ACLs that open objects to anonymous users (bucket ACL default private, object ACL
default `default`: the bucket's)."""
SOURCE_IP = "acs:sourceip"


def _condition_restricts(condition: Any) -> bool:
    """True if a bucket policy condition limits who is admitted: any condition except an
    acs:SourceIp list that is itself world-open (addresses.world_open)."""
    if not isinstance(condition, Mapping):
        return False
    for operator, block in condition.items():
        if not isinstance(block, Mapping):
            continue
        for key, values in block.items():
            if str(key).lower() != SOURCE_IP or str(operator).lower() != "ipaddress":
                return True
            if world_open(strings(values)) is None:
                return True
    return False


def public_buckets(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """Bucket ACLs private (oss.BucketAcl, the deprecated oss.Bucket acl); object ACLs never
    public (oss.BucketObject); bucket policies (oss.BucketPolicy, oss.Bucket policy) grant
    nothing to the anonymous principal `*` unless a condition limits it (an acs:SourceIp
    list judged by address space)."""
    acl = resource.props.get("acl")
    if resource.type in (t.BUCKET_ACL, t.BUCKET, t.BUCKET_OBJECT) and acl in PUBLIC_ACLS:
        what = "object" if resource.type == t.BUCKET_OBJECT else "bucket"
        yield f"{what} ACL {acl} makes objects public; use private"
    if resource.type in (t.BUCKET_POLICY, t.BUCKET):
        for statement in statements_of(resource):
            anyone = any_account(statement.principal)
            if statement.allows and anyone and not _condition_restricts(statement.condition):
                yield (f"bucket policy allows {sorted(statement.actions) or 'actions'} to "
                       "the anonymous principal *; grant named RAM principals or limit it "
                       "with a condition (acs:SourceVpc)")


def _buckets_with(resources: Sequence[Resource], companion_type: str,
                  accept: str | None = None, value: Any = None,
                  target: str = "bucket") -> set[str]:
    """URNs of buckets that a companion resource of `companion_type` points at through its
    `target` input (optionally only companions whose `accept` input is `value` or
    unknown)."""
    buckets = [r for r in resources if r.type == t.BUCKET]
    found: set[str] = set()
    for companion in (r for r in resources if r.type == companion_type):
        if accept is not None:
            setting = companion.props.get(accept)
            if not is_unknown(setting) and setting != value:
                continue
        for bucket in buckets:
            if _points_at(companion, bucket, companion.props.get(target)):
                found.add(bucket.urn)
    return found


def _points_at(companion: Resource, bucket: Resource, value: Any) -> bool:
    """By value (the bucket's name or id) when known, else by dependency."""
    if value is not None and not is_unknown(value):
        return value in (bucket.id, bucket.props.get("bucket"))
    return companion.refers_to(bucket, value, "bucket")


def bucket_encrypted(resources: Sequence[Resource], _: Mapping[str, Any],
                     __: Context) -> Iterator[tuple[Resource | None, str]]:
    """Each bucket has serverSideEncryptionRule or an oss.BucketServerSideEncryption."""
    covered = _buckets_with(resources, t.BUCKET_ENCRYPTION)
    for bucket in (r for r in resources if r.type == t.BUCKET):
        if bucket.urn not in covered and bucket.props.get("serverSideEncryptionRule") is None:
            yield bucket, ("bucket has no server-side encryption (serverSideEncryptionRule "
                           "or oss.BucketServerSideEncryption)")


def public_access_blocked(resources: Sequence[Resource], _: Mapping[str, Any],
                          __: Context) -> Iterator[tuple[Resource | None, str]]:
    """Each bucket has an oss.BucketPublicAccessBlock with blockPublicAccess true."""
    for block in (r for r in resources if r.type == t.BUCKET_PUBLIC_ACCESS_BLOCK):
        if block.props.get("blockPublicAccess") is False:
            yield block, "blockPublicAccess is false"
    covered = _buckets_with(resources, t.BUCKET_PUBLIC_ACCESS_BLOCK, "blockPublicAccess", True)
    for bucket in (r for r in resources if r.type == t.BUCKET):
        if bucket.urn not in covered:
            yield bucket, "bucket has no oss.BucketPublicAccessBlock with blockPublicAccess true"


def _logs_inline(bucket: Resource) -> Any:
    logging = bucket.props.get("logging")
    return logging.get("targetBucket") if isinstance(logging, Mapping) else None


def bucket_logging(resources: Sequence[Resource], _: Mapping[str, Any],
                   ctx: Context) -> Iterator[tuple[Resource | None, str]]:
    """Buckets write access logs where the environment demands it (prod: inline `logging`,
    or an oss.BucketLogging); a bucket that receives other buckets' logs is exempt (it is
    the log)."""
    buckets = [r for r in resources if r.type == t.BUCKET]
    logged = _buckets_with(resources, t.BUCKET_LOGGING)
    log_targets = _buckets_with(resources, t.BUCKET_LOGGING, target="targetBucket")
    inline_targets = [_logs_inline(b) for b in buckets]
    for bucket in buckets:
        environment = ctx.demanded_by(bucket, "access_logs")
        if not environment or bucket.urn in logged or _logs_inline(bucket):
            continue
        if bucket.urn in log_targets or any(_points_at(bucket, bucket, target)
                                            for target in inline_targets if target):
            continue
        yield bucket, (f"{environment} bucket keeps no access log; add an oss.BucketLogging "
                       f"to a logs bucket (storage.buckets.logging, on in {environment})")


def nas_encrypted(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """NAS file systems are encrypted (encryptType 1 NAS-managed key or 2 KMS; provider
    default 0, none)."""
    if resource.type == t.NAS_FILE_SYSTEM:
        encrypt = resource.props.get("encryptType", 0)
        if not is_unknown(encrypt) and number(encrypt) not in (1, 2):
            yield "file system is not encrypted (encryptType 0); set 1 or, with a KMS key, 2"


def kms_rotation(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """KMS keys rotate automatically (automaticRotation Enabled; provider default
    Disabled)."""
    if resource.type == t.KMS_KEY:
        rotation = resource.props.get("automaticRotation", "Disabled")
        if not is_unknown(rotation) and rotation != "Enabled":
            yield f"automaticRotation is {rotation}; set Enabled"


STORAGE_RULES: tuple[Rule, ...] = (
    ResourceRule("oss-bucket-private", "OSS buckets and objects are not public (ACLs, bucket "
                 "policies)", "security", "critical",
                 "Set bucket and object ACLs to private; grant bucket policies to named RAM "
                 "principals; share data with signed URLs.", public_buckets, concern="data",
                 reviews=frozenset({t.BUCKET, t.BUCKET_ACL, t.BUCKET_OBJECT, t.BUCKET_POLICY})),
    StackRule("oss-bucket-encrypted", "Every OSS bucket has server-side encryption", "security",
              "high", "Add serverSideEncryptionRule (KMS in prod) or an "
              "oss.BucketServerSideEncryption for the bucket.", bucket_encrypted, concern="data",
                 reviews=frozenset({t.BUCKET, t.BUCKET_ENCRYPTION})),
    StackRule("oss-public-access-blocked", "Every OSS bucket blocks public access", "security",
              "high", "Add an oss.BucketPublicAccessBlock with blockPublicAccess true for the "
              "bucket.", public_access_blocked, concern="data",
                 reviews=frozenset({t.BUCKET, t.BUCKET_PUBLIC_ACCESS_BLOCK})),
    StackRule("prod-bucket-logging", "Prod buckets keep access logs", "security", "medium",
              "Add an oss.BucketLogging targeting a versioned logs bucket (on by default in "
              "prod: storage.buckets.logging).", bucket_logging, concern="audit and logs",
                 reviews=frozenset({t.BUCKET, t.BUCKET_LOGGING})),
    ResourceRule("nas-encrypted", "NAS file systems are encrypted", "security", "high",
                 "Set encryptType 1 (NAS-managed key) or 2 with a KMS key.", nas_encrypted,
                 concern="data",
                 reviews=frozenset({t.NAS_FILE_SYSTEM})),
    ResourceRule("kms-key-rotation", "KMS keys rotate automatically", "security", "medium",
                 "Set automaticRotation Enabled with a rotationInterval.", kms_rotation,
                 concern="data",
                 reviews=frozenset({t.KMS_KEY})),
)
