"""gpu-infra as a Pulumi component provider, for programs in TypeScript, Go, C#, Java or
YAML: components.py (what it hosts), args.py (their typed arguments, generated from the
schema models by codegen.py), schema.py (the provider schema, checked in as
provider/schema.json). The plugin itself is provider/ (PulumiPlugin.yaml)."""
