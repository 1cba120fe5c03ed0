"""Parity with the anchors (gpu_infra_policies.parity): every Checkov CKV_ALI_* check and KICS
alicloud query is matched by a rule that exists or says why none applies; the anchors'
positive and negative examples (tests/data/anchor_examples.json, translated to
pulumi-alicloud inputs) draw a violation, or none, of those rules; the README's parity
table is generated from the list."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpu_infra_policies.base import Context, Resource
from gpu_infra_policies.parity import ANCHORS, CHECKOV_COMMIT, parity_markdown
from gpu_infra_policies.rules import RULES_BY_NAME, evaluate

from .conftest import PROJECT_DIR
from .rule_helpers import with_profile

DATA = json.loads((Path(__file__).parent / "data" / "anchor_examples.json").read_text())
BY_ID = {anchor.id: anchor for anchor in ANCHORS}
CASES = [(case["anchor"], kind, example) for case in DATA["cases"]
         for kind in ("positive", "negative") for example in case[kind]]
ENVIRONMENTS = {case["anchor"]: case.get("environment") for case in DATA["cases"]}


def resources_of(examples: list[dict]) -> list[Resource]:
    return [Resource(e["type"], e["props"], e["name"], f"urn:{e['name']}", id=e.get("id"))
            for e in examples]


def test_every_anchor_names_rules_that_exist_or_why_not():
    assert len({a.id for a in ANCHORS}) == len(ANCHORS)
    for anchor in ANCHORS:
        assert all(rule in RULES_BY_NAME for rule in anchor.rules), anchor.id
        assert anchor.rules or anchor.note, anchor.id
    assert DATA["checkov"]["commit"] == CHECKOV_COMMIT


def test_every_matched_anchor_has_translated_examples():
    translated = {case["anchor"] for case in DATA["cases"]}
    assert translated <= set(BY_ID)
    assert {a.id for a in ANCHORS if a.rules} == translated


@pytest.mark.parametrize("anchor, kind, example", CASES,
                         ids=[f"{anchor}-{kind}-{example[0]['name']}"
                              for anchor, kind, example in CASES])
def test_anchor_examples(anchor, kind, example):
    context = with_profile(Context(environment=ENVIRONMENTS[anchor]))
    found = {v.rule for v in evaluate(resources_of(example), context=context)
             if v.resource_name == example[0]["name"] and v.rule in BY_ID[anchor].rules}
    assert bool(found) is (kind == "positive"), found


def test_readme_parity_section_is_generated_from_the_anchors():
    readme = (PROJECT_DIR / "policies" / "README.md").read_text()
    section = re.search(r"<!-- parity:start -->\n(.*?)\n<!-- parity:end -->", readme, re.S)
    assert section and section.group(1) == parity_markdown()
