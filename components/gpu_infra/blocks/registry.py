"""The stack's private image registry (ACR), on ECS as on ACK: an Enterprise instance reachable
from the VPC, or a namespace on the personal edition, with repositories for the workloads'
images and for upstream images mirrored into it (images_to_mirror, mirror_command)."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_alicloud as alicloud

from gpu_infra.blocks.conventions import Conventions, child_name
from gpu_infra.schema.container_registry import RegistryConfig
from gpu_infra_facts import jobs
from gpu_infra_facts.acr import mirror_namespace, registry_address
from gpu_infra_facts.allowed import REGISTRY_PAYMENT_TYPE

PRIVATE = "PRIVATE"
"""Visibility of every namespace and repository."""
VPC_MODULE = "Registry"
"""cr.VpcEndpointLinkedVpc `module_name` for image pulls (Chart: Helm charts)."""


def mirrored_image(registry_prefix: str, image: jobs.UpstreamImage) -> str:
    """`image` in the stack's registry: `<registry>/<namespace>/<repository>:<tag>`."""
    return f"{registry_prefix.rstrip('/')}/{image.mirror}"


def images_to_mirror(registry_prefix: str,
                     images: Sequence[jobs.UpstreamImage] = jobs.MIRRORED_IMAGES
                     ) -> list[dict[str, str]]:
    """The upstream `images` (default: every one gpu-infra's objects run) with where each
    must be copied to."""
    return [{"source": image.source, "target": mirrored_image(registry_prefix, image),
             "why": image.why} for image in images]


def mirror_command(registry_prefix: str,
                   images: Sequence[jobs.UpstreamImage] = jobs.MIRRORED_IMAGES) -> str:
    """One shell command that copies `images` (skopeo, logged in to both registries), run
    from a machine that reaches docker.io."""
    pairs = " ".join(f"{item['source']}={item['target']}"
                     for item in images_to_mirror(registry_prefix, images))
    return (f"for pair in {pairs}; do skopeo copy --all \"docker://${{pair%%=*}}\" "
            f"\"docker://${{pair#*=}}\"; done")


class Registry(pulumi.ComponentResource):
    """ACR for the cluster. `edition` enterprise: a cr.RegistryEnterpriseInstance (a
    subscription of `config.period_months`, Pulumi-protected: deleting it refunds
    nothing), linked to the stack's VPC (cr.VpcEndpointLinkedVpc; no internet endpoint is
    created), a private namespace and private repositories. personal: a private
    cr.Namespace and cr.Repo per repository. Namespaces never create repositories on push
    (auto_create false), so what exists is what the stack lists. An ACK cluster pulls without
    per-namespace secrets through the `managed-aliyun-acr-credential-helper` add-on
    (AckAddons); ECS nodes log in with a temporary token of their instance role
    (gpu-infra-pull); no registry password is set or exported. The type token keeps the
    `ack` module it was born in (ACK stacks' state holds it). `required_mirrors`: mirror
    repositories the stack's own Kubernetes objects pull from (added to `config.mirrored`).

    Outputs: `address` (VPC pull address), `namespace`, `mirror_namespace`,
    `repositories` (name -> image prefix `<address>/<namespace>/<name>`); attribute
    `instance` (the Enterprise instance, None on the personal edition)."""

    TYPE = "gpu-infra:ack:Registry"

    def __init__(self, name: str, *, config: RegistryConfig, edition: str, namespace: str,
                 region: str, vpc_id: pulumi.Input[str], vswitch_id: pulumi.Input[str],
                 conventions: Conventions, required_mirrors: Sequence[str] = (),
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__(self.TYPE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        instance_name = child_name(name, "acr")
        self.address = registry_address(edition, instance_name=instance_name, region=region)
        self.namespace = namespace
        self.mirror_namespace = mirror_namespace(namespace)
        self.instance: alicloud.cr.RegistryEnterpriseInstance | None = None
        if edition == "enterprise":
            self.instance = alicloud.cr.RegistryEnterpriseInstance(
                instance_name, instance_name=instance_name, instance_type=config.instance_type,
                payment_type=REGISTRY_PAYMENT_TYPE, period=config.period_months,
                renewal_status="AutoRenewal", renew_period=config.period_months,
                default_oss_bucket="true", image_scanner="ACR",
                tags=conventions.tags_for(instance_name),
                opts=pulumi.ResourceOptions(parent=self, protect=True))
            alicloud.cr.VpcEndpointLinkedVpc(
                child_name(name, "vpc-link"), instance_id=self.instance.id,
                module_name=VPC_MODULE, vpc_id=vpc_id, vswitch_id=vswitch_id,
                enable_create_dns_record_in_pvzt=True, opts=child)
        self._repositories(name, self.namespace, config.repositories, child)
        mirrored = [*config.mirrored,
                    *(repo for repo in required_mirrors if repo not in config.mirrored)]
        if mirrored:
            self._repositories(name, self.mirror_namespace, mirrored, child)
        spaces = [self.namespace, *([self.mirror_namespace] if mirrored else [])]
        self.pull_scopes: pulumi.Output[list[str]] = (
            self.instance.id.apply(lambda found: [f"{found}/{space}" for space in spaces])
            if self.instance is not None else pulumi.Output.from_input(spaces))
        """What RAM's repository ARNs name the stack's namespaces by:
        `<instance id>/<namespace>` (Enterprise), `<namespace>` (personal)."""
        self.repositories = {
            **{repo: f"{self.address}/{self.namespace}/{repo}" for repo in config.repositories},
            **{repo: f"{self.address}/{self.mirror_namespace}/{repo}"
               for repo in mirrored}}
        self.register_outputs({"address": self.address, "namespace": self.namespace,
                               "mirror_namespace": self.mirror_namespace,
                               "repositories": self.repositories})

    def _repositories(self, name: str, namespace: str, repositories: Sequence[str],
                      opts: pulumi.ResourceOptions) -> None:
        """A private namespace and its private repositories."""
        summary = f"{namespace} images of {name}"
        if self.instance is not None:
            space = alicloud.cs.RegistryEnterpriseNamespace(
                child_name(name, f"ns-{namespace}"), instance_id=self.instance.id,
                name=namespace, auto_create=False, default_visibility=PRIVATE, opts=opts)
            for repo in repositories:
                alicloud.cs.RegistryEnterpriseRepo(
                    child_name(name, f"repo-{namespace}-{repo}"), instance_id=self.instance.id,
                    namespace=space.name, name=repo, repo_type=PRIVATE, summary=summary,
                    opts=opts)
            return
        personal = alicloud.cr.Namespace(
            child_name(name, f"ns-{namespace}"), name=namespace, auto_create=False,
            default_visibility=PRIVATE, opts=opts)
        for repo in repositories:
            alicloud.cr.Repo(child_name(name, f"repo-{namespace}-{repo}"),
                             namespace=personal.name, name=repo, repo_type=PRIVATE,
                             summary=summary, opts=opts)
