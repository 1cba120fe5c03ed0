"""A small HTTP stand-in for what gpu-infra-api talks to: per-node instance metadata (token,
instance id, role credentials) and the ECS, ESS and CloudMonitor RPC actions the nodes call,
with the state they change (tags, one scale-out lifecycle action, instance health, events).

ESS is played as the API reference documents it: CompleteLifecycleAction takes a hook id and
a token (no instance id) and applies its result to every instance of the action; a second
answer to an action that is no longer pending is refused (400)."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

TOKEN = "metadata-token"
ACTIVITY = "asa-batch"
ACTION_TOKEN = "lifecycle-token-1"
HOOK = "ash-ready"


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
    lock: threading.Lock = field(default_factory=threading.Lock)

    def health(self, instance: str) -> str | None:
        return self.tags.get(instance, {}).get("GpuInfraHealth")


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
        self._send(200, TOKEN)

    def do_GET(self) -> None:
        url = urlparse(self.path)
        parts = url.path.lstrip("/").split("/", 2)
        if parts[0] in ("ecs", "ess", "cms"):
            params = {k: v[0] for k, v in parse_qs(url.query).items()}
            with self.state.lock:
                status, body = self._rpc(params)
            self._send(status, body)
            return
        if self.headers.get("X-aliyun-ecs-metadata-token") != TOKEN:
            self._send(401, "token required")
            return
        node, item = parts[0], parts[2] if len(parts) > 2 else ""
        answers = {"instance-id": node, "ram/security-credentials/": "node-role",
                   "ram/security-credentials/node-role": json.dumps({
                       "AccessKeyId": "STS.key", "AccessKeySecret": "secret",
                       "SecurityToken": f"token-of-{node}"})}
        self._send(200, answers[item]) if item in answers else self._send(404, "no such item")

    def _caller(self, params: dict[str, str]) -> str:
        return params["SecurityToken"].removeprefix("token-of-")

    def _rpc(self, params: dict[str, str]) -> tuple[int, object]:
        state, action = self.state, params["Action"]
        if "Signature" not in params:
            return 400, {"Code": "IncompleteSignature"}
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
                                                   for k, v in state.tags.get(i, {}).items()]}}
                for i in ids]}}
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
        return 400, {"Code": "UnsupportedAction"}


class FakeNodeCloud:
    """Serve CloudState on 127.0.0.1 (a free port) while the context is open."""

    def __init__(self, batch: list[str]):
        self.state = CloudState(batch=list(batch))
        handler = type("Handler", (_Handler,), {"state": self.state})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self) -> FakeNodeCloud:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def settings(self, node: str) -> dict[str, str]:
        """config.sh values pointing node `node` at this stand-in."""
        return {"METADATA_URL": f"{self.url}/{node}/meta-data",
                "METADATA_TOKEN_URL": f"{self.url}/{node}/api/token",
                "ECS_ENDPOINT": f"{self.url}/ecs", "ESS_ENDPOINT": f"{self.url}/ess",
                "CMS_ENDPOINT": f"{self.url}/cms"}
