"""A small HTTP stand-in for what gpu-infra-api talks to: per-node instance metadata (token,
instance id, role credentials) and the ECS, ESS, OOS and CloudMonitor RPC actions the nodes
call, with the state they change (tags, one scale-out lifecycle action, instance health,
events, parameters, custom metrics) and the CloudMonitor groups they look up.

Every call is signed, and authorized as RAM would: the caller (its STS token names it) holds
a RAM policy document, by default the stack's node policy given to FakeNodeCloud, and an
action on a resource no statement allows is refused (403 Forbidden.RAM). Statements match
actions and resources by wildcard and honour `acs:ResourceTag/<key>` StringEquals conditions.

MNS (the job queue) takes SendMessage, ReceiveMessage, ChangeMessageVisibility and
DeleteMessage as its API reference documents them (tests/mns_queues.py plays the queues),
each signed with the MNS signature (x-mns-version 2015-06-06) and the STS token in
`security-token`, authorized as mns:<operation> on
acs:mns:<region>:<account>:/queues/<queue>/messages. A receipt handle a test puts in
`in_flight` stands for a message received earlier (the drain's hand-back).

OSS PutObject (PUT /oss/<bucket>/<key>) stores the object (Standard) when its Content-MD5
matches the body (else 400 InvalidDigest), authorized as oss:PutObject.

OSS GetObject is served path-style (GET /oss/<bucket>/<key>; config OSS_URL points the node
there) and checked as "Include a V1 signature in the Authorization header" documents it: the
verb, Content-MD5, Content-Type and Date lines as sent, the x-oss- headers (the STS token
among them), /<bucket>/<key>; an object in Archive storage that is not restored answers 403
with the code InvalidObjectState (OSS GetObject). MNS checks its signature the same way
(MNS "Sign requests": the Content-Type line is the header the request carries).

Faults a test may turn on: `metadata_delay` (seconds the answer to a metadata item takes,
by item: "token" for the session token, else its path under meta-data) and `fail_once`
(kinds whose next request answers 503 ServiceUnavailable once: "metadata", "oss", "mns" or
an RPC action name).

ACR's login token (GetAuthorizationToken) comes two ways: an Enterprise instance's (cr
2018-12-01, RPC on /cr/: TempUsername, AuthorizationToken, ExpireTime) and the personal
edition's (cr 2016-06-07, ROA `GET /cr/tokens` signed over the verb, Accept, Content-MD5,
Content-Type, Date, the x-acs- headers and the path: data.tempUserName,
data.authorizationToken); both authorized as cr:GetAuthorizationToken on all resources. The
token each caller gets is `registry_password(caller)`.

ESS is played as the API reference documents it: CompleteLifecycleAction takes a hook id and
a token (no instance id) and applies its result to every instance of the action; a second
answer to an action that is no longer pending is refused (400)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse
from xml.etree import ElementTree

from .mns_queues import NO_MESSAGE, Queues, changed_xml, error_xml, md5_hex, received_xml

TOKEN = "metadata-token"
ACCOUNT = "1234567890123456"
SCALING_GROUP = "asg-1"
ACTIVITY = "asa-batch"
ACTION_TOKEN = "lifecycle-token-1"
HOOK = "ash-ready"
INSTANCE_TYPE = "ecs.gn8v-8x.48xlarge"
"""Every node's instance type (metadata instance/instance-type)."""


@dataclass
class CloudState:
    """What the nodes' calls left behind."""

    batch: list[str]
    """Instance ids of the one pending scale-out action."""
    tags: dict[str, dict[str, str]] = field(default_factory=dict)
    answers: list[tuple[str, dict[str, str | None]]] = field(default_factory=list)
    """Each accepted CompleteLifecycleAction: its result and the health tags at that moment."""
    refused: int = 0
    unhealthy: list[str] = field(default_factory=list)
    """Instances set Unhealthy (SetInstanceHealth)."""
    events: list[dict[str, str]] = field(default_factory=list)
    instances: dict[str, dict[str, str]] = field(default_factory=dict)
    """Instance id -> HostName, PrivateIp, InstanceType (DescribeInstances answers these)."""
    parameters: dict[str, str] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)
    """OOS parameters and encrypted parameters, by name."""
    policy: str | None = None
    """The RAM policy document of every caller without one of its own (None: allow all)."""
    caller_policies: dict[str, str] = field(default_factory=dict)
    denied: list[tuple[str, str, str]] = field(default_factory=list)
    """(caller, action, resource) of every refused call."""
    metrics: list[dict[str, str]] = field(default_factory=list)
    """Each PutCustomMetric's MetricList.1.* parameters (and its caller)."""
    groups: dict[str, str] = field(default_factory=dict)
    """CloudMonitor application groups: name -> id (DescribeMonitorGroups)."""
    group_lookups: int = 0
    region: str = "cn-beijing"
    """The region of the MNS queues (their RAM resources name it)."""
    in_flight: dict[str, str] = field(default_factory=dict)
    """Receipt handle -> queue of each received, undeleted message."""
    visibility: list[tuple[str, str, int]] = field(default_factory=list)
    """(queue, receipt handle, seconds) of each accepted ChangeMessageVisibility."""
    queues: Queues = field(default_factory=Queues)
    """The MNS queues' messages (SendMessage, ReceiveMessage, DeleteMessage)."""
    puts: list[tuple[str, str]] = field(default_factory=list)
    """(bucket, key) of each accepted PutObject."""
    objects: dict[tuple[str, str], tuple[bytes, str]] = field(default_factory=dict)
    """(bucket, key) -> (content, storage class: Standard, Archive, ...)."""
    metadata_delay: dict[str, float] = field(default_factory=dict)
    metadata_asked: list[str] = field(default_factory=list)
    """The metadata items asked for, in order ("token" for the session token)."""
    fail_once: set[str] = field(default_factory=set)
    failed: list[str] = field(default_factory=list)
    """The kinds that answered their one 503."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def fails_now(self, kind: str) -> bool:
        """Whether this request of `kind` is the one that answers 503."""
        with self.lock:
            if kind not in self.fail_once:
                return False
            self.fail_once.discard(kind)
            self.failed.append(kind)
            return True

    def health(self, instance: str) -> str | None:
        return self.tags.get(instance, {}).get("GpuInfraHealth")


def registry_password(caller: str) -> str:
    """The temporary registry password node `caller` gets from GetAuthorizationToken."""
    return f"acr-token-of-{caller}"


def roa_string_to_sign(verb: str, headers: object, path: str) -> str:
    """What ACR's personal-edition API (ROA) signs: the verb, Accept, Content-MD5,
    Content-Type and Date lines, the x-acs- headers (lower case, sorted), the path."""
    sent = {k.lower(): v for k, v in headers.items()}  # type: ignore[attr-defined]
    lines = [verb, *(sent.get(name, "") for name in ("accept", "content-md5", "content-type",
                                                     "date"))]
    lines += [f"{k}:{v}" for k, v in sorted(sent.items()) if k.startswith("x-acs-")]
    return "\n".join([*lines, path])


def header_string_to_sign(verb: str, headers: object, prefix: str, resource: str) -> str:
    """The string OSS (V1) and MNS sign, from the headers as received: VERB, Content-MD5,
    Content-Type, Date, each `prefix` header as `name:value` (lower-case names, sorted),
    then the resource."""
    received = {k.lower(): v for k, v in headers.items()}  # type: ignore[attr-defined]
    lines = [verb, received.get("content-md5", ""), received.get("content-type", ""),
             received.get("date", "")]
    lines += [f"{k}:{v.strip()}" for k, v in sorted(received.items()) if k.startswith(prefix)]
    return "\n".join([*lines, resource])


def hmac_sha1(secret: str, text: str) -> str:
    return base64.b64encode(hmac.new(secret.encode(), text.encode(),
                                     hashlib.sha1).digest()).decode()


class _Handler(BaseHTTPRequestHandler):
    state: CloudState

    def log_message(self, *args: object) -> None:
        """Quiet."""

    def _send(self, status: int, body: object) -> None:
        data = (body if isinstance(body, str) else json.dumps(body)).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_PUT(self) -> None:
        if self.path.startswith("/oss/"):
            self._oss_put(unquote(urlparse(self.path).path.removeprefix("/oss")))
            return
        if self.path.startswith("/mns/"):
            self._serve_mns("PUT")
            return
        if not self._slow_metadata("token"):
            self._send(200, TOKEN)

    def do_DELETE(self) -> None:
        self._serve_mns("DELETE")

    def do_POST(self) -> None:
        self._serve_mns("POST")

    def _serve_mns(self, verb: str) -> None:
        if self.state.fails_now("mns"):
            self._send(503, "<Error><Code>ServiceUnavailable</Code></Error>")
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        resource = self.path.removeprefix("/mns")
        if verb == "GET":  # a long poll: the queue's lock is taken per look
            status, answer = self._mns(verb, resource, body)
        else:
            with self.state.lock:
                status, answer = self._mns(verb, resource, body)
        if status == 204:
            self.send_response(204)
            self.end_headers()
            return
        self._send(status, answer)

    def _mns(self, verb: str, resource: str, body: str) -> tuple[int, str]:
        """One MNS operation on `resource` (the signed path and query)."""
        state, url = self.state, urlparse(resource)
        query = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        parts = url.path.strip("/").split("/")
        if len(parts) != 3 or parts[0] != "queues" or parts[2] != "messages":
            return 404, error_xml("QueueNotExist", "The queue name you provided is not exist.")
        expected = hmac_sha1("secret", header_string_to_sign(verb, self.headers, "x-mns-",
                                                             resource))
        if self.headers.get("Authorization") != f"MNS STS.key:{expected}":
            return 403, error_xml("SignatureDoesNotMatch", "signature mismatch")
        operation = {"GET": "ReceiveMessage", "PUT": "ChangeMessageVisibility",
                     "DELETE": "DeleteMessage", "POST": "SendMessage"}[verb]
        token = self.headers.get("security-token", "")
        caller, queue = token.removeprefix("token-of-"), parts[1]
        policy = state.caller_policies.get(caller, state.policy)
        arn = f"acs:mns:{state.region}:{ACCOUNT}:/queues/{queue}/messages"
        if not token or (policy is not None and not allowed(
                policy, f"mns:{operation}", arn, {})):
            state.denied.append((caller, f"mns:{operation}", arn))
            return 403, error_xml("AccessDenied", "denied")
        if verb == "GET":
            received = state.queues.receive(queue, int(query.get("waitseconds", "0")))
            return (200, received_xml(received)) if received else (404, NO_MESSAGE)
        if verb == "POST":
            text = ElementTree.fromstring(body).findtext(
                "{http://mns.aliyuncs.com/doc/v1/}MessageBody") or ""
            message_id = state.queues.send(queue, text)
            return 201, (f"<Message><MessageId>{message_id}</MessageId>"
                         f"<MessageBodyMD5>{md5_hex(text)}</MessageBodyMD5></Message>")
        receipt = query.get("ReceiptHandle", "")
        if verb == "DELETE":
            return (204, "") if state.queues.delete(queue, receipt) else (404, NO_MESSAGE)
        seconds = int(query.get("VisibilityTimeout", "0"))
        if not 1 <= seconds <= 43200:
            return 400, error_xml("InvalidArgument", "VisibilityTimeout out of range")
        if state.in_flight.get(receipt) == queue:
            state.visibility.append((queue, receipt, seconds))
            return 200, f"<ChangeVisibility><ReceiptHandle>{receipt}-2</ReceiptHandle>" \
                        "</ChangeVisibility>"
        changed = state.queues.change(queue, receipt, seconds)
        if changed is None:
            return 404, NO_MESSAGE
        state.visibility.append((queue, receipt, seconds))
        return 200, changed_xml(changed)

    def do_GET(self) -> None:
        url = urlparse(self.path)
        parts = url.path.lstrip("/").split("/", 2)
        if url.path == "/cr/tokens":
            with self.state.lock:
                status, body = self._personal_token()
            self._send(status, body)
            return
        if parts[0] in ("ecs", "ess", "cms", "oos", "cr"):
            params = {k: v[0] for k, v in parse_qs(url.query).items()}
            if self.state.fails_now(params.get("Action", "")):
                self._send(503, {"Code": "ServiceUnavailable"})
                return
            with self.state.lock:
                status, body = self._rpc(params)
            self._send(status, body)
            return
        if parts[0] == "oss":
            self._oss(unquote(url.path.removeprefix("/oss")))
            return
        if parts[0] == "mns":
            self._serve_mns("GET")
            return
        node, item = parts[0], parts[2] if len(parts) > 2 else ""
        if self._slow_metadata(item):
            return
        if self.headers.get("X-aliyun-ecs-metadata-token") != TOKEN:
            self._send(401, "token required")
            return
        answers = {"instance-id": node, "instance/instance-type": INSTANCE_TYPE,
                   "ram/security-credentials/": "node-role",
                   "ram/security-credentials/node-role": json.dumps({
                       "AccessKeyId": "STS.key", "AccessKeySecret": "secret",
                       "SecurityToken": f"token-of-{node}"})}
        self._send(200, answers[item]) if item in answers else self._send(404, "no such item")

    def _personal_token(self) -> tuple[int, object]:
        """The personal edition's GetAuthorizationToken (ROA), signed and authorized."""
        state = self.state
        expected = hmac_sha1("secret", roa_string_to_sign("GET", self.headers, "/tokens"))
        token = self.headers.get("x-acs-security-token", "")
        if not token or self.headers.get("Authorization") != f"acs STS.key:{expected}":
            return 400, {"code": "SignatureDoesNotMatch"}
        caller = token.removeprefix("token-of-")
        policy = state.caller_policies.get(caller, state.policy)
        if policy is not None and not allowed(policy, "cr:GetAuthorizationToken", "*", {}):
            state.denied.append((caller, "cr:GetAuthorizationToken", "*"))
            return 403, {"code": "Forbidden.RAM"}
        return 200, {"data": {"tempUserName": "cr_temp_user",
                              "authorizationToken": registry_password(caller),
                              "expireDate": int(time.time() * 1000) + 3600000}}

    def _slow_metadata(self, item: str) -> bool:
        """Wait `item`'s `metadata_delay`; True when this metadata request answers its 503."""
        with self.state.lock:
            self.state.metadata_asked.append(item)
        time.sleep(self.state.metadata_delay.get(item, 0.0))
        if self.state.fails_now("metadata"):
            self._send(503, "ServiceUnavailable")
            return True
        return False

    def _oss(self, resource: str) -> None:
        """GetObject of /<bucket>/<key>, signed, authorized as oss:GetObject."""
        state = self.state
        bucket, _, key = resource.lstrip("/").partition("/")
        if state.fails_now("oss"):
            self._send(503, "<Error><Code>ServiceUnavailable</Code></Error>")
            return
        expected = hmac_sha1("secret", header_string_to_sign("GET", self.headers, "x-oss-",
                                                             resource))
        token = self.headers.get("x-oss-security-token", "")
        if not token or self.headers.get("Authorization") != f"OSS STS.key:{expected}":
            self._send(403, "<Error><Code>SignatureDoesNotMatch</Code></Error>")
            return
        caller = token.removeprefix("token-of-")
        policy = state.caller_policies.get(caller, state.policy)
        arn = f"acs:oss:*:{ACCOUNT}:{bucket}/{key}"
        if policy is not None and not allowed(policy, "oss:GetObject", arn, {}):
            state.denied.append((caller, "oss:GetObject", arn))
            self._send(403, "<Error><Code>AccessDenied</Code></Error>")
            return
        if (bucket, key) not in state.objects:
            self._send(404, "<Error><Code>NoSuchKey</Code></Error>")
            return
        content, storage_class = state.objects[(bucket, key)]
        if storage_class in ("Archive", "ColdArchive", "DeepColdArchive"):
            self._send(403, "<Error><Code>InvalidObjectState</Code><Message>The operation "
                            "is not valid for the object's state</Message></Error>")
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    def _oss_put(self, resource: str) -> None:
        """PutObject of /<bucket>/<key>, signed (Content-MD5 and Content-Type as sent),
        authorized as oss:PutObject, its Content-MD5 checked against the body."""
        state = self.state
        bucket, _, key = resource.lstrip("/").partition("/")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if state.fails_now("oss"):
            self._send(503, "<Error><Code>ServiceUnavailable</Code></Error>")
            return
        expected = hmac_sha1("secret", header_string_to_sign("PUT", self.headers, "x-oss-",
                                                             resource))
        token = self.headers.get("x-oss-security-token", "")
        if not token or self.headers.get("Authorization") != f"OSS STS.key:{expected}":
            self._send(403, "<Error><Code>SignatureDoesNotMatch</Code></Error>")
            return
        caller = token.removeprefix("token-of-")
        policy = state.caller_policies.get(caller, state.policy)
        arn = f"acs:oss:*:{ACCOUNT}:{bucket}/{key}"
        if policy is not None and not allowed(policy, "oss:PutObject", arn, {}):
            state.denied.append((caller, "oss:PutObject", arn))
            self._send(403, "<Error><Code>AccessDenied</Code></Error>")
            return
        digest = base64.b64encode(hashlib.md5(body).digest()).decode()
        if self.headers.get("Content-MD5") not in (None, digest):
            self._send(400, "<Error><Code>InvalidDigest</Code></Error>")
            return
        with state.lock:
            state.objects[(bucket, key)] = (body, "Standard")
            state.puts.append((bucket, key))
        self._send(200, "")

    def _caller(self, params: dict[str, str]) -> str:
        return params["SecurityToken"].removeprefix("token-of-")

    def _denied(self, params: dict[str, str]) -> bool:
        """Whether RAM refuses the call (recorded in state.denied)."""
        state, caller = self.state, self._caller(params)
        policy = state.caller_policies.get(caller, state.policy)
        if policy is None:
            return False
        for action, resource, tags in requested(params, state):
            if not allowed(policy, action, resource, tags):
                state.denied.append((caller, action, resource))
                return True
        return False

    def _rpc(self, params: dict[str, str]) -> tuple[int, object]:
        state, action = self.state, params["Action"]
        if "Signature" not in params:
            return 400, {"Code": "IncompleteSignature"}
        if self._denied(params):
            return 403, {"Code": "Forbidden.RAM"}
        if action in ("GetParameter", "GetSecretParameter"):
            store = state.secrets if action == "GetSecretParameter" else state.parameters
            if params["Name"] not in store:
                return 404, {"Code": "EntityNotExists.Parameter"}
            return 200, {"Parameter": {"Name": params["Name"], "Value": store[params["Name"]]}}
        if action in ("UpdateParameter", "UpdateSecretParameter"):
            store = state.secrets if action == "UpdateSecretParameter" else state.parameters
            store[params["Name"]] = params["Value"]
            return 200, {}
        if action == "TagResources":
            tags = state.tags.setdefault(params["ResourceId.1"], {})
            index = 1
            while f"Tag.{index}.Key" in params:
                tags[params[f"Tag.{index}.Key"]] = params[f"Tag.{index}.Value"]
                index += 1
            return 200, {}
        if action == "DescribeInstances":
            ids = json.loads(params["InstanceIds"])
            return 200, {"Instances": {"Instance": [
                {"InstanceId": i, "Tags": {"Tag": [{"TagKey": k, "TagValue": v}
                                                   for k, v in state.tags.get(i, {}).items()]},
                 **described(state.instances.get(i, {}))}
                for i in ids if i in state.instances or not state.instances]}}
        if action == "DescribeScalingActivities":
            return 200, {"ScalingActivities": {"ScalingActivity": [
                {"ScalingActivityId": ACTIVITY}]}}
        if action == "DescribeLifecycleActions":
            pending = [] if state.answers else [{
                "LifecycleHookId": HOOK, "LifecycleActionToken": ACTION_TOKEN,
                "InstanceIds": {"InstanceId": list(state.batch)}}]
            return 200, {"LifecycleActions": {"LifecycleAction": pending}}
        if action == "CompleteLifecycleAction":
            if "InstanceId" in params or params.get("LifecycleActionToken") != ACTION_TOKEN:
                return 400, {"Code": "InvalidParameter"}
            if state.answers:
                state.refused += 1
                return 400, {"Code": "LifecycleAction.NotPending"}
            state.answers.append((params["LifecycleActionResult"],
                                  {i: state.health(i) for i in state.batch}))
            return 200, {}
        if action == "SetInstanceHealth":
            state.unhealthy.append(params["InstanceId"])
            return 200, {}
        if action == "PutCustomEvent":
            state.events.append({"caller": self._caller(params),
                                 "name": params["EventInfo.1.EventName"],
                                 "content": params["EventInfo.1.Content"]})
            return 200, {}
        if action == "GetAuthorizationToken":
            return 200, {"TempUsername": "cr_temp_user", "Code": "success", "IsSuccess": True,
                         "AuthorizationToken": registry_password(self._caller(params)),
                         "ExpireTime": int(time.time() * 1000) + 3600000}
        if action == "PutCustomMetric":
            state.metrics.append({"caller": self._caller(params),
                                  **{k.removeprefix("MetricList.1."): v
                                     for k, v in params.items()
                                     if k.startswith("MetricList.1.")}})
            return 200, {"Code": "200"}
        if action == "DescribeMonitorGroups":
            state.group_lookups += 1
            name = params.get("GroupName", "")
            found = [{"GroupId": int(state.groups[name]), "GroupName": name}] \
                if name in state.groups else []
            return 200, {"Code": 200, "Resources": {"Resource": found}}
        return 400, {"Code": "UnsupportedAction"}


def described(instance: dict[str, str]) -> dict[str, object]:
    """The DescribeInstances fields of a known instance (none for an unknown one)."""
    if not instance:
        return {}
    return {"HostName": instance["HostName"], "InstanceType": instance["InstanceType"],
            "VpcAttributes": {"PrivateIpAddress": {"IpAddress": [instance["PrivateIp"]]}}}


def requested(params: dict[str, str],
              state: CloudState) -> list[tuple[str, str, dict[str, str]]]:
    """(RAM action, resource ARN, the resource's tags) of one call, as RAM sees it."""
    action, region = params["Action"], params.get("RegionId", "")
    prefix = {"TagResources": "ecs", "DescribeInstances": "ecs", "PutCustomEvent": "cms",
              "PutCustomMetric": "cms", "DescribeMonitorGroups": "cms", "GetParameter": "oos",
              "GetSecretParameter": "oos", "UpdateParameter": "oos",
              "UpdateSecretParameter": "oos", "GetAuthorizationToken": "cr"}.get(action, "ess")
    if action == "TagResources":
        ids = [v for k, v in params.items() if k.startswith("ResourceId.")]
        return [(f"ecs:{action}", f"acs:ecs:{region}:{ACCOUNT}:instance/{i}",
                 state.tags.get(i, {})) for i in ids]
    if prefix == "oos":
        kind = "secretparameter" if "Secret" in action else "parameter"
        needs: list[tuple[str, str, dict[str, str]]] = [
            (f"oos:{action}", f"acs:oos:{region}:{ACCOUNT}:{kind}/{params['Name']}", {})]
        if action == "GetSecretParameter":  # "ensure that you have the permissions to call
            # the GetSecretValue API operation of KMS" (its API reference); the secret's name
            # under KMS is OOS's own: the parameter's name stands in for it
            needs.append(("kms:GetSecretValue",
                          f"acs:kms:{region}:{ACCOUNT}:secret/{params['Name']}", {}))
        return needs
    resource = {"cr": "*", "ecs": f"acs:ecs:{region}:{ACCOUNT}:instance/*",
                "cms": f"acs:cms:{region}:{ACCOUNT}:*",
                "ess": f"acs:ess:{region}:{ACCOUNT}:scalinggroup/{SCALING_GROUP}"}[prefix]
    return [(f"{prefix}:{action}", resource, {})]


def allowed(policy: str, action: str, resource: str, tags: dict[str, str]) -> bool:
    """Whether an Allow statement of RAM policy document `policy` covers the call."""
    for statement in json.loads(policy)["Statement"]:
        actions, resources = statement["Action"], statement["Resource"]
        condition = statement.get("Condition", {}).get("StringEquals", {})
        if statement["Effect"] == "Allow" and \
                any(fnmatchcase(action, a) for a in as_list(actions)) and \
                any(fnmatchcase(resource, r) for r in as_list(resources)) and \
                all(tags.get(key.removeprefix("acs:ResourceTag/")) == value
                    for key, value in condition.items()):
            return True
    return False


def as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else value


class FakeNodeCloud:
    """Serve CloudState on 127.0.0.1 (a free port) while the context is open; `policy`: the
    RAM policy document of every caller (None: every call allowed)."""

    def __init__(self, batch: list[str], policy: str | None = None, fleet: str = "t01-gpu"):
        """`batch`: the instances of the pending scale-out, tagged GpuFleet=`fleet` (as
        ESS tags them from the scaling configuration)."""
        self.state = CloudState(batch=list(batch), policy=policy,
                                tags={i: {"GpuFleet": fleet} for i in batch})
        handler = type("Handler", (_Handler,), {"state": self.state})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self) -> FakeNodeCloud:
        # shutdown() waits for the loop's next poll: 0.5 s by default, per stand-in
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02},
                         daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def settings(self, node: str) -> dict[str, str]:
        """config.sh values pointing node `node` at this stand-in."""
        return {"METADATA_URL": f"{self.url}/{node}/meta-data",
                "METADATA_TOKEN_URL": f"{self.url}/{node}/api/token",
                "MNS_ENDPOINT": f"{self.url}/mns", "OSS_URL": f"{self.url}/oss/{{b}}",
                "ECS_ENDPOINT": f"{self.url}/ecs", "ESS_ENDPOINT": f"{self.url}/ess",
                "CMS_ENDPOINT": f"{self.url}/cms", "OOS_ENDPOINT": f"{self.url}/oos",
                "CR_ENDPOINT": f"{self.url}/cr"}
