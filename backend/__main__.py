"""Bootstrap of the team's Pulumi state backend: one OSS bucket, created once from a machine
with local state (`pulumi login file://.`, in this directory), that then holds the state of
every gpu-infra stack.

The bucket is gpu-infra's Bucket block: private (ACL and public access block), encrypted
(AES256, or KMS with `kmsKeyId`), versioned so a damaged or deleted state file can be
restored, with old versions expiring after `keepVersionsDays` (default 90) and stale
multipart uploads aborted after 7 days; never tiered (the CLI reads the state on every
command). Pulumi-protected, so `pulumi destroy` stops until someone unprotects it.

Config: `gpu-infra-state:bucket` (required, a globally unique OSS name),
`gpu-infra-state:prefix` (default `pulumi`), `gpu-infra-state:kmsKeyId`,
`gpu-infra-state:keepVersionsDays`, `alicloud:region`. Output `login`: the exact
`pulumi login` line for the bucket (docs/getting-started.md, "Using it for real", lists the
environment it needs).
"""

import pulumi

from gpu_infra.blocks.conventions import Conventions
from gpu_infra.blocks.storage.buckets import Bucket
from gpu_infra.schema import LifecycleConfig

STATE_PROJECT = "gpu-infra-state"
"""The project name (Pulumi.yaml); its config keys are `gpu-infra-state:<key>`."""
STATE_PURPOSE = "state"
"""Not one of the tiered purposes: state objects stay Standard."""


def login_line(bucket: str, prefix: str, region: str) -> str:
    """`pulumi login` for state under s3://<bucket>/<prefix> through OSS's S3-compatible
    endpoint (virtual-hosted addressing, HTTPS; no disableSSL, which newer CLIs turn into
    plain HTTP, and no s3ForcePathStyle, which OSS refuses)."""
    return (f"pulumi login 's3://{bucket}/{prefix}"
            f"?endpoint=https://s3.oss-{region}.aliyuncs.com&region={region}'")


config = pulumi.Config(STATE_PROJECT)
region = pulumi.Config("alicloud").require("region")
prefix = config.get("prefix") or "pulumi"
state = Bucket(
    "pulumi-state",
    config=LifecycleConfig(noncurrent_version_days=config.get_int("keepVersionsDays") or 90),
    bucket_name=config.require("bucket"), purpose=STATE_PURPOSE, versioning=True,
    kms_key_id=config.get("kmsKeyId"),
    conventions=Conventions(tags={"Project": "pulumi-state", "ManagedBy": "gpu-infra"},
                            protect_data=True, region=region))
pulumi.export("bucket", state.bucket_name)
pulumi.export("login", state.bucket_name.apply(lambda name: login_line(name, prefix, region)))
