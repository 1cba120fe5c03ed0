"""Mock-engine tests of the bake-then-fleet program; `python -m pytest` runs them."""

from pathlib import Path

import pulumi

from gpu_infra.testing import run_program

program = run_program(Path(__file__).with_name("__main__.py"))


@pulumi.runtime.test
def test_the_fleet_boots_an_image_of_the_bakery():
    def check(args):
        booted, baked = args
        assert booted == baked[0]

    return pulumi.Output.all(program["fleet"].configuration.image_id,
                             program["baked"].ids).apply(check)


def test_the_bakery_judged_its_config_and_found_nothing_to_stop():
    assert all(f.level.value != "ERROR" for f in program["bakery"].findings)
