"""gpu_infra_node: what the node tools' Python programs share (the node tools install it
beside them). Python 3.6+ standard library."""

import importlib.machinery
import importlib.util
import os
from typing import Any

ROOT = os.environ.get("GPU_INFRA_ROOT", "")
STATE_DIR = ROOT + "/var/lib/gpu-infra"


def api() -> Any:
    """gpu-infra-api (the user data's) as a module: its config(), metadata(), credentials(),
    call() and tag()."""
    path = ROOT + "/opt/gpu-infra/bin/gpu-infra-api"
    loader = importlib.machinery.SourceFileLoader("gpu_infra_api", path)
    spec = importlib.util.spec_from_loader("gpu_infra_api", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module
