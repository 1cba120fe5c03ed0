"""The one registry of layouts: `ClusterConfig` lists every layout's model.

A layout is its model (a ClusterBase subclass with a `layout: Literal["<name>"]`
discriminator, its `workload` and `default_bucket_purposes`; or, for a stack without a fleet
such as the image-baking one, a ClusterCommon subclass with its `workload`), one entry in the
union below, and its Layout subclass in gpu_infra.layouts (found by its CONFIG). Everything else is
derived from here: the loader's and the editor schema's allowed layouts, the recommender's
`--layout` choices, which layouts an instance type suits, how a layout places its nodes
(what the policy rules check), the default buckets.
"""

from __future__ import annotations

import typing
from typing import Annotated

from pydantic import Field, TypeAdapter

from gpu_infra import catalog
from gpu_infra.schema.stack import (
    ClusterCommon,
    ImageConfig,
    InferenceConfig,
    RenderingConfig,
    TrainingConfig,
)
from gpu_infra_facts.workload import Placement

ClusterConfig = Annotated[
    TrainingConfig | InferenceConfig | RenderingConfig | ImageConfig,
    Field(discriminator="layout")
]
"""One stack's settings; `layout` picks the model. The registry: add a layout here."""

CLUSTER_ADAPTER: TypeAdapter[ClusterConfig] = TypeAdapter(ClusterConfig)


def layout_name(model: type[ClusterCommon]) -> str:
    """The `layout` value that picks `model` (its discriminator's one literal)."""
    names = typing.get_args(model.model_fields["layout"].annotation)
    if len(names) != 1 or not isinstance(names[0], str):
        raise TypeError(f"{model.__name__}.layout must be one Literal string")
    return names[0]


LAYOUT_MODELS: dict[str, type[ClusterCommon]] = {
    layout_name(model): model for model in typing.get_args(typing.get_args(ClusterConfig)[0])}
"""Layout name -> its config model: what `layout:` may be."""
LAYOUT_NAMES: tuple[str, ...] = tuple(LAYOUT_MODELS)


def layouts_suited(instance_type: str,
                   gpu_types: catalog.Lookup = catalog.CATALOG_ONLY) -> frozenset[str] | None:
    """The layouts `instance_type` suits (its uses meet the layout's workload), or None
    when `gpu_types` (default: the catalog alone) does not list it: the lookup the policy
    rules' context takes."""
    entry = gpu_types.get(instance_type)
    if entry is None:
        return None
    return frozenset(name for name, model in LAYOUT_MODELS.items()
                     if model.workload.suits(entry))


def layout_placement(layout: str) -> Placement | None:
    """How `layout` places its nodes (its workload's `placement`), or None for a layout that
    leaves it open or is not registered: the lookup the policy rules' context takes."""
    model = LAYOUT_MODELS.get(layout)
    return model.workload.placement if model is not None else None
