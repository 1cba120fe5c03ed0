"""The review as SARIF 2.1.0 (`gpu-infra plan --sarif FILE`), for GitHub code scanning and
other SARIF viewers: one run of the tool gpu-infra whose results are the validator findings,
the policy verdicts and (with `--against`) the change report's guard rails, each located in
the stack file (the line of the field a finding names, else line 1).

Levels: ERROR and mandatory verdicts are `error`; WARNING and advisory verdicts `warning`;
INFO `note`. Rule ids: `validator/<name>`, `policy/<rule>`, `change/<guard rail>`. The
run's automation id `gpu-infra/<stack>/` is its code-scanning category, so the logs of
several stacks upload together.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gpu_infra.knowhow import Level
from gpu_infra_policies.rules import RULES_BY_NAME
from gpu_infra_tools.review import Review
from gpu_infra_tools.review.changes import ChangeReport

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
VERSION = "2.1.0"
LEVELS = {Level.ERROR: "error", Level.WARNING: "warning", Level.INFO: "note",
          "mandatory": "error", "advisory": "warning"}
INFORMATION_URI = "https://github.com/gpu-infra/gpu-infra"


def field_line(text: str, path: str) -> int:
    """The 1-based line of `path` (`fleet.nodes`, `storage.disks[0].size_gib`) in a stack
    file's text, found key by key at growing indentation; 1 when a key is not there."""
    lines = text.splitlines()
    start, indent, found = 0, -1, 0
    for key in (part.split("[")[0] for part in path.split(".") if part):
        for number in range(start, len(lines)):
            stripped = lines[number].lstrip(" -")
            depth = len(lines[number]) - len(stripped)
            if depth > indent and stripped.startswith(f"{key}:"):
                start, indent, found = number + 1, depth, number + 1
                break
        else:
            break
    return found or 1


def _result(rule_id: str, level: str, message: str, uri: str, line: int,
            logical: str | None) -> dict[str, Any]:
    location: dict[str, Any] = {"physicalLocation": {"artifactLocation": {"uri": uri},
                                                     "region": {"startLine": line}}}
    if logical:
        location["logicalLocations"] = [{"fullyQualifiedName": logical}]
    return {"ruleId": rule_id, "level": level, "message": {"text": message},
            "locations": [location]}


def _rules(ids: Iterable[str]) -> list[dict[str, Any]]:
    rules = []
    for rule_id in sorted(set(ids)):
        kind, _, name = rule_id.partition("/")
        rule: dict[str, Any] = {"id": rule_id, "name": name}
        policy = RULES_BY_NAME.get(name) if kind == "policy" else None
        if policy is not None:
            rule["shortDescription"] = {"text": policy.description}
            rule["help"] = {"text": policy.remediation}
            rule["properties"] = {"category": policy.category, "severity": policy.severity}
        rules.append(rule)
    return rules


def sarif_document(review: Review, changes: ChangeReport | None = None,
                   base_dir: Path | None = None) -> dict[str, Any]:
    """The SARIF log of one review; artifact URIs relative to `base_dir` (default the
    current directory) where the stack file lies below it."""
    plan = review.plan
    source = Path(plan.source)
    try:
        uri = source.resolve().relative_to((base_dir or Path.cwd()).resolve()).as_posix()
    except ValueError:
        uri = source.resolve().as_uri()
    text = source.read_text(encoding="utf-8") if source.is_file() else ""
    results = [_result(f"validator/{f.validator}", LEVELS[f.level], f.message, uri,
                       field_line(text, f.path), f.path) for f in plan.findings]
    results += [_result(f"policy/{v.rule}", LEVELS[v.level], v.message, uri,
                        1, v.resource_name) for v in review.verdicts]
    if changes is not None:
        results += [_result(f"change/{f.rule}", "note" if f.acknowledged else LEVELS[f.level],
                            f.message, uri, 1, ", ".join(f.resources[:10]) or None)
                    for f in changes.findings]
    driver = {"name": "gpu-infra", "informationUri": INFORMATION_URI,
              "rules": _rules(result["ruleId"] for result in results)}
    return {"$schema": SCHEMA_URI, "version": VERSION,
            "runs": [{"tool": {"driver": driver}, "results": results,
                      "automationDetails": {"id": f"gpu-infra/{plan.stack_name}/"},
                      "properties": {"stack": plan.stack_name}}]}
