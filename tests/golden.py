"""Golden plans on disk: tests/golden/<stack>.json, the `plan --json` record of a shipped
stack, with every large string (user data, an image build's template) kept as a reference
`text:<file>` to its text in tests/golden/text/<file> (`<stack>/<resource>.<input>.<ext>`, one
readable file per distinct text) and its digest once, in the record's last key TEXTS_KEY:
`{"<file>": "sha256:<hex of the value>"}`, with ` base64` after it when the value is base64 of
the text, ` packed` when it is the user data's loader of the text (blocks.bootstrap.packing;
in both cases the file holds the decoded text, so it stays readable). A one-line edit of a node
script then changes one text file and one digest line, however many nodes share it. A large
object (a CustomResourceDefinition's schema) is kept the same way as `json:<file>`, the file
holding the object as indented JSON and the digest, of its compact JSON, ending in ` json`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from gpu_infra.blocks.bootstrap import INSTALL_DIR, unpack_user_data
from gpu_infra.blocks.bootstrap.packing import pack

from .conftest import PROJECT_DIR

GOLDEN_DIR = PROJECT_DIR / "tests" / "golden"
TEXT_DIR = GOLDEN_DIR / "text"
LARGE_CHARS = 1024
"""Strings of at least this many characters are kept by digest (the policy documents and
mount commands, about 500, stay inline)."""
LARGE_OBJECT_CHARS = 20_000
"""Resource inputs that are objects whose compact JSON is at least this long (and that hold
no large string) are kept by digest."""
TEXTS_KEY = "goldenTexts"
DIGEST = re.compile(r"sha256:(?P<digest>[0-9a-f]{64})(?: (?P<encoding>base64|packed|json))?")


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


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
    if text.startswith("#!"):
        return "sh"
    if text.lstrip().startswith(("{", "[")):
        return "json"
    return "yaml" if re.match(r"[A-Za-z_][\w-]*:\s", text) else "txt"


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


def _file_stem(path: list[str | int], record: dict[str, Any]) -> str:
    """`<resource name>.<input path>` for a resource input, else the JSON path."""
    if _is_input(path):
        resource = record["resources"][path[1]]
        return ".".join([resource["name"], *map(str, path[3:])])
    return ".".join(map(str, path))


def deflate(record: dict[str, Any], stack: str) -> tuple[dict[str, Any], dict[str, str]]:
    """`record` with its large strings replaced by references and their digests added under
    TEXTS_KEY, and the texts (file under TEXT_DIR -> text)."""
    texts: dict[str, str] = {}
    digests: dict[str, str] = {}
    by_value: dict[str, str] = {}

    def walk(value: Any, path: list[str | int]) -> Any:
        if isinstance(value, dict) and _is_input(path) and not _holds_large_string(value) \
                and len(compact := _compact(value)) >= LARGE_OBJECT_CHARS:
            name = f"{stack}/{_file_stem(path, record)}.json"
            texts[name] = json.dumps(value, indent=1, ensure_ascii=False) + "\n"
            digests[name] = f"sha256:{hashlib.sha256(compact.encode('utf-8')).hexdigest()} json"
            return f"json:{name}"
        if isinstance(value, dict):
            return {key: walk(item, [*path, key]) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item, [*path, index]) for index, item in enumerate(value)]
        if not isinstance(value, str) or len(value) < LARGE_CHARS:
            return value
        if value not in by_value:
            text, encoded = _readable(value)
            name = f"{stack}/{_file_stem(path, record)}.{_extension(text)}"
            by_value[value], texts[name] = name, text
            digests[name] = (f"sha256:{hashlib.sha256(value.encode('utf-8')).hexdigest()}"
                             + (f" {encoded}" if encoded else ""))
        return f"text:{by_value[value]}"

    deflated = walk(record, [])
    return {**deflated, TEXTS_KEY: digests}, texts


def inflate(record: dict[str, Any]) -> dict[str, Any]:
    """A golden record with every reference replaced by its value again (a plan a change
    report can be made against). AssertionError if a text file does not match its digest."""
    values: dict[str, Any] = {}
    for name, digest in record.get(TEXTS_KEY, {}).items():
        text = (TEXT_DIR / name).read_text(encoding="utf-8")
        recorded = DIGEST.fullmatch(digest)
        assert recorded is not None, f"{TEXTS_KEY}.{name}: not a digest: {digest!r}"
        if recorded["encoding"] == "json":
            values[f"json:{name}"] = json.loads(text)
            assert hashlib.sha256(_compact(values[f"json:{name}"]).encode("utf-8")).hexdigest() \
                == recorded["digest"], (f"tests/golden/text/{name} does not match its digest; "
                                        "regenerate with GPU_INFRA_UPDATE_GOLDEN=1")
            continue
        value = {"base64": base64.b64encode(text.encode("utf-8")).decode("ascii"),
                 "packed": pack(text, INSTALL_DIR)}.get(recorded["encoding"] or "", text)
        assert hashlib.sha256(value.encode("utf-8")).hexdigest() == recorded["digest"], (
            f"tests/golden/text/{name} does not match its digest; regenerate with "
            "GPU_INFRA_UPDATE_GOLDEN=1")
        values[f"text:{name}"] = value

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
