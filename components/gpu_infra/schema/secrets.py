"""Which stack fields may hold a `secure:` value, the check that no other field does, and
the check that no field holds a credential in clear.

A field marked MaybeSecure (the webhook URLs) may be set with `pulumi config set --secret
--path`; the blocks pass it to its resource as a Pulumi secret. Any other field would reach
resource inputs, the state and the preview in clear: under the real engine the program
only learns that the whole `gpu-infra:cluster` value holds a secret, not which leaf, so
`validate` and `plan` (which know the paths) refuse `secure:` there.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import BaseModel

from gpu_infra.schema.base import SECRET_PLACEHOLDER, SECURE_MARK
from gpu_infra_facts.credentials import PROVIDER_CREDENTIAL_KEYS, findings_in

PATH_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")
"""A dotted config path's parts: `contacts[0].webhook` -> contacts, 0, webhook."""


def model_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside a field annotation (Optional, list, dict ...), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = model_in(arg)
        if found:
            return found
    return None


def _marked(model: type[BaseModel], name: str) -> bool:
    field = model.model_fields.get(name)
    extra = field.json_schema_extra if field else None
    return isinstance(extra, dict) and extra.get(SECURE_MARK) is True


def may_be_secure(model: type[BaseModel], parts: Sequence[str | int]) -> bool:
    """True if the field at `parts` below `model` is marked MaybeSecure."""
    names = [part for part in parts if isinstance(part, str)]
    current: type[BaseModel] | None = model
    for name in names[:-1]:
        field = current.model_fields.get(name) if current else None
        current = model_in(field.annotation) if field else None
    return bool(current and names and _marked(current, names[-1]))


def secure_field_paths(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    """`monitoring.contacts[].dingtalk_webhook`: every field below `model` that may be
    secure."""
    for name, field in model.model_fields.items():
        if _marked(model, name):
            yield f"{prefix}{name}"
        inner = model_in(field.annotation)
        if inner is not None:
            items = "[]" if _is_list(field.annotation) else ""
            yield from secure_field_paths(inner, f"{prefix}{name}{items}.")


def _is_list(annotation: Any) -> bool:
    """True for list[...] and Optional[list[...]]."""
    if typing.get_origin(annotation) is list:
        return True
    return any(_is_list(arg) for arg in typing.get_args(annotation)
               if typing.get_origin(annotation) is not list)


def misplaced_secrets(model: type[BaseModel], cluster_key: str,
                      secret_keys: Sequence[str]) -> list[str]:
    """One problem line per `secure:` value of `cluster_key` in a field that may not be
    secure (`secret_keys`: dotted paths such as `gpu-infra:cluster.tags.Token`)."""
    problems = []
    for key in secret_keys:
        head, dot, rest = key.partition(".")
        if head != cluster_key or not dot:
            continue
        parts = [name or int(index) for name, index in PATH_PART.findall(rest)]
        if not may_be_secure(model, parts):
            allowed = ", ".join(sorted(secure_field_paths(model)))
            problems.append(f"{key}: may not be a secure: value (it would reach resources "
                            f"and the state in clear); secure: values belong in {allowed}")
    return problems


def holds_secure_field_values(value: Any) -> bool:
    """True if any MaybeSecure field of a validated model (or of the models inside it) is
    set."""
    if isinstance(value, (list, tuple)):
        return any(holds_secure_field_values(item) for item in value)
    if not isinstance(value, BaseModel):
        return False
    return any((_marked(type(value), name) and getattr(value, name) is not None)
               or holds_secure_field_values(getattr(value, name))
               for name in type(value).model_fields)


def plaintext_credentials(model: type[BaseModel] | None, cluster_key: str,
                          config: dict[str, Any], secret_keys: Sequence[str]) -> list[str]:
    """One problem line per value of the stack's `config` (secure: values already replaced)
    that looks like a credential (gpu_infra_facts.credentials) where it would be read in
    clear: any field below `cluster_key` but those `model` marks MaybeSecure, and any other
    key; a provider credential key (alicloud:accessKey ...) set in clear at all. The lines
    name the path and what was found, never the value."""
    problems = []
    for key, value in config.items():
        if key in PROVIDER_CREDENTIAL_KEYS:
            if key not in secret_keys and value not in (None, ""):
                problems.append(
                    f"{key}: a credential in clear in the stack file (it would be read by "
                    "anyone who can read the repository); remove it and give the provider "
                    "its keys from the environment (ALIBABA_CLOUD_ACCESS_KEY_ID / _SECRET), "
                    f"or set it encrypted: `pulumi config set --secret {key}`")
            continue
        for path, what in _credentials_in(value, (), model if key == cluster_key else None):
            where = key + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
            allowed = ", ".join(sorted(secure_field_paths(model))) if model else "none"
            problems.append(
                f"{where}: holds {what} in clear (it would reach the plan, the state and the "
                "nodes); take it out of the stack file: a secret belongs in KMS Secrets "
                "Manager or the node's RAM role, or in a field that may be secure "
                f"(`pulumi config set --secret --path`): {allowed}")
    return problems


def _credentials_in(value: Any, parts: tuple[str | int, ...], model: type[BaseModel] | None
                    ) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """(path, what) for each string leaf below `value` holding a credential, and each list
    of strings whose words together do (a command line), skipping the fields `model` allows
    to be secure and the placeholders of secure: values."""
    if isinstance(value, dict):
        for name, item in value.items():
            yield from _credentials_in(item, (*parts, str(name)), model)
    elif isinstance(value, list):
        found = set()
        for index, item in enumerate(value):
            for path, what in _credentials_in(item, (*parts, index), model):
                found.add(what)
                yield path, what
        if value and all(isinstance(item, str) for item in value) and \
                not (model is not None and may_be_secure(model, parts)):
            # a command as a list of words: `--api-key`, `X` are two items
            for what in findings_in(" ".join(value)):
                if what not in found:
                    yield parts, what
    elif isinstance(value, str) and value != SECRET_PLACEHOLDER:
        if model is not None and may_be_secure(model, parts):
            return
        for what in findings_in(value):
            yield parts, what
