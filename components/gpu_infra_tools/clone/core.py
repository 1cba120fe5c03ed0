"""`clone_stack`: a new stack file from an existing one, with a new cluster name, a free VPC
CIDR, no secrets of the source and the caller's overrides, validated before it is written."""

from __future__ import annotations

import copy
import fcntl
import io
import os
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.util import load_yaml_guess_indent

from gpu_infra.knowhow import Level
from gpu_infra.nodeplan import judge_stack
from gpu_infra.schema import (
    CLUSTER_KEY,
    SECRET_PLACEHOLDER,
    ClusterConfig,
    ConfigError,
    parse_cluster_config,
    read_stack_file,
)
from gpu_infra.schema.document import load_plain, load_round_trip
from gpu_infra.schema.loader import (
    layout_model,
    parse_secure_cluster,
    stack_bucket_problems,
    stack_name_of,
)
from gpu_infra.schema.network import NetworkConfig
from gpu_infra.schema.node import GRID_PACKAGE_PATH, OSS_URL
from gpu_infra.schema.problems import shorten
from gpu_infra.schema.secrets import may_be_secure, plaintext_credentials
from gpu_infra.schema.stack import CLUSTER_NAME_PATTERN, ClusterBase
from gpu_infra_facts.ack import DEFAULT_SERVICE_CIDR
from gpu_infra_facts.credentials import PROVIDER_CREDENTIAL_KEYS
from gpu_infra_facts.naming import AUTO_SUFFIX, NO_SUFFIX
from gpu_infra_tools.clone.cidr import DEFAULT_POOL, PoolExhausted, allocate, translate
from gpu_infra_tools.clone.paths import ConfigPath, Override, PathError, apply, lookup, remove_key
from gpu_infra_tools.files import OutputError, write_text_atomically

STACK_NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
"""Pulumi stack names: letters, digits, hyphens, underscores, periods."""
ENCRYPTION_KEYS = ("secretsprovider", "encryptedkey", "encryptionsalt")
"""Top-level stack-file keys that belong to the source stack's secrets provider."""
BYO_KEYS = ("existing_vpc_id", "existing_vswitch_ids")
"""Network keys naming the source's own VPC and vSwitches (bring your own)."""
SWITCH_KEYS = ("vswitch_cidrs", "pod_vswitch_cidrs")
"""Explicit node and (ACK Terway) pod vSwitch CIDRs: moved into the clone's VPC."""
SERVICE_CIDR = ConfigPath(CLUSTER_KEY, ("ack", "service_cidr"))
REGISTRY_SECTIONS = (ConfigPath(CLUSTER_KEY, ("registry",)),
                     ConfigPath(CLUSTER_KEY, ("ack", "registry")))
"""Where an explicit ACR namespace is set (`registry`, or its deprecated spelling
`ack.registry`): the source's own (namespaces are unique in a registry)."""
DEFAULT_VPC_CIDR: IPv4Network = NetworkConfig.model_fields["vpc_cidr"].default
NETWORK = ConfigPath(CLUSTER_KEY, ("network",))
FLEET = ConfigPath(CLUSTER_KEY, ("fleet",))
GRID_PACKAGE = ConfigPath(CLUSTER_KEY, tuple(GRID_PACKAGE_PATH.split(".")))
LOCK_TIMEOUT_S = 60.0
"""Longest wait for another clone into the same stacks directory."""


@dataclass
class Clone:
    """A cloned stack file, validated and ready to write."""

    path: Path
    """Where it goes: STACKS_DIR/Pulumi.<new>.yaml."""
    text: str
    cluster: ClusterConfig
    """The new cluster config, as validated (secrets stood in by SECRET_PLACEHOLDER)."""
    source_cluster: ClusterConfig
    secrets: list[ConfigPath] = field(default_factory=list)
    """The source's `secure:` values, not copied: the user sets them again."""
    notes: list[str] = field(default_factory=list)
    """What was changed or dropped, and why; validator warnings."""
    secrets_provider: str | None = None
    """The source's secrets provider, if it named one."""

    @property
    def name(self) -> str:
        """The stack name (from the file name)."""
        return stack_name_of(self.path)


def derive_cluster_name(stack_name: str) -> str | None:
    """A cluster name (CLUSTER_NAME_PATTERN) made from a stack name, or None if none fits:
    lowercase, other characters become hyphens, at most 24 characters."""
    text = re.sub(r"[^a-z0-9-]+", "-", stack_name.lower())
    text = re.sub(r"-{2,}", "-", text).lstrip("-0123456789")[:24].rstrip("-")
    return text if re.match(CLUSTER_NAME_PATTERN, text) else None


def clone_stack(source: Path, new_stack: str, stacks_dir: Path, *, name: str | None = None,
                overrides: Sequence[Override] = (), pool: IPv4Network = DEFAULT_POOL,
                force: bool = False) -> Clone:
    """Build the clone of `source` as stack `new_stack` in `stacks_dir`; write nothing.

    The cluster name is `name`, else a `--set name=...` override, else derived from
    `new_stack`. The VPC CIDR is the lowest block of the source's prefix length in `pool`
    that overlaps no stack in `stacks_dir`, unless overridden. Raises ConfigError (one line
    per problem) when the source is invalid or the result would be.
    """
    target = stacks_dir / f"Pulumi.{new_stack}.yaml"
    where = str(target)
    if not stacks_dir.is_dir():
        raise ConfigError(where, [f"{stacks_dir}: the stacks directory does not exist"])
    if not STACK_NAME_PATTERN.match(new_stack):
        raise ConfigError(where, [f"{new_stack}: not a stack name; use letters, digits, "
                                  "hyphens, underscores and periods"])
    if target.exists() and target.resolve() == source.resolve():
        raise ConfigError(where, [f"{new_stack}: is the source stack itself"])
    if target.exists() and not force:
        raise ConfigError(where, [f"{target}: exists; pass --force to overwrite it"])
    source_cluster = _read_source(source)
    document, dumper = _load_round_trip(source)
    clone = Clone(target, "", source_cluster, source_cluster,
                  secrets_provider=document.get("secretsprovider"))
    config: CommentedMap = document["config"]
    _drop_encryption(document, clone)
    problems = _drop_secrets(config, clone)
    _drop_plain_secrets(config, type(source_cluster), clone)
    _drop_byo(config, clone)
    _drop_reserved(config, clone)
    _drop_registry_namespace(config, clone)
    problems += _apply_overrides(config, overrides, clone.secrets)
    problems += _set_name(config, name, new_stack, overrides)
    problems += _set_global_suffix(config, overrides, clone)
    others, unreadable = _other_stacks(stacks_dir, source, target)
    problems += unreadable + _name_problems(config, others)
    if not problems:
        problems += _lay_out_network(config, source_cluster, overrides, pool, others, clone)
    if problems:
        raise ConfigError(where, problems)
    _move_grid_package(config, overrides, stack_name_of(source), new_stack, clone,
                       load_plain(_dump(dumper, document), where)["config"])
    clone.text = _header(source) + _dump(dumper, document)
    clone.cluster = _validate(clone, where, new_stack)
    return clone


def write_stack_file(clone: Clone, source: Path, force: bool = False) -> None:
    """Write the clone atomically (temp file + rename, see tools.files) with the source file's
    mode; refuse to replace an existing file unless `force`. Raises ConfigError."""
    if clone.path.exists() and not force:
        raise ConfigError(str(clone.path), [f"{clone.path}: exists; pass --force to "
                                            "overwrite it"])
    try:
        write_text_atomically(clone.path, clone.text, mode=source.stat().st_mode & 0o777)
    except (OutputError, OSError) as error:
        raise ConfigError(str(clone.path), [str(error)]) from None


@contextmanager
def stacks_lock(stacks_dir: Path, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the clone lock of `stacks_dir` (an exclusive flock on the directory itself, so
    no lock file is left behind). Concurrent clones into one directory take turns, so no
    two get the same VPC CIDR or cluster name. Raises ConfigError after `timeout_s`."""
    if not stacks_dir.is_dir():
        raise ConfigError(str(stacks_dir), [f"{stacks_dir}: the stacks directory does not "
                                            "exist"])
    try:
        handle = os.open(stacks_dir, os.O_RDONLY)
    except OSError as error:
        raise ConfigError(str(stacks_dir), [f"{stacks_dir}: cannot open the stacks directory:"
                                            f" {error.strerror}"]) from None
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise ConfigError(str(stacks_dir), [
                        f"{stacks_dir}: another clone has held the stacks directory for "
                        f"{timeout_s:g} s; try again when it is done"]) from None
                time.sleep(0.02)
        yield
    finally:
        os.close(handle)  # closing the descriptor releases the lock


class _GuessOnly:
    """The loader load_yaml_guess_indent is given: it guesses the indents from the text alone,
    then loads the document with this (nothing: load_round_trip loads it once, checked)."""

    @staticmethod
    def load(text: str) -> None:
        return None


def _load_round_trip(path: Path) -> tuple[CommentedMap, YAML]:
    """The document with its comments, and a dumper that indents the way the file does."""
    text = path.read_text(encoding="utf-8")  # load_cluster_config read and checked it before
    _, sequence_indent, dash_offset = load_yaml_guess_indent(text, yaml=_GuessOnly())
    mapping_indent = _mapping_indent(text)
    dumper = YAML(typ="rt")
    dumper.preserve_quotes = True
    dumper.width = 4096
    if dash_offset is None:  # no block sequences: ruamel's guess is the mapping indent
        dumper.indent(mapping=mapping_indent, sequence=mapping_indent + 2, offset=2)
    else:
        dumper.indent(mapping=mapping_indent, sequence=sequence_indent, offset=dash_offset)
    return load_round_trip(text, str(path), dumper), dumper


def _mapping_indent(text: str) -> int:
    """The smallest step from a `key:` line to the nested key below it (default 2)."""
    steps: list[int] = []
    opener: int | None = None
    for line in text.splitlines():
        content = re.sub(r"\s+#.*$", "", line).rstrip()
        stripped = content.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        column = len(content) - len(stripped)
        if opener is not None and column > opener and not stripped.startswith("- "):
            steps.append(column - opener)
        opener = column if stripped.endswith(":") else None
    return min(steps, default=2)


def _dump(dumper: YAML, document: CommentedMap) -> str:
    """The document as YAML text, ending in a newline (ruamel drops it after a document
    whose last mapping ends in a value without a comment)."""
    out = io.StringIO()
    dumper.dump(document, out)
    text = out.getvalue()
    return text if text.endswith("\n") else text + "\n"


def _header(source: Path) -> str:
    return (f"# Cloned from stack {stack_name_of(source)} by `gpu-infra clone`: new cluster "
            "name and VPC CIDR; secrets not copied.\n")


def _set_name(config: CommentedMap, name: str | None, new_stack: str,
              overrides: Sequence[Override]) -> list[str]:
    """Use `name`, else keep a `--set name=...`, else derive the name from the stack name."""
    name_path = ConfigPath(CLUSTER_KEY, ("name",))
    if name is None and any(override.path == name_path for override in overrides):
        return []
    name = name or derive_cluster_name(new_stack)
    if name is None:
        return [f"{CLUSTER_KEY}.name: cannot make a cluster name (3-24 lowercase letters, "
                f"digits, hyphens) from {new_stack!r}; pass --name"]
    try:
        apply(config, name_path, name)
    except PathError as error:
        return [str(error)]
    return []


def _set_global_suffix(config: CommentedMap, overrides: Sequence[Override],
                       clone: Clone) -> list[str]:
    """`naming.global_suffix: auto` unless overridden: a new stack starts with names that
    differ from every other stack's (the source's literal or missing suffix would give the
    clone the source's bucket and role names where the cluster name repeats). Layouts
    without `naming` (the image layout) are left as they are."""
    path = ConfigPath(CLUSTER_KEY, ("naming", "global_suffix"))
    if "naming" not in type(clone.source_cluster).model_fields:  # an image stack names none
        return []
    if any(_related(override.path, path) for override in overrides):
        return []
    before = lookup(config, path)
    if before == AUTO_SUFFIX:
        return []
    try:
        apply(config, path, AUTO_SUFFIX)
    except PathError as error:
        return [str(error)]
    clone.notes.append(f"naming.global_suffix: auto (was {before or NO_SUFFIX}): the "
                       "clone's bucket, RAM and other account-wide names end in a hash of "
                       "its stack name, region and cluster name")
    return []


def _move_grid_package(config: CommentedMap, overrides: Sequence[Override],
                       source_stack: str, new_stack: str, clone: Clone,
                       plain: dict[str, Any]) -> None:
    """A GRID package in one of the source's own buckets moves to the clone's bucket of the
    same purpose (the clone's nodes read only their own buckets, and its bucket names
    differ), unless overridden; a note says to upload it there. `plain`: the clone's config
    as plain data."""
    source = clone.source_cluster
    if not isinstance(source, ClusterBase) or any(
            _related(override.path, GRID_PACKAGE) for override in overrides):
        return
    driver = getattr(getattr(source, "fleet", None), "driver", None)
    match = OSS_URL.match(getattr(driver, "grid_package", None) or "")
    own = {bucket: purpose for purpose, bucket in
           source.bucket_names(source.resolved_suffix(source_stack)).items()}
    if match is None or match["bucket"] not in own:
        return
    target = parse_cluster_config(_with_placeholders(plain, clone.secrets), str(clone.path))
    if not isinstance(target, ClusterBase):
        return
    bucket = target.bucket_names(target.resolved_suffix(new_stack))[own[match["bucket"]]]
    url = f"oss://{bucket}/{match['key']}"
    if bucket != match["bucket"]:
        apply(config, GRID_PACKAGE, url)
        clone.notes.append(f"{GRID_PACKAGE_PATH}: {url} (was in the source's "
                           f"{own[match['bucket']]} bucket; the clone's nodes read only the "
                           "clone's buckets): upload the package there before the fleet "
                           "starts nodes")


def _drop_encryption(document: CommentedMap, clone: Clone) -> None:
    dropped = [key for key in ENCRYPTION_KEYS if key in document]
    for key in dropped:
        remove_key(document, key)
    if dropped:
        clone.notes.append(f"dropped {', '.join(dropped)}: they belong to the source stack's "
                           "secrets provider; `pulumi stack init` sets the new stack's own")


def _drop_secrets(config: CommentedMap, clone: Clone) -> list[str]:
    """Remove every `secure:` value, recording its path in `clone.secrets`. A secret that is
    itself a list item is refused: removing it would renumber the items after it."""
    secrets, problems = drop_secrets(config)
    clone.secrets += secrets
    return problems


def drop_secrets(config: CommentedMap) -> tuple[list[ConfigPath], list[str]]:
    """Remove the `secure:` values of a `config:` mapping (also inside mappings in lists);
    return their paths, and one problem per secret that is a list item itself."""
    secrets: list[ConfigPath] = []
    problems: list[str] = []

    def walk(node: Any, path: ConfigPath | None) -> None:
        keys = range(len(node)) if isinstance(node, list) else list(node)
        for key in keys:
            value = node[key]
            here = ConfigPath(path.key, (*path.parts, key)) if path else ConfigPath(str(key))
            if _is_secure(value) and isinstance(node, list):
                problems.append(f"{here.pulumi()}: a list item that is a secret cannot be "
                                "cloned; make it a mapping key or drop it from the source")
            elif _is_secure(value):
                secrets.append(here)
                remove_key(node, str(key))
            elif isinstance(value, (dict, list)):
                walk(value, here)

    walk(config, None)
    return secrets, problems


def _read_source(source: Path) -> ClusterConfig:
    """The source's cluster, validated as the loader does, except that a provider credential
    in clear (which the loader refuses) is let through: the clone drops it
    (_drop_plain_secrets)."""
    stack_file = read_stack_file(source)
    for key in PROVIDER_CREDENTIAL_KEYS:
        stack_file.config.pop(key, None)
    return parse_secure_cluster(stack_file)


def _drop_plain_secrets(config: CommentedMap, model: type[BaseModel], clone: Clone) -> None:
    """Remove the secrets the source holds in clear (a provider credential key, a field that
    may be secure set without `secure:`), recording each in `clone.secrets`: the user sets
    them again, encrypted. A clone never copies a secret."""
    for key in PROVIDER_CREDENTIAL_KEYS:
        if key in config and not _is_secure(config[key]):
            remove_key(config, key)
            _dropped_in_clear(ConfigPath(key), clone)
    cluster = config.get(CLUSTER_KEY)

    def walk(node: Any, parts: tuple[str | int, ...]) -> None:
        keys = range(len(node)) if isinstance(node, list) else list(node)
        for key in keys:
            value, here = node[key], (*parts, key)
            if isinstance(value, (dict, list)):
                walk(value, here)
            elif isinstance(node, dict) and value is not None and may_be_secure(model, here):
                remove_key(node, str(key))
                _dropped_in_clear(ConfigPath(CLUSTER_KEY, here), clone)

    if isinstance(cluster, CommentedMap):
        walk(cluster, ())


def _dropped_in_clear(path: ConfigPath, clone: Clone) -> None:
    clone.secrets.append(path)
    clone.notes.append(f"dropped {path.pulumi()}: a secret written in clear in the source; "
                       "set it again, encrypted (the command is below)")


def _is_secure(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"secure"}


def _drop_byo(config: CommentedMap, clone: Clone) -> None:
    network = lookup(config, NETWORK)
    if not isinstance(network, CommentedMap):
        return
    dropped = [key for key in BYO_KEYS if key in network]
    for key in dropped:
        remove_key(network, key)
    if dropped:
        clone.notes.append(
            f"dropped network.{' and network.'.join(dropped)}: the source's own VPC would be "
            "shared and its CIDR would overlap; the clone creates its own VPC (set them with "
            "--set to join an existing VPC instead)")


def _drop_reserved(config: CommentedMap, clone: Clone) -> None:
    """A clone buys no reserved capacity: reservations are bought for one fleet's steady
    base, non-refundable, and a copied section would buy them again for the new cluster."""
    fleet = lookup(config, FLEET)
    if isinstance(fleet, CommentedMap) and "reserved" in fleet:
        remove_key(fleet, "reserved")
        clone.notes.append(
            "dropped fleet.reserved: reserved instances and capacity guarantees are bought "
            "for the source's steady base and are non-refundable; a copy would buy them again "
            "(add a reserved section to the clone on purpose, with --set or an edit)")


def _drop_registry_namespace(config: CommentedMap, clone: Clone) -> None:
    """A clone pushes to its own ACR namespace (the default, its cluster name): the source's
    would be shared, its images overwritten by the clone's pushes."""
    for section in REGISTRY_SECTIONS:
        registry = lookup(config, section)
        if isinstance(registry, CommentedMap) and registry.get("namespace") is not None:
            namespace = registry["namespace"]
            remove_key(registry, "namespace")
            where = ".".join(map(str, section.parts))
            clone.notes.append(f"dropped {where}.namespace ({namespace}): it is the source's "
                               "own; the clone gets a namespace named after its cluster")


def _apply_overrides(config: CommentedMap, overrides: Sequence[Override],
                     secrets: list[ConfigPath]) -> list[str]:
    problems: list[str] = []
    for override in overrides:
        secret = next((s for s in secrets if _related(s, override.path)), None)
        if secret is not None:
            problems.append(f"--set {override.text}: {secret.pulumi()} is a secret; set it "
                            "after cloning with `pulumi config set --path --secret`")
            continue
        try:
            apply(config, override.path, override.value)
        except PathError as error:
            problems.append(f"--set {override.text}: {error}")
    return problems


def _related(first: ConfigPath, second: ConfigPath) -> bool:
    """One path is the other or lies below it."""
    shorter = min(len(first.parts), len(second.parts))
    return first.key == second.key and first.parts[:shorter] == second.parts[:shorter]


@dataclass(frozen=True)
class _Other:
    stack_name: str
    cluster_name: str | None
    vpc_cidr: IPv4Network | None


def _other_stacks(stacks_dir: Path, source: Path,
                  target: Path) -> tuple[list[_Other], list[str]]:
    """Every stack but the target (the source and each stack file in `stacks_dir`), and one
    problem per stack file whose cluster name or VPC CIDR cannot be read: an unknown CIDR
    could not be avoided, so it stops the clone."""
    paths = {p.resolve(): p for p in sorted(stacks_dir.glob("Pulumi.*.yaml"))}
    paths.setdefault(source.resolve(), source)
    paths.pop(target.resolve(), None)
    others: list[_Other] = []
    problems: list[str] = []
    for path in paths.values():
        try:
            others.append(_other(path))
        except ConfigError as error:
            why = error.problems[0].removeprefix(str(path))
            why = f"line {why[1:]}" if why[:2].strip(":").isdigit() else why.lstrip(": ")
            problems.append(f"{path}: cannot read the cluster name and VPC CIDR the clone "
                            f"must avoid ({shorten(why, 160)}); fix the file or move it out "
                            "of the stacks directory")
    return others, problems


def _other(path: Path) -> _Other:
    """The name and VPC CIDR a stack file claims (ConfigError if it claims none readable)."""
    cluster = read_stack_file(path).config.get(CLUSTER_KEY)
    if not isinstance(cluster, dict):
        raise ConfigError(str(path), [f"{CLUSTER_KEY}: missing or not a mapping"])
    network = cluster.get("network") or {}
    if not isinstance(network, dict):
        raise ConfigError(str(path), [f"{CLUSTER_KEY}.network: not a mapping"])
    cidr = _cidr(network.get("vpc_cidr", DEFAULT_VPC_CIDR))
    if cidr is None:
        raise ConfigError(str(path), [f"{CLUSTER_KEY}.network.vpc_cidr: "
                                      f"{shorten(repr(network.get('vpc_cidr')), 60)} is not a "
                                      "CIDR"])
    name = cluster.get("name")
    return _Other(stack_name_of(path), name if isinstance(name, str) else None, cidr)


def _name_problems(config: CommentedMap, others: list[_Other]) -> list[str]:
    name = lookup(config, ConfigPath(CLUSTER_KEY, ("name",)))
    return [f"{CLUSTER_KEY}.name: {name!r} is already the cluster name of stack {other.stack_name};"
            " resource and bucket names would collide (pass --name)"
            for other in others if name is not None and other.cluster_name == name]


def _lay_out_network(config: CommentedMap, source_cluster: ClusterConfig,
                     overrides: Sequence[Override], pool: IPv4Network, others: list[_Other],
                     clone: Clone) -> list[str]:
    """Set the new VPC CIDR and move explicit vSwitch CIDRs into it."""
    network = lookup(config, NETWORK)
    if not isinstance(network, CommentedMap):
        return []
    overridden = {o.path.parts for o in overrides if o.path.key == CLUSTER_KEY}
    old_vpc = source_cluster.network.vpc_cidr
    taken = {other.stack_name: other.vpc_cidr for other in others if other.vpc_cidr}
    service = _service_cidr(config)
    if service is not None:
        taken[f"the clone's {SERVICE_CIDR.pulumi()}"] = service
    if network.get("existing_vpc_id"):
        new_vpc = _cidr(network.get("vpc_cidr", DEFAULT_VPC_CIDR))
        clone.notes.append("network.existing_vpc_id is set: the clone joins that VPC; "
                           "vpc_cidr is kept as given, not allocated")
    elif ("network", "vpc_cidr") in overridden:
        new_vpc = _cidr(network.get("vpc_cidr"))
        clashes = [f"{cidr} of stack {stack}" for stack, cidr in sorted(taken.items())
                   if new_vpc is not None and cidr.overlaps(new_vpc)]
        if clashes:
            return [f"{CLUSTER_KEY}.network.vpc_cidr: {new_vpc} overlaps {', '.join(clashes)}"]
    else:
        try:
            new_vpc = allocate(pool, old_vpc.prefixlen, taken)
        except PoolExhausted as error:
            return [f"{CLUSTER_KEY}.network.vpc_cidr: {error}; pass another --pool"]
        if "vpc_cidr" in network:
            network["vpc_cidr"] = str(new_vpc)
        else:
            network.insert(0, "vpc_cidr", str(new_vpc))
    if new_vpc is None:
        return []
    for key in SWITCH_KEYS:
        switches = network.get(key)
        if not isinstance(switches, dict) or any(parts[:2] == ("network", key)
                                                 for parts in overridden):
            continue
        for zone in list(switches):
            old = _cidr(switches[zone])
            moved = translate(old, old_vpc, new_vpc) if old else None
            if moved is None:
                remove_key(switches, zone)
                clone.notes.append(f"dropped network.{key}.{zone} ({old}): it does not fit "
                                   f"{new_vpc} at the same offset; the zone's derived slot is "
                                   "used")
            else:
                switches[zone] = str(moved)
        if not switches:
            remove_key(network, key)
    return []


def _service_cidr(config: CommentedMap) -> IPv4Network | None:
    """The ACK service CIDR the clone's VPC must avoid (None on ECS)."""
    if lookup(config, ConfigPath(CLUSTER_KEY, ("platform",))) != "ack":
        return None
    return _cidr(lookup(config, SERVICE_CIDR) or DEFAULT_SERVICE_CIDR)


def _cidr(value: Any) -> IPv4Network | None:
    try:
        return IPv4Network(str(value))
    except ValueError:
        return None


def _validate(clone: Clone, where: str, new_stack: str) -> ClusterConfig:
    """Validate the text exactly as the loader will read it as stack `new_stack`, secrets
    stood in by the placeholder; validator ERRORs are problems too, WARNINGs become
    notes."""
    config = load_plain(clone.text, where)["config"]
    with_secrets = _with_placeholders(config, clone.secrets)
    credentials = plaintext_credentials(layout_model(with_secrets), CLUSTER_KEY, with_secrets,
                                        [secret.pulumi() for secret in clone.secrets])
    if credentials:  # before the schema, whose problems may quote a value
        raise ConfigError(where, credentials)
    cluster = parse_cluster_config(with_secrets, where)
    problems = stack_bucket_problems(cluster, new_stack)
    if problems:
        raise ConfigError(where, problems)
    findings = judge_stack(cluster)
    errors = [finding.line() for finding in findings if finding.level is Level.ERROR]
    if errors:
        raise ConfigError(where, errors)
    clone.notes += [finding.line() for finding in findings]
    if clone.secrets:
        try:
            parse_cluster_config(config, where)
        except ConfigError as error:
            clone.notes.append("until the secrets are set the stack does not validate: "
                               + "; ".join(error.problems))
    return cluster


def _with_placeholders(config: dict[str, Any], secrets: list[ConfigPath]) -> dict[str, Any]:
    result = copy.deepcopy(config)
    for secret in secrets:
        node: Any = result
        for part in (secret.key, *secret.parts)[:-1]:
            node = node[part] if isinstance(part, int) else node.setdefault(part, {})
        node[(secret.key, *secret.parts)[-1]] = SECRET_PLACEHOLDER
    return result
