"""The `image` section of an image-baking stack (`layout: image`): a GPU image built by ECS
Image Builder with the nodes' own install steps, for fleets that boot with the `preinstalled`
driver route."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from gpu_infra.schema.base import StrictModel
from gpu_infra.schema.compute import INSTANCE_TYPE_PATTERN, InstanceType
from gpu_infra.schema.node import DriverConfig, ImageChoice
from gpu_infra_facts.allowed import IMAGE_BUILD_SYSTEM_DISK_GIB
from gpu_infra_facts.image_builder import (
    ACCOUNT_ID,
    IMAGE_NAME_PREFIX,
    MAX_COPY_REGIONS,
    MAX_SHARE_ACCOUNTS,
)
from gpu_infra_facts.regions import REGIONS


class ImageBuildConfig(StrictModel):
    """What the baked image holds and how it is built. The build runs the same install steps
    as a booting node (driver, CUDA and cuDNN by Alibaba's auto-install, eRDMA, fabric
    manager, CloudMonitor agent) on an intermediate GPU instance in the stack's vSwitch, then
    Image Builder snapshots it. Fleets then set `fleet.image.name` (or id) to the built image
    and `fleet.driver.route: preinstalled` with the same driver version."""

    instance_type: InstanceType = Field(pattern=INSTANCE_TYPE_PATTERN)
    """GPU instance type of the intermediate build instance, of the family the image is for
    (the driver install needs the GPU; its family picks the driver pin and eRDMA). Pick the
    family's smallest type, e.g. ecs.gn7e-c16g1.4xlarge for A100 fleets. Required."""
    base: ImageChoice = ImageChoice()
    """The image the build starts from. Default: the pinned public Ubuntu 22.04 image (the
    same default as the fleets), never "the newest"."""
    driver: DriverConfig = DriverConfig()
    """Driver, CUDA and cuDNN versions to install. Default: the family's pins. Route auto or
    auto_install only (GRID packages of vws families are not baked: their fleets use route
    grid)."""
    erdma: Literal["auto", "on", "off"] = "auto"
    """Bake the eRDMA driver: auto (where the build type's family has eRDMA), on or off. The
    build instance needs no eRDMA interface (the image gets the driver, the nodes configure
    it at boot), so `on` bakes it for eRDMA fleets of another family, e.g. an ebmgn7ex
    fleet's image built on gn7e. Default auto."""
    system_disk_gib: int = Field(default=60, ge=IMAGE_BUILD_SYSTEM_DISK_GIB[0],
                                 le=IMAGE_BUILD_SYSTEM_DISK_GIB[1])
    """System disk of the build instance, and so of the image, in GiB (20-500). Default 60:
    the driver, CUDA and cuDNN need about 15 GiB beyond the 20 GiB base image."""
    image_name_prefix: str | None = Field(default=None, pattern=IMAGE_NAME_PREFIX.pattern)
    """Prefix of the built image's name (2-64 characters, a letter first). Default
    `<name>-img-<digest of the content and these settings>`: a changed install (versions,
    steps) gets a new prefix, a new image template and a new build; running fleets keep their
    image until their stack file names the new one."""
    share_with_accounts: list[str] = Field(default=[], max_length=MAX_SHARE_ACCOUNTS)
    """Alibaba Cloud account ids (16 digits) the built image is shared with. Default none."""
    copy_to_regions: list[str] = Field(default=[], max_length=MAX_COPY_REGIONS)
    """Other regions the built image is copied to. Default none."""
    delete_instance_on_failure: bool = True
    """Release the build instance when the build fails. Default true (false keeps it for
    debugging: it runs, and bills, until you release it)."""

    @field_validator("share_with_accounts")
    @classmethod
    def _account_ids(cls, accounts: list[str]) -> list[str]:
        wrong = [account for account in accounts if not ACCOUNT_ID.match(account)]
        if wrong:
            raise ValueError(f"{', '.join(wrong)}: not an account id (16 digits)")
        return accounts

    @field_validator("copy_to_regions")
    @classmethod
    def _known_regions(cls, regions: list[str]) -> list[str]:
        unknown = [region for region in regions if region not in REGIONS]
        if unknown:
            raise ValueError(f"unknown region {', '.join(unknown)}; allowed: "
                             f"{', '.join(sorted(REGIONS))}")
        return regions

    @model_validator(mode="after")
    def _route(self) -> ImageBuildConfig:
        if self.driver.route not in ("auto", "auto_install"):
            raise ValueError(f"driver.route: {self.driver.route} cannot be baked; allowed: "
                             "auto, auto_install")
        return self
