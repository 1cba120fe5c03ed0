"""Unit tests of your own Pulumi program that uses gpu-infra, under Pulumi's mock engine.

GpuInfraMocks answers every invoke gpu-infra's components make (the account, the
bring-your-own VPC and vSwitches, images, an ACK cluster's credential and add-ons) and gives
the resources the outputs the components read (private IPs, ARNs, DNS names, ...), so a
program's tests need five lines::

    import pulumi
    from gpu_infra.testing import GpuInfraMocks

    pulumi.runtime.set_mocks(GpuInfraMocks(region="cn-hangzhou"), preview=False)
    import my_program  # builds its layouts and blocks; test its outputs with
                       # @pulumi.runtime.test, look at GpuInfraMocks.resources

(`run_program(path, mocks)` does the last two for a program file such as `__main__.py`.)

The answers are deterministic (ids derive from type and name). The offline plan
(`gpu-infra plan`) answers with the same mocks, told the stack's own network.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import re
import runpy
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

import pulumi
from pulumi._types import is_output_type

from gpu_infra_facts import types as t
from gpu_infra_facts.ack import ADDONS
from gpu_infra_facts.regions import REGIONS, ZONES, zone_belongs_to

ACCOUNT_ID = "1234567890123456"
"""The account every answer is for (GpuInfraMocks' default)."""
IMAGE_ID = "ubuntu_22_04_x64_20G_alibase_20250101.vhd"
"""The one image ecs.getImages answers with."""

ID_PREFIXES: dict[str, str] = {
    t.VPC: "vpc-", t.VSWITCH: "vsw-", t.NAT_GATEWAY: "ngw-", t.EIP_ADDRESS: "eip-",
    t.SECURITY_GROUP: "sg-", t.INSTANCE: "i-", t.ECS_DISK: "d-", t.DEPLOYMENT_SET: "ds-",
    t.SCALING_GROUP: "asg-", t.SCALING_CONFIGURATION: "asc-", t.SCALING_RULE: "asr-",
    t.NAS_FILE_SYSTEM: "", t.KMS_KEY: "key-", t.AUTO_SNAPSHOT_POLICY: "sp-",
    t.NLB_LOAD_BALANCER: "nlb-", t.NLB_SERVER_GROUP: "sgp-", t.NLB_LISTENER: "lsn-",
    t.ALB_LOAD_BALANCER: "alb-", t.ALB_SERVER_GROUP: "sgp-", t.ALB_LISTENER: "lsn-",
}
"""Id prefixes Alibaba Cloud uses, by type token; other types get a bare hash."""
NUMERIC_IDS = frozenset({t.CMS_MONITOR_GROUP})
"""Types whose ids are decimal numbers (CloudMonitor application groups)."""


@dataclass(frozen=True)
class Vswitch:
    """A vSwitch that exists before the program: its VPC, zone and CIDR block."""

    vpc_id: str
    zone_id: str
    cidr_block: str


@dataclass(frozen=True)
class Registered:
    """One resource the program registered: type token, name, inputs (wire names,
    camelCase) and the id the mocks gave it (None for a component)."""

    type: str
    name: str
    inputs: dict[str, Any]
    id: str | None


class MockSetupError(ValueError):
    """GpuInfraMocks was given facts that no cloud could answer with (one line each)."""


class InvokeAnswerError(TypeError):
    """An answer to an invoke lacks what pulumi-alicloud's typed result needs (one line per
    missing field, by its path in the answer): the SDK would otherwise hand the program a
    plain dict and fail later with an AttributeError or TypeError."""


class GpuInfraMocks(pulumi.runtime.Mocks):
    """Mocks (pulumi.runtime.Mocks) that answer every invoke gpu-infra makes and give
    resources the outputs its components read.

    `region` (default cn-hangzhou) and its `zones` (default: every zone gpu-infra knows in
    it); `account_id` (default ACCOUNT_ID); `vpcs`: existing VPC id -> its CIDR blocks,
    primary first, and `vswitches`: existing vSwitch id -> Vswitch (both default none: what
    a `network.existing_vpc_id` stack looks up); `stack_outputs`: stack reference name (the
    image stack's `<organization>/<project>/<stack>`) -> its outputs (default none).

    `resources` lists what the program registered, in order. An invoke it has no answer for
    raises LookupError naming it; facts that contradict each other raise MockSetupError.
    """

    ANSWERED: frozenset[str] = frozenset({
        t.GET_ZONES, t.GET_REGIONS, t.GET_CALLER_IDENTITY, t.GET_NETWORKS, t.GET_SWITCHES,
        t.GET_IMAGES, t.GET_CLUSTER_CREDENTIAL, t.GET_KUBERNETES_ADDONS})
    """The invoke tokens answered (tests/test_testing_mocks.py: every one gpu-infra makes)."""

    def __init__(self, region: str = "cn-hangzhou", *, zones: Sequence[str] | None = None,
                 account_id: str = ACCOUNT_ID, vpcs: Mapping[str, Sequence[str]] | None = None,
                 vswitches: Mapping[str, Vswitch] | None = None,
                 stack_outputs: Mapping[str, Mapping[str, Any]] | None = None):
        self.region = region
        self.zones = list(zones) if zones is not None else sorted(ZONES.get(region, ()))
        self.account_id = account_id
        self.vpcs = {vpc_id: list(blocks) for vpc_id, blocks in (vpcs or {}).items()}
        self.vswitches = dict(vswitches or {})
        self.stack_outputs = {name: dict(outputs)
                              for name, outputs in (stack_outputs or {}).items()}
        problems = self._setup_problems()
        if problems:
            raise MockSetupError("\n".join(problems))
        self.resources: list[Registered] = []
        self._inputs_by_id: dict[str, dict[str, Any]] = {}
        self._hosts_used: dict[str, set[int]] = {}
        self.output_makers: dict[str, Callable[[str, dict[str, Any]], dict[str, Any]]] = {
            t.INSTANCE: self._instance_outputs,
            t.EIP_ADDRESS: lambda rid, _: {"ipAddress": _fake_ip(rid)},
            t.NAS_MOUNT_TARGET: lambda rid, _: {
                "mountTargetDomain": f"{rid[:10]}-{rid[-5:]}.{region}.nas.aliyuncs.com"},
            t.NAS_PROTOCOL_SERVICE: lambda rid, _: {"protocolServiceId": f"ptc-{rid[:12]}"},
            t.NAS_PROTOCOL_MOUNT_TARGET: lambda rid, _: {"exportId": f"exp-{rid[:12]}"},
            t.BUCKET: lambda _, __: {"extranetEndpoint": f"oss-{region}.aliyuncs.com",
                                     "intranetEndpoint": f"oss-{region}-internal.aliyuncs.com",
                                     "location": f"oss-{region}"},
            t.RAM_ROLE: lambda _, inputs: {
                "arn": f"acs:ram::{account_id}:role/{inputs.get('roleName', '')}"},
            t.KMS_KEY: lambda rid, _: {"arn": f"acs:kms:{region}:{account_id}:key/{rid}"},
            t.SCALING_RULE: lambda rid, _: {
                "ari": f"ari:acs:ess:{region}:{account_id}:scalingrule/{rid}"},
            t.ALB_LOAD_BALANCER: lambda rid, _: {"dnsName": f"{rid}.{region}.alb.aliyuncs.com"},
            t.NLB_LOAD_BALANCER: lambda rid, _: {"dnsName": f"{rid}.{region}.nlb.aliyuncs.com"},
            t.MANAGED_KUBERNETES: self._cluster_outputs,
            t.NODE_POOL: lambda rid, _: {
                "nodePoolId": f"np{rid[:16]}", "scalingGroupId": f"asg-{rid[:12]}"},
            t.STACK_REFERENCE: lambda _, inputs: self.stack_reference(str(inputs.get("name"))),
            t.NAT_GATEWAY: lambda rid, _: {
                "snatTableIds": f"stb-{rid[-12:]}", "forwardTableIds": f"ftb-{rid[-12:]}"},
            t.TLS_PRIVATE_KEY: lambda rid, _: {
                "privateKeyOpenssh": f"(mock: the key {rid} is generated at pulumi up)",
                "publicKeyOpenssh": f"ssh-ed25519 (mock: {rid})"},
        }

    def _setup_problems(self) -> list[str]:
        problems = [] if self.region in REGIONS else [
            f"region: {self.region!r} is not an Alibaba Cloud region gpu-infra knows"]
        problems += [f"zones: {zone} is not a zone of {self.region}" for zone in self.zones
                     if not zone_belongs_to(zone, self.region)]
        for vpc_id, blocks in self.vpcs.items():
            if not blocks:
                problems.append(f"vpcs.{vpc_id}: needs its CIDR block")
            problems += [f"vpcs.{vpc_id}: {block!r} is not an IPv4 CIDR block"
                         for block in blocks if not _is_cidr(block)]
        for vsw_id, vswitch in self.vswitches.items():
            if vswitch.vpc_id not in self.vpcs:
                problems.append(f"vswitches.{vsw_id}: its VPC {vswitch.vpc_id} is not in vpcs")
            if not _is_cidr(vswitch.cidr_block):
                problems.append(f"vswitches.{vsw_id}: {vswitch.cidr_block!r} is not an IPv4 "
                                "CIDR block")
        return problems

    # pulumi.runtime.Mocks

    def new_resource(self, args: pulumi.runtime.MockResourceArgs
                     ) -> tuple[str | None, dict[str, Any]]:
        """A resource's id and state (its inputs plus the outputs gpu-infra reads); a
        component gets neither."""
        inputs = dict(args.inputs)
        if not args.custom and not args.resource_id:  # a component (a read has an id)
            self.resources.append(Registered(args.typ, args.name, inputs, None))
            return None, {}
        resource_id, state = self.resource_state(args.typ, args.name, inputs)
        self.resources.append(Registered(args.typ, args.name, inputs, resource_id))
        return resource_id, state

    def call(self, args: pulumi.runtime.MockCallArgs
             ) -> tuple[dict[str, Any], list[tuple[str, str]] | None]:
        """The answer to an invoke (answer), checked against the SDK's typed result
        (InvokeAnswerError names what it lacks: an answer() of a subclass may be partial)."""
        found = self.answer(args.token, dict(args.args))
        problems = answer_problems(args.token, found)
        if problems:
            raise InvokeAnswerError(f"the answer to {args.token} lacks what pulumi-alicloud's "
                                    "result needs:\n" + "\n".join(problems))
        return found, []

    # the answers

    def resource_state(self, type_token: str, name: str,
                       inputs: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The id and full state of a created resource."""
        digest = _digest(f"{type_token}/{name}")
        resource_id = str(int(digest, 16) % 10**8) if type_token in NUMERIC_IDS else \
            ID_PREFIXES.get(type_token, "") + digest
        self._inputs_by_id[resource_id] = inputs
        maker = self.output_makers.get(type_token)
        return resource_id, {**inputs, **(maker(resource_id, inputs) if maker else {})}

    def stack_reference(self, name: str) -> dict[str, Any]:
        """A stack reference's state: the outputs given for `name` (none if not given)."""
        return {"outputs": self.stack_outputs.get(name, {}), "secretOutputNames": []}

    def answer(self, token: str, args: dict[str, Any]) -> dict[str, Any]:
        """The answer to the invoke `token` with `args`, in the provider's wire form."""
        answers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            t.GET_ZONES: self._zones, t.GET_REGIONS: self._regions,
            t.GET_CALLER_IDENTITY: self._caller, t.GET_NETWORKS: self._networks,
            t.GET_SWITCHES: self._switches, t.GET_IMAGES: self._images,
            t.GET_CLUSTER_CREDENTIAL: self._credential,
            t.GET_KUBERNETES_ADDONS: self._addons}
        if token not in answers:
            raise LookupError(f"gpu_infra.testing.GpuInfraMocks has no answer for invoke "
                              f"{token}; it answers {', '.join(sorted(answers))} (subclass "
                              "it and extend answer() for your program's own invokes)")
        return answers[token](args)

    def _zones(self, _: dict[str, Any]) -> dict[str, Any]:
        return {"ids": self.zones, "id": self.region, "zones": [
            {"id": zone, "localName": zone, "multi": False, "multiZoneIds": [],
             "slbSlaveZoneIds": [], "availableInstanceTypes": [],
             "availableResourceCreations": ["Instance", "Disk", "VSwitch"],
             "availableDiskCategories": ["cloud_essd", "cloud_auto"]} for zone in self.zones]}

    def _regions(self, _: dict[str, Any]) -> dict[str, Any]:
        return {"id": self.region, "ids": [self.region], "regions": [
            {"id": self.region, "regionId": self.region, "localName": self.region}]}

    def _caller(self, _: dict[str, Any]) -> dict[str, Any]:
        return {"accountId": self.account_id, "arn": f"acs:ram::{self.account_id}:root",
                "identityType": "Account", "id": self.account_id}

    def _networks(self, args: dict[str, Any]) -> dict[str, Any]:
        """The given VPCs among `ids`."""
        vpcs = [{"id": vpc_id, "vpcId": vpc_id, "vpcName": vpc_id, "cidrBlock": blocks[0],
                 "secondaryCidrBlocks": blocks[1:], "userCidrs": [], "status": "Available",
                 "isDefault": False, "regionId": self.region, "creationTime": "",
                 "description": "", "dhcpOptionsSetId": "", "dhcpOptionsSetStatus": "",
                 "dnsHostnameStatus": "", "ipv6CidrBlock": "", "resourceGroupId": "",
                 "routeTableId": "", "routerId": "", "vrouterId": "", "tags": {},
                 "vswitchIds": [vsw_id for vsw_id, vsw in self.vswitches.items()
                                if vsw.vpc_id == vpc_id]}
                for vpc_id, blocks in self.vpcs.items() if vpc_id in (args.get("ids") or [])]
        return {"id": self.region, "ids": [v["id"] for v in vpcs],
                "names": [v["vpcName"] for v in vpcs], "vpcs": vpcs}

    def _switches(self, args: dict[str, Any]) -> dict[str, Any]:
        """The given vSwitches among `ids`."""
        vswitches = [
            {"id": vsw_id, "vswitchId": vsw_id, "zoneId": vsw.zone_id,
             "cidrBlock": vsw.cidr_block, "vpcId": vsw.vpc_id, "vswitchName": vsw_id,
             "name": vsw_id, "status": "Available", "isDefault": False,
             "availableIpAddressCount": 0, "creationTime": "", "description": "",
             "enableIpv6": False, "ipv6CidrBlock": "", "resourceGroupId": "",
             "routeTableId": "", "tags": {}}
            for vsw_id, vsw in self.vswitches.items() if vsw_id in (args.get("ids") or [])]
        return {"id": self.region, "ids": [v["id"] for v in vswitches],
                "names": [v["name"] for v in vswitches], "vswitches": vswitches}

    def _images(self, _: dict[str, Any]) -> dict[str, Any]:
        """One image, whatever the filter (a named custom image, the newest bake)."""
        return {"id": IMAGE_ID, "ids": [IMAGE_ID], "images": [
            {"id": IMAGE_ID, "imageId": IMAGE_ID, "name": IMAGE_ID, "osType": "linux",
             "architecture": "x86_64", "creationTime": "2025-01-01T00:00:00Z",
             "description": "", "diskDeviceMappings": [], "imageOwnerAlias": "system",
             "imageVersion": "", "isCopied": False, "isSelfShared": "",
             "isSubscribed": False, "isSupportIoOptimized": True, "osName": "Ubuntu 22.04",
             "osNameEn": "Ubuntu 22.04", "platform": "Ubuntu", "productCode": "",
             "progress": "100%", "size": 20, "state": "Available", "status": "Available",
             "usage": "instance"}]}

    def _credential(self, args: dict[str, Any]) -> dict[str, Any]:
        """A kubeconfig-shaped answer with no credential in it."""
        cluster_id = str(args.get("clusterId", ""))
        kubeconfig = (f"apiVersion: v1\nkind: Config\nclusters:\n- name: {cluster_id}\n"
                      f"  cluster: {{server: 'https://{cluster_id}.mock.invalid:6443'}}\n"
                      "contexts: []\nusers: []\n")
        return {"id": cluster_id, "clusterId": cluster_id, "clusterName": cluster_id,
                "kubeConfig": kubeconfig, "expiration": "2026-01-01T00:00:00Z",
                "certificateAuthority": {}, "temporaryDurationMinutes": 240}

    def _addons(self, args: dict[str, Any]) -> dict[str, Any]:
        """Every add-on gpu-infra pins, offered at its pinned version."""
        names = sorted(ADDONS)
        return {"id": str(args.get("clusterId", "")), "clusterId": args.get("clusterId"),
                "ids": names, "names": names, "addons": [
                    {"name": name, "currentVersion": "", "nextVersion": ADDONS[name].version,
                     "required": False, "currentConfig": "", "supportedActions": []}
                    for name in names]}

    # resource outputs

    def _instance_outputs(self, resource_id: str, inputs: dict[str, Any]) -> dict[str, Any]:
        """A private IP that depends on the instance, not on when it registered (the engine
        registers from a thread pool): host N+1 of its vSwitch for a name ending in N (the
        first 3 addresses are the cloud's), else a host from the id's digest; the next free
        one if taken."""
        vswitch_id = inputs.get("vswitchId", "")
        known = self.vswitches.get(vswitch_id)
        cidr = IPv4Network(known.cidr_block if known else self._inputs_by_id.get(
            vswitch_id, {}).get("cidrBlock", "10.0.0.0/16"))
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
        region = self.region
        return {"rrsaMetadata": {
            "enabled": True,
            "ramOidcProviderArn": f"acs:ram::{self.account_id}:oidc-provider/ack-rrsa-"
                                  f"{resource_id}",
            "ramOidcProviderName": f"ack-rrsa-{resource_id}",
            "rrsaOidcIssuerUrl": f"https://oidc-ack-{region}.oss-{region}.aliyuncs.com/"
                                 f"{resource_id}"}}


def answer_problems(token: str, answer: Mapping[str, Any]) -> list[str]:
    """What `answer` (wire names) lacks of the fields pulumi-alicloud's typed result of the
    invoke `token` requires, nested results included (`vpcs[0]: lacks cidrBlock`); empty
    for a complete answer or a token of another package."""
    result_type = _result_type(token)
    return [] if result_type is None else _missing(result_type, answer, "")


def _result_type(token: str) -> type | None:
    """`alicloud:vpc/getNetworks:getNetworks` -> pulumi_alicloud.vpc.get_networks's
    GetNetworksResult (None for another package or an unknown function)."""
    package, _, rest = token.partition(":")
    module, _, function = rest.partition(":")[0].partition("/")
    if package != "alicloud" or not function:
        return None
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", function).lower()
    try:  # the package's function: importing its module by name would shadow it
        package_module = importlib.import_module(
            "pulumi_alicloud" + ("" if module == "index" else f".{module}"))
    except ImportError:
        return None
    sdk_function = getattr(package_module, snake, None)
    found = getattr(sdk_function, "__globals__", {}).get(
        f"{function[0].upper()}{function[1:]}Result")
    return found if isinstance(found, type) else None


def _missing(result_type: type, value: Any, path: str) -> list[str]:
    """The required fields of `result_type` (an SDK output type: the arguments of its
    __init__ without a default) missing from the dict `value`, recursively through the
    nested output types its properties return."""
    if not isinstance(value, Mapping):
        return [f"{path or 'the answer'}: is {type(value).__name__}, not an object"]
    problems: list[str] = []
    initializer = vars(result_type)["__init__"]
    parameters = list(inspect.signature(initializer).parameters.items())[1:]  # self
    for name, parameter in parameters:
        key = re.sub(r"_([a-z0-9])", lambda match: match.group(1).upper(), name)
        where = f"{path}.{key}" if path else key
        if key not in value:
            if parameter.default is inspect.Parameter.empty:
                problems.append(f"{path or 'the answer'}: lacks {key}")
            continue
        nested = _output_type_in(_returns(result_type, name))
        if nested is None or value[key] is None:
            continue
        items = enumerate(value[key]) if isinstance(value[key], list) else [(None, value[key])]
        for index, item in items:
            problems += _missing(nested, item, where if index is None else f"{where}[{index}]")
    return problems


def _returns(result_type: type, name: str) -> Any:
    """What the property `name` of an SDK output type is annotated to return (None if it
    has none or it cannot be resolved)."""
    getter = getattr(result_type, name, None)
    if not isinstance(getter, property) or getter.fget is None:
        return None
    try:
        return typing.get_type_hints(getter.fget).get("return")
    except (NameError, TypeError, AttributeError):
        return None


def _output_type_in(annotation: Any) -> type | None:
    """The SDK output type inside an annotation (`Sequence[X]`, `Optional[X]`, `X`)."""
    if isinstance(annotation, type) and is_output_type(annotation):
        return annotation
    for argument in typing.get_args(annotation):
        found = _output_type_in(argument)
        if found is not None:
            return found
    return None


def run_program(path: str | Path, mocks: GpuInfraMocks | None = None) -> dict[str, Any]:
    """Run the Pulumi program file `path` (e.g. a project's `__main__.py`) under `mocks`
    (default GpuInfraMocks()), as an update rather than a preview; its module globals, for
    tests decorated with @pulumi.runtime.test to read its resources and outputs from."""
    pulumi.runtime.set_mocks(mocks or GpuInfraMocks(), preview=False)
    return runpy.run_path(str(path))


def _is_cidr(text: str) -> bool:
    try:
        IPv4Network(text)
    except ValueError:
        return False
    return True


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:17]


def _fake_ip(seed: str) -> str:
    digest = hashlib.sha1(seed.encode()).digest()
    return f"47.{digest[0]}.{digest[1]}.{max(digest[2], 1)}"


__all__ = ["ACCOUNT_ID", "GpuInfraMocks", "InvokeAnswerError", "MockSetupError", "Registered",
           "Vswitch", "answer_problems", "run_program"]
