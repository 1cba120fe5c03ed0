"""Secret rule: no credentials written in clear into user data or tags.

User data is read as given and, when it is base64 (what ESS, launch templates and ACK
expect) or gzip inside base64 (cloud-init), decoded first. Pulumi secrets and unknowns are
not inspected (a secret arrives as a placeholder or not at all).
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from gpu_infra_facts import types as t
from gpu_infra_policies.base import Context, Resource, ResourceRule, Rule, is_unknown
from gpu_infra_policies.nodes import NODE_SHAPES

SECRET_PATTERNS = (
    ("an AccessKey id", re.compile(r"\bLTAI[A-Za-z0-9]{12,28}\b")),
    ("an AccessKey secret", re.compile(
        r"(?i)(?:access_?key_?secret|secret_?access_?key|accesskeysecret|ak_?secret)"
        r"[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9]{30}\b")),
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")),
)
"""What a credential looks like: Alibaba Cloud AccessKey ids start with LTAI; secrets are
30 alphanumerics, recognised beside their usual names; PEM / OpenSSH private keys."""
MAX_DECODED = 1 << 20
"""Most bytes decompressed from gzip user data (16 KiB is the ECS limit; this bounds a
decompression bomb)."""
GZIP_MAGIC = b"\x1f\x8b"


def _decoded(text: str) -> str | None:
    """`text` decoded from base64 (and gunzipped), or None if it is not base64 text."""
    compact = "".join(text.split())
    if not compact or len(compact) % 4:
        return None
    try:
        raw = base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        return None
    if raw.startswith(GZIP_MAGIC):
        try:
            raw = zlib.decompressobj(wbits=31).decompress(raw, MAX_DECODED)
        except zlib.error:
            return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


@lru_cache(maxsize=256)
def findings_in(text: str) -> tuple[str, ...]:
    """What credentials `text` holds (plain or base64), e.g. ("an AccessKey id",). Cached:
    the nodes of a fleet share their user data."""
    candidates = [text] + [decoded for decoded in [_decoded(text)] if decoded]
    return tuple(what for what, pattern in SECRET_PATTERNS
                 if any(pattern.search(candidate) for candidate in candidates))


def _texts(resource: Resource) -> Iterator[tuple[str, str]]:
    """(where, text) of the resource's user data and tags."""
    shape = NODE_SHAPES.get(resource.type)
    for key in shape.user_data if shape else ():
        value = resource.props.get(key)
        if isinstance(value, str) and not is_unknown(value):
            yield key, value
    if resource.type in t.TAGGABLE:
        tags = resource.props.get("tags")
        for key, value in (tags.items() if isinstance(tags, Mapping) else ()):
            yield f"tags.{key}", f"{key}={value}"


def plaintext_secrets(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """User data (of every node type) and tags hold no AccessKey id, AccessKey secret or
    private key, in clear or base64."""
    for where, text in _texts(resource):
        for what in findings_in(text):
            yield (f"{where} holds {what} in clear (it lands in the state and on the node); "
                   "use the node's RAM role, or pass it as a Pulumi secret to KMS Secrets "
                   "Manager")


SECRET_RULES: tuple[Rule, ...] = (
    ResourceRule("no-plaintext-secrets", "No credentials in clear in user data or tags", "security",
                 "critical", "Remove the key: nodes get credentials from their RAM role; keep "
                 "other secrets in KMS Secrets Manager and read them at boot.",
                 plaintext_secrets, concern="secrets",
                 reviews=frozenset(NODE_SHAPES)),
)

