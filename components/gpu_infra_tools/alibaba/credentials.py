"""The credentials Alibaba Cloud's own tools find, in their order (the SDKs' default
credential chain, alibabacloud-credentials README "Default credential provider chain"):

1. environment: ALIBABA_CLOUD_ACCESS_KEY_ID / _ACCESS_KEY_SECRET (/ _SECURITY_TOKEN), then
   the provider's ALICLOUD_ACCESS_KEY / ALICLOUD_SECRET_KEY (/ ALICLOUD_SECURITY_TOKEN);
2. the Alibaba Cloud CLI's profile file ~/.aliyun/config.json: the profile named by
   ALIBABA_CLOUD_PROFILE, else its `current` one; modes AK, StsToken and EcsRamRole;
3. the ECS instance's RAM role from the metadata service, only when asked for: the
   environment names the role (ALIBABA_CLOUD_ECS_METADATA) or the profile's mode is
   EcsRamRole. Nothing else ever contacts the metadata address.

Keys are held in memory only: never written, logged or shown (their repr hides them).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from gpu_infra.blocks.functions.rpc import ENV_KEYS, METADATA_URL, Credentials, PublishError

PROFILE_FILE = Path(".aliyun") / "config.json"
"""The CLI's profile file, under the home directory."""
ROLE_VARIABLE = "ALIBABA_CLOUD_ECS_METADATA"


class CredentialsError(Exception):
    """No credentials found, or a source of them is broken (the message says which)."""


def find_credentials(environ: Mapping[str, str] | None = None, home: Path | None = None,
                     metadata_url: str = METADATA_URL) -> tuple[Credentials, str]:
    """(credentials, where they came from) by the chain above. Raises CredentialsError."""
    environ = os.environ if environ is None else environ
    for key_id, secret, token in ENV_KEYS:
        if environ.get(key_id) and environ.get(secret):
            return (Credentials(environ[key_id], environ[secret], environ.get(token) or None),
                    f"environment ({key_id})")
    path = (Path.home() if home is None else home) / PROFILE_FILE
    profile = _profile(path, environ.get("ALIBABA_CLOUD_PROFILE")) if path.is_file() else None
    if profile is not None:
        name, mode = str(profile.get("name", "?")), str(profile.get("mode", "AK"))
        where = f"profile {name!r} of {path}"
        if mode in ("AK", "StsToken"):
            profile_key, profile_secret = (profile.get("access_key_id"),
                                           profile.get("access_key_secret"))
            if not profile_key or not profile_secret:
                raise CredentialsError(f"{where}: mode {mode} without access_key_id and "
                                       "access_key_secret")
            sts_token = profile.get("sts_token") if mode == "StsToken" else None
            return (Credentials(str(profile_key), str(profile_secret),
                                str(sts_token) if sts_token else None), where)
        if mode != "EcsRamRole":
            raise CredentialsError(f"{where}: mode {mode!r} is not supported here (AK, "
                                   "StsToken, EcsRamRole; or set ALIBABA_CLOUD_ACCESS_KEY_ID"
                                   " and ALIBABA_CLOUD_ACCESS_KEY_SECRET)")
        return _role(metadata_url), f"{where} (ECS RAM role)"
    if environ.get(ROLE_VARIABLE):
        return _role(metadata_url), f"ECS RAM role ({ROLE_VARIABLE})"
    raise CredentialsError(
        "no credentials: set ALIBABA_CLOUD_ACCESS_KEY_ID and ALIBABA_CLOUD_ACCESS_KEY_SECRET, "
        f"configure the aliyun CLI (~/{PROFILE_FILE}), or on ECS set {ROLE_VARIABLE} to the "
        "instance's RAM role")


def _profile(path: Path, wanted: str | None) -> dict[str, object]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CredentialsError(f"{path}: unreadable ({error.__class__.__name__})") from None
    profiles = document.get("profiles") if isinstance(document, dict) else None
    if not isinstance(profiles, list):
        raise CredentialsError(f"{path}: no `profiles` list")
    name = wanted or document.get("current") or "default"
    for profile in profiles:
        if isinstance(profile, dict) and profile.get("name") == name:
            return profile
    raise CredentialsError(f"{path}: no profile named {name!r}")


def _role(metadata_url: str) -> Credentials:
    """The RAM role's keys from the metadata service (resolve() without keys in the
    environment goes straight to it)."""
    try:
        return Credentials.resolve({}, metadata_url)
    except PublishError as error:
        raise CredentialsError(str(error)) from None
