"""Reserved-capacity traps as guard rails: reservations a fleet cannot use (spot nodes, more
than it runs) are an ERROR in prod and a WARNING elsewhere, and a clone never copies them."""

from __future__ import annotations

import pytest
import yaml

from gpu_infra.knowhow import run_validators
from gpu_infra_tools.cli import main

from .conftest import BASE_TRAINING, cluster_config, merged, write_stack

RULE = "reserved-capacity-unused"
COUPONS = {"reserved_instances": {"count": 1}}
ASSURANCE = {"guarantee": {"kind": "elasticity_assurance", "count": 1}}


def findings(cluster: dict) -> list[tuple[str, str]]:
    return [(f.level.value, f.path) for f in run_validators(cluster_config(cluster))
            if f.validator == RULE]


@pytest.mark.parametrize("reserved", [COUPONS, ASSURANCE])
def test_reservations_on_a_one_node_spot_dev_fleet_warn(reserved):
    cluster = merged(BASE_TRAINING, fleet={**BASE_TRAINING["fleet"], "nodes": 1,
                                           "capacity": "spot", "interruptible": True,
                                           "reserved": reserved},
                     storage={"shared_fs": {"enabled": True}})
    [(level, path)] = findings(cluster)
    assert level == "WARNING" and path.endswith(".count")


def test_reservations_spot_nodes_never_use_are_an_error_in_prod():
    cluster = merged(BASE_TRAINING, environment="prod", fleet={
        **BASE_TRAINING["fleet"], "capacity": "spot", "interruptible": True,
        "reserved": {"reserved_instances": {"count": 2}}},
        storage={"shared_fs": {"enabled": True}})
    assert findings(cluster) == [("ERROR", "fleet.reserved.reserved_instances.count")]


def test_more_reserved_than_nodes_warns_even_in_prod():
    """A scale-in can leave it so, and a reservation is never released: a WARNING (buying
    more is the change report's reserved-capacity ERROR in prod)."""
    cluster = merged(BASE_TRAINING, environment="prod", fleet={
        **BASE_TRAINING["fleet"], "reserved": {"reserved_instances": {"count": 3}}})
    assert findings(cluster) == [("WARNING", "fleet.reserved.reserved_instances.count")]


@pytest.mark.parametrize("environment", ["dev", "prod"])
def test_a_thousand_reserved_for_eight_nodes_is_a_finding_with_its_field_path(
        environment, tmp_path, capsys):
    """Hostile input (issue 28): validate names the field and the idle part, in one line."""
    write_stack(tmp_path, "many", merged(BASE_TRAINING, environment=environment, fleet={
        **BASE_TRAINING["fleet"], "nodes": 8, "reserved": {"reserved_instances": {
            "count": 1000}}}))
    assert main(["validate", str(tmp_path / "Pulumi.many.yaml")]) == 0
    [line] = [line for line in capsys.readouterr().err.splitlines() if RULE in line]
    assert "fleet.reserved.reserved_instances.count" in line
    assert "1000 reserved, more than the 8 node(s) the fleet runs" in line


def test_reservations_the_on_demand_nodes_use_pass():
    cluster = merged(BASE_TRAINING, fleet={**BASE_TRAINING["fleet"], "reserved": {
        "reserved_instances": {"count": 2}}})
    assert findings(cluster) == []


def test_clone_drops_the_reservations_and_says_so(tmp_path, capsys):
    source = merged(BASE_TRAINING, name="train-a", fleet={
        **BASE_TRAINING["fleet"], "reserved": {"reserved_instances": {"count": 2}}})
    write_stack(tmp_path, "train-a", source)
    assert main(["clone", "train-a", "train-b", "--stacks-dir", str(tmp_path)]) == 0
    written = yaml.safe_load((tmp_path / "Pulumi.train-b.yaml").read_text())
    assert "reserved" not in written["config"]["gpu-infra:cluster"]["fleet"]
    assert "dropped fleet.reserved" in capsys.readouterr().out
