"""make test's workers get whole modules and whole groups of modules (tests/scheduling.py)."""

from __future__ import annotations

import pytest

from .conftest import PROJECT_DIR
from .scheduling import GROUPS, ModulesAndGroups


@pytest.mark.parametrize("nodeid, unit", [
    ("tests/test_docs.py::test_one", "tests/test_docs.py"),
    ("tests/test_docs.py::Tests::test_two[x-1]", "tests/test_docs.py"),
    ("tests/test_examples.py::test_three[a::b]", "strict-mypy"),
    ("tests/test_public_api.py::test_four", "strict-mypy"),
    ("tests/test_update_preconditions.py::test_five", "edits"),
])
def test_a_module_or_its_group_is_one_unit_of_work(nodeid, unit):
    assert ModulesAndGroups._split_scope(None, nodeid) == unit  # type: ignore[arg-type]


def test_every_grouped_module_exists_once():
    modules = [module for group in GROUPS.values() for module in group]
    assert len(set(modules)) == len(modules)
    assert [module for module in modules if not (PROJECT_DIR / module).is_file()] == []
