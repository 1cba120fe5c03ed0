"""The nodes' bootstrap: small shell steps (steps/*.sh, one per concern) assembled into the
user data of fixed nodes and scaling configurations and into the baked-image build.

The user data writes a few files and starts `gpu-infra-bootstrap.service`, which runs
/opt/gpu-infra/bootstrap.sh at every boot: each step is idempotent (it checks the node's state
before acting), logs to /var/log/gpu-infra/bootstrap.log, and a failing command stops the run
and marks the node unhealthy (/var/lib/gpu-infra/unhealthy, instance tag, lifecycle ABANDON).
After the driver install's reboot the next boot resumes where the node is. The user data holds
nothing node-specific and no node list, so every node of a fleet gets the same user data
whatever the fleet's size.
"""

from __future__ import annotations

import functools
import hashlib
import json
import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from importlib import resources

from gpu_infra.blocks.bootstrap.minify import strip_python, strip_shell
from gpu_infra.blocks.bootstrap.packing import pack, unpack
from gpu_infra_facts import container_runtime, jobs, node_stack, serving
from gpu_infra_facts.naming import child_name, with_suffix
from gpu_infra_facts.node_stack import DriverRoute, DriverStack

DATA_ROOT = "/mnt"
"""Data disk `name` is mounted at /mnt/<name>; the shared file system at /mnt/shared."""
SHARED_FS_MOUNT_POINT = f"{DATA_ROOT}/shared"
HEALTH_TAG_KEY = "GpuInfraHealth"
"""Instance tag the node sets to `healthy` or `unhealthy` (readiness, visible in the console)."""
NODE_WRITTEN_TAGS = (HEALTH_TAG_KEY,)
"""Tags the nodes set on their own instance: an update after a refresh must not strip them
(fixed nodes ignore them, blocks.compute.nodes). No trust comes from a tag (NodeTrustNames)."""
MASTER_PORT = 29500
"""torchrun rendezvous port on node 0 (inside the cluster's security group)."""
MAX_REBOOTS = 2
"""Reboots the driver step may ask for before it gives up."""
DISK_WAIT_SECONDS = 600
DISK_POLL_SECONDS = 5
"""How long a node waits for each data disk to be attached (separate disks are attached
after the instance boots; ESS and inline disks are there at boot), and how often it looks."""
CUDA_REPOS = "https://developer.download.nvidia.com/compute/cuda/repos"
"""NVIDIA's package repositories (fabric manager): <CUDA_REPOS>/ubuntu2204|ubuntu2404/x86_64 by
the node's release; Alibaba Cloud Linux 3 takes rhel8/x86_64."""

_STEPS = resources.files(__package__) / "steps"
NODE_PATH = re.compile(r"^([A-Z_]+)=(?:\$\{\1:-)?\$(ROOT|[A-Z_]+)(/[A-Za-z0-9_./-]+)\}?$",
                       re.M)
"""A path assignment of probe.sh: `STATE_DIR=$ROOT/var/lib/gpu-infra`,
`LOG_FILE=${LOG_FILE:-$LOG_DIR/bootstrap.log}`."""


def shell_paths() -> dict[str, str]:
    """The node's directories and files as steps/probe.sh assigns them (their one source):
    STATE_DIR, LOG_DIR, LOG_FILE, BIN_DIR, ETC_DIR, without the sandbox `$ROOT`."""
    paths: dict[str, str] = {}
    text = (_STEPS / "probe.sh").read_text(encoding="utf-8")
    for name, base, rest in NODE_PATH.findall(text):
        paths[name] = ("" if base == "ROOT" else paths[base]) + rest
    return paths


NODE_PATHS = shell_paths()
STATE_ROOT = NODE_PATHS["STATE_DIR"]
"""Where the bootstrap keeps its state (steps/<step>.ok, ready, unhealthy)."""
LOG_DIR = NODE_PATHS["LOG_DIR"]
LOG_FILE = NODE_PATHS["LOG_FILE"]
INSTALL_DIR = posixpath.dirname(NODE_PATHS["BIN_DIR"])
"""/opt/gpu-infra: config.sh, bootstrap.sh and bin/ (probe.sh's BIN_DIR is its bin/)."""
PROBE_LIBRARY = f"{INSTALL_DIR}/probe.sh"
"""The node library (steps/probe.sh) every node program sources: bootstrap.sh, gpu-infra-peers
and the timers' checks."""


@dataclass(frozen=True)
class SharedFsMount:
    """An NFS export to mount at /mnt/shared."""

    source: str
    """`<mount address>:<export path>`."""
    options: str


@dataclass(frozen=True)
class GridPackage:
    """The GRID driver package (.run) the stack's bucket holds, for vws graphics fleets."""

    bucket: str
    key: str
    sha256: str | None = None


@dataclass(frozen=True)
class ElasticLaunch:
    """The training job unit of a training fleet (gpu-infra-job.service, settings in
    /etc/gpu-infra/elastic.env): it runs the job described in `job_dir` in its container,
    elastic torchrun inside (gpu-infra-torchrun): `--nnodes MIN:NNODES` (NNODES: the fleet's
    healthy nodes when the job starts, from gpu-infra-peers), c10d on node 0,
    `--max-restarts`, and every worker started through gpu-infra-resume with the newest
    checkpoint under `checkpoint_dir`. Nothing here depends on the node count, so adding
    nodes leaves the user data as it is."""

    min_nodes: int | None
    """MIN on spot fleets (their on-demand nodes, at least 1); None: every node (NNODES)."""
    max_restarts: int
    rdzv_id: str
    checkpoint_dir: str
    job_dir: str = jobs.STATE_JOB_DIR
    """Where the job's description is: jobs.JOB_DIR on the shared file system, else each
    node's jobs.STATE_JOB_DIR (the job script copies it there)."""
    mounts: tuple[str, ...] = ()
    """Node paths the job's container gets at the same path (read-write): the shared file
    system, the data disks, the checkpoint directory; the first is its working directory."""
    devices: tuple[str, ...] = ()
    """Device paths the container gets (the eRDMA devices where the nodes use eRDMA)."""


JOB_UNIT = "gpu-infra-job.service"
"""The unit that runs the fleet's training job on each node (steps/gpu-infra-job)."""


@dataclass(frozen=True)
class SpotWatch:
    """The spot-notice watcher unit (gpu-infra-spot-watch.service) of spot training nodes: the
    notice file, the release report, and leaving the job."""

    report_dir: str | None = None
    """Where each reclaimed node leaves its report (on the shared file system); None: the
    journal only."""
    leave_command: str = f"systemctl stop {JOB_UNIT}"
    """What the watcher runs once the checkpoint after the notice is complete (at most
    jobs.LEAVE_SECONDS after it): the node leaves the running job."""


@dataclass(frozen=True)
class GpuHealthCheck:
    """The GPU health check after boot (gpu_infra_health.py on a timer): the CloudMonitor
    group it puts its metric into, and how often it runs."""

    group_name: str
    interval_minutes: int = 5


@dataclass(frozen=True)
class NodeRegistry:
    """The stack's registry as the nodes pull from it (gpu-infra-pull): its VPC address, the
    ACR Enterprise instance whose temporary login token the node role asks for (None: the
    personal edition's token), and `<address>/<mirror namespace>` of the mirrored images."""

    endpoint: str
    instance_id: str | None
    mirror_prefix: str


@dataclass(frozen=True)
class ServingUnit:
    """The model server of an ECS inference fleet (serving_files): gpu-infra-serving.service
    on every node runs gpu-infra-serve, which fetches the model into `model_cache` (checked
    against its manifest), pulls `image` and runs it with every GPU, publishing `port`; the
    serving step waits for `readiness_path` before the node reports healthy."""

    image: str
    command: tuple[str, ...]
    """The server's command and arguments (empty: the image's entrypoint)."""
    port: int
    readiness_path: str
    model: str | None = None
    """The model's prefix in `models_bucket` (None: the image carries its model)."""
    models_bucket: str = ""
    model_cache: str = f"{STATE_ROOT}/models"
    """Where the node keeps the checked model (a data disk where the fleet has one)."""

    @property
    def model_dir(self) -> str:
        """Where the container finds the model (read-only): /mnt/models/<model>, as on ACK."""
        return f"{jobs.MODELS_PATH}/{self.model}" if self.model else ""


@dataclass(frozen=True)
class NodeTools:
    """Where the nodes fetch their node tools (node_tools_installer): an object of one of
    the stack's buckets, named by its sha256, which the node_tools step checks."""

    bucket: str
    key: str
    sha256: str


@dataclass(frozen=True)
class RenderWorker:
    """The render worker of a render farm's nodes (gpu_infra_render.py, gpu-infra-render.service,
    settings in /etc/gpu-infra/render.json, all from the node tools): one job at a time from
    `queue`, rendered in `image` with `--gpus gpus`, its files to `bucket`."""

    queue: str
    """The fleet's MNS job queue."""
    image: str
    command: tuple[str, ...]
    """The render command and its first arguments (the job's `args` follow); empty: the
    image's entrypoint."""
    environment: Mapping[str, str]
    gpus: str
    """`docker run --gpus`: `all`, or a count."""
    bucket: str
    """The outputs bucket the frames go to."""
    visibility_seconds: int
    """The queue's job timeout: the worker renews it every third of it."""
    work_dir: str
    """Where each job's /output directory lives on the node."""
    mounts: tuple[str, ...] = ()
    """Node paths mounted at the same path in the container (the shared file system)."""
    devices: tuple[str, ...] = ()
    """Device paths passed with `--device` (eRDMA's /dev/infiniband where the family has it)."""

    def settings(self) -> str:
        """/etc/gpu-infra/render.json: what the worker reads."""
        return json.dumps({"queue": self.queue, "image": self.image,
                           "command": list(self.command), "environment": dict(self.environment),
                           "gpus": self.gpus, "bucket": self.bucket,
                           "visibility_seconds": self.visibility_seconds,
                           "work_dir": self.work_dir, "mounts": list(self.mounts),
                           "devices": list(self.devices)}, indent=1, sort_keys=True) + "\n"


@dataclass(frozen=True)
class NodeTrustNames:
    """The OOS parameters a training fleet's trust comes from, which the stack writes and the
    node role may only read (blocks.compute.trust): the fleet's SSH user key and host key
    (encrypted parameters) and its node list (the instance ids, in pages: a page ending in
    "+" goes on in `<node_list>-2`, `-3`, ...)."""

    user_key: str
    host_key: str
    node_list: str


def trust_names(fleet: str, global_suffix: str | None) -> NodeTrustNames:
    """The parameter names of fleet `fleet`: `<fleet>-ssh-user-key`, `<fleet>-ssh-host-key`
    and `<fleet>-nodes`, each with the stack's global suffix (unique per region)."""
    return NodeTrustNames(*(with_suffix(f"{fleet}-{part}", global_suffix)
                            for part in ("ssh-user-key", "ssh-host-key", "nodes")))


def machine_group_id(fleet_name: str, global_suffix: str | None) -> str:
    """The `userdefined` id the fleet's nodes announce to SLS (the stack's machine group,
    blocks.logs, matches it)."""
    return with_suffix(fleet_name, global_suffix)


def health_group_name(alarm_name: str) -> str:
    """The application group of GpuHealthAlarm `alarm_name` (blocks.gpu_health): the nodes'
    GPU health check finds it by this name."""
    return child_name(alarm_name, "nodes")


@dataclass(frozen=True)
class BootstrapSpec:
    """What one fleet's nodes need; the same for every node of the fleet."""

    fleet: str
    """The fleet's GpuFleet tag value (its instances carry it; the node role may tag only
    them)."""
    region: str
    gpu_counts: Mapping[str, int]
    """Instance type -> GPUs the health check expects."""
    route: DriverRoute
    driver: DriverStack
    nvlink_types: frozenset[str] = frozenset()
    """Instance types whose GPUs the catalog says are joined by NVLink (checked)."""
    erdma: bool = False
    jumbo_frames: bool = False
    """eRDMA interface MTU 8500 (jumbo frames on the instances) instead of 1400."""
    fabric_manager: bool = False
    """The family may have NVSwitch: the node detects it and runs fabric manager if so."""
    data_disks: tuple[str, ...] = ()
    """Data disk names (the ECS disk names): the node mounts each at DATA_ROOT/<name>."""
    shared_fs: SharedFsMount | None = None
    trust: NodeTrustNames | None = None
    """Training wiring (SSH trust, hostfile, torchrun environment) from these parameters;
    None: the nodes do not know each other."""
    grid: GridPackage | None = None
    scaling_group_id: str | None = None
    lifecycle_hook_id: str | None = None
    """The scale-out hook the node completes (CONTINUE healthy, ABANDON unhealthy)."""
    log_machine_id: str | None = None
    """The `userdefined` id of the stack's SLS machine group (None: no log shipping)."""
    log_collector: bool = False
    """Install LoongCollector without joining a machine group (a baked image: its fleets'
    nodes join theirs at boot). Implied by `log_machine_id`."""

    @property
    def collects_logs(self) -> bool:
        """Whether the install steps install LoongCollector."""
        return self.log_collector or self.log_machine_id is not None
    elastic: ElasticLaunch | None = None
    spot_watch: SpotWatch | None = None
    gpu_health: GpuHealthCheck | None = None
    """The GPU health check after boot (delivered with the node tools)."""
    returns_jobs: bool = False
    """The drain hands unfinished jobs back to the stack's job queue at once
    (gpu_infra_queue.py, delivered with the node tools)."""
    registry: NodeRegistry | None = None
    """The stack's registry (None: the nodes log in to none; images of other registries are
    pulled without a login)."""
    check_image: str | None = None
    """The image the readiness gate starts a container of, with every GPU and the eRDMA
    devices (pulled through gpu-infra-pull); None: no container check (no registry holds
    the image)."""
    node_tools: NodeTools | None = None
    """Where the installer of the node tools is (node_tools_files: the job launcher, the
    spot watcher, the GPU health check); None: the nodes get none of them."""
    render_worker: RenderWorker | None = None
    """The render worker the nodes run (delivered with the node tools); None: none."""
    serving: ServingUnit | None = None
    """The model server every node runs (delivered with the node tools; the serving step
    starts it before the health step)."""

    @property
    def cluster(self) -> bool:
        """Whether the nodes are wired as one training cluster (`trust` set)."""
        return self.trust is not None

    @property
    def installs(self) -> bool:
        """Whether the nodes install software: every route but `preinstalled`, whose image
        carries it (the steps then only check and configure, and fail on what is missing)."""
        return self.route != "preinstalled"

    def node_steps(self) -> list[str]:
        """The steps a booting node runs, in order: log shipping first, so a failing step's
        log reaches SLS; the node tools next, so the GPU health timer (which also reports a
        bootstrap that ended unhealthy) is there whichever later step fails."""
        steps = ["logs"] if self.log_machine_id else []
        steps += ["node_tools"] if self.node_tools else []
        steps += ["data_disks"] if self.data_disks else []
        steps += ["shared_fs" if self.shared_fs else "shared_fs_off"]
        steps += [step for step in self.install_steps() if step != "logs_install"]
        steps += ["nccl_env"] if self.erdma else []
        steps += ["cluster_ssh"] if self.cluster else []
        steps += ["render_worker"] if self.render_worker else []
        steps += ["serving"] if self.serving else []
        steps += ["health"]
        steps += ["cluster_peers"] if self.cluster else []
        return steps

    def install_steps(self) -> list[str]:
        """The steps that install software: what a baked image holds."""
        steps = ["gpu_driver"]
        steps += ["erdma"] if self.erdma else []
        steps += ["fabric_manager"] if self.fabric_manager else []
        return [*steps, "container_runtime", "cloudmonitor",
                *(["logs_install"] if self.collects_logs else [])]


STEP_FILES = {
    "data_disks": "mounts.sh", "shared_fs": "shared_fs.sh", "shared_fs_off": "shared_fs.sh",
    "gpu_driver": "gpu_driver.sh",
    "erdma": "erdma.sh", "fabric_manager": "fabric_manager.sh", "nccl_env": "nccl_env.sh",
    "container_runtime": "container_runtime.sh",
    "node_tools": "job_tools.sh",  # the file keeps the name it had when only jobs used it
    "cloudmonitor": "cloudmonitor.sh", "cluster_ssh": "cluster.sh", "cluster_peers": "cluster.sh",
    "health": "health.sh", "logs": "logs.sh", "logs_install": "logs.sh",
    "render_worker": "render.sh",
    "serving": "serving.sh",
}
"""Step -> the file defining step_<name>."""
HEALTH_NEEDS = ("gpu_driver.sh", "erdma.sh", "fabric_manager.sh", "cloudmonitor.sh")
"""The health check calls helpers of these files, so they are always included."""


def step_source(file_name: str) -> str:
    """The text of one shipped step file."""
    return (_STEPS / file_name).read_text(encoding="utf-8")


def unit_source(file_name: str) -> str:
    """A shipped systemd unit without its comment and blank lines (as the nodes get it)."""
    return "".join(line for line in step_source(file_name).splitlines(keepends=True)
                   if line.strip() and not line.startswith("#"))


NODE_ONLY_SETTINGS = frozenset({
    "SHARED_FS_SOURCE", "SHARED_FS_OPTIONS", "SHARED_FS_MOUNT_POINT", "DATA_ROOT",
    "DISK_WAIT_SECONDS", "DISK_POLL_SECONDS", "ECS_ENDPOINT", "ESS_ENDPOINT", "CMS_ENDPOINT",
    "SCALING_GROUP_ID", "LIFECYCLE_HOOK_ID", "SCALE_OUT_WAIT_SECONDS", "HEALTH_TAG_KEY",
    "OOS_ENDPOINT", "SSH_USER_KEY", "SSH_HOST_KEY", "NODE_LIST", "MASTER_PORT", "DATA_DISKS",
    "NODE_RELEASE",
    "NCCL_ENV", "NCCL_MULTI_NIC_ENV", "NVLINK_TYPES", "GPU_COUNTS", "LC_ID_FILE",
    "LOG_ID", "NODE_STEPS", "CHECK_IMAGE", "CHECK_SECONDS", "PULL_TRIES",
    "REGISTRY_ENDPOINT", "REGISTRY_INSTANCE_ID", "CR_ENDPOINT"})
"""Settings only the node steps read: an image build's config.sh leaves them out (its
install steps never read them, and the nodes' user data writes the full file)."""
LOG_SETTINGS = frozenset({"LC_URL", "LC_BINARY", "LC_ID_FILE", "LOG_ID"})
"""Settings only the log steps read: left out where nothing collects logs."""
GRID_SETTINGS = frozenset({"GRID_BUCKET", "GRID_OBJECT", "GRID_SHA256"})
"""Settings only the GRID route reads: left out on other routes."""
SCALE_OUT_SETTINGS = frozenset({"ESS_ENDPOINT", "SCALING_GROUP_ID", "LIFECYCLE_HOOK_ID",
                                "SCALE_OUT_WAIT_SECONDS"})
"""Settings only the scale-out answer reads: left out on fixed nodes."""


def config_script(spec: BootstrapSpec, *, bake_only: bool = False) -> str:
    """/opt/gpu-infra/config.sh: the fleet's settings as shell variables (`KEY=value` lines,
    which gpu-infra-api also reads; the arrays `readonly`); `bake_only`: without
    NODE_ONLY_SETTINGS. The scalars are plain assignments: a `readonly` on each would cost
    about 450 bytes of the 32 KB user data."""
    erdma_url = (f"{node_stack.ERDMA_MIRROR}/erdma_installer-"
                 f"{node_stack.ERDMA_INSTALLER_VERSION}.tar.gz")
    values: dict[str, str | int] = {
        "FLEET": spec.fleet, "REGION": spec.region,
        "METADATA_URL": node_stack.METADATA_URL,
        "METADATA_TOKEN_URL": node_stack.METADATA_TOKEN_URL, "DRIVER_ROUTE": spec.route,
        "INSTALL": int(spec.installs),
        "DRIVER_VERSION": spec.driver.driver, "CUDA_VERSION": spec.driver.cuda,
        "CUDNN_VERSION": spec.driver.cudnn,
        "AUTO_INSTALL_SCRIPT": node_stack.AUTO_INSTALL_SCRIPT,
        "AUTO_INSTALL_PATH": node_stack.AUTO_INSTALL_PATH, "MAX_REBOOTS": MAX_REBOOTS,
        "ERDMA": int(spec.erdma), "ERDMA_MIRROR": node_stack.ERDMA_MIRROR,
        "ERDMA_INSTALLER_URL": erdma_url,
        "ERDMA_INSTALLER_SHA256": node_stack.ERDMA_INSTALLER_SHA256 or "",
        "ERDMA_MTU": node_stack.erdma_mtu(spec.jumbo_frames),
        "FABRIC_MANAGER": int(spec.fabric_manager),
        "CUDA_REPOS": CUDA_REPOS,
        "DOCKER_VERSION": container_runtime.DOCKER_VERSION,
        "DOCKER_MIRROR": container_runtime.DOCKER_MIRROR,
        "NVIDIA_CTK_VERSION": container_runtime.NVIDIA_CTK_VERSION,
        "NVIDIA_CTK_MIRROR": container_runtime.NVIDIA_CTK_MIRROR,
        "CHECK_IMAGE": spec.check_image or "", "CHECK_SECONDS": container_runtime.CHECK_SECONDS,
        "PULL_TRIES": container_runtime.PULL_TRIES,
        "CMS_INSTALLER_URL": node_stack.cloudmonitor_installer_url(spec.region),
        "CMS_AGENT_VERSION": node_stack.CLOUDMONITOR_AGENT_VERSION,
        "LC_URL": node_stack.loongcollector_installer_url(spec.region),
        "LC_BINARY": node_stack.LOONGCOLLECTOR_BINARY,
        "LC_ID_FILE": node_stack.LOONGCOLLECTOR_ID_FILE,
        "LOG_ID": spec.log_machine_id or "",
        "SHARED_FS_SOURCE": spec.shared_fs.source if spec.shared_fs else "",
        "SHARED_FS_OPTIONS": spec.shared_fs.options if spec.shared_fs else "",
        "SHARED_FS_MOUNT_POINT": SHARED_FS_MOUNT_POINT, "DATA_ROOT": DATA_ROOT,
        "DISK_WAIT_SECONDS": DISK_WAIT_SECONDS, "DISK_POLL_SECONDS": DISK_POLL_SECONDS,
        "GRID_BUCKET": spec.grid.bucket if spec.grid else "",
        "GRID_OBJECT": spec.grid.key if spec.grid else "",
        "GRID_SHA256": (spec.grid.sha256 or "") if spec.grid else "",
        "ECS_ENDPOINT": node_stack.api_endpoint("ecs", spec.region),
        "ESS_ENDPOINT": node_stack.api_endpoint("ess", spec.region),
        "CMS_ENDPOINT": node_stack.api_endpoint("metrics", spec.region),
        "SCALE_OUT_WAIT_SECONDS": node_stack.readiness_timeout(
            spec.route, spec.serving is not None) - node_stack.SCALE_OUT_ANSWER_MARGIN_SECONDS,
        "SCALING_GROUP_ID": spec.scaling_group_id or "",
        "LIFECYCLE_HOOK_ID": spec.lifecycle_hook_id or "",
        "HEALTH_TAG_KEY": HEALTH_TAG_KEY, "NODE_RELEASE": node_release(),
    }
    if spec.registry:
        values.update({"REGISTRY_ENDPOINT": spec.registry.endpoint,
                       "REGISTRY_INSTANCE_ID": spec.registry.instance_id or "",
                       "CR_ENDPOINT": node_stack.api_endpoint("cr", spec.region)})
    if spec.node_tools:
        values.update({"NODE_TOOLS_BUCKET": spec.node_tools.bucket,
                       "NODE_TOOLS_OBJECT": spec.node_tools.key})
    if spec.serving:  # the serving step's and the model fetch's (the bucket stays out of the
        # node tools, which name no bucket)
        values.update({"SERVING_PORT": spec.serving.port,
                       "SERVING_READY_PATH": spec.serving.readiness_path,
                       "SERVING_START_SECONDS": serving.START_SECONDS,
                       "SERVING_POLL_SECONDS": serving.POLL_SECONDS,
                       "MODELS_BUCKET": spec.serving.models_bucket})
    if spec.trust:
        values.update({"OOS_ENDPOINT": node_stack.api_endpoint("oos", spec.region),
                       "SSH_USER_KEY": spec.trust.user_key,
                       "SSH_HOST_KEY": spec.trust.host_key,
                       "NODE_LIST": spec.trust.node_list, "MASTER_PORT": MASTER_PORT})
    arrays = {
        "DATA_DISKS": list(spec.data_disks),
        "NVLINK_TYPES": sorted(spec.nvlink_types), "NODE_STEPS": spec.node_steps(),
        "NCCL_ENV": [f"{k}={v}" for k, v in node_stack.NCCL_ERDMA_ENV.items()],
        "NCCL_MULTI_NIC_ENV": [f"{k}={v}"
                               for k, v in node_stack.NCCL_ERDMA_MULTI_NIC_ENV.items()],
    }
    skip = NODE_ONLY_SETTINGS if bake_only else frozenset()
    if not spec.collects_logs:
        skip |= LOG_SETTINGS
    if spec.grid is None:
        skip |= GRID_SETTINGS
    if spec.lifecycle_hook_id is None:
        skip |= SCALE_OUT_SETTINGS
    else:
        skip |= {"NODE_RELEASE"}  # scaling nodes are replaced, never reconfigured
    lines = ["# shellcheck shell=bash disable=SC2034"]
    lines += [f"{key}={shlex.quote(str(value))}" for key, value in values.items()
              if key not in skip]
    lines += [f"readonly -a {key}=({' '.join(shlex.quote(item) for item in items)})"
              for key, items in arrays.items() if key not in skip]
    counts = " ".join(f'["{t}"]={n}' for t, n in sorted(spec.gpu_counts.items()))
    if "GPU_COUNTS" not in skip:
        lines.append(f"readonly -A GPU_COUNTS=({counts})")
    return "\n".join(lines) + "\n"


def bootstrap_program(spec: BootstrapSpec, *, bake_only: bool = False) -> str:
    """/opt/gpu-infra/bootstrap.sh: the library, the fleet's steps and its main. `bake_only`:
    the copy an image build runs, with the install steps only (the same step files).
    Comments and blank lines are left out (minify.strip_shell)."""
    node_steps = [] if bake_only else spec.node_steps()
    files = dict.fromkeys(["lib.sh", *(STEP_FILES[s] for s in node_steps), *HEALTH_NEEDS,
                           *(STEP_FILES[s] for s in spec.install_steps())])
    node_runs = '    run_steps "${NODE_STEPS[@]}"' if node_steps else \
        '    fail "this copy is for image builds: run it with bake"'
    bake_runs = f"    run_steps {' '.join(spec.install_steps())}"
    rerun = ['  elif [ "$MODE" = rerun ]; then', "    shift", '    run_steps "$@"'] \
        if node_steps else []
    parts = ["#!/bin/bash", "set -Eeuo pipefail",
             "# shellcheck source=/dev/null",
             f'. "${{GPU_INFRA_ROOT:-}}{INSTALL_DIR}/config.sh"',
             "# shellcheck source=/dev/null",
             f'. "${{GPU_INFRA_ROOT:-}}{PROBE_LIBRARY}"',
             *(step_source(name).rstrip("\n") for name in files),
             "main() {", '  if [ "$MODE" = bake ]; then', bake_runs, *rerun,
             "  else", node_runs, "  fi", "}", 'main "$@"']
    return strip_shell("\n".join(parts) + "\n")


def node_files(spec: BootstrapSpec) -> dict[str, tuple[str, int]]:
    """Path -> (content, mode) of every file the user data writes: the scripts without
    their comments (the step files keep them). Where the fleet has node tools, bootstrap.sh
    is the loader (steps/gpu-infra-load) and the node tools bring the fleet's own."""
    bootstrap = strip_shell(step_source("gpu-infra-load")) if spec.node_tools \
        else bootstrap_program(spec)
    files = {
        f"{INSTALL_DIR}/config.sh": (config_script(spec), 0o644),
        PROBE_LIBRARY: (strip_shell(step_source("probe.sh")), 0o644),
        f"{INSTALL_DIR}/bootstrap.sh": (bootstrap, 0o755),
        f"{INSTALL_DIR}/bin/gpu-infra-api": (strip_python(step_source("gpu-infra-api")), 0o755),
        "/etc/systemd/system/gpu-infra-bootstrap.service": (
            unit_source("gpu-infra-bootstrap.service"), 0o644),
    }
    if spec.lifecycle_hook_id:  # gpu-infra-api's part only scaling fleets use
        files[f"{INSTALL_DIR}/bin/gpu_infra_scale_out.py"] = api_module("gpu_infra_scale_out")
    if spec.node_tools is None:
        files.update(gpu_checks_module())
        files.update(pull_files())
        files.update(cluster_files(spec))
    return files


def cluster_files(spec: BootstrapSpec) -> dict[str, tuple[str, int]]:
    """A training fleet's wiring: gpu-infra-peers, its timer and gpu-infra-api's part that
    reads the fleet's trust (gpu_infra_peers.py); in the node tools where the fleet has them
    (the cluster steps run after them), else in the user data."""
    if not spec.cluster:
        return {}
    files = {f"{INSTALL_DIR}/bin/gpu_infra_peers.py": api_module("gpu_infra_peers"),
             f"{INSTALL_DIR}/bin/gpu-infra-peers": (
                 strip_shell(step_source("gpu-infra-peers")), 0o755)}
    for unit in ("gpu-infra-peers.service", "gpu-infra-peers.timer"):
        files[f"/etc/systemd/system/{unit}"] = (unit_source(unit), 0o644)
    return files


def api_module(module: str) -> tuple[str, int]:
    """One of gpu-infra-api's optional parts (steps/<module>.py), as the node gets it."""
    return strip_python(step_source(f"{module}.py"), usage=False), 0o644


def gpu_checks_module() -> dict[str, tuple[str, int]]:
    """gpu-infra-api's GPU checks (CUDA context, NVLink): in the node tools where the fleet
    has them (the health step runs after them), else in the user data."""
    return {f"{INSTALL_DIR}/bin/gpu_infra_gpus.py": api_module("gpu_infra_gpus")}


def pull_files() -> dict[str, tuple[str, int]]:
    """gpu-infra-pull and gpu-infra-api's part behind it (gpu_infra_pull.py): in the node
    tools where the fleet has them (the container runtime step runs after them), else in the
    user data."""
    return {f"{INSTALL_DIR}/bin/gpu_infra_pull.py": api_module("gpu_infra_pull"),
            f"{INSTALL_DIR}/bin/gpu-infra-pull": (
                strip_shell(step_source("gpu-infra-pull")), 0o755)}


@functools.cache
def node_release() -> str:
    """What identifies the node code of this release: 16 hex digits of SHA-256 over the step
    files (which read the settings, gpu-infra-api's parser included) and the minifier that
    renders them. The config.sh of fixed nodes (the configuration channel's) carries it as
    NODE_RELEASE."""
    digest = hashlib.sha256()
    sources = sorted(_STEPS.iterdir(), key=lambda entry: entry.name)
    for source in [*sources, resources.files(__package__) / "minify.py"]:
        if source.is_file():
            digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


CONFIG_WAIT_SECONDS = 600
"""How long the configuration command waits for a new node's first boot to write config.sh
(Cloud Assistant may run it before cloud-init has run the user data)."""
CONFIG_POLL_SECONDS = 5
CONFIG_RUN_SECONDS = CONFIG_WAIT_SECONDS + DISK_WAIT_SECONDS + 600
"""How long the configuration command may run: the wait for a first boot, then a re-run
that may wait DISK_WAIT_SECONDS for a new data disk, and 10 minutes for the rest of it."""
SETTING_USE = re.compile(r"\$\{?([A-Z][A-Z0-9_]*)")
"""A shell variable read: `$NAME`, `${NAME...}`."""
CONFIG_KEY = re.compile(r"^(?:readonly -. )?([A-Z][A-Z0-9_]*)[=(]", re.M)
"""A setting's name in config.sh."""
ALWAYS_RERUN = ("health", "cluster_peers")
"""Steps a configuration re-run always ends with: the readiness check again (it writes
`ready` anew, or marks the node unhealthy) and the peers' refresh."""


def step_settings(step: str) -> frozenset[str]:
    """The variables the file of `step` reads (its settings among them)."""
    return frozenset(SETTING_USE.findall(step_source(STEP_FILES[step])))


def rerun_script(spec: BootstrapSpec) -> list[str]:
    """POSIX sh lines setting R to the steps whose settings are among the changed keys `$k`
    (space-separated, with spaces around): each step whose file reads one, in the fleet's
    step order, then ALWAYS_RERUN; every step when a changed key is read by none of them
    (the step list itself, a library setting)."""
    steps = spec.node_steps()
    keys = frozenset(CONFIG_KEY.findall(config_script(spec)))
    reads = {step: sorted(step_settings(step) & keys) for step in steps}
    known = " ".join(sorted({key for read in reads.values() for key in read}))
    lines = ["R=", "a() { for v in $2; do case $k in *\" $v \"*) R=\"$R $1\"; return ;; esac; "
             "done; }"]
    lines += [f"a {step} '{' '.join(read)}'" for step, read in reads.items()
              if read and step not in ALWAYS_RERUN]
    lines += [f'R="$R {step}"' for step in ALWAYS_RERUN if step in steps]
    lines += [f"for v in $k; do case ' {known} ' in *\" $v \"*) ;; "
              f"*) R='{' '.join(steps)}' ;; esac; done"]
    return lines


def config_command(spec: BootstrapSpec) -> str:
    """The configuration channel to running nodes (a Cloud Assistant command, POSIX sh,
    at most CONFIG_RUN_SECONDS), a success on every node that has nothing to change:
    - a node still on its first boot: waits up to CONFIG_WAIT_SECONDS for config.sh (its
      user data carries this plan's configuration), then goes on as below; none by then:
      nothing to do (the user data writes it);
    - a node of another gpu-infra release (its config.sh has another NODE_RELEASE; the
      steps it booted with read the settings of their own release): left as it is, it
      keeps its configuration until replaced (`fleet.push_user_data`);
    - the same configuration (a node-count change: the node list is an OOS parameter the
      peers timer reads): nothing, `ready` and the torchrun environment stay;
    - another one: the new config.sh, then, on a node that is ready, only the steps whose
      files read a changed setting (rerun_script) and the readiness check, with `ready`
      kept until that check decides; a node that is not ready (still booting, or failed)
      runs its whole bootstrap again (started, not awaited)."""
    config, program = f"{INSTALL_DIR}/config.sh", f"{INSTALL_DIR}/bootstrap.sh"
    return "\n".join([
        "set -eu",
        f'C="${{GPU_INFRA_ROOT:-}}{config}" S="${{GPU_INFRA_ROOT:-}}{STATE_ROOT}" t=0',
        'while [ ! -f "$C" ]; do',
        f'  if [ "$t" -ge {CONFIG_WAIT_SECONDS} ]; then',
        f"    echo 'gpu-infra: no config.sh after {CONFIG_WAIT_SECONDS} s: the user data "
        "writes this configuration when it runs'",
        "    exit 0", "  fi",
        f"  sleep {CONFIG_POLL_SECONDS}", f"  t=$((t + {CONFIG_POLL_SECONDS}))", "done",
        f"if ! grep -qx 'NODE_RELEASE={node_release()}' \"$C\"; then",
        "  echo 'gpu-infra: this node runs the bootstrap of another gpu-infra release and "
        "keeps its configuration (replace it to apply this one: fleet.push_user_data)'",
        "  exit 0", "fi",
        *write_files_script({f"{config}.new": (config_script(spec), 0o644)}),
        'if cmp -s "$C.new" "$C"; then',
        '  rm -f "$C.new"', "  echo 'gpu-infra: the configuration is unchanged'", "  exit 0",
        "fi",
        'k=" $({ grep -vxF -f "$C" "$C.new"; grep -vxF -f "$C.new" "$C"; } | '
        "sed 's/^readonly -. //; s/[=(].*//' | sort -u | tr '\\n' ' ')\"",
        'mv "$C.new" "$C"',
        "if systemctl is-active --quiet gpu-infra-bootstrap.service; then",
        "  echo 'gpu-infra: the bootstrap is running; its next run reads the new config.sh'",
        '  exit 0', "fi",
        'if [ ! -f "$S/ready" ]; then',
        "  echo 'gpu-infra: the node is not ready: its whole bootstrap runs again'",
        "  systemctl start --no-block gpu-infra-bootstrap.service", "  exit 0", "fi",
        *rerun_script(spec),
        'echo "gpu-infra: changed:$k; re-running:$R"',
        f'exec "${{GPU_INFRA_ROOT:-}}{program}" rerun $R']) + "\n"


def env_file(values: Mapping[str, str | int]) -> str:
    """KEY=value lines a shell (`set -a; .`) and systemd's EnvironmentFile both read."""
    return "".join(f"{key}={shlex.quote(str(value))}\n" for key, value in values.items())


def elastic_settings(elastic: ElasticLaunch) -> dict[str, str | int]:
    """/etc/gpu-infra/elastic.env: the job unit's settings and the job's defaults (the job
    script reads NNODES_MIN and MAX_RESTARTS)."""
    return {**({"NNODES_MIN": elastic.min_nodes} if elastic.min_nodes else {}),
            "RDZV_PORT": jobs.RDZV_PORT, "RDZV_ID": elastic.rdzv_id,
            "MAX_RESTARTS": elastic.max_restarts,
            "GPU_INFRA_CHECKPOINT_DIR": elastic.checkpoint_dir,
            "GPU_INFRA_SPOT_NOTICE": jobs.SPOT_NOTICE_FILE,
            "GPU_INFRA_SPOT_NOTICE_DIR": jobs.SPOT_NOTICE_DIR,
            "GPU_INFRA_JOB_DIR": elastic.job_dir,
            "GPU_INFRA_JOB_SHARED": int(elastic.job_dir == jobs.JOB_DIR),
            "GPU_INFRA_JOB_POLL_SECONDS": jobs.JOB_POLL_SECONDS,
            "GPU_INFRA_JOB_MOUNTS": " ".join(elastic.mounts),
            "GPU_INFRA_JOB_WORKDIR": elastic.mounts[0] if elastic.mounts else "/",
            "GPU_INFRA_JOB_DEVICES": " ".join(elastic.devices)}


def launch_files(elastic: ElasticLaunch | None,
                 spot_watch: SpotWatch | None) -> dict[str, tuple[str, int]]:
    """The elastic launcher and the spot watcher's files (the peers step writes the
    torchrun.env they read)."""
    files: dict[str, tuple[str, int]] = {}
    if elastic:
        for name in ("gpu-infra-torchrun", "gpu-infra-resume", "gpu-infra-job"):
            files[f"{jobs.LAUNCHER_DIR}/{name}"] = (strip_shell(step_source(name)), 0o755)
        files[f"/etc/systemd/system/{JOB_UNIT}"] = (unit_source(JOB_UNIT), 0o644)
        files["/etc/gpu-infra/elastic.env"] = (env_file(elastic_settings(elastic)), 0o644)
    if spot_watch:
        watch = spot_watch
        files[f"{INSTALL_DIR}/bin/gpu-infra-spot-watch"] = (
            strip_shell(step_source("gpu-infra-spot-watch")), 0o755)
        files["/etc/systemd/system/gpu-infra-spot-watch.service"] = (
            step_source("gpu-infra-spot-watch.service"), 0o644)
        settings: dict[str, str | int] = {"GPU_INFRA_SPOT_NOTICE_DIR": jobs.SPOT_NOTICE_DIR,
                    "GPU_INFRA_SPOT_POLL_SECONDS": jobs.SPOT_POLL_SECONDS,
                    "GPU_INFRA_LEAVE_COMMAND": watch.leave_command,
                    "GPU_INFRA_LEAVE_SECONDS": jobs.LEAVE_SECONDS}
        if elastic:
            settings["GPU_INFRA_CHECKPOINT_DIR"] = elastic.checkpoint_dir
        if watch.report_dir:
            settings["GPU_INFRA_REPORT_DIR"] = watch.report_dir
        files["/etc/gpu-infra/spot-watch.env"] = (env_file(settings), 0o644)
    return files


QUEUE_NAME = re.compile(r"^[A-Za-z0-9-]+$")
"""A job queue name the drain can hold in single quotes (the stack's MNS queue names are
letters, digits and hyphens)."""


def drain_command(limit_seconds: int, ports: Sequence[int] = (),
                  job_queue: str | None = None) -> str:
    """The drain an instance leaving a scale-in runs (steps/drain.sh, without comments):
    stop taking work, wait up to `limit_seconds` for jobs and requests to `ports` in flight,
    hand back the rest, at once to `job_queue` (the stack's MNS queue; default None: the
    jobs return when their visibility ends)."""
    if job_queue is not None and not QUEUE_NAME.match(job_queue):
        raise ValueError(f"not an MNS queue name: {job_queue!r}")
    script = step_source("drain.sh").replace("@LIMIT@", str(max(limit_seconds, 0)))
    script = script.replace("@QUEUE@", job_queue or "")
    return strip_shell(script.replace("@PORTS@", " ".join(str(port) for port in ports)))


def serving_files(unit: ServingUnit) -> dict[str, tuple[str, int]]:
    """The model server's unit, its program (gpu-infra-serve), its settings
    (/etc/gpu-infra/serving.env) and, with a model, gpu-infra-api's model fetch."""
    settings: dict[str, str | int] = {
        "SERVING_IMAGE": unit.image, "SERVING_ENTRYPOINT": unit.command[0] if unit.command
        else "", "SERVING_ARGS": shlex.join(unit.command[1:]),
        "SERVING_CONTAINER": serving.CONTAINER, "MODEL": unit.model or "",
        "MODEL_CACHE": unit.model_cache, "MODEL_DIR": unit.model_dir}
    files = {f"{INSTALL_DIR}/bin/gpu-infra-serve": (
                 strip_shell(step_source("gpu-infra-serve")), 0o755),
             f"/etc/systemd/system/{serving.UNIT}": (
                 unit_source(serving.UNIT).replace("@CONTAINER@", serving.CONTAINER), 0o644),
             "/etc/gpu-infra/serving.env": (env_file(settings), 0o644)}
    if unit.model:
        files[f"{INSTALL_DIR}/bin/gpu_infra_models.py"] = api_module("gpu_infra_models")
    return files


def gpu_health_files(check: GpuHealthCheck) -> dict[str, tuple[str, int]]:
    """The GPU health check, its unit (bounded in CPU, I/O and time) and its timer."""
    service = step_source("gpu-infra-gpu-health.service").replace("@GROUP@", check.group_name)
    timer = step_source("gpu-infra-gpu-health.timer").replace(
        "@INTERVAL@", f"{check.interval_minutes}min")
    return {f"{INSTALL_DIR}/bin/gpu_infra_health.py": (
                strip_python(step_source("gpu_infra_health.py")), 0o755),
            "/etc/systemd/system/gpu-infra-gpu-health.service": (service, 0o644),
            "/etc/systemd/system/gpu-infra-gpu-health.timer": (timer, 0o644)}


def render_files(worker: RenderWorker) -> dict[str, tuple[str, int]]:
    """The render worker, its unit and its settings (the render_worker step starts it)."""
    return {f"{INSTALL_DIR}/bin/gpu_infra_render.py": (
                strip_python(step_source("gpu_infra_render.py")), 0o755),
            "/etc/systemd/system/gpu-infra-render.service": (
                unit_source("gpu-infra-render.service"), 0o644),
            "/etc/gpu-infra/render.json": (worker.settings(), 0o644)}


UNIT_FILES = {
    "gpu-infra-spot-watch.service": (f"{INSTALL_DIR}/bin/gpu-infra-spot-watch",
                                     "/etc/gpu-infra/spot-watch.env"),
    JOB_UNIT: (f"{INSTALL_DIR}/bin/gpu-infra-job", "/etc/gpu-infra/elastic.env"),
    "gpu-infra-gpu-health.timer": (),
}
"""Each unit the node tools install -> the files it reads besides its own unit file: when
any of them changed, the installer restarts the unit (`enable --now` leaves a running one
as it was); a timer's service reads its files afresh at every run. (The peers timer is the
cluster steps': cluster_peers restarts it.)"""
NODE_OBJECTS_PREFIX = "gpu-infra/"
"""Key prefix of every object the nodes fetch from the stack's buckets: no lifecycle rule
moves or expires it (blocks.storage.buckets)."""
NODE_TOOLS_PREFIX = f"{NODE_OBJECTS_PREFIX}node-tools"
"""Key prefix of the node tools' installer in the stack's bucket."""


def node_tools_files(spec: BootstrapSpec) -> dict[str, tuple[str, int]]:
    """What the node tools install: the fleet's bootstrap.sh (over the user data's loader),
    the job launcher and spot watcher (launch_files), the GPU health check
    (gpu_health_files), the model server (serving_files), the drain's hand-back to the job
    queue (gpu_infra_queue.py), gpu-infra-api's GPU checks and the cluster wiring: what the
    user data has no room for."""
    with_tools = spec if spec.node_tools else replace(spec, node_tools=NodeTools("", "", ""))
    files = {f"{INSTALL_DIR}/bootstrap.sh": (bootstrap_program(with_tools), 0o755),
             **launch_files(spec.elastic, spec.spot_watch)}
    if spec.gpu_health:
        files.update(gpu_health_files(spec.gpu_health))
    if spec.serving:
        files.update(serving_files(spec.serving))
    if spec.returns_jobs or spec.render_worker:
        files[f"{INSTALL_DIR}/bin/gpu_infra_queue.py"] = (
            strip_python(step_source("gpu_infra_queue.py")), 0o755)
    if spec.render_worker:
        files.update(render_files(spec.render_worker))
    if spec.gpu_health or spec.returns_jobs or spec.render_worker:  # their shared part
        files[f"{INSTALL_DIR}/bin/gpu_infra_node.py"] = api_module("gpu_infra_node")
    files.update(gpu_checks_module())
    files.update(pull_files())
    files.update(cluster_files(spec))
    return files


def node_tools_installer(spec: BootstrapSpec) -> str:
    """The installer the loader and the node_tools step fetch and run: it writes
    node_tools_files and enables the spot watcher and the health timer where there are
    ones."""
    files = node_tools_files(spec)
    lines = ["#!/bin/bash", f"# gpu-infra node tools of fleet {spec.fleet} (the node_tools "
             "step runs this)", "set -euo pipefail", *write_files_script(files, track=True)]
    units = {unit: reads for unit, reads in UNIT_FILES.items()
             if f"/etc/systemd/system/{unit}" in files}
    if any(path.startswith("/etc/systemd/system/") for path in files):
        lines.append("systemctl daemon-reload")
    for unit, reads in units.items():
        changed = "|".join(f'*" {path} "*' for path in (f"/etc/systemd/system/{unit}", *reads))
        lines += [f"systemctl enable {unit}", 'case "$C " in',
                  f"  {changed}) systemctl restart --no-block {unit} ;;",
                  f"  *) systemctl start --no-block {unit} ;;", "esac"]
    return "\n".join(lines) + "\n"


def with_node_tools(spec: BootstrapSpec, bucket: str) -> BootstrapSpec:
    """`spec` with its node tools in `bucket` (under NODE_TOOLS_PREFIX, named by the
    installer's sha256)."""
    installer = node_tools_installer(spec)
    digest = hashlib.sha256(installer.encode("utf-8")).hexdigest()
    return replace(spec, node_tools=NodeTools(bucket, f"{NODE_TOOLS_PREFIX}/{digest}.sh",
                                              digest))


FILE_DELIMITER = "GPU_INFRA_EOF"
"""Ends each file's here-document (no file may hold it as a line)."""


def write_files_script(files: Mapping[str, tuple[str, int]], *,
                       track: bool = False) -> list[str]:
    """POSIX shell lines writing `files` under ${GPU_INFRA_ROOT} (empty on a node): one
    function `w PATH MODE` (makes the directory, writes stdin, sets the mode) and a
    here-document per file, so each file costs its path once. `track` (default off): `$C`
    lists the paths whose content or mode changed, each after a space."""
    write = 'w() { mkdir -p "$R${1%/*}" && cat > "$R$1" && chmod "$2" "$R$1"; }'
    if track:
        write = ('w() { mkdir -p "$R${1%/*}" && cat > "$R$1.new" && chmod "$2" "$R$1.new" && '
                 '{ cmp -s "$R$1.new" "$R$1" && [ "$(stat -c %a "$R$1")" = "$2" ] || '
                 'C="$C $1"; } && mv "$R$1.new" "$R$1"; }')
    lines = ['R=${GPU_INFRA_ROOT:-}', *(["C="] if track else []), write]
    for path, (content, mode) in files.items():
        assert f"\n{FILE_DELIMITER}\n" not in f"\n{content}", path
        lines += [f"w {path} {mode:o} <<'{FILE_DELIMITER}'", content.rstrip("\n"),
                  FILE_DELIMITER]
    return lines


def user_data(spec: BootstrapSpec) -> str:
    """The user data of every node of the fleet: node_script, packed (packing.pack)."""
    return pack(node_script(spec), INSTALL_DIR)


def unpack_user_data(text: str) -> str | None:
    """The node script the user data `text` runs (None if it is not gpu-infra's)."""
    return unpack(text)


def node_script(spec: BootstrapSpec) -> str:
    """What the user data runs: write the files, enable the unit, start it (without waiting:
    cloud-init finishes while the bootstrap runs)."""
    lines = ["#!/bin/bash",
             f"# gpu-infra node bootstrap of fleet {spec.fleet}; log: {LOG_FILE}",
             "set -euo pipefail", *write_files_script(node_files(spec)),
             "systemctl daemon-reload",
             "systemctl enable gpu-infra-bootstrap.service",
             "systemctl start --no-block gpu-infra-bootstrap.service"]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class BakeTask:
    """One task of an image build, in order: a shell command, or a reboot (command None)."""

    name: str
    command: str | None


def _write_task_name(path: str) -> str:
    """`/opt/gpu-infra/config.sh` -> WriteConfig."""
    return "Write" + path.rsplit("/", 1)[1].removesuffix(".sh").capitalize()


def bake_tasks(spec: BootstrapSpec) -> list[BakeTask]:
    """What an image build runs: write config.sh (without NODE_ONLY_SETTINGS), probe.sh and
    the install steps' bootstrap.sh (one task each, in POSIX sh: Cloud Assistant runs a task
    as `sh -c`, dash on Ubuntu; the bake calls no cloud API, so gpu-infra-api stays out), run
    the install steps in `bake` mode, reboot (the driver loads), run them again (resume and
    verify), then remove the build's traces, but only once every install step passed. The
    nodes' user data writes these files again at boot."""
    files = {f"{INSTALL_DIR}/config.sh": (config_script(spec, bake_only=True), 0o644),
             PROBE_LIBRARY: (strip_shell(step_source("probe.sh")), 0o644),
             f"{INSTALL_DIR}/bootstrap.sh": (bootstrap_program(spec, bake_only=True), 0o755)}
    oks = " ".join(f"{STATE_ROOT}/steps/{step}.ok" for step in spec.install_steps())
    writes = [BakeTask(_write_task_name(path), "\n".join(
                  ["set -eu", *write_files_script({path: files[path]})]) + "\n")
              for path in files]
    bake = f"{INSTALL_DIR}/bootstrap.sh bake"
    return [*writes, BakeTask("Install", bake), BakeTask("Reboot", None),
            BakeTask("InstallAfterReboot", bake),
            BakeTask("Clean", f"ls {oks} >/dev/null && rm -rf {STATE_ROOT} {LOG_DIR} "
                              f"/root/auto_install {INSTALL_DIR}")]


def user_data_size(text: str) -> int:
    """Raw bytes of user data (the ECS limit applies before Base64; layouts.user_data checks
    every fleet's against it before anything is built)."""
    return len(text.encode("utf-8"))


__all__ = ["CONFIG_RUN_SECONDS", "CONFIG_WAIT_SECONDS", "DATA_ROOT", "JOB_UNIT",
           "NODE_OBJECTS_PREFIX", "BakeTask", "BootstrapSpec", "ElasticLaunch",
           "GpuHealthCheck", "GridPackage", "NodeRegistry", "NodeTools", "NodeTrustNames",
           "RenderWorker", "ServingUnit", "SharedFsMount", "SpotWatch", "bake_tasks",
           "config_command", "config_script", "drain_command", "gpu_health_files",
           "launch_files", "node_files", "node_release", "node_script", "node_tools_files",
           "node_tools_installer", "render_files", "serving_files", "trust_names",
           "unpack_user_data", "user_data", "user_data_size", "with_node_tools"]
