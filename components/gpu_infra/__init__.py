"""gpu-infra: Pulumi components for GPU infrastructure on Alibaba Cloud.

`gpu_infra.__version__`: the installed distribution's version (pyproject.toml's, read from
the package metadata when first asked for; `unknown` in a checkout that was never
installed).
"""

from __future__ import annotations

DISTRIBUTION = "gpu-infra"
"""The distribution (pip) name."""


def __getattr__(name: str) -> str:
    """`__version__`, looked up on first use (importing gpu_infra reads no metadata)."""
    if name != "__version__":
        raise AttributeError(f"module 'gpu_infra' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"


__all__ = ["DISTRIBUTION", "__version__"]
