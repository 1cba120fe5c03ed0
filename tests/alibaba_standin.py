"""A stand-in for the Alibaba Cloud APIs `gpu-infra preflight` and live prices call, on
127.0.0.1, with an account whose state each test sets.

What it imitates:
- the V3 signature check (ACS3-HMAC-SHA256), recomputed here from the documented algorithm
  (help.aliyun.com/zh/sdk/product-overview/v3-request-structure-and-signature), not with the
  product's signing code: a wrong signature answers 400 SignatureDoesNotMatch, an unknown key
  404 InvalidAccessKeyId.NotFound, a date off by more than 15 minutes 400
  InvalidTimeStamp.Expired, a nonce used twice 400 SignatureNonceUsed, an action of another
  product's version 400 InvalidVersion;
- the OSS V1 signature (OSS "Include a V1 signature in the Authorization header") and
  GetBucketInfo's answers: 200 BucketInfo XML, 404 NoSuchBucket, 403 AccessDenied;
- the ECS metadata service's RAM-role keys (token first);
- MNS SendMessage (POST /queues/<queue>/messages, the MNS signature: the OSS V1 lines with the
  x-mns- headers, "MNS AccessKeyId:Signature"; 201 with MessageId and MessageBodyMD5, 404
  QueueNotExist for a queue the account lacks) into `Account.queues`;
- each API's answer in the shape of its API reference's response example (cited at each
  builder), filled from the account state.
What it does not imitate: pagination beyond one page, throttling, RAM permissions per action,
the filters of each API beyond those preflight sends, real stock or prices.
"""

from __future__ import annotations

import base64
import email.utils
import hashlib
import hmac
import json
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from xml.etree import ElementTree

KEY_ID, SECRET = "LTAI-standin-key", "standin-secret"
ROLE_KEYS = {"Code": "Success", "AccessKeyId": "STS.standin-role", "AccessKeySecret": SECRET,
             "SecurityToken": "standin-token", "Expiration": "2099-01-01T00:00:00Z"}
VERSIONS = {"2014-05-26": "ecs", "2015-12-15": "cs", "2016-01-20": "kms", "2019-01-01": "cms",
            "2015-04-01": "sts"}
ACCOUNT_ID = "1234567890123456"
MAX_SKEW_SECONDS = 15 * 60


def _enc(text: str) -> str:
    return urllib.parse.quote(text, safe="-_.~")


def expected_v3_signature(method: str, path: str, query: dict[str, str],
                          headers: dict[str, str], secret: str) -> str:
    """The documented V3 algorithm, written out independently of the product's code."""
    names = sorted(n for n in headers if n in ("host", "content-type") or n.startswith("x-acs-"))
    canonical = "\n".join([
        method, path,
        "&".join(f"{_enc(k)}={_enc(v)}" for k, v in sorted(query.items())),
        "".join(f"{n}:{headers[n].strip()}\n" for n in names), ";".join(names),
        headers.get("x-acs-content-sha256", "")])
    to_sign = "ACS3-HMAC-SHA256\n" + hashlib.sha256(canonical.encode()).hexdigest()
    return hmac.new(secret.encode(), to_sign.encode(), hashlib.sha256).hexdigest()


@dataclass
class Account:
    """What the account answers. Defaults: nothing in stock, nothing exists."""

    stock: dict[str, set[str]] = field(default_factory=dict)
    """Zone -> instance types sold on demand (and by subscription) with stock."""
    spot_stock: dict[str, set[str]] = field(default_factory=dict)
    quotas: dict[str, int] = field(default_factory=lambda: {
        "max-postpaid-instance-vcpu-count": 2000, "max-spot-instance-vcpu-count": 2000})
    vcpus: dict[str, int] = field(default_factory=dict)
    """Instance type -> vCPUs (DescribeInstanceTypes)."""
    spot_prices: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    """(type, zone) -> (spot price, on-demand price)."""
    interruptions: dict[tuple[str, str], float] = field(default_factory=dict)
    """(type, zone) -> 30-day interruption rate, percent."""
    k8s_versions: dict[str, bool] = field(default_factory=dict)
    """Version -> creatable."""
    addons: dict[str, str] = field(default_factory=dict)
    images: dict[str, str] = field(default_factory=dict)
    """Image id -> Status."""
    kms_keys: dict[str, str] = field(default_factory=dict)
    """Key id -> KeyState."""
    buckets: dict[str, str] = field(default_factory=dict)
    """Bucket name -> "mine" or "other"."""
    contacts: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Contact name -> (mail, mail channel state: OK or PENDING)."""
    dry_run_code: str = "DryRunOperation"
    prices: dict[str, float] = field(default_factory=dict)
    """Instance type -> pay-as-you-go price per hour (DescribePrice)."""
    currency: str = "CNY"
    """DescribePrice's currency (an international-site account is billed in USD)."""
    refuse: dict[str, tuple[int, str]] = field(default_factory=dict)
    """Action -> (HTTP status, error code) to answer instead."""
    garbage: dict[str, Any] = field(default_factory=dict)
    """Action -> a JSON document answered with 200 instead (a hostile or changed API)."""
    queues: dict[str, list[str]] = field(default_factory=dict)
    """MNS queue -> the bodies sent to it (a queue not listed does not exist)."""


class StandIn:
    """The server; `requests` records (action, parameters) of every signed call."""

    def __init__(self, account: Account) -> None:
        self.account = account
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.metadata_hits = 0
        self.nonces: set[str] = set()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def answer(self, status: int, body: str, kind: str = "application/json") -> None:
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_PUT(self) -> None:
                stand_in.metadata_hits += 1
                self.answer(200, "meta-token", "text/plain")

            def do_POST(self) -> None:
                if self.path.startswith("/queues/"):
                    return self.answer(*stand_in.mns(self), "text/xml")
                self.answer(*stand_in.api(self), "application/json")

            def do_GET(self) -> None:
                if self.path.startswith("/latest/"):
                    stand_in.metadata_hits += 1
                    return self.answer(*stand_in.metadata(self), "text/plain")
                if "bucketInfo" in self.path:
                    return self.answer(*stand_in.oss(self), "application/xml")
                self.answer(*stand_in.api(self), "application/json")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def actions(self) -> list[str]:
        """The actions called, in order."""
        return [action for action, _ in self.requests]

    def metadata(self, request: BaseHTTPRequestHandler) -> tuple[int, str]:
        if request.headers.get("X-aliyun-ecs-metadata-token") != "meta-token":
            return 403, "no token"
        base = "/latest/meta-data/ram/security-credentials/"
        if request.path == base:
            return 200, "standin-role"
        if request.path == base + "standin-role":
            return 200, json.dumps(ROLE_KEYS)
        return 404, ""

    def api(self, request: BaseHTTPRequestHandler) -> tuple[int, str]:
        split = urllib.parse.urlsplit(request.path)
        query = dict(urllib.parse.parse_qsl(split.query, keep_blank_values=True))
        headers = {name.lower(): value for name, value in request.headers.items()}
        action = headers.get("x-acs-action", "")
        refused = self._refuse_signature(request.command, split.path, query, headers)
        if refused:
            return refused
        self.requests.append((action, query))
        product = VERSIONS.get(headers.get("x-acs-version", ""))
        handler = HANDLERS.get((product or "", action))
        if handler is None:
            return 400, json.dumps({"Code": "InvalidVersion", "Message":
                                    f"{action} is not an action of {product}"})
        if action in self.account.garbage:
            return 200, json.dumps(self.account.garbage[action])
        if action in self.account.refuse:
            status, code = self.account.refuse[action]
            return status, json.dumps({"Code": code, "Message": f"stand-in refuses {action}",
                                       "RequestId": "standin"})
        return handler(self.account, query)

    def _refuse_signature(self, method: str, path: str, query: dict[str, str],
                          headers: dict[str, str]) -> tuple[int, str] | None:
        def error(status: int, code: str) -> tuple[int, str]:
            return status, json.dumps({"Code": code, "Message": code, "RequestId": "standin"})
        authorization = headers.get("authorization", "")
        prefix = "ACS3-HMAC-SHA256 "
        if not authorization.startswith(prefix):
            return error(400, "IncompleteSignature")
        parts = dict(part.split("=", 1) for part in authorization[len(prefix):].split(","))
        secret = {KEY_ID: SECRET, ROLE_KEYS["AccessKeyId"]: SECRET}.get(parts.get("Credential"))
        if secret is None:
            return error(404, "InvalidAccessKeyId.NotFound")
        if parts.get("Credential") == ROLE_KEYS["AccessKeyId"] and \
                headers.get("x-acs-security-token") != ROLE_KEYS["SecurityToken"]:
            return error(400, "InvalidSecurityToken.Malformed")
        signed = [n for n in headers if n in ("host", "content-type") or n.startswith("x-acs-")]
        if parts.get("SignedHeaders") != ";".join(sorted(signed)):
            return error(400, "IncompleteSignature")
        if headers.get("x-acs-content-sha256") != hashlib.sha256(b"").hexdigest():
            return error(400, "SignatureDoesNotMatch")
        if parts.get("Signature") != expected_v3_signature(method, path, query, headers, secret):
            return error(400, "SignatureDoesNotMatch")
        date = datetime.strptime(headers.get("x-acs-date", ""), "%Y-%m-%dT%H:%M:%SZ") \
            .replace(tzinfo=timezone.utc)
        if abs((datetime.now(timezone.utc) - date).total_seconds()) > MAX_SKEW_SECONDS:
            return error(400, "InvalidTimeStamp.Expired")
        nonce = headers.get("x-acs-signature-nonce", "")
        if not nonce or nonce in self.nonces:
            return error(400, "SignatureNonceUsed")
        self.nonces.add(nonce)
        return None

    def mns(self, request: BaseHTTPRequestHandler) -> tuple[int, str]:
        """SendMessage, its MNS signature recomputed from the documented lines."""
        path = urllib.parse.urlsplit(request.path).path
        headers = {name.lower(): value for name, value in request.headers.items()}
        body = request.rfile.read(int(headers.get("content-length") or 0)).decode()
        own = "".join(f"{n}:{headers[n].strip()}\n" for n in sorted(headers)
                      if n.startswith("x-mns-"))
        to_sign = "\n".join(["POST", headers.get("content-md5", ""),
                             headers.get("content-type", ""), headers.get("date", ""),
                             f"{own}{path}"])
        digest = base64.b64encode(hmac.new(SECRET.encode(), to_sign.encode(),
                                           hashlib.sha1).digest()).decode()
        key_id = headers.get("authorization", "").removeprefix("MNS ").split(":")[0]
        if headers.get("authorization") != f"MNS {key_id}:{digest}" or \
                key_id not in (KEY_ID, ROLE_KEYS["AccessKeyId"]) or \
                headers.get("x-mns-version") != "2015-06-06":
            return 403, "<Error><Code>SignatureDoesNotMatch</Code></Error>"
        queue = path.split("/")[2]
        self.requests.append(("SendMessage", {"queue": queue}))
        if queue not in self.account.queues:
            return 404, ("<Error><Code>QueueNotExist</Code><Message>The queue name you "
                         "provided is not exist.</Message></Error>")
        text = ElementTree.fromstring(body).findtext(
            "{http://mns.aliyuncs.com/doc/v1/}MessageBody") or ""
        self.account.queues[queue].append(text)
        return 201, (f"<Message><MessageId>msg-{len(self.account.queues[queue])}</MessageId>"
                     f"<MessageBodyMD5>{hashlib.md5(text.encode()).hexdigest().upper()}"
                     "</MessageBodyMD5></Message>")

    def oss(self, request: BaseHTTPRequestHandler) -> tuple[int, str]:
        bucket = urllib.parse.urlsplit(request.path).path.strip("/")
        headers = {name.lower(): value for name, value in request.headers.items()}
        oss_headers = "".join(f"{n}:{headers[n].strip()}\n" for n in sorted(headers)
                              if n.startswith("x-oss-"))
        to_sign = "\n".join(["GET", headers.get("content-md5", ""),
                             headers.get("content-type", ""), headers.get("date", ""),
                             f"{oss_headers}/{bucket}/?bucketInfo"])
        digest = base64.b64encode(hmac.new(SECRET.encode(), to_sign.encode(),
                                           hashlib.sha1).digest()).decode()
        key_id = headers.get("authorization", "").removeprefix("OSS ").split(":")[0]
        sent = email.utils.parsedate_to_datetime(headers.get("date", "Thu, 01 Jan 1970 "
                                                             "00:00:00 GMT"))
        if headers.get("authorization") != f"OSS {key_id}:{digest}" or \
                key_id not in (KEY_ID, ROLE_KEYS["AccessKeyId"]) or \
                abs((datetime.now(timezone.utc) - sent).total_seconds()) > MAX_SKEW_SECONDS:
            return 403, _oss_error("SignatureDoesNotMatch", bucket)
        self.requests.append(("GetBucketInfo", {"bucket": bucket}))
        owner = self.account.buckets.get(bucket)
        if owner is None:
            return 404, _oss_error("NoSuchBucket", bucket)
        if owner == "other":
            return 403, _oss_error("AccessDenied", bucket)
        # OSS GetBucketInfo response example
        # (help.aliyun.com/zh/oss/developer-reference/getbucketinfo)
        return 200, (f"<?xml version=\"1.0\" encoding=\"UTF-8\"?><BucketInfo><Bucket>"
                     f"<Name>{bucket}</Name><Location>oss-cn-hangzhou</Location>"
                     "<StorageClass>Standard</StorageClass></Bucket></BucketInfo>")


def _oss_error(code: str, bucket: str) -> str:
    # OSS error response (help.aliyun.com/zh/oss/developer-reference/error-responses)
    return (f"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{code}</Code>"
            f"<Message>{code}</Message><RequestId>standin</RequestId>"
            f"<BucketName>{bucket}</BucketName></Error>")


def _ok(document: dict[str, Any] | list[Any]) -> tuple[int, str]:
    return 200, json.dumps(document)


def _available_resource(account: Account, query: dict[str, str]) -> tuple[int, str]:
    # ECS DescribeAvailableResource response example
    # (help.aliyun.com/zh/ecs/developer-reference/api-ecs-2014-05-26-describeavailableresource)
    stock = account.spot_stock if query.get("SpotStrategy", "NoSpot") != "NoSpot" \
        else account.stock
    zones = [{"ZoneId": zone, "RegionId": query["RegionId"], "Status": "Available",
              "StatusCategory": "WithStock",
              "AvailableResources": {"AvailableResource": [{
                  "Type": "InstanceType",
                  "SupportedResources": {"SupportedResource": [
                      {"Value": kind, "Status": "Available", "StatusCategory": "WithStock",
                       "Min": 1, "Max": 2, "Unit": ""} for kind in sorted(kinds)]}}]}}
             for zone, kinds in sorted(stock.items())]
    return _ok({"RequestId": "standin", "AvailableZones": {"AvailableZone": zones}})


def _account_attributes(account: Account, query: dict[str, str]) -> tuple[int, str]:
    # ECS DescribeAccountAttributes response example
    # (help.aliyun.com/zh/ecs/developer-reference/api-ecs-2014-05-26-describeaccountattributes)
    wanted = [v for k, v in sorted(query.items()) if k.startswith("AttributeName.")]
    return _ok({"RequestId": "standin", "AccountAttributeItems": {"AccountAttributeItem": [
        {"AttributeName": name, "AttributeValues": {"ValueItem": [
            {"Value": str(account.quotas[name]), "Count": 1}]}}
        for name in wanted if name in account.quotas]}})


def _instance_types(account: Account, query: dict[str, str]) -> tuple[int, str]:
    # ECS DescribeInstanceTypes response example
    # (help.aliyun.com/zh/ecs/developer-reference/api-ecs-2014-05-26-describeinstancetypes)
    wanted = [v for k, v in sorted(query.items()) if k.startswith("InstanceTypes.")]
    return _ok({"RequestId": "standin", "InstanceTypes": {"InstanceType": [
        {"InstanceTypeId": kind, "CpuCoreCount": account.vcpus[kind], "MemorySize": 16.0,
         "GPUAmount": 0, "InstanceTypeFamily": kind.split(".")[1]}
        for kind in wanted if kind in account.vcpus]}})


def _spot_advice(account: Account, query: dict[str, str]) -> tuple[int, str]:
    # ECS DescribeSpotAdvice response example
    # (help.aliyun.com/zh/ecs/developer-reference/api-ecs-2014-05-26-describespotadvice)
    zones: dict[str, list[dict[str, Any]]] = {}
    for (kind, zone), rate in account.interruptions.items():
        zones.setdefault(zone, []).append({
            "InstanceType": kind, "InterruptionRate": rate,
            "InterruptRateDesc": "0-5%" if rate <= 5 else "5-10%" if rate <= 10 else "20%+",
            "AverageSpotDiscount": 30})
    return _ok({"RequestId": "standin", "RegionId": query["RegionId"], "AvailableSpotZones": {
        "AvailableSpotZone": [{"ZoneId": zone, "AvailableSpotResources": {
            "AvailableSpotResource": resources}} for zone, resources in zones.items()]}})


def _spot_history(account: Account, query: dict[str, str]) -> tuple[int, str]:
    # ECS DescribeSpotPriceHistory response example
    # (help.aliyun.com/zh/ecs/developer-reference/api-ecs-2014-05-26-describespotpricehistory)
    price = account.spot_prices.get((query["InstanceType"], query["ZoneId"]))
    points = [] if price is None else [
        {"ZoneId": query["ZoneId"], "InstanceType": query["InstanceType"],
         "IoOptimized": "optimized", "NetworkType": "vpc", "Timestamp": stamp,
         "SpotPrice": spot, "OriginPrice": price[1]}
        for stamp, spot in (("2026-12-01T00:00:00Z", price[0] * 0.9),
                            ("2026-12-02T00:00:00Z", price[0]))]
    return _ok({"RequestId": "standin", "NextOffset": 0, "Currency": "CNY",
                "SpotPrices": {"SpotPriceType": points}})


def _versions(account: Account, query: dict[str, str]) -> tuple[int, str]:
    # ACK DescribeKubernetesVersionMetadata response example (a JSON array)
    # (help.aliyun.com/zh/ack/ack-managed-and-ack-dedicated/developer-reference/
    # api-cs-2015-12-15-describekubernetesversionmetadata)
    return _ok([{"version": version, "creatable": creatable, "release_date":
                 "2025-09-01T00:00:00Z", "upgradable_versions": [], "capabilities": {},
                 "images": [], "meta_data": {}} for version, creatable in
                account.k8s_versions.items()])


def _addons(account: Account, query: dict[str, str]) -> tuple[int, str]:
    # ACK ListAddons response example
    # (help.aliyun.com/zh/ack/ack-managed-and-ack-dedicated/developer-reference/
    # api-cs-2015-12-15-listaddons)
    return _ok({"addons": [{"name": name, "version": version, "category": "core",
                            "supported_actions": ["Install"]}
                           for name, version in account.addons.items()]})


def _images(account: Account, query: dict[str, str]) -> tuple[int, str]:
    # ECS DescribeImages response example
    # (help.aliyun.com/zh/ecs/developer-reference/api-ecs-2014-05-26-describeimages)
    wanted = query.get("ImageId", "").split(",")
    found = [{"ImageId": image, "Status": account.images[image], "ImageName": image,
              "OSType": "linux"} for image in wanted if image in account.images]
    return _ok({"RequestId": "standin", "RegionId": query["RegionId"], "TotalCount": len(found),
                "PageNumber": 1, "PageSize": 100, "Images": {"Image": found}})


def _key(account: Account, query: dict[str, str]) -> tuple[int, str]:
    # KMS DescribeKey response example; a missing key: 404 Forbidden.KeyNotFound
    # (help.aliyun.com/zh/kms/key-management-service/developer-reference/
    # api-kms-2016-01-20-describekey)
    state = account.kms_keys.get(query["KeyId"])
    if state is None:
        return 404, json.dumps({"Code": "Forbidden.KeyNotFound",
                                "Message": "The specified Key is not found."})
    return _ok({"RequestId": "standin", "KeyMetadata": {
        "KeyId": query["KeyId"], "KeyState": state, "KeyUsage": "ENCRYPT/DECRYPT",
        "KeySpec": "Aliyun_AES_256", "ProtectionLevel": "SOFTWARE"}})


def _contacts(account: Account, query: dict[str, str]) -> tuple[int, str]:
    # CloudMonitor DescribeContactList response example
    # (help.aliyun.com/zh/cms/developer-reference/api-cms-2019-01-01-describecontactlist)
    name = query.get("ContactName")
    found = [{"Name": contact, "Desc": contact, "Channels": {"Mail": mail},
              "ChannelsState": {"Mail": state}, "ContactGroups": {"ContactGroup": []}}
             for contact, (mail, state) in account.contacts.items()
             if name in (None, contact)]
    return _ok({"Code": "200", "Success": True, "Message": "", "RequestId": "standin",
                "Total": len(found), "Contacts": {"Contact": found}})


def _run_instances(account: Account, query: dict[str, str]) -> tuple[int, str]:
    # ECS RunInstances with DryRun=true: 400 DryRunOperation when it would succeed
    # (help.aliyun.com/zh/ecs/developer-reference/api-ecs-2014-05-26-runinstances, DryRun)
    if query.get("DryRun") != "true":
        return 400, json.dumps({"Code": "StandInRefuses", "Message": "only DryRun here"})
    return 400, json.dumps({"Code": account.dry_run_code, "Message":
                            "Request validation has been passed with DryRun flag set."
                            if account.dry_run_code == "DryRunOperation" else "refused"})


def _price(account: Account, query: dict[str, str]) -> tuple[int, str]:
    # ECS DescribePrice response example
    # (help.aliyun.com/zh/ecs/developer-reference/api-ecs-2014-05-26-describeprice)
    hourly = account.prices.get(query.get("InstanceType", ""))
    if hourly is None:
        return 400, json.dumps({"Code": "InvalidInstanceType.ValueNotSupported",
                                "Message": "The specified InstanceType does not exist."})
    unit = query.get("PriceUnit", "Hour")
    factor = {"Hour": 1.0, "Week": 168 * 0.9, "Month": 730 * 0.8, "Year": 8760 * 0.6}[unit]
    if query.get("SpotStrategy", "NoSpot") != "NoSpot":
        factor *= 0.3
    price = round(hourly * factor * int(query.get("Amount", "1")), 4)
    return _ok({"RequestId": "standin", "PriceInfo": {
        "Price": {"OriginalPrice": price, "DiscountPrice": 0.0, "TradePrice": price,
                  "Currency": account.currency, "DetailInfos": {"DetailInfo": [
                      {"Resource": "instanceType", "OriginalPrice": price,
                       "DiscountPrice": 0.0, "TradePrice": price}]}},
        "Rules": {"Rule": []}}})


def _caller_identity(account: Account, query: dict[str, str]) -> tuple[int, str]:
    # STS GetCallerIdentity response example (help.aliyun.com/zh/ram/developer-reference/
    # api-sts-2015-04-01-getcalleridentity)
    return _ok({"IdentityType": "Account", "AccountId": ACCOUNT_ID, "RequestId": "standin",
                "PrincipalId": ACCOUNT_ID, "UserId": ACCOUNT_ID,
                "Arn": f"acs:ram::{ACCOUNT_ID}:root"})


HANDLERS: dict[tuple[str, str], Callable[[Account, dict[str, str]], tuple[int, str]]] = {
    ("sts", "GetCallerIdentity"): _caller_identity,
    ("ecs", "DescribeAvailableResource"): _available_resource,
    ("ecs", "DescribeAccountAttributes"): _account_attributes,
    ("ecs", "DescribeInstanceTypes"): _instance_types,
    ("ecs", "DescribeSpotAdvice"): _spot_advice,
    ("ecs", "DescribeSpotPriceHistory"): _spot_history,
    ("ecs", "DescribeImages"): _images,
    ("ecs", "RunInstances"): _run_instances,
    ("ecs", "DescribePrice"): _price,
    ("cs", "DescribeKubernetesVersionMetadata"): _versions,
    ("cs", "ListAddons"): _addons,
    ("kms", "DescribeKey"): _key,
    ("cms", "DescribeContactList"): _contacts,
}


@contextmanager
def serving(account: Account) -> Iterator[StandIn]:
    """The stand-in answering on a local port until the block ends."""
    stand_in = StandIn(account)
    thread = threading.Thread(target=stand_in.server.serve_forever,
                              kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield stand_in
    finally:
        stand_in.server.shutdown()
        stand_in.server.server_close()
