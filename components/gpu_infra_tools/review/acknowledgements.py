"""Acknowledged dangerous changes: a committed file next to the stack files,
`stacks/acknowledged/<stack>.yaml`, naming which guard rails may fire for which resources,
and why. It is reviewed in the same pull request as the edit it allows, stays in the
history, and names exactly what may go (a command-line flag would allow everything, and
leave no trace). Remove the entries once the change is applied: an entry that matches
nothing is reported as unused.

```yaml
acknowledge:
  - rule: replaces-gpu-nodes          # a guard rail name
    resources: [llm-pretrain-gpu-node-*]   # resource names (shell-style patterns)
    reason: switch the fleet to spot capacity (ML-123)
```
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpu_infra.knowhow import Level
from gpu_infra.schema import ConfigError
from gpu_infra.schema.document import load_plain, read_text


class Acknowledgeable(Protocol):
    """A guard-rail finding (tools.review.changes.ChangeFinding)."""

    rule: str
    level: Level
    resources: list[str]
    message: str
    acknowledged: bool

ACKNOWLEDGED_DIR = "acknowledged"
"""Directory of acknowledgement files, inside the stacks directory."""


class Acknowledgement(BaseModel):
    """One allowed dangerous change."""

    model_config = ConfigDict(extra="forbid")
    rule: str = Field(description="guard rail name, e.g. replaces-gpu-nodes")
    resources: list[str] = Field(min_length=1, description="resource name patterns")
    reason: str = Field(min_length=3, description="why (shown in the report)")


class Acknowledgements(BaseModel):
    """The acknowledgement file of one stack."""

    model_config = ConfigDict(extra="forbid")
    acknowledge: list[Acknowledgement] = Field(default_factory=list)

    def apply(self, findings: Sequence[Acknowledgeable], rules: Sequence[str]) -> list[str]:
        """Mark each finding of `rules` whose every resource an entry names as acknowledged
        (ERROR/WARNING -> INFO); return the unused entries, one line each."""
        used: set[int] = set()
        for finding in findings:
            if finding.rule not in rules:
                continue
            hits = [self._covering(finding.rule, name) for name in finding.resources]
            if finding.resources and all(hits):
                matched = {i for hit in hits for i in hit}
                used |= matched
                reasons = "; ".join(sorted({self.acknowledge[i].reason for i in matched}))
                finding.acknowledged, finding.level = True, Level.INFO
                finding.message += f"; acknowledged: {reasons}"
        return [f"{entry.rule}: {', '.join(entry.resources)}"
                for i, entry in enumerate(self.acknowledge) if i not in used]


    def _covering(self, rule: str, name: str) -> list[int]:
        return [i for i, entry in enumerate(self.acknowledge) if entry.rule == rule
                and any(fnmatchcase(name, pattern) for pattern in entry.resources)]


def acknowledgements_path(stack_file: Path) -> Path:
    """`stacks/acknowledged/<stack>.yaml` for `stacks/Pulumi.<stack>.yaml`."""
    stack = stack_file.name.removeprefix("Pulumi.").removesuffix(".yaml")
    return stack_file.parent / ACKNOWLEDGED_DIR / f"{stack}.yaml"


def load_acknowledgements(path: Path, required: bool = False) -> Acknowledgements:
    """The file at `path`; empty when it does not exist and is not `required`. ConfigError
    naming each problem: not a regular file, unreadable, too large, not UTF-8, not YAML
    (read as stack files are, within their limits), not the schema above."""
    source = str(path)
    if not path.exists() and not required:
        return Acknowledgements()
    text = read_text(path, "acknowledgement file")
    try:
        return Acknowledgements.model_validate(load_plain(text, source) or {})
    except ValidationError as error:
        raise ConfigError(source, [
            f"{'.'.join(str(p) for p in e['loc']) or '(document)'}: {e['msg']}"
            for e in error.errors()]) from None
