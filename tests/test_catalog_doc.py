"""The catalog against Alibaba's instance-family page (issue 38 point 3): the rows of
tests/data/gpudoc_instance_types.csv, transcribed from the page (cited in its header)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from gpu_infra import catalog

DOC_FILE = Path(__file__).with_name("data") / "gpudoc_instance_types.csv"
NOT_CARRIED = {"gn8v-tee": "Alibaba Cloud Linux 3 images only"}
"""Families of the page the catalog leaves out, with the reason its header gives."""


def documented() -> dict[str, dict[str, str]]:
    with DOC_FILE.open(encoding="utf-8") as handle:
        rows = csv.DictReader(line for line in handle if not line.startswith("#"))
        return {row["type"]: row for row in rows}


DOC = documented()
FROM_PAGE = [entry for entry in catalog.entries() if "GPUDOC" in entry.sources]


@pytest.mark.parametrize("entry", FROM_PAGE, ids=lambda entry: entry.type)
def test_every_size_the_catalog_takes_from_the_page_is_a_row_of_it(entry):
    row = DOC.get(entry.type)
    assert row is not None, f"{entry.type} is not on the instance-family page"
    assert (entry.family, entry.vcpu, entry.memory_gib, entry.gpu_count,
            entry.gpu_memory_gib) == (row["family"], int(row["vcpu"]),
                                      float(row["memory_gib"]), float(row["gpus"]),
                                      float(row["gpu_memory_gb"]))
    assert (entry.availability, entry.recommended) == (row["availability"],
                                                       row["recommended"] == "yes")
    assert not {"vcpu", "memory_gib"} & set(entry.unconfirmed)


def test_every_row_of_a_carried_family_is_in_the_catalog():
    carried = {entry.family for entry in FROM_PAGE}
    missing = [name for name, row in DOC.items()
               if row["family"] in carried and catalog.get(name) is None]
    assert missing == []
    assert {row["family"] for row in DOC.values()} - carried == set(NOT_CARRIED)
    header = catalog.CATALOG_FILE.read_text(encoding="utf-8")
    assert all(f"{family} ({why}" in header for family, why in NOT_CARRIED.items())


def test_the_size_the_page_does_not_have_is_gone():
    assert catalog.get("ecs.gn8v-4x.12xlarge") is None
    assert {e.type for e in catalog.entries() if e.family == "gn8v" and e.gpu_count == 4} == {
        "ecs.gn8v-4x.8xlarge", "ecs.gn8v-4x.24xlarge"}


def test_families_off_the_page_name_their_own_source():
    """ebmgn7ex (Chinese documentation) and the vGPU families (their own pages)."""
    off_page = {entry.family for entry in catalog.entries() if "GPUDOC" not in entry.sources}
    assert off_page == {"ebmgn7ex", "vgn7i-vws", "sgn7i-vws"}
    assert all(entry.sources for entry in catalog.entries())


def test_driver_branches_follow_the_eci_page():
    """ECI "Create an instance with a specified GPU type": gn7*, gn6*, gn5*: 470, 535, 550;
    gn8is: 535, 550; vws: GRID 470; the rest are not listed there."""
    branches = {entry.family: entry.driver_branches for entry in catalog.entries()}
    for family in ("gn7e", "gn7i", "gn7s", "gn7", "gn6v", "gn6e", "gn6i", "gn5i", "gn5"):
        assert branches[family] == (470, 535, 550), family
    assert branches["gn8is"] == (535, 550)
    assert branches["vgn7i-vws"] == branches["sgn7i-vws"] == (470,)
    assert branches["gn8v"] is None and branches["ebmgn8v"] is None
