"""Cloning a stack file into a new stack: `gpu-infra clone SOURCE NEW`."""

from gpu_infra_tools.clone.cidr import DEFAULT_POOL, PoolExhausted, allocate, translate
from gpu_infra_tools.clone.core import (
    Clone,
    clone_stack,
    derive_cluster_name,
    drop_secrets,
    stacks_lock,
    write_stack_file,
)
from gpu_infra_tools.clone.paths import (
    ConfigPath,
    Override,
    PathError,
    config_path,
    parse_override,
    parse_path,
)

__all__ = [
    "DEFAULT_POOL", "Clone", "ConfigPath", "Override", "PathError", "PoolExhausted",
    "allocate", "clone_stack", "config_path", "derive_cluster_name", "drop_secrets",
    "parse_override",
    "parse_path", "stacks_lock", "translate", "write_stack_file",
]
