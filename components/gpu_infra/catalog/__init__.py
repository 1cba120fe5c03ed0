"""The GPU instance catalog: Alibaba Cloud GPU instance types read from gpu_catalog.yaml.

`get(type)` looks one up (`Lookup(declared).get(type)` also sees a stack's own
`instance_types`), `filter(...)` selects by use, GPU model and GPU memory, `entries()`
lists all. Prices are indicative (dated, with region and source); an unknown price is None,
never 0.
"""

from __future__ import annotations

import builtins
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

CATALOG_FILE = Path(__file__).with_name("gpu_catalog.yaml")
Use = Literal["training", "inference", "rendering", "vgpu"]
USES: tuple[str, ...] = ("training", "inference", "rendering", "vgpu")
Availability = Literal["open", "sales_only", "by_ticket", "preview"]
"""How a family is bought (GPUDOC): open (the console sells it where it is stocked),
sales_only (specific regions, through Alibaba Cloud sales), by_ticket (apply by ticket),
preview (invitational preview, by ticket)."""
TYPE_PATTERN = r"^ecs\.[a-z0-9-]+\.[a-z0-9]+$"
"""An instance type name: `ecs.<family>[-<variant>].<size>`."""
LOW_LATENCY_MAX_INSTANCES = 20
"""A LowLatency deployment set holds at most 20 instances, all in one zone [DEPLOY]."""


class CatalogPrice(BaseModel):
    """An indicative on-demand price."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cny_per_hour: float = Field(gt=0)
    region: str
    date: str
    source: str


class InstanceType(BaseModel):
    """One GPU instance type."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str = Field(pattern=TYPE_PATTERN)
    family: str
    gpu_model: str
    gpu_count: float = Field(gt=0)
    """Physical GPUs; below 1 for a vGPU slice (the file writes it as a fraction, "1/6")."""
    gpu_memory_gib: float = Field(gt=0)
    """GPU memory per GPU, or of the slice for vGPU types."""
    vcpu: int | None
    """vCPUs; None when unknown."""
    memory_gib: float | None
    """Memory in GiB; None when unknown."""
    nvlink: bool
    erdma: bool
    """Supports eRDMA (ERI): network_interface_traffic_mode HighPerformance."""
    bare_metal: bool
    uses: tuple[Use, ...]
    low_latency: bool
    """The family is supported by LowLatency deployment sets."""
    availability: Availability = "open"
    """How the family is bought. Default open."""
    recommended: bool = True
    """False for the families Alibaba lists as not recommended (older; its page says to
    use the others when they are sold out). Default true."""
    driver_branches: tuple[int, ...] | None = None
    """NVIDIA driver branches Alibaba documents for the family (GRID for vws families);
    None: none documented. Default None."""
    nvswitch: bool | None = None
    """NVSwitch on the board (the node runs the fabric manager); None: decided by family
    (gpu_infra_facts.node_stack.FABRIC_MANAGER_FAMILIES)."""
    regions: tuple[str, ...] | None = None
    """Regions offering the type, when a source lists them; None = unknown."""
    price: CatalogPrice | None = None
    """Indicative on-demand price; None = unknown."""
    unconfirmed: tuple[str, ...] = ()
    """Fields the sources do not confirm."""
    sources: tuple[str, ...] = ()

    @field_validator("gpu_count", mode="before")
    @classmethod
    def _fraction(cls, value: object) -> object:
        return float(Fraction(value)) if isinstance(value, str) else value

    @property
    def gpu_count_label(self) -> str:
        """`8`, or `1/6` for a vGPU slice."""
        if self.gpu_count >= 1:
            return f"{self.gpu_count:g}"
        return str(Fraction(self.gpu_count).limit_denominator(64))

    @property
    def vcpu_per_gpu(self) -> float | None:
        """vCPUs per (whole or sliced) GPU; None when vCPUs are unknown."""
        return None if self.vcpu is None else self.vcpu / self.gpu_count

    def is_unconfirmed(self, field: str) -> bool:
        """Whether `field` is marked UNCONFIRMED in the data."""
        return field in self.unconfirmed

    def offered_in(self, region: str) -> bool | None:
        """True/False where the catalog knows the regions, None where it does not."""
        return None if self.regions is None else region in self.regions


def family_of(instance_type: str) -> str:
    """`ecs.gn7i-c8g1.2xlarge` -> `gn7i`; `ecs.vgn7i-vws-m4.xlarge` -> `vgn7i-vws`."""
    middle = instance_type.removeprefix("ecs.").split(".")[0]
    for family in sorted(_families(), key=len, reverse=True):
        if middle == family or middle.startswith(f"{family}-"):
            return family
    return middle.split("-")[0]


def read_data_file(path: Path) -> Any:
    """A YAML data file shipped with the package (the catalog, the price book), read safely
    with libyaml's loader where PyYAML has it (about ten times faster than the pure-Python
    one, the same values), else with the pure-Python one."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(path.read_text(encoding="utf-8"), Loader=loader)


@functools.cache
def _document(path: Path = CATALOG_FILE) -> Any:
    return read_data_file(path)


@functools.cache
def _load(path: Path = CATALOG_FILE) -> dict[str, InstanceType]:
    document = _document(path)
    price_meta = {key: str(value) for key, value in document["prices"].items()
                  if key in ("source", "date")}
    catalog: dict[str, InstanceType] = {}
    for family, data in document["families"].items():
        shared = {key: value for key, value in data.items() if key != "sizes"}
        for size in data["sizes"]:
            entry = {**shared, **size, "family": family,
                     "unconfirmed": [*shared.get("unconfirmed", []),
                                     *size.get("unconfirmed", [])]}
            if size.get("price"):
                entry["price"] = {**price_meta, **size["price"]}
            catalog[size["type"]] = InstanceType.model_validate(entry)
    return catalog


def regions_unknown_because() -> str:
    """Why no catalog type lists its regions (the data file's `regions_unknown_because`)."""
    return str(_document()["regions_unknown_because"])


@functools.cache
def _families() -> frozenset[str]:
    return frozenset(entry.family for entry in _load().values())


def entries() -> list[InstanceType]:
    """Every instance type, in file order."""
    return list(_load().values())


def get(instance_type: str) -> InstanceType | None:
    """The catalog entry of `instance_type`, or None if the catalog does not know it."""
    return _load().get(instance_type)


@dataclass(frozen=True)
class Lookup:
    """The catalog seen by one stack: its declared types (`instance_types`) beside the
    file's. A declared type never shadows a catalog one (the schema refuses that)."""

    declared: Mapping[str, InstanceType] = field(default_factory=dict)

    def get(self, instance_type: str) -> InstanceType | None:
        """The entry of `instance_type`, declared or in the catalog; None if neither."""
        return self.declared.get(instance_type) or get(instance_type)

    def gpus_per_node(self, instance_type: str) -> int:
        """GPUs on one node of `instance_type`, as disks sized per GPU and the health check
        count them: a fractional vGPU counts as one, an unknown type as one."""
        entry = self.get(instance_type)
        return max(int(entry.gpu_count), 1) if entry else 1


CATALOG_ONLY = Lookup()
"""The catalog without declared types (where no stack is at hand)."""


def gpus_per_node(instance_type: str) -> int:
    """GPUs on one node of a catalog type (Lookup.gpus_per_node without declared types)."""
    return CATALOG_ONLY.gpus_per_node(instance_type)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def filter(*, use: str | None = None, gpu_model: str | None = None,  # noqa: A001
           min_gpu_memory_gib: float | None = None) -> builtins.list[InstanceType]:
    """Entries with `use` among their uses, every word of `gpu_model` a word of their GPU
    model name (case-insensitive: `a10` finds the A10, not the A100; `a100 80gb` the 80 GB
    A100s) and at least `min_gpu_memory_gib` per GPU."""
    wanted = _words(gpu_model) if gpu_model is not None else set()
    return [entry for entry in entries()
            if (use is None or use in entry.uses)
            and wanted <= _words(entry.gpu_model)
            and (min_gpu_memory_gib is None or entry.gpu_memory_gib >= min_gpu_memory_gib)]

