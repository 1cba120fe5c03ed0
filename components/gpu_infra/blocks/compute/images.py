"""The default node image, resolved when no image id is configured."""

from __future__ import annotations

import pulumi
import pulumi_alicloud as alicloud

DEFAULT_IMAGE_NAME_REGEX = r"^ubuntu_22_04_x64_20G_alibase_"
"""Alibaba Cloud public Ubuntu 22.04 images (owner `system`). They carry no GPU driver: the
user data must install the NVIDIA driver and CUDA, or configure a GPU image id instead."""


def default_image_id(instance_type: str) -> pulumi.Output[str]:
    """Id of the newest public Ubuntu 22.04 image that runs on `instance_type`."""
    images = alicloud.ecs.get_images_output(
        name_regex=DEFAULT_IMAGE_NAME_REGEX, owners="system", most_recent=True,
        instance_type=instance_type)
    return images.ids.apply(lambda ids: ids[0])
