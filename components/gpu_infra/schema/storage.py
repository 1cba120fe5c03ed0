"""The `storage` section: node data disks, snapshots, the shared file system, OSS buckets."""

from __future__ import annotations

from itertools import pairwise
from typing import Literal, get_args

from pydantic import Field, model_validator

from gpu_infra.schema.base import StrictModel
from gpu_infra_facts.allowed import (
    ARCHIVE_CLASSES,
    KEEP_SNAPSHOTS_UNTIL_DELETED,
    NAS_CAPACITY_GIB,
    SNAPSHOT_HOURS,
    SNAPSHOT_RETENTION_DAYS,
    SNAPSHOT_WEEKDAYS,
    NasReadWrite,
    NasUserAccess,
    StorageClass,
    VaultKey,
)
from gpu_infra_facts.autopl import AUTOPL_SIZE_RANGE, autopl_problems

BucketPurpose = Literal["datasets", "checkpoints", "models", "outputs"]
BUCKET_PURPOSES: tuple[str, ...] = get_args(BucketPurpose)
VERSIONED_PURPOSES = frozenset({"checkpoints", "models"})
"""Purposes whose buckets keep object versions in every environment (an overwrite must not
lose a model); in prod every bucket is versioned."""
LOG_BUCKET_SUFFIX = "logs"
BUCKET_PREFIX_PATTERN = r"^[a-z0-9][a-z0-9-]*[a-z0-9]$|^[a-z0-9]$"
LONGEST_SUFFIX = max([*BUCKET_PURPOSES, LOG_BUCKET_SUFFIX], key=len)
"""The longest purpose a bucket name ends with (checkpoints): bucket_prefix leaves it room."""
FsKind = Literal["nas_performance", "nas_capacity", "extreme", "cpfs"]
CAPACITY_KINDS = frozenset({"extreme", "cpfs"})
"""Kinds that are bought by capacity (`capacity` is required by the provider)."""


class DataDiskConfig(StrictModel):
    """One ESSD AutoPL (cloud_auto) data disk on every node."""

    name: str = Field(default="scratch", pattern=r"^[a-z][a-z0-9-]{1,30}$")
    """Disk name, unique per node. Default scratch."""
    size_gib: int = Field(default=500, ge=AUTOPL_SIZE_RANGE[0], le=AUTOPL_SIZE_RANGE[1])
    """Size in GiB, per node or per GPU (see `per`). Default 500; 1 to 65536 in all."""
    per: Literal["node", "gpu"] = "node"
    """`node`: size_gib is the disk size; `gpu`: size_gib times the node's GPU count.
    Default node."""
    provisioned_iops: int = Field(default=0, ge=0)
    """IOPS provisioned above the baseline. Default 0 (none). Allowed from 4 GiB, up to
    min{1000 x GiB - baseline, 50000}; with per=gpu, checked here at one GPU's size."""
    bursting: bool = True
    """Performance burst (up to min{1,000,000, 1000 x GiB} IOPS). Default true."""
    keep: bool = False
    """Data worth keeping: the disk outlives its instance and, in prod, gets the
    auto-snapshot policy and protection. Default false (scratch)."""

    def size_for(self, gpu_count: int) -> int:
        """The disk's size in GiB on a node with `gpu_count` GPUs."""
        return self.size_gib * max(gpu_count, 1) if self.per == "gpu" else self.size_gib

    @model_validator(mode="after")
    def _check_performance(self) -> DataDiskConfig:
        problems = autopl_problems(self.size_gib, self.provisioned_iops)
        if problems:
            raise ValueError("\n".join(problems))
        return self


class SnapshotPolicyConfig(StrictModel):
    """The automatic snapshot policy for kept disks (created in prod only)."""

    time_points: list[int] = Field(default=[2], min_length=1, max_length=24)
    """Hours of the day (0-23, UTC+8) to snapshot at. Default [2]."""
    repeat_weekdays: list[int] = Field(default=[1, 2, 3, 4, 5, 6, 7], min_length=1,
                                       max_length=7)
    """Days of the week (1 = Monday .. 7). Default every day."""
    retention_days: int = 7
    """Days to keep each snapshot: 1 to 65536, or -1 for until deleted. Default 7."""

    @model_validator(mode="after")
    def _check_values(self) -> SnapshotPolicyConfig:
        first_hour, last_hour = SNAPSHOT_HOURS
        monday, sunday = SNAPSHOT_WEEKDAYS
        problems = [f"time_points: {hour} is not an hour; allowed {first_hour} to {last_hour}"
                    for hour in self.time_points if not first_hour <= hour <= last_hour]
        problems += [f"repeat_weekdays: {day} is not a weekday; allowed {monday} (Monday) to "
                     f"{sunday}" for day in self.repeat_weekdays if not monday <= day <= sunday]
        for field in ("time_points", "repeat_weekdays"):
            if len(set(getattr(self, field))) != len(getattr(self, field)):
                problems.append(f"{field}: each value may be listed once")
        shortest, longest = SNAPSHOT_RETENTION_DAYS
        if self.retention_days != KEEP_SNAPSHOTS_UNTIL_DELETED and not (
                shortest <= self.retention_days <= longest):
            problems.append(f"retention_days: {self.retention_days} is out of range; allowed "
                            f"{shortest} to {longest}, or {KEEP_SNAPSHOTS_UNTIL_DELETED} (keep "
                            "until deleted)")
        if problems:
            raise ValueError("\n".join(problems))
        return self


class SharedFileSystemConfig(StrictModel):
    """A shared POSIX file system mounted on every node."""

    enabled: bool = False
    """Create the file system. Default false."""
    kind: FsKind = "nas_performance"
    """nas_performance | nas_capacity (general-purpose NAS, pay per use), extreme (Extreme
    NAS) or cpfs (parallel file system). Default nas_performance."""
    capacity_gib: int | None = Field(default=None, ge=1)
    """Capacity bought, in GiB. Required for extreme and cpfs, not allowed otherwise.
    Default none."""
    zone: str | None = None
    """Zone of an extreme or cpfs file system. Default: the first of `network.zones`."""
    squash: NasUserAccess = "root_squash"
    """NAS access rule user mapping: root_squash maps root on the nodes to nobody, so a
    compromised or careless root process cannot rewrite everyone's files (run jobs as a
    non-root user, or choose no_squash knowingly); all_squash maps every user. Default
    root_squash."""
    access: NasReadWrite = "RDWR"
    """Read-write or read-only mounts for the nodes. Default RDWR."""

    @model_validator(mode="after")
    def _check_capacity(self) -> SharedFileSystemConfig:
        if self.kind in CAPACITY_KINDS and self.capacity_gib is None:
            raise ValueError(f"capacity_gib: missing; required for kind {self.kind}")
        if self.kind not in CAPACITY_KINDS and self.capacity_gib is not None:
            raise ValueError(f"capacity_gib: only for kinds extreme and cpfs; {self.kind} is "
                             "billed by use (remove it)")
        if self.kind not in CAPACITY_KINDS and self.zone is not None:
            raise ValueError(f"zone: only for kinds extreme and cpfs, not {self.kind}")
        low, high = NAS_CAPACITY_GIB.get(self.kind, (1, 0))
        if self.capacity_gib is not None and not low <= self.capacity_gib <= high:
            raise ValueError(f"capacity_gib: {self.capacity_gib} GiB; an {self.kind} file "
                             f"system holds {low} to {high} GiB (NAS CreateFileSystem)")
        return self


TIERED_PURPOSES: tuple[BucketPurpose, ...] = ("checkpoints", "outputs")
"""Buckets that tier by default: old checkpoints and finished outputs are rarely read.
Datasets and model weights are read in full by every job and every scale-out, and an
Archive object must be restored before it can be read, so they stay Standard."""


class LifecycleConfig(StrictModel):
    """Days after upload at which objects of the tiered buckets move to colder storage
    classes (the access-log bucket always tiers); every bucket aborts stale multipart
    uploads and expires old versions."""

    ia_days: int | None = Field(default=30, ge=1)
    """Move to IA (Infrequent Access) after this many days. Default 30; null: never."""
    archive_days: int | None = Field(default=90, ge=1)
    """Move to Archive after this many days. Default 90; null: never."""
    cold_archive_days: int | None = Field(default=None, ge=1)
    """Move to ColdArchive after this many days. Default null (never)."""
    abort_multipart_days: int = Field(default=7, ge=1)
    """Abort multipart uploads left incomplete this many days. Default 7."""
    noncurrent_version_days: int = Field(default=30, ge=1)
    """In versioned buckets, delete an object's old versions this many days after they are
    overwritten or deleted (bounds what versioning costs). Default 30."""
    tiered_purposes: list[BucketPurpose] = Field(default=list(TIERED_PURPOSES))
    """Buckets whose objects move to IA/Archive/ColdArchive. Default checkpoints and
    outputs; datasets and models stay Standard (reading Archive needs a restore first)."""

    def tiers(self, purpose: str | None) -> dict[str, int]:
        """The transitions of the bucket of `purpose` (None: the access-log bucket)."""
        return self.transitions if purpose is None or purpose in self.tiered_purposes else {}

    @property
    def transitions(self) -> dict[str, int]:
        """Storage class -> days, warm to cold, tiers that are on."""
        days = (self.ia_days, self.archive_days, self.cold_archive_days)
        return {tier: day for tier, day in zip(ARCHIVE_CLASSES, days, strict=True)
                if day is not None}

    @model_validator(mode="after")
    def _check_order(self) -> LifecycleConfig:
        fields = dict(zip(ARCHIVE_CLASSES, ("ia_days", "archive_days", "cold_archive_days"),
                          strict=True))
        tiers = list(self.transitions.items())
        problems = [f"{fields[colder]}: {later} must be more than {fields[warmer]} ({earlier});"
                    " tiers go IA -> Archive -> ColdArchive"
                    for (warmer, earlier), (colder, later) in pairwise(tiers)
                    if later <= earlier]
        if problems:
            raise ValueError("\n".join(problems))
        return self


class BucketsConfig(StrictModel):
    """Private, encrypted OSS buckets, one per purpose."""

    purposes: list[BucketPurpose] | None = None
    """Which buckets, each listed once. Default: the layout's `default_bucket_purposes`
    (training datasets, checkpoints, models, outputs; inference models; rendering datasets,
    outputs). Checkpoints and models are always versioned. An ECS fleet needs at least one:
    its nodes fetch their node tools from it (`node-tools-without-bucket`)."""
    bucket_prefix: str | None = Field(default=None, pattern=BUCKET_PREFIX_PATTERN)
    """Start of every bucket name (`<prefix>-<purpose>`). Bucket names are global across
    all accounts, so set one that is yours (e.g. an org name). Default
    `<cluster name>-<environment>`."""
    lifecycle: LifecycleConfig = LifecycleConfig()
    """Storage tiers and multipart cleanup. Default IA at 30 days, Archive at 90."""
    logging: bool | None = None
    """Write access logs to a `<prefix>-logs` bucket (versioned in prod). Default: on in
    prod, off elsewhere."""
    expected_gib: dict[BucketPurpose, dict[StorageClass, int]] = {}
    """Expected GiB per purpose and storage class, for the cost estimate. Default none."""

    @model_validator(mode="after")
    def _check_buckets(self) -> BucketsConfig:
        problems: list[str] = []
        if self.purposes is not None and len(set(self.purposes)) != len(self.purposes):
            problems.append("purposes: each purpose may be listed once")
        for purpose, sizes in self.expected_gib.items():
            if self.purposes is not None and purpose not in self.purposes:
                problems.append(f"expected_gib.{purpose}: {purpose} is not in purposes")
            problems += [f"expected_gib.{purpose}.{tier}: {gib} is negative"
                         for tier, gib in sizes.items() if gib < 0]
        if problems:
            raise ValueError("\n".join(problems))
        return self


BackupBucket = Literal["datasets", "models"]
"""Buckets Cloud Backup may copy (the ones a stack cannot regenerate from elsewhere)."""
BACKUP_RETENTION_DAYS = (1, 65535)
"""hbr.Policy rule retention in days (the API's upper bound is UNCONFIRMED; 65535 is what the
HBR console offers)."""


class BackupConfig(StrictModel):
    """Cloud Backup (HBR) of the stack's data: one vault, one daily policy, bound to the
    shared file system (general-purpose or Extreme NAS) and to the listed buckets."""

    enabled: bool | None = None
    """Back up. Default: the environment's profile (on in prod)."""
    retention_days: int = Field(default=30, ge=BACKUP_RETENTION_DAYS[0],
                                le=BACKUP_RETENTION_DAYS[1])
    """Days each backup is kept. Default 30."""
    hour_utc: int = Field(default=18, ge=0, le=23)
    """Hour (UTC) of the daily backup. Default 18 (02:00 in China Standard Time)."""
    buckets: list[BackupBucket] = []
    """Buckets backed up too: datasets and/or models (when the stack has them). Default
    none: the shared file system only."""
    vault_key: VaultKey | None = None
    """The key the vault encrypts backups with: `stack` (the stack's KMS key, which needs
    `security.kms_encryption`) or `hbr` (Cloud Backup's own key, what a vault made by an
    unreleased main before 0.2.0's vault key has). Fixed at creation: changing it replaces
    the vault, and every backup in it goes. Default: `stack` where the stack has a KMS key
    (prod), else `hbr`."""


class StorageConfig(StrictModel):
    """Node disks, snapshots, the shared file system and the buckets."""

    disks: list[DataDiskConfig] = Field(default=[DataDiskConfig()], max_length=16)
    """Data disks on every node (ESSD AutoPL). Default one 500 GiB scratch disk; at most
    16."""
    snapshots: SnapshotPolicyConfig = SnapshotPolicyConfig()
    """Auto-snapshot policy for disks with `keep` (prod only). Default daily at 02:00,
    kept 7 days."""
    inline_disks: bool = False
    """Declare the fixed nodes' `disks` inline on each instance (ecs.Instance data_disks), the
    way gpu-infra created them before separate disks. Only for stacks whose nodes were
    created so: the provider replaces a running instance whose inline disks are removed
    (ForceNew), so keep it true there until the nodes are rebuilt anyway. With true, disk
    edits (size, IOPS, keep) reach new nodes only (ignoreChanges on dataDisks) and nodes with
    kept disks are protected in prod. Default false: every fixed node gets each disk as a
    separate ecs.EcsDisk plus ecs.EcsDiskAttachment, whose size (grow only), IOPS, bursting
    and keep change in place without touching the node. Scaling-group fleets always declare
    their disks in the scaling configuration (ESS has no separate attachment)."""
    shared_fs: SharedFileSystemConfig = SharedFileSystemConfig()
    """Shared file system. Default off."""
    buckets: BucketsConfig = BucketsConfig()
    """OSS buckets. Default: the layout's purposes, tiered, private, encrypted."""
    backup: BackupConfig = BackupConfig()
    """Cloud Backup of the shared file system (and chosen buckets). Default: on in prod,
    daily, kept 30 days."""

    @model_validator(mode="after")
    def _check_disks(self) -> StorageConfig:
        names = [disk.name for disk in self.disks]
        if len(set(names)) != len(names):
            raise ValueError("disks: each disk name may be used once")
        return self
