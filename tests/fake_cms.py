"""A fake CloudMonitor (PutCustomMetric, DescribeMetricLast) and ECS metadata service on
localhost, for the queue-metric publisher's tests.

The fake checks the request the way CloudMonitor does: the RPC signature recomputed here from
the documented algorithm (not with the publisher's code).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = "test-secret"
ROLE_KEYS = {"Code": "Success", "AccessKeyId": "STS.role-key", "AccessKeySecret": SECRET,
             "SecurityToken": "role-token", "Expiration": "2099-01-01T00:00:00Z"}


def _expected_signature(params: dict[str, str], secret: str) -> str:
    def enc(text: str) -> str:
        return urllib.parse.quote(text, safe="-_.~")
    pairs = sorted((k, v) for k, v in params.items() if k != "Signature")
    canonical = "&".join(f"{enc(k)}={enc(v)}" for k, v in pairs)
    to_sign = "POST&%2F&" + enc(canonical)
    return base64.b64encode(hmac.new(f"{secret}&".encode(), to_sign.encode(),
                                     hashlib.sha1).digest()).decode()


class FakeCloud:
    """CloudMonitor's PutCustomMetric and the ECS metadata service on one local server."""

    def __init__(self) -> None:
        self.received: list[dict[str, str]] = []
        self.refuse_with: tuple[int, dict] | None = None
        self.datapoints: dict[str, list[dict]] = {}
        """DescribeMetricLast's answer by metric name (one page each)."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep pytest output clean
                pass

            def _answer(self, status: int, body: str) -> None:
                self.send_response(status)
                self.end_headers()
                self.wfile.write(body.encode())

            def do_PUT(self) -> None:  # metadata token
                self._answer(200, "meta-token")

            def do_GET(self) -> None:  # metadata: role name, then its keys
                if self.headers.get("X-aliyun-ecs-metadata-token") != "meta-token":
                    return self._answer(403, "no token")
                base = "/latest/meta-data/ram/security-credentials/"
                if self.path == base:
                    return self._answer(200, "fleet-node-role")
                if self.path == base + "fleet-node-role":
                    return self._answer(200, json.dumps(ROLE_KEYS))
                return self._answer(404, "")

            def do_POST(self) -> None:
                length = int(self.headers["Content-Length"])
                params = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
                fake.received.append(params)
                if params.get("Signature") != _expected_signature(params, SECRET):
                    return self._answer(400, json.dumps(
                        {"Code": "SignatureDoesNotMatch", "Message": "bad signature"}))
                if fake.refuse_with:
                    return self._answer(fake.refuse_with[0], json.dumps(fake.refuse_with[1]))
                if params.get("Action") == "DescribeMetricLast":
                    return self._answer(200, json.dumps({
                        "Code": "200", "Success": True, "RequestId": "read",
                        "Datapoints": json.dumps(fake.datapoints.get(params["MetricName"], []))}))
                self._answer(200, json.dumps({"Code": "200", "Message": "",
                                              "RequestId": f"req-{len(fake.received)}"}))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def metrics(self) -> list[dict[str, str]]:
        return [p for p in self.received if p.get("Action") == "PutCustomMetric"]


@contextmanager
def serving() -> Iterator[FakeCloud]:
    """A FakeCloud answering on a local port until the block ends."""
    fake = FakeCloud()
    # shutdown() waits for the loop's next poll: 0.5 s by default, per test
    thread = threading.Thread(target=fake.server.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()
