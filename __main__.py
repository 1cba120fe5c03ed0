"""gpu-infra's Pulumi program: load the stack's config, build its layout, export outputs.

Run by `pulumi up` (real engine) and by `gpu-infra plan` (offline, under the mock engine).
"""

import pulumi

from components.layouts import build_layout
from components.program import stack_from_pulumi_config

stack = stack_from_pulumi_config()
layout = build_layout(stack, pulumi.get_stack())
for key, value in layout.exports.items():
    pulumi.export(key, value)
