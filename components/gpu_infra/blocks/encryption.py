"""The stack's KMS key, for disk and bucket encryption."""

from __future__ import annotations

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import Conventions, child_name
from gpu_infra.schema.security import SecurityConfig

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
    """A symmetric KMS key with automatic rotation every `config.kms_rotation_days`, in the
    software KMS instance `config.kms_instance_id` if set; deleted keys stay recoverable for
    `config.kms_pending_window_days` (defaults and ranges: SecurityConfig).
    With `conventions.deletion_protection`, cloud-side deletion protection is on; with
    `conventions.protect_data`, the key is `protect`ed (losing it loses the data).

    Attributes: `key`, `key_id`, `key_arn`.
    """

    TYPE = "gpu-infra:encryption:KmsKey"

    def __init__(self, name: str, *, config: SecurityConfig, conventions: Conventions,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__(self.TYPE, name, None, opts)
        key_name = child_name(name, "key")
        self.key = alicloud.kms.Key(
            key_name, description=f"{key_name}: disk and bucket encryption",
            key_spec=KEY_SPEC, key_usage=KEY_USAGE, protection_level=PROTECTION_LEVEL,
            automatic_rotation=ROTATION,
            rotation_interval=rotation_interval(config.kms_rotation_days),
            pending_window_in_days=config.kms_pending_window_days,
            dkms_instance_id=config.kms_instance_id,
            deletion_protection=PROTECTION[conventions.deletion_protection],
            tags=conventions.tags_for(key_name),
            opts=conventions.data_options(self))
        self.key_id: pulumi.Output[str] = self.key.id
        self.key_arn: pulumi.Output[str] = self.key.arn
        self.register_outputs({"key_id": self.key_id, "key_arn": self.key_arn})


__all__ = ["KmsKey"]
