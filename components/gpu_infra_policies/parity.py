"""Parity with the anchors: every Checkov CKV_ALI_* check and every KICS Terraform alicloud
query, and the rules that match or beat it (or why none applies). Read from
bridgecrewio/checkov 03d5fdad (2026-08-20, checkov/terraform/checks/resource/alicloud and
graph_checks/alicloud) and Checkmarx/kics assets/queries/terraform/alicloud (queries at
their 2026 commits, ids as in each metadata.json). tests/data/anchor_examples.json holds
their positive and negative examples translated to pulumi-alicloud inputs;
tests/test_policy_parity.py runs them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Anchor:
    """One check of another scanner."""

    id: str
    """CKV_ALI_n, or the KICS query id's first block."""
    title: str
    rules: tuple[str, ...] = ()
    """The rules that match or beat it; empty: not applicable (see `note`)."""
    note: str = ""
    """What the rules do beyond it, or why it does not apply."""


CHECKOV_COMMIT = "03d5fdad8d6154b1565799a7b1fb8070c158866f"
ANCHORS: tuple[Anchor, ...] = (
    Anchor("CKV_ALI_1", "OSS bucket accessible to public", ("oss-bucket-private",),
           "bucket and oss.BucketAcl ACLs, object ACLs and bucket policies"),
    Anchor("CKV_ALI_2", "No 0.0.0.0/0 ingress to port 22", ("no-world-ingress",),
           "any port spelling, IPv6, prefix lists, unions of CIDRs"),
    Anchor("CKV_ALI_3", "No 0.0.0.0/0 ingress to port 3389", ("no-world-ingress",)),
    Anchor("CKV_ALI_4", "ActionTrail logs all regions", ("actiontrail-complete",)),
    Anchor("CKV_ALI_5", "ActionTrail logs all events", ("actiontrail-complete",),
           "also status, destination and a public destination bucket"),
    Anchor("CKV_ALI_6", "OSS bucket encrypted with a CMK", ("prod-customer-keys",),
           "prod only (Levels); inline rule or oss.BucketServerSideEncryption"),
    Anchor("CKV_ALI_7", "Disk encrypted", ("disks-encrypted",),
           "every node type's system and data disks too"),
    Anchor("CKV_ALI_8", "Disk encrypted with a CMK", ("disks-encrypted",), "prod only (Levels)"),
    Anchor("CKV_ALI_9", "Database instance not public", ("no-world-ingress",),
           "whitelists of RDS, PolarDB, Redis, MongoDB, ES judged by address space"),
    Anchor("CKV_ALI_10", "OSS bucket versioned", ("prod-data-versioned",),
           "prod only: reliability, advisory"),
    Anchor("CKV_ALI_11", "OSS bucket transfer acceleration", (),
           "not a control: acceleration speeds cross-region uploads and costs per GB; GPU "
           "stacks read their buckets in-region through the internal endpoint"),
    Anchor("CKV_ALI_12", "OSS bucket access logging", ("prod-bucket-logging",),
           "prod only; a logs bucket is exempt"),
    Anchor("CKV_ALI_13", "RAM password length 14+", ("ram-password-policy",)),
    Anchor("CKV_ALI_14", "RAM password requires a number", ("ram-password-policy",)),
    Anchor("CKV_ALI_15", "RAM password requires a symbol", ("ram-password-policy",)),
    Anchor("CKV_ALI_16", "RAM passwords expire within 90 days", ("ram-password-policy",)),
    Anchor("CKV_ALI_17", "RAM password requires a lowercase letter", ("ram-password-policy",)),
    Anchor("CKV_ALI_18", "RAM password reuse prevention", ("ram-password-policy",),
           "24 (the strongest) passes, which Checkov fails"),
    Anchor("CKV_ALI_19", "RAM password requires an uppercase letter", ("ram-password-policy",)),
    Anchor("CKV_ALI_20", "RDS uses SSL", ("tls-to-databases",),
           "also MongoDB, Redis and PolarDB endpoints"),
    Anchor("CKV_ALI_21", "API Gateway API protocol HTTPS", ("tls-on-public-listeners",)),
    Anchor("CKV_ALI_22", "RDS transparent data encryption", ("prod-customer-keys",),
           "prod only; TDE or a KMS encryptionKey, every engine"),
    Anchor("CKV_ALI_23", "RAM max login attempts 5 or fewer", ("ram-password-policy",)),
    Anchor("CKV_ALI_24", "RAM enforces MFA", ("console-mfa",),
           "also each ram.LoginProfile"),
    Anchor("CKV_ALI_25", "RDS SQL collector retention 180+", ("prod-access-logs",), "prod only"),
    Anchor("CKV_ALI_26", "Kubernetes CNI supports network policies",
           ("ack-network-policy-cni",), "Terway only: ACK's Flannel does not enforce them"),
    Anchor("CKV_ALI_27", "KMS key rotation", ("kms-key-rotation",)),
    Anchor("CKV_ALI_28", "KMS key enabled", ("kms-key-usable",)),
    Anchor("CKV_ALI_29", "ALB ACL does not admit 0.0.0.0/0", ("no-world-ingress",),
           "SLB and ALB ACLs, inline and attached entries, unions; blacklists exempt"),
    Anchor("CKV_ALI_30", "RDS auto-upgrades minor versions", (),
           "not applicable to a plan: Auto upgrades the engine in the maintenance window "
           "without review, which the change report exists to prevent; upgrades are a "
           "reviewed change"),
    Anchor("CKV_ALI_31", "K8s node pools auto repair", ("node-pool-auto-repair",)),
    Anchor("CKV_ALI_32", "Launch template data disks encrypted", ("disks-encrypted",)),
    Anchor("CKV_ALI_33", "TLS cipher policies secure", ("tls-modern-policies",),
           "ALB, NLB, CLB and OSS policies, and listeners left on the TLS 1.0 default"),
    Anchor("CKV_ALI_35", "RDS log_duration on", ("prod-access-logs",), "prod PostgreSQL"),
    Anchor("CKV_ALI_36", "RDS log_disconnections on", ("prod-access-logs",), "prod PostgreSQL"),
    Anchor("CKV_ALI_37", "RDS log_connections on", ("prod-access-logs",), "prod PostgreSQL"),
    Anchor("CKV_ALI_38", "Log audit covers RDS", ("log-audit-complete",),
           "and the other services a GPU platform uses"),
    Anchor("CKV_ALI_41", "MongoDB in a VPC", ("databases-in-vpc",), "and RDS, Redis"),
    Anchor("CKV_ALI_42", "MongoDB uses SSL", ("tls-to-databases",)),
    Anchor("CKV_ALI_43", "MongoDB not public", ("no-world-ingress",)),
    Anchor("CKV_ALI_44", "MongoDB TDE", ("prod-customer-keys",), "prod only"),
    Anchor("c065b98e", "KICS Action Trail Logging For All Regions Disabled",
           ("actiontrail-complete",)),
    Anchor("69b5d7da", "KICS ActionTrail Trail OSS Bucket is Publicly Accessible",
           ("actiontrail-complete",)),
    Anchor("ee3b1557", "KICS ALB Listening on HTTP", ("tls-on-public-listeners",),
           "NLB and CLB too; intranet and redirect-only listeners exempt"),
    Anchor("1bcdf9f0", "KICS API Gateway API Protocol Not HTTPS", ("tls-on-public-listeners",)),
    Anchor("ed6e3ba0", "KICS CMK Is Unusable", ("kms-key-usable",)),
    Anchor("81ce9394", "KICS CS Kubernetes Node Pool Auto Repair Disabled",
           ("node-pool-auto-repair",)),
    Anchor("faaefc15", "KICS RDS Instance Address Publicly Accessible", (),
           "not applicable: alicloud_db_instance has no `address` argument (provider "
           "2026-08); the RDS whitelist is judged under 1b4565c0"),
    Anchor("39750e32", "KICS Disk Encryption Disabled", ("disks-encrypted",)),
    Anchor("f262118c", "KICS ECS Data Disk KMS Key Id Undefined", ("disks-encrypted",),
           "prod only (Levels)"),
    Anchor("cb319d87", "KICS High KMS Key Rotation Period", ("kms-key-rotation",)),
    Anchor("b9b7ada8", "KICS Kubernetes Cluster Without Terway", ("ack-network-policy-cni",)),
    Anchor("1455cb21", "KICS Launch Template Is Not Encrypted", ("disks-encrypted",)),
    Anchor("140869ea", "KICS RDS Instance Log Connections Disabled", ("prod-access-logs",)),
    Anchor("ed6cf6ff", "KICS Log Retention Is Not Greater Than 90 Days",
           ("prod-log-retention",), "prod only"),
    Anchor("67bfdff1", "KICS NAS File System Not Encrypted", ("nas-encrypted",)),
    Anchor("5f670f9d", "KICS NAS File System Without KMS", ("prod-customer-keys",), "prod only"),
    Anchor("72ceb736", "KICS No ROS Stack Policy", (),
           "not applicable: ROS is another IaC engine; a Pulumi stack manages the resources "
           "itself"),
    Anchor("f20e97f9", "KICS OSS Bucket Encryption Using CMK Disabled",
           ("prod-customer-keys",), "prod only"),
    Anchor("ec62a32c", "KICS OSS Bucket Allows All Actions From All Principals",
           ("oss-bucket-private",), "any action, not only *"),
    Anchor("8c0695d8", "KICS OSS Bucket Allows Delete Action From All Principals",
           ("oss-bucket-private",)),
    Anchor("88541597", "KICS OSS Bucket Allows List Action From All Principals",
           ("oss-bucket-private",)),
    Anchor("fe286195", "KICS OSS Bucket Allows Put Action From All Principals",
           ("oss-bucket-private",)),
    Anchor("2b13c6ff", "KICS OSS Bucket Has Static Website", ("oss-browser-access",)),
    Anchor("6107c530", "KICS OSS Bucket Ip Restriction Disabled", ("oss-bucket-private",),
           "beaten: an anonymous grant needs a condition (a SourceIp list judged by address "
           "space); a grant to named RAM principals needs no IP list"),
    Anchor("7db8bd7e", "KICS OSS Bucket Lifecycle Rule Disabled", ("oss-lifecycle",)),
    Anchor("05db341e", "KICS OSS Bucket Logging Disabled", ("prod-bucket-logging",)),
    Anchor("62232513", "KICS OSS Bucket Public Access Enabled", ("oss-bucket-private",)),
    Anchor("8f98334a", "KICS OSS Bucket Transfer Acceleration Disabled", (),
           "not a control (see CKV_ALI_11)"),
    Anchor("70919c0b", "KICS OSS Bucket Versioning Disabled", ("prod-data-versioned",)),
    Anchor("c01d10de", "KICS OSS Buckets Secure Transport Disabled",
           ("oss-secure-transport",)),
    Anchor("60587dbd", "KICS Public Security Group Rule All Ports or Protocols",
           ("no-world-ingress",)),
    Anchor("2ae9d554", "KICS Public Security Group Rule Sensitive Port", ("no-world-ingress",),
           "every port, not a list"),
    Anchor("dd706080", "KICS Public Security Group Rule Unknown Port", ("no-world-ingress",)),
    Anchor("e76fd7ab", "KICS RAM Password Policy Max Login Attempts", ("ram-password-policy",)),
    Anchor("2bb13841", "KICS RAM Password Policy Max Password Age", ("ram-password-policy",)),
    Anchor("a9dfec39", "KICS RAM Password Policy Minimum Length", ("ram-password-policy",)),
    Anchor("063234c0", "KICS RAM Password Policy Numbers", ("ram-password-policy",)),
    Anchor("41a38329", "KICS RAM Password Policy Symbols", ("ram-password-policy",)),
    Anchor("a8128dd2", "KICS RAM Password Policy Reuse Prevention", ("ram-password-policy",)),
    Anchor("89143358", "KICS RAM Password Policy Lowercase", ("ram-password-policy",)),
    Anchor("5e0fb613", "KICS RAM Password Policy Uppercase", ("ram-password-policy",)),
    Anchor("e8e62026", "KICS RAM Policy Admin Access Attached", ("no-admin-policies",),
           "custom policies by effective permission, and every *FullAccess system policy"),
    Anchor("66505003", "KICS RAM Policy Attached to User", ("ram-policies-on-groups",)),
    Anchor("dcda2d32", "KICS RAM Security Preference Not Enforce MFA", ("console-mfa",)),
    Anchor("b9c524a4", "KICS RDS Instance Events Not Logged", ("log-audit-complete",),
           "the services a GPU platform uses, not every SLS switch"),
    Anchor("d53f4123", "KICS RDS Instance Log Disconnections Disabled", ("prod-access-logs",)),
    Anchor("a597e05a", "KICS RDS Instance Log Duration Disabled", ("prod-access-logs",)),
    Anchor("1b4565c0", "KICS RDS DB Instance Publicly Accessible", ("no-world-ingress",)),
    Anchor("dc158941", "KICS RDS Instance Retention Period Not Recommended",
           ("prod-access-logs",)),
    Anchor("7a1ee8a9", "KICS RDS Instance SSL Action Disabled", ("tls-to-databases",)),
    Anchor("44d434ca", "KICS RDS Instance TDE Status Disabled", ("prod-customer-keys",)),
    Anchor("9ef08939", "KICS ROS Stack Notifications Disabled", (), "not applicable (ROS)"),
    Anchor("4bb06fa1", "KICS ROS Stack Retention Disabled", (), "not applicable (ROS)"),
    Anchor("92d65c51", "KICS ROS Stack Without Template", (), "not applicable (ROS)"),
    Anchor("dbfc834a", "KICS SLB Policy With Insecure TLS Version", ("tls-modern-policies",)),
    Anchor("d2731f3d", "KICS VPC Flow Logs Disabled", ("prod-vpc-flow-logs",),
           "prod only, advisory (Levels)"),
)
"""Every anchor, Checkov first, then KICS."""


def parity_markdown() -> str:
    """The README's parity table (generated; tests/test_policy_parity.py keeps it current)."""
    matched = [a for a in ANCHORS if a.rules]
    lines = [f"{len(matched)} of {len(ANCHORS)} anchors matched or beaten by a rule; "
             f"{len(ANCHORS) - len(matched)} not applicable, with the reason.", "",
             "| Anchor | Check | Rules | Beyond it / why not |", "|---|---|---|---|"]
    for anchor in ANCHORS:
        rules = ", ".join(f"`{r}`" for r in anchor.rules) or "not applicable"
        lines.append(f"| {anchor.id} | {anchor.title} | {rules} | {anchor.note} |")
    return "\n".join(lines)
