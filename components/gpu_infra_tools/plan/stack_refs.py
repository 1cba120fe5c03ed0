"""Stack references offline: the image stack a fleet names (`fleet.image.from_stack`) is read
from its file beside the fleet's, checked before the program runs, and answers the
reference with a placeholder image named by its bake."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpu_infra.blocks.compute.images import BAKED_IMAGE_OUTPUT, IMAGE_REGION_OUTPUT
from gpu_infra.layouts.image import bake_digest
from gpu_infra.schema import CLUSTER_KEY, ClusterConfig, ImageConfig, load_cluster_config
from gpu_infra.schema.problems import ConfigError

FIELD = f"{CLUSTER_KEY}.fleet.image.from_stack"


def _image_stack(stack: str, stacks_dir: Path) -> tuple[ImageConfig | None, str | None]:
    path = stacks_dir / f"Pulumi.{stack}.yaml"
    if not path.is_file():
        return None, (f"{FIELD}: no stack file {path.name} beside this one; name an image "
                      "stack of this project (layout: image)")
    try:
        _, config = load_cluster_config(path)
    except ConfigError:
        return None, f"{FIELD}: {path.name} is not a valid stack file (validate it)"
    if not isinstance(config, ImageConfig):
        return None, (f"{FIELD}: {stack!r} is a {config.layout} stack, not an image stack "
                      "(layout: image)")
    return config, None


def image_stack_problems(cluster: ClusterConfig, stacks_dir: Path) -> list[str]:
    """What is wrong with the image stack `cluster` boots from (empty when none or fine)."""
    image = getattr(getattr(cluster, "fleet", None), "image", None)
    stack = getattr(image, "from_stack", None)
    if stack is None:
        return []
    config, problem = _image_stack(stack, stacks_dir)
    if problem is not None:
        return [problem]
    assert config is not None
    if config.region != cluster.region:
        return [f"{FIELD}: {stack!r} bakes in {config.region}, this stack runs in "
                f"{cluster.region}; an image is used in its own region: bake one here"]
    return []


def stack_reference_outputs(name: str, stacks_dir: Path | None) -> dict[str, Any]:
    """The outputs of the stack reference `name` (<organization>/<project>/<stack>): an image
    stack's image_id (m-baked<bake digest>) and image_region; none when it cannot be read
    (image_stack_problems says why before a plan)."""
    config, _ = _image_stack(name.rsplit("/", 1)[-1], stacks_dir) if stacks_dir else (None, "")
    if config is None:
        return {"outputs": {}, "secretOutputNames": []}
    return {"outputs": {BAKED_IMAGE_OUTPUT: f"m-baked{bake_digest(config)}",
                        IMAGE_REGION_OUTPUT: config.region}, "secretOutputNames": []}
