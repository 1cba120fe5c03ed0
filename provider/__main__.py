"""The gpu-infra component provider plugin: hosts gpu_infra_provider.components (the
training, inference and rendering layouts, the GpuNodes and GpuScalingGroup blocks) under
the tokens `gpu-infra:index:<Name>`; its schema is provider/schema.json."""

from pulumi.provider.experimental import component_provider_host

from gpu_infra_provider.components import COMPONENTS, PACKAGE
from gpu_infra_provider.schema import provider_version

if __name__ == "__main__":
    component_provider_host(COMPONENTS, name=PACKAGE, version=provider_version())
