"""Stand-ins for a spot reclaim, offline: an instance metadata server (hardened mode: a token
first) that starts announcing `spot/termination-time` when told, a torchrun that restarts its
worker the way torch elastic's agent does (a failed worker group is restarted while
`--max-restarts` lasts; TORCHELASTIC_RESTART_COUNT counts the restarts), and a trainer that
follows the documented protocol (check the notice file between steps, save a checkpoint
directory with a COMPLETE marker on the notice, resume from GPU_INFRA_RESUME_FROM).

What is simulated only: the metadata service, torchrun and its rendezvous, the loss of the
peer (the trainer fails its next step once told the peer is gone, as a collective would), and
on ACK the operator's PET_* environment and the pod's mounts (paths moved under the sandbox).
The watcher, gpu-infra-resume and gpu-infra-torchrun are the shipped scripts.
"""

from __future__ import annotations

import http.server
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TOKEN = "sandbox-token"
RELEASE_TIME = "2026-12-01T23:05:00Z"

TORCHRUN = r'''#!/usr/bin/env python3
"""Stand-in torchrun: records its arguments, runs the --no-python entrypoint and restarts it
on failure while --max-restarts (or PET_MAX_RESTARTS) lasts, counting restarts in
TORCHELASTIC_RESTART_COUNT as torch elastic's agent does."""
import os, subprocess, sys
args = sys.argv[1:]
with open(os.environ["SANDBOX"] + "/torchrun.args", "w") as handle:
    handle.write("\n".join(args) + "\n")
options = {}
while args and args[0].startswith("--"):
    key, _, value = args.pop(0)[2:].partition("=")
    options[key] = value
assert "no-python" in options, "the entrypoint must be started without python"
max_restarts = int(options.get("max-restarts") or os.environ.get("PET_MAX_RESTARTS", "0"))
shell = os.environ.get("SANDBOX_SHELL")
command = ([shell] if shell else []) + args
for restart in range(max_restarts + 1):
    env = dict(os.environ, TORCHELASTIC_RESTART_COUNT=str(restart))
    code = subprocess.call(command, env=env)
    if code == 0:
        sys.exit(0)
sys.exit(code)
'''

TRAINER = r'''"""Stand-in trainer following the documented protocol: the first run trains
until its peer is lost, saving a checkpoint when the notice file appears; a resumed run
trains argv[1] more steps from its checkpoint."""
import os, sys, time
checkpoints = os.environ["GPU_INFRA_CHECKPOINT_DIR"]
notice = os.environ["GPU_INFRA_SPOT_NOTICE"]
sandbox = os.environ["SANDBOX"]
resume = os.environ.get("GPU_INFRA_RESUME_FROM")
step = int(open(os.path.join(resume, "step")).read()) if resume else 0
def log(line):
    with open(os.path.join(sandbox, "trainer.log"), "a") as handle:
        handle.write(line + "\n")
log("start restart={} resume={} step={}".format(
    os.environ.get("TORCHELASTIC_RESTART_COUNT"), resume or "-", step))
if resume:
    log("done step={}".format(step + int(sys.argv[1])))
    sys.exit(0)
saved = False
while True:
    step += 1
    if os.path.exists(notice) and not saved:
        path = os.path.join(checkpoints, "step-{:06d}".format(step))
        os.makedirs(path)
        with open(os.path.join(path, "step"), "w") as handle:
            handle.write(str(step))
        open(os.path.join(path, "COMPLETE"), "w").close()
        saved = True
    if saved and os.path.exists(os.path.join(sandbox, "peer-lost")):
        sys.exit(1)  # the reclaimed peer is gone: the next collective fails
    time.sleep(0.02)
'''


class MetadataServer:
    """GET meta-data/instance/spot/termination-time: 404 until `announce()`, then the time;
    every metadata GET needs the token PUT /latest/api/token hands out."""

    def __init__(self) -> None:
        self.announced = False
        self.requests: list[str] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _answer(self, code: int, body: str = "") -> None:
                self.send_response(code)
                self.end_headers()
                self.wfile.write(body.encode())

            def do_PUT(self) -> None:
                server.requests.append(f"PUT {self.path}")
                ttl = self.headers.get("X-aliyun-ecs-metadata-token-ttl-seconds")
                self._answer(200 if self.path == "/latest/api/token" and ttl else 400, TOKEN)

            def do_GET(self) -> None:
                server.requests.append(f"GET {self.path}")
                if self.headers.get("X-aliyun-ecs-metadata-token") != TOKEN:
                    self._answer(401)
                elif (self.path == "/latest/meta-data/instance/spot/termination-time"
                      and server.announced):
                    self._answer(200, RELEASE_TIME)
                else:
                    self._answer(404)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}/latest"

    def announce(self) -> None:
        self.announced = True


@contextmanager
def metadata_server() -> Iterator[MetadataServer]:
    server = MetadataServer()
    thread = threading.Thread(target=server.httpd.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


def wait_for(path: Path, process: subprocess.Popen[str], seconds: float = 30) -> None:
    """Until `path` exists (or the process ends, or a generous deadline passes)."""
    deadline = time.monotonic() + seconds
    while not path.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)


def install(directory: Path, files: dict[str, str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(text, encoding="utf-8")
        (directory / name).chmod(0o755)
