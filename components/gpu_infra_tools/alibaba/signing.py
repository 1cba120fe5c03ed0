"""Alibaba Cloud request signatures, as documented:

- V3 (`ACS3-HMAC-SHA256`), Alibaba Cloud SDK "Request syntax and signature method V3"
  (help.aliyun.com/zh/sdk/product-overview/v3-request-structure-and-signature): the canonical
  request (method, path, sorted query, lower-cased sorted headers `host`, `content-type` and
  `x-acs-*`, their names, the body's SHA-256), its SHA-256 after the algorithm name, signed
  with HMAC-SHA256 under the AccessKey secret, hex. RPC and ROA APIs alike.
- OSS V1 (`OSS AccessKeyId:Signature`), OSS "Include a V1 signature in the Authorization
  header": base64(HMAC-SHA1(secret, VERB \\n Content-MD5 \\n Content-Type \\n Date \\n
  CanonicalizedOSSHeaders CanonicalizedResource)).
- MNS (`MNS AccessKeyId:Signature`), Simple Message Queue (formerly MNS) "Sign requests": the
  same lines with the `x-mns-` headers.

The tests pin both to the documentation's worked examples.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import urllib.parse
from collections.abc import Mapping

V3_ALGORITHM = "ACS3-HMAC-SHA256"
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def percent_encode(text: str) -> str:
    """RFC 3986 percent-encoding (space as %20, `~` kept), as both signatures require."""
    return urllib.parse.quote(text, safe="-_.~")


def canonical_query(query: Mapping[str, str]) -> str:
    """`k=v` pairs, each side percent-encoded, sorted by encoded key, joined by `&`."""
    return "&".join(f"{percent_encode(key)}={percent_encode(value)}"
                    for key, value in sorted(query.items(),
                                             key=lambda item: percent_encode(item[0])))


def signed_header_names(headers: Mapping[str, str]) -> list[str]:
    """The headers V3 signs: host, content-type and every x-acs-* header, lower case,
    sorted."""
    return sorted(name.lower() for name in headers
                  if name.lower() in ("host", "content-type")
                  or name.lower().startswith("x-acs-"))


def v3_canonical_request(method: str, path: str, query: Mapping[str, str],
                         headers: Mapping[str, str], body_sha256: str) -> str:
    """The V3 canonical request (headers must include x-acs-content-sha256)."""
    lowered = {name.lower(): value.strip() for name, value in headers.items()}
    names = signed_header_names(headers)
    return "\n".join([
        method.upper(),
        "/".join(percent_encode(part) for part in path.split("/")) or "/",
        canonical_query(query),
        "".join(f"{name}:{lowered[name]}\n" for name in names),
        ";".join(names),
        body_sha256,
    ])


def v3_authorization(access_key_id: str, access_key_secret: str, method: str, path: str,
                     query: Mapping[str, str], headers: Mapping[str, str],
                     body_sha256: str) -> str:
    """The V3 `Authorization` header value."""
    canonical = v3_canonical_request(method, path, query, headers, body_sha256)
    string_to_sign = f"{V3_ALGORITHM}\n{hashlib.sha256(canonical.encode()).hexdigest()}"
    signature = hmac.new(access_key_secret.encode(), string_to_sign.encode(),
                         hashlib.sha256).hexdigest()
    return (f"{V3_ALGORITHM} Credential={access_key_id},"
            f"SignedHeaders={';'.join(signed_header_names(headers))},Signature={signature}")


def oss_string_to_sign(method: str, headers: Mapping[str, str], resource: str,
                       prefix: str = "x-oss-") -> str:
    """The OSS V1 string to sign (MNS's with `prefix` x-mns-); `resource` is the
    CanonicalizedResource (`/bucket/?bucketInfo`, `/queues/<queue>/messages`)."""
    lowered = {name.lower(): value.strip() for name, value in headers.items()}
    own_headers = "".join(f"{name}:{lowered[name]}\n" for name in sorted(lowered)
                          if name.startswith(prefix))
    return "\n".join([method.upper(), lowered.get("content-md5", ""),
                      lowered.get("content-type", ""), lowered.get("date", ""),
                      own_headers + resource])


def oss_authorization(access_key_id: str, access_key_secret: str, method: str,
                      headers: Mapping[str, str], resource: str, scheme: str = "OSS") -> str:
    """The OSS V1 `Authorization` header value; with `scheme` MNS, MNS's."""
    prefix = f"x-{scheme.lower()}-"
    digest = hmac.new(access_key_secret.encode(),
                      oss_string_to_sign(method, headers, resource, prefix).encode(),
                      hashlib.sha1).digest()
    return f"{scheme} {access_key_id}:{base64.b64encode(digest).decode()}"
