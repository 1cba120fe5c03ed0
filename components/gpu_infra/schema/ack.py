"""The `ack` section: the managed Kubernetes cluster a training or inference stack runs on
with `platform: ack` (the GPU node pools come from `fleet`, as on ECS)."""

from __future__ import annotations

import re
from ipaddress import IPv4Network
from typing import Literal

from pydantic import Field, field_validator

from gpu_infra.schema.base import Cidr, StrictModel
from gpu_infra.schema.container_registry import RegistryConfig
from gpu_infra_facts.ack import (
    ADDONS,
    DEFAULT_SERVICE_CIDR,
    KUBERNETES_MINORS,
    KUBERNETES_VERSION_PATTERN,
    SERVICE_CIDR_PREFIXES,
    SERVICE_CIDR_RANGES,
)
from gpu_infra_facts.allowed import (
    MAINTENANCE_HOURS,
    AckClusterSpec,
    AckImageType,
    AckProxyMode,
    AckWeekday,
)

Platform = Literal["ecs", "ack"]
"""Where the GPU fleet runs: ECS instances and scaling groups (ecs), or node pools of an ACK
cluster (ack)."""
CPU_TYPE_PATTERN = r"^ecs\.[a-z0-9-]+\.[a-z0-9]+$"


class MaintenanceWindow(StrictModel):
    """When ACK may upgrade managed components and patch nodes (never the Kubernetes minor:
    auto-upgrade stays off, the version is the stack's `ack.kubernetes_version`)."""

    days: list[AckWeekday] = Field(default=["Sunday"], min_length=1)
    """Days of the week. Default [Sunday]."""
    start_utc: str = Field(default="18:00", pattern=r"^([01]\d|2[0-3]):[0-5]\d$")
    """Start, UTC `hh:mm`. Default 18:00 (02:00 the next day in China)."""
    hours: int = Field(default=4, ge=MAINTENANCE_HOURS[0], le=MAINTENANCE_HOURS[1])
    """Length in hours, 1-24. Default 4."""


class SystemPoolConfig(StrictModel):
    """The small CPU node pool for the add-ons and the job controllers (no GPU taint)."""

    instance_types: list[str] = Field(default=["ecs.g7.xlarge", "ecs.g8i.xlarge",
                                               "ecs.g6.xlarge"], min_length=1, max_length=10)
    """CPU instance types in fallback order. Default ecs.g7.xlarge, ecs.g8i.xlarge,
    ecs.g6.xlarge (4 vCPU, 16 GiB)."""
    nodes: int = Field(default=2, ge=1, le=20)
    """Nodes (two keep the controllers up through a node's repair). Default 2."""
    system_disk_gib: int = Field(default=120, ge=40, le=500)
    """ESSD AutoPL system disk, GiB. Default 120."""

    @field_validator("instance_types")
    @classmethod
    def _type_names(cls, types: list[str]) -> list[str]:
        bad = [name for name in types if not re.match(CPU_TYPE_PATTERN, name)]
        if bad:
            raise ValueError(f"{bad[0]!r} is not an instance type name; write "
                             "ecs.<family>.<size>, e.g. ecs.g7.xlarge")
        if len(set(types)) != len(types):
            raise ValueError("each type may be listed once")
        return types


class AckConfig(StrictModel):
    """The ACK Pro cluster: control plane, system pool, add-ons, registry."""

    kubernetes_version: str
    """ACK Kubernetes version, `1.<minor>.<patch>-aliyun.<n>` with a minor ACK creates
    clusters with (1.33, 1.34, 1.35), e.g. 1.34.1-aliyun.1. Required: a version left to ACK
    changes with the day of creation. Raising it upgrades the control plane in place (ACK
    never downgrades); node pools follow in their own upgrade."""
    cluster_spec: AckClusterSpec = "ack.pro.small"
    """ACK Pro tier: ack.pro.small, or the provisioned control planes ack.pro.xlarge and
    ack.pro.2xlarge for large clusters. Default ack.pro.small."""
    public_api: bool = False
    """Give the API server an internet endpoint. Default false: reachable from the VPC only
    (kubectl through a VPN, CEN or a bastion). Refused in prod."""
    service_cidr: Cidr = IPv4Network(DEFAULT_SERVICE_CIDR)
    """Cluster IPs of Services; may not overlap the VPC. Default 172.21.0.0/20."""
    proxy_mode: AckProxyMode = "ipvs"
    """kube-proxy mode, ipvs or iptables. Default ipvs."""
    image_type: AckImageType = "AliyunLinux3ContainerOptimized"
    """Node OS of every pool: AliyunLinux3ContainerOptimized, AliyunLinux3 or Ubuntu.
    Default AliyunLinux3ContainerOptimized."""
    control_plane_logs: bool | None = None
    """API server, controller and scheduler logs and the audit log to SLS. Default: the
    environment's profile (on in prod)."""
    maintenance_window: MaintenanceWindow = MaintenanceWindow()
    """When ACK maintains managed components. Default Sunday 18:00 UTC for 4 hours."""
    system_pool: SystemPoolConfig = SystemPoolConfig()
    """The CPU pool for add-ons and controllers. Default 2 x 4 vCPU."""
    registry: RegistryConfig | None = None
    """Deprecated spelling of the top-level `registry` (the same fields), still read when
    that is not set. Default none."""
    addon_versions: dict[str, str] = {}
    """Add-on name -> version, overriding the pinned one (gpu_infra_facts.ack.ADDONS).
    Default none."""

    @field_validator("service_cidr")
    @classmethod
    def _service_range(cls, cidr: IPv4Network) -> IPv4Network:
        low, high = SERVICE_CIDR_PREFIXES
        inside = any(cidr.subnet_of(IPv4Network(block)) for block in SERVICE_CIDR_RANGES)
        if not inside or not low <= cidr.prefixlen <= high:
            raise ValueError(f"ACK takes a service CIDR inside {', '.join(SERVICE_CIDR_RANGES)}"
                             f" with a mask from /{low} to /{high}, e.g. "
                             f"{DEFAULT_SERVICE_CIDR} (got {cidr})")
        return cidr

    @field_validator("kubernetes_version")
    @classmethod
    def _known_version(cls, version: str) -> str:
        match = re.match(KUBERNETES_VERSION_PATTERN, version)
        minors = ", ".join(f"1.{minor}" for minor in KUBERNETES_MINORS)
        if match is None:
            raise ValueError(f"{version!r} is not an ACK version; write "
                             f"1.<minor>.<patch>-aliyun.<n> (minors {minors}), e.g. "
                             f"1.{KUBERNETES_MINORS[1]}.1-aliyun.1")
        if int(match["minor"]) not in KUBERNETES_MINORS:
            raise ValueError(f"{version}: ACK creates clusters of 1.x minors {minors} only")
        return version

    @field_validator("addon_versions")
    @classmethod
    def _known_addons(cls, versions: dict[str, str]) -> dict[str, str]:
        problems = [f"{name}: not an add-on gpu-infra installs; allowed: "
                    f"{', '.join(ADDONS)}" for name in versions if name not in ADDONS]
        problems += [f"{name}: {version!r} is not a version (e.g. v1.2.3)"
                     for name, version in versions.items() if name in ADDONS
                     and not re.match(r"^v?\d+(\.\d+){1,3}([-.][A-Za-z0-9.]+)?$", version)]
        if problems:
            raise ValueError("\n".join(problems))
        return versions

    @property
    def minor(self) -> str:
        """`1.<minor>` of the pinned version."""
        return ".".join(self.kubernetes_version.split(".")[:2])

    def addon_version(self, name: str) -> str:
        """The version the stack installs of add-on `name`."""
        return self.addon_versions.get(name, ADDONS[name].version)
