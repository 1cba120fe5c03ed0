"""The source distribution: built as a release builds it (setuptools' PEP 517 backend in
an environment of its own), it holds the tests and everything they read, and tests run
from it unpacked, against its own code."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from .conftest import PROJECT_DIR

pytestmark = pytest.mark.slow  # pip, a build and a pytest process

TESTS_RUN_FROM_IT = ("tests/test_catalog.py", "tests/test_editor_schema.py",
                     "tests/test_golden_plans.py")
"""A few tests that read the data the sdist must carry: the catalog, the editor schema
(schema/), the shipped stacks and their golden plans (stacks/, tests/golden/)."""


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory) -> Path:
    """The sdist, built from the repository with the build requirement installed apart (as
    pip's build isolation does), unpacked."""
    work = tmp_path_factory.mktemp("sdist")
    backend = work / "backend"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--target",
                           str(backend), "setuptools>=77"], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    out = work / "dist"
    build = subprocess.run(
        [sys.executable, "-c", "import sys; from setuptools import build_meta; "
         f"print(build_meta.build_sdist({str(out)!r}))"],
        cwd=PROJECT_DIR, env={**os.environ, "PYTHONPATH": str(backend)}, capture_output=True,
        text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    archive = out / build.stdout.strip().splitlines()[-1]
    with tarfile.open(archive) as sdist:
        sdist.extractall(work / "src", filter="data")
    (root,) = (work / "src").iterdir()
    return root


def test_the_sdist_holds_the_tests_and_their_data(unpacked):
    for path in ("tests/conftest.py", "tests/golden/training-prod.json",
                 "stacks/Pulumi.training-prod.yaml", "schema/gpu-infra-stack.schema.json",
                 "provider/schema.json", "policies/PulumiPolicy.yaml",
                 "examples/typescript/package.json", ".github/workflows/release.yml",
                 "requirements.lock", "Makefile", "components/gpu_infra/py.typed"):
        assert (unpacked / path).is_file(), path
    assert not list(unpacked.rglob("__pycache__"))
    assert not (unpacked / "node_modules").exists()


def test_tests_run_from_the_unpacked_sdist_against_its_code(unpacked):
    components = unpacked / "components"
    env = {**os.environ, "PYTHONPATH": str(components)}
    where = subprocess.run([sys.executable, "-c", "import gpu_infra; print(gpu_infra.__file__)"],
                           cwd=unpacked, env=env, capture_output=True, text=True, timeout=120)
    assert Path(where.stdout.strip()).is_relative_to(components)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-o", "addopts=",
                           "-p", "no:cacheprovider", "-m", "not slow", *TESTS_RUN_FROM_IT],
                          cwd=unpacked, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert " passed" in done.stdout and "failed" not in done.stdout
