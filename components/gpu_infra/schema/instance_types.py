"""The `instance_types` section: GPU instance types the catalog lacks, declared by the stack.

A declared type is validated like a catalog entry (catalog.InstanceType) and every lookup
that reads the catalog for this stack sees it: the validators, the GPU count the node
health check expects, placement and eRDMA, the cost estimate, the policy rules' layout fit.
"""

from __future__ import annotations

from pydantic import Field

from gpu_infra import catalog
from gpu_infra.catalog import Use
from gpu_infra.schema.base import StrictModel

DECLARED_SOURCE = "declared in the stack file (instance_types)"
"""The source a declared type's entry and price name."""


class DeclaredInstanceType(StrictModel):
    """One GPU instance type the catalog does not list, described by the stack."""

    gpu_model: str = Field(min_length=1, max_length=64)
    """GPU model, e.g. `NVIDIA H20`. Required."""
    gpu_count: int = Field(ge=1, le=64)
    """Physical GPUs per instance (1-64). Required."""
    gpu_memory_gib: float = Field(gt=0, le=1024)
    """GPU memory per GPU in GiB. Required."""
    vcpu: int = Field(ge=1, le=1024)
    """vCPUs per instance. Required."""
    memory_gib: float = Field(gt=0, le=32768)
    """Memory per instance in GiB. Required."""
    family: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9-]*$")
    """Instance family, e.g. `gn9x`. Default: read from the type name (`ecs.gn9x-8x.48xlarge`
    -> `gn9x`); it picks the pinned driver like a catalog family."""
    erdma: bool = False
    """Supports eRDMA (network_interface_traffic_mode HighPerformance). Default false."""
    nvlink: bool = False
    """GPUs are linked by NVLink. Default false."""
    nvswitch: bool = False
    """NVSwitch on the board: the nodes run the NVIDIA fabric manager. Default false."""
    bare_metal: bool = False
    """An ECS Bare Metal type. Default false."""
    low_latency: bool = False
    """LowLatency deployment sets support the family. Default false."""
    uses: list[Use] | None = Field(default=None, min_length=1)
    """What it serves: training, inference, rendering, vgpu. Default: the stack's layout."""
    regions: list[str] | None = Field(default=None, min_length=1)
    """Regions that offer it; the `not-offered-in-region` warning checks the stack's region
    against them. Default: unknown (not checked)."""
    price_cny_per_hour: float | None = Field(default=None, gt=0)
    """On-demand price in CNY per hour in the stack's region, for the cost estimate.
    Default: unknown (the estimate counts the instances as unpriced)."""

    def entry(self, instance_type: str, *, region: str,
              default_uses: tuple[Use, ...]) -> catalog.InstanceType:
        """This declaration as a catalog entry (validated as the catalog's are: ValueError
        naming the field otherwise)."""
        price = None if self.price_cny_per_hour is None else catalog.CatalogPrice(
            cny_per_hour=self.price_cny_per_hour, region=region, date="as declared",
            source=DECLARED_SOURCE)
        return catalog.InstanceType(
            type=instance_type, family=self.family or catalog.family_of(instance_type),
            gpu_model=self.gpu_model, gpu_count=self.gpu_count,
            gpu_memory_gib=self.gpu_memory_gib, vcpu=self.vcpu, memory_gib=self.memory_gib,
            nvlink=self.nvlink, erdma=self.erdma, bare_metal=self.bare_metal,
            uses=tuple(self.uses or default_uses), low_latency=self.low_latency,
            nvswitch=self.nvswitch, regions=tuple(self.regions) if self.regions else None,
            price=price, sources=(DECLARED_SOURCE,))
