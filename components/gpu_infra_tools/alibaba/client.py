"""A small Alibaba Cloud API client: RPC and ROA calls signed with V3 (ACS3-HMAC-SHA256), OSS
GetBucketInfo signed with OSS V1, and MNS SendMessage (the one call that writes: a job for a
render farm's queue) signed with the MNS signature.

Every argument is checked before any network call (`ClientError`). The endpoint is the
product's public one (gpu_infra_facts.openapi) unless the client is given `endpoint`, one base
URL for every product (a proxy, or a stand-in in tests); then OSS is addressed path-style.
Keys never appear in an error, a log or a repr.
"""

from __future__ import annotations

import email.utils
import json
import re
import urllib.error
import urllib.parse
import urllib.request
import uuid
import xml.etree.ElementTree as ElementTree
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any
from xml.sax.saxutils import escape

from gpu_infra.blocks.functions.rpc import Credentials
from gpu_infra_facts.openapi import (
    BUCKET_NAME_PATTERN,
    MNS_HOST,
    MNS_NAMESPACE,
    MNS_VERSION,
    OSS_HOST,
    PRODUCTS,
)
from gpu_infra_tools.alibaba.signing import EMPTY_SHA256, oss_authorization, v3_authorization

TIMEOUT_SECONDS = 20
REGION_PATTERN = re.compile(r"^[a-z]{2,3}(-[a-z0-9]+){1,3}$")
ACTION_PATTERN = re.compile(r"^[A-Z][A-Za-z0-9]{2,80}$")
PARAMETER_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_.]{0,100}$")
ENDPOINT_PATTERN = re.compile(r"^https?://[A-Za-z0-9.\-\[\]:]+/?$")
QUEUE_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,255}$")
"""MNS queue names: up to 256 letters, digits and hyphens, starting with a letter or digit."""
ACCOUNT_ID_PATTERN = re.compile(r"^[0-9]{1,20}$")
MAX_MESSAGE_BYTES = 65536
"""The largest message body MNS takes (a queue's MaximumMessageSize: 1024 to 65536 bytes)."""


CREDENTIAL_CODES = ("InvalidAccessKeyId.NotFound", "InvalidAccessKeyId.Inactive",
                    "SignatureDoesNotMatch", "IncompleteSignature",
                    "InvalidSecurityToken.Expired", "InvalidSecurityToken.Malformed")
"""Error codes that refuse the credentials themselves: every call fails alike."""


class ClientError(ValueError):
    """A call's arguments are wrong; nothing was sent."""


@dataclass
class ApiError(Exception):
    """The API refused the call, or could not be reached (code `Unreachable`)."""

    action: str
    status: int
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.action}: {self.code}: {self.message}"

    @property
    def about_the_account(self) -> bool:
        """Whether every other call would fail alike: unreachable, keys refused, or no
        permission (Forbidden*)."""
        return self.status == 0 or self.code in CREDENTIAL_CODES or \
            self.code.startswith("Forbidden")


@dataclass
class AlibabaClient:
    """Signed calls in one region with one set of credentials."""

    credentials: Credentials = field(repr=False)
    region: str
    endpoint: str | None = None
    """One base URL for every product (http or https, no path); None = the public ones."""
    calls: list[str] = field(default_factory=list)
    """The actions called, in order (for reports and tests)."""

    def __post_init__(self) -> None:
        if not REGION_PATTERN.match(self.region):
            raise ClientError(f"region {self.region!r} is not a region id (e.g. cn-hangzhou)")
        if self.endpoint is not None and not ENDPOINT_PATTERN.match(self.endpoint):
            raise ClientError(f"endpoint {self.endpoint!r} is not a base URL "
                              "(http[s]://host[:port], no path)")

    def _base(self, host: str) -> str:
        return self.endpoint.rstrip("/") if self.endpoint else f"https://{host}"

    def rpc(self, product: str, action: str,
            parameters: Mapping[str, str | int | float | bool] | None = None) -> Any:
        """Call RPC `action` of `product` (a key of PRODUCTS) with `parameters`."""
        _product(product, "rpc")
        query = {name: _text(name, value) for name, value in (parameters or {}).items()}
        answer = self._v3(product, action, "POST", "/", query)
        if not isinstance(answer, dict):
            raise ApiError(action, 200, "UnexpectedAnswer",
                           f"a JSON {type(answer).__name__}, not an object")
        return answer

    def roa(self, product: str, action: str, path: str,
            query: Mapping[str, str] | None = None) -> Any:
        """GET ROA `action` of `product` at `path` with `query`."""
        _product(product, "roa")
        if not path.startswith("/") or "?" in path or ".." in path:
            raise ClientError(f"{action}: path {path!r} must start with / and hold no query")
        return self._v3(product, action, "GET", path,
                        {name: _text(name, value) for name, value in (query or {}).items()})

    def _v3(self, product: str, action: str, method: str, path: str,
            query: dict[str, str]) -> Any:
        if not ACTION_PATTERN.match(action):
            raise ClientError(f"action {action!r} is not an API action name")
        api = PRODUCTS[product]
        host = api.host.format(region=self.region)
        base = self._base(host)
        headers = {
            "host": urllib.parse.urlsplit(base).netloc,
            "x-acs-action": action, "x-acs-version": api.version,
            "x-acs-date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "x-acs-signature-nonce": uuid.uuid4().hex,
            "x-acs-content-sha256": EMPTY_SHA256,
        }
        if self.credentials.security_token:
            headers["x-acs-security-token"] = self.credentials.security_token
        headers["Authorization"] = v3_authorization(
            self.credentials.access_key_id, self.credentials.access_key_secret, method, path,
            query, headers, EMPTY_SHA256)
        url = f"{base}{path}" + (f"?{urllib.parse.urlencode(query, quote_via=urllib.parse.quote)}"
                                 if query else "")
        self.calls.append(action)
        status, body = _send(action, urllib.request.Request(url, method=method,
                                                            headers=headers))
        try:
            document = json.loads(body) if body else {}
        except ValueError:
            raise ApiError(action, status, "NotJson", body[:200].decode(errors="replace")) \
                from None
        if status >= 400:
            document = document if isinstance(document, dict) else {}
            raise ApiError(action, status,
                           str(document.get("Code") or document.get("code") or status),
                           str(document.get("Message") or document.get("message") or ""))
        return document

    def bucket_info(self, bucket: str) -> tuple[int, str]:
        """OSS GetBucketInfo of `bucket`: (HTTP status, error code or "")."""
        if not re.match(BUCKET_NAME_PATTERN, bucket):
            raise ClientError(f"bucket {bucket!r} is not an OSS bucket name")
        if self.endpoint:
            url = f"{self._base('')}/{bucket}/?bucketInfo"
        else:
            url = f"https://{OSS_HOST.format(bucket=bucket, region=self.region)}/?bucketInfo"
        headers = {"Date": email.utils.formatdate(usegmt=True)}
        if self.credentials.security_token:
            headers["x-oss-security-token"] = self.credentials.security_token
        headers["Authorization"] = oss_authorization(
            self.credentials.access_key_id, self.credentials.access_key_secret, "GET",
            headers, f"/{bucket}/?bucketInfo")
        self.calls.append("GetBucketInfo")
        status, body = _send("GetBucketInfo", urllib.request.Request(url, headers=headers))
        if status < 400:
            return status, ""
        try:
            code = ElementTree.fromstring(body).findtext("Code") or ""
        except ElementTree.ParseError:
            code = ""
        return status, code


    def account_id(self) -> str:
        """The account of the credentials (STS GetCallerIdentity's AccountId)."""
        account = str(self.rpc("sts", "GetCallerIdentity").get("AccountId", ""))
        if not ACCOUNT_ID_PATTERN.match(account):
            raise ApiError("GetCallerIdentity", 200, "UnexpectedAnswer", "no AccountId")
        return account

    def send_message(self, account_id: str, queue: str, body: str) -> str:
        """MNS SendMessage of `body` to `queue` of `account_id`'s MNS in the region (POST
        /queues/<queue>/messages, `<Message><MessageBody>`; 201 with its MessageId)."""
        if not ACCOUNT_ID_PATTERN.match(account_id):
            raise ClientError(f"account id {account_id!r} is not an Alibaba Cloud account id")
        if not QUEUE_NAME_PATTERN.match(queue):
            raise ClientError(f"queue {queue!r} is not an MNS queue name")
        if len(body.encode()) > MAX_MESSAGE_BYTES:
            raise ClientError(f"a message of {len(body.encode())} bytes is over MNS's "
                              f"{MAX_MESSAGE_BYTES}")
        resource = f"/queues/{queue}/messages"
        base = self._base(MNS_HOST.format(account=account_id, region=self.region))
        data = (f'<?xml version="1.0" encoding="UTF-8"?><Message xmlns="{MNS_NAMESPACE}">'
                f"<MessageBody>{escape(body)}</MessageBody></Message>").encode()
        headers = {"Content-Type": "text/xml;charset=utf-8",
                   "Date": email.utils.formatdate(usegmt=True), "x-mns-version": MNS_VERSION}
        if self.credentials.security_token:
            headers["security-token"] = self.credentials.security_token
        headers["Authorization"] = oss_authorization(
            self.credentials.access_key_id, self.credentials.access_key_secret, "POST",
            headers, resource, scheme="MNS")
        self.calls.append("SendMessage")
        status, answer = _send("SendMessage", urllib.request.Request(
            base.rstrip("/") + resource, data=data, headers=headers, method="POST"))
        try:
            document = ElementTree.fromstring(answer)
        except ElementTree.ParseError:
            raise ApiError("SendMessage", status, "NotXml",
                           answer[:200].decode(errors="replace")) from None
        found = {child.tag.rsplit("}", 1)[-1]: child.text or "" for child in document}
        if status >= 400 or not found.get("MessageId"):
            raise ApiError("SendMessage", status, found.get("Code") or str(status),
                           found.get("Message", ""))
        return found["MessageId"]


def _product(product: str, style: str) -> None:
    api = PRODUCTS.get(product)
    if api is None or api.style != style:
        known = ", ".join(name for name, p in PRODUCTS.items() if p.style == style)
        raise ClientError(f"{product!r} is not a known {style.upper()} product ({known})")


def _text(name: str, value: str | int | float | bool) -> str:
    if not PARAMETER_PATTERN.match(name):
        raise ClientError(f"parameter name {name!r} is not allowed")
    if isinstance(value, bool):
        return "true" if value else "false"
    if not isinstance(value, (str, int, float)):
        raise ClientError(f"parameter {name}: {type(value).__name__} is not a text or number")
    return str(value)


def _send(action: str, request: urllib.request.Request) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise ApiError(action, 0, "Unreachable", str(reason)) from None
