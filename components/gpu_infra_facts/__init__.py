"""The ground floor: provider facts (type tokens, allowed values, limits and quotas, zones,
formulas, update semantics, placement and environment demands, the world-open judgement),
each with its source. Standard library only; imported by gpu_infra, gpu_infra_policies and
gpu_infra_tools, importing none of them."""
