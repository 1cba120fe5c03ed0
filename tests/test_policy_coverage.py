"""Coverage you can see: for every resource of a plan, whether a security rule reviewed it;
the advisory `unreviewed-types` finding and the summary line for the rest; the README's
coverage table generated from the rules."""

from __future__ import annotations

import re

import pytest

from gpu_infra_facts import types as t
from gpu_infra_policies.base import Resource
from gpu_infra_policies.coverage import (
    NO_CONCERN,
    coverage_markdown,
    known_types,
    rules_markdown,
    summarize,
    type_coverage,
)
from gpu_infra_policies.rules import JUDGING_RULES, RULES, evaluate
from gpu_infra_tools.cli import main
from gpu_infra_tools.review import review
from gpu_infra_tools.review.render import render_markdown, render_text

from .conftest import PROJECT_DIR, STACKS_DIR
from .shipped import plan_shipped_once, shipped_plan

SHIPPED = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml")
                 for p in STACKS_DIR.glob("Pulumi.*.yaml"))
UNKNOWN_TYPES = ["alicloud:cdn/domainNew:DomainNew",
                 "alicloud:dms/enterpriseInstance:EnterpriseInstance",
                 "random:index/randomPassword:RandomPassword"]


@pytest.fixture(scope="module", params=SHIPPED)
def shipped(request):
    return review(shipped_plan(request.param))


def test_every_resource_of_a_shipped_stack_is_accounted_for(shipped):
    resources = [r for r in shipped.plan.resources
                 if r.custom and not r.type.startswith("pulumi:providers:")]
    summary = shipped.coverage
    assert summary.resources == len(resources)
    unreviewed = {token for token, _ in summary.unreviewed_types}
    for resource in resources:
        coverage = type_coverage(resource.type, JUDGING_RULES)
        assert coverage.reviewed is (resource.type not in unreviewed), resource.type
    flagged = {v.resource_type for v in shipped.verdicts if v.rule == "unreviewed-types"}
    assert flagged == unreviewed
    assert all(v.level == "advisory" for v in shipped.verdicts if v.rule == "unreviewed-types")
    assert summary.line() in render_text(shipped) and summary.line() in render_markdown(shipped)
    assert shipped.to_json()["policyCoverage"] == summary.to_json()


def test_shipped_stacks_leave_no_type_unreviewed(shipped):
    """Every type a shipped stack creates (ACK, Cloud Backup and log collection included) is
    reviewed by a security rule or read and found to carry no concern of its own."""
    assert shipped.coverage.unreviewed_types == ()


def test_a_stack_of_unknown_types_is_reported_type_by_type():
    resources = [Resource(token, {}, f"r{i}-{j}", f"urn:r{i}-{j}")
                 for i, token in enumerate(UNKNOWN_TYPES) for j in range(i + 1)]
    resources.append(Resource("gpu-infra:network:Network", {}, "component", "urn:c"))
    resources.append(Resource("pulumi:providers:alicloud", {}, "provider", "urn:p"))
    found = [v for v in evaluate(resources) if v.rule == "unreviewed-types"]
    assert [(v.resource_type, v.resource_name) for v in found] == [
        (token, f"r{i}-0") for i, token in enumerate(UNKNOWN_TYPES)]
    assert found[2].message == ("no security rule reviews resources of this type (3: r2-0, "
                                "r2-1, r2-2); review them by hand")
    summary = summarize(resources, JUDGING_RULES)
    assert (summary.resources, summary.reviewed, summary.types) == (6, 0, 3)
    assert summary.line().startswith("Policy coverage: 0 of 6 resources (0 of 3 types)")


def test_known_types_are_reviewed_and_no_concern_types_say_why():
    assert all(reason for reason in NO_CONCERN.values())
    assert not set(NO_CONCERN) & {token for rule in JUDGING_RULES if rule.category == "security"
                                  for token in rule.reviews}
    for token in (t.SECURITY_GROUP_RULE, t.RDS_INSTANCE, t.K8S_SERVICE, t.FORWARD_ENTRY):
        assert "network exposure" in type_coverage(token, JUDGING_RULES).concerns


@pytest.mark.parametrize("name, text", [("coverage", coverage_markdown(JUDGING_RULES)),
                                        ("rules", rules_markdown(RULES))])
def test_readme_sections_are_generated_from_the_rules(name, text):
    readme = (PROJECT_DIR / "policies" / "README.md").read_text()
    section = re.search(rf"<!-- {name}:start -->\n(.*?)\n<!-- {name}:end -->", readme, re.S)
    assert section, f"policies/README.md lacks the generated {name} section"
    assert section.group(1) == text, f"regenerate the {name} section of policies/README.md"


def test_rules_table_states_each_level_and_why_advisory():
    table = rules_markdown(RULES)
    for rule in RULES:
        assert f"`{rule.name}`" in table
    assert "| `prod-customer-keys` | mandatory in prod |" in table
    assert "- `ram-no-access-keys`: some integrations" in table


def test_cli_prints_the_table_and_a_stacks_coverage(capsys, monkeypatch):
    plan_shipped_once(monkeypatch)
    assert main(["policy", "coverage"]) == 0
    assert capsys.readouterr().out == coverage_markdown(JUDGING_RULES) + "\n"
    assert main(["policy", "coverage", "image-a100",
                 "--stacks-dir", str(STACKS_DIR)]) == 0
    *lines, last = capsys.readouterr().out.splitlines()
    assert all(re.fullmatch(r"\S+:\S+:\S+ \(\d+\): (reviewed for|no security concern|NOT "
                            r"REVIEWED).*", line) for line in lines)
    not_reviewed = sum("NOT REVIEWED" in line for line in lines)
    assert last.endswith(f"; {not_reviewed} types not reviewed")
    assert last.startswith(f"{len(lines)} types")


def test_cli_bad_stack_exits_2(capsys, tmp_path):
    assert main(["policy", "coverage", "nope", "--stacks-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err


def test_the_coverage_rule_is_the_last_and_advisory():
    assert RULES[-1].name == "unreviewed-types"
    assert RULES[-1].default_enforcement == "advisory"


def test_every_alicloud_type_the_pack_names_is_in_the_sdk():
    """A misspelt token would make a rule review nothing: each alicloud token a rule
    reviews or NO_CONCERN names is a pulumi-alicloud 4.0 resource class declaring it (read
    from the SDK's source, as tests/test_type_tokens.py reads it: importing the modules and
    finding each class's source took seconds)."""
    from .test_type_tokens import sdk_file

    for token in known_types(JUDGING_RULES):
        if token.startswith("alicloud:"):
            path = sdk_file(token)
            text = path.read_text(encoding="utf-8") if path.exists() else ""
            assert f'@pulumi.type_token("{token}")' in text, f"{token} not declared in {path}"
