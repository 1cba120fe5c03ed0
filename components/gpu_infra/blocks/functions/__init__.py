"""Code that runs in Function Compute, not in the Pulumi program: standard library and
gpu_infra_facts only (no Pulumi), shipped as source in the function's zip by
gpu_infra.blocks.compute.queue_publisher. Import the submodules directly."""
