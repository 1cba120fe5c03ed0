"""gpu-infra's Pulumi program (`pulumi up`, and `gpu-infra plan` offline): gpu_infra.program."""

from gpu_infra.program import run

run()
