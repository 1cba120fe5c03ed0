"""The plan of every shipped stack against its recorded plan (tests/golden/<stack>.json,
its large strings by digest with their text in tests/golden/text/<stack>/: tests/golden.py).

A deliberate change of what a stack plans updates the recordings in the same commit:
`GPU_INFRA_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_golden_plans.py` writes the records
and the texts and removes texts no record names; the diff of tests/golden/ then shows the
reviewer exactly what changed (a script edit: its text file and one digest line).
"""

from __future__ import annotations

import difflib
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from gpu_infra.blocks.bootstrap import INSTALL_DIR
from gpu_infra.blocks.bootstrap.packing import pack
from gpu_infra_tools.review import review

from .bootstrap_sandbox import script_of
from .conftest import PROJECT_DIR, STACKS_DIR
from .golden import GOLDEN_DIR, TEXT_DIR, deflate, golden_record
from .shipped import shipped_plan

SHIPPED = sorted(path.name.removeprefix("Pulumi.").removesuffix(".yaml")
                 for path in STACKS_DIR.glob("Pulumi.*.yaml"))


RECORDED_TIME = "0001-01-01T00:00:00Z"
"""The cost's `timeGenerated` in a recording (the real one is the time of the plan)."""


@cache
def record_of(stack: str) -> dict[str, Any]:
    """The `plan --json` record of a shipped stack, as the CLI writes it, but for the time
    and the stack file's path in the cost (recorded relative to the project). Planned once
    per run (callers do not change it)."""
    record = json.loads(json.dumps(review(shipped_plan(stack)).to_json(), default=str))
    record["cost"]["timeGenerated"] = RECORDED_TIME
    for project in record["cost"]["projects"]:
        path = Path(project["metadata"]["path"])
        project["metadata"]["path"] = str(path.relative_to(PROJECT_DIR))
    return record


def recorded_texts(stack: str) -> dict[str, str]:
    """The text files recorded for `stack` (path under tests/golden/text -> text)."""
    return {str(path.relative_to(TEXT_DIR)): path.read_text(encoding="utf-8")
            for path in sorted((TEXT_DIR / stack).glob("*"))}


def write_recording(stack: str, text: str, texts: dict[str, str]) -> None:
    """Write the record and its texts; remove the stack's texts the record no longer names."""
    (GOLDEN_DIR / f"{stack}.json").write_text(text, encoding="utf-8")
    for orphan in set(recorded_texts(stack)) - set(texts):
        (TEXT_DIR / orphan).unlink()
    if texts:
        (TEXT_DIR / stack).mkdir(parents=True, exist_ok=True)
    elif (TEXT_DIR / stack).is_dir():
        (TEXT_DIR / stack).rmdir()  # an empty directory would fail the recording check
    for name, content in texts.items():
        (TEXT_DIR / name).write_text(content, encoding="utf-8")


def text_changes(recorded: dict[str, str], actual: dict[str, str]) -> list[str]:
    """One paragraph per text that differs: its file, then the head of a unified diff."""
    lines: list[str] = []
    for name in sorted(set(recorded) | set(actual)):
        if recorded.get(name) == actual.get(name):
            continue
        diff = list(difflib.unified_diff(
            recorded.get(name, "").splitlines(), actual.get(name, "").splitlines(),
            f"recorded tests/golden/text/{name}", f"planned {name}", lineterm="", n=1))
        lines += [f"text tests/golden/text/{name} changed:", *diff[:24]]
    return lines


def test_every_shipped_stack_has_a_recording():
    assert sorted(p.stem for p in GOLDEN_DIR.glob("*.json")) == SHIPPED
    assert sorted(p.name for p in TEXT_DIR.iterdir()) == [
        stack for stack in SHIPPED if any((TEXT_DIR / stack).glob("*"))]


@pytest.mark.parametrize("stack", SHIPPED)
def test_plan_matches_recording(stack):
    record, texts = deflate(record_of(stack), stack)
    text = json.dumps(record, indent=2) + "\n"
    if os.environ.get("GPU_INFRA_UPDATE_GOLDEN") == "1":
        write_recording(stack, text, texts)
    changes = text_changes(recorded_texts(stack), texts)
    assert not changes, "\n".join([
        f"{stack} plans other texts than tests/golden/text/{stack}/ holds; if intended, rerun "
        "with GPU_INFRA_UPDATE_GOLDEN=1 and commit the recording", *changes])
    assert text == (GOLDEN_DIR / f"{stack}.json").read_text(encoding="utf-8"), (
        f"{stack} plans differently from tests/golden/{stack}.json; if intended, rerun with "
        "GPU_INFRA_UPDATE_GOLDEN=1 and commit the recording")


@pytest.mark.parametrize("stack", SHIPPED)
def test_a_recording_read_back_is_the_plan_record(stack):
    """What change reports are made against: the record with its texts put back."""
    assert golden_record(stack) == record_of(stack)


def test_a_script_edit_changes_one_text_file_and_one_digest_line():
    """Eight nodes share one user data: one edited shell line is one changed line of one
    text file and one changed digest line in the record."""
    before = record_of("training-prod")
    after = json.loads(json.dumps(before))
    for resource in after["resources"]:
        if "userData" in resource["inputs"]:
            script = script_of(resource["inputs"]["userData"])
            resource["inputs"]["userData"] = pack(
                script.replace("set -euo pipefail", "set -eu -o pipefail", 1), INSTALL_DIR)
    (old, old_texts), (new, new_texts) = (deflate(before, "training-prod"),
                                          deflate(after, "training-prod"))
    changed_lines = [line for line in difflib.unified_diff(
        json.dumps(old, indent=2).splitlines(), json.dumps(new, indent=2).splitlines(),
        lineterm="", n=0) if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))]
    assert len(changed_lines) == 2 and all("sha256:" in line for line in changed_lines)
    [name] = [n for n in old_texts if old_texts[n] != new_texts[n]]
    assert name.endswith(".userData.sh") and set(old_texts) == set(new_texts)
    report = text_changes(old_texts, new_texts)
    assert report[0] == f"text tests/golden/text/{name} changed:"
    assert "-set -euo pipefail" in report and "+set -eu -o pipefail" in report


def test_base64_values_are_kept_as_their_text_and_restored(monkeypatch, tmp_path):
    import base64

    from . import golden

    script = "#!/bin/bash\n" + "echo one line of a long script\n" * 64
    value = base64.b64encode(script.encode()).decode()
    record = {"resources": [{"name": f"n{i}", "inputs": {"userData": value, "small": "x"}}
                            for i in range(2)]}
    deflated, texts = deflate(record, "s")
    assert texts == {"s/n0.userData.sh": script}
    assert deflated["resources"][1]["inputs"] == {"userData": "text:s/n0.userData.sh",
                                                  "small": "x"}
    assert deflated[golden.TEXTS_KEY]["s/n0.userData.sh"].endswith(" base64")
    monkeypatch.setattr(golden, "TEXT_DIR", tmp_path)
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "n0.userData.sh").write_text(script)
    assert golden.inflate(deflated) == record
    (tmp_path / "s" / "n0.userData.sh").write_text(script + "edited\n")
    with pytest.raises(AssertionError, match="does not match its digest"):
        golden.inflate(deflated)


def test_regenerating_writes_the_texts_and_removes_orphans(monkeypatch, tmp_path):
    import sys

    module = sys.modules[__name__]
    monkeypatch.setattr(module, "GOLDEN_DIR", tmp_path)
    monkeypatch.setattr(module, "TEXT_DIR", tmp_path / "text")
    (tmp_path / "text" / "s").mkdir(parents=True)
    (tmp_path / "text" / "s" / "gone.userData.sh").write_text("old\n")
    write_recording("s", "{}\n", {"s/kept.userData.sh": "new\n"})
    assert recorded_texts("s") == {"s/kept.userData.sh": "new\n"}
    assert (tmp_path / "s.json").read_text() == "{}\n"
