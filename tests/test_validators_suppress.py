"""`suppress:` names are checked against the validator registry."""

from __future__ import annotations

from gpu_infra.knowhow import VALIDATOR_NAMES, Level, run_validators

from .conftest import BASE_TRAINING, cluster_config, merged


def test_a_misspelled_suppress_name_is_an_error_naming_the_item():
    stack = cluster_config(merged(BASE_TRAINING, network={"nat_gateway": False},
                                  suppress=["no-internet-egress", "no-internet-egres"]))
    [finding] = [f for f in run_validators(stack) if f.level is Level.ERROR]
    assert not any(f.validator == "no-internet-egress" for f in run_validators(stack))
    assert (finding.validator, finding.level, finding.path) == (
        "unknown-suppress", Level.ERROR, "suppress[1]")
    assert "'no-internet-egres' is not a validator name" in finding.message
    assert "no-internet-egress" in finding.message


def test_every_registered_name_is_accepted_and_a_real_one_still_suppresses():
    stack = cluster_config(merged(BASE_TRAINING, network={"nat_gateway": False},
                                  suppress=sorted(VALIDATOR_NAMES)))
    assert run_validators(stack) == []
    assert {"no-internet-egress", "unknown-instance-type", "prod-without-kms"} <= \
        VALIDATOR_NAMES
