"""gpu-infra's tools, above the library and the policy pack: the offline plan (recorder, fake
cloud, review), cost, clone, the metric publisher and the CLI."""
