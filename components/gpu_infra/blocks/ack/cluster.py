"""The ACK Pro cluster (cs.ManagedKubernetes) and the Kubernetes provider built from its
credential."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pulumi
import pulumi_alicloud as alicloud
import pulumi_kubernetes as k8s

from gpu_infra.blocks.conventions import Conventions, child_name
from gpu_infra.schema.ack import AckConfig
from gpu_infra_facts.ack import ADDONS, CONTROL_PLANE_LOG_COMPONENTS, CONTROL_PLANE_LOG_TTL_DAYS

CREDENTIAL_MINUTES = 240
"""Lifetime of the kubeconfig each program run fetches (cs.get_cluster_credential,
15-4320 minutes): long enough for one `pulumi up` of a large cluster, short enough that a
leaked state file holds no lasting credential."""
MAINTENANCE_DATE = "2026-01-04"
"""The date in `maintenance_window.maintenance_time` (RFC3339; ACK uses only its time of
day and the weekly days): a fixed Sunday, so the plan never changes with the calendar."""
KUBECONFIG_COMMAND = ("aliyun cs GET /k8s/{cluster_id}/user_config "
                      "--TemporaryDurationMinutes 60 | jq -r .config > ~/.kube/config")
"""How an operator gets a kubeconfig (aliyun CLI, ACK DescribeClusterUserKubeconfig): a
command in the outputs, never the credential itself."""


def maintenance_time(start_utc: str) -> str:
    """`hh:mm` UTC as the RFC3339 time ACK expects."""
    return f"{MAINTENANCE_DATE}T{start_utc}:00.000Z"


class AckCluster(pulumi.ComponentResource):
    """An ACK Pro cluster in the stack's vSwitches with Terway pod vSwitches, the pinned
    Kubernetes version, a private API server unless `config.public_api`, RRSA, secrets
    encrypted with `kms_key_id` (when given), control-plane and audit logs to SLS when
    `control_plane_logs`, a maintenance window and cluster auto-upgrade off. The network and
    storage add-ons (ADDONS `at_creation`) are installed with the cluster (the provider
    applies `addons` at creation only; AckAddons pins them afterwards). Deletion protection
    and Pulumi `protect` follow `conventions.deletion_protection`.

    Outputs: `cluster_id`, `rrsa_oidc_arn` (the RAM OIDC provider of RRSA),
    `kubeconfig_command`; attribute `provider`: the pulumi-kubernetes provider for every
    Kubernetes object of the stack.
    """

    TYPE = "gpu-infra:ack:AckCluster"

    def __init__(self, name: str, *, config: AckConfig, vswitch_ids: Sequence[pulumi.Input[str]],
                 pod_vswitch_ids: Sequence[pulumi.Input[str]],
                 security_group_id: pulumi.Input[str], conventions: Conventions,
                 kms_key_id: pulumi.Input[str] | None = None, control_plane_logs: bool = False,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__(self.TYPE, name, None, opts)
        protect = conventions.deletion_protection
        window = config.maintenance_window
        self.cluster = alicloud.cs.ManagedKubernetes(
            child_name(name, "k8s"), name=child_name(name, "k8s"),
            cluster_spec=config.cluster_spec, version=config.kubernetes_version,
            vswitch_ids=list(vswitch_ids), pod_vswitch_ids=list(pod_vswitch_ids),
            service_cidr=str(config.service_cidr), proxy_mode=config.proxy_mode,
            security_group_id=security_group_id, new_nat_gateway=False,
            slb_internet_enabled=config.public_api, enable_rrsa=True,
            deletion_protection=protect, skip_set_certificate_authority=True,
            maintenance_window=alicloud.cs.ManagedKubernetesMaintenanceWindowArgs(
                enable=True, maintenance_time=maintenance_time(window.start_utc),
                duration=f"{window.hours}h", weekly_period=",".join(window.days)),
            operation_policy=alicloud.cs.ManagedKubernetesOperationPolicyArgs(
                cluster_auto_upgrade=alicloud.cs
                .ManagedKubernetesOperationPolicyClusterAutoUpgradeArgs(enabled=False)),
            addons=[alicloud.cs.ManagedKubernetesAddonArgs(
                name=addon.name, version=config.addon_version(addon.name),
                config=json.dumps(addon.config, sort_keys=True) if addon.config else None)
                for addon in ADDONS.values() if addon.at_creation],
            control_plane_log_components=list(CONTROL_PLANE_LOG_COMPONENTS)
            if control_plane_logs else None,
            control_plane_log_ttl=str(CONTROL_PLANE_LOG_TTL_DAYS) if control_plane_logs
            else None,
            audit_log_config=alicloud.cs.ManagedKubernetesAuditLogConfigArgs(enabled=True)
            if control_plane_logs else None,
            encryption_provider_key=kms_key_id,
            disable_encryption=False if kms_key_id is not None else None,
            tags=conventions.tags_for(child_name(name, "k8s")),
            opts=pulumi.ResourceOptions(parent=self, protect=protect))
        self.cluster_id = self.cluster.id
        self.rrsa_oidc_arn: pulumi.Output[str] = self.cluster.rrsa_metadata.apply(
            lambda rrsa: rrsa.ram_oidc_provider_arn or "")
        self.rrsa_issuer_url: pulumi.Output[str] = self.cluster.rrsa_metadata.apply(
            lambda rrsa: rrsa.rrsa_oidc_issuer_url or "")
        self.kubeconfig_command = self.cluster.id.apply(
            lambda cluster_id: KUBECONFIG_COMMAND.format(cluster_id=cluster_id))
        credential = alicloud.cs.get_cluster_credential_output(
            cluster_id=self.cluster.id, temporary_duration_minutes=CREDENTIAL_MINUTES,
            opts=pulumi.InvokeOutputOptions(parent=self))
        self.provider = k8s.Provider(
            child_name(name, "k8s-provider"),
            kubeconfig=pulumi.Output.secret(credential.kube_config),
            opts=pulumi.ResourceOptions(parent=self))
        self.register_outputs({"cluster_id": self.cluster_id,
                               "rrsa_oidc_arn": self.rrsa_oidc_arn,
                               "kubeconfig_command": self.kubeconfig_command})


RRSA_AUDIENCE = "sts.aliyuncs.com"
"""`oidc:aud` of RRSA tokens (ACK "Use RRSA to authorize pods")."""


def rrsa_trust_policy(oidc_arn: pulumi.Input[str], issuer_url: pulumi.Input[str],
                      service_account: str) -> pulumi.Output[str]:
    """The trust policy of a RAM role that pods running as `service_account`
    (`system:serviceaccount:<namespace>:<name>`) assume through RRSA."""
    return pulumi.Output.all(oidc_arn, issuer_url).apply(lambda values: json.dumps({
        "Version": "1", "Statement": [{
            "Action": "sts:AssumeRole", "Effect": "Allow",
            "Principal": {"Federated": [values[0]]},
            "Condition": {"StringEquals": {"oidc:aud": RRSA_AUDIENCE, "oidc:iss": values[1],
                                           "oidc:sub": service_account}}}]}))
