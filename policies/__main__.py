"""The CrossGuard policy pack: `pulumi preview --policy-pack policies`.

Only builds the PolicyPack (which serves the analyzer over gRPC and never returns). The rules
are the installed package gpu_infra_policies; the GPU catalog, what each environment
demands (the environment profile) and how each layout places its nodes (the layout
registry) come from gpu_infra (both are the distribution gpu-infra, which requirements.txt
installs from the repository).
"""

from pulumi_policy import EnforcementLevel, PolicyPack

from gpu_infra.schema.environment import policy_demands
from gpu_infra.schema.registry import layout_placement, layouts_suited
from gpu_infra_policies.crossguard import PACK_NAME, build_policies

PolicyPack(name=PACK_NAME,
           policies=build_policies(catalog=layouts_suited, demands=policy_demands,
                                   placement=layout_placement),
           enforcement_level=EnforcementLevel.ADVISORY,
           description="gpu-infra: security, reliability, cost and GPU rules for GPU clusters "
                       "on Alibaba Cloud")
