"""No credentials in clear in user data (plain, base64, gzip+base64, gpu-infra's loader with its
bzip2 payload) or tags, on every node type; messages never repeat the secret."""

from __future__ import annotations

import base64
import gzip

import pytest

from gpu_infra.blocks.bootstrap.packing import pack
from gpu_infra_facts import types as t
from gpu_infra_policies.base import UNKNOWN, Resource
from gpu_infra_policies.texts import SCRIPT_INPUTS

from .rule_helpers import messages

KEY_ID = "LTAI5tAbCdEfGhIjKlMnOpQr"
KEY_SECRET = "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1"
PEM = ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
       "-----END OPENSSH PRIVATE KEY-----")
SCRIPT = f"#!/bin/sh\nexport ALIBABA_CLOUD_ACCESS_KEY_ID={KEY_ID}\n"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize("token", sorted(token for token, keys in SCRIPT_INPUTS.items()
                                         if "userData" in keys))
@pytest.mark.parametrize("user_data", [SCRIPT, b64(SCRIPT),
                                       base64.b64encode(gzip.compress(SCRIPT.encode())).decode(),
                                       pack(SCRIPT, "/opt/gpu-infra")])
def test_access_key_id_in_user_data(token, user_data):
    found = messages("no-plaintext-secrets", Resource(token, {"userData": user_data}))
    assert found == ["userData holds an AccessKey id in clear (it lands in the state and on "
                     "the node); use the node's RAM role, or pass it as a Pulumi secret to KMS "
                     "Secrets Manager"]
    assert KEY_ID not in found[0]


@pytest.mark.parametrize("text, what", [
    (f"access_key_secret = {KEY_SECRET}", "an AccessKey secret"),
    (f'{{"AccessKeySecret": "{KEY_SECRET}"}}', "an AccessKey secret"),
    (f"ALIBABA_CLOUD_ACCESS_KEY_SECRET={KEY_SECRET}", "an AccessKey secret"),
    (PEM, "a private key"),
    ("-----BEGIN RSA PRIVATE KEY-----", "a private key"),
])
def test_other_secrets(text, what):
    [found] = messages("no-plaintext-secrets", Resource(t.INSTANCE, {"userData": b64(text)}))
    assert f"holds {what} in clear" in found


def test_node_pool_pre_user_data_and_tags():
    pool = Resource(t.NODE_POOL, {"preUserData": b64(SCRIPT)})
    assert messages("no-plaintext-secrets", pool)[0].startswith("preUserData holds")
    tagged = Resource(t.BUCKET, {"tags": {"Owner": "me", "ci-key": KEY_ID}})
    assert messages("no-plaintext-secrets", tagged)[0].startswith(
        "tags.ci-key holds an AccessKey id in clear")


@pytest.mark.parametrize("props", [
    {"userData": "#!/bin/sh\nnvidia-smi\n"}, {"userData": b64("#!/bin/sh\necho LTAI\n")},
    {"userData": UNKNOWN}, {"userData": "[secret]"}, {},
    {"userData": "secret = short"}, {"tags": {"Owner": "me", "Stack": "prod"}},
    {"userData": b64("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA public key only")},
])
def test_quiet(props):
    assert messages("no-plaintext-secrets", Resource(t.INSTANCE, props)) == []
