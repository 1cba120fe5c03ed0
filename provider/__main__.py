"""The gpu-infra component provider plugin: hosts gpu_infra_provider.components (the
training, inference and rendering layouts, the image bakery, the GpuNodes and
GpuScalingGroup blocks) under the tokens `gpu-infra:index:<Name>`; its schema, package
metadata included, is provider/schema.json."""

import sys

from pulumi.provider import main

from gpu_infra_provider.schema import GpuInfraProvider

if __name__ == "__main__":
    # the language host passes the engine's address and flags after the plugin's path
    main(GpuInfraProvider(), sys.argv[1:])
