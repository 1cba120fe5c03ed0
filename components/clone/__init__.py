"""Cloning a stack file into a new stack: `gpu-infra clone SOURCE NEW`."""

from .cidr import DEFAULT_POOL, PoolExhausted, allocate, translate
from .core import Clone, clone_stack, derive_cluster_name, drop_secrets, write_stack_file
from .paths import ConfigPath, Override, PathError, config_path, parse_override, parse_path

__all__ = [
    "DEFAULT_POOL", "Clone", "ConfigPath", "Override", "PathError", "PoolExhausted",
    "allocate", "clone_stack", "config_path", "derive_cluster_name", "drop_secrets",
    "parse_override",
    "parse_path", "translate", "write_stack_file",
]
