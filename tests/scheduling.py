"""How `make test` and `make test-fast` share the tests out over pytest-xdist's workers
(`--dist loadscope`, with the scheduler conftest.py puts in its place): the tests of one
module go to one worker, so a module's fixtures and the plans its tests share
(tests/shipped.py) are made once; and so do the modules of one group below, which share
set-up that a worker makes once for all of them. (xdist's own `xdist_group` mark cannot do
this under pytest 9: the suffix it puts on a test's id no longer sticks.)"""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

GROUPS: dict[str, tuple[str, ...]] = {
    # the strict_mypy fixture: one mypy run over every program checked as a user's
    "strict-mypy": ("tests/test_public_api.py", "tests/test_examples.py"),
    # the same edited stacks, planned once (tests/shipped.py)
    "edits": ("tests/test_change_report.py", "tests/test_change_report_ack.py",
              "tests/test_update_preconditions.py"),
}
"""Modules that go to one worker together, by the set-up they share."""

_GROUP_OF = {module: group for group, modules in GROUPS.items() for module in modules}


class ModulesAndGroups(LoadScopeScheduling):
    """Work units: a group's modules, else a module. The largest units (most tests) are
    handed out first, as with loadscope."""

    def _split_scope(self, nodeid: str) -> str:
        module = nodeid.split("::", 1)[0]
        return _GROUP_OF.get(module, module)
