"""The fleet's image id: pinned (an id, or the default public image of the chosen OS), one
custom image looked up by its exact name, or the image an image stack published (its output
BAKED_IMAGE_OUTPUT, through a stack reference). Never "the newest image" of the account: a
newly published image must not change a plan unless the fleet asked to follow a bake, since a
new image replaces every node's system disk."""

from __future__ import annotations

import re

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.schema.node import ImageChoice

IMAGE_OWNER_SELF = "self"
"""ecs.get_images `owners` for the account's own custom images."""
BAKED_IMAGE_OUTPUT = "image_id"
"""The image stack's output naming its newest successful bake (None before the first)."""
IMAGE_REGION_OUTPUT = "image_region"
"""The image stack's output naming the region its images are in."""


def image_id_for(image: ImageChoice) -> pulumi.Input[str]:
    """The image id of `image`: `image.pinned_id`, the one custom image named `image.name`
    (an error names the problem when no or several images have that name), or the bake of
    the image stack `image.from_stack`."""
    if image.pinned_id is not None:
        return image.pinned_id
    if image.from_stack is not None:
        return baked_image_id(image.from_stack)
    name = image.name or ""
    found = alicloud.ecs.get_images_output(name_regex=f"^{re.escape(name)}$",
                                           owners=IMAGE_OWNER_SELF)
    return found.ids.apply(lambda ids: _exactly_one(name, list(ids)))


def image_stack_reference(stack: str) -> str:
    """The fully qualified name of the image stack `stack` of this project and organization."""
    return f"{pulumi.get_organization()}/{pulumi.get_project()}/{stack}"


def baked_image_id(stack: str) -> pulumi.Output[str]:
    """The image the image stack `stack` published, in this stack's region (an error says
    what to do when it has published none yet, or builds in another region)."""
    reference = pulumi.StackReference(image_stack_reference(stack))
    region = pulumi.Config("alicloud").get("region") or ""
    return pulumi.Output.all(reference.get_output(BAKED_IMAGE_OUTPUT),
                             reference.get_output(IMAGE_REGION_OUTPUT)).apply(
        lambda values: _published(stack, values[0], values[1], region))


def _published(stack: str, image_id: object, image_region: object, region: str) -> str:
    if image_region != region:
        raise pulumi.RunError(
            f"fleet.image.from_stack: the image stack {stack!r} bakes in {image_region}, "
            f"this stack runs in {region}; an image is used in its own region: bake one here")
    if not isinstance(image_id, str) or not image_id:
        raise pulumi.RunError(
            f"fleet.image.from_stack: the image stack {stack!r} has published no image yet "
            "(its build runs 30-60 minutes after its `pulumi up`); when it has finished, run "
            f"`pulumi up` on {stack!r} again, then on this stack")
    return image_id


def newest_bake(name_prefix: str) -> pulumi.Output[str | None]:
    """The newest of the account's images whose name starts with `name_prefix` (an image
    stack's builds), or None before the first build finished."""
    found = alicloud.ecs.get_images_output(name_regex=f"^{re.escape(name_prefix)}",
                                           owners=IMAGE_OWNER_SELF, most_recent=True)
    return found.images.apply(lambda images: images[0].id if images else None)


def _exactly_one(name: str, ids: list[str]) -> str:
    if len(ids) != 1:
        raise pulumi.RunError(f"fleet.image.name: {len(ids)} custom images are named "
                              f"{name!r}; exactly one must be (or set fleet.image.id)")
    return ids[0]


__all__ = ["BAKED_IMAGE_OUTPUT", "IMAGE_REGION_OUTPUT", "baked_image_id", "image_id_for",
           "newest_bake"]
