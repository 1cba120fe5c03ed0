"""ECS Image Builder facts: limits of the image component, the image template (pipeline) and
the build (execution); the enum values and ranges the blocks pass are in gpu_infra_facts.allowed.
Sources: the upstream provider at the commit of update_semantics.json
(alicloud/resource_alicloud_ecs_image_component.go, _ecs_image_pipeline.go,
_ecs_image_pipeline_execution.go), the pulumi-alicloud 4.0.0
docstrings, and ECS "Commands supported by Image Builder" / CreateImageComponent (read
2026-12-01).
"""

from __future__ import annotations

import re

COMPONENT_CONTENT_MAX_BYTES = 16 * 1024
"""An image component's content (and a template's build content): at most 16 KB
(CreateImageComponent; the provider's build_content docs)."""
MAX_COMMANDS = 127
"""Commands (YAML tasks) per component or template."""
COMPONENT_NAME = re.compile(r"^[A-Z][A-Za-z0-9:._-]{1,127}$")
"""image_component_name: 2-128 characters starting with an uppercase letter (docstring)."""
IMAGE_NAME_PREFIX = re.compile(r"^[a-zA-Z][a-zA-Z0-9:._-]{1,63}$")
"""`image_name`, the prefix of the built images' names (provider ValidateFunc)."""
MAX_SHARE_ACCOUNTS = 20
MAX_COPY_REGIONS = 20
"""add_account and to_region_id: at most 20 each (provider MaxItems)."""
ACCOUNT_ID = re.compile(r"^\d{16}$")
"""An Alibaba Cloud account (UID): 16 digits."""
TEMPLATE_MARK = "{{"
"""YAML component content substitutes `{{ name }}` (parameters, task outputs): the baked
scripts must not contain it."""
