"""The storage blocks on their own under the mock engine: disks, file systems, buckets."""

import re
from ipaddress import IPv4Network

import pulumi
import pulumi_alicloud as alicloud
import pytest

from gpu_infra.blocks.conventions import Conventions
from gpu_infra.blocks.storage.buckets import Bucket
from gpu_infra.blocks.storage.disks import (
    DataDisks,
    instance_data_disk_args,
    scaling_data_disk_args,
)
from gpu_infra.blocks.storage.filesystem import SharedFileSystem, mount_command
from gpu_infra.schema.storage import LifecycleConfig, SharedFileSystemConfig, StorageConfig
from gpu_infra_facts.file_systems import NFS_OPTIONS
from gpu_infra_tools.plan.engine import ProgramError

DEV = Conventions(tags={"Project": "p"})
PROD = Conventions(tags={"Project": "p"}, protect_data=True)
VSWITCHES = {"cn-hangzhou-i": "vsw-i", "cn-hangzhou-j": "vsw-j"}
CIDRS = [IPv4Network("10.1.64.0/21"), IPv4Network("10.1.72.0/21")]


def of_type(resources, token):
    return [r for r in resources if r.type == token]


def storage(*disks, **snapshots) -> StorageConfig:
    """A storage section with these disks (dicts) and snapshot settings."""
    return StorageConfig(disks=list(disks), snapshots=snapshots)


# --- disks -----------------------------------------------------------------------------

def test_instance_data_disk_args_are_encrypted_autopl():
    disk = instance_data_disk_args(name="scratch", size_gib=100, provisioned_iops=2000,
                                   kms_key_id="key-1", delete_with_instance=False,
                                   auto_snapshot_policy_id="sp-1")
    assert isinstance(disk, alicloud.ecs.InstanceDataDiskArgs)
    assert (disk.category, disk.size, disk.provisioned_iops, disk.bursting_enabled,
            disk.encrypted, disk.kms_key_id, disk.delete_with_instance,
            disk.auto_snapshot_policy_id) == ("cloud_auto", 100, 2000, True, True, "key-1",
                                              False, "sp-1")
    plain = instance_data_disk_args(name="scratch", size_gib=100)
    assert (plain.provisioned_iops, plain.kms_key_id, plain.delete_with_instance,
            plain.auto_snapshot_policy_id) == (None, None, True, None)


def test_instance_data_disk_args_reject_beyond_limits():
    with pytest.raises(ValueError, match="provisioned_iops: 1001 is above the limit of a "
                                         "4 GiB disk; allowed 0 to 1000"):
        instance_data_disk_args(name="scratch", size_gib=4, provisioned_iops=1001)


def test_scaling_twin_is_essd_pl1_without_autopl_fields():
    disk = scaling_data_disk_args(name="scratch", size_gib=10, kms_key_id="key-1")
    assert isinstance(disk, alicloud.ess.ScalingConfigurationDataDiskArgs)
    assert (disk.category, disk.performance_level, disk.size, disk.encrypted, disk.kms_key_id,
            disk.delete_with_instance, disk.provisioned_iops) == (
        "cloud_essd", "PL1", 20, True, "key-1", True, None)
    assert scaling_data_disk_args(name="d", size_gib=32768).size == 32768
    with pytest.raises(ValueError, match="size_gib: 32769 GiB is above ESS's cloud_essd "
                                         "limit; allowed up to 32768 GiB"):
        scaling_data_disk_args(name="d", size_gib=32769)


def test_data_disks_per_gpu_sizes_and_snapshot_policy_for_kept_disks(record):
    made = {}

    def build():
        made["disks"] = DataDisks(
            "t1-disks", config=storage(
                {"name": "scratch", "size_gib": 200, "per": "gpu", "provisioned_iops": 5000},
                {"name": "data", "size_gib": 1000, "keep": True},
                time_points=[1, 13], repeat_weekdays=[1, 4], retention_days=14),
            gpu_count=8, conventions=PROD, kms_key_id="key-1", take_snapshots=True)
        pulumi.export("ids", made["disks"].snapshot_policy_id)

    resources = record(build)
    [policy] = of_type(resources, "alicloud:ecs/autoSnapshotPolicy:AutoSnapshotPolicy")
    assert policy.name == "t1-disks-snapshots" and policy.parent.endswith("t1-disks")
    assert {k: policy.inputs[k] for k in ("autoSnapshotPolicyName", "timePoints",
                                          "repeatWeekdays", "retentionDays")} == {
        "autoSnapshotPolicyName": "t1-disks-snapshots", "timePoints": ["1", "13"],
        "repeatWeekdays": ["1", "4"], "retentionDays": 14}
    assert policy.inputs["tags"] == {"Project": "p", "Name": "t1-disks-snapshots"}
    disks = made["disks"]
    assert disks.holds_data
    assert disks.performance["scratch"].size_gib == 1600
    assert disks.performance["scratch"].iops == 50000 + 5000
    scratch, data = disks.instance_disks()
    assert (scratch.size, scratch.delete_with_instance, scratch.auto_snapshot_policy_id) == (
        1600, True, None)
    assert (data.size, data.delete_with_instance) == (1000, False)
    assert data.auto_snapshot_policy_id is disks.snapshot_policy_id
    assert [d.size for d in disks.scaling_disks()] == [1600, 1000]


def test_data_disks_on_instance_wire_form(record):
    def build():
        disks = DataDisks("t1-disks", config=storage({"size_gib": 100}), gpu_count=1,
                          conventions=DEV)
        alicloud.ecs.Instance("node", instance_type="ecs.gn7i-c8g1.2xlarge",
                              data_disks=disks.instance_disks())

    resources = record(build)
    assert of_type(resources, "alicloud:ecs/autoSnapshotPolicy:AutoSnapshotPolicy") == []
    [node] = of_type(resources, "alicloud:ecs/instance:Instance")
    assert node.inputs["dataDisks"] == [{
        "name": "scratch", "size": 100, "category": "cloud_auto", "burstingEnabled": True,
        "encrypted": True, "deleteWithInstance": True}]


def test_no_snapshot_policy_without_kept_disks_or_outside_prod(record):
    resources = record(lambda: [
        DataDisks("a", config=storage({"size_gib": 100}), gpu_count=1, conventions=PROD,
                  take_snapshots=True),
        DataDisks("b", config=storage({"name": "data", "size_gib": 100, "keep": True}),
                  gpu_count=1, conventions=DEV, take_snapshots=False)])
    assert of_type(resources, "alicloud:ecs/autoSnapshotPolicy:AutoSnapshotPolicy") == []


def test_data_disks_reject_per_gpu_size_beyond_limits(record):
    with pytest.raises(ProgramError, match="size_gib: 80000 GiB is outside the ESSD AutoPL "
                                           "range; allowed 1 to 65536 GiB"):
        record(lambda: DataDisks("a", config=storage({"size_gib": 10000, "per": "gpu"}),
                                 gpu_count=8, conventions=DEV))


# --- shared file system ----------------------------------------------------------------

def build_fs(record, kind, conventions=DEV, kms_key_id=None, **config):
    made = {}
    shared = SharedFileSystemConfig(enabled=True, kind=kind, **config)

    def build():
        made["fs"] = fs = SharedFileSystem("t1-shared", config=shared, vpc_id="vpc-1",
                                           vswitch_ids=VSWITCHES, client_cidrs=CIDRS,
                                           conventions=conventions, kms_key_id=kms_key_id)
        if fs.mount_address is not None:
            pulumi.export("mount", fs.mount_address)

    return record(build), made["fs"]


@pytest.mark.parametrize(("kind", "fs_type", "storage_type"), [
    ("nas_performance", "standard", "Performance"), ("nas_capacity", "standard", "Capacity")])
def test_general_purpose_nas(record, kind, fs_type, storage_type):
    resources, fs = build_fs(record, kind, kms_key_id="key-1")
    [fsr] = of_type(resources, "alicloud:nas/fileSystem:FileSystem")
    assert {k: fsr.inputs.get(k) for k in ("fileSystemType", "protocolType", "storageType",
                                           "encryptType", "kmsKeyId", "capacity", "zoneId",
                                           "vpcId")} == {
        "fileSystemType": fs_type, "protocolType": "NFS", "storageType": storage_type,
        "encryptType": 1, "kmsKeyId": None, "capacity": None, "zoneId": None, "vpcId": None}
    assert fsr.inputs["tags"]["Name"] == "t1-shared-fs" and not fsr.protect
    [group] = of_type(resources, "alicloud:nas/accessGroup:AccessGroup")
    assert (group.inputs["accessGroupType"], group.inputs["fileSystemType"]) == ("Vpc", fs_type)
    rules = of_type(resources, "alicloud:nas/accessRule:AccessRule")
    assert sorted((r.inputs["sourceCidrIp"], r.inputs["rwAccessType"],
                   r.inputs["accessGroupName"]) for r in rules) == [
        ("10.1.64.0/21", "RDWR", "t1-shared-access"), ("10.1.72.0/21", "RDWR", "t1-shared-access")]
    targets = of_type(resources, "alicloud:nas/mountTarget:MountTarget")
    assert sorted((t.inputs["vswitchId"], t.inputs["accessGroupName"], t.inputs["networkType"])
                  for t in targets) == [("vsw-i", "t1-shared-access", "Vpc"),
                                  ("vsw-j", "t1-shared-access", "Vpc")]
    assert all(rule.urn in targets[0].dependencies for rule in rules)
    assert fs.file_system_type == "standard" and set(fs.mount_addresses) == set(VSWITCHES)


def test_extreme_nas_uses_kms_key_and_zone(record):
    resources, _ = build_fs(record, "extreme", capacity_gib=100, zone="cn-hangzhou-j",
                            kms_key_id="key-1")
    [fsr] = of_type(resources, "alicloud:nas/fileSystem:FileSystem")
    assert {k: fsr.inputs.get(k) for k in ("fileSystemType", "protocolType", "storageType",
                                           "encryptType", "kmsKeyId", "capacity",
                                           "zoneId")} == {
        "fileSystemType": "extreme", "protocolType": "NFS", "storageType": "standard",
        "encryptType": 2, "kmsKeyId": "key-1", "capacity": 100, "zoneId": "cn-hangzhou-j"}
    resources, _ = build_fs(record, "extreme", capacity_gib=100)
    [fsr] = of_type(resources, "alicloud:nas/fileSystem:FileSystem")
    assert (fsr.inputs["encryptType"], fsr.inputs["zoneId"]) == (1, "cn-hangzhou-i")


def test_cpfs_gets_protocol_service_and_exports(record):
    resources, fs = build_fs(record, "cpfs", capacity_gib=3600)
    [fsr] = of_type(resources, "alicloud:nas/fileSystem:FileSystem")
    assert {k: fsr.inputs.get(k) for k in ("fileSystemType", "protocolType", "storageType",
                                           "capacity", "zoneId", "vpcId", "vswitchId",
                                           "encryptType")} == {
        "fileSystemType": "cpfs", "protocolType": "cpfs", "storageType": "advance_100",
        "capacity": 3600, "zoneId": "cn-hangzhou-i", "vpcId": "vpc-1", "vswitchId": "vsw-i",
        "encryptType": None}
    [service] = of_type(resources, "alicloud:nas/protocolService:ProtocolService")
    assert (service.inputs["protocolType"], service.inputs["protocolSpec"]) == ("NFS",
                                                                                "General")
    exports = of_type(resources, "alicloud:nas/protocolMountTarget:ProtocolMountTarget")
    assert sorted((e.inputs["vswitchId"], e.inputs["path"]) for e in exports) == [("vsw-i", "/"),
                                                                            ("vsw-j", "/")]
    assert all(e.inputs["protocolServiceId"].startswith("ptc-") for e in exports)
    assert of_type(resources, "alicloud:nas/mountTarget:MountTarget") == []
    assert of_type(resources, "alicloud:nas/accessGroup:AccessGroup") == []
    assert fs.mount_address is None


def test_file_system_protected_in_prod(record):
    resources, _ = build_fs(record, "nas_performance", conventions=PROD)
    [fsr] = of_type(resources, "alicloud:nas/fileSystem:FileSystem")
    assert fsr.protect
    assert not any(r.protect for r in of_type(resources, "alicloud:nas/mountTarget:MountTarget"))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"client_cidrs": [IPv4Network("0.0.0.0/0")]},
     "client_cidrs: 0.0.0.0/0 covers all public IPv4 space: that opens the file system to "
     "the world; list the vSwitch or VPC CIDRs"),
    ({"client_cidrs": [IPv4Network("0.0.0.0/1"), IPv4Network("128.0.0.0/1")]},
     "client_cidrs: 0.0.0.0/1, 128.0.0.0/1 covers all public IPv4 space: that opens the file "
     "system to the world"),
    ({"client_cidrs": []}, "client_cidrs: at least one CIDR (the vSwitch or VPC CIDRs)"),
    ({"client_cidrs": CIDRS, "vswitch_ids": {}},
     "vswitch_ids: at least one vSwitch with nodes is needed"),
])
def test_file_system_wiring_errors(record, kwargs, message):
    args = {"vswitch_ids": VSWITCHES, **kwargs}
    with pytest.raises(ProgramError, match=re.escape(message)):
        record(lambda: SharedFileSystem("x", config=SharedFileSystemConfig(enabled=True),
                                        vpc_id="vpc-1", conventions=DEV, **args))


def test_mount_command():
    general = mount_command("abc.cn-hangzhou.nas.aliyuncs.com")
    assert (f"mount -t nfs -o {NFS_OPTIONS} abc.cn-hangzhou.nas.aliyuncs.com:/ /mnt/shared"
            in general)
    assert NFS_OPTIONS == ("vers=3,nolock,proto=tcp,rsize=1048576,wsize=1048576,hard,"
                           "timeo=600,retrans=2,noresvport")
    assert f"abc.cn-hangzhou.nas.aliyuncs.com:/ /mnt/shared nfs {NFS_OPTIONS},_netdev 0 0" \
        in general
    extreme = mount_command("x.extreme.nas.aliyuncs.com", file_system_type="extreme",
                            mount_point="/data")
    assert "x.extreme.nas.aliyuncs.com:/share /data" in extreme


# --- buckets ---------------------------------------------------------------------------

NO_TIERS = LifecycleConfig(ia_days=None, archive_days=None)


def build_bucket(record, conventions=DEV, config=NO_TIERS, **kwargs):
    return record(lambda: Bucket("t1-models", config=config, bucket_name="t1-dev-models",
                                 conventions=conventions, **kwargs))


def test_bucket_private_encrypted_tiered(record):
    lifecycle = LifecycleConfig(ia_days=30, archive_days=90, cold_archive_days=180,
                                abort_multipart_days=3, noncurrent_version_days=20)
    resources = build_bucket(record, config=lifecycle, versioning=True, kms_key_id="key-1")
    [bucket] = of_type(resources, "alicloud:oss/bucket:Bucket")
    assert bucket.inputs["bucket"] == "t1-dev-models" and "acl" not in bucket.inputs
    assert bucket.inputs["serverSideEncryptionRule"] == {"sseAlgorithm": "KMS",
                                                         "kmsMasterKeyId": "key-1"}
    assert bucket.inputs["versioning"] == {"status": "Enabled"}
    assert bucket.inputs["lifecycleRules"] == [{
        "id": "tiering", "enabled": True, "prefix": "",
        "filter": {"not": {"prefix": "gpu-infra/"}},  # the objects nodes fetch stay Standard
        "transitions": [{"storageClass": "IA", "days": 30},
                        {"storageClass": "Archive", "days": 90},
                        {"storageClass": "ColdArchive", "days": 180}],
        "abortMultipartUploads": [{"days": 3}],
        "noncurrentVersionExpirations": [{"days": 20}]}]
    assert bucket.inputs["tags"] == {"Project": "p", "Name": "t1-dev-models"}
    [acl] = of_type(resources, "alicloud:oss/bucketAcl:BucketAcl")
    assert acl.inputs == {"bucket": "t1-dev-models", "acl": "private"}
    [block] = of_type(resources, "alicloud:oss/bucketPublicAccessBlock:BucketPublicAccessBlock")
    assert block.inputs == {"bucket": "t1-dev-models", "blockPublicAccess": True}
    assert of_type(resources, "alicloud:oss/bucketLogging:BucketLogging") == []
    assert not bucket.protect


def test_bucket_defaults_aes256_unversioned_no_tiers(record):
    [bucket] = of_type(build_bucket(record), "alicloud:oss/bucket:Bucket")
    assert bucket.inputs["serverSideEncryptionRule"] == {"sseAlgorithm": "AES256"}
    assert "versioning" not in bucket.inputs
    assert bucket.inputs["lifecycleRules"] == [{
        "id": "tiering", "enabled": True, "prefix": "", "abortMultipartUploads": [{"days": 7}]}]


def test_bucket_logging_and_prod_protection(record):
    resources = build_bucket(record, conventions=PROD, log_bucket="t1-dev-logs")
    [logging] = of_type(resources, "alicloud:oss/bucketLogging:BucketLogging")
    assert logging.inputs == {"bucket": "t1-dev-models", "targetBucket": "t1-dev-logs",
                              "targetPrefix": "t1-dev-models/"}
    [bucket] = of_type(resources, "alicloud:oss/bucket:Bucket")
    assert bucket.protect
