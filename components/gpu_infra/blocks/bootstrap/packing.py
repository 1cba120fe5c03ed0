"""The user data as the nodes get it: a loader of a few lines around the node script
(blocks.bootstrap node_script), bzip2-compressed and base64-encoded, which the loader decodes
with `base64 -d` (coreutils) and Python's bz2 module (python3 runs gpu-infra-api on every
node; the `bzip2` command is not on every minimal image) and runs in the same bash.
Compression keeps the user data at about 47% of the script's size.

The loader is a plain `#!/bin/bash` user-data script, the format every Alibaba Cloud Linux
and Ubuntu image's cloud-init runs at first boot (ECS "Customize the initialization
configuration for an instance": User-Data script); cloud-init's own gzip input is not used,
as Alibaba's page documents it only with the script kept in OSS. bzip2 rather than gzip:
the user data must be the same bytes wherever the plan runs (a change rolls scaling fleets),
and deflate's output differs between zlib and zlib-ng (Fedora 40's zlib, CPython 3.14's on
Windows), while libbzip2's compressor is one implementation, unchanged since 1.0 (its output
for the same input and level is the same; UNCONFIRMED across every build).
"""

from __future__ import annotations

import base64
import binascii
import bz2
import re

DELIMITER = "GPU_INFRA_PAYLOAD"
"""Ends the payload's here-document (base64 never holds an underscore)."""
DECOMPRESS = ("python3 -c 'import bz2,sys; "
              "sys.stdout.buffer.write(bz2.decompress(sys.stdin.buffer.read()))'")
LOADER_HEAD = f"set -euo pipefail\ns=$(base64 -d <<'{DELIMITER}' | {DECOMPRESS}\n"
LOADER_TAIL = f"\n{DELIMITER}\n)\neval \"$s\"\n"
PAYLOAD = re.compile(rf"^s=\$\(base64 -d <<'{DELIMITER}' \| {re.escape(DECOMPRESS)}\n(.*?)\n"
                     rf"{DELIMITER}$", re.M | re.S)
MAX_SCRIPT_BYTES = 1 << 20
"""Most bytes unpacked from a payload (a node script is about 30 KB)."""


def pack(script: str, install_dir: str) -> str:
    """The loader running `script` (whose first two lines, the `#!` line and the comment
    naming the fleet, it repeats in clear; `install_dir`: where the script writes its
    files, which the loader's comment names)."""
    head = "".join(script.splitlines(keepends=True)[:2])
    payload = base64.encodebytes(bz2.compress(script.encode("utf-8"), 9))
    return (f"{head}# below: the node script, bzip2 in base64 (ECS's user-data limit); "
            f"it writes {install_dir}\n{LOADER_HEAD}"
            f"{payload.decode('ascii').rstrip()}{LOADER_TAIL}")


def unpack(text: str) -> str | None:
    """The node script a loader runs (None if `text` is not one)."""
    match = PAYLOAD.search(text)
    if match is None:
        return None
    try:
        raw = bz2.BZ2Decompressor().decompress(
            base64.b64decode("".join(match[1].split()), validate=True), MAX_SCRIPT_BYTES)
        return raw.decode("utf-8")
    except (binascii.Error, ValueError, OSError, UnicodeDecodeError):
        return None


__all__ = ["pack", "unpack"]
