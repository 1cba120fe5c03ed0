#!/usr/bin/env python3
# gpu_infra_render: the render worker of a render farm's nodes (gpu-infra-render.service, from
# the node tools). Python 3.6+ standard library (Alibaba Cloud Linux 3's python3 is 3.6); the
# queue calls are gpu_infra_queue's, the node's credentials gpu-infra-api's.
"""usage: gpu_infra_render.py [SETTINGS]

The render worker: while the node is ready, not draining and not unhealthy, it takes one job
at a time from the fleet's MNS job queue (ReceiveMessage, a 30 s long poll), runs the
worker's image with `docker run --gpus ...` (the image pulled once through gpu-infra-pull)
and the job's arguments and environment, uploads what the command wrote to /output to the
outputs bucket (OSS PutObject) and only then deletes the message. While a job runs it
renews the message's visibility every third of the queue's job timeout. A failed render
leaves the message to come back after RETRY_SECONDS (the queue's dead-letter policy bounds
the attempts); a job the drain hands back (its file moved out of jobs/) is stopped and not
deleted; a stop (SIGTERM: scale-in, reboot) stops the container and hands the job back at
once. SETTINGS: default /etc/gpu-infra/render.json (the node tools write it). One line per
event on stdout (the journal)."""

import base64
import binascii
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional

ROOT = os.environ.get("GPU_INFRA_ROOT", "")
STATE_DIR = ROOT + "/var/lib/gpu-infra"
JOBS_DIR = STATE_DIR + "/jobs"
"""One file per job in flight, named by its message id; first line its receipt handle (the
drain's contract: steps/drain.sh)."""
BIN_DIR = ROOT + "/opt/gpu-infra/bin"
WAIT_SECONDS = 30
"""ReceiveMessage's long poll (MNS takes 0 to 30)."""
POLL_SECONDS = 2.0
"""How often a running job is looked at (finished, handed back, stopping)."""
IDLE_SECONDS = 5.0
"""How often a node that may not take work looks again."""
RETRY_SECONDS = 60
"""When a failed render's message becomes visible again (ChangeMessageVisibility)."""
STOP_SECONDS = 10
"""`docker stop -t`: how long a stopped render gets before it is killed."""
CONTAINER_PREFIX = "gpu-infra-render-"
OUTPUT_MOUNT = "/output"
"""Where the command writes its frames inside the container."""
FIELD_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
JOB_KEYS = frozenset({"args", "env", "output"})
PREFIX = re.compile(r"^(?:[A-Za-z0-9._=+-]+/)*$")
"""An output key prefix: relative, `/`-separated, ending in `/` (or empty)."""
RESERVED_ENV = ("GPU_INFRA_", "NVIDIA_")
DRIVER_CAPABILITIES = "compute,graphics,utility,video"
"""NVIDIA_DRIVER_CAPABILITIES of every render: `--gpus` alone mounts compute and utility only,
and OptiX (libnvoptix, libnvidia-rtcore) and OpenGL are graphics libraries (libnvidia-container,
src/nvc_info.c: graphics_libs)."""


def say(*words: Any) -> None:
    print("gpu-infra-render:", *words, flush=True)


def job_of(body: str) -> Dict[str, Any]:
    """The job a message body describes (docs: the job message format): a JSON object,
    sent as is or Base64-encoded (the MNS SDKs' default), with optional `args` (strings
    appended to the worker's command), `env` (NAME: string, added to the worker's
    environment) and `output` (key prefix in the outputs bucket, default renders/).
    ValueError naming what is wrong."""
    try:
        job = json.loads(body)
    except ValueError:
        try:
            job = json.loads(base64.b64decode(body, validate=True).decode("utf-8"))
        except (ValueError, binascii.Error, UnicodeDecodeError):
            raise ValueError("the body is neither JSON nor Base64-encoded JSON") from None
    if not isinstance(job, dict):
        raise ValueError("the body is not a JSON object")
    unknown = sorted(set(job) - JOB_KEYS)
    if unknown:
        raise ValueError("unknown key(s) {}; allowed: args, env, output".format(unknown))
    args, env = job.get("args", []), job.get("env", {})
    if not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        raise ValueError("args: not a list of strings")
    if not (isinstance(env, dict) and all(
            isinstance(v, str) and FIELD_NAME.match(k) and not k.startswith(RESERVED_ENV)
            for k, v in env.items())):
        raise ValueError("env: not an object of NAME: string (names of letters, digits and "
                         "_, not GPU_INFRA_* or NVIDIA_*)")
    output = job.get("output", "renders/")
    if not (isinstance(output, str) and PREFIX.match(output) and ".." not in output.split("/")):
        raise ValueError("output: not a relative key prefix ending in / (e.g. shot010/)")
    return {"args": args, "env": env, "output": output}


def docker_command(settings: Dict[str, Any], job: Dict[str, Any], name: str,
                   output_dir: str) -> List[str]:
    """`docker run` of one job: the GPUs, the worker's devices, the shared file system at
    its own path, the job's output directory at OUTPUT_MOUNT, every environment variable by
    name (values from docker's own environment, not its arguments), the command and the
    job's arguments."""
    command = ["docker", "run", "--rm", "--name", name, "--gpus", str(settings["gpus"])]
    for device in settings.get("devices", []):
        command += ["--device", device]
    for mount in settings.get("mounts", []):
        command += ["--volume", "{}:{}".format(ROOT + mount, mount)]
    command += ["--volume", "{}:{}".format(output_dir, OUTPUT_MOUNT)]
    for key in sorted(environment(settings, job, name)):
        command += ["--env", key]
    return command + [settings["image"], *settings.get("command", []), *job["args"]]


def environment(settings: Dict[str, Any], job: Dict[str, Any], name: str) -> Dict[str, str]:
    """The container's environment: the worker's, the job's (which wins), the job id and
    the output directory, and every driver capability (graphics for OptiX and OpenGL)."""
    return {**settings.get("environment", {}), **job["env"],
            "GPU_INFRA_JOB_ID": name[len(CONTAINER_PREFIX):],
            "GPU_INFRA_OUTPUT_DIR": OUTPUT_MOUNT,
            "NVIDIA_DRIVER_CAPABILITIES": DRIVER_CAPABILITIES}


class Worker:
    """One node's worker: the queue client, the settings, the job in flight."""

    def __init__(self, settings: Dict[str, Any]) -> None:
        # beside this file on the node (the node tools install them), not package modules
        import gpu_infra_queue  # type: ignore[import-not-found]
        from gpu_infra_node import api  # type: ignore[import-not-found]

        self.queue_api = gpu_infra_queue
        self.node = api()
        self.base = gpu_infra_queue.endpoint(self.node)
        self.settings = settings
        self.queue = settings["queue"]
        self.pulled = False
        self.stopping = False
        self.receipt = ""
        """The newest receipt handle of the job in flight (renewals replace it)."""

    def may_take_work(self) -> bool:
        """The node passed its readiness check and is neither draining nor unhealthy."""
        return (os.path.exists(STATE_DIR + "/ready")
                and not os.path.exists(STATE_DIR + "/draining")
                and not os.path.exists(STATE_DIR + "/unhealthy"))

    def pull(self) -> bool:
        """The image, once per worker start (gpu-infra-pull: the registry's token from
        the node role, retries, one line on failure)."""
        if not self.pulled:
            try:
                status = subprocess.run([BIN_DIR + "/gpu-infra-pull",
                                         self.settings["image"]]).returncode
            except OSError as error:
                status = error.errno or 1
            self.pulled = status == 0
            if not self.pulled:
                say("could not pull", self.settings["image"], "(exit {}); trying again in {} s"
                    .format(status, RETRY_SECONDS))
        return self.pulled

    def run_forever(self) -> None:
        for path in sorted(os.listdir(JOBS_DIR)):  # left by a worker that died
            self.hand_back(path, self.read_receipt(path), "left by an earlier worker")
        while not self.stopping:
            if not self.may_take_work():
                time.sleep(IDLE_SECONDS)
                continue
            if not self.pull():
                self.sleep(RETRY_SECONDS)
                continue
            message = self.queue_api.receive(self.node, self.base, self.queue, WAIT_SECONDS)
            if message is not None and not self.stopping:
                self.take(message)
            elif message is not None:
                self.hand_back(None, message["ReceiptHandle"], "the worker is stopping")

    def sleep(self, seconds: float) -> None:
        end = time.time() + seconds
        while not self.stopping and time.time() < end:
            time.sleep(min(POLL_SECONDS, end - time.time()))

    def read_receipt(self, name: str) -> Optional[str]:
        try:
            with open(os.path.join(JOBS_DIR, name), encoding="utf-8") as handle:
                return handle.readline().strip() or None
        except OSError:
            return None

    def hand_back(self, name: Optional[str], receipt: Optional[str], why: str,
                  seconds: int = 1) -> None:
        """The message visible again in `seconds` (default at once), the job file gone."""
        if receipt:
            self.queue_api.visible_again(self.node, self.base, self.queue, receipt, seconds)
        if name:
            remove(os.path.join(JOBS_DIR, name))
            subprocess.run(["docker", "rm", "--force", CONTAINER_PREFIX + name],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        say("handed back", name or "a message", "({})".format(why))

    def take(self, message: Dict[str, str]) -> None:
        """Run one job and settle its message."""
        job_id = re.sub(r"[^A-Za-z0-9_.-]", "-", message.get("MessageId", "job"))[:100]
        receipt = message["ReceiptHandle"]
        try:
            job = job_of(message.get("MessageBody", ""))
        except ValueError as error:
            say("job", job_id, "is not a job:", error, "(attempt {}; the queue's dead-letter "
                "policy takes it after its last attempt)".format(message.get("DequeueCount")))
            self.hand_back(None, receipt, "not a job")
            return
        job_file = os.path.join(JOBS_DIR, job_id)
        self.receipt = receipt
        with open(job_file, "w", encoding="utf-8") as handle:
            handle.write(receipt + "\n")
        output_dir = os.path.join(ROOT + self.settings["work_dir"], job_id)
        shutil.rmtree(output_dir, ignore_errors=True)
        os.makedirs(output_dir)
        try:
            self.render(job_id, job, job_file, output_dir)
        finally:
            shutil.rmtree(output_dir, ignore_errors=True)

    def render(self, job_id: str, job: Dict[str, Any], job_file: str, output_dir: str) -> None:
        name = CONTAINER_PREFIX + job_id
        env = dict(os.environ, **environment(self.settings, job, name))
        started = time.time()
        say("job", job_id, "started")
        process = subprocess.Popen(docker_command(self.settings, job, name, output_dir),
                                   env=env)
        renew_every = max(self.settings["visibility_seconds"] // 3, 1)
        renewed = started
        while not finished(process):
            if not os.path.exists(job_file):  # the drain handed it back
                self.stop_container(name, process)
                # the drain may have read the handle a renewal has just replaced: return the
                # message with the newest one too (MessageNotExist when the drain's worked)
                self.queue_api.visible_again(self.node, self.base, self.queue, self.receipt)
                say("job", job_id, "handed back by the drain after {:.0f} s".format(
                    time.time() - started))
                return
            if self.stopping:
                self.stop_container(name, process)
                self.hand_back(job_id, self.receipt, "the worker stopped")
                return
            if time.time() - renewed >= renew_every:
                self.renew(job_file)
                renewed = time.time()
        seconds = time.time() - started
        if process.returncode != 0:
            say("job", job_id, "failed: exit {} after {:.0f} s; it runs again in {} s".format(
                process.returncode, seconds, RETRY_SECONDS))
            self.hand_back(job_id, self.receipt, "failed", RETRY_SECONDS)
            return
        uploaded = self.upload(job_id, job["output"], output_dir)
        if uploaded is None:
            self.hand_back(job_id, self.receipt, "upload failed", RETRY_SECONDS)
            return
        if not self.queue_api.delete(self.node, self.base, self.queue, self.receipt):
            say("job", job_id, "rendered, but its message was no longer ours (it may run "
                "again)")
        else:
            say("job", job_id, "done in {:.0f} s: {} file(s) to oss://{}/{}".format(
                seconds, uploaded, self.settings["bucket"], job["output"]))
        remove(job_file)

    def renew(self, job_file: str) -> None:
        """ChangeMessageVisibility by the job timeout; the new receipt handle replaces the
        first line of the job file in place (a drain that moved the file reads it there)."""
        fresh = self.queue_api.visible_again(self.node, self.base, self.queue, self.receipt,
                                             self.settings["visibility_seconds"])
        if fresh:
            self.receipt = fresh
            with contextlib.suppress(OSError), open(job_file, "r+", encoding="utf-8") as handle:
                handle.write(fresh + "\n")  # (a file handed back meanwhile: the loop notices)
                handle.truncate()

    def stop_container(self, name: str, process: "subprocess.Popen[bytes]") -> None:
        subprocess.run(["docker", "stop", "--time", str(STOP_SECONDS), name],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        process.wait()

    def upload(self, job_id: str, prefix: str, output_dir: str) -> Optional[int]:
        """Every file under `output_dir` to the outputs bucket under `prefix` (PutObject,
        Content-MD5 checked by OSS); how many, or None when one failed."""
        count = 0
        for top, _, files in sorted(os.walk(output_dir)):
            for file_name in sorted(files):
                path = os.path.join(top, file_name)
                key = prefix + os.path.relpath(path, output_dir).replace(os.sep, "/")
                try:
                    put_object(self.node, self.settings["bucket"], key, path)
                except SystemExit as error:
                    say("job", job_id, "could not upload", key, "(exit {})".format(error.code))
                    return None
                count += 1
        return count


def put_object(node: Any, bucket: str, key: str, path: str) -> None:
    """Upload file `path` as oss://`bucket`/`key` (OSS PutObject: at most 5 GB; with
    Content-MD5, a body that does not match is refused with 400 InvalidDigest)."""
    import hashlib

    with open(path, "rb") as handle:
        body = handle.read()
    digest = base64.b64encode(hashlib.md5(body).digest()).decode()
    node.rest("oss", "PutObject", "PUT", node.oss_url(node.config(), bucket, key),
              "/{}/{}".format(bucket, key),
              {"Content-MD5": digest, "Content-Type": "application/octet-stream"}, body=body)


def finished(process: "subprocess.Popen[bytes]") -> bool:
    """Whether `process` ended, waiting up to POLL_SECONDS for it."""
    try:
        process.wait(timeout=POLL_SECONDS)
    except subprocess.TimeoutExpired:
        return False
    return True


def remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(path)


def main(argv: List[str]) -> int:
    if len(argv) > 1 or argv[:1] in (["-h"], ["--help"]):
        raise SystemExit(__doc__)
    path = argv[0] if argv else ROOT + "/etc/gpu-infra/render.json"
    with open(path, encoding="utf-8") as handle:
        settings = json.load(handle)
    os.makedirs(JOBS_DIR, exist_ok=True)
    worker = Worker(settings)

    def stop(*_: Any) -> None:
        worker.stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    say("taking jobs from", settings["queue"], "with", settings["image"])
    worker.run_forever()
    say("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
