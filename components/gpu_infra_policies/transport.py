"""Transport security: TLS on every listener type that faces the internet, TLS versions and
ciphers (built-in and custom policies, the providers' TLS 1.0 defaults), TLS to databases,
VPN ciphers, and code fetched over plain HTTP by user data and build components."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from ipaddress import ip_address
from typing import Any

from gpu_infra_facts import types as t
from gpu_infra_facts.addresses import exposure
from gpu_infra_policies.base import (
    PORT_SCHEMA,
    Context,
    Resource,
    ResourceRule,
    Rule,
    StackRule,
    as_list,
    is_unknown,
    number,
)
from gpu_infra_policies.exposure import internet_facing
from gpu_infra_policies.texts import POD_HOLDERS, SCRIPT_INPUTS, scripts

TLS_PROTOCOLS = {t.ALB_LISTENER: ("listenerProtocol", ("HTTPS", "QUIC"), "HTTP"),
                 t.NLB_LISTENER: ("listenerProtocol", ("TCPSSL",), "TCP"),
                 t.SLB_LISTENER: ("protocol", ("https",), "http")}
"""Listener type -> (protocol input, protocols with TLS, provider default when absent)."""


def _redirects_to_tls(listener: Resource) -> bool:
    """A plain listener that only redirects to HTTPS: ALB defaultActions all Redirect with
    protocol HTTPS (or ${protocol} kept off), CLB listenerForward on."""
    props = listener.props
    if listener.type == t.SLB_LISTENER:
        return props.get("listenerForward") == "on"
    actions = [a for a in as_list(props.get("defaultActions")) if isinstance(a, Mapping)]
    return bool(actions) and all(
        str(a.get("type", "")).lower() == "redirect"
        and isinstance(a.get("redirectConfig"), Mapping)
        and str(a["redirectConfig"].get("protocol", "")).upper() == "HTTPS" for a in actions)


def tls_listeners(resources: Sequence[Resource], cfg: Mapping[str, Any],
                  _: Context) -> Iterator[tuple[Resource | None, str]]:
    """Listeners of internet-facing (or unknown) load balancers speak TLS (ALB HTTPS/QUIC,
    NLB TCPSSL, CLB https; the provider defaults are plain); a plain listener that only
    redirects to HTTPS is fine, and so is a port in `plainListenerPorts`. API Gateway APIs
    accept HTTPS only (requestConfig.protocol)."""
    allowed = {float(port) for port in cfg["plainListenerPorts"]}
    for listener in (r for r in resources if r.type in TLS_PROTOCOLS):
        key, secure, default = TLS_PROTOCOLS[listener.type]
        protocol = listener.props.get(key, default)
        port = number(listener.props.get(t.LISTENER_PORT_KEYS[listener.type]))
        if is_unknown(protocol) or protocol in secure or port in allowed \
                or _redirects_to_tls(listener):
            continue
        if internet_facing(listener, resources):
            where = f" on port {int(port)}" if port is not None else ""
            yield listener, (f"internet-facing listener{where} speaks {protocol} without TLS; "
                             f"use {' or '.join(secure)}, or redirect to HTTPS")
    for api in (r for r in resources if r.type == t.API_GATEWAY_API):
        config = api.props.get("requestConfig")
        protocol = config.get("protocol") if isinstance(config, Mapping) else None
        if protocol is None or is_unknown(protocol):
            continue
        if {p.strip().upper() for p in str(protocol).split(",")} != {"HTTPS"}:
            yield api, f"API accepts {protocol}; set requestConfig.protocol HTTPS"


MODERN_POLICIES = ("tls_cipher_policy_1_2", "tls_cipher_policy_1_2_strict",
                   "tls_cipher_policy_1_2_strict_with_1_3")
"""Built-in TLS policies of ALB, NLB and CLB without TLS 1.0 / 1.1 (the providers' list:
tls_cipher_policy_1_0, 1_1, 1_2, 1_2_strict, 1_2_strict_with_1_3)."""
OLD_POLICIES = ("tls_cipher_policy_1_0", "tls_cipher_policy_1_1")
DEFAULT_POLICY = "tls_cipher_policy_1_0"
"""What an HTTPS / TCPSSL listener gets without a policy: CLB tls_cipher_policy (provider
default), ALB and NLB securityPolicyId (API default, computed by the provider)."""
OLD_VERSIONS = ("TLSv1.0", "TLSv1.1", "TLSv1", "SSLv3")
WEAK_CIPHER = re.compile(r"(?i)(^|[-_])(RC4|3?DES|NULL|EXPORT|MD5|ANON)($|[-_])")
POLICY_INPUTS = {t.ALB_LISTENER: "securityPolicyId", t.NLB_LISTENER: "securityPolicyId",
                 t.SLB_LISTENER: "tlsCipherPolicy"}
CUSTOM_POLICIES = (t.ALB_SECURITY_POLICY, t.NLB_SECURITY_POLICY, t.SLB_TLS_POLICY,
                   t.BUCKET_HTTPS_CONFIG)


def weak_versions_and_ciphers(policy: Resource) -> list[str]:
    """What a custom TLS policy (ALB / NLB security policy, CLB TLS cipher policy, an OSS
    bucket's HTTPS config) allows that it should not: TLS 1.0 / 1.1, RC4, DES, NULL ..."""
    versions = [str(v) for v in as_list(policy.props.get("tlsVersions"))]
    ciphers = [str(c) for c in as_list(policy.props.get("ciphers") or policy.props.get(
        "cipherSuit"))]
    return sorted({v for v in versions if v in OLD_VERSIONS}) + sorted(
        {c for c in ciphers if WEAK_CIPHER.search(c)})


def tls_policies(resources: Sequence[Resource], _: Mapping[str, Any],
                 __: Context) -> Iterator[tuple[Resource | None, str]]:
    """TLS listeners (ALB HTTPS / QUIC, NLB TCPSSL, CLB https) use a policy without TLS 1.0
    and 1.1: a built-in 1.2 policy, or a custom one of the stack that is itself modern; left
    out, the policy is tls_cipher_policy_1_0. Custom policies (ALB / NLB security
    policies, CLB TLS cipher policies, OSS HTTPS configs) allow no TLS 1.0 / 1.1 and no
    weak cipher."""
    policies = [r for r in resources if r.type in CUSTOM_POLICIES]
    for policy in policies:
        weak = weak_versions_and_ciphers(policy)
        if weak and not (policy.type == t.BUCKET_HTTPS_CONFIG
                         and policy.props.get("enable") is False):
            yield policy, f"TLS policy allows {', '.join(weak)}; allow TLSv1.2 and TLSv1.3 only"
    for listener in (r for r in resources if r.type in TLS_PROTOCOLS):
        key, secure, _default = TLS_PROTOCOLS[listener.type]
        if listener.props.get(key) not in secure:
            continue
        value = listener.props.get(POLICY_INPUTS[listener.type], DEFAULT_POLICY)
        if is_unknown(value) or value in MODERN_POLICIES:
            continue
        if value in OLD_POLICIES:
            what = "the default " if value == DEFAULT_POLICY and POLICY_INPUTS[
                listener.type] not in listener.props else ""
            yield listener, (f"TLS listener uses {what}{value}, which allows TLS 1.0 / 1.1; "
                             f"set {POLICY_INPUTS[listener.type]} to {MODERN_POLICIES[1]}")


VPN_WEAK = {"ikeEncAlg": ("des", "3des"), "ikeAuthAlg": ("md5", "sha1"),
            "ikePfs": ("group1", "group2"), "ipsecEncAlg": ("des", "3des"),
            "ipsecAuthAlg": ("md5", "sha1"), "ipsecPfs": ("group1", "group2", "disabled")}
"""IPsec algorithms too weak to keep (DES / 3DES, MD5 / SHA-1 integrity, 768 / 1024-bit
Diffie-Hellman groups, no PFS)."""
VPN_DEFAULTS = {"ikeAuthAlg": "md5", "ikePfs": "group2", "ipsecAuthAlg": "md5",
                "ipsecPfs": "group2"}
"""What CreateVpnConnection picks when an algorithm is left out (API reference; the provider
leaves them to the API). UNCONFIRMED for regions launched after 2024."""
SSL_VPN_WEAK = ("none", "BF-CBC", "DES-CBC", "DES-EDE3-CBC")


def vpn_ciphers(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """IPsec connections (ikeConfig, ipsecConfig; also each tunnel of
    tunnelOptionsSpecifications) use AES, SHA-256 or better and DH group 5 / 14+; left out,
    the API picks MD5 and group 2. SSL-VPN servers encrypt (cipher not none / DES /
    Blowfish)."""
    if resource.type == t.SSL_VPN_SERVER:
        cipher = resource.props.get("cipher")
        if cipher in SSL_VPN_WEAK:
            yield f"SSL-VPN cipher {cipher} is weak; use AES-256-CBC"
        return
    if resource.type != t.VPN_CONNECTION:
        return
    configs = [("", resource.props)]
    for index, tunnel in enumerate(as_list(resource.props.get("tunnelOptionsSpecifications"))):
        if isinstance(tunnel, Mapping):
            configs.append((f"tunnelOptionsSpecifications[{index}].", {
                "ikeConfig": tunnel.get("tunnelIkeConfig"),
                "ipsecConfig": tunnel.get("tunnelIpsecConfig")}))
    for prefix, props in configs:
        for block in ("ikeConfig", "ipsecConfig"):
            value = props.get(block)
            if is_unknown(value):
                continue
            given = as_list(value)
            first = given[0] if given else value
            config: Mapping[str, Any] = first if isinstance(first, Mapping) else {}
            for key, weak in VPN_WEAK.items():
                if not key.startswith(block[:-6]):
                    continue
                algorithm = config.get(key, VPN_DEFAULTS.get(key))
                if isinstance(algorithm, str) and algorithm.lower() in weak:
                    shown = algorithm if key in config else f"{algorithm} (the API default)"
                    yield (f"{prefix}{block}.{key} is {shown}, too weak; use aes / sha256 / "
                           "group14")


DATABASE_TLS = {t.RDS_INSTANCE: ("sslAction", ("Open", "Update"), "Close"),
                t.MONGODB_INSTANCE: ("sslAction", ("Open", "Update"), "Close"),
                t.KVSTORE_INSTANCE: ("sslEnable", ("Enable", "Update"), "Disable"),
                t.POLARDB_ENDPOINT: ("sslEnabled", ("Enable",), "Disable")}
"""Database type -> (TLS input, values with TLS, the default)."""


def database_tls(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """Databases accept TLS connections (RDS / MongoDB sslAction Open, Redis sslEnable
    Enable, PolarDB endpoints sslEnabled Enable; each defaults to off)."""
    if resource.type not in DATABASE_TLS:
        return
    key, secure, default = DATABASE_TLS[resource.type]
    value = resource.props.get(key, default)
    if not is_unknown(value) and value not in secure:
        yield f"{key} is {value}: clients connect in plain text; set {secure[0]}"


URL = re.compile(r"\bhttp://([A-Za-z0-9.\-\[\]:]+)[^\s\"'`)]*")
INTRANET_SUFFIXES = (".cloud.aliyuncs.com", "-internal.aliyuncs.com", ".svc.cluster.local",
                     ".internal", "localhost")
"""Hosts that only answer inside Alibaba Cloud's network or the cluster (the VPC mirrors
mirrors.cloud.aliyuncs.com, OSS -internal endpoints, Kubernetes Services): plain HTTP there
never crosses the internet."""


def _internet_host(host: str) -> bool:
    host = host.strip("[]").rsplit(":", 1)[0] if host.count(":") == 1 else host.strip("[]")
    try:
        address = ip_address(host)
    except ValueError:
        return not host.lower().endswith(INTRANET_SUFFIXES)
    return bool(exposure([f"{address}/{address.max_prefixlen}"])[0].public)


def plain_downloads(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """User data, image build components and Cloud Assistant commands fetch nothing over
    plain HTTP from the internet (a URL http://<public host>): whoever sits on the path
    runs code on the node. The metadata service, private addresses and Alibaba Cloud's
    intranet endpoints are exempt (their traffic stays inside the cloud)."""
    if resource.type == t.ECI_CONTAINER_GROUP:
        for key in ("plainHttpRegistry", "insecureRegistry"):
            value = resource.props.get(key)
            if isinstance(value, str) and value and not is_unknown(value):
                yield (f"{key} {value}: images are pulled without (verified) TLS; use the "
                       "registry's HTTPS endpoint")
    for where, text in scripts(resource):
        hosts = sorted({m.group(1) for m in URL.finditer(text) if _internet_host(m.group(1))})
        if hosts:
            yield (f"{where} fetches over plain HTTP from {', '.join(hosts)}; use https:// "
                   "(and check a digest)")


TRANSPORT_RULES: tuple[Rule, ...] = (
    StackRule("tls-on-public-listeners", "Internet-facing listeners and APIs use TLS",
              "security", "high",
              "Use an HTTPS (ALB), TCPSSL (NLB) or https (CLB) listener with a certificate, "
              "redirect plain HTTP to HTTPS, or list the port in plainListenerPorts; set API "
              "Gateway APIs to HTTPS.", tls_listeners, concern="transport security",
              reviews=frozenset({*TLS_PROTOCOLS, *t.LOAD_BALANCERS, t.API_GATEWAY_API}),
              schema={"plainListenerPorts": {"type": "array", "items": PORT_SCHEMA,
                                             "description": "Ports where an internet-facing "
                                                            "listener may be plain. Default "
                                                            "none."}},
              defaults={"plainListenerPorts": []}),
    StackRule("tls-modern-policies", "TLS listeners and policies allow TLS 1.2+ only",
              "security", "high",
              "Set securityPolicyId / tlsCipherPolicy to tls_cipher_policy_1_2_strict (or a "
              "custom policy with TLSv1.2 and TLSv1.3 only).", tls_policies,
              concern="transport security",
              reviews=frozenset({*TLS_PROTOCOLS, *CUSTOM_POLICIES})),
    ResourceRule("vpn-strong-ciphers", "VPN connections use strong IPsec and SSL-VPN ciphers",
                 "security", "high", "Set ikeConfig / ipsecConfig to aes256, sha256 and "
                 "group14 (or better); SSL-VPN cipher AES-256-CBC.", vpn_ciphers,
                 concern="transport security",
                 reviews=frozenset({t.VPN_CONNECTION, t.SSL_VPN_SERVER})),
    ResourceRule("tls-to-databases", "Databases accept TLS connections", "security", "high",
                 "Set sslAction Open (RDS, MongoDB), sslEnable Enable (Redis) or sslEnabled "
                 "Enable (PolarDB endpoints).", database_tls, concern="transport security",
                 reviews=frozenset(DATABASE_TLS)),
    ResourceRule("no-plain-http-downloads", "User data and build steps fetch nothing over "
                 "plain HTTP from the internet", "security", "high",
                 "Fetch over https:// and check a digest; inside Alibaba Cloud use the "
                 "intranet mirrors.", plain_downloads, concern="transport security",
                 reviews=frozenset({*SCRIPT_INPUTS, *POD_HOLDERS})),
)
