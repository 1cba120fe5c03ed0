"""How names the cloud keeps unique beyond one stack are made (RAM roles and policies,
buckets, key pairs, NAS access groups, queues, CloudMonitor contacts and rules)."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from gpu_infra.schema.base import StrictModel
from gpu_infra_facts.naming import (
    AUTO_SUFFIX,
    AUTO_SUFFIX_LENGTH,
    LITERAL_SUFFIX_PATTERN,
    NO_SUFFIX,
)


class NamingConfig(StrictModel):
    """Names that must be unique across a region, an account or all of Alibaba Cloud."""

    global_suffix: str = Field(default=NO_SUFFIX, json_schema_extra={
        "pattern": f"^({NO_SUFFIX}|{AUTO_SUFFIX}|{LITERAL_SUFFIX_PATTERN[1:-1]})$"})
    """What ends every such name (`<name>-<suffix>`). `none` (default): no suffix, the
    names a stack has always had (`<cluster>-<environment>-<purpose>` buckets,
    `<cluster>-node-role`), so an existing stack keeps its buckets and role. `auto`: 8 hex
    digits hashed from the stack name, region and cluster name, so two stacks that differ in
    any of them never collide (what `gpu-infra clone` writes). Or a literal of 3-8 lowercase
    letters and digits, e.g. to keep an `auto` suffix through a stack rename. Changing it on
    a running stack renames, so REPLACES, its buckets (their data), role and the rest."""

    @field_validator("global_suffix")
    @classmethod
    def _keyword_or_literal(cls, value: str) -> str:
        if value not in (NO_SUFFIX, AUTO_SUFFIX) and not re.match(LITERAL_SUFFIX_PATTERN,
                                                                   value):
            raise ValueError(f"{value!r} is not a suffix; use none, auto, or 3-8 lowercase "
                             "letters and digits")
        return value

    @property
    def suffix_length(self) -> int:
        """Characters the suffix adds to a name, with its hyphen (0 for none)."""
        if self.global_suffix == NO_SUFFIX:
            return 0
        length = AUTO_SUFFIX_LENGTH if self.global_suffix == AUTO_SUFFIX else len(
            self.global_suffix)
        return length + 1
