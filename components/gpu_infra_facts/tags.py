"""Alibaba Cloud tag limits, the same for ECS, VPC, ESS, OSS and the other services the
blocks tag.

Sources (retrieved 2026-12-01):
- VPC TagResources (alibabacloud.com/help/en/vpc/api-tagresources, updated 2023-08-16) and
  SLB TagResources (alibabacloud.com/help/en/slb/api-tags-tagresources): "You can add up to
  20 tags to each instance"; ECS TagResources (alibabacloud.com/help/en/ecs/developer-
  reference/api-ecs-2014-05-26-tagresources): Tag.N, N from 1 to 20.
- ECS TagResources: a tag key is 1 to 128 characters, cannot start with `aliyun` or `acs:`
  and cannot contain `http://` or `https://`; a tag value is up to 128 characters (may be
  empty) and cannot contain `http://` or `https://`.
"""

from __future__ import annotations

MAX_TAGS_PER_RESOURCE = 20
MAX_TAG_KEY_CHARS = 128
MAX_TAG_VALUE_CHARS = 128
RESERVED_KEY_PREFIXES = ("aliyun", "acs:")
FORBIDDEN_TAG_TEXT = ("http://", "https://")


def tag_problems(key: str, value: str) -> list[str]:
    """What is wrong with one tag (empty if nothing): `key: message` lines."""
    problems: list[str] = []
    if not 1 <= len(key) <= MAX_TAG_KEY_CHARS:
        problems.append(f"tag keys have 1 to {MAX_TAG_KEY_CHARS} characters, this one "
                        f"{len(key)}")
    if key.lower().startswith(RESERVED_KEY_PREFIXES):
        problems.append("tag keys starting with aliyun or acs: are reserved by Alibaba Cloud")
    if any(text in key for text in FORBIDDEN_TAG_TEXT):
        problems.append("tag keys cannot contain http:// or https://")
    if len(value) > MAX_TAG_VALUE_CHARS:
        problems.append(f"tag values have at most {MAX_TAG_VALUE_CHARS} characters, this one "
                        f"{len(value)}")
    if any(text in value for text in FORBIDDEN_TAG_TEXT):
        problems.append("tag values cannot contain http:// or https://")
    return problems
