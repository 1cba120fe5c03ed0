"""Lookups a rule context needs that live outside the rules: the GPU catalog."""

from __future__ import annotations

from collections.abc import Callable


def catalog_lookup() -> Callable[[str], frozenset[str] | None] | None:
    """Instance type -> the layouts it suits (None if not in the catalog), from
    components.catalog; None when that package is not importable (the pack was copied away
    from the repository), which turns the catalog rule off."""
    try:
        from components import catalog
    except ImportError:
        return None

    def uses(instance_type: str) -> frozenset[str] | None:
        entry = catalog.get(instance_type)
        return None if entry is None else frozenset(entry.uses)

    return uses
