"""Bucket block: one private, encrypted OSS bucket per purpose, with lifecycle tiers.

Private twice over: `oss.BucketAcl` private (the Bucket's own `acl` argument is deprecated
since provider 1.220.0) and `oss.BucketPublicAccessBlock`, which also refuses public bucket
policies. Encryption, versioning and lifecycle are the Bucket's own blocks. The bucket is
protected in prod through `Conventions.data_options`.
"""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.bootstrap import NODE_OBJECTS_PREFIX
from gpu_infra.blocks.conventions import Conventions, child_name, fixed_name
from gpu_infra.schema import FleetCluster
from gpu_infra.schema.storage import LOG_BUCKET_SUFFIX, LifecycleConfig
from gpu_infra_facts.types import BUCKET

SSE_KMS, SSE_AES256 = "KMS", "AES256"
"""Server-side encryption algorithms the provider accepts (also SM4, unused)."""
ACL_PRIVATE = "private"
VERSIONING_ENABLED = "Enabled"


def bucket_prefix(cluster: FleetCluster) -> str:
    """`buckets.bucket_prefix`, else `<cluster name>-<environment>`."""
    return cluster.bucket_name_prefix


def bucket_purposes(cluster: FleetCluster) -> list[str]:
    """`buckets.purposes`, else the layout's default purposes."""
    return list(cluster.bucket_purposes)


def bucket_names(cluster: FleetCluster, conventions: Conventions) -> dict[str, str]:
    """Purpose -> bucket name (`<prefix>-<purpose>`, plus the stack's global suffix) of
    every bucket the cluster has."""
    return {purpose: conventions.unique_name(BUCKET, base)
            for purpose, base in cluster.bucket_base_names.items()}


def log_bucket_name(cluster: FleetCluster, conventions: Conventions) -> str | None:
    """The access-log bucket's name when bucket logging is on (default in prod), else
    None."""
    if not cluster.bucket_logging:
        return None
    return conventions.unique_name(BUCKET, f"{bucket_prefix(cluster)}-{LOG_BUCKET_SUFFIX}")


class Bucket(pulumi.ComponentResource):
    """One OSS bucket: private, public access blocked, server-side encrypted (KMS with
    `kms_key_id`, else AES256), optionally versioned, tiered and access-logged.

    Outputs: `bucket_name`, `bucket_id`, `intranet_endpoint`.
    """

    bucket: alicloud.oss.Bucket
    acl: alicloud.oss.BucketAcl
    public_access_block: alicloud.oss.BucketPublicAccessBlock
    logging: alicloud.oss.BucketLogging | None

    def __init__(self, name: str, *, config: LifecycleConfig, bucket_name: str,
                 conventions: Conventions, purpose: str | None = None,
                 versioning: bool = False,
                 kms_key_id: pulumi.Input[str] | None = None,
                 log_bucket: pulumi.Input[str] | None = None,
                 opts: pulumi.ResourceOptions | None = None):
        """`config`: tier transitions (for the buckets of `config.tiered_purposes` and the
        access-log bucket, `purpose` None) and multipart cleanup, and, with `versioning`
        (default off), when old versions expire; `bucket_name`: a valid OSS name (the
        schema's prefix rules make one); `log_bucket`: name of the bucket for access logs
        (default none)."""
        super().__init__("gpu-infra:storage:Bucket", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.bucket = alicloud.oss.Bucket(
            child_name(name, "bucket"), bucket=bucket_name,
            server_side_encryption_rule=alicloud.oss.BucketServerSideEncryptionRuleArgs(
                sse_algorithm=SSE_KMS, kms_master_key_id=kms_key_id) if kms_key_id else
            alicloud.oss.BucketServerSideEncryptionRuleArgs(sse_algorithm=SSE_AES256),
            versioning=alicloud.oss.BucketVersioningArgs(status=VERSIONING_ENABLED)
            if versioning else None,
            lifecycle_rules=[_lifecycle_rule(
                config.tiers(purpose), config.abort_multipart_days,
                config.noncurrent_version_days if versioning else None)],
            tags=conventions.tags_for(bucket_name),
            opts=pulumi.ResourceOptions.merge(conventions.data_options(self), fixed_name(self)))
        self.acl = alicloud.oss.BucketAcl(
            child_name(name, "acl"), bucket=self.bucket.bucket, acl=ACL_PRIVATE, opts=child)
        self.public_access_block = alicloud.oss.BucketPublicAccessBlock(
            child_name(name, "public-access-block"), bucket=self.bucket.bucket,
            block_public_access=True, opts=child)
        self.logging = alicloud.oss.BucketLogging(
            child_name(name, "logging"), bucket=self.bucket.bucket, target_bucket=log_bucket,
            target_prefix=f"{bucket_name}/", opts=child) if log_bucket is not None else None
        self.bucket_name: pulumi.Output[str] = self.bucket.bucket
        self.bucket_id: pulumi.Output[str] = self.bucket.id
        self.intranet_endpoint: pulumi.Output[str] = self.bucket.intranet_endpoint
        self.register_outputs({"bucket_name": self.bucket_name, "bucket_id": self.bucket_id,
                               "intranet_endpoint": self.intranet_endpoint})


def _lifecycle_rule(transitions: Mapping[str, int], abort_multipart_days: int,
                    noncurrent_version_days: int | None,
                    ) -> alicloud.oss.BucketLifecycleRuleArgs:
    """One rule over the whole bucket: tier transitions (warm to cold), multipart cleanup
    and, for a versioned bucket, expiry of old versions. The objects the nodes fetch
    (NODE_OBJECTS_PREFIX: the node tools) are left out of it (`filter.not`): an object in
    Archive answers GetObject with 403 InvalidObjectState until restored, so a node that
    boots months later could not fetch them. UNCONFIRMED: that OSS takes a Not prefix under
    the empty rule prefix (its lifecycle reference asks the Not prefix to start with the
    rule's)."""
    return alicloud.oss.BucketLifecycleRuleArgs(
        id="tiering", enabled=True, prefix="",
        filter=alicloud.oss.BucketLifecycleRuleFilterArgs(
            not_=alicloud.oss.BucketLifecycleRuleFilterNotArgs(prefix=NODE_OBJECTS_PREFIX))
        if transitions else None,
        transitions=[alicloud.oss.BucketLifecycleRuleTransitionArgs(storage_class=tier,
                                                                    days=days)
                     for tier, days in transitions.items()] or None,
        abort_multipart_uploads=[alicloud.oss.BucketLifecycleRuleAbortMultipartUploadArgs(
            days=abort_multipart_days)],
        noncurrent_version_expirations=[
            alicloud.oss.BucketLifecycleRuleNoncurrentVersionExpirationArgs(
                days=noncurrent_version_days)] if noncurrent_version_days else None)


__all__ = ["Bucket", "bucket_names"]
