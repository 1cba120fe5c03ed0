"""What runs on every node of a fleet: its image (`fleet.image`) and how the GPU driver gets
there (`fleet.driver`).

Supported operating systems: Ubuntu 22.04 (`ubuntu_22_04`, the default) and Alibaba Cloud
Linux 3 (`alinux_3`) for every bootstrap step (disks, NFS, driver auto-install, eRDMA, fabric
manager, CloudMonitor agent, cluster wiring, health check). A custom or Marketplace image must
be one of them, with cloud-init, bash, curl and python3.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, model_validator

from gpu_infra.schema.base import StrictModel
from gpu_infra_facts.allowed import OSS_OBJECT_KEY_MAX_BYTES
from gpu_infra_facts.node_stack import (
    CUSTOM_IMAGE_ID,
    DEFAULT_IMAGES,
    DEFAULT_OS,
    DRIVER_VERSION,
    IMAGE_ID_MAX_CHARS,
    IMAGE_NAME,
    PUBLIC_IMAGE_ID,
    OperatingSystem,
)

OSS_URL = re.compile(r"^oss://(?P<bucket>[a-z0-9][a-z0-9-]{1,61}[a-z0-9])/(?P<key>\S+)$")
GRID_PACKAGE_PATH = "fleet.driver.grid_package"
"""Where a fleet's GRID package is set, under the cluster."""
SHA256 = r"^[0-9a-f]{64}$"
STACK_NAME = r"^[A-Za-z0-9_.-]{1,100}$"
"""A Pulumi stack name (letters, digits, hyphens, underscores, periods)."""
VERSION_3 = r"^\d{1,3}\.\d{1,3}\.\d{1,3}(\.\d{1,3})?$"
"""A CUDA or cuDNN version (12.4.1, 9.2.0.82): each part at most three digits."""


class ImageChoice(StrictModel):
    """The image every node of the fleet boots. Set `id`, `name` or `from_stack`, or none for
    the pinned default public image of `os`. With `id`, `name` or the default, the image only
    changes when this section changes (no "newest image" lookup), since a new image replaces
    each node's system disk; with `from_stack` it changes when that image stack publishes a
    new bake (deliberately: the point of baking)."""

    id: str | None = Field(default=None, max_length=IMAGE_ID_MAX_CHARS)
    """An image id: a public one (ubuntu_22_04_x64_20G_alibase_20250917.vhd) or a custom,
    shared or Marketplace one (m-...). Default none."""
    name: str | None = Field(default=None, pattern=IMAGE_NAME.pattern)
    """The exact name of one of your custom images (e.g. the baked image's), looked up at each
    run; ERROR at plan time if no or several images have it. Default none."""
    from_stack: str | None = Field(default=None, pattern=STACK_NAME)
    """The image stack (layout: image) of this project whose baked image the fleet boots, by
    its stack name (e.g. image-a100): its output `image_id`, read through a stack reference
    at `pulumi up`; offline a placeholder that changes with that stack's bake. Only a build
    whose checks all passed makes an image, so a failed bake never becomes a fleet's image.
    Boot it with `driver.route: preinstalled`. Default none."""
    os: OperatingSystem = DEFAULT_OS
    """The image's operating system: ubuntu_22_04 or alinux_3. Without id and name it picks
    the pinned public image (gpu_infra_facts.node_stack.DEFAULT_IMAGES). Default ubuntu_22_04."""

    @model_validator(mode="after")
    def _one_source(self) -> ImageChoice:
        problems: list[str] = []
        chosen = [key for key in ("id", "name", "from_stack") if getattr(self, key) is not None]
        if len(chosen) > 1:
            problems.append(f"{chosen[0]}: set one of id, name and from_stack, not "
                            f"{' and '.join(chosen)}")
        if self.id is not None and not (PUBLIC_IMAGE_ID.match(self.id)
                                        or CUSTOM_IMAGE_ID.match(self.id)):
            problems.append(f"id: {self.id!r} is not an image id (m-... or a public image "
                            "such as ubuntu_22_04_x64_20G_alibase_20250917.vhd)")
        if problems:
            raise ValueError("\n".join(problems))
        return self

    @property
    def pinned_id(self) -> str | None:
        """The image id when it is known without a lookup (id, or the default); None for a
        lookup by name or an image stack's bake."""
        if self.name is not None or self.from_stack is not None:
            return None
        return self.id or DEFAULT_IMAGES[self.os]


DriverRouteChoice = Literal["auto", "auto_install", "preinstalled", "grid"]


class DriverConfig(StrictModel):
    """How the NVIDIA driver gets onto the nodes, pinned to exact versions.

    Routes: `auto_install` runs Alibaba's first-boot auto-install (driver, CUDA, cuDNN from
    the intranet mirror; 10-20 minutes and a reboot); `preinstalled` expects an image that
    carries them (the baked image, a Marketplace image) and only checks the version; `grid`
    installs the GRID driver of vws graphics families from `grid_package`. `auto` is
    auto_install on Tesla families and nothing on vws families (ERROR driver-route-missing:
    set grid or preinstalled)."""

    route: DriverRouteChoice = "auto"
    """auto, auto_install, preinstalled or grid. Default auto."""
    version: str | None = Field(default=None, pattern=DRIVER_VERSION.pattern)
    """Driver version the health check requires (e.g. 550.127.08). Default: the family's pin
    (gpu_infra_facts.node_stack); required with grid."""
    cuda: str | None = Field(default=None, pattern=VERSION_3)
    """CUDA toolkit version the auto-install installs. Default: the family's pin."""
    cudnn: str | None = Field(default=None, pattern=VERSION_3)
    """cuDNN version the auto-install installs. Default: the family's pin."""
    grid_package: str | None = Field(default=None, pattern=OSS_URL.pattern)
    """The GRID driver package (.run) for vws families, as oss://<bucket>/<key>: in one of
    the stack's buckets (the nodes' role reads those; their names end in the stack's global
    suffix), or anywhere with grid_package_grant. Required with grid."""
    grid_package_sha256: str | None = Field(default=None, pattern=SHA256)
    """SHA256 of grid_package, checked on the node. Default none (not checked)."""
    grid_package_grant: bool = False
    """grid_package lies outside the stack's buckets: grant the nodes' role read
    (oss:GetObject) on that one object. The nodes read it over the stack region's internal
    OSS endpoint with the role's credentials, so the bucket must be in the stack's region and
    in its account (or its owner's bucket policy must allow the role). Default false:
    grid_package must be in one of the stack's buckets, which the role reads already."""

    @model_validator(mode="after")
    def _route_fields(self) -> DriverConfig:
        problems: list[str] = []
        match = OSS_URL.match(self.grid_package or "")
        key_bytes = len(match["key"].encode("utf-8")) if match else 0
        if key_bytes > OSS_OBJECT_KEY_MAX_BYTES:
            problems.append(f"grid_package: its object key is {key_bytes:,} bytes; OSS keys "
                            f"are at most {OSS_OBJECT_KEY_MAX_BYTES:,}")
        if self.route == "grid":
            if self.grid_package is None:
                problems.append("grid_package: required with route grid")
            if self.version is None:
                problems.append("version: required with route grid (the GRID driver's)")
        elif (self.grid_package is not None or self.grid_package_sha256 is not None
              or self.grid_package_grant):
            problems.append("grid_package: only used with route grid")
        if self.grid_package_grant and re.search(r"[*?]", self.grid_package or ""):
            problems.append("grid_package: a key with * or ? cannot be granted (RAM reads them "
                            "as wildcards, granting more than the package); rename the object")
        if self.route in ("preinstalled", "grid") and (self.cuda or self.cudnn):
            problems.append("cuda: only the auto_install route installs CUDA and cuDNN")
        if problems:
            raise ValueError("\n".join(problems))
        return self
