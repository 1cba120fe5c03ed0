"""The stack schema: pydantic models of one stack's settings, and the loader that reads a
stack file into them. Every default and every cross-field rule lives in this package."""

from .base import SECRET_PLACEHOLDER, StrictModel
from .loader import (
    CLUSTER_KEY,
    PROJECT,
    REGION_KEY,
    ConfigError,
    StackFile,
    load_stack,
    parse_stack,
    read_stack_file,
    resolve_stack_path,
)
from .stack import STACK_ADAPTER, InferenceStack, RenderingStack, StackConfig, TrainingStack

__all__ = [
    "CLUSTER_KEY", "PROJECT", "REGION_KEY", "SECRET_PLACEHOLDER", "STACK_ADAPTER",
    "ConfigError", "InferenceStack", "RenderingStack", "StackConfig", "StackFile",
    "StrictModel", "TrainingStack", "load_stack", "parse_stack", "read_stack_file",
    "resolve_stack_path",
]
