"""What a credential looks like, for every check that keeps one out of clear text: the
policy pack's secret rule (on resources), the stack-file schema (on every field that may not
hold a secret), clone (never copies one). And the provider's credential config keys.

Source of the keys: pulumi-alicloud's provider configuration (sdk/python/pulumi_alicloud/
config/vars.py: `access_key`, `secret_key`, `security_token`, read from the keys below, and the
environment variables ALIBABA_CLOUD_ACCESS_KEY_ID / _SECRET / _SECURITY_TOKEN and
ALICLOUD_ACCESS_KEY / _SECRET_KEY / _SECURITY_TOKEN when unset)."""

from __future__ import annotations

import re
from functools import lru_cache

PROVIDER_CREDENTIAL_KEYS = ("alicloud:accessKey", "alicloud:secretKey", "alicloud:securityToken")
"""Stack config keys that hold the provider's credentials: only ever `secure:` values, or
better unset (the environment, or the RAM role of the machine that runs Pulumi)."""


SECRET_PATTERNS = (
    ("an AccessKey id", re.compile(r"\bLTAI[A-Za-z0-9]{12,28}\b")),
    ("an AccessKey secret", re.compile(
        r"(?i)(?:access_?key_?secret|secret_?access_?key|accesskeysecret|ak_?secret)"
        r"[\"']?\s*[:=]\s*[\"']?(?:[A-Za-z0-9]{30}|[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])")),
    ("an STS token", re.compile(r"\bSTS\.[A-Za-z0-9]{20,}")),
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")),
    ("an AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_\w{22,})")),
    ("a GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}")),
    ("a Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}")),
    ("an OpenAI-style API key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{32,}")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("an NVIDIA NGC key", re.compile(r"\bnvapi-[A-Za-z0-9_\-]{30,}")),
    ("a Weights & Biases key", re.compile(r"(?i)wandb_api_key[\"']?\s*[:=]\s*[\"']?[0-9a-f]{40}")),
    ("a password or token", re.compile(
        r"(?i)\b[A-Z0-9_]*(?:password|passwd|secret|token|api_?key)[\"']?\s*[:=]\s*[\"']?"
        r"(?=[\w+/=-]*\d)(?=[\w+/=-]*[A-Za-z])[\w+/=-]{12,}(?![\w+/=.(-])")),
    ("a registry password", re.compile(r"\b(?:docker|nerdctl|podman) login\b[^\n]*?"
                                       r"(?:-p|--password)[ =](?![$\"'`])\S{6,}")),
    ("a credential on a command line", re.compile(
        r"(?i)(?:^|\s)--?[\w-]*(?:password|passwd|secret|token|api[-_]?key|access[-_]?key)"
        r"(?:=|\s+)[\"']?(?![$\"'`])(?![^\s\"']*://)(?=[^\s\"'/]*\d)(?=[^\s\"'/]*[A-Za-z])"
        r"[^\s\"'/]{8,}")),
    ("credentials in a URL", re.compile(
        r"(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@]*:(?![$%{])[^/\s@]{4,}@[\w-]")),
    ("a password in an image reference", re.compile(
        r"(?:^|\s)[\w.-]+:(?![$%{])[^\s/@]{4,}@[\w-]+(?:\.[\w-]+)+/")),
)
"""What a credential looks like: Alibaba Cloud AccessKey ids (LTAI...), secrets (30
alphanumerics beside their usual names; 40 for AWS) and STS tokens; private keys; the tokens of the
services a GPU platform talks to (AWS, GitHub, GitLab, Hugging Face, OpenAI-style APIs,
Slack, NGC, Weights & Biases); any long literal assigned to a name saying password, secret,
token or API key, a literal of letters and digits (a shell reference like $TOKEN, a URL or
a call is not one); a registry password on a login command line; a value after a
command-line flag named for a credential (`--api-key X`, `--hf-token=X`; a `$VAR`, a URL or
a path is not one); credentials inside a URL (`https://user:pw@host`) or an image reference
(`user:pw@registry/ns/image`)."""


@lru_cache(maxsize=512)
def findings_in(text: str) -> tuple[str, ...]:
    """What credentials `text` holds, e.g. ("an AccessKey id",). Cached: the nodes of a fleet
    share their user data."""
    found = [what for what, pattern in SECRET_PATTERNS if pattern.search(text)]
    if len(found) > 1 and "a password or token" in found:
        found.remove("a password or token")  # a named credential says more
    return tuple(found)
