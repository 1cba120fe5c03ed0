"""Building blocks: ComponentResources over pulumi_alicloud, one concern each.

One rule for their arguments: a block takes the schema model it is built from under
`config=` (NetworkConfig, SecurityConfig, TrainingFleet, ...; validated, with every default
and every config check in `gpu_infra.schema`), plus wiring inputs: ids and outputs of other
blocks, values derived by the layout (names, the environment's choices), `conventions` and
`opts`. A block checks only its wiring; blocks that are pure wiring (InstanceRole) take no
config. Import the submodules directly.
"""
