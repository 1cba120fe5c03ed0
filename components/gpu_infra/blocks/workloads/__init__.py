"""What runs on the fleets: the training job of a stack (a PyTorchJob on ACK, elastic torchrun
over SSH on ECS), the training operator's install, the spot-notice watcher DaemonSet and the
model server. The objects are plain Kubernetes manifests (dicts), validated in the tests
against the pinned Kubernetes OpenAPI schema or the vendored CRD schema; the ACK platform
installs the cluster-wide ones through pulumi-kubernetes.
"""
