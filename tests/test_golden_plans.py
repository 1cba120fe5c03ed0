"""The plan of every shipped stack against its recorded plan (tests/golden/<stack>.json, its
large values by reference, their texts in tests/golden/text/ once each by content, shared by
the stacks: tests/golden.py).

A deliberate change of what a stack plans updates the recordings in the same commit:
`GPU_INFRA_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_golden_plans.py` writes the records
and the texts and removes texts no record names; the diff of tests/golden/ then shows the
reviewer exactly what changed (a node script edit: its text file, and in each record using it
the file's line and the value's digest).
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
from .golden import (
    GOLDEN_DIR,
    TEXT_DIR,
    TEXTS_KEY,
    deflate,
    golden_record,
    named_files,
    text_of,
)
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


def recorded_entries(stack: str) -> dict[str, Any]:
    """The TEXTS_KEY entries of the recording of `stack` (none if it has no recording)."""
    path = GOLDEN_DIR / f"{stack}.json"
    if not path.is_file():
        return {}
    entries = json.loads(path.read_text(encoding="utf-8")).get(TEXTS_KEY, {})
    return {label: entry for label, entry in entries.items()
            if isinstance(entry, dict)}  # a digest string: the layout before, names no file


def files_named_by_recordings() -> set[str]:
    """Every text file some recording in GOLDEN_DIR names."""
    return {name for path in GOLDEN_DIR.glob("*.json")
            for entry in recorded_entries(path.stem).values() for name in named_files(entry)}


def write_recording(stack: str, text: str, files: dict[str, str]) -> None:
    """Write the record and its text files, then remove the files no recording names (the
    record first: a file is never without a recording that names it while it is written)."""
    (GOLDEN_DIR / f"{stack}.json").write_text(text, encoding="utf-8")
    TEXT_DIR.mkdir(exist_ok=True)
    for name, content in files.items():
        path = TEXT_DIR / name
        if not path.is_file() or path.read_bytes() != content.encode("utf-8"):
            path.write_bytes(content.encode("utf-8"))  # a merge may have edited it
    present = list(TEXT_DIR.iterdir())
    named = files_named_by_recordings()
    for path in present:
        if path.name in named:
            continue
        if path.is_dir():  # the layout before content addressing: text/<stack>/
            for inner in path.iterdir():
                inner.unlink()
            path.rmdir()
        else:
            path.unlink()


def text_changes(stack: str, recorded: dict[str, str], planned: dict[str, str]) -> list[str]:
    """One paragraph per text (by label) that differs: where it is used, then the head of a
    unified diff."""
    lines: list[str] = []
    for label in sorted(set(recorded) | set(planned)):
        if recorded.get(label) == planned.get(label):
            continue
        diff = list(difflib.unified_diff(
            recorded.get(label, "").splitlines(), planned.get(label, "").splitlines(),
            f"recorded {label}", f"planned {label}", lineterm="", n=1))
        lines += [f"text {TEXTS_KEY}.{label} of tests/golden/{stack}.json changed:", *diff[:24]]
    return lines


def recorded_texts(stack: str) -> dict[str, str]:
    """Label -> the text the recording of `stack` holds (empty if a file is missing)."""
    texts = {}
    for label, entry in recorded_entries(stack).items():
        if all((TEXT_DIR / name).is_file() for name in named_files(entry)):
            texts[label] = text_of(entry)
    return texts


def planned_texts(record: dict[str, Any], files: dict[str, str]) -> dict[str, str]:
    """Label -> text of a deflated record whose files are in `files`."""
    return {label: text_of(entry, files.__getitem__)
            for label, entry in record[TEXTS_KEY].items()}


def test_every_shipped_stack_has_a_recording():
    assert sorted(p.stem for p in GOLDEN_DIR.glob("*.json")) == SHIPPED
    present = {path.name for path in TEXT_DIR.iterdir() if path.is_file()}
    assert {path.name for path in TEXT_DIR.iterdir()} == present, "only files in text/"
    named = files_named_by_recordings()
    assert named <= present, f"missing: {sorted(named - present)}"
    assert present <= named, f"named by no recording: {sorted(present - named)}"


def test_a_node_file_planned_by_several_stacks_is_kept_once():
    """gpu-infra-api is written by the user data of every ECS fleet: one text file."""
    header = f"w {INSTALL_DIR}/bin/gpu-infra-api 755 <<'GPU_INFRA_EOF'"
    files = {stack: entry["lines"][entry["lines"].index(header) + 1]["file"]
             for stack in SHIPPED for entry in recorded_entries(stack).values()
             if header in entry.get("lines", ())}
    assert len(files) >= 3 and len(set(files.values())) == 1, files


@pytest.mark.parametrize("stack", SHIPPED)
def test_plan_matches_recording(stack):
    record, files = deflate(record_of(stack))
    text = json.dumps(record, indent=2) + "\n"
    if os.environ.get("GPU_INFRA_UPDATE_GOLDEN") == "1":
        write_recording(stack, text, files)
    changes = text_changes(stack, recorded_texts(stack), planned_texts(record, files))
    assert not changes, "\n".join([
        f"{stack} plans other texts than its recording holds; if intended, rerun with "
        "GPU_INFRA_UPDATE_GOLDEN=1 and commit the recording", *changes])
    assert text == (GOLDEN_DIR / f"{stack}.json").read_text(encoding="utf-8"), (
        f"{stack} plans differently from tests/golden/{stack}.json; if intended, rerun with "
        "GPU_INFRA_UPDATE_GOLDEN=1 and commit the recording")


@pytest.mark.parametrize("stack", SHIPPED)
def test_a_recording_read_back_is_the_plan_record(stack):
    """What change reports are made against: the record with its texts put back."""
    assert golden_record(stack) == record_of(stack)


def test_a_node_file_edit_changes_one_text_file_and_two_lines_of_the_record():
    """Eight nodes share one user data: one edited line of a file it writes (gpu-infra-api)
    is one text file replaced by its edited copy, and in the record that file's line and
    the value's digest."""
    before = record_of("training-prod")
    after = json.loads(json.dumps(before))
    for resource in after["resources"]:
        if "userData" in resource["inputs"]:
            script = script_of(resource["inputs"]["userData"])
            resource["inputs"]["userData"] = pack(script.replace(
                "#!/usr/bin/env python3", "#!/usr/bin/python3", 1), INSTALL_DIR)
    (old, old_files), (new, new_files) = deflate(before), deflate(after)
    changed_lines = [line for line in difflib.unified_diff(
        json.dumps(old, indent=2).splitlines(), json.dumps(new, indent=2).splitlines(),
        lineterm="", n=0) if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))]
    [gone], [added] = set(old_files) - set(new_files), set(new_files) - set(old_files)
    assert len(changed_lines) == 4, changed_lines  # the digest and the file, each - and +
    assert sum("sha256:" in line for line in changed_lines) == 2
    assert {line[0] + line[1:].strip() for line in changed_lines} >= {
        f'-"file": "{gone}"', f'+"file": "{added}"'}
    assert old_files[gone].replace("#!/usr/bin/env python3", "#!/usr/bin/python3", 1) \
        == new_files[added] and added.endswith(".txt")
    [label] = [label for label, entry in new[TEXTS_KEY].items() if "lines" in entry
               and {"file": added} in entry["lines"]]
    report = text_changes("training-prod", planned_texts(old, old_files),
                          planned_texts(new, new_files))
    assert report[0] == f"text {TEXTS_KEY}.{label} of tests/golden/training-prod.json changed:"
    assert "-#!/usr/bin/env python3" in report and "+#!/usr/bin/python3" in report


def test_texts_are_kept_by_content_and_restored(monkeypatch, tmp_path):
    import base64

    from . import golden

    api = "#!/usr/bin/env python3\n" + "print('one line of a long script')\r\n" * 40
    script = ("#!/bin/bash\nset -eu\nw /opt/x/api 755 <<'GPU_INFRA_EOF'\n" + api
              + "GPU_INFRA_EOF\nsystemctl daemon-reload\n")
    value = base64.b64encode(script.encode()).decode()
    record = {"resources": [{"name": f"n{i}", "inputs": {"userData": value, "small": "x"}}
                            for i in range(2)]}
    deflated, files = deflate(record)
    name = golden.text_file(api)
    assert files == {name: api} and name.endswith(".txt")
    assert deflated["resources"][1]["inputs"] == {"userData": "text:n0.userData",
                                                  "small": "x"}
    entry = deflated[TEXTS_KEY]["n0.userData"]
    assert entry["value"].endswith(" base64")
    assert entry["lines"] == ["#!/bin/bash", "set -eu", "w /opt/x/api 755 <<'GPU_INFRA_EOF'",
                              {"file": name}, "GPU_INFRA_EOF", "systemctl daemon-reload", ""]
    monkeypatch.setattr(golden, "TEXT_DIR", tmp_path)
    (tmp_path / name).write_bytes(api.encode())  # the carriage returns kept
    assert golden.inflate(deflated) == record
    (tmp_path / name).write_bytes(api.replace("\r", "").encode())
    with pytest.raises(AssertionError, match="does not match its name"):
        golden.inflate(deflated)
    (tmp_path / name).unlink()
    with pytest.raises(AssertionError, match="is missing"):
        golden.inflate(deflated)


def test_a_text_that_writes_no_file_is_one_file():
    script = "#!/bin/sh\n" + "echo one line\n" * 100
    deflated, files = deflate({"outputs": {"job": script}})
    assert deflated[TEXTS_KEY]["outputs.job"]["text"] == next(iter(files))
    assert files[next(iter(files))] == script and next(iter(files)).endswith(".txt")


def test_regenerating_shares_texts_and_removes_orphans(monkeypatch, tmp_path):
    import sys

    from . import golden

    module = sys.modules[__name__]
    for target in (module, golden):
        monkeypatch.setattr(target, "GOLDEN_DIR", tmp_path)
        monkeypatch.setattr(target, "TEXT_DIR", tmp_path / "text")
    (tmp_path / "text" / "old-stack").mkdir(parents=True)  # the per-stack layout
    (tmp_path / "text" / "old-stack" / "gone.userData.sh").write_text("old\n")
    shared, own = "a\n" * 600, "b\n" * 600

    def recording(*texts: str) -> tuple[str, dict[str, str]]:
        record, files = deflate({"outputs": {f"t{i}": t for i, t in enumerate(texts)}})
        return json.dumps(record), files

    write_recording("s", *recording(shared, own))
    write_recording("u", *recording(shared))
    assert sorted(p.name for p in (tmp_path / "text").iterdir()) == sorted(
        golden.text_file(t) for t in (shared, own))
    assert recorded_texts("u") == {"outputs.t0": shared}
    write_recording("s", *recording(own))  # u still names the shared text
    assert golden.text_file(shared) in {p.name for p in (tmp_path / "text").iterdir()}
    write_recording("u", *recording(own))
    assert [p.name for p in (tmp_path / "text").iterdir()] == [golden.text_file(own)]
    assert recorded_texts("s") == recorded_texts("u") == {"outputs.t0": own}
