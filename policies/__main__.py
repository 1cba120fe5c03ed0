"""The CrossGuard policy pack: `pulumi preview --policy-pack policies`.

Only builds the PolicyPack (which serves the analyzer over gRPC and never returns). The
rules live in this package; the repository root goes on sys.path so that `policies` and
`components.catalog` import from the checkout (see README.md).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

from policies.crossguard import PACK_NAME, build_policies  # noqa: E402

PolicyPack(name=PACK_NAME, policies=build_policies(), enforcement_level=EnforcementLevel.ADVISORY,
           description="gpu-infra: security, reliability, cost and GPU rules for GPU clusters "
                       "on Alibaba Cloud")
