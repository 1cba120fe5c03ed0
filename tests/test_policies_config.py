"""The policy config file: CrossGuard format, validated one line per problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpu_infra_policies.config import PolicyConfigError, load_policy_config, parse_policy_config
from gpu_infra_policies.rules import RULES

EXAMPLE = Path(__file__).resolve().parent.parent / "policies" / "policy-config.example.json"


def test_defaults_and_overrides():
    settings = parse_policy_config({
        "required-tags": {"requiredTags": ["Team"]},
        "spot-price-cap": "mandatory",
        "no-world-ingress": {"enforcementLevel": "advisory"}})
    assert settings["required-tags"].level == "advisory"
    assert settings["required-tags"].thresholds == {"requiredTags": ["Team"]}
    assert settings["spot-price-cap"].level == "mandatory"
    assert settings["no-world-ingress"].level == "advisory"
    assert settings["no-world-ingress"].thresholds == {"publicListenerPorts": [80, 443],
                                                       "widestPublicPrefix": 8}
    assert settings["monthly-budget"].level == "disabled"


def test_all_sets_every_level_and_rules_win():
    settings = parse_policy_config({"all": "mandatory", "required-tags": "advisory"})
    assert {s.level for name, s in settings.items() if name != "required-tags"} == {"mandatory"}
    assert settings["required-tags"].level == "advisory"


def test_example_file_is_valid():
    settings = load_policy_config(EXAMPLE)
    assert set(settings) == {rule.name for rule in RULES}
    assert settings["no-world-ingress"].level == "mandatory"
    assert settings["required-tags"].level == "advisory"


def test_every_problem_is_reported():
    with pytest.raises(PolicyConfigError) as caught:
        parse_policy_config({
            "all": "loud",
            "no-such-rule": "mandatory",
            "required-tags": {"enforcementLevel": "remediate", "requiredTags": "CostCenter",
                              "colour": "red"},
            "inference-multi-zone": {"minZones": 0, "minOnDemandBase": "one"},
            "scratch-disks-essd": {"minPerformanceLevel": "PL9", "allowedCategories": [1]},
            "spot-price-cap": 3})
    assert caught.value.problems == [
        'all: unknown enforcement level "loud"; allowed: advisory, mandatory, disabled',
        "no-such-rule: unknown rule; known: " + ", ".join(rule.name for rule in RULES),
        'required-tags.enforcementLevel: unknown enforcement level "remediate"; allowed: '
        "advisory, mandatory, disabled",
        'required-tags.requiredTags: must be an array, got "CostCenter"',
        "required-tags.colour: unknown threshold; allowed: requiredTags",
        "inference-multi-zone.minZones: must be at least 1, got 0",
        'inference-multi-zone.minOnDemandBase: must be a number, got "one"',
        'scratch-disks-essd.minPerformanceLevel: must be one of PL0, PL1, PL2, PL3, got "PL9"',
        "scratch-disks-essd.allowedCategories: item 0 must be a string, got 1",
        "spot-price-cap: must be an enforcement level or an object"]


def test_not_an_object():
    with pytest.raises(PolicyConfigError) as caught:
        parse_policy_config(["no-world-ingress"])
    assert caught.value.problems == ["the file must hold a JSON object of rule names"]


def test_unreadable_and_invalid_json(tmp_path: Path):
    with pytest.raises(PolicyConfigError) as caught:
        load_policy_config(tmp_path / "missing.json")
    assert caught.value.problems == ["cannot read: No such file or directory"]
    broken = tmp_path / "broken.json"
    broken.write_text('{"all":\n}')
    with pytest.raises(PolicyConfigError) as caught:
        load_policy_config(broken)
    assert caught.value.problems == [
        "line 2: invalid JSON: Expecting value"]
    assert caught.value.source == str(broken)


def test_thresholds_from_crossguard_arrive_as_floats():
    settings = parse_policy_config(json.loads('{"inference-multi-zone": {"minZones": 3.0}}'))
    assert settings["inference-multi-zone"].thresholds["minZones"] == 3.0
