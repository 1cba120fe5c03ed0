"""What a baked image holds (resolved from the `image` section and the catalog, for the layout
and the validators alike), and the validators of an image-baking stack."""

from __future__ import annotations

from collections.abc import Iterable

from gpu_infra import catalog
from gpu_infra.knowhow.findings import Finding, ImageValidator, Level
from gpu_infra.knowhow.general import no_internet_egress
from gpu_infra.knowhow.node_software import pinned_stack
from gpu_infra.schema import ImageConfig
from gpu_infra.schema.image import ImageBuildConfig
from gpu_infra_facts.node_stack import (
    FABRIC_MANAGER_FAMILIES,
    GRAPHICS_FAMILIES,
    DriverStack,
    driver_incompatibility,
)


def baked_driver(build: ImageBuildConfig) -> DriverStack:
    """Driver, CUDA and cuDNN the image gets: the section's, else the family's pins."""
    return pinned_stack(build.instance_type, build.driver)


def bakes_erdma(build: ImageBuildConfig) -> bool:
    """eRDMA driver in the image: `on`, or `auto` on a family the catalog says has eRDMA."""
    entry = catalog.get(build.instance_type)
    return build.erdma == "on" or (build.erdma == "auto" and bool(entry and entry.erdma))


def bakes_fabric_manager(build: ImageBuildConfig) -> bool:
    """Fabric manager in the image: for families that may have NVSwitch."""
    return catalog.family_of(build.instance_type) in FABRIC_MANAGER_FAMILIES


def image_build_type(cluster: ImageConfig) -> Iterable[Finding]:
    """ERROR: a build type the catalog does not know (its GPU count and family drive the
    install) or of a vws family (the GRID driver is not baked)."""
    build = cluster.image
    entry = catalog.get(build.instance_type)
    family = catalog.family_of(build.instance_type)
    if entry is None:
        yield Finding("image-build-type", Level.ERROR, "image.instance_type",
                      f"{build.instance_type} is not in the GPU catalog; pick a GPU type of "
                      "the family the image is for (gpu-infra catalog)")
    elif family in GRAPHICS_FAMILIES:
        yield Finding("image-build-type", Level.ERROR, "image.instance_type",
                      f"{family} runs the GRID driver, which is not baked; its fleets use "
                      "fleet.driver.route grid")


def image_driver_incompatible(cluster: ImageConfig) -> Iterable[Finding]:
    """ERROR: a driver known not to work on the build type's family."""
    build = cluster.image
    family = catalog.family_of(build.instance_type)
    driver = baked_driver(build).driver
    reason = driver_incompatibility(family, driver)
    if reason:
        yield Finding("image-driver-incompatible", Level.ERROR, "image.driver.version",
                      f"driver {driver} on {family}: {reason}")


IMAGE_VALIDATORS: tuple[ImageValidator, ...] = (no_internet_egress, image_build_type,
                                                 image_driver_incompatible)
"""The validators of an image-baking stack, in report order (the build instance needs the
internet for NVIDIA's repository, as nodes do)."""
