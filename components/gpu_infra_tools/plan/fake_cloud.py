"""What the offline plan answers in place of Alibaba Cloud: realistic ids, the outputs
programs read, and the invokes they make. Answers derive from the stack config, so nothing
resolves to None."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

from gpu_infra.schema import ClusterConfig
from gpu_infra_facts import types as t
from gpu_infra_facts.ack import ADDONS
from gpu_infra_tools.plan.stack_refs import stack_reference_outputs

ACCOUNT_ID = "1234567890123456"
"""The fake account id of every offline plan."""

ID_PREFIXES: dict[str, str] = {
    t.VPC: "vpc-",
    t.VSWITCH: "vsw-",
    t.NAT_GATEWAY: "ngw-",
    t.EIP_ADDRESS: "eip-",
    t.SECURITY_GROUP: "sg-",
    t.INSTANCE: "i-",
    t.ECS_DISK: "d-",
    t.DEPLOYMENT_SET: "ds-",
    t.SCALING_GROUP: "asg-",
    t.SCALING_CONFIGURATION: "asc-",
    t.SCALING_RULE: "asr-",
    t.NAS_FILE_SYSTEM: "",
    t.KMS_KEY: "key-",
    t.AUTO_SNAPSHOT_POLICY: "sp-",
    t.NLB_LOAD_BALANCER: "nlb-",
    t.NLB_SERVER_GROUP: "sgp-",
    t.NLB_LISTENER: "lsn-",
    t.ALB_LOAD_BALANCER: "alb-",
    t.ALB_SERVER_GROUP: "sgp-",
    t.ALB_LISTENER: "lsn-",
}
"""Id prefixes Alibaba Cloud uses, by type token; other types get a bare hash."""
NUMERIC_IDS = frozenset({t.CMS_MONITOR_GROUP})
"""Types whose ids are decimal numbers (CloudMonitor application groups)."""


class FakeCloud:
    """Deterministic ids and outputs for one plan."""

    def __init__(self, cluster: ClusterConfig, stacks_dir: Path | None = None):
        """`stacks_dir`: where the stack files of stack references are (the planned stack's
        directory); None: stack references are an error."""
        self.cluster = cluster
        self.stacks_dir = stacks_dir
        self._inputs_by_id: dict[str, dict[str, Any]] = {}
        self._hosts_used: dict[str, set[int]] = {}
        self.output_makers: dict[str, Callable[[str, dict[str, Any]], dict[str, Any]]] = {
            t.INSTANCE: self._instance_outputs,
            t.EIP_ADDRESS: lambda rid, _: {"ipAddress": _fake_ip(rid)},
            t.NAS_MOUNT_TARGET: self._mount_target_outputs,
            t.NAS_PROTOCOL_SERVICE: lambda rid, _: {
                "protocolServiceId": f"ptc-{rid[:12]}"},
            t.NAS_PROTOCOL_MOUNT_TARGET: lambda rid, _: {
                "exportId": f"exp-{rid[:12]}"},
            t.BUCKET: self._bucket_outputs,
            t.RAM_ROLE: lambda _, inputs: {
                "arn": f"acs:ram::{ACCOUNT_ID}:role/{inputs.get('roleName', '')}"},
            t.KMS_KEY: lambda rid, _: {
                "arn": f"acs:kms:{self.cluster.region}:{ACCOUNT_ID}:key/{rid}"},
            t.SCALING_RULE: lambda rid, _: {
                "ari": f"ari:acs:ess:{self.cluster.region}:{ACCOUNT_ID}:scalingrule/{rid}"},
            t.ALB_LOAD_BALANCER: self._dns_outputs("alb"),
            t.NLB_LOAD_BALANCER: self._dns_outputs("nlb"),
            t.MANAGED_KUBERNETES: self._cluster_outputs,
            t.NODE_POOL: lambda rid, _: {
                "nodePoolId": f"np{rid[:16]}", "scalingGroupId": f"asg-{rid[:12]}"},
            t.STACK_REFERENCE: lambda _, inputs: stack_reference_outputs(
                str(inputs.get("name", "")), self.stacks_dir),
            t.NAT_GATEWAY: lambda rid, _: {
                "snatTableIds": f"stb-{rid[-12:]}", "forwardTableIds": f"ftb-{rid[-12:]}"},
            t.TLS_PRIVATE_KEY: lambda rid, _: {
                "privateKeyOpenssh": f"(offline plan: the key {rid} is generated at pulumi up)",
                "publicKeyOpenssh": f"ssh-ed25519 (offline plan: {rid})"},
        }

    def new_resource(self, type_token: str, name: str,
                     inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The id and full state of a created resource."""
        digest = _digest(f"{type_token}/{name}")
        resource_id = str(int(digest, 16) % 10**8) if type_token in NUMERIC_IDS else \
            ID_PREFIXES.get(type_token, "") + digest
        self._inputs_by_id[resource_id] = inputs
        maker = self.output_makers.get(type_token)
        state = {**inputs, **(maker(resource_id, inputs) if maker else {})}
        return resource_id, state

    def call(self, token: str, args: dict[str, Any]) -> dict[str, Any]:
        """Answer an invoke from the stack config; unknown invokes are an error."""
        if token == t.GET_ZONES:
            zones = self.cluster.network.zones
            return {"ids": zones, "id": self.cluster.region, "zones": [
                {"id": zone, "localName": zone, "multi": False, "multiZoneIds": [],
                 "slbSlaveZoneIds": [], "availableInstanceTypes": [],
                 "availableResourceCreations": ["Instance", "Disk", "VSwitch"],
                 "availableDiskCategories": ["cloud_essd", "cloud_auto"]} for zone in zones]}
        if token == t.GET_CALLER_IDENTITY:
            return {"accountId": ACCOUNT_ID, "arn": f"acs:ram::{ACCOUNT_ID}:root",
                    "identityType": "Account", "id": ACCOUNT_ID}
        if token == t.GET_SWITCHES:
            return self._existing_vswitches(args.get("ids") or [])
        if token == t.GET_IMAGES:
            image_id = "ubuntu_22_04_x64_20G_alibase_20250101.vhd"
            return {"id": image_id, "ids": [image_id], "images": [
                {"id": image_id, "imageId": image_id, "name": image_id,
                 "osType": "linux", "architecture": "x86_64"}]}
        if token == t.GET_CLUSTER_CREDENTIAL:
            return _cluster_credential(str(args.get("clusterId", "")))
        if token == t.GET_KUBERNETES_ADDONS:
            names = sorted(ADDONS)
            return {"id": str(args.get("clusterId", "")), "clusterId": args.get("clusterId"),
                    "ids": names, "names": names, "addons": [
                        {"name": name, "currentVersion": "", "nextVersion": ADDONS[name].version,
                         "required": False, "currentConfig": "", "supportedActions": []}
                        for name in names]}
        if token == t.GET_REGIONS:
            region = self.cluster.region
            return {"ids": [region], "regions": [{"id": region, "regionId": region,
                                                  "localName": region}]}
        raise LookupError(f"the offline plan has no answer for invoke {token}; "
                          "add one to components/gpu_infra_tools/plan/fake_cloud.py")

    def _existing_vswitches(self, ids: list[str]) -> dict[str, Any]:
        """Bring-your-own vSwitches, as configured (zone and CIDR from the network section)."""
        network = self.cluster.network
        zone_of = {vsw_id: zone for zone, vsw_id in network.existing_vswitch_ids.items()}
        vswitches: list[dict[str, Any]] = [
            {"id": vsw_id, "vswitchId": vsw_id, "zoneId": zone_of[vsw_id],
             "cidrBlock": str(network.vswitch_cidr(zone_of[vsw_id])),
             "vpcId": network.existing_vpc_id, "vswitchName": vsw_id, "name": vsw_id,
             "status": "Available", "isDefault": False, "availableIpAddressCount": 0,
             "creationTime": "", "description": "", "enableIpv6": False,
             "ipv6CidrBlock": "", "resourceGroupId": "", "routeTableId": "", "tags": {}}
            for vsw_id in ids if vsw_id in zone_of]
        return {"id": network.existing_vpc_id or "", "ids": [v["id"] for v in vswitches],
                "names": [v["name"] for v in vswitches], "vswitches": vswitches}

    def _instance_outputs(self, resource_id: str, inputs: dict[str, Any]) -> dict[str, Any]:
        """A private IP that depends on the instance, not on when it registered (the engine
        registers from a thread pool): host N+1 of its vSwitch for a name ending in N (the
        first 3 addresses are the cloud's), else a host from the id's digest; the next free
        one if taken."""
        vswitch = self._inputs_by_id.get(inputs.get("vswitchId", ""), {})
        cidr = IPv4Network(vswitch.get("cidrBlock", "10.0.0.0/16"))
        name = str(inputs.get("instanceName") or resource_id)
        index = re.search(r"(\d+)$", name)
        usable = cidr.num_addresses - 5
        host = (int(index.group(1)) if index else int(_digest(resource_id), 16)) % usable
        used = self._hosts_used.setdefault(str(cidr), set())
        while host in used:
            host = (host + 1) % usable
        used.add(host)
        return {"privateIp": str(cidr[host + 4]), "status": "Running",
                "instanceName": inputs.get("instanceName", resource_id)}

    def _cluster_outputs(self, resource_id: str, _: dict[str, Any]) -> dict[str, Any]:
        """RRSA metadata of an ACK cluster (the OIDC provider ACK creates for it)."""
        region = self.cluster.region
        return {"rrsaMetadata": {
            "enabled": True,
            "ramOidcProviderArn": f"acs:ram::{ACCOUNT_ID}:oidc-provider/ack-rrsa-{resource_id}",
            "ramOidcProviderName": f"ack-rrsa-{resource_id}",
            "rrsaOidcIssuerUrl": f"https://oidc-ack-{region}.oss-{region}.aliyuncs.com/"
                                 f"{resource_id}"}}

    def _mount_target_outputs(self, resource_id: str, inputs: dict[str, Any]) -> dict[str, Any]:
        return {"mountTargetDomain": f"{resource_id[:10]}-{resource_id[-5:]}."
                                     f"{self.cluster.region}.nas.aliyuncs.com"}

    def _bucket_outputs(self, _: str, inputs: dict[str, Any]) -> dict[str, Any]:
        region = self.cluster.region
        return {"extranetEndpoint": f"oss-{region}.aliyuncs.com",
                "intranetEndpoint": f"oss-{region}-internal.aliyuncs.com",
                "location": f"oss-{region}"}

    def _dns_outputs(self, product: str) -> Callable[[str, dict[str, Any]], dict[str, Any]]:
        return lambda rid, _: {"dnsName": f"{rid}.{self.cluster.region}.{product}.aliyuncs.com"}


def _cluster_credential(cluster_id: str) -> dict[str, Any]:
    """A kubeconfig-shaped answer with no credential in it (the plan never talks to a
    cluster)."""
    kubeconfig = (f"apiVersion: v1\nkind: Config\nclusters:\n- name: {cluster_id}\n"
                  f"  cluster: {{server: 'https://{cluster_id}.offline-plan.invalid:6443'}}\n"
                  "contexts: []\nusers: []\n")
    return {"id": cluster_id, "clusterId": cluster_id, "clusterName": cluster_id,
            "kubeConfig": kubeconfig, "expiration": "2026-01-01T00:00:00Z",
            "certificateAuthority": {}, "temporaryDurationMinutes": 240}


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:17]


def _fake_ip(seed: str) -> str:
    digest = hashlib.sha1(seed.encode()).digest()
    return f"47.{digest[0]}.{digest[1]}.{max(digest[2], 1)}"
