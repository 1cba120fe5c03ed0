"""The fleet's image id: pinned (an id, or the default public image of the chosen OS), or one
custom image looked up by its exact name. Never "the newest image": a newly published image
must not change a plan, since a new image replaces every node's system disk."""

from __future__ import annotations

import re

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.schema.node import ImageChoice

IMAGE_OWNER_SELF = "self"
"""ecs.get_images `owners` for the account's own custom images."""


def image_id_for(image: ImageChoice) -> pulumi.Input[str]:
    """The image id of `image`: `image.pinned_id`, or the one custom image named `image.name`
    (an error names the problem when no or several images have that name)."""
    if image.pinned_id is not None:
        return image.pinned_id
    name = image.name or ""
    found = alicloud.ecs.get_images_output(name_regex=f"^{re.escape(name)}$",
                                           owners=IMAGE_OWNER_SELF)
    return found.ids.apply(lambda ids: _exactly_one(name, list(ids)))


def _exactly_one(name: str, ids: list[str]) -> str:
    if len(ids) != 1:
        raise pulumi.RunError(f"fleet.image.name: {len(ids)} custom images are named "
                              f"{name!r}; exactly one must be (or set fleet.image.id)")
    return ids[0]


__all__ = ["image_id_for"]
