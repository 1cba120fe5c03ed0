"""The Alibaba Cloud client: signatures against the documentation's worked examples, the
credential chain, argument checks before any network call, and signed calls that the
loopback stand-in verifies."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from gpu_infra.blocks.functions.rpc import Credentials
from gpu_infra_tools.alibaba.client import AlibabaClient, ApiError, ClientError
from gpu_infra_tools.alibaba.credentials import CredentialsError, find_credentials
from gpu_infra_tools.alibaba.signing import (
    EMPTY_SHA256,
    oss_authorization,
    v3_authorization,
    v3_canonical_request,
)

from .alibaba_standin import KEY_ID, SECRET, Account, serving

DOC_QUERY = {"ImageId": "win2019_1809_x64_dtc_zh-cn_40G_alibase_20230811.vhd",
             "RegionId": "cn-shanghai"}


def _doc_headers(date: str, nonce: str) -> dict[str, str]:
    return {"host": "ecs.cn-shanghai.aliyuncs.com", "x-acs-action": "RunInstances",
            "x-acs-version": "2014-05-26", "x-acs-date": date,
            "x-acs-signature-nonce": nonce, "x-acs-content-sha256": EMPTY_SHA256}


@pytest.mark.parametrize(("date", "nonce", "signature"), [
    # "V3 request body & signature" (help.aliyun.com/zh/sdk/product-overview/
    # v3-request-structure-and-signature), its signature example
    ("2023-10-26T10:22:32Z", "3156853299f313e23d1673dc12e1703d",
     "06563a9e1b43f5dfe96b81484da74bceab24a1d853912eee15083a6f0f3283c0"),
    # the same example on "ROA风格请求体&签名机制" (help.aliyun.com/zh/model-studio/user-guide/
    # roa-style-request-body-signature-mechanism), its common request headers table
    ("2023-10-26T09:01:01Z", "d410180a5abf7fe235dd9b74aca91fc0",
     "e521358f7776c97df52e6b2891a8bc73026794a071b50c3323388c4e0df64804"),
])
def test_v3_signature_matches_the_documented_example(date, nonce, signature):
    headers = _doc_headers(date, nonce)
    assert v3_authorization("YourAccessKeyId", "YourAccessKeySecret", "POST", "/", DOC_QUERY,
                            headers, EMPTY_SHA256) == (
        "ACS3-HMAC-SHA256 Credential=YourAccessKeyId,SignedHeaders=host;x-acs-action;"
        f"x-acs-content-sha256;x-acs-date;x-acs-signature-nonce;x-acs-version,"
        f"Signature={signature}")


def test_v3_canonical_request_sorts_and_encodes():
    canonical = v3_canonical_request("get", "/a b", {"b": "x y", "a": "1~*"},
                                     {"X-Acs-Action": "A", "Host": "h", "Other": "no"},
                                     EMPTY_SHA256)
    assert canonical.split("\n") == ["GET", "/a%20b", "a=1~%2A&b=x%20y", "host:h",
                                     "x-acs-action:A", "", "host;x-acs-action", EMPTY_SHA256]


def test_oss_signature_matches_the_documented_example():
    # OSS V1 header signature example: PUT /nelson to oss-example, secret
    # OtxrzxIsfpFjA7SwPzILwy8Bw21TLhquhboDYROV (OSS API reference, "Signature")
    headers = {"Content-MD5": "ODBGOERFMDMzQTczRUY3NUE3NzA5QzdFNUYzMDQxNEM=",
               "Content-Type": "text/html", "Date": "Thu, 17 Nov 2005 18:49:58 GMT",
               "X-OSS-Meta-Author": "foo@bar.com", "X-OSS-Magic": "abracadabra"}
    assert oss_authorization("44CF9590006BF252F707", "OtxrzxIsfpFjA7SwPzILwy8Bw21TLhquhboDYROV",
                             "PUT", headers, "/oss-example/nelson") == \
        "OSS 44CF9590006BF252F707:26NBxoKdsyly4EDv6inkoDft/yA="


def test_mns_signature_matches_the_documented_example():
    """MNS's example (GET /MyQueue, TestAccessSecret; the page masks the last 4 characters
    of "uwx3yeWoILzgmvesW0BQSgfM****"): the same lines as OSS's, with the x-mns- headers."""
    value = oss_authorization("TestAccessKeyId", "TestAccessSecret", "GET",
                              {"Date": "Thu, 09 Jul 2015 03:01:34 GMT",
                               "x-mns-version": "2015-06-06"}, "/MyQueue", scheme="MNS")
    assert value.startswith("MNS TestAccessKeyId:uwx3yeWoILzgmvesW0BQSgfM")


@pytest.fixture
def no_network(monkeypatch):
    """Any connection fails the test."""
    def refuse(*args, **kwargs):
        pytest.fail(f"a connection was attempted: {args}")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


KEYS = Credentials(KEY_ID, SECRET)


@pytest.mark.parametrize(("build", "problem"), [
    (lambda: AlibabaClient(KEYS, "Hangzhou"), "region 'Hangzhou'"),
    (lambda: AlibabaClient(KEYS, "cn-hangzhou", "ftp://x"), "endpoint 'ftp://x'"),
    (lambda: AlibabaClient(KEYS, "cn-hangzhou", "http://127.0.0.1/path"), "no path"),
    (lambda: AlibabaClient(KEYS, "cn-hangzhou").rpc("ecs", "drop table", {}), "action"),
    (lambda: AlibabaClient(KEYS, "cn-hangzhou").rpc("nas", "DescribeX", {}), "'nas'"),
    (lambda: AlibabaClient(KEYS, "cn-hangzhou").rpc("ecs", "DescribeX", {"a&b": "1"}),
     "parameter name"),
    (lambda: AlibabaClient(KEYS, "cn-hangzhou").rpc("ecs", "DescribeX", {"A": [1]}), "list"),
    (lambda: AlibabaClient(KEYS, "cn-hangzhou").roa("cs", "ListAddons", "addons"), "path"),
    (lambda: AlibabaClient(KEYS, "cn-hangzhou").bucket_info("Bad_Name"), "bucket"),
])
def test_arguments_are_checked_before_any_network_call(no_network, build, problem):
    with pytest.raises(ClientError, match=problem.replace("(", r"\(")):
        build()


def test_a_signed_call_passes_the_stand_in_and_a_wrong_secret_does_not():
    account = Account(stock={"cn-hangzhou-i": {"ecs.gn7i-c8g1.2xlarge"}})
    with serving(account) as stand_in:
        client = AlibabaClient(KEYS, "cn-hangzhou", stand_in.url)
        answer = client.rpc("ecs", "DescribeAvailableResource", {
            "RegionId": "cn-hangzhou", "DestinationResource": "InstanceType"})
        zone = answer["AvailableZones"]["AvailableZone"][0]
        assert zone["ZoneId"] == "cn-hangzhou-i"
        forged = AlibabaClient(Credentials(KEY_ID, "not-the-secret"), "cn-hangzhou",
                               stand_in.url)
        with pytest.raises(ApiError) as refused:
            forged.rpc("ecs", "DescribeAvailableResource", {"RegionId": "cn-hangzhou"})
        assert (refused.value.status, refused.value.code) == (400, "SignatureDoesNotMatch")
        with pytest.raises(ApiError, match="InvalidAccessKeyId.NotFound"):
            AlibabaClient(Credentials("LTAI-unknown", SECRET), "cn-hangzhou",
                          stand_in.url).rpc("ecs", "DescribeImages", {"RegionId": "x"})
        with pytest.raises(ApiError, match="InvalidVersion"):
            client.rpc("kms", "DescribeAvailableResource", {})
        assert stand_in.actions() == ["DescribeAvailableResource"] * 2  # signed ones only


def test_roa_and_oss_calls_are_signed_as_documented():
    account = Account(k8s_versions={"1.34.1-aliyun.1": True}, buckets={"taken": "other",
                                                                        "ours": "mine"})
    with serving(account) as stand_in:
        client = AlibabaClient(KEYS, "cn-beijing", stand_in.url)
        versions = client.roa("cs", "DescribeKubernetesVersionMetadata",
                              "/api/v1/metadata/versions", {"Region": "cn-beijing"})
        assert [v["version"] for v in versions] == ["1.34.1-aliyun.1"]
        assert client.bucket_info("taken") == (403, "AccessDenied")
        assert client.bucket_info("ours") == (200, "")
        assert client.bucket_info("free-name") == (404, "NoSuchBucket")
        forged = AlibabaClient(Credentials(KEY_ID, "wrong"), "cn-beijing", stand_in.url)
        assert forged.bucket_info("ours") == (403, "SignatureDoesNotMatch")


def test_an_unreachable_endpoint_is_an_api_error_not_a_traceback():
    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = AlibabaClient(KEYS, "cn-hangzhou", f"http://127.0.0.1:{port}")
    with pytest.raises(ApiError) as failed:
        client.rpc("ecs", "DescribeImages", {"RegionId": "cn-hangzhou"})
    assert failed.value.code == "Unreachable"


def test_keys_never_show_in_a_repr():
    client = AlibabaClient(Credentials("LTAI-id", "super-secret", "sts-token"), "cn-hangzhou")
    assert "super-secret" not in repr(client) and "sts-token" not in repr(client)
    assert "super-secret" not in repr(client.credentials)


# The credential chain.

def _profile(home: Path, profiles: list[dict[str, str]], current: str = "default") -> None:
    (home / ".aliyun").mkdir()
    (home / ".aliyun" / "config.json").write_text(json.dumps(
        {"current": current, "profiles": profiles}))


def test_environment_keys_come_first(tmp_path):
    _profile(tmp_path, [{"name": "default", "mode": "AK", "access_key_id": "from-profile",
                         "access_key_secret": "s"}])
    keys, source = find_credentials({"ALIBABA_CLOUD_ACCESS_KEY_ID": "from-env",
                                     "ALIBABA_CLOUD_ACCESS_KEY_SECRET": "s"}, tmp_path)
    assert (keys.access_key_id, source) == ("from-env",
                                            "environment (ALIBABA_CLOUD_ACCESS_KEY_ID)")
    keys, source = find_credentials({"ALICLOUD_ACCESS_KEY": "provider", "ALICLOUD_SECRET_KEY":
                                     "s", "ALICLOUD_SECURITY_TOKEN": "t"}, tmp_path / "none")
    assert (keys.access_key_id, keys.security_token) == ("provider", "t")


def test_the_cli_profile_is_read_by_name(tmp_path):
    _profile(tmp_path, [
        {"name": "default", "mode": "AK", "access_key_id": "ak-default",
         "access_key_secret": "s1"},
        {"name": "sts", "mode": "StsToken", "access_key_id": "ak-sts", "access_key_secret": "s2",
         "sts_token": "tok"}])
    keys, source = find_credentials({}, tmp_path)
    assert keys.access_key_id == "ak-default" and "profile 'default'" in source
    keys, _ = find_credentials({"ALIBABA_CLOUD_PROFILE": "sts"}, tmp_path)
    assert (keys.access_key_id, keys.security_token) == ("ak-sts", "tok")
    with pytest.raises(CredentialsError, match="no profile named 'gone'"):
        find_credentials({"ALIBABA_CLOUD_PROFILE": "gone"}, tmp_path)


@pytest.mark.parametrize(("content", "problem"), [
    ("{not json", "unreadable"),
    ('{"profiles": {}}', "no `profiles` list"),
    ('{"current": "x", "profiles": [{"name": "x", "mode": "AK"}]}', "without access_key_id"),
    ('{"current": "x", "profiles": [{"name": "x", "mode": "RamRoleArn"}]}', "not supported"),
])
def test_a_broken_profile_is_one_line_without_its_content(tmp_path, content, problem):
    (tmp_path / ".aliyun").mkdir()
    (tmp_path / ".aliyun" / "config.json").write_text(content)
    with pytest.raises(CredentialsError, match=problem) as failed:
        find_credentials({}, tmp_path)
    assert "\n" not in str(failed.value)


def test_the_metadata_service_is_asked_only_when_the_user_names_a_role(tmp_path):
    with serving(Account()) as stand_in:
        with pytest.raises(CredentialsError, match="no credentials"):
            find_credentials({}, tmp_path, metadata_url=stand_in.url)
        assert stand_in.metadata_hits == 0
        keys, source = find_credentials({"ALIBABA_CLOUD_ECS_METADATA": "standin-role"},
                                        tmp_path, metadata_url=stand_in.url)
        assert keys.security_token == "standin-token" and "RAM role" in source
        assert stand_in.metadata_hits > 0
        answer = AlibabaClient(keys, "cn-hangzhou", stand_in.url).rpc(
            "ecs", "DescribeImages", {"RegionId": "cn-hangzhou", "ImageId": "m-1"})
        assert answer["TotalCount"] == 0
