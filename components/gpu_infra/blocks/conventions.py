"""Cross-cutting conventions applied in one place: tags, child names, data protection,
the replacement order of fixed names.

Pulumi `transforms` do not run under the mock engine, so tags are applied here in code:
every block takes a `Conventions` and stamps its children with `tags_for(...)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi

from gpu_infra.schema.stack import FLEET_TAG_KEY, NAME_TAG_KEY, REQUIRED_TAG_KEYS
from gpu_infra_facts.naming import child_name, fit_name, name_problems

__all__ = ["FLEET_TAG_KEY", "REQUIRED_TAG_KEYS", "Conventions", "child_name", "fixed_name",
           "stack_tags"]



@dataclass(frozen=True)
class Conventions:
    """What every building block needs to know about the stack, and nothing more."""

    tags: Mapping[str, str] = field(default_factory=dict)
    """Tags for every taggable child (stack tags plus the user's)."""
    protect_data: bool = False
    """Protect data resources (buckets, file systems, data disks) from deletion."""
    deletion_protection: bool = False
    """Turn on the cloud-side deletion protection of instances and groups."""
    region: str = ""
    """The stack's region (for ARNs of what the stack creates)."""
    global_suffix: str | None = None
    """What ends every name the cloud keeps unique beyond the stack (naming.global_suffix
    resolved); None: no suffix."""

    def tags_for(self, name: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The stack's tags plus `Name` and any `extra` ones, for one child resource."""
        return {**self.tags, NAME_TAG_KEY: name, **(extra or {})}

    def unique_name(self, type_token: str, name: str) -> str:
        """The cloud name of a `type_token` resource the cloud keeps unique
        (gpu_infra_facts.naming): `name` with the stack's global suffix, shortened with a
        digest when too long (fit_name). ValueError when it breaks the provider's character
        rules (names built from a valid cluster name never do)."""
        full = fit_name(type_token, name, self.global_suffix)
        problems = name_problems(type_token, full)
        if problems:
            raise ValueError("; ".join(problems))
        return full

    def data_options(self, parent: pulumi.Resource, **options: Any) -> pulumi.ResourceOptions:
        """Options for a data resource: `protect=True` when data is protected, so
        `pulumi destroy` and replacements stop until a human unprotects it."""
        return pulumi.ResourceOptions(parent=parent, protect=self.protect_data, **options)


def fixed_name(parent: pulumi.Resource, **options: Any) -> pulumi.ResourceOptions:
    """Options for a resource whose name the cloud keeps unique (a bucket, a RAM role, an
    alarm contact: `unique_name` in gpu_infra_facts/update_semantics.json): a replacement deletes it
    before it creates the new one, since Pulumi's default (create, then delete) would collide
    on the name and stop `pulumi up` halfway."""
    return pulumi.ResourceOptions(parent=parent, delete_before_replace=True, **options)


def stack_tags(*, project: str, stack_name: str, environment: str, layout: str,
               user_tags: Mapping[str, str]) -> dict[str, str]:
    """The stack-wide tags: the required ones first, then the user's (which may not
    override the required ones)."""
    required = {"Project": project, "Stack": stack_name, "Environment": environment,
                "Layout": layout, "ManagedBy": "pulumi"}
    return {**user_tags, **required}
