"""What the cloud refuses that the provider's diff accepts (update_preconditions.json), beside
the update semantics (update_semantics.json: what a change does when it succeeds).

The data file holds, with sources:

preconditions: per type token and input path, the API the provider's Update (or Delete) code
  calls for a change there (`file`:`line` in aliyun/terraform-provider-alicloud at the commit
  update_semantics cites; Kubernetes objects: kube-apiserver's source), what that API refuses
  (`refuses`) or, for a change it accepts, what it deletes on the way (`does`; `loses`: data
  or nodes), and the way to make the change instead (`instead`). `check` names the test of a
  change against it (gpu_infra_tools.review.preconditions). The path `(delete)` holds a
  precondition of deleting (and so replacing) the resource.
protection: every type gpu-infra can create or the policy pack's prod deletion-protection rule
  judges, classified: the inputs (and their protecting values) of its deletion protection,
  spelled as that type spells them, and the provider's Delete that does not lift it; or
  `none` with why a delete is not refused.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

PRECONDITIONS_FILE = Path(__file__).with_name("update_preconditions.json")
DELETE = "(delete)"
"""The path of a precondition of deleting the resource (a delete, or a replacement's)."""


@dataclass(frozen=True)
class Precondition:
    """What the API behind a change of one input refuses, and what to do instead."""

    type: str
    path: str
    check: str
    """The test of a change against it (gpu_infra_tools.review.preconditions.CHECKS)."""
    api: str
    file: str
    line: int
    instead: str
    refuses: str = ""
    """What the API refuses (the change fails)."""
    does: str = ""
    """Or, for a change it carries out: what it deletes on the way."""
    loses: str = ""
    """With `does`: `data` (part of a data resource's contents) or `nodes` (running nodes)."""
    repository: str = ""
    """Where `file` is, when not the provider (e.g. kubernetes/kubernetes@<commit>)."""

    @property
    def source(self) -> str:
        """`alicloud/resource_alicloud_vpc.go:507`, with its repository when not the provider."""
        where = f"{self.file}:{self.line}"
        return f"{self.repository} {where}" if self.repository else where


@dataclass(frozen=True)
class Protection:
    """How a type refuses deletion: its protecting inputs, or none."""

    type: str
    inputs: Mapping[str, tuple[Any, ...]]
    """Input path -> the values that protect (empty: the type has no deletion protection)."""
    source: str
    """Where the provider's schema declares it (or the file that has none)."""
    delete_api: str = ""
    delete_source: str = ""
    """The provider's Delete, which does not lift the protection."""
    note: str = ""

    def protecting(self, inputs: Mapping[str, Any]) -> str | None:
        """The input path whose value in `inputs` protects the resource (None: unprotected)."""
        for path, values in self.inputs.items():
            if _get(inputs, path) in values:
                return path
        return None


def _get(inputs: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted input path (a one-element block list is its element)."""
    value: Any = inputs
    for key in path.split("."):
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


@cache
def _data() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(PRECONDITIONS_FILE.read_text(encoding="utf-8"))
    return loaded


@cache
def _load() -> tuple[dict[str, dict[str, Precondition]], dict[str, Protection]]:
    data = _data()
    rows = {token: {path: Precondition(type=token, path=path, **spec)
                    for path, spec in paths.items()}
            for token, paths in data["preconditions"].items()}
    protections = {}
    for token, spec in data["protection"].items():
        delete = spec.get("delete") or {}
        protections[token] = Protection(
            type=token, inputs={path: tuple(values)
                                for path, values in (spec.get("inputs") or {}).items()},
            source=f"{spec['file']}:{spec['line']}" if "line" in spec else spec["file"],
            delete_api=delete.get("api", ""),
            delete_source=f"{delete['file']}:{delete['line']}" if delete else "",
            note=spec.get("note") or spec.get("none", ""))
    return rows, protections


def preconditions(type_token: str) -> Mapping[str, Precondition]:
    """Input path -> precondition of `type_token` (empty when the API refuses nothing the
    diff accepts)."""
    return _load()[0].get(type_token, {})


def all_preconditions() -> list[Precondition]:
    """Every row of the table, in file order."""
    return [row for rows in _load()[0].values() for row in rows.values()]


def protection(type_token: str) -> Protection:
    """The deletion protection of `type_token`; KeyError (naming the file) if unclassified."""
    table = _load()[1]
    if type_token not in table:
        raise KeyError(f"{type_token} has no deletion-protection entry; add it to "
                       f"{PRECONDITIONS_FILE.name}")
    return table[type_token]


def classified_types() -> frozenset[str]:
    """Every type token whose deletion protection the file classifies."""
    return frozenset(_load()[1])


def sources() -> dict[str, str]:
    """Name -> repository@commit the rows were read from (provider, kubernetes)."""
    return dict(_data()["sources"])
