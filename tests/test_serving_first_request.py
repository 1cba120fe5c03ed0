"""The inference page's "On ECS: from `pulumi up` to the first request in three commands", run
as written against the sandbox (the commands the server's unit runs on the host are checked to
be installed by tests/test_workload_commands.py).

The three commands run in bash on a stand-in workstation (`pulumi`, `skopeo`, `ossutil`; real
`jq` and `curl`), planned from stacks/Pulumi.inference-prod.yaml:
- `pulumi up` installs the planned user data on a sandbox node, its node tools the planned
  object, and boots it in the background (ESS launching an instance);
- `skopeo copy` puts images into the stack's registry (the docker stand-in pulls an image of it
  only once there), `ossutil cp -r` uploads files to the stand-in OSS (signed PutObject);
- `curl` reaches the load balancer stand-in, made from the plan alone: it listens on the NLB
  listener's port, forwards to the port of the scaling group's server-group attachment, and
  only to a node that answered its scale-out hook (ESS adds it to the server group then) and
  passes the server group's health check (type, path, method, codes, port as planned).
The node runs gpu-infra-serving.service as systemd would (its ExecStartPre, ExecStart under
the system's /bin/sh, Restart after RestartSec) with the cloud's endpoints pointed at the
stand-in cloud; the image's server is a stand-in speaking vLLM's /health and /v1/models,
bound to this node's own loopback address (127.x.y.z, one per test)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gpu_infra.blocks.bootstrap import unit_source
from gpu_infra_facts import serving

from .bootstrap_sandbox import OS_RELEASES, Sandbox
from .fake_node_cloud import FakeNodeCloud, registry_password
from .node_systems import dash, python_of
from .shipped import shipped_plan

pytestmark = pytest.mark.slow  # a node booted and served in the sandbox

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs/layouts/inference.md"
HEADING = "## On ECS: from `pulumi up` to the first request in three commands"
NODE = "i-node0"
SYSTEM = "ubuntu-22.04"
MODEL = {"config.json": b'{"architectures": ["LlamaForCausalLM"]}\n',
         "model-00001-of-00001.safetensors": b"\x00\x01" * 2048}
SCALING_CONFIG = "alicloud:ess/scalingConfiguration:ScalingConfiguration"
SECONDS = 90
"""How long the three commands may take in the sandbox (every sleep of the node 0.05 s)."""

VLLM = r'''
"""vLLM's OpenAI server as the test's container: `serve MODEL --port PORT`; /health answers
200 once MODEL (its host directory from the container's volumes) holds config.json,
/v1/models lists MODEL as vLLM names a model by its path."""
import http.server, json, os, sys
args = sys.argv[1:]
model, port = args[1], int(args[args.index("--port") + 1])
volumes = dict(v.split(":")[1::-1] for v in os.environ["DOCKER_VOLUMES"].split())
assert os.path.isfile(os.path.join(volumes[model], "config.json")), volumes
address = open(os.path.join(os.environ["SANDBOX"], "state/node-address")).read().strip()
class Server(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = {"/health": b"", "/v1/models": json.dumps({"object": "list", "data": [
            {"id": model, "object": "model", "owned_by": "vllm", "root": model}]}).encode()}
        if self.path not in body:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body[self.path])))
        self.end_headers()
        self.wfile.write(body[self.path])
    def log_message(self, *args):
        pass
http.server.HTTPServer((address, port), Server).serve_forever()
'''

PULUMI = r'''
case "$1 $2" in
  "up --stack") exec bash "$WORKSTATION/up.sh" ;;
  "stack output")
    exec python3 -c 'import json, sys
value = json.load(open(sys.argv[1]))[sys.argv[2]]
print(json.dumps(value) if "--json" in sys.argv or not isinstance(value, str) else value)' \
      "$WORKSTATION/outputs.json" "$3" "$4" ;;
esac
echo "pulumi: unexpected arguments: $*" >&2
exit 2
'''
"""`pulumi up --stack S` (the test's up.sh) and `pulumi stack output NAME [--json]`."""

SKOPEO = r'''
[ "$1 $2" = "copy --all" ] || { echo "skopeo: unexpected arguments: $*" >&2; exit 2; }
target=${4#docker://}
[ "${target%%/*}" = "$(cat "$SANDBOX/registry-host")" ] || {
  echo "skopeo: $target: not the stack's registry" >&2; exit 1; }
echo "$3" >> "$WORKSTATION/copied.log"
touch "$SANDBOX/registry-images/$(printf '%s' "$target" | tr '/:@' '___')"
'''
"""`skopeo copy --all docker://SOURCE docker://TARGET` into the stack's registry."""

OSSUTIL = r'''
import base64, email.utils, hashlib, os, sys, urllib.request
sys.path.insert(0, os.environ["REPOSITORY"])
from tests.fake_node_cloud import header_string_to_sign, hmac_sha1
command, flag, source, target = sys.argv[1:]
assert (command, flag) == ("cp", "-r") and target.startswith("oss://"), sys.argv
bucket, _, prefix = target[len("oss://"):].partition("/")
for folder, _, names in os.walk(source):
    for name in names:
        path = os.path.join(folder, name)
        key = prefix + os.path.relpath(path, source)
        body = open(path, "rb").read()
        headers = {"Content-MD5": base64.b64encode(hashlib.md5(body).digest()).decode(),
                   "Content-Type": "application/octet-stream",
                   "Date": email.utils.formatdate(usegmt=True),
                   "x-oss-security-token": "token-of-user"}
        resource = "/%s/%s" % (bucket, key)
        signature = hmac_sha1("secret", header_string_to_sign("PUT", headers, "x-oss-", resource))
        request = urllib.request.Request(os.environ["OSS_ENDPOINT"] + resource, body,
                                         dict(headers, Authorization="OSS STS.key:" + signature),
                                         method="PUT")
        urllib.request.urlopen(request).read()
'''
"""`ossutil cp -r DIR oss://BUCKET/PREFIX/`: each file under DIR to PREFIX + its path in DIR
(signed PutObject, the user's credentials)."""


def page_commands() -> str:
    """The shell block under HEADING."""
    text = PAGE.read_text()
    section = text[text.index(HEADING):]
    [block] = re.findall(r"```sh\n(.*?)```", section, re.S)[:1]
    return block


def unit_runner(unit: str, shell: str) -> str:
    """What systemd does with gpu-infra-serving.service on this sandbox node: ExecStartPre
    ("-": its failure ignored), ExecStart under `shell` (the system's /bin/sh) with the unit's
    PATH (/opt/gpu-infra/bin first, then the node's commands: the sandbox's stand-ins), again
    RestartSec later (scaled) whenever it exits (Restart=always). The programs see the node
    with the stand-in cloud's endpoints in config.sh (a view of the root in unit-root)."""
    fields = dict(line.split("=", 1) for line in unit.splitlines()
                  if "=" in line and not line.startswith("#"))
    assert fields["Restart"] == "always" and fields["Environment"].startswith(
        "PATH=/opt/gpu-infra/bin:")
    pre = shlex.split(fields["ExecStartPre"].removeprefix("-"))
    assert pre[0] == "/usr/bin/docker"  # where docker-ce installs it
    start = fields["ExecStart"]
    return f'''view=$SANDBOX/unit-root
while :; do
  rm -rf "$view" && mkdir -p "$view/opt/gpu-infra"
  for entry in "$GPU_INFRA_ROOT"/*; do
    [ "${{entry##*/}}" = opt ] || ln -s "$entry" "$view/"
  done
  for entry in "$GPU_INFRA_ROOT"/opt/gpu-infra/*; do
    [ "${{entry##*/}}" = config.sh ] || ln -s "$entry" "$view/opt/gpu-infra/"
  done
  cat "$GPU_INFRA_ROOT/opt/gpu-infra/config.sh" "$SANDBOX/cloud.sh" \\
    > "$view/opt/gpu-infra/config.sh"
  docker {shlex.join(pre[1:])} || true
  env -u GPU_INFRA_API GPU_INFRA_ROOT="$view" \\
    PATH="$view/opt/gpu-infra/bin:$SANDBOX/bin:/usr/bin:/bin" {shell} "$view{start}"
  /bin/sleep {int(fields["RestartSec"]) / 100}
done
'''


class LoadBalancer(socketserver.ThreadingTCPServer):
    """The NLB as the plan makes it: a TCP listener forwarding to the backend's port, only
    while `attached()` and its health check (HTTP GET of the path, healthy on the codes)
    passes; otherwise the connection is closed (no healthy backend)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: str, listener_port: int, backend: tuple[str, int],
                 check: dict[str, Any], attached: Callable[[], bool]):
        super().__init__((address, listener_port), _Forward)
        self.backend, self.check, self.attached = backend, check, attached

    def healthy(self) -> bool:
        check = self.check
        assert check["healthCheckType"] == "HTTP" and check["httpCheckMethod"] == "GET"
        port = check["healthCheckConnectPort"] or self.backend[1]  # 0: the backend's port
        url = f"http://{self.backend[0]}:{int(port)}{check['healthCheckUrl']}"
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                status = answer.status
        except OSError:
            return False
        return f"http_{str(status)[0]}xx" in check["healthCheckHttpCodes"]


class _Forward(socketserver.BaseRequestHandler):
    server: LoadBalancer

    def handle(self) -> None:
        if not (self.server.attached() and self.server.healthy()):
            return
        with socket.create_connection(self.server.backend, timeout=5) as backend:
            threading.Thread(target=_copy, args=(backend, self.request), daemon=True).start()
            _copy(self.request, backend)


def _copy(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
        target.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def loopback_address(seed: str) -> str:
    """An address of 127.0.0.0/8 for this test alone (the node's, or its load balancer's)."""
    digest = hashlib.sha256(seed.encode()).digest()
    return f"127.{digest[0] % 200 + 20}.{digest[1]}.{digest[2] % 250 + 2}"


def kill_group(pid_file: Path) -> None:
    """End the process group the sandbox started (a unit, the boot) and recorded there."""
    if pid_file.exists():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(int(pid_file.read_text()), signal.SIGTERM)


@pytest.fixture
def workstation(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The shipped inference-prod planned, a sandbox node to boot from its user data, the load
    balancer stand-in and the user's machine (its stand-ins, ./chat with its SHA256SUMS)."""
    plan = shipped_plan("inference-prod")
    [config] = plan.by_type(SCALING_CONFIG)
    [tools] = [r.inputs for r in plan.by_type("alicloud:oss/bucketObject:BucketObject")
               if r.inputs["key"].startswith("gpu-infra/node-tools/")]
    outputs = dict(plan.outputs)
    node_address = loopback_address(f"{tmp_path}node")
    lb_address = loopback_address(f"{tmp_path}lb")
    check = plan.one("alicloud:nlb/serverGroup:ServerGroup").inputs["healthCheck"]
    listener = int(plan.one("alicloud:nlb/listener:Listener").inputs["listenerPort"])
    backend_port = int(plan.one("alicloud:ess/serverGroupAttachment:ServerGroupAttachment")
                       .inputs["port"])
    sandbox = Sandbox(tmp_path / "node", gpus=1, scratch=False, os_release=OS_RELEASES[SYSTEM])
    sandbox.attach_disk("model-cache", "2ze0modelcache000001", "vdb")
    (sandbox.dir / "meta/instance/instance-type").write_text(
        plan.cluster.fleet.instance_types[0])
    (sandbox.dir / "bin/python3").symlink_to(python_of(SYSTEM))
    (sandbox.dir / "objects" / tools["key"]).parent.mkdir(parents=True)
    (sandbox.dir / "objects" / tools["key"]).write_text(tools["content"])
    (sandbox.dir / "user-data.sh").write_text(config.inputs["userData"])
    registry = outputs["registry_address"]
    (sandbox.dir / "registry-host").write_text(registry)
    (sandbox.dir / "registry-password").write_text(registry_password(NODE))
    (sandbox.dir / "registry-images").mkdir()
    sandbox.knob("node-address", node_address)
    sandbox.knob("node-ports", str(backend_port))
    sandbox.knob("sleep-seconds", "0.05")
    (sandbox.dir / "vllm.py").write_text(VLLM)
    hook = (sandbox.dir / "containers" / f"{registry}/chat-serve/serve:latest".translate(
        str.maketrans("/:@", "___")))
    hook.parent.mkdir()
    hook.write_text(f'exec "{sys.executable}" "$SANDBOX/vllm.py" "$@"\n')
    (sandbox.dir / "units").mkdir()
    (sandbox.dir / "units" / serving.UNIT).write_text(
        unit_runner(unit_source(serving.UNIT), dash()))
    work = tmp_path / "workstation"
    (work / "bin").mkdir(parents=True)
    for name, body in {"pulumi": PULUMI, "skopeo": SKOPEO,
                       "sleep": "exec /bin/sleep 0.2\n"}.items():  # the user waits less
        (work / "bin" / name).write_text("#!/bin/bash\n" + body)
    (work / "bin/ossutil").write_text(f"#!{sys.executable}\n{OSSUTIL}")
    for program in (work / "bin").iterdir():
        program.chmod(0o755)
    chat = work / "chat"
    chat.mkdir()
    for name, data in MODEL.items():
        (chat / name).write_bytes(data)
    (chat / serving.MANIFEST).write_text(subprocess.run(
        "find . -type f ! -name SHA256SUMS -exec sha256sum {} +", shell=True, cwd=chat,
        capture_output=True, text=True, check=True).stdout)
    node_env = sandbox.env()
    (work / "up.sh").write_text(
        "".join(f"export {key}={shlex.quote(value)}\n" for key, value in node_env.items())
        + 'bash "$SANDBOX/user-data.sh" > "$SANDBOX/install.log" 2>&1 || exit 1\n'
        'setsid bash "$GPU_INFRA_ROOT/opt/gpu-infra/bootstrap.sh" </dev/null '
        '> "$SANDBOX/boot.log" 2>&1 &\necho $! > "$SANDBOX/boot.pid"\n')
    calls = sandbox.dir / "calls.log"

    def attached() -> bool:
        """ESS put the node into the server group: its scale-out hook answered, healthy."""
        answered = calls.exists() and "gpu-infra-api answer-scale-out" in calls.read_text()
        return answered and not (sandbox.root / "var/lib/gpu-infra/unhealthy").exists()

    balancer = LoadBalancer(lb_address, listener, (node_address, backend_port), check,
                            attached)
    threading.Thread(target=balancer.serve_forever, kwargs={"poll_interval": 0.02},
                     daemon=True).start()
    outputs["load_balancer_dns"] = lb_address  # its DNS name resolves to its address
    (work / "outputs.json").write_text(json.dumps(outputs))
    with FakeNodeCloud([NODE], fleet="chat-serve-gpu") as cloud:
        (sandbox.dir / "cloud.sh").write_text("".join(
            f"{key}={value}\n" for key, value in cloud.settings(NODE).items()))
        env = {"PATH": f"{work / 'bin'}:/usr/bin:/bin", "HOME": str(work),
               "WORKSTATION": str(work), "SANDBOX": str(sandbox.dir),
               "REPOSITORY": str(ROOT), "OSS_ENDPOINT": f"{cloud.url}/oss"}
        try:
            yield {"env": env, "work": work, "sandbox": sandbox, "cloud": cloud,
                   "plan": plan, "backend_port": backend_port, "check": check}
        finally:
            balancer.shutdown()
            balancer.server_close()
            kill_group(sandbox.dir / "boot.pid")
            kill_group(sandbox.dir / "units" / f"{serving.UNIT}.pid")


def test_the_three_commands_serve_the_first_request_through_the_load_balancer(workstation):
    commands = page_commands()
    assert len([line for line in commands.splitlines() if line.strip()]) == 3
    env, work, sandbox = workstation["env"], workstation["work"], workstation["sandbox"]
    started = time.monotonic()
    done = subprocess.run(["timeout", str(SECONDS), "bash", "-e", "-c", commands], cwd=work,
                          env=env, capture_output=True, text=True, check=False)
    boot = (sandbox.dir / "boot.log").read_text() if (sandbox.dir / "boot.log").exists() else ""
    unit_log = sandbox.dir / "units" / f"{serving.UNIT}.log"
    assert done.returncode == 0, (done.stderr, boot, unit_log.read_text()
                                  if unit_log.exists() else "")
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert [model["id"] for model in answer["data"]] == ["/mnt/models/chat"]
    waited = time.monotonic() - started
    # the node served the model it checked, from its own registry, after its boot
    [key] = [k for k in workstation["cloud"].state.objects if k[1] == "chat/SHA256SUMS"]
    assert key[0] == workstation["plan"].outputs["bucket_names"]["models"]
    cache = sandbox.root / "mnt/model-cache/models"
    [served] = list(cache.iterdir())
    assert {path.name: path.read_bytes() for path in served.iterdir()
            if path.name in MODEL} == MODEL
    calls = (sandbox.dir / "calls.log").read_text()
    assert "docker login --username" in calls and "docker-ce" in calls
    assert "the model server answers http://127.0.0.1:8000/health" in boot
    assert waited < SECONDS


def test_the_load_balancer_checks_the_server_the_stack_runs(workstation):
    """Plan side: the NLB's health check is the serving section's readiness path on the
    server's port, and the server is the node tools' unit with that port and path."""
    plan, check = workstation["plan"], workstation["check"]
    stack = plan.cluster
    assert check["healthCheckUrl"] == stack.serving.readiness_path == "/health"
    assert check["healthCheckConnectPort"] == 0  # the backend's own port
    assert workstation["backend_port"] == stack.security.service_ports[0] == 8000
    assert "--port 8000" in " ".join(stack.serving.command)
    [config] = plan.by_type(SCALING_CONFIG)
    assert "LOAD_BALANCER" in plan.one(
        "alicloud:ess/scalingGroup:ScalingGroup").inputs["healthCheckTypes"]
    assert config.inputs["userData"]  # the node that runs the unit boots from it
