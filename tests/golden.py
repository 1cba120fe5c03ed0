"""Golden plans on disk: tests/golden/<stack>.json, the `plan --json` record of a shipped
stack, with every large string (user data, node tools, an image build's template) replaced by
a reference `text:<label>` and every large object (a CustomResourceDefinition's schema) by
`json:<label>`; the label is `<resource>.<input path>` of the first input holding the value.
The record's last key TEXTS_KEY says, per label, how the value is rebuilt:

    "<label>": {"value": "sha256:<hex of the value>[ base64| packed| json]",
                "text": "<file>"}                             # the readable text is one file
    "<label>": {"value": ..., "lines": ["<line>", {"file": "<file>"}, ...]}

`base64`: the value is base64 of the text; `packed`: the user data's loader of the text
(blocks.bootstrap.packing); `json`: an object, its file the indented JSON, the digest of its
compact JSON. `lines` is a script that writes node files (`w PATH MODE <<'GPU_INFRA_EOF'`):
its own lines, each written file's body in a file of its own.

Files are content-addressed: tests/golden/text/<sha256 of the file>.<ext>, one per distinct
text, shared by every stack and resource that plans it. A one-line edit of a node file then
changes one text file (git shows it as a rename with the edit) and, in each record that uses
it, its `file` line and the value's digest: where it is used.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpu_infra.blocks.bootstrap import FILE_DELIMITER, INSTALL_DIR, unpack_user_data
from gpu_infra.blocks.bootstrap.packing import pack

from .conftest import PROJECT_DIR

GOLDEN_DIR = PROJECT_DIR / "tests" / "golden"
TEXT_DIR = GOLDEN_DIR / "text"
LARGE_CHARS = 1024
"""Strings of at least this many characters are kept by reference (the policy documents and
mount commands, about 500, stay inline)."""
LARGE_OBJECT_CHARS = 20_000
"""Resource inputs that are objects whose compact JSON is at least this long (and that hold
no large string) are kept by reference."""
TEXTS_KEY = "goldenTexts"
DIGEST = re.compile(r"sha256:(?P<digest>[0-9a-f]{64})(?: (?P<encoding>base64|packed|json))?")
WRITES_FILE = re.compile(rf"w \S+ [0-7]+ <<'{FILE_DELIMITER}'")
"""A line of blocks.bootstrap.write_files_script that starts a file's here-document."""

Reader = Callable[[str], str]
"""A text file's name -> its text."""


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _readable(value: str) -> tuple[str, str | None]:
    """The text of `value` and how it was encoded (base64 of UTF-8 text, the user data's
    loader: "packed"; None: as it is)."""
    script = unpack_user_data(value)
    if script is not None and pack(script, INSTALL_DIR) == value:
        return script, "packed"
    compact = "".join(value.split())
    if re.fullmatch(r"[A-Za-z0-9+/]+={0,2}", compact) and len(compact) % 4 == 0:
        try:
            return base64.b64decode(compact, validate=True).decode("utf-8"), "base64"
        except (binascii.Error, UnicodeDecodeError):
            pass
    return value, None


def _extension(text: str) -> str:
    """From the text alone (a content address names no place): `json` or `yaml` for data,
    else `txt` (so that no linter takes a recorded script or module for a source file)."""
    if text.lstrip().startswith(("{", "[")):
        try:
            json.loads(text)
            return "json"
        except ValueError:
            pass  # a systemd unit's [Unit], say
    return "yaml" if re.match(r"[A-Za-z_][\w-]*:\s", text) else "txt"


def text_file(text: str) -> str:
    """The content address of `text`: `<sha256>.<ext>`."""
    return f"{_sha256(text)}.{_extension(text)}"


def _holds_large_string(value: Any) -> bool:
    """Whether a string of LARGE_CHARS or more is in `value` (it gets a text file of its
    own, readable as text, rather than being kept inside its object's JSON)."""
    if isinstance(value, dict):
        return any(_holds_large_string(item) for item in value.values())
    if isinstance(value, list):
        return any(_holds_large_string(item) for item in value)
    return isinstance(value, str) and len(value) >= LARGE_CHARS


def _is_input(path: list[str | int]) -> bool:
    """Whether `path` is a resource input or inside one."""
    return len(path) > 3 and path[0] == "resources" and path[2] == "inputs"


def _label(path: list[str | int], record: dict[str, Any]) -> str:
    """`<resource name>.<input path>` for a resource input, else the JSON path."""
    if _is_input(path):
        resource = record["resources"][path[1]]
        return ".".join([resource["name"], *map(str, path[3:])])
    return ".".join(map(str, path))


def _stored(text: str, files: dict[str, str]) -> dict[str, Any]:
    """How `text` is kept: one file, or its lines with each written file's body as a file
    (the files are added to `files`)."""
    lines: list[Any] = []
    body: list[str] | None = None
    for line in text.split("\n"):
        if body is not None and line == FILE_DELIMITER:
            if body:
                content = "\n".join(body) + "\n"
                files[text_file(content)] = content
                lines.append({"file": text_file(content)})
            body = None
        if body is not None:
            body.append(line)
            continue
        lines.append(line)
        if WRITES_FILE.fullmatch(line):
            body = []
    if body is not None or all(isinstance(line, str) for line in lines):
        files[text_file(text)] = text  # no written file, or one left open: the text whole
        return {"text": text_file(text)}
    return {"lines": lines}


def deflate(record: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """`record` with its large values replaced by references and how to rebuild them added
    under TEXTS_KEY, and the text files (name under TEXT_DIR -> text)."""
    files: dict[str, str] = {}
    entries: dict[str, dict[str, Any]] = {}
    by_value: dict[str, str] = {}

    def walk(value: Any, path: list[str | int]) -> Any:
        if isinstance(value, dict) and _is_input(path) and not _holds_large_string(value) \
                and len(compact := _compact(value)) >= LARGE_OBJECT_CHARS:
            label = _label(path, record)
            text = json.dumps(value, indent=1, ensure_ascii=False) + "\n"
            files[text_file(text)] = text
            entries[label] = {"value": f"sha256:{_sha256(compact)} json",
                              "text": text_file(text)}
            return f"json:{label}"
        if isinstance(value, dict):
            return {key: walk(item, [*path, key]) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item, [*path, index]) for index, item in enumerate(value)]
        if not isinstance(value, str) or len(value) < LARGE_CHARS:
            return value
        if value not in by_value:
            text, encoded = _readable(value)
            label = by_value[value] = _label(path, record)
            entries[label] = {"value": f"sha256:{_sha256(value)}"
                                       + (f" {encoded}" if encoded else ""),
                              **_stored(text, files)}
        return f"text:{by_value[value]}"

    deflated = walk(record, [])
    return {**deflated, TEXTS_KEY: entries}, files


def read_text_file(name: str) -> str:
    """A text file of TEXT_DIR, checked against its name. AssertionError if it is missing or
    does not match."""
    path = TEXT_DIR / name
    assert path.is_file(), (f"tests/golden/text/{name} is missing; regenerate with "
                            "GPU_INFRA_UPDATE_GOLDEN=1")
    text = path.read_bytes().decode("utf-8")  # as written: a carriage return stays one
    assert text_file(text) == name, (f"tests/golden/text/{name} does not match its name; "
                                     "regenerate with GPU_INFRA_UPDATE_GOLDEN=1")
    return text


def text_of(entry: dict[str, Any], read: Reader = read_text_file) -> str:
    """The readable text of one TEXTS_KEY entry."""
    if "text" in entry:
        return read(entry["text"])
    return "\n".join(read(line["file"])[:-1] if isinstance(line, dict) else line
                     for line in entry["lines"])


def named_files(entry: dict[str, Any]) -> set[str]:
    """The text files one TEXTS_KEY entry names."""
    if "text" in entry:
        return {entry["text"]}
    return {line["file"] for line in entry["lines"] if isinstance(line, dict)}


def inflate(record: dict[str, Any], read: Reader = read_text_file) -> dict[str, Any]:
    """A golden record with every reference replaced by its value again (a plan a change
    report can be made against). AssertionError if a value does not match its digest."""
    values: dict[str, Any] = {}
    for label, entry in record.get(TEXTS_KEY, {}).items():
        text = text_of(entry, read)
        recorded = DIGEST.fullmatch(entry["value"])
        assert recorded is not None, f"{TEXTS_KEY}.{label}: not a digest: {entry['value']!r}"
        if recorded["encoding"] == "json":
            values[f"json:{label}"] = json.loads(text)
            assert _sha256(_compact(values[f"json:{label}"])) == recorded["digest"], (
                f"{TEXTS_KEY}.{label}: the text does not match the digest; regenerate with "
                "GPU_INFRA_UPDATE_GOLDEN=1")
            continue
        value = {"base64": base64.b64encode(text.encode("utf-8")).decode("ascii"),
                 "packed": pack(text, INSTALL_DIR)}.get(recorded["encoding"] or "", text)
        assert _sha256(value) == recorded["digest"], (
            f"{TEXTS_KEY}.{label}: the text does not match the digest; regenerate with "
            "GPU_INFRA_UPDATE_GOLDEN=1")
        values[f"text:{label}"] = value

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: walk(item) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item) for item in value]
        return values.get(value, value) if isinstance(value, str) else value

    return {key: walk(item) for key, item in record.items() if key != TEXTS_KEY}


def golden_record(stack: str) -> dict[str, Any]:
    """The recorded plan of `stack`, whole."""
    return inflate(json.loads((GOLDEN_DIR / f"{stack}.json").read_text(encoding="utf-8")))


def golden_plan_file(stack: str, directory: Path) -> Path:
    """The recorded plan of `stack`, whole, written as a plan JSON file under `directory`
    (for `plan --against`)."""
    path = directory / f"golden-{stack}.json"
    path.write_text(json.dumps(golden_record(stack), indent=2), encoding="utf-8")
    return path
