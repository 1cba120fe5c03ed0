"""The stack schema: pydantic models of one stack's settings, and the loader that reads a
stack file into them. Every default and every cross-field rule lives in this package."""

from gpu_infra.schema.base import SECRET_PLACEHOLDER, StrictModel
from gpu_infra.schema.compute import ReservedCapacityConfig, ScalingFleet, TrainingFleet
from gpu_infra.schema.image import ImageBuildConfig
from gpu_infra.schema.loadbalancer import LoadBalancerConfig
from gpu_infra.schema.loader import (
    CLUSTER_KEY,
    PROJECT,
    REGION_KEY,
    StackFile,
    load_cluster_config,
    parse_cluster_config,
    read_stack_file,
    resolve_stack_path,
)
from gpu_infra.schema.monitoring import FleetAlarmsConfig, MonitoringConfig
from gpu_infra.schema.network import NetworkConfig
from gpu_infra.schema.problems import ConfigError
from gpu_infra.schema.registry import CLUSTER_ADAPTER, LAYOUT_NAMES, ClusterConfig
from gpu_infra.schema.security import SecurityConfig
from gpu_infra.schema.stack import (
    ClusterBase,
    ClusterCommon,
    FleetCluster,
    ImageConfig,
    InferenceConfig,
    RenderingConfig,
    TrainingConfig,
)
from gpu_infra.schema.storage import (
    BucketsConfig,
    DataDiskConfig,
    LifecycleConfig,
    SharedFileSystemConfig,
    StorageConfig,
)

__all__ = [
    "CLUSTER_ADAPTER", "CLUSTER_KEY", "LAYOUT_NAMES", "PROJECT", "REGION_KEY",
    "SECRET_PLACEHOLDER", "BucketsConfig", "ClusterBase", "ClusterCommon", "ClusterConfig",
    "ConfigError", "DataDiskConfig", "FleetAlarmsConfig", "FleetCluster", "ImageBuildConfig",
    "ImageConfig", "InferenceConfig", "LifecycleConfig", "LoadBalancerConfig",
    "MonitoringConfig", "NetworkConfig", "RenderingConfig", "ReservedCapacityConfig",
    "ScalingFleet", "SecurityConfig", "SharedFileSystemConfig", "StackFile", "StorageConfig",
    "StrictModel", "TrainingConfig", "TrainingFleet", "load_cluster_config",
    "parse_cluster_config", "read_stack_file", "resolve_stack_path",
]
