"""The stack's KMS key, for disk and bucket encryption."""

from __future__ import annotations

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import Conventions, child_name
from gpu_infra.schema.security import KMS_DEFAULT_KEY_ROTATION_DAYS

ROTATION = "Enabled"
"""kms.Key automatic_rotation: Enabled|Disabled; always on here."""
PROTECTION = {True: "Enabled", False: "Disabled"}
"""kms.Key deletion_protection values by Conventions.deletion_protection."""
KEY_SPEC = "Aliyun_AES_256"
KEY_USAGE = "ENCRYPT/DECRYPT"
PROTECTION_LEVEL = "SOFTWARE"
"""Hardware-protected keys cannot rotate; a key in an HSM instance must not be used here."""


def rotation_interval(days: int) -> str:
    """kms.Key rotation_interval in the provider's unit format: 365 -> `365d`."""
    return f"{days}d"


class KmsKey(pulumi.ComponentResource):
    """A symmetric KMS key with automatic rotation every `rotation_days` (default 365; 7-365
    only in the software KMS instance `kms_instance_id`, default none: a default key of the
    region); deleted keys stay recoverable for `pending_window_days` (7-366, default 30).
    With `conventions.deletion_protection`, cloud-side deletion protection is on; with
    `conventions.protect_data`, the key is `protect`ed (losing it loses the data).

    Attributes: `key`, `key_id`, `key_arn`.
    """

    TYPE = "gpu-infra:encryption:KmsKey"

    def __init__(self, name: str, *, conventions: Conventions,
                 rotation_days: int = KMS_DEFAULT_KEY_ROTATION_DAYS, pending_window_days: int = 30,
                 kms_instance_id: str | None = None,
                 opts: pulumi.ResourceOptions | None = None):
        if rotation_days != KMS_DEFAULT_KEY_ROTATION_DAYS and kms_instance_id is None:
            raise ValueError(f"rotation_days {rotation_days} needs kms_instance_id; a default "
                             f"key rotates every {KMS_DEFAULT_KEY_ROTATION_DAYS} days only")
        super().__init__(self.TYPE, name, None, opts)
        key_name = child_name(name, "key")
        self.key = alicloud.kms.Key(
            key_name, description=f"{key_name}: disk and bucket encryption",
            key_spec=KEY_SPEC, key_usage=KEY_USAGE, protection_level=PROTECTION_LEVEL,
            automatic_rotation=ROTATION, rotation_interval=rotation_interval(rotation_days),
            pending_window_in_days=pending_window_days, dkms_instance_id=kms_instance_id,
            deletion_protection=PROTECTION[conventions.deletion_protection],
            tags=conventions.tags_for(key_name),
            opts=conventions.data_options(self))
        self.key_id: pulumi.Output[str] = self.key.id
        self.key_arn: pulumi.Output[str] = self.key.arn
        self.register_outputs({"key_id": self.key_id, "key_arn": self.key_arn})
