"""Cloud Backup (HBR) of a stack's data: `Backups`, the current policy API (hbr.Vault,
hbr.Policy, hbr.PolicyBinding; hbr.NasBackupPlan and hbr.OssBackupPlan are deprecated since
provider 1.249, shared reference engines-and-operations.md section 4).

Facts (terraform-provider-alicloud 81c43b672, SDK pulumi-alicloud 4.0.0):
- Vault: vault_type STANDARD | OTS_BACKUP, vault_storage_class STANDARD, encrypt_type
  HBR_PRIVATE (HBR's own keys, the default) | KMS with kms_key_id, both ForceNew
  (resource_alicloud_hbr_vault.go lines 38-55, 79, 86; gpu_infra_facts.allowed
  VAULT_ENCRYPT_TYPES). Whether Cloud Backup needs a grant of its own to use a customer key
  is UNCONFIRMED (the CreateVault reference names none).
- Policy: policy_type STANDARD for every data source but ECS instances; a rule of type
  BACKUP takes backup_type COMPLETE | INCREMENTAL, `schedule` `I|<first run, unix
  seconds>|<ISO 8601 interval>`, `retention` in days and the vault (lines 87, 102; SDK
  docstring of PolicyRuleArgs.schedule).
- PolicyBinding: source_type NAS (data_source_id: the file system id; Cloud Backup creates a
  mount target on it by itself, to be deleted by hand if unbound) or OSS (the bucket name)
  (line 146; CreatePolicyBindings API reference, DataSourceId). Every input that names the
  data source or the policy is ForceNew.
Which NAS kinds Cloud Backup takes is UNCONFIRMED beyond general-purpose NAS; Extreme NAS is
bound as NAS, CPFS (no NAS source type in the provider) is not backed up.
"""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import Conventions, child_name
from gpu_infra.schema.storage import BackupConfig
from gpu_infra_facts.allowed import VAULT_ENCRYPT_TYPES

SCHEDULE_EPOCH = 1767225600
"""2026-01-01T00:00:00Z: the first run of every schedule is `hour_utc` after it (a fixed
point in the past keeps the plan the same run after run; HBR runs the next one due)."""
DAILY = "P1D"


def daily_schedule(hour_utc: int) -> str:
    """The BACKUP rule's schedule: every day at `hour_utc`."""
    return f"I|{SCHEDULE_EPOCH + hour_utc * 3600}|{DAILY}"


class Backups(pulumi.ComponentResource):
    """A vault `<name>-vault`, a daily policy keeping each backup `retention_days`, and one
    binding per data source: the NAS file system `file_system_id` (None: none) and each
    bucket of `buckets` (purpose -> bucket name). The vault encrypts with `kms_key_id`, or
    Cloud Backup's own key without one. The vault is protected with the stack's
    data (`conventions.protect_data`): deleting it deletes every backup in it.

    Outputs: `vault_id`, `policy_id`.
    """

    TYPE = "gpu-infra:storage:Backups"

    def __init__(self, name: str, *, config: BackupConfig,
                 file_system_id: pulumi.Input[str] | None,
                 buckets: Mapping[str, pulumi.Input[str]], conventions: Conventions,
                 kms_key_id: pulumi.Input[str] | None = None,
                 opts: pulumi.ResourceOptions | None = None):
        """`kms_key_id`: the key the vault encrypts with (the stack's; fixed at creation);
        None (default): Cloud Backup's own key."""
        super().__init__(self.TYPE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.vault = alicloud.hbr.Vault(
            child_name(name, "vault"), vault_name=child_name(name, "vault"),
            vault_type="STANDARD", vault_storage_class="STANDARD",
            encrypt_type=VAULT_ENCRYPT_TYPES["hbr" if kms_key_id is None else "stack"],
            kms_key_id=kms_key_id,
            description=f"Backups of {name}", tags=conventions.tags_for(child_name(name, "vault")),
            opts=pulumi.ResourceOptions(parent=self, protect=conventions.protect_data))
        self.policy = alicloud.hbr.Policy(
            child_name(name, "policy"), policy_name=child_name(name, "policy"),
            policy_type="STANDARD",
            policy_description=f"Daily backup of {name}, kept {config.retention_days} days",
            rules=[alicloud.hbr.PolicyRuleArgs(
                rule_type="BACKUP", backup_type="COMPLETE",
                schedule=daily_schedule(config.hour_utc), retention=config.retention_days,
                vault_id=self.vault.id)],
            opts=child)
        sources: dict[str, tuple[str, pulumi.Input[str]]] = {
            f"bucket-{purpose}": ("OSS", bucket) for purpose, bucket in buckets.items()}
        if file_system_id is not None:
            sources["shared-fs"] = ("NAS", file_system_id)
        for key, (source_type, source_id) in sorted(sources.items()):
            alicloud.hbr.PolicyBinding(
                child_name(name, key), policy_id=self.policy.id, source_type=source_type,
                data_source_id=source_id, disabled=False,
                policy_binding_description=f"{key} of {name}", opts=child)
        self.vault_id: pulumi.Output[str] = self.vault.id
        self.policy_id: pulumi.Output[str] = self.policy.id
        self.register_outputs({"vault_id": self.vault_id, "policy_id": self.policy_id})
