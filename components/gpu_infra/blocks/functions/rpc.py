"""CloudMonitor calls over HTTPS with Alibaba Cloud's RPC signature (version 1.0,
HMAC-SHA1): PutCustomMetric (a fleet's queue metric) and DescribeMetricLast (a cloud
service's newest data point). Standard library and gpu_infra_facts only: the
`gpu-infra publish-queue-metric` command and the stack's Function Compute publisher
(queue_metric, shipped as source) both run it.

Facts (API, parameters, endpoint) are in gpu_infra_facts.cloudmonitor.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from gpu_infra_facts.cloudmonitor import (
    CMS_API_VERSION,
    CMS_SUCCESS_CODE,
    FLEET_DIMENSION,
    RAW_DATA_TYPE,
    cms_endpoint,
)

METADATA_URL = "http://100.100.100.200"
"""The ECS instance metadata service."""
METADATA_TOKEN_TTL = "21600"
"""Seconds a metadata token lives (the hardened mode asks for a token first)."""
TIMEOUT_SECONDS = 10
DATAPOINTS_PER_PAGE = 1000
"""DescribeMetricLast `Length`: data points per page (its maximum)."""
ENV_KEYS = (("ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
             "ALIBABA_CLOUD_SECURITY_TOKEN"),
            ("ALICLOUD_ACCESS_KEY", "ALICLOUD_SECRET_KEY", "ALICLOUD_SECURITY_TOKEN"))
"""Environment variables read for keys, in order: the Alibaba Cloud SDKs' names, then the
provider's."""


class PublishError(Exception):
    """The metric could not be sent: no credentials, network failure, or an API error."""


@dataclass(frozen=True)
class Credentials:
    """An AccessKey pair, with an STS token for role credentials."""

    access_key_id: str
    access_key_secret: str = field(repr=False)
    security_token: str | None = field(default=None, repr=False)

    @classmethod
    def resolve(cls, environ: Mapping[str, str] | None = None,
                metadata_url: str = METADATA_URL) -> Credentials:
        """Keys from the environment (ENV_KEYS), else the RAM role of the ECS instance this
        runs on (the fleet's node role), from the metadata service."""
        environ = os.environ if environ is None else environ
        for key_id, secret, token in ENV_KEYS:
            if environ.get(key_id) and environ.get(secret):
                return cls(environ[key_id], environ[secret], environ.get(token) or None)
        return cls._from_instance_role(metadata_url)

    @classmethod
    def _from_instance_role(cls, metadata_url: str) -> Credentials:
        headers: dict[str, str] = {}
        try:
            token_request = urllib.request.Request(
                f"{metadata_url}/latest/api/token", method="PUT",
                headers={"X-aliyun-ecs-metadata-token-ttl-seconds": METADATA_TOKEN_TTL})
            with urllib.request.urlopen(token_request, timeout=TIMEOUT_SECONDS) as answer:
                headers["X-aliyun-ecs-metadata-token"] = answer.read().decode()
        except (urllib.error.URLError, OSError):
            pass  # the metadata service also answers without a token unless hardened
        base = f"{metadata_url}/latest/meta-data/ram/security-credentials/"
        try:
            role = _get(base, headers).strip().splitlines()[0]
            document = json.loads(_get(base + role, headers))
        except (urllib.error.URLError, OSError, IndexError, ValueError) as error:
            raise PublishError(
                "no credentials: set ALIBABA_CLOUD_ACCESS_KEY_ID and "
                "ALIBABA_CLOUD_ACCESS_KEY_SECRET, or run on an instance with a RAM role "
                f"({error})") from None
        if document.get("Code") != "Success":
            raise PublishError(f"the instance role {role!r} has no credentials: "
                               f"{document.get('Code')}")
        return cls(document["AccessKeyId"], document["AccessKeySecret"],
                   document.get("SecurityToken"))


def _get(url: str, headers: Mapping[str, str]) -> str:
    request = urllib.request.Request(url, headers=dict(headers))
    with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:
        body: bytes = answer.read()
    return body.decode()


@dataclass(frozen=True)
class MetricPoint:
    """One value of a fleet's queue metric."""

    group_id: str
    """CloudMonitor application group (the stack output `metric_group_id`)."""
    metric_name: str
    value: float
    fleet: str
    """The fleet's name (the `fleet` dimension the scaling alarms match)."""
    timestamp_ms: int | None = None
    """When the value was measured. Default: now."""

    def parameters(self) -> dict[str, str]:
        """The MetricList.1.* request parameters."""
        return {
            "MetricList.1.GroupId": self.group_id,
            "MetricList.1.MetricName": self.metric_name,
            "MetricList.1.Dimensions": json.dumps({FLEET_DIMENSION: self.fleet},
                                                  separators=(",", ":")),
            "MetricList.1.Values": json.dumps({"value": self.value}, separators=(",", ":")),
            "MetricList.1.Time": str(self.timestamp_ms if self.timestamp_ms is not None
                                     else int(time.time() * 1000)),
            "MetricList.1.Type": RAW_DATA_TYPE,
        }


def _encode(text: str) -> str:
    """RFC 3986 percent-encoding, as the RPC signature requires."""
    return urllib.parse.quote(text, safe="-_.~")


def signed_request(action: str, parameters: Mapping[str, str], credentials: Credentials,
                   *, method: str = "POST", timestamp: str | None = None,
                   nonce: str | None = None) -> dict[str, str]:
    """`parameters` plus the common RPC parameters and their `Signature`."""
    query = {
        "Action": action, "Format": "JSON", "Version": CMS_API_VERSION,
        "AccessKeyId": credentials.access_key_id, "SignatureMethod": "HMAC-SHA1",
        "SignatureVersion": "1.0", "SignatureNonce": nonce or uuid.uuid4().hex,
        "Timestamp": timestamp or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **parameters}
    if credentials.security_token:
        query["SecurityToken"] = credentials.security_token
    canonical = "&".join(f"{_encode(key)}={_encode(value)}"
                         for key, value in sorted(query.items()))
    string_to_sign = f"{method}&{_encode('/')}&{_encode(canonical)}"
    digest = hmac.new(f"{credentials.access_key_secret}&".encode(), string_to_sign.encode(),
                      hashlib.sha1).digest()
    return {**query, "Signature": base64.b64encode(digest).decode()}


def cms_call(action: str, parameters: Mapping[str, str], *, region: str,
             credentials: Credentials, endpoint: str | None = None) -> dict[str, object]:
    """One signed CloudMonitor call; its JSON answer. Raises PublishError when CloudMonitor
    cannot be reached or refuses (a Code other than 200)."""
    body = urllib.parse.urlencode(signed_request(action, parameters, credentials)).encode()
    request = urllib.request.Request(
        endpoint or cms_endpoint(region), data=body, method="POST",
        headers={"Content-Type": "application/x-www-form-urlencoded"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:
            text = answer.read().decode()
    except urllib.error.HTTPError as error:
        text = error.read().decode(errors="replace")
    except (urllib.error.URLError, OSError) as error:
        raise PublishError(f"CloudMonitor unreachable: {error}") from None
    try:
        result = json.loads(text)
    except ValueError:
        raise PublishError(f"CloudMonitor answered something that is not JSON: "
                           f"{text[:200]!r}") from None
    if not isinstance(result, dict) or str(result.get("Code")) != CMS_SUCCESS_CODE:
        code, message = (result.get("Code"), result.get("Message")) \
            if isinstance(result, dict) else (None, text[:200])
        raise PublishError(f"CloudMonitor refused {action}: {code}: {message}")
    return result


def publish_queue_metric(point: MetricPoint, *, region: str, credentials: Credentials,
                         endpoint: str | None = None) -> str:
    """Send `point` with PutCustomMetric; return the request id. Raises PublishError."""
    result = cms_call("PutCustomMetric", point.parameters(), region=region,
                      credentials=credentials, endpoint=endpoint)
    return str(result.get("RequestId", ""))


def latest_datapoints(namespace: str, metric_name: str, *, region: str,
                      credentials: Credentials, endpoint: str | None = None,
                      ) -> list[dict[str, object]]:
    """The newest data point of `metric_name` for every resource of the account in
    `namespace` (DescribeMetricLast, every page). Raises PublishError."""
    points: list[dict[str, object]] = []
    cursor = ""
    while True:
        parameters = {"Namespace": namespace, "MetricName": metric_name,
                      "Length": str(DATAPOINTS_PER_PAGE)}
        if cursor:
            parameters["NextToken"] = cursor
        result = cms_call("DescribeMetricLast", parameters, region=region,
                          credentials=credentials, endpoint=endpoint)
        try:
            page = json.loads(str(result.get("Datapoints") or "[]"))
        except ValueError:
            raise PublishError(f"DescribeMetricLast: Datapoints is not JSON: "
                               f"{str(result.get('Datapoints'))[:200]!r}") from None
        points += [point for point in page if isinstance(point, dict)]
        cursor = str(result.get("NextToken") or "")
        if not cursor:
            return points
