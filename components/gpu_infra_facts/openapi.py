"""The Alibaba Cloud APIs `gpu-infra preflight` and live prices call: product, API version,
style and public endpoint of each. Sources: each product's API reference ("Endpoints" and
the version in its OpenAPI metadata): ECS 2014-05-26 (RPC, ecs.<region>.aliyuncs.com),
Container Service for Kubernetes 2015-12-15 (ROA, cs.<region>.aliyuncs.com), KMS 2016-01-20
(RPC, kms.<region>.aliyuncs.com), CloudMonitor 2019-01-01 (RPC, metrics.<region>.aliyuncs.com),
STS 2015-04-01 (RPC, sts.<region>.aliyuncs.com: GetCallerIdentity's AccountId), OSS (its own
signature, <bucket>.oss-<region>.aliyuncs.com), Simple Message Queue (formerly MNS)'s queue
API (its own signature, x-mns-version 2015-06-06, the account's endpoint
<account id>.mns.<region>.aliyuncs.com: "QueueURL" in its basic concepts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpu_infra_facts.cloudmonitor import CMS_API_VERSION


@dataclass(frozen=True)
class Product:
    """One product's API."""

    version: str
    style: Literal["rpc", "roa"]
    host: str
    """Endpoint host, `{region}` filled in."""


PRODUCTS: dict[str, Product] = {
    "ecs": Product("2014-05-26", "rpc", "ecs.{region}.aliyuncs.com"),
    "cs": Product("2015-12-15", "roa", "cs.{region}.aliyuncs.com"),
    "kms": Product("2016-01-20", "rpc", "kms.{region}.aliyuncs.com"),
    "cms": Product(CMS_API_VERSION, "rpc", "metrics.{region}.aliyuncs.com"),
    "sts": Product("2015-04-01", "rpc", "sts.{region}.aliyuncs.com"),
}
OSS_HOST = "{bucket}.oss-{region}.aliyuncs.com"
MNS_HOST = "{account}.mns.{region}.aliyuncs.com"
MNS_VERSION = "2015-06-06"
MNS_NAMESPACE = "http://mns.aliyuncs.com/doc/v1/"
"""The XML namespace of MNS's request and answer bodies."""
BUCKET_NAME_PATTERN = r"^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$"
"""OSS bucket names: 3-63 lower-case letters, digits and hyphens, not starting or ending with
a hyphen (OSS "Bucket naming conventions")."""
