"""Values pulumi-alicloud accepts for the compute blocks, in one place (facts file §2, §4,
§8: upstream terraform-provider-alicloud v1.289.0 validation and the SDK docstrings)."""

INSTANCE_CHARGE_TYPES = ("PrePaid", "PostPaid")
SPOT_STRATEGIES = ("NoSpot", "SpotAsPriceGo", "SpotWithPriceLimit")
PREPAID_PERIOD_UNITS = ("Week", "Month")
INSTANCE_SYSTEM_DISK_CATEGORIES = (
    "all", "cloud", "ephemeral_ssd", "cloud_essd", "cloud_efficiency", "cloud_ssd",
    "local_disk", "cloud_auto", "cloud_essd_entry")
PERFORMANCE_LEVELS = ("PL0", "PL1", "PL2", "PL3")
TRAFFIC_MODES = ("Standard", "HighPerformance")
DEPLOYMENT_SET_STRATEGIES = ("Availability", "AvailabilityGroup", "LowLatency")
REDEPLOY_FAILURE_ACTIONS = ("CancelMembershipAndStart", "KeepStopped")

MULTI_AZ_POLICIES = ("PRIORITY", "BALANCE", "COST_OPTIMIZED", "COMPOSABLE")
REMOVAL_POLICIES = ("OldestInstance", "NewestInstance", "OldestScalingConfiguration")
ESS_SYSTEM_DISK_CATEGORIES = (
    "cloud", "ephemeral_ssd", "cloud_ssd", "cloud_essd", "cloud_efficiency", "cloud_essd_xc1")
"""ESS rejects cloud_auto (ESSD AutoPL): scaling configurations use cloud_essd."""
ESS_DATA_DISK_CATEGORIES = (
    "all", "cloud", "ephemeral_ssd", "cloud_essd", "cloud_efficiency", "cloud_ssd",
    "local_disk")
ESS_SYSTEM_DISK_SIZE = (20, 500)
ESS_MAX_INSTANCE_TYPES = 10
SCALING_RULE_TYPES = (
    "SimpleScalingRule", "TargetTrackingScalingRule", "StepScalingRule",
    "PredictiveScalingRule")
ADJUSTMENT_TYPES = ("QuantityChangeInCapacity", "PercentChangeInCapacity", "TotalCapacity")
ALARM_METRIC_TYPES = ("system", "custom")
ALARM_PERIODS = (60, 120, 300, 900)
ALARM_STATISTICS = ("Average", "Minimum", "Maximum")
ALARM_OPERATORS = (">", ">=", "<", "<=")
LIFECYCLE_TRANSITIONS = ("SCALE_IN", "SCALE_OUT")
LIFECYCLE_RESULTS = ("CONTINUE", "ABANDON", "ROLLBACK")
HEARTBEAT_TIMEOUT = (30, 21600)
RECURRENCE_TYPES = ("Daily", "Weekly", "Monthly", "Cron")
MAX_LAUNCH_DAYS_AHEAD = 90
"""ESS: a scheduled task's launch time may be at most 90 days after the task is created or
modified, otherwise it does not take effect (Auto Scaling "Create a scheduled task",
alibabacloud.com/help/en/auto-scaling/latest/scheduled-tasks-create-a-scheduled-task,
retrieved 2026-12-01)."""
MAX_EVALUATION_COUNT = 100
"""Most consecutive periods an ESS alarm waits before it fires. Our bound, not Alibaba's:
the provider only asks for at least 0 (resource_alicloud_ess_alarm.go, IntAtLeast(0));
100 periods of 900 s is 25 hours, longer is a mistake."""

RI_OFFERING_TYPES = ("No Upfront", "Partial Upfront", "All Upfront")
RI_SCOPES = ("Region", "Zone")
RI_PERIOD_UNITS = ("Year", "Month")
EA_PERIOD_UNITS = ("Month", "Year")
CAPACITY_RESERVATION_END_TIME_TYPES = ("Limited", "Unlimited")

ESS_HEALTH_CHECK_TYPES = ("ECS", "NONE", "LOAD_BALANCER")
"""ess.ScalingGroup health_check_types (TF docs, v1.228.0+): an instance failing one is
replaced."""
ESS_SCALING_POLICIES = ("recycle", "release", "forceRecycle", "forceRelease")
"""ess.ScalingGroup scaling_policy (reclaim mode): recycle stops scaled-in instances
(economical mode) and starts them again on scale-out; release deletes them."""
MAX_INSTANCE_LIFETIME_MIN_SECONDS = 86400
"""ess.ScalingGroup max_instance_lifetime: at least one day (TF IntAtLeast(86400))."""
REFRESH_MIN_HEALTHY_RANGE = (0, 100)
REFRESH_MAX_HEALTHY_RANGE = (100, 200)
"""ess.InstanceRefresh min/max_healthy_percentage (TF IntBetween; every input ForceNew).
StartInstanceRefresh (API doc, 2025-11): only for ECS groups with multi-AZ policy PRIORITY,
not in reclaim modes recycle/forceRecycle; MinHealthyPercentage defaults to 80; one task at
a time per group; standby and protected instances are skipped."""
REFRESH_MULTI_AZ_POLICY = "PRIORITY"
NAS_USER_ACCESS_TYPES = ("no_squash", "root_squash", "all_squash")
NAS_RW_ACCESS_TYPES = ("RDWR", "RDONLY")
"""nas.AccessRule user_access_type and rw_access_type (TF StringInSlice)."""
