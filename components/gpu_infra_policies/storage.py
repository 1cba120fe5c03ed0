"""Storage rules: OSS buckets and objects private (ACLs and bucket policies), encrypted and
access-logged in prod; NAS file systems and KMS keys."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from gpu_infra_facts import types as t
from gpu_infra_facts.addresses import world_open
from gpu_infra_facts.allowed import NAS_KMS_FILE_SYSTEM_TYPES
from gpu_infra_policies.base import (
    Context,
    Resource,
    ResourceRule,
    Rule,
    StackRule,
    as_list,
    is_unknown,
    number,
)
from gpu_infra_policies.documents import strings
from gpu_infra_policies.iam import any_account, statements_of

PUBLIC_ACLS = ("public-read", "public-read-write")
"""OSS ACLs that open objects to anonymous users (bucket ACL default private, object ACL
default `default`: the bucket's)."""
SOURCE_IP = "acs:sourceip"


def _condition_restricts(condition: Any) -> bool:
    """True if a bucket policy condition limits who is admitted: any condition except an
    acs:SourceIp list that is itself world-open (addresses.world_open)."""
    if not isinstance(condition, Mapping):
        return False
    for operator, block in condition.items():
        if not isinstance(block, Mapping):
            continue
        for key, values in block.items():
            if str(key).lower() != SOURCE_IP or str(operator).lower() != "ipaddress":
                return True
            if world_open(strings(values)) is None:
                return True
    return False


def public_buckets(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """Bucket ACLs private (oss.BucketAcl, the deprecated oss.Bucket acl); object ACLs never
    public (oss.BucketObject); bucket policies (oss.BucketPolicy, oss.Bucket policy) grant
    nothing to the anonymous principal `*` unless a condition limits it (an acs:SourceIp
    list judged by address space)."""
    acl = resource.props.get("acl")
    if resource.type in (t.BUCKET_ACL, t.BUCKET, t.BUCKET_OBJECT) and acl in PUBLIC_ACLS:
        what = "object" if resource.type == t.BUCKET_OBJECT else "bucket"
        yield f"{what} ACL {acl} makes objects public; use private"
    if resource.type in (t.BUCKET_POLICY, t.BUCKET):
        for statement in statements_of(resource):
            anyone = any_account(statement.principal)
            if statement.allows and anyone and not _condition_restricts(statement.condition):
                yield (f"bucket policy allows {sorted(statement.actions) or 'actions'} to "
                       "the anonymous principal *; grant named RAM principals or limit it "
                       "with a condition (acs:SourceVpc)")


def _buckets_with(resources: Sequence[Resource], companion_type: str,
                  accept: str | None = None, value: Any = None,
                  target: str = "bucket") -> set[str]:
    """URNs of buckets that a companion resource of `companion_type` points at through its
    `target` input (optionally only companions whose `accept` input is `value` or
    unknown)."""
    buckets = [r for r in resources if r.type == t.BUCKET]
    found: set[str] = set()
    for companion in (r for r in resources if r.type == companion_type):
        if accept is not None:
            setting = companion.props.get(accept)
            if not is_unknown(setting) and setting != value:
                continue
        for bucket in buckets:
            if _points_at(companion, bucket, companion.props.get(target)):
                found.add(bucket.urn)
    return found


def _points_at(companion: Resource, bucket: Resource, value: Any) -> bool:
    """By value (the bucket's name or id) when known, else by dependency."""
    if value is not None and not is_unknown(value):
        return value in (bucket.id, bucket.props.get("bucket"))
    return companion.refers_to(bucket, value, "bucket")


def bucket_encrypted(resources: Sequence[Resource], _: Mapping[str, Any],
                     __: Context) -> Iterator[tuple[Resource | None, str]]:
    """Each bucket has serverSideEncryptionRule or an oss.BucketServerSideEncryption."""
    covered = _buckets_with(resources, t.BUCKET_ENCRYPTION)
    for bucket in (r for r in resources if r.type == t.BUCKET):
        if bucket.urn not in covered and bucket.props.get("serverSideEncryptionRule") is None:
            yield bucket, ("bucket has no server-side encryption (serverSideEncryptionRule "
                           "or oss.BucketServerSideEncryption)")


def public_access_blocked(resources: Sequence[Resource], _: Mapping[str, Any],
                          __: Context) -> Iterator[tuple[Resource | None, str]]:
    """Each bucket has an oss.BucketPublicAccessBlock with blockPublicAccess true, or the
    stack blocks public access for the whole account (oss.AccountPublicAccessBlock); no
    block, bucket or account, is set false."""
    for block in (r for r in resources if r.type in (t.BUCKET_PUBLIC_ACCESS_BLOCK,
                                                     t.ACCOUNT_PUBLIC_ACCESS_BLOCK)):
        if block.props.get("blockPublicAccess") is False:
            yield block, "blockPublicAccess is false"
    if any(r.type == t.ACCOUNT_PUBLIC_ACCESS_BLOCK and r.props.get("blockPublicAccess") is True
           for r in resources):
        return
    covered = _buckets_with(resources, t.BUCKET_PUBLIC_ACCESS_BLOCK, "blockPublicAccess", True)
    for bucket in (r for r in resources if r.type == t.BUCKET):
        if bucket.urn not in covered:
            yield bucket, "bucket has no oss.BucketPublicAccessBlock with blockPublicAccess true"


def _logs_inline(bucket: Resource) -> Any:
    logging = bucket.props.get("logging")
    return logging.get("targetBucket") if isinstance(logging, Mapping) else None


def bucket_logging(resources: Sequence[Resource], _: Mapping[str, Any],
                   ctx: Context) -> Iterator[tuple[Resource | None, str]]:
    """Buckets write access logs where the environment demands it (prod: inline `logging`,
    or an oss.BucketLogging); a bucket that receives other buckets' logs is exempt (it is
    the log)."""
    buckets = [r for r in resources if r.type == t.BUCKET]
    logged = _buckets_with(resources, t.BUCKET_LOGGING)
    log_targets = _buckets_with(resources, t.BUCKET_LOGGING, target="targetBucket")
    inline_targets = [_logs_inline(b) for b in buckets]
    for bucket in buckets:
        environment = ctx.demanded_by(bucket, "access_logs")
        if not environment or bucket.urn in logged or _logs_inline(bucket):
            continue
        if bucket.urn in log_targets or any(_points_at(bucket, bucket, target)
                                            for target in inline_targets if target):
            continue
        yield bucket, (f"{environment} bucket keeps no access log; add an oss.BucketLogging "
                       f"to a logs bucket (storage.buckets.logging, on in {environment})")


UNENCRYPTABLE_FILE_SYSTEMS = ("cpfs", "cpfsse")
"""nas.FileSystem types the provider cannot encrypt: encrypt_type 1 is for standard and
extreme, 2 for extreme only (TF website/docs/r/nas_file_system.html.markdown, 81c43b67)."""


def _unencryptable(resource: Resource) -> bool:
    kind = resource.props.get("fileSystemType")
    return isinstance(kind, str) and kind.lower() in UNENCRYPTABLE_FILE_SYSTEMS


def nas_encrypted(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """NAS file systems that can be encrypted (standard, extreme: the provider default
    type is standard) are (encryptType 1 NAS-managed key or 2 KMS; provider default 0,
    none). CPFS, which cannot be, is nas-unencryptable's."""
    if resource.type == t.NAS_FILE_SYSTEM and not _unencryptable(resource):
        encrypt = resource.props.get("encryptType", 0)
        if not is_unknown(encrypt) and number(encrypt) not in (1, 2):
            yield "file system is not encrypted (encryptType 0); set 1 or, with a KMS key, 2"


def nas_unencryptable(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """A file system of a type the provider cannot encrypt (CPFS) keeps its data in clear
    at rest."""
    if resource.type == t.NAS_FILE_SYSTEM and _unencryptable(resource):
        yield (f"{resource.props.get('fileSystemType')} file system: its data is not encrypted "
               "at rest and cannot be (the provider encrypts standard and extreme only); keep "
               "data that must be encrypted on extreme NAS")


SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MAX_ROTATION_DAYS = 365


def interval_days(value: Any) -> float | None:
    """A KMS rotation interval ("2592000s", "30d", 2592000) in days; None if not one."""
    text = str(value).strip().lower() if value is not None and not is_unknown(value) else ""
    unit = SECONDS.get(text[-1:]) if text else None
    amount = number(text[:-1] if unit else text)
    return None if amount is None else amount * (unit or 1) / 86400


def kms_rotation(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """KMS keys rotate automatically (automaticRotation Enabled; provider default
    Disabled), at least once a year (rotationInterval at most 365 days)."""
    if resource.type == t.KMS_KEY:
        rotation = resource.props.get("automaticRotation", "Disabled")
        if not is_unknown(rotation) and rotation != "Enabled":
            yield f"automaticRotation is {rotation}; set Enabled"
        days = interval_days(resource.props.get("rotationInterval"))
        if days is not None and days > MAX_ROTATION_DAYS:
            yield (f"rotationInterval is {days:g} days; rotate at least every "
                   f"{MAX_ROTATION_DAYS} days")


def key_usable(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """KMS keys the stack creates are usable (isEnabled not false, status / keyState
    Enabled): data encrypted under a disabled or pending-deletion key cannot be read."""
    if resource.type != t.KMS_KEY:
        return
    props = resource.props
    state = props.get("status", props.get("keyState", "Enabled"))
    if props.get("isEnabled") is False or (isinstance(state, str) and state != "Enabled"):
        why = "isEnabled false" if props.get("isEnabled") is False else state
        yield f"the key is not usable ({why}); data encrypted under it cannot be read"


def _sse(bucket: Resource, resources: Sequence[Resource]) -> list[Mapping[str, Any]]:
    """The server-side encryption settings of a bucket: inline and oss.BucketServerSide
    Encryption resources pointing at it."""
    rules = [bucket.props.get("serverSideEncryptionRule")]
    rules += [r.props for r in resources if r.type == t.BUCKET_ENCRYPTION
              and _points_at(r, bucket, r.props.get("bucket"))]
    return [r for r in rules if isinstance(r, Mapping)]


def _customer_key_problems(resource: Resource, resources: Sequence[Resource]) -> Iterator[str]:
    props = resource.props
    if resource.type == t.BUCKET:
        settings = _sse(resource, resources)
        if settings and not any(str(s.get("sseAlgorithm")).upper() == "KMS"
                                and s.get("kmsMasterKeyId") for s in settings):
            yield "bucket is encrypted with an OSS-managed key; use KMS with kmsMasterKeyId"
    elif resource.type == t.NAS_FILE_SYSTEM:
        kind = props.get("fileSystemType", "standard")
        if kind in NAS_KMS_FILE_SYSTEM_TYPES and number(props.get("encryptType", 0)) in (0, 1) \
                and not is_unknown(props.get("encryptType")):
            yield "file system is not encrypted with a KMS key; set encryptType 2 and kmsKeyId"
    elif resource.type in (t.RDS_INSTANCE, t.MONGODB_INSTANCE, t.POLARDB_CLUSTER):
        tde = str(props.get("tdeStatus", "Disabled")).lower()
        if tde != "enabled" and not props.get("encryptionKey") and not is_unknown(
                props.get("tdeStatus")):
            yield "database stores data without a KMS key; set tdeStatus Enabled (and " \
                  "encryptionKey) or encryptionKey"
    elif resource.type in (t.MANAGED_KUBERNETES, t.ACK_SERVERLESS):
        if not props.get("encryptionProviderKey") and not is_unknown(
                props.get("encryptionProviderKey")):
            yield "Kubernetes Secrets are not encrypted with a KMS key; set encryptionProviderKey"
    elif resource.type == t.LOG_STORE:
        conf = props.get("encryptConf")
        if not (isinstance(conf, Mapping) and conf.get("enable") is True) and not is_unknown(
                conf):
            yield "log store is not encrypted; set encryptConf (enable, KMS key)"


CUSTOMER_KEY_TYPES = frozenset({t.BUCKET, t.NAS_FILE_SYSTEM, t.RDS_INSTANCE, t.MONGODB_INSTANCE,
                                t.POLARDB_CLUSTER, t.MANAGED_KUBERNETES,
                                t.ACK_SERVERLESS, t.LOG_STORE, t.BUCKET_ENCRYPTION})


def customer_keys(resources: Sequence[Resource], _: Mapping[str, Any],
                  ctx: Context) -> Iterator[tuple[Resource | None, str]]:
    """Where the environment demands a KMS key (prod), data is encrypted with one: buckets
    (KMS with kmsMasterKeyId), NAS of the types that take a key (Extreme: encryptType 2;
    general-purpose NAS accepts only the NAS-managed key, which nas-encrypted demands), RDS /
    MongoDB / PolarDB (TDE or encryptionKey), ACK Secrets
    (encryptionProviderKey), SLS log stores (encryptConf). Backup vaults:
    prod-backup-vault-kms. Disks: disks-encrypted. Redis
    is not judged: TDE exists on some editions only (UNCONFIRMED which)."""
    for resource in (r for r in resources if r.type in CUSTOMER_KEY_TYPES):
        environment = ctx.demanded_by(resource, "kms_key")
        if environment:
            for problem in _customer_key_problems(resource, resources):
                yield resource, f"{environment}: {problem}"


def backup_vault_kms(resource: Resource, _: Mapping[str, Any], ctx: Context) -> Iterator[str]:
    """Where the environment demands a KMS key (prod), Cloud Backup vaults encrypt with one
    (encryptType KMS and kmsKeyId; the default HBR_PRIVATE is HBR's own key): a backup of
    the stack's data is that data."""
    environment = ctx.demanded_by(resource, "kms_key")
    kind = resource.props.get("encryptType", "HBR_PRIVATE")
    if resource.type != t.HBR_VAULT or not environment or is_unknown(kind):
        return
    if kind != "KMS" or not resource.props.get("kmsKeyId"):
        yield (f"{environment} backup vault is encrypted with HBR's own key ({kind}); set "
               "encryptType KMS and kmsKeyId (a new vault: both are fixed at creation)")


SHARING = {t.IMAGE_SHARE: ("accountId",), t.IMAGE_PIPELINE: ("addAccounts",)}
"""Types that hand the stack's data to another account, and the inputs naming it."""


def foreign_sharing(resource: Resource, cfg: Mapping[str, Any], _: Context) -> Iterator[str]:
    """Images (ecs.ImageSharePermission, an image pipeline's addAccounts) are shared only
    with accounts in
    `trustedAccounts`: a shared GPU image carries the stack's code, drivers and any weights
    baked in."""
    trusted = {str(a) for a in cfg["trustedAccounts"]}
    for key in SHARING.get(resource.type, ()):
        value = resource.props.get(key)
        for account in as_list(value) if isinstance(value, (list, tuple)) else [value]:
            if account not in (None, "") and not is_unknown(account) \
                    and str(account) not in trusted:
                yield (f"{key} {account}: the image is shared with another account; list "
                       "it in trustedAccounts if you trust it")


def browser_access(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """Buckets serve no static website (oss.Bucket website, oss.BucketWebsite) and their
    CORS rules (corsRules, oss.BucketCors) do not admit every origin: a data bucket is not
    a web site."""
    props = resource.props
    if (resource.type == t.BUCKET and isinstance(props.get("website"), Mapping)) or \
            resource.type == t.BUCKET_WEBSITE:
        yield "the bucket serves a static website; host sites elsewhere (a CDN, a web bucket)"
    if resource.type in (t.BUCKET, t.BUCKET_CORS):
        for rule in as_list(props.get("corsRules")):
            origins = as_list(rule.get("allowedOrigins")) if isinstance(rule, Mapping) else []
            if "*" in origins:
                methods = ", ".join(str(m) for m in as_list(rule.get("allowedMethods")))
                yield f"a CORS rule admits every origin ({methods}); list the web origins"


def resource_policies(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """KMS key and secret policies and SLS project policies grant nothing to any account
    (`*`, acs:ram::*:root) unless a condition limits it."""
    if resource.type not in (t.KMS_KEY, t.KMS_SECRET, t.LOG_PROJECT):
        return
    for statement in statements_of(resource):
        anyone = any_account(statement.principal)
        if statement.allows and anyone and not _condition_restricts(statement.condition):
            yield (f"policy allows {sorted(statement.actions) or 'actions'} to "
                   f"{', '.join(anyone)}: any account; name the principals")


def secure_transport(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """Bucket policies deny requests without TLS (Deny with Bool acs:SecureTransport
    false, or Allow only with it true)."""
    if resource.type not in (t.BUCKET, t.BUCKET_POLICY):
        return
    statements = statements_of(resource)
    if not statements:
        return
    for s in statements:
        condition = s.condition if isinstance(s.condition, Mapping) else {}
        for operator, block in condition.items():
            if str(operator).lower() != "bool" or not isinstance(block, Mapping):
                continue
            for key, value in block.items():
                if str(key).lower() == "acs:securetransport" and \
                        str(value if isinstance(value, str) else (strings(value) or [""])[0]
                            ).lower() == ("false" if not s.allows else "true"):
                    return
    yield "the bucket policy accepts plain HTTP; deny requests where acs:SecureTransport is false"


def lifecycle(resource: Resource, _: Mapping[str, Any], __: Context) -> Iterator[str]:
    """Buckets expire or tier old objects (an enabled lifecycleRules entry): checkpoints
    and outputs otherwise pile up at the standard price."""
    if resource.type == t.BUCKET and not is_unknown(resource.props.get("lifecycleRules")):
        rules = [r for r in as_list(resource.props.get("lifecycleRules"))
                 if isinstance(r, Mapping) and r.get("enabled") is not False]
        if not rules:
            yield "the bucket has no lifecycle rule; expire or tier old checkpoints and outputs"


STORAGE_RULES: tuple[Rule, ...] = (
    ResourceRule("oss-bucket-private", "OSS buckets and objects are not public (ACLs, bucket "
                 "policies)", "security", "critical",
                 "Set bucket and object ACLs to private; grant bucket policies to named RAM "
                 "principals; share data with signed URLs.", public_buckets, concern="data",
                 reviews=frozenset({t.BUCKET, t.BUCKET_ACL, t.BUCKET_OBJECT, t.BUCKET_POLICY})),
    StackRule("oss-bucket-encrypted", "Every OSS bucket has server-side encryption", "security",
              "high", "Add serverSideEncryptionRule (KMS in prod) or an "
              "oss.BucketServerSideEncryption for the bucket.", bucket_encrypted, concern="data",
                 reviews=frozenset({t.BUCKET, t.BUCKET_ENCRYPTION})),
    StackRule("oss-public-access-blocked", "Every OSS bucket blocks public access", "security",
              "high", "Add an oss.BucketPublicAccessBlock with blockPublicAccess true for the "
              "bucket.", public_access_blocked, concern="data",
                 reviews=frozenset({t.BUCKET, t.BUCKET_PUBLIC_ACCESS_BLOCK})),
    StackRule("prod-bucket-logging", "Prod buckets keep access logs", "security", "medium",
              "Add an oss.BucketLogging targeting a versioned logs bucket (on by default in "
              "prod: storage.buckets.logging).", bucket_logging, concern="audit and logs",
                 reviews=frozenset({t.BUCKET, t.BUCKET_LOGGING})),
    ResourceRule("nas-encrypted", "NAS file systems are encrypted", "security", "high",
                 "Set encryptType 1 (NAS-managed key) or 2 with a KMS key.", nas_encrypted,
                 concern="data",
                 reviews=frozenset({t.NAS_FILE_SYSTEM})),
    ResourceRule("nas-unencryptable", "File systems that cannot be encrypted are shown",
                 "security", "medium", "Use extreme NAS (encryptType 1 or 2) for data that "
                 "must be encrypted at rest.", nas_unencryptable, concern="data",
                 reviews=frozenset({t.NAS_FILE_SYSTEM}), enforcement="advisory",
                 note="advisory: CPFS offers no encryption at rest through the provider, so no "
                      "setting can meet it; prod refuses CPFS where the stack encrypts its data "
                      "(storage.shared_fs.kind), so it is a dev or staging choice"),
    ResourceRule("kms-key-rotation", "KMS keys rotate automatically", "security", "medium",
                 "Set automaticRotation Enabled with a rotationInterval.", kms_rotation,
                 concern="data",
                 reviews=frozenset({t.KMS_KEY})),
    ResourceRule("kms-key-usable", "KMS keys the stack creates are enabled", "reliability",
                 "medium", "Leave isEnabled true and status Enabled; schedule deletion only "
                 "after re-encrypting.", key_usable, concern="data",
                 reviews=frozenset({t.KMS_KEY})),
    StackRule("prod-customer-keys", "Prod data is encrypted with a KMS key", "security", "high",
              "Encrypt with a KMS key in prod: bucket SSE KMS + kmsMasterKeyId, NAS encryptType "
              "2, database TDE / encryptionKey, ACK encryptionProviderKey, log store "
              "encryptConf (security.kms_encryption).", customer_keys, concern="data",
              reviews=CUSTOMER_KEY_TYPES),
    ResourceRule("prod-backup-vault-kms", "Prod backup vaults encrypt with a KMS key",
                 "security", "medium", "Set encryptType KMS and kmsKeyId on hbr.Vault (the "
                 "stack's key).", backup_vault_kms, concern="data",
                 reviews=frozenset({t.HBR_VAULT}), enforcement="advisory",
                 note="advisory: HBR encrypts every vault, with its own key when no KMS "
                      "key is named, and a vault's key is fixed at creation: a prod stack "
                      "that keeps a vault made with HBR's key (storage.backup.vault_key: "
                      "hbr) would need a new vault and a new backup history to move; prod "
                      "vaults take the stack's key by default"),
    ResourceRule("no-foreign-data-sharing", "Images are shared only with trusted accounts",
                 "security", "high", "Remove the share, or list the account in "
                 "trustedAccounts.", foreign_sharing, concern="data",
                 reviews=frozenset(SHARING),
                 schema={"trustedAccounts": {"type": "array", "items": {"type": "string"},
                                             "description": "Account ids data may be shared "
                                                            "with. Default none."}},
                 defaults={"trustedAccounts": []}),
    ResourceRule("no-anonymous-resource-policies", "Key, secret and log project policies "
                 "grant nothing to any account", "security", "critical",
                 "Name the RAM principals in the policy, or limit it with a condition.",
                 resource_policies, concern="data",
                 reviews=frozenset({t.KMS_KEY, t.KMS_SECRET, t.LOG_PROJECT})),
    ResourceRule("oss-browser-access", "Buckets serve no website and admit no CORS origin *",
                 "security", "low", "Remove website and wildcard CORS origins from data "
                 "buckets.", browser_access, concern="data",
                 reviews=frozenset({t.BUCKET, t.BUCKET_WEBSITE, t.BUCKET_CORS}),
                 enforcement="advisory",
                 note="advisory: a website or CORS origin exposes nothing the ACL and the "
                      "bucket policy (judged by oss-bucket-private) do not already allow"),
    ResourceRule("oss-secure-transport", "Bucket policies refuse plain HTTP", "security",
                 "low", "Add a Deny statement for all principals where Bool "
                 "acs:SecureTransport is false.", secure_transport, concern="transport security",
                 reviews=frozenset({t.BUCKET, t.BUCKET_POLICY}), enforcement="advisory",
                 note="advisory: nodes reach OSS through the VPC's internal endpoint, whose "
                      "traffic never leaves the cloud; a deny also breaks clients pinned to http"),
    ResourceRule("oss-lifecycle", "Buckets expire or tier old objects", "cost", "low",
                 "Add a lifecycleRules entry (expiration or transitions to IA / Archive).",
                 lifecycle, concern="cost", reviews=frozenset({t.BUCKET})),
)
