"""Values and bounds pulumi-alicloud accepts for the inputs a stack file chooses, in one place.

Each `Literal` type is what a schema field accepts and what the block passes on unchanged;
the tuple beside it (`typing.get_args`) serves messages and checks. Where we allow less than
the provider (a subset), the docstring says why. tests/test_provider_values.py checks every
name here against the provider's documentation: the pulumi-alicloud 4.x SDK docstrings and
the upstream terraform-provider-alicloud validation lists (tests/data/provider_values.json).
"""

from __future__ import annotations

from typing import Final, Literal, get_args

# vpc.Network, vpc.Switch, ecs.EipAddress
VPC_PREFIX_BITS: Final = (8, 24)
"""Prefix lengths of a VPC CIDR block we accept: /8 to /24 (the provider takes /8 to /28,
vpc.Network docstring)."""
VSWITCH_PREFIX_BITS: Final = (16, 29)
"""Prefix lengths of a vSwitch CIDR block."""
EIP_MAX_TRAFFIC_MBPS: Final = 200
"""Highest bandwidth of a pay-as-you-go, pay-by-traffic EIP."""

# kms.Key
KMS_ROTATION_DAYS: Final = (7, 365)
"""Automatic rotation periods of a key in a software KMS instance, in days."""
KMS_DEFAULT_KEY_ROTATION_DAYS: Final = 365
"""The only rotation period of a default key (one outside a KMS instance)."""
KMS_PENDING_WINDOW_DAYS: Final = (7, 366)
"""Days a deleted key waits before it is gone (`pending_window_in_days`)."""

# nas.FileSystem
NAS_CAPACITY_GIB: Final = {"extreme": (100, 262144), "cpfs": (3600, 1024000)}
"""`capacity` in GiB by file system type: Extreme NAS 100 GiB to 256 TiB, CPFS 3,600 GiB to
1,000 TiB (NAS CreateFileSystem Capacity and the purchase pages the SDK docstring points to;
UNCONFIRMED: the SDK states no range)."""

# ecs.AutoSnapshotPolicy
SNAPSHOT_HOURS: Final = (0, 23)
"""`time_points`: hours of the day, UTC+8."""
SNAPSHOT_WEEKDAYS: Final = (1, 7)
"""`repeat_weekdays`: 1 is Monday."""
KEEP_SNAPSHOTS_UNTIL_DELETED: Final = -1
"""`retention_days` that keeps snapshots until they are deleted."""
SNAPSHOT_RETENTION_DAYS: Final = (1, 65536)
"""Other `retention_days` (ECS API CreateAutoSnapshotPolicy, RetentionDays; UNCONFIRMED in the
provider, whose docstring names only -1)."""

# ecs.Instance (training nodes) and ess.ScalingConfiguration (scaling fleets)
SpotStrategy = Literal["SpotAsPriceGo", "SpotWithPriceLimit"]
"""`spot_strategy` of a spot node: follow the market price, or cap it. NoSpot (the third
provider value) is what on-demand capacity passes."""
SPOT_PRICE_DECIMALS: Final = 3
"""`spot_price_limit`: "Three decimals is allowed at most" (ecs.Instance docstring), so the
smallest price is 0.001 CNY/hour."""
SPOT_STRATEGIES: Final = get_args(SpotStrategy)
"""The spot strategies as a tuple (the policy rules and the cost estimate look for them)."""
PerformanceLevel = Literal["PL0", "PL1", "PL2", "PL3"]
"""`system_disk_performance_level` of an ESSD system disk."""
PrepaidPeriodUnit = Literal["Week", "Month"]
"""ecs.Instance `period_unit` of PrePaid nodes."""
PREPAID_PERIODS: Final = (1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 24, 36, 48, 60)
"""ecs.Instance `period` values with PrePaid."""
DeploymentSetStrategy = Literal["LowLatency", "Availability"]
"""ecs.EcsDeploymentSet `strategy` of training nodes (AvailabilityGroup, the third provider
value, spreads groups of instances, which a training cluster has no use for)."""
ESS_SYSTEM_DISK_GIB: Final = (20, 500)
"""ess.ScalingConfiguration `system_disk_size` bounds in GiB; training nodes keep the same
bound, so one schema field serves both fleets."""

# ess.ScalingGroup
MultiAzPolicy = Literal["COST_OPTIMIZED", "BALANCE", "PRIORITY"]
"""`multi_az_policy` (COMPOSABLE, the fourth provider value, needs weights we do not
offer)."""
REFRESH_MULTI_AZ_POLICY: Final[MultiAzPolicy] = "PRIORITY"
"""StartInstanceRefresh (API doc, 2025-11): only for ECS groups with multi-AZ policy PRIORITY,
not in reclaim modes recycle/forceRecycle; MinHealthyPercentage defaults to 80; one task at
a time per group; standby and protected instances are skipped."""
HealthCheckType = Literal["ECS", "LOAD_BALANCER"]
"""`health_check_types`: an instance failing one is replaced (NONE turns healing off)."""
ScaleInMode = Literal["release", "recycle"]
"""`scaling_policy` (reclaim mode): release deletes scaled-in instances, recycle stops them
(economical mode) and starts them again on scale-out (the force variants skip the graceful
stop)."""
ESS_DATA_DISK_GIB: Final = (20, 32768)
"""ess.ScalingConfiguration `data_disks[].size` of a cloud_essd disk in GiB (SDK docstring:
[20,32768] for cloud_efficiency, cloud_ssd and cloud_essd)."""
ESS_MAX_INSTANCE_TYPES: Final = 10
"""Instance types one ess.ScalingConfiguration may list (UNCONFIRMED in the provider, which
declares no bound: Auto Scaling quota "instance types per scaling configuration")."""
INSTANCE_TYPE_MAX_CHARS: Final = 64
"""Longest instance type name a stack may declare (`instance_types`). UNCONFIRMED: the ECS API
reference documents no maximum for InstanceType; the catalog's longest names have 25
characters (ecs.vgn7i-vws-m12.3xlarge). The bound keeps the nodes' user data, which lists each
type with its GPU count, within its room."""
OSS_OBJECT_KEY_MAX_BYTES: Final = 1023
"""An OSS object key is 1-1023 bytes of UTF-8 (OSS "Object naming conventions")."""
MIN_INSTANCE_LIFETIME_DAYS: Final = 1
"""`max_instance_lifetime` is at least one day (86400 s)."""

# ess.ScalingRule, ess.Alarm, ess.LifecycleHook, ess.ScheduledTask, ess.InstanceRefresh
TargetMetric = Literal["CpuUtilization", "IntranetRx", "IntranetTx"]
"""ess.ScalingRule `metric_name` of target tracking on ECS groups (ESS system metrics;
UNCONFIRMED in the provider, which takes any string)."""
EssAlarmPeriod = Literal[60, 120, 300, 900]
"""ess.Alarm `period` in seconds."""
GPU_UTILIZATION_METRIC: Final = "GpuUtilizationAgent"
"""ess.Alarm `metric_name` (metric_type system) of the group's average GPU utilisation in
percent, from the CloudMonitor agent on its instances. Source: ESS CreateAlarm, MetricName
for MetricType system (Alibaba Cloud SDK docstrings of ess 2014-08-28: CpuUtilizationAgent,
GpuUtilizationAgent, GpuMemoryUtilizationAgent, ...); the provider takes any string. Target
tracking (CreateScalingRule) does not list it, so GPU scaling uses alarms and step rules."""
MAX_EVALUATION_COUNT: Final = 100
"""Most consecutive periods an ESS alarm waits before it fires. Our bound, not Alibaba's:
the provider only asks for at least 0; 100 periods of 900 s is 25 hours, longer is a
mistake."""
HEARTBEAT_TIMEOUT_SECONDS: Final = (30, 21600)
"""ess.LifecycleHook `heartbeat_timeout` bounds (drain and readiness hooks)."""
RecurrenceType = Literal["Daily", "Weekly", "Monthly", "Cron"]
"""ess.ScheduledTask `recurrence_type`."""
MAX_LAUNCH_DAYS_AHEAD: Final = 90
"""ESS: a scheduled task's launch time may be at most 90 days after the task is created or
modified, otherwise it does not take effect (Auto Scaling "Create a scheduled task",
alibabacloud.com/help/en/auto-scaling/latest/scheduled-tasks-create-a-scheduled-task,
retrieved 2026-12-01)."""
REFRESH_MIN_HEALTHY_PERCENT: Final = (0, 100)
REFRESH_MAX_HEALTHY_PERCENT: Final = (100, 200)
"""ess.InstanceRefresh min/max_healthy_percentage bounds (every input ForceNew)."""

# ecs.ReservedInstance, ecs.ElasticityAssurance
ReservedOffering = Literal["No Upfront", "Partial Upfront", "All Upfront"]
"""ecs.ReservedInstance `offering_type` (payment option)."""
ReservedTermYears = Literal[1, 3, 5]
"""ecs.ReservedInstance `period` with `period_unit` Year."""
ReservedScope = Literal["Region", "Zone"]
"""ecs.ReservedInstance `scope`."""
ASSURANCE_MONTHS: Final = (1, 2, 3, 4, 5, 6, 7, 8, 9)
ASSURANCE_YEARS: Final = (1, 2, 3, 4, 5)
"""ecs.ElasticityAssurance `period` with `period_unit` Month, and with Year."""
ASSURANCE_TERMS_MONTHS: Final = (*ASSURANCE_MONTHS, *(12 * years for years in ASSURANCE_YEARS))
"""Elasticity assurance terms a stack may ask for, in months."""


def assurance_period(months: int) -> tuple[int, Literal["Month", "Year"]]:
    """`period` and `period_unit` of an elasticity assurance of `months` (one of
    ASSURANCE_TERMS_MONTHS): whole years from 12 months, months below."""
    return (months // 12, "Year") if months >= 12 else (months, "Month")


# nas.AccessRule
NasUserAccess = Literal["root_squash", "all_squash", "no_squash"]
"""`user_access_type`: how users on the nodes map on the file system."""
NasReadWrite = Literal["RDWR", "RDONLY"]
"""`rw_access_type`."""

# oss.Bucket
ArchiveClass = Literal["IA", "Archive", "ColdArchive"]
"""Storage classes a lifecycle transition moves objects to, from warm to cold
(DeepColdArchive, the coldest provider value, is not offered: hours to restore)."""
ARCHIVE_CLASSES: Final = get_args(ArchiveClass)
StorageClass = Literal["Standard", ArchiveClass]
"""Bucket storage classes, for the expected sizes of the cost estimate."""

# cms.Alarm (fleet alarms)
ComparisonOperator = Literal[">", ">=", "<", "<=", "!="]
"""Threshold operators of `cms.Alarm` escalations (provider list minus `==` and the relative
ones such as GreaterThanYesterday, which take no absolute threshold)."""
GROUP_OPERATORS: Final[dict[ComparisonOperator, str]] = {
    ">": "GreaterThanThreshold", ">=": "GreaterThanOrEqualToThreshold",
    "<": "LessThanThreshold", "<=": "LessThanOrEqualToThreshold",
    "!=": "NotEqualToThreshold",
}
"""The same operators in the vocabulary of alert templates and group rules
(`cms.MetricRuleTemplate` escalations), which differs from `cms.Alarm`'s."""
AlarmStatistic = Literal["Average", "Minimum", "Maximum"]
"""Escalation `statistics` of cms.Alarm, as CloudMonitor publishes them for the ECS and GPU
metrics used (UNCONFIRMED in the provider, which takes any string)."""
AlarmPeriod = Literal[60, 300, 900, 3600]
"""cms.Alarm `period` in seconds, multiples of 60 that CloudMonitor offers (UNCONFIRMED in
the provider, which takes any number)."""
SILENCE_SECONDS: Final = (300, 86400)
"""cms.Alarm `silence_time` bounds."""

# ecs.EcsImageComponent, ecs.EcsImagePipeline (the baked image)
IMAGE_COMPONENT_TYPE: Final = "Build"
"""`component_type` of the bake (Build or Test: build components go into build templates)."""
IMAGE_SYSTEM_TYPE: Final = "Linux"
"""`system_type` of the bake (Linux or Windows; RunShellCommand runs on Linux only)."""
BASE_IMAGE_TYPE: Final = "IMAGE"
"""`base_image_type` of the template: IMAGE, an image id (public ids work, as the provider's
example shows), rather than IMAGE_FAMILY."""
IMAGE_BUILD_SYSTEM_DISK_GIB: Final = (20, 500)
"""`system_disk_size` of the template's intermediate instance, in GiB."""
IMAGE_BUILD_BANDWIDTH_MBPS: Final = 0
"""`internet_max_bandwidth_out` of the intermediate instance (0-100): none, it reaches the
internet through the stack's NAT gateway."""

# nas.FileSystem
NAS_KMS_FILE_SYSTEM_TYPES: Final = ("extreme",)
"""`file_system_type` values that take `encrypt_type` 2 (a KMS key): Extreme only
(pulumi-alicloud's encrypt_type docstring); general-purpose (standard) NAS takes 1 (the
NAS-managed key), CPFS neither."""

# cs.ManagedKubernetes, cs.NodePool, cs.KubernetesAddon (ACK) and the ACR registry
AckClusterSpec = Literal["ack.pro.small", "ack.pro.xlarge", "ack.pro.2xlarge"]
"""`cluster_spec` of an ACK Pro cluster (ack.standard, Basic, has no SLA and no managed
add-ons on the control plane; ack.pro.4xlarge needs a whitelist)."""
AckProxyMode = Literal["ipvs", "iptables"]
"""`proxy_mode` of kube-proxy (ForceNew)."""
AckWeekday = Literal["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday",
                     "Sunday"]
"""`maintenance_window.weekly_period` days (the SDK docstring says "from Monday to Sunday",
naming only Monday, Friday and Thursday)."""
MAINTENANCE_HOURS: Final = (1, 24)
"""`maintenance_window.duration` in hours ("1h" to "24h")."""
AckImageType = Literal["AliyunLinux3ContainerOptimized", "AliyunLinux3", "Ubuntu"]
"""cs.NodePool `image_type` we offer: ACK installs the GPU driver on these (a subset)."""
ACK_POOL_SCALING_TYPE: Final = "gpu"
"""cs.NodePool `scaling_config.type` of a GPU pool (cpu, gpu, gpushare, spot)."""
ACK_DATA_DISK_GIB: Final = (40, 32767)
"""cs.NodePool `data_disks.size` bounds in GiB."""
ACK_PREPAID_MONTHS: Final = (1, 2, 3, 6, 12)
"""cs.NodePool `period` with PrePaid (period_unit Month)."""
NodePoolPrivatePoolMatch = Literal["Open", "Target", "None"]
"""cs.NodePool `private_pool_options.private_pool_options_match_criteria`."""
RegistryInstanceType = Literal["Basic", "Standard", "Advanced"]
"""cr.RegistryEnterpriseInstance `instance_type` (Economy, the fourth value, has no VPC
access control)."""
REGISTRY_PAYMENT_TYPE: Final = "Subscription"
"""The only `payment_type` of an ACR Enterprise instance."""
REGISTRY_PERIODS_MONTHS: Final = (1, 2, 3, 6, 12, 24, 36, 48, 60)
"""Subscription periods of an ACR Enterprise instance, months (UNCONFIRMED: the docstring
only says "an integer multiple of 12 for annual paid products"; these are ACR's console
choices)."""
RegistryVisibility = Literal["PRIVATE"]
"""`repo_type` / `default_visibility` of every repository and namespace: private only."""

# log.Store, log.StoreIndex (node logs)
LOG_RETENTION_DAYS: Final = (1, 3650)
"""log.Store `retention_period` in days; 3650 keeps the logs forever (SDK docstring: "Valid
values: [1-3650]")."""
LOG_ENCRYPT_TYPE: Final = "default"
"""log.Store `encrypt_conf.encrypt_type` of an encrypted store: AES with a key SLS manages
(SDK docstring: "`default`(AES), `m4`"; a key of the stack's would need `user_cmk_info` and
a RAM role SLS assumes, which is not built)."""
LogFieldType = Literal["text", "long", "double"]
"""log.StoreIndex `field_search.type`: a field indexed as text (words split at the index's
tokens), long or double (SDK docstring). The provider also takes `json`
(resource_alicloud_log_store_index.go line 93 at 81c43b672, StringInSlice text, long, double,
json), a nested index that needs `json_keys`, which is not offered (the SDK docstring names
only the three)."""
LOG_TEXT_FIELD: Final[LogFieldType] = "text"
"""The type of the fields every store indexes (blocks.logs INDEXED_FIELDS: host names and the
journal's transport, queried as words)."""

VaultKey = Literal["stack", "hbr"]
"""Whose key a Cloud Backup vault encrypts with: the stack's KMS key or HBR's own."""
VAULT_ENCRYPT_TYPES: dict[VaultKey, str] = {"stack": "KMS", "hbr": "HBR_PRIVATE"}
"""hbr.Vault `encrypt_type` per vault key (HBR_PRIVATE, HBR's key, is the API's default; KMS
takes `kms_key_id`, a key id or alias). Both are ForceNew: a vault's key is fixed at
creation. Source: resource_alicloud_hbr_vault.go lines 38-55 (81c43b672); Cloud Backup
CreateVault API reference (updated 2025-12-24): EncryptType, KmsKeyId."""
