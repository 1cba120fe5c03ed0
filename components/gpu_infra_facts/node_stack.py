"""Facts about the software a GPU node needs on Alibaba Cloud: images, the driver route,
eRDMA, NCCL, fabric manager, the CloudMonitor agent, user-data limits (sources inline; see
shared/reference/node-stack-and-updates.md §A, checked 2026-12-01). UNCONFIRMED marks what no
primary source states.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from gpu_infra_facts import serving

USER_DATA_MAX_BYTES = 32 * 1024
"""ECS user data: at most 32 KB of raw data before Base64 (RunInstances and
CreateLaunchTemplate `UserData`, Alibaba Cloud ECS SDK docstrings). The same limit is assumed
for ESS scaling configurations (UNCONFIRMED for ESS)."""

METADATA_URL = "http://100.100.100.200/latest/meta-data"
"""Instance metadata service (ECS "Instance metadata items")."""
METADATA_TOKEN_URL = "http://100.100.100.200/latest/api/token"
"""Hardened-mode session token: PUT with header X-aliyun-ecs-metadata-token-ttl-seconds
(1-21600), then send it as X-aliyun-ecs-metadata-token (ECS "Instance metadata", security
hardening mode; read 2026-12). The instances run with http_tokens required, so metadata
answers only token requests; the image's cloud-init must be 23.2.2 or later for it."""

OperatingSystem = Literal["ubuntu_22_04", "alinux_3"]
"""Operating systems the bootstrap steps support (apt on Ubuntu, dnf on Alibaba Cloud Linux 3);
both are images the driver auto-install supports."""

DEFAULT_IMAGES: dict[str, str] = {
    "ubuntu_22_04": "ubuntu_22_04_x64_20G_alibase_20250917.vhd",
    "alinux_3": "aliyun_3_x64_20G_alibase_20250629.vhd",
}
"""The pinned public image of each OS: the default of `fleet.image`. Public image ids are the
image names and the same in every region (ECS RunInstances examples). Pinned, never looked up
as "newest": a newly published image never changes a plan; a new gpu-infra release that moves a
pin is a deliberate, reviewed change (its plan shows the system-disk replacement). Whether every
region still offers these exact versions is UNCONFIRMED."""
DEFAULT_OS: OperatingSystem = "ubuntu_22_04"

PUBLIC_IMAGE_ID = re.compile(r"^[a-z0-9_]+_x64_\d+G_[a-z0-9_]+\.vhd$")
"""Shape of a public image id (e.g. ubuntu_22_04_x64_20G_alibase_20250917.vhd)."""
CUSTOM_IMAGE_ID = re.compile(r"^m-[a-z0-9]+$")
"""Shape of a custom, shared or Marketplace image id."""
IMAGE_ID_MAX_CHARS = 128
"""Longest image id accepted: public ids are image names (2-128 characters, ECS CreateImage
ImageName); custom ids are m- plus about 20 characters."""
IMAGE_NAME = re.compile(r"^[A-Za-z一-龥][A-Za-z0-9一-龥:._-]{1,127}$")
"""A custom image name (ECS CreateImage ImageName): 2-128 characters, a letter (or Chinese
character) first, then letters, digits, colons, underscores, periods and hyphens."""

DriverRoute = Literal["auto_install", "preinstalled", "grid"]
"""auto_install: Alibaba's first-boot script installs driver, CUDA and cuDNN (Tesla families);
preinstalled: the image carries them (baked or Marketplace); grid: the GRID (vws graphics)
driver package from the stack's bucket."""

AUTO_INSTALL_SCRIPT = "auto_install_v4.0.sh"
"""Alibaba's GPU auto-install script, fetched from `<source-address>/opsx/ecs/linux/binary/
script/`; arguments DRIVER CUDA CUDNN IS_INSTALL_RDMA IS_INSTALL_eRDMA; it logs to
/root/auto_install/auto_install.log ("ALL INSTALL OK"/"INSTALL FAIL"), takes 10-20 minutes and
reboots the instance when done (aliyun-computenest/quickstart-LobeChat lobe-chat-gpu/
init_gpu.sh; AlibabaCloudDocs/ecs "Create an NVIDIA GPU-accelerated instance")."""
AUTO_INSTALL_PATH = "/opsx/ecs/linux/binary/script"


@dataclass(frozen=True)
class DriverStack:
    """Versions pinned together: Tesla driver, CUDA toolkit, cuDNN."""

    driver: str
    cuda: str
    cudnn: str


DEFAULT_DRIVER_STACK = DriverStack(driver="550.127.08", cuda="12.4.1", cudnn="9.2.0.82")
"""The default pin for Tesla families: the combination Alibaba's own ComputeNest template
installs with auto_install_v4.0.sh (quickstart-LobeChat init_gpu.sh). Driver 550 fixes the
XID 119/120/31 faults (ACK driver-version list)."""
DRIVER_STACKS: dict[str, DriverStack] = {}
"""Per-family overrides of DEFAULT_DRIVER_STACK (none needed today: 550.127.08 is at or above
every family's minimum below)."""

GRAPHICS_FAMILIES = frozenset({"vgn7i-vws", "sgn7i-vws"})
"""vws (virtual workstation) families: they run the GRID driver, which the Tesla auto-install
does not provide; their route is `grid` (or `preinstalled`)."""


@dataclass(frozen=True)
class DriverIncompatibility:
    """Driver versions known not to work on some families."""

    families: frozenset[str]
    pattern: re.Pattern[str] | None
    """Matching driver versions are broken; None: see `minimum_exclusive`."""
    minimum_exclusive: str | None
    """Versions at or below this one are broken."""
    reason: str


DRIVER_INCOMPATIBILITIES = (
    DriverIncompatibility(frozenset({"gn7", "ebmgn7"}), re.compile(r"^51[05]\."), None,
                          "gn7 and ebmgn7 do not work with 510.xx or 515.xx drivers; use "
                          "470.x with GSP off, or 525.125.06 and later"),
    DriverIncompatibility(frozenset({"ebmgn7", "ebmgn7e"}), None, "460.32.03",
                          "ebmgn7 and ebmgn7e need a driver later than 460.32.03"),
)
"""Source: ACK "Customize the node GPU driver through an OSS URL" and the ACK node NVIDIA
driver-version list (both state these apply to the instance families, not to ACK only)."""


def version_tuple(version: str) -> tuple[int, ...]:
    """`550.127.08` -> (550, 127, 8)."""
    return tuple(int(part) for part in version.split("."))


def driver_incompatibility(family: str, driver: str) -> str | None:
    """Why `driver` does not work on `family`, or None."""
    for rule in DRIVER_INCOMPATIBILITIES:
        if family not in rule.families:
            continue
        if rule.pattern is not None and rule.pattern.match(driver):
            return rule.reason
        if rule.minimum_exclusive is not None and (
                version_tuple(driver) <= version_tuple(rule.minimum_exclusive)):
            return rule.reason
    return None


DRIVER_VERSION = re.compile(r"^\d{3}\.\d{1,3}(\.\d{1,3})?$")
"""Shape of an NVIDIA driver version (550.127.08, 535.54)."""

ERDMA_MIRROR = "http://mirrors.cloud.aliyuncs.com/erdma"
"""Intranet mirror of the eRDMA software (ECS "eRDMA usage")."""
ERDMA_INSTALLER_VERSION = "1.5.9"
"""Pinned eRDMA installer: the default of Alibaba's ack-erdma-controller (cmd/agent/main.go);
from 1.5.9 MPCC is the default congestion control (ComputeNest quickstart-robot-solution)."""
ERDMA_INSTALLER_SHA256: str | None = None
"""SHA256 of erdma_installer-<ERDMA_INSTALLER_VERSION>.tar.gz: the eRDMA usage page lists one
per version; the value for 1.5.9 is UNCONFIRMED here, so the step computes and logs the
digest of the tarball it downloads but has nothing to compare it with. Set it to enforce the
check (the step then fails on any other digest)."""
ERDMA_MTU = 1400
"""MTU of the primary interface with eRDMA and jumbo frames off: 1400; a wrong MTU corrupts
data (ECS "Configure eRDMA on GPU instances", shared/reference/node-stack-and-updates.md §A)."""
ERDMA_MTU_JUMBO = 8500
"""MTU with jumbo frames on (the instance's `enable_jumbo_frame`): 8500, as NCCL's LL128
protocol needs (same source)."""


def erdma_mtu(jumbo_frames: bool) -> int:
    """The eRDMA fleet's interface MTU: 8500 with jumbo frames on, else 1400."""
    return ERDMA_MTU_JUMBO if jumbo_frames else ERDMA_MTU

NCCL_ERDMA_ENV: dict[str, str] = {
    "NCCL_SOCKET_IFNAME": "eth0",
    "NCCL_IB_HCA": "erdma",
    "NCCL_IB_GID_INDEX": "1",
    "NCCL_IB_QPS_PER_CONNECTION": "8",
    "NCCL_MIN_NCHANNELS": "16",
    "NCCL_NET_PLUGIN": "none",
}
"""NCCL settings for one eRDMA NIC: the presets PAI recommends (PAI "eRDMA distributed
training"); NCCL >= 2.19."""
NCCL_ERDMA_MULTI_NIC_ENV: dict[str, str] = {
    "NCCL_IB_GID_INDEX": "-1",
    "NCCL_IB_ADDR_FAMILY": "AF_INET",
    "NCCL_IB_ROCE_VERSION_NUM": "2",
}
"""Overrides with several eRDMA NICs, whose RoCEv2 GID index differs per device; the node adds
NCCL_IB_HCA=erdma_0,erdma_1,... and NCCL_IB_ADDR_RANGE=<its vSwitch CIDR> (ack-erdma-controller
docs/erdma-benchmark)."""

ERDMA_NICS: dict[str, int] = {
    "ecs.ebmgn8v.48xlarge": 2, "ecs.ebmgn8is.32xlarge": 2, "ecs.ebmgn8i.32xlarge": 4,
    "ecs.ebmgn7v.32xlarge": 2,
}
"""eRDMA NICs per instance type where PAI lists them ("eRDMA distributed training with
high-performance networks"); gn8is sizes have 1. A type not listed counts as 1 (UNCONFIRMED):
the ECS nodes count their devices at boot, an ACK job takes this number."""


def erdma_devices(instance_type: str) -> list[str]:
    """The eRDMA device names a node of `instance_type` shows: erdma_0, erdma_1, ..."""
    return [f"erdma_{index}" for index in range(ERDMA_NICS.get(instance_type, 1))]


def nccl_env(devices: list[str], vswitch_cidr: str) -> dict[str, str]:
    """The NCCL settings for a node with these eRDMA `devices` in `vswitch_cidr`: what the
    ECS bootstrap's nccl_env step writes to /etc/gpu-infra/nccl.env (the later line of a key
    wins when the file is sourced) and what the ACK job sets in its containers."""
    env = dict(NCCL_ERDMA_ENV)
    if len(devices) > 1:
        env.update(NCCL_ERDMA_MULTI_NIC_ENV)
        env["NCCL_IB_HCA"] = ",".join(devices)
        env["NCCL_IB_ADDR_RANGE"] = vswitch_cidr
    return env


FABRIC_MANAGER_FAMILIES = frozenset({"gn7", "gn7e", "ebmgn7", "ebmgn7e", "ebmgn7ex", "gn8v",
                                     "ebmgn8v"})
"""8-GPU SXM families that may have NVSwitch. Which ones expose it to the guest is UNCONFIRMED
for Alibaba, so the step detects NVSwitch on the node (/proc/driver/nvidia-nvswitch/devices not
empty) and installs nvidia-fabricmanager at exactly the driver version only then (NVIDIA
Fabric Manager guide: versions must match; without it CUDA fails with error 802)."""

CLOUDMONITOR_AGENT_VERSION = "3.5.10"
CLOUDMONITOR_INSTALLER = "agent_install_ecs-1.7.sh"
"""The C++ CloudMonitor agent (3.x), installed from the region's internal OSS endpoint
https://cms-agent-<region>.oss-<region>-internal.aliyuncs.com/Argus/<installer> with
ARGUS_VERSION set (AlibabaCloudDocs/cms "Install and uninstall the CloudMonitor agent"). The
exact current version and installer name are UNCONFIRMED (seen in public cloud-init code)."""


def cloudmonitor_installer_url(region: str) -> str:
    """The agent installer on the region's internal OSS endpoint."""
    return (f"https://cms-agent-{region}.oss-{region}-internal.aliyuncs.com/Argus/"
            f"{CLOUDMONITOR_INSTALLER}")


def api_endpoint(product: Literal["ecs", "ess", "metrics", "oos", "cr"], region: str) -> str:
    """Regional OpenAPI endpoint the nodes call (with NAT; VPC endpoints UNCONFIRMED);
    CloudMonitor's (cms 2019-01-01) is `metrics`, OOS's (2019-06-01) `oos`, ACR's (cr
    2018-12-01) `cr`."""
    return f"{product}.{region}.aliyuncs.com"


READINESS_TIMEOUT_SECONDS: dict[str, int] = {"auto_install": 3600, "grid": 1800,
                                             "preinstalled": 900}
"""How long a new scaling instance may take to pass its health check before ESS abandons it:
auto-install is 10-20 minutes plus a reboot and the eRDMA DKMS build, so an hour; a baked
image only runs its checks. Within ESS's 30-21600 s heartbeat range."""


def readiness_timeout(route: str, serves: bool) -> int:
    """The readiness hook's heartbeat timeout of a scaling fleet: READINESS_TIMEOUT_SECONDS of
    its driver route, plus serving.START_SECONDS where its nodes run a model server (the
    pull, the model's download and its load before the server answers)."""
    return READINESS_TIMEOUT_SECONDS[route] + (serving.START_SECONDS if serves else 0)


SCALE_OUT_ANSWER_MARGIN_SECONDS = 300
"""A node that has told its health waits for the rest of its scale-out batch until this long
before the hook's heartbeat timeout (counted from its first boot), then counts the silent
ones as unhealthy and answers, so a hung instance does not make ESS abandon the batch."""


LOONGCOLLECTOR_INSTALLER = "loongcollector.sh"
LOONGCOLLECTOR_ID_FILE = "/etc/ilogtail/user_defined_id"
"""LoongCollector, the SLS log collector (SLS "Install LoongCollector" page, as summarised in
the shared reference engines-and-operations.md section 4): download the installer from
https://aliyun-observability-release-<region>.oss-<region>.aliyuncs.com/loongcollector/linux64/latest/
and run `loongcollector.sh install <region>` (the plain region id installs the intranet
variant); a machine group of identity type `userdefined` matches the hosts whose
/etc/ilogtail/user_defined_id holds its id. The install directory
/usr/local/ilogtail/loongcollector the step checks for is UNCONFIRMED."""
LOONGCOLLECTOR_BINARY = "/usr/local/ilogtail/loongcollector"


def loongcollector_installer_url(region: str) -> str:
    """The LoongCollector installer of the region's release bucket."""
    return (f"https://aliyun-observability-release-{region}.oss-{region}.aliyuncs.com/"
            f"loongcollector/linux64/latest/{LOONGCOLLECTOR_INSTALLER}")


ERDMA_DEVICE_DIR = "/dev/infiniband"
"""The RDMA character devices (uverbs, rdma_cm) through which user space, NCCL's IB transport
among it, drives the eRDMA interfaces (rdma-core): a container gets eRDMA with
`--device /dev/infiniband` (Docker `--device` takes a directory), as ACK's GDR pods get it
through the aliyun/erdma device plugin."""

