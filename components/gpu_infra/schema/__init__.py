"""The stack schema: pydantic models of one stack's settings, and the loader that reads a
stack file into them. Every default and every cross-field rule lives in this package."""

from gpu_infra.schema.base import SECRET_PLACEHOLDER, StrictModel
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
from gpu_infra.schema.problems import ConfigError
from gpu_infra.schema.registry import CLUSTER_ADAPTER, LAYOUT_NAMES, ClusterConfig
from gpu_infra.schema.stack import (
    ClusterBase,
    ClusterCommon,
    FleetCluster,
    ImageConfig,
    InferenceConfig,
    RenderingConfig,
    TrainingConfig,
)

__all__ = [
    "CLUSTER_KEY", "PROJECT", "REGION_KEY", "SECRET_PLACEHOLDER", "CLUSTER_ADAPTER",
    "LAYOUT_NAMES", "ConfigError", "FleetCluster", "ImageConfig", "InferenceConfig",
    "RenderingConfig", "ClusterConfig", "ClusterBase", "ClusterCommon", "StackFile", "StrictModel",
    "TrainingConfig", "load_cluster_config", "parse_cluster_config", "read_stack_file",
    "resolve_stack_path",
]
